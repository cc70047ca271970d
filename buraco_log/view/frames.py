"""The frames of a replay page: the table after every event, computed by the reducer.

The page draws what it is given and holds no rules: every hand, meld reading, canastra class,
score and phase comes from here. A frame is a flat dict of short keys (see ``docs/viewer.md``);
the page stores a full frame every ``SNAPSHOT_EVERY`` seqs and, for every seq, only the keys
that changed since the seq before (a list that only grew is stored as its new tail).

A seat's frames are built from :func:`buraco_log.state.view` alone, so what the reducer hides
from that seat (the other hands, the stock, the mortos nobody has taken) never reaches the page.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from buraco_log.cards import ACE, RANK, Card, sort_key
from buraco_log.errors import BuracoLogError
from buraco_log.events import (
    AnyEvent,
    CardDrawn,
    HandStarted,
    MatchStarted,
    MortoTaken,
    Player,
)
from buraco_log.gcpause import no_cyclic_gc
from buraco_log.melds import read_meld
from buraco_log.reducer import Replayer
from buraco_log.rules import Rules
from buraco_log.state import Meld, State, view
from buraco_log.timeline import Timeline, card_style, describe_event, morto_states
from buraco_log.wilds import describe_wild

SNAPSHOT_EVERY = 32
"""A full frame every this many seqs: a jump applies at most this many diffs minus one."""

GROWN = "+"
"""Suffix of a diff key whose list only grew: the value is the new tail."""

Frame = dict[str, Any]


def held(cards: Sequence[Card]) -> list[Card]:
    """A hand as a player holds it: by suit, then rank, jokers last."""
    return sorted(cards, key=sort_key)


def wild_label(cards: Sequence[Card], rules: Rules) -> str | None:
    """Where a meld's wild stands, in the words ``replay`` prints ("2s as the 6"); None for
    a clean meld. (The page looked for it in ``melds``, where it never was: no meld's wild
    was named.)"""
    try:
        return describe_wild(cards, rules, card_style(rules))
    except BuracoLogError:  # a card code the reader refuses: the meld is drawn, not read
        return None


def meld_order(cards: Sequence[Card], rules: Rules) -> tuple[list[Card], Card | None]:
    """A meld's cards in reading order, and its wild card (None when clean).

    A run goes from low to high with its wild where the reader places it (in its gap, else
    past the high end, or below the low end when the high end is the ace); a set has its wild
    last. The reading is the rules engine's (``melds.read_meld``), not the page's.
    """
    try:
        r = read_meld(cards, rules)
    except BuracoLogError:  # a refused meld never reaches a legal table; draw it as laid
        return list(cards), None
    wild = r.wild
    rest = list(cards)
    if wild is not None:
        rest.remove(wild)
    if r.kind == "set":
        return sorted(rest, key=sort_key) + ([wild] if wild is not None else []), wild
    # A run: an ace stands low when the reading starts at 1, high otherwise (both, ace to ace).
    aces = [c for c in rest if RANK[c] == ACE]
    low = aces[:1] if r.lo == 1 else []
    high = aces[len(low):]
    others = sorted((c for c in rest if RANK[c] != ACE), key=lambda c: RANK[c])
    ordered = low + others + high
    if wild is None:
        return ordered, None
    if r.gap is not None:
        positions = [1] * len(low) + [RANK[c] for c in others] + [14] * len(high)
        at = sum(1 for p in positions if p < r.gap)
        return [*ordered[:at], wild, *ordered[at:]], wild
    return ([wild, *ordered] if r.hi == 14 else [*ordered, wild]), wild


class Memo:
    """What one match's frames draw again and again, worked out once: hands as held, each
    side's melds in reading order, the points of a side's melds. Keyed by content, so a value
    is the same whichever state asks; the lists it hands out are shared and never changed."""

    def __init__(self) -> None:
        self.hands: dict[tuple[Card, ...], list[Card]] = {}
        self.melds: dict[tuple[Meld, ...], list[list[Any]]] = {}
        self.points: dict[tuple[Meld, ...], int] = {}

    def held(self, cards: tuple[Card, ...]) -> list[Card]:
        out = self.hands.get(cards)
        if out is None:
            out = self.hands[cards] = held(cards)
        return out

    def side(self, melds: tuple[Meld, ...], rules: Rules) -> list[list[Any]]:
        out = self.melds.get(melds)
        if out is None:
            out = self.melds[melds] = _melds(melds, rules)
        return out

    def side_points(self, melds: tuple[Meld, ...], points: Sequence[int]) -> int:
        out = self.points.get(melds)
        if out is None:
            out = self.points[melds] = sum(points[c] for m in melds for c in m.cards)
        return out


def _melds(melds: Sequence[Meld], rules: Rules) -> list[list[Any]]:
    """Each meld as ``[id, kind, canastra class, cards in order, laid by, wild, wild text]``."""
    out: list[list[Any]] = []
    for m in melds:
        order, wild = meld_order(m.cards, rules)
        label = wild_label(m.cards, rules) if wild is not None else None
        out.append([m.id, m.kind, m.canastra, order, m.laid_by, wild, label])
    return out


def referee_frame(s: State, morto_by: Sequence[int | None], memo: Memo | None = None) -> Frame:
    """Everything on and under the table after one event."""
    memo = memo or Memo()
    rules = s.rules
    n_seats = len(s.players)
    f: Frame = _common(s, morto_by, memo)
    for i in range(n_seats):
        f[f"h{i}"] = memo.held(s.hands[i]) if s.hands else []
    for side in range(s.n_sides):
        f[f"m{side}"] = memo.side(s.melds[side], rules) if s.melds and rules else []
        f[f"d{side}"] = memo.held(s.mortos[side]) if s.mortos else []
    f["k"] = len(s.stock)
    f["p"] = list(s.pile)
    return f


def seat_frame(s: State, seat: int, morto_by: Sequence[int | None], memo: Memo | None = None
               ) -> Frame:
    """What ``seat`` could see after one event, taken from the reducer's per-seat view only."""
    memo = memo or Memo()
    v = view(s, seat)
    rules = s.rules
    f: Frame = _common(s, morto_by, memo)
    f[f"h{seat}"] = memo.held(v.my_hand)
    for side in range(s.n_sides):
        f[f"m{side}"] = memo.side(v.melds[side], rules) if v.melds and rules else []
    f["k"] = v.stock_count
    f["p"] = list(v.pile)
    return f


