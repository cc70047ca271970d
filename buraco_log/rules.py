"""The rules value: every knob of RULES.md in one frozen struct, the presets, and house rules.

A log embeds the full ``Rules`` it was played under, so a replay never depends on which presets
this version of buraco_log ships.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from buraco_log import knobs
from buraco_log.cards import ACE, JOKER, KING, RANK, Card
from buraco_log.errors import RulesError

PilePickup = Literal["free", "must_use_top"]
Rendering = Literal["cards", "tiles"]
MortoVoidedBy = Literal["any_end", "opponent_out"]


class CardPoints(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Points of one card by kind (RULES.md §9)."""

    joker: int = 10
    two: int = 10
    ace: int = 15
    high: int = 10  # 8 to K
    low: int = 5  # 3 to 7


class Bonuses(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Canastra and end-of-hand bonuses (RULES.md §9). Penalties are positive numbers."""

    clean: int = 200
    semi_clean: int = 150
    dirty: int = 100
    royal: int = 500
    ace_to_ace: int = 1000
    going_out: int = 50
    relancinho: int = 100
    morto_not_taken: int = 100


class Rules(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Every knob of the rules. Build one from a preset with :func:`preset` or :func:`derive`."""

    name: str
    player_counts: tuple[int, ...] = (2, 3, 4)
    jokers: int = 0
    hand_size: int = 11
    # Morto (the second hand): one per side, taken by the first of the side to empty the hand.
    morto: bool = False
    morto_size: int = 11
    morto_direct: bool = True  # emptying the hand by melding takes the morto mid-turn
    morto_needs_canastra: bool = False
    go_out_needs_canastra: bool = False
    initial_upcard: bool = False
    pile_pickup: PilePickup = "free"
    first_turn_redraw: bool = False
    ace_both_ends: bool = False  # A..K..A in one run (14 cards)
    max_sets_per_rank: int = 0  # 0: no limit
    canastra_size: int = 7
    canastra_from_sets: bool = True
    semi_clean: bool = False
    royal_canastras: bool = False
    relancinho: bool = False
    stock_floor: int = 0
    target_score: int = 1500
    vulnerability: bool = False
    vulnerable_at: int = 750
    opening_min: int = 75
    opening_min_after_retract: int = 90
    points: CardPoints = CardPoints()
    bonuses: Bonuses = Bonuses()
    rendering: Rendering = "cards"
    # Which end of the hand voids an indirect morto not yet played (RULES.md §7). UNSET (never
    # written, so logs made before this knob encode as they did) reads as "any_end", the old
    # reading those logs were scored under; every preset says "opponent_out".
    morto_voided_by: MortoVoidedBy | UnsetType = UNSET

    # Derived facts, cheap enough to compute on demand.
    def deck_size(self) -> int:
        return 104 + self.jokers

    def sides(self, players: int) -> int:
        """How many sides play: each player alone with 2 or 3, two partnerships with 4 or 6."""
        return players if players <= 3 else 2

    def morto_voiding(self) -> MortoVoidedBy:
        """The reading of ``morto_voided_by``, with the old one for a log that has no value."""
        return "any_end" if self.morto_voided_by is UNSET else self.morto_voided_by

    def max_run(self) -> int:
        return 14 if self.ace_both_ends else 13

    def card_points(self, card: Card) -> int:
        if card == JOKER:
            return self.points.joker
        r = RANK[card]
        if r == 2:
            return self.points.two
        if r == ACE:
            return self.points.ace
        return self.points.high if r >= 8 else self.points.low

    def point_table(self) -> list[int]:
        """Card points indexed by card code (a flat table for the hot path). Do not mutate."""
        return _point_table(self)

    def _build_point_table(self) -> list[int]:
        table = [0] * 65
        for code in range(65):
            if code == JOKER or 1 <= RANK[code] <= KING:
                table[code] = self.card_points(code)
        return table


# Keyed by the rules value: every decoded log carries its own equal copy of its rules.
_POINT_TABLES: dict[Rules, list[int]] = {}


def _point_table(rules: Rules) -> list[int]:
    hit = _POINT_TABLES.get(rules)
    if hit is None:
        if len(_POINT_TABLES) > 64:
            _POINT_TABLES.clear()
        hit = _POINT_TABLES[rules] = rules._build_point_table()
    return hit


_BRAZILIAN = Rules(
    name="classic",
    player_counts=(2, 3, 4, 6),
    first_turn_redraw=True,
    relancinho=True,
    vulnerability=True,
    target_score=1500,
    bonuses=Bonuses(going_out=50, morto_not_taken=0),
    morto_voided_by="opponent_out",
)

_FOUR_JOKER_POINTS = CardPoints(joker=50, two=10)
_MORTO_BONUSES = Bonuses(going_out=100, relancinho=0, morto_not_taken=100)

PRESETS: dict[str, Rules] = {
    "classic": _BRAZILIAN,
    "biriba": msgspec.structs.replace(
        _BRAZILIAN, name="biriba", player_counts=(2, 3, 4), morto=True,
        bonuses=Bonuses(going_out=50, relancinho=100, morto_not_taken=100),
    ),
    "bossa-nova": msgspec.structs.replace(
        _BRAZILIAN, name="bossa-nova", player_counts=(2, 3, 4), morto=True,
        morto_needs_canastra=True, go_out_needs_canastra=True,
        bonuses=Bonuses(going_out=50, relancinho=100, morto_not_taken=100),
    ),
    "thirteen": Rules(
        name="thirteen", player_counts=(2, 4), jokers=4, hand_size=13, morto=True,
        go_out_needs_canastra=True, initial_upcard=True, pile_pickup="must_use_top",
        target_score=2005, points=_FOUR_JOKER_POINTS, bonuses=_MORTO_BONUSES,
        morto_voided_by="opponent_out",
    ),
    "burraco": Rules(
        name="burraco", player_counts=(2, 4), jokers=4, morto=True, go_out_needs_canastra=True,
        initial_upcard=True, semi_clean=True, target_score=2005,
        points=CardPoints(joker=30, two=20), bonuses=_MORTO_BONUSES,
        morto_voided_by="opponent_out",
    ),
    "mega": Rules(
        name="mega", player_counts=(2, 4), jokers=4, morto=True, go_out_needs_canastra=True,
        initial_upcard=True, max_sets_per_rank=1, canastra_from_sets=False, stock_floor=2,
        target_score=3000, points=_FOUR_JOKER_POINTS, bonuses=_MORTO_BONUSES,
        morto_voided_by="opponent_out",
    ),
    "burako": Rules(
        name="burako", player_counts=(2, 4), jokers=2, morto=True, morto_direct=False,
        go_out_needs_canastra=True, ace_both_ends=True, royal_canastras=True,
        target_score=3000, points=_FOUR_JOKER_POINTS, bonuses=_MORTO_BONUSES, rendering="tiles",
        morto_voided_by="opponent_out",
    ),
}
PRESETS["thirteen-quick"] = msgspec.structs.replace(
    PRESETS["thirteen"], name="thirteen-quick", target_score=1005
)

# Presets whose rule text the seeds give, for the docs (`rules list`).
PRESET_SOURCES: dict[str, str] = {
    "classic": "000 traditional Buraco (no morto)",
    "biriba": "000 Buraco with morto (Biriba)",
    "bossa-nova": "000 Bossa Nova: morto needs a canastra",
    "thirteen": "001 13-card online Buraco, pile needs its top card used",
    "thirteen-quick": "001 the same, quick game to 1005",
    "burraco": "002 Italian Burraco: semi-clean canastras, pinella 20, jolly 30",
    "mega": "003 Mega Buraco: canastras are runs, one set per rank, stock floor 2",
    "burako": "004 Burako tiles: 1s at both ends, royal canastras, indirect morto only",
}


def preset(name: str) -> Rules:
    """A preset by name."""
    try:
        return PRESETS[name]
    except KeyError:
        known = ", ".join(PRESETS)
        raise RulesError("name", f"unknown preset {name!r} (known: {known})") from None


def derive(base: Rules | str, **overrides: Any) -> Rules:
    """House rules: a preset with fields overridden. Nested ``points``/``bonuses`` take dicts."""
    rules = preset(base) if isinstance(base, str) else base
    data = msgspec.to_builtins(rules)
    for key, value in overrides.items():
        if key in ("points", "bonuses") and isinstance(value, dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    # RULES.md §10: vulnerable at half the target, so a new target moves the threshold, and so
    # does vulnerability switched on over a preset without it (thirteen's 2005 would otherwise
    # keep the unused default 750, and say otherwise than the same rules with the target given).
    switched_on = overrides.get("vulnerability") is True and not rules.vulnerability
    if ("target_score" in overrides or switched_on) and "vulnerable_at" not in overrides and \
            data.get("vulnerability") is True and isinstance(data.get("target_score"), int):
        data["vulnerable_at"] = (data["target_score"] + 1) // 2
    try:
        new = msgspec.convert(data, Rules)
    except msgspec.ValidationError as exc:
        raise _unknown_knob(str(exc)) or RulesError(_field_of(str(exc)), str(exc)) from None
    if "name" in overrides:  # a new name: rules.derive("classic", name="../x") is refused
        check_plain_name(new.name)
    if "player_counts" in overrides:
        _check_distinct_counts(new.player_counts)
    try:
        check(new)
    except RulesError as exc:
        # Too many cards dealt for the material: name the knob the house rules changed (a
        # stock floor of 100 is no fault of the hand size).
        if exc.field == "hand_size" and " players x " in exc.detail:
            culprit = next((k for k in _DEAL_KNOBS if k in overrides), "hand_size")
            raise RulesError(culprit, exc.detail) from None
        raise
    return new


def _check_distinct_counts(counts: tuple[int, ...]) -> None:
    """Each player count once: [2, 2, 2] was taken, and `rules show` listed 2 three times (a
    repeat is a typo for another count). Checked where rules are made, not on a log's match
    start: a log made before keeps replaying. Any order is taken: the counts are a set."""
    if len(set(counts)) != len(counts):
        shown = ", ".join(map(str, counts))
        raise RulesError("player_counts", f"[{shown}] names a count twice; each count once")


# The knobs that size the deal, the first named by house rules taking the blame for a deal too
# big for the material.
_DEAL_KNOBS = ("hand_size", "morto_size", "stock_floor", "player_counts", "morto",
               "initial_upcard", "jokers")


def _unknown_knob(message: str) -> RulesError | None:
    """"unknown knob 'target_scor' (did you mean 'target_score'?)" for a misspelt key."""
    if "unknown field `" not in message:
        return None
    name = message.split("unknown field `", 1)[1].split("`", 1)[0]
    group = message.split("`$.", 1)[1].split("`", 1)[0] if "`$." in message else ""
    full = f"{group}.{name}" if group else name
    choices = [k for k in knobs.KNOBS if k.startswith(f"{group}.")] if group else \
        [k for k in knobs.KNOBS if "." not in k]
    return RulesError(full, f"unknown knob{knobs.did_you_mean(full, choices)}")


def _field_of(message: str) -> str:
    # msgspec says "... - at `$.field`"; name the field when it does.
    if "`$." in message:
        return message.split("`$.", 1)[1].split("`", 1)[0]
    if "unknown field `" in message:
        return message.split("unknown field `", 1)[1].split("`", 1)[0]
    return "rules"


MAX_HOUSE_RULES = 1024 * 1024
"""Largest house-rules file read (every knob with a comment is a few kilobytes)."""


def _read_house_rules(path: Path) -> bytes:
    """A house-rules file's bytes: a regular file only, opened without blocking (a FIFO would
    wait for a writer forever, /dev/zero never ends), at most :data:`MAX_HOUSE_RULES`."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                    else "a device or socket")
            raise RulesError("file", f"not a regular file ({kind})", str(path))
        data = f.read(MAX_HOUSE_RULES + 1)
    if data is None:  # a "regular" file of the kernel's that would wait (/proc/kmsg)
        raise RulesError("file", "not readable without waiting (a special file)", str(path))
    if len(data) > MAX_HOUSE_RULES:
        raise RulesError("file", f"larger than {MAX_HOUSE_RULES:,} bytes", str(path))
    return data


_NOT_PLAIN = re.compile("[/\\\\\x00-\x1f\x7f-\x9f"  # path separators, C0 and C1 controls
                        "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")  # bidi
"""What a house-rules name may not hold: a path separator, a control or a bidi character."""


def check_plain_name(name: object, path: str | None = None) -> None:
    """A house-rules name names the files `simulate` and `demo` write (name = "../../x" wrote
    outside the output directory) and is shown on terminals: a plain name only.

    Checked where rules are made (house rules, :func:`derive`) and where a name becomes a path
    (``simulate``), never on a log's match start: a log that already holds an odd name stays
    readable, the name shown escaped."""
    if isinstance(name, str) and (name in (".", "..") or _NOT_PLAIN.search(name)):
        raise RulesError("name", f"{name!r} is not a plain name: no '/', '\\', control or bidi "
                         "character (it names the logs simulate and demo write)", path)


def _toml_type(value: object) -> str:
    """What TOML calls a value's type, for a message about the file."""
    names = {bool: "boolean", int: "integer", float: "float", list: "array", dict: "table"}
    return next((name for kind, name in names.items() if isinstance(value, kind)),
                "date or time")


def load_toml(path: str | Path) -> Rules:
    """House rules from TOML: ``preset = "biriba"`` plus any fields, ``[points]``, ``[bonuses]``."""
    import tomllib  # here: only house rules need it, not every command's start

    p = Path(path)
    try:
        data = tomllib.loads(_read_house_rules(p).decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise RulesError("file", str(exc), str(p)) from None
    except RecursionError:  # tomllib recurses once per level of nested arrays or tables
        raise RulesError("file", "nested too deeply", str(p)) from None
    base = data.pop("preset", None)
    if base is None:
        raise RulesError("preset", "house rules must name the preset they start from", str(p))
    if not isinstance(base, str):  # preset = 5 was "rules field 'name': unknown preset '5'"
        raise RulesError("preset", f"a preset's name in quotes, not a TOML "
                         f"{_toml_type(base)}", str(p))
    try:
        preset(base)
    except RulesError as exc:  # the file's key is `preset`: not the rules' field `name`
        raise RulesError("preset", exc.detail, str(p)) from None
    if "name" not in data:
        data["name"] = f"{base}+{p.stem}"
    check_plain_name(data["name"], str(p))
    try:
        return derive(str(base), **data)
    except RulesError as exc:  # the file's value at fault: name the file too
        raise RulesError(exc.field, exc.detail, str(p)) from None


# -- bounds -------------------------------------------------------------------------------------
# Every knob's range, in one place. check() tests them first, so every reader of a rules value
# (the reducer on a log's match start, house rules from TOML, the dealer, the audit, ingest)
# refuses a value out of bounds before anything is sized from it (a deck of 10**9 jokers).

CARDS_MAX = 108
"""The largest material (two decks and four jokers): no count of cards can exceed it."""
SCORE_MAX = 1_000_000
"""Highest target, threshold or opening minimum."""
POINTS_MAX = 100_000
"""Highest points of one card or one bonus (penalties are positive numbers too)."""

BOUNDS: dict[str, tuple[int, int]] = {
    "player_counts": (2, 6),  # each entry
    "jokers": (0, 4),
    "hand_size": (1, CARDS_MAX),
    "morto_size": (0, CARDS_MAX),
    "max_sets_per_rank": (0, CARDS_MAX),
    "canastra_size": (3, CARDS_MAX),
    "stock_floor": (0, CARDS_MAX),
    "target_score": (1, SCORE_MAX),
    "vulnerable_at": (0, SCORE_MAX),
    "opening_min": (0, SCORE_MAX),
    "opening_min_after_retract": (0, SCORE_MAX),
    **{f"points.{f}": (0, POINTS_MAX) for f in CardPoints.__struct_fields__},
    **{f"bonuses.{f}": (0, POINTS_MAX) for f in Bonuses.__struct_fields__},
}
"""Inclusive range of every integer knob (``points.*``/``bonuses.*`` for the nested ones)."""

LENGTHS: dict[str, tuple[int, int]] = {"name": (1, 100), "player_counts": (1, 4)}
"""Inclusive range of the length of the text and list knobs."""


def check_bounds(rules: Rules) -> None:
    """Refuse a knob out of its bounds (:data:`BOUNDS`, :data:`LENGTHS`), naming it."""
    for field, (lo, hi) in LENGTHS.items():
        n = len(getattr(rules, field))
        if not lo <= n <= hi:
            raise RulesError(field, f"length {n} is out of bounds ({lo} to {hi})")
    for field, (lo, hi) in BOUNDS.items():
        value: Any = rules
        for part in field.split("."):
            value = getattr(value, part)
        for v in value if isinstance(value, tuple) else (value,):
            if type(v) is not int:  # a bool is no count (msgspec decodes ints strictly)
                raise RulesError(field, f"{v!r} is not an integer")
            if not lo <= v <= hi:
                shown = v if abs(v) < 10**12 else f"{str(v)[:6]}... ({len(str(abs(v)))} digits)"
                raise RulesError(field, f"{shown} is out of bounds ({lo} to {hi})")


_PASSED: dict[tuple[bytes, int | None], None] = {}
_PASSED_MAX = 256  # distinct rule sets kept: an archive holds a handful of variants


def need_rules(rules: object) -> None:
    """A TypeError naming what came where a :class:`Rules` belongs (``None`` went on to a bare
    AttributeError deep in the dealer or the simulator)."""
    if not isinstance(rules, Rules):
        raise TypeError(f"the rules must be a Rules (from preset() or load_toml()), "
                        f"not {type(rules).__name__}")


def check(rules: Rules, players: int | None = None) -> None:
    """Refuse impossible combinations, naming the field at fault (bounds first).

    A rule set that passed is remembered by its encoded bytes (a ``True`` where an integer
    belongs encodes differently from ``1``, so it is never taken for a passed one): every
    match of an archive starts with its rules checked by the replay and again by the deal
    check, and one check reads every knob (about 20 us).
    """
    need_rules(rules)
    try:
        key = (_ENCODER.encode(rules), players)
    except (msgspec.EncodeError, TypeError, ValueError, OverflowError):
        _check(rules, players)  # a value no log could hold (an int past 64 bits): no memo
        return
    if key in _PASSED:
        return
    _check(rules, players)
    if len(_PASSED) >= _PASSED_MAX:
        _PASSED.clear()
    _PASSED[key] = None


_ENCODER = msgspec.msgpack.Encoder()


def _check(rules: Rules, players: int | None) -> None:
    check_bounds(rules)
    if not rules.player_counts or any(n not in (2, 3, 4, 6) for n in rules.player_counts):
        raise RulesError("player_counts", "players must be 2, 3, 4 or 6")
    if rules.morto and max(rules.player_counts) > 4:
        raise RulesError("player_counts", "a morto variant is played by at most 4 players")
    if rules.jokers not in (0, 2, 4):
        raise RulesError("jokers", "the material has 0, 2 or 4 jokers")
    if rules.hand_size < 1:
        raise RulesError("hand_size", "must be at least 1")
    if rules.morto and rules.morto_size < 1:
        raise RulesError("morto_size", "must be at least 1")
    if rules.canastra_size < 3:
        raise RulesError("canastra_size", f"a canastra has at least 3 {_unit(rules)}s")
    if rules.max_sets_per_rank < 0:
        raise RulesError("max_sets_per_rank", "0 (no limit) or more")
    if rules.stock_floor < 0:
        raise RulesError("stock_floor", "must be 0 or more")
    if rules.target_score <= 0:
        raise RulesError("target_score", "must be positive")
    if rules.morto_needs_canastra and not rules.morto:
        raise RulesError("morto_needs_canastra", "needs morto = true")
    if not rules.morto_direct and not rules.morto:
        raise RulesError("morto_direct", "only meaningful with morto = true")
    if rules.vulnerability and rules.opening_min_after_retract < rules.opening_min:
        raise RulesError("opening_min_after_retract", "must be at least opening_min")
    for n in (players,) if players is not None else rules.player_counts:
        if players is not None and n not in rules.player_counts:
            allowed = ", ".join(map(str, rules.player_counts))
            raise RulesError("player_counts", f"{rules.name} is played by {allowed}, not {n}")
        mortos = rules.sides(n) * rules.morto_size if rules.morto else 0
        upcard = 1 if rules.initial_upcard else 0
        dealt = n * rules.hand_size + mortos + upcard
        need = rules.stock_floor + 2 * n
        deck_size = rules.deck_size()
        # Leave each player at least two draws above the floor, or there is no game to play.
        if dealt + need > deck_size:
            raise RulesError(
                "hand_size",
                f"{n} players x {rules.hand_size} {_unit(rules)}s"
                + (f" + {rules.sides(n)} mortos of {rules.morto_size}" if rules.morto else "")
                + ((" + the upcard" if _unit(rules) == "card" else " + the tile turned up")
                   if upcard else "")
                + (f" need {dealt} {_unit(rules)}s, more than the {deck_size} of the material"
                   if dealt > deck_size else
                   f" leave a stock of {deck_size - dealt} of the {deck_size} {_unit(rules)}s"
                   f" of the material; two draws each above the stock floor of {rules.stock_floor} "
                   f"need {need}"),
            )


def _unit(rules: Rules) -> str:
    """What the material is made of, for an error's words: Burako's tiles, or cards."""
    return "tile" if rules.rendering == "tiles" else "card"


def side_of(seat: int, players: int) -> int:
    """Partners sit on alternate seats: with 4 or 6 players the side is seat % 2."""
    return seat if players <= 3 else seat % 2


for _r in PRESETS.values():
    check(_r)