def _common(s: State, morto_by: Sequence[int | None], memo: Memo) -> Frame:
    """The public part: counts, phase, turn, scores; the same in every view."""
    points = s.rules.point_table() if s.rules is not None else [0] * 65
    n_seats = len(s.players)
    return {
        "s": s.seq,
        "ph": s.phase,
        "n": s.hand,
        "t": s.turn,
        "dl": s.dealer,
        "c": [len(s.hands[i]) if s.hands else 0 for i in range(n_seats)],
        "mc": [len(m) for m in s.mortos] if s.mortos else [0] * s.n_sides,
        "mt": [bool(x) for x in s.morto_taken] if s.morto_taken else [False] * s.n_sides,
        "mb": list(morto_by) if s.mortos else [None] * s.n_sides,
        "T": list(s.totals) if s.totals else [0] * s.n_sides,
        "P": [memo.side_points(s.melds[side], points) if s.melds else 0
              for side in range(s.n_sides)],
        "V": [bool(x) for x in s.vulnerable] if s.vulnerable else [False] * s.n_sides,
        "O": [bool(x) for x in s.opened] if s.opened else [False] * s.n_sides,
        "w": s.winner,
        # what each morto counts as in the score: a voided one was taken ("mt") yet is
        # scored as not taken; the page must not call it taken beside the penalty
        "ms": list(morto_states(s)),
    }


def diff(old: Frame, new: Frame) -> Frame:
    """The keys of ``new`` that differ from ``old``; a list that only grew gives its tail."""
    out: Frame = {}
    for k, v in new.items():
        was = old.get(k)
        if (was is v or was == v) and k in old:  # shared memo lists: mostly the same object
            continue
        _put(out, k, was, v)
    for k in old:
        if k not in new:
            out[k] = None
    return out


def _put(out: Frame, k: str, was: Any, v: Any) -> None:
    """Key ``k``'s change from ``was`` to ``v`` into the diff ``out``: a list that only grew
    gives its tail (under ``k + GROWN``), anything else the new value."""
    if (isinstance(v, list) and isinstance(was, list) and 0 < len(was) < len(v)
            and v[: len(was)] == was):
        out[k + GROWN] = v[len(was):]
    else:
        out[k] = v


def patch(frame: Frame, d: Frame) -> Frame:
    """Apply a diff (the page's JavaScript does the same; tests hold the two together)."""
    out = dict(frame)
    for k, v in d.items():
        if k.endswith(GROWN):
            out[k[:-1]] = out[k[:-1]] + v
        else:
            out[k] = v
    return out


NAME_IN_MOVES = 48
"""The most characters of a player's name a move line repeats; the seat panels show it whole."""

ID_SHOWN = 64
"""The most characters of the match id or the rules' name the page shows in a line (its
heading and the match start's line; whole in the heading's tooltip and in the data)."""


def _attaches(c: str) -> bool:
    """Whether ``c`` belongs to the character before it: a combining mark, a joiner, a
    variation selector, an emoji's skin tone or a flag's tag character."""
    o = ord(c)
    return (o == 0x200D or 0xFE00 <= o <= 0xFE0F or 0x1F3FB <= o <= 0x1F3FF
            or 0xE0020 <= o <= 0xE007F or 0xE0100 <= o <= 0xE01EF
            or unicodedata.category(c).startswith("M"))


def _regional(c: str) -> bool:
    return 0x1F1E6 <= ord(c) <= 0x1F1FF  # a flag is two of these


_ESCAPE = re.compile(r"\\(?:x[0-9a-f]{2}|u[0-9a-f]{4})")
"""An escape :func:`~buraco_log.safetext.terminal_safe` writes for a control or bidi
character: the match id and the rules' name are escaped before they are cut."""


def _in_escape(text: str, k: int) -> bool:
    """Whether ``text[k]`` is inside such an escape (a cut there showed "\\u20…")."""
    start = text.rfind("\\", max(0, k - 5), k)
    m = _ESCAPE.match(text, start) if start >= 0 else None
    return m is not None and m.end() > k


def _boundary(text: str, k: int) -> bool:
    """Whether ``text`` may be cut before ``text[k]`` without splitting what is seen as one
    character (a conservative reading of Unicode's grapheme clusters, no table of them) or
    an escape of a control character."""
    if text[k - 1] == "\u200d" or _attaches(text[k]) or _in_escape(text, k):
        return False
    if _regional(text[k]) and _regional(text[k - 1]):
        n = 1
        while n < k and _regional(text[k - 1 - n]):
            n += 1
        return n % 2 == 0  # an even run before it: text[k] starts a flag
    return True


def cut(text: str, most: int) -> str:
    """``text`` cut to at most ``most`` characters (code points), the cut marked with an
    ellipsis, and never inside a joined emoji, a flag, a letter with its accents (it cut
    after a joiner or between a flag's halves) or an escape such as ``\\u202e``. A single
    such cluster longer than ``most`` is cut where the limit falls. The page's script cuts
    the same way (``cut`` in viewer.js)."""
    if len(text) <= most:
        return text
    k = most - 1
    while k > 0 and not _boundary(text, k):
        k -= 1
    return text[:k or most - 1] + "\u2026"


def short_names(players: Sequence[Player]) -> tuple[Player, ...]:
    """``players`` with each name cut to :data:`NAME_IN_MOVES` characters (the cut marked
    with an ellipsis). Every move line names its seat's player: a 10,000-character name made
    a page of a few hundred events 1.5 MB, and of a long match gigabytes."""
    return tuple(p if len(p.name) <= NAME_IN_MOVES
                 else msgspec.structs.replace(p, name=cut(p.name, NAME_IN_MOVES))
                 for p in players)


def _short_start(ev: MatchStarted, players: Sequence[Player]) -> MatchStarted:
    """The match start as its line on the page names it: the names, the match id and the
    rules' name cut (a 20,000-character match id made that one line 10,000 pixels tall)."""
    return msgspec.structs.replace(
        ev, players=tuple(players), match_id=cut(ev.match_id, ID_SHOWN),
        rules=msgspec.structs.replace(ev.rules, name=cut(ev.rules.name, ID_SHOWN)))


def visible_text(ev: AnyEvent, tl: Timeline, seat: int | None,
                 players: Sequence[Player] | None = None) -> str:
    """The event as ``replay`` words it; for a seat, a card drawn by another seat stays
    face down ("drew a card"), the one change a player's copy needs. ``players``: the names
    to use (default: the timeline's own, uncut); given, the match start's line names them
    too, with the match id and the rules' name cut to :data:`ID_SHOWN` characters."""
    names = tl.players if players is None else players
    if players is not None and isinstance(ev, MatchStarted):
        ev = _short_start(ev, players)  # it named the players from its own record, whole
    if seat is not None and isinstance(ev, CardDrawn) and ev.seat != seat:
        head = describe_event(ev, names, tl.style).rsplit(" drew ", 1)[0]
        return f"{head} drew a {'tile' if tl.style == 'tiles' else 'card'}"  # Burako: tiles
    return describe_event(ev, names, tl.style, rules=tl.rules)


Maker = Callable[[Any], Any] | None
"""How a frame's value is made from its source in the state (None: the source is the value)."""


class _Steps:
    """Each event's diff, worked out from what changed in the state, not from two whole frames.

    Building every frame whole and comparing it key by key with the one before took most of
    the time of a long match's page (some 20 us an event, 100,000 events). Here each key has a
    source in the state (a tuple, a number) compared first, in C; only the keys whose source
    changed are made and compared. The diffs are those :func:`diff` gives for the whole frames:
    a whole frame is built at every snapshot and whenever the frame's keys change (players,
    sides or rules), and the frame kept between them is equal to the one built whole."""

    def __init__(self, seat: int | None, memo: Memo) -> None:
        self.seat = seat
        self.memo = memo
        self.frame: Frame = {}  # the last frame built whole, never changed
        self.current: Frame = {}  # the frame after the last step, changed in place
        self.shape: tuple[int, int, int, int] | None = None
        self.keys: tuple[str, ...] = ()
        self.makers: list[Maker] = []
        self.was: list[Any] = []

    def step(self, s: State, morto_by: Sequence[int | None], *, whole: bool) -> Frame:
        """The diff from the frame before to the one after ``s``; ``whole``: build it whole."""
        src = self._sources(s, morto_by)
        shape = (len(s.players), s.n_sides, id(s.rules), len(src))
        if whole or shape != self.shape:
            frame = (referee_frame(s, morto_by, self.memo) if self.seat is None
                     else seat_frame(s, self.seat, morto_by, self.memo))
            out: Frame = diff(self.current, frame)
            self.frame, self.current, self.was = frame, dict(frame), src  # frame: a snapshot
            if shape != self.shape:
                self.shape, self.keys, self.makers = shape, tuple(frame), self._makers(s)
            return out
        out = {}
        frame, keys, makers, was = self.current, self.keys, self.makers, self.was
        changed = [i for i, (a, b) in enumerate(zip(src, was, strict=True))
                   if a is not b and a != b]
        for i in changed:
            k, make = keys[i], makers[i]
            v = src[i] if make is None else make(src[i])
            old = frame[k]
            if old is v or old == v:
                continue
            _put(out, k, old, v)
            frame[k] = v
        self.was = src
        return out

    def _sources(self, s: State, morto_by: Sequence[int | None]) -> list[Any]:
        """Each key's source, in the order of the frame's keys (see :func:`_common`)."""
        hands, mortos, melds = s.hands, s.mortos, s.melds
        src: list[Any] = [s.seq, s.phase, s.hand, s.turn, s.dealer, hands, mortos,
                          s.morto_taken, (tuple(morto_by), bool(mortos)), s.totals, melds,
                          s.vulnerable, s.opened, s.winner, morto_states(s)]
        if self.seat is None:
            src.extend(hands or [()] * len(s.players))
            for side in range(s.n_sides):
                src.append(melds[side] if melds else ())
                src.append(mortos[side] if mortos else ())
            src.append(len(s.stock))
            src.append(s.pile)
            return src
        v = view(s, self.seat)  # a seat's own part comes from its view alone
        src.append(v.my_hand)
        src.extend(v.melds[side] if v.melds else () for side in range(s.n_sides))
        src.append(v.stock_count)
        src.append(v.pile)
        return src

    def _makers(self, s: State) -> list[Maker]:
        """How each key's value is made from its source, as :func:`referee_frame` and
        :func:`seat_frame` make it."""
        memo, rules = self.memo, s.rules
        n_seats, n_sides = len(s.players), s.n_sides
        points = rules.point_table() if rules is not None else [0] * 65

        def side(melds: tuple[Meld, ...]) -> list[list[Any]]:
            return memo.side(melds, rules) if melds and rules else []

        makers: list[Maker] = [
            None, None, None, None, None,
            lambda h: [len(x) for x in h] if h else [0] * n_seats,
            lambda m: [len(x) for x in m] if m else [0] * n_sides,
            lambda t: [bool(x) for x in t] if t else [False] * n_sides,
            lambda b: list(b[0]) if b[1] else [None] * n_sides,
            lambda t: list(t) if t else [0] * n_sides,
            lambda m: [memo.side_points(m[i], points) if m else 0 for i in range(n_sides)],
            lambda t: [bool(x) for x in t] if t else [False] * n_sides,
            lambda t: [bool(x) for x in t] if t else [False] * n_sides,
            None,
            list,
        ]
        if self.seat is None:
            makers.extend([memo.held] * n_seats)
            makers.extend(x for _ in range(n_sides) for x in (side, memo.held))
        else:
            makers.append(memo.held)
            makers.extend([side] * n_sides)
        return [*makers, None, list]


class Frames:
    """Every frame of a timeline's legal prefix, for the referee or one seat, stored compactly."""

    def __init__(self, tl: Timeline, seat: int | None = None, *,
                 every: int = SNAPSHOT_EVERY) -> None:
        self.every = every
        self.snaps: list[Frame] = []
        self.diffs: list[Frame] = []
        self.moves: list[str] = []
        self.hand_starts: list[tuple[int, int]] = []  # (hand, seq of its deal)
        names = short_names(tl.players)
        steps = _Steps(seat, Memo())
        with no_cyclic_gc():  # frames are millions of small lists and no cycle
            self._build(tl, seat, names, steps)

    def _build(self, tl: Timeline, seat: int | None, names: Sequence[Player], steps: _Steps
               ) -> None:
        n_sides = 0
        morto_by: list[int | None] = []
        rep = Replayer()
        every = self.every
        for ev in tl.events:
            rep.apply(ev)
            s = rep.state()
            if isinstance(ev, HandStarted):
                n_sides = s.n_sides
                morto_by = [None] * n_sides
                self.hand_starts.append((ev.hand, ev.seq))
            elif isinstance(ev, MortoTaken) and s.sides:
                morto_by[s.sides[ev.seat]] = ev.seat
            snap = ev.seq % every == 0
            self.diffs.append(steps.step(s, morto_by, whole=snap))
            if snap:
                self.snaps.append(steps.frame)
            self.moves.append(visible_text(ev, tl, seat, names))

    def frame_at(self, seq: int) -> Frame:
        """The full frame at ``seq``, rebuilt as the page rebuilds it."""
        base = seq // self.every
        f = self.snaps[base]
        for d in self.diffs[base * self.every + 1 : seq + 1]:
            f = patch(f, d)
        return f


__all__ = ["GROWN", "ID_SHOWN", "NAME_IN_MOVES", "SNAPSHOT_EVERY", "Frames", "Memo", "cut", "diff",
           "held", "meld_order", "patch", "referee_frame", "seat_frame", "short_names",
           "visible_text"]
