"""The dealer: a portable shuffle, the deal, and provably fair deals with their audit.

Shuffle ``fy-hmac-sha256-v1`` (the only one so far; its id is recorded in
``HandStarted.shuffle``):

1. Start from the material in its fixed order, :func:`buraco_log.cards.deck`.
2. Byte stream: block ``i`` (``i`` = 0, 1, 2, ...) is ``HMAC-SHA256(key, u64be(i))``; the blocks
   are concatenated.
3. Fisher–Yates from the end: for ``i`` from ``n - 1`` down to 1, draw ``j`` uniform in
   ``0..i`` and swap positions ``i`` and ``j``. A draw reads the next 4 bytes as a big-endian
   ``u32`` ``x`` and rejects it while ``x >= 2**32 - 2**32 % (i + 1)``, so every ``j`` is equally
   likely; otherwise ``j = x % (i + 1)``.

The result is the deck order, index 0 dealt first. Every step is plain SHA-256 and integer
arithmetic, so any language can reproduce it (Python's ``random`` promises no such thing).

Deal order: ``hand_size`` cards to each seat in turn, starting with the seat after the dealer
(seat ``dealer + 1`` takes ``order[0:hand_size]``), then one morto of ``morto_size`` cards per
side in side order, then the upcard when the rules have one, and the rest is the stock
(``stock[0]`` is the top).

Fairness protocol (the key of each hand):

- Before the match the dealer picks a secret ``server_seed`` (text) and publishes
  ``commitment = sha256(server_seed as UTF-8)`` in ``MatchStarted.commitment``. Players may add
  seeds of their own (``MatchStarted.player_seeds``), which the dealer cannot choose around.
- The key of hand ``k`` (0 for the first hand) is ``HMAC-SHA256(server_seed as UTF-8, msg)`` with
  ``msg = b"buraco_log/deal/v1" || u32be(len(player_seeds)) || (u32be(len(s)) || s)... ||
  u32be(k)``, each ``s`` a player seed in UTF-8.
- ``MatchEnded.server_seed`` reveals the seed; :func:`check_deals` then re-derives every deal.
- A deal may instead carry a plain, uncommitted seed in ``HandStarted.seed`` (handy for tests and
  demos, but not fair against the dealer): its key is the same derivation with that seed, no
  player seeds, and the hand number.

Core module: stdlib and msgspec only.
"""

from __future__ import annotations

import hashlib
import hmac
import operator
import secrets
import struct
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from operator import lt as _lt
from operator import mod as _mod
from typing import SupportsIndex

import msgspec

from buraco_log.cards import Card, Style, deck, format_cards, is_card
from buraco_log.errors import DealError, RulesError
from buraco_log.events import AnyEvent, HandStarted, MatchEnded, MatchStarted
from buraco_log.rules import Rules, need_rules
from buraco_log.rules import check as check_rules

SHUFFLE_ID = "fy-hmac-sha256-v1"
"""Id of the shuffle this module implements, recorded in ``HandStarted.shuffle``."""

SHUFFLES: tuple[str, ...] = (SHUFFLE_ID,)
"""Every shuffle id this buraco_log can re-derive."""

_DEAL_DOMAIN = b"buraco_log/deal/v1"
_U32 = 1 << 32


def _u32(n: int) -> bytes:
    return struct.pack(">I", n)


_Q = struct.Struct(">Q")
_WORDS_PER_BLOCK = 8  # a 32-byte HMAC-SHA256 block holds 8 big-endian u32 words
_IPAD = bytes(x ^ 0x36 for x in range(256))
_OPAD = bytes(x ^ 0x5C for x in range(256))


def _blocks(key: bytes, start: int, count: int) -> tuple[int, ...]:
    """Blocks ``start .. start+count-1`` of the byte stream (step 2), as big-endian u32 words.

    HMAC-SHA256 (RFC 2104) with the padded key hashed once: each block then costs two hash
    copies instead of a full HMAC set-up (the tests check it against :func:`hmac.digest`).
    """
    if len(key) > 64:
        key = hashlib.sha256(key).digest()
    key = key.ljust(64, b"\0")
    inner = hashlib.sha256(key.translate(_IPAD))
    outer = hashlib.sha256(key.translate(_OPAD))
    out = []
    for i in range(start, start + count):
        h = inner.copy()
        h.update(_Q.pack(i))
        o = outer.copy()
        o.update(h.digest())
        out.append(o.digest())
    return struct.unpack(f">{_WORDS_PER_BLOCK * count}I", b"".join(out))


_LIMITS: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}


def _limits(n: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """For a deck of ``n``: the range sizes ``m`` of the draws in order, and their limits."""
    got = _LIMITS.get(n)
    if got is None:
        ms = tuple(range(n, 1, -1))
        got = _LIMITS[n] = (ms, tuple(_U32 - _U32 % m for m in ms))
    return got


def shuffle(cards: Iterable[Card], key: bytes) -> list[Card]:
    """``fy-hmac-sha256-v1``: the cards in the order the key gives (index 0 is dealt first).

    The stream is read in one batch of blocks, enough for every draw when none is rejected,
    and the draws are checked and reduced in bulk; a rejection (odds below ``m / 2**32`` a
    draw) sends the shuffle down the word-by-word path, which reads more blocks as it needs.
    """
    if not isinstance(key, bytes | bytearray):  # a str failed in bytes.ljust, unnamed
        raise DealError(f"a shuffle key is bytes (hand_key gives it), not "
                        f"{type(key).__name__} {_short(key)}")
    out = list(cards)
    n = len(out)
    if n < 2:
        return out
    count = -(-(n - 1) // _WORDS_PER_BLOCK)
    words = _blocks(key, 0, count)
    ms, limits = _limits(n)
    if all(map(_lt, words, limits)):
        for i, j in zip(range(n - 1, 0, -1), map(_mod, words, ms), strict=False):
            out[i], out[j] = out[j], out[i]
        return out
    w = 0
    for i in range(n - 1, 0, -1):
        m = i + 1
        limit = _U32 - _U32 % m
        while True:  # a rejected draw takes the next word, reading more blocks if needed
            if w == len(words):
                words += _blocks(key, count, 1)
                count += 1
            x = words[w]
            w += 1
            if x < limit:
                break
        j = x % m
        out[i], out[j] = out[j], out[i]
    return out


def _seed_bytes(seed: object, what: str) -> bytes:
    """A seed's UTF-8 bytes; a seed that is no text (None, bytes, a number) or cannot be
    UTF-8 (a lone surrogate) is refused by name, not an AttributeError from ``encode``."""
    if not isinstance(seed, str):
        raise DealError(f"the {what} is text, not {type(seed).__name__} {_short(seed)}")
    try:
        return seed.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise DealError(f"the {what} is not valid text: {exc.reason} at character "
                        f"{exc.start}") from None


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _player_seeds(seeds: object) -> tuple[str, ...]:
    """The player seeds as a tuple of text: one string is no list of seeds ("abc" was three
    seeds, 'a', 'b' and 'c', and the deals derived from them)."""
    if isinstance(seeds, str | bytes) or not isinstance(seeds, Iterable):
        raise DealError(f"the player seeds are a list of text, not {type(seeds).__name__} "
                        f"{_short(seeds)}")
    out = tuple(seeds)
    for i, seed in enumerate(out):
        _seed_bytes(seed, f"player seed {i}")
    return out


def commitment_of(server_seed: str) -> str:
    """The public commitment to a server seed: SHA-256 of its UTF-8 bytes, in hex."""
    return hashlib.sha256(_seed_bytes(server_seed, "server seed")).hexdigest()


def new_server_seed() -> str:
    """A fresh secret server seed: 32 random bytes in hex, from the OS's secure source."""
    return secrets.token_hex(32)


def hand_key(server_seed: str, player_seeds: Sequence[str], hand: int) -> bytes:
    """The shuffle key of hand ``hand`` (0-based) from the server seed and the player seeds."""
    return hand_keys(server_seed, player_seeds)(hand)


def hand_keys(server_seed: str, player_seeds: Sequence[str]) -> Callable[[int], bytes]:
    """:func:`hand_key` of every hand of one match.

    The message's common start (the domain and the player seeds) is hashed once, and each hand
    only adds its number: a log holding megabytes of player seeds and thousands of hands would
    otherwise hash the seeds again for every hand (22 ms a hand for 5 MB of seeds)."""
    player_seeds = _player_seeds(player_seeds)
    parts = [_DEAL_DOMAIN, _u32(len(player_seeds))]
    for s in player_seeds:
        b = s.encode("utf-8")
        parts += [_u32(len(b)), b]
    mac = hmac.new(_seed_bytes(server_seed, "server seed"), b"".join(parts), "sha256")

    def key(hand: int) -> bytes:
        h = mac.copy()
        h.update(_u32(_hand_number(hand)))
        return h.digest()

    return key


def _whole(value: object) -> int | None:
    """``value`` as an int when it is a whole number (a NumPy integer too), else None: not a
    bool, a float or text."""
    if type(value) is int:  # the usual case; a Protocol's isinstance costs a deal check a fifth
        return value
    if isinstance(value, bool) or not isinstance(value, SupportsIndex):
        return None
    try:
        return operator.index(value)
    except TypeError:  # numpy.bool_
        return None


def _hand_number(hand: object) -> int:
    """A hand number a deal key can hold (a u32); struct's "argument out of range" named
    neither the hand nor the bound."""
    n = _whole(hand)
    if n is None or not 0 <= n < _U32:
        raise DealError(f"no hand {_short(hand)} to deal: hands are numbered 0 to "
                        f"{_U32 - 1} (0 for the first)")
    return n


def _deal_arguments(players: object, hand: object, dealer: object, seq: object
                    ) -> tuple[int, int, int, int]:
    """The caller's numbers, checked before anything is dealt: a dealer seat of 5 at a
    2-player table made a HandStarted the reducer then refused, and 2.0 players failed in a
    list product."""
    n = _whole(players)
    if n is None:
        raise DealError(f"the number of players is a whole number, not {_short(players)}")
    _hand_number(hand)
    seat = _whole(dealer)
    if seat is None or not 0 <= seat < n:
        raise DealError(f"no seat {_short(dealer)} to deal from at a {n}-player table "
                        f"(seats 0 to {n - 1})")
    at = _whole(seq)
    if at is None or at < 0:
        raise DealError(f"a deal's seq is a whole number from 0, not {_short(seq)}")
    return n, _hand_number(hand), seat, at  # plain ints: the event encodes no NumPy int


def _check_players(rules: Rules, players: int) -> None:
    if players not in rules.player_counts:
        allowed = ", ".join(map(str, rules.player_counts))
        raise RulesError("player_counts", f"{rules.name} is played by {allowed}, not {players}")


def _check_material(rules: Rules, order: Sequence[Card]) -> None:
    """The order is the preset's material, each card as many times as it exists: a joker in a
    jokerless preset, or a third ace of spades, was dealt here and refused only by the reducer
    (and a length check alone let a duplicate stand in for a missing card)."""
    what = "tile" if rules.rendering == "tiles" else "card"
    if isinstance(order, (str, bytes)) or not all(is_card(c) for c in order):
        bad = next((c for c in order if not is_card(c)), order)
        raise DealError(f"[deal.material] the {what} order holds {_short(bad)}, which is no "
                        f"{what} code")
    full = deck(rules.jokers)
    dealt, material = Counter(order), Counter(full)
    if dealt == material:
        return
    style: Style = "tiles" if rules.rendering == "tiles" else "ascii"
    wild = "tatus" if what == "tile" else "jokers"
    extra = format_cards(sorted((dealt - material).elements()), style) or "none"
    short = format_cards(sorted((material - dealt).elements()), style) or "none"
    raise DealError(f"[deal.material] the {what} order is not the material of {rules.name} "
                    f"({len(full)} {what}s, {rules.jokers} {wild}): it has {len(order)}; "
                    f"extra {extra}, missing {short}")


def deal_from_order(
    rules: Rules,
    players: int,
    hand: int,
    dealer: int,
    order: Sequence[Card],
    *,
    seq: int,
    shuffle_id: str | None = SHUFFLE_ID,
    seed: str | None = None,
) -> HandStarted:
    """Split a shuffled deck into hands, mortos, upcard and stock (see the module docstring).

    ``order`` must be the preset's material in some order (:func:`buraco_log.cards.deck`);
    anything else is a :class:`DealError` saying ``[deal.material]``, the reducer's rule."""
    _check_players(rules, players)  # before the material: the seat count is the first word
    _check_material(rules, order)
    return _split(rules, players, hand, dealer, order, seq=seq, shuffle_id=shuffle_id, seed=seed)


def _split(
    rules: Rules,
    players: int,
    hand: int,
    dealer: int,
    order: Sequence[Card],
    *,
    seq: int,
    shuffle_id: str | None = SHUFFLE_ID,
    seed: str | None = None,
) -> HandStarted:
    """:func:`deal_from_order` of an order known to be the material: the full deck shuffled.
    Counting it again cost the deal check as much as re-deriving the deal."""
    _check_players(rules, players)
    hs = rules.hand_size
    hands: list[tuple[Card, ...]] = [()] * players
    pos = 0
    for i in range(players):
        hands[(dealer + 1 + i) % players] = tuple(order[pos : pos + hs])
        pos += hs
    mortos: list[tuple[Card, ...]] = []
    if rules.morto:
        for _ in range(rules.sides(players)):
            mortos.append(tuple(order[pos : pos + rules.morto_size]))
            pos += rules.morto_size
    upcard: Card | None = None
    if rules.initial_upcard:
        upcard = order[pos]
        pos += 1
    return HandStarted(
        hand=hand,
        dealer=dealer,
        hands=tuple(hands),
        mortos=tuple(mortos),
        stock=tuple(order[pos:]),
        upcard=upcard,
        shuffle=shuffle_id,
        seed=seed,
        seq=seq,
    )


def deal(
    rules: Rules,
    players: int,
    hand: int,
    dealer: int,
    key: bytes,
    *,
    seq: int,
    seed: str | None = None,
) -> HandStarted:
    """Build the deck for ``rules``, shuffle it with ``key`` and deal hand ``hand``.

    The rules are checked first (:func:`buraco_log.rules.check`): nothing is sized from a
    value out of its bounds. A seat count the rules do not allow is a ``RulesError``; a
    dealer seat, hand or seq no deal can have is a :class:`DealError`."""
    need_rules(rules)
    n = _whole(players)
    if n is not None and n not in rules.player_counts:
        check_rules(rules, n)  # the rules' own words for a seat count they do not allow
    players, hand, dealer, seq = _deal_arguments(players, hand, dealer, seq)
    check_rules(rules, players)
    order = shuffle(deck(rules.jokers), key)  # the material by construction
    return _split(rules, players, hand, dealer, order, seq=seq, seed=seed)


def deal_seeded(
    rules: Rules, players: int, hand: int, dealer: int, seed: str, *, seq: int
) -> HandStarted:
    """A deal from a plain, uncommitted seed, recorded in ``HandStarted.seed``."""
    _seed_bytes(seed, "seed")  # named as the plain seed it is, not "the server seed"
    return deal(rules, players, hand, dealer, hand_key(seed, (), hand), seq=seq, seed=seed)


class FairDealer:
    """The dealer's side of the fairness protocol for one match.

    Publish :attr:`commitment` (and the player seeds) in ``MatchStarted`` before any deal,
    deal each hand with :meth:`deal`, and reveal :attr:`server_seed` in ``MatchEnded``.
    """

    __slots__ = ("commitment", "player_seeds", "server_seed")

    def __init__(self, server_seed: str | None = None, player_seeds: Sequence[str] = ()) -> None:
        self.server_seed = server_seed if server_seed is not None else new_server_seed()
        if self.server_seed == "":  # its commitment is sha256 of nothing: every deal known
            raise DealError("an empty server seed is no secret: its commitment is the "
                            "SHA-256 of no bytes, so anyone can derive every deal")
        self.player_seeds = _player_seeds(player_seeds)
        self.commitment = commitment_of(self.server_seed)

    def deal(self, rules: Rules, players: int, hand: int, dealer: int, *, seq: int) -> HandStarted:
        return deal(
            rules,
            players,
            hand,
            dealer,
            hand_key(self.server_seed, self.player_seeds, hand),
            seq=seq,
        )


# --- audit -------------------------------------------------------------------------------------


class Finding(msgspec.Struct, frozen=True):
    """One thing an audit found wrong: a stable rule id, where (seq), and a one-line message."""

    rule: str
    seq: int | None
    message: str


def _same_deal(recorded: HandStarted, derived: HandStarted) -> str | None:
    """Why two deals differ, or None. Hands and mortos have no order; the stock has."""
    if recorded.dealer != derived.dealer:
        return f"dealer is seat {recorded.dealer}, the rotation gives seat {derived.dealer}"
    if len(recorded.hands) != len(derived.hands):
        return f"{len(recorded.hands)} hands dealt, expected {len(derived.hands)}"
    # Equal tuples first: a deal recorded as dealt keeps the derived order, so most hands
    # and mortos need no sort.
    for seat, (a, b) in enumerate(zip(recorded.hands, derived.hands, strict=True)):
        if a != b and sorted(a) != sorted(b):
            return f"hand of seat {seat} differs from the derived deal"
    if len(recorded.mortos) != len(derived.mortos):
        return f"{len(recorded.mortos)} mortos dealt, expected {len(derived.mortos)}"
    for side, (a, b) in enumerate(zip(recorded.mortos, derived.mortos, strict=True)):
        if a != b and sorted(a) != sorted(b):
            return f"morto of side {side} differs from the derived deal"
    if recorded.upcard != derived.upcard:
        return "upcard differs from the derived deal"
    if recorded.stock != derived.stock:
        for i, (x, y) in enumerate(zip(recorded.stock, derived.stock, strict=False)):
            if x != y:
                return f"stock differs from the derived deal at position {i} from the top"
        return f"stock has {len(recorded.stock)} cards, expected {len(derived.stock)}"
    return None


DEAL_EVENTS = frozenset((MatchStarted, HandStarted, MatchEnded))
"""The only event types the deal check reads (exact types: the event classes are final)."""


def check_deals(events: Sequence[AnyEvent], *, require_commitment: bool = True) -> list[Finding]:
    """Audit the deals of one match against the fairness protocol.

    Checks that the commitment was published before the first deal (in stream order and, where
    both carry one, by wall-clock ``at``), that the revealed server seed matches it, and that
    every deal is exactly the one derived from the seeds. Deals with a plain ``seed`` are checked
    against that seed instead. With ``require_commitment=False`` a match with neither commitment
    nor plain seeds has nothing to check and gives no finding.

    Once a match commits, every deal must derive from the committed seeds: a deal carrying a
    plain seed in a committed match is ``deal.not_committed`` whatever ``require_commitment``
    says (a dealer could try plain seeds until one rigs a hand, and record just that hand so).

    Rule ids: ``deal.commitment_missing``, ``deal.commitment_late``, ``deal.not_revealed``,
    ``deal.seed_mismatch``, ``deal.not_committed``, ``deal.unknown_shuffle``,
    ``deal.mismatch``.
    """
    findings: list[Finding] = []
    start: MatchStarted | None = None
    first_deal: HandStarted | None = None
    deals: list[HandStarted] = []
    end: MatchEnded | None = None
    # Only three event types matter here; picking them out by exact type first is one cheap
    # test per event (the event classes are final).
    for ev in [e for e in events if type(e) in DEAL_EVENTS]:
        tp = type(ev)
        if tp is HandStarted:
            if first_deal is None:
                first_deal = ev  # type: ignore[assignment]
            deals.append(ev)  # type: ignore[arg-type]
        elif tp is MatchStarted:
            assert isinstance(ev, MatchStarted)
            if first_deal is not None and start is None and ev.commitment is not None:
                findings.append(
                    Finding(
                        "deal.commitment_late",
                        ev.seq,
                        f"match start (with the commitment) recorded after the deal at seq "
                        f"{first_deal.seq}",
                    )
                )
            if start is None:
                start = ev
        elif tp is MatchEnded and end is None:  # the first, as audit.provenance reads it
            end = ev  # type: ignore[assignment]
    if not deals:
        return findings
    if start is None:
        return [
            *findings,
            Finding(
                "deal.commitment_missing",
                deals[0].seq,
                "no match start: nothing to check the deals against",
            ),
        ]
    players = len(start.players)
    rules = start.rules

    committed = [d for d in deals if d.seed is None]
    server_seed: str | None = None
    if start.commitment is None:
        if committed and len(committed) < len(deals):
            # Other deals carry plain seeds: one that does not is backed by nothing, and is a
            # finding whatever require_commitment says (a dealer could rig just that hand).
            findings.extend(
                Finding(
                    "deal.commitment_missing",
                    d.seq,
                    f"hand {d.hand} has no plain seed, unlike the match's other deals, and the "
                    "match published no commitment",
                )
                for d in committed
            )
        elif committed and require_commitment:
            findings.append(
                Finding(
                    "deal.commitment_missing",
                    committed[0].seq,
                    "deal has no plain seed and the match published no commitment",
                )
            )
    else:
        if first_deal is not None and start.seq > first_deal.seq:
            findings.append(
                Finding(
                    "deal.commitment_late",
                    start.seq,
                    f"commitment has seq {start.seq}, after the first deal at seq {first_deal.seq}",
                )
            )
        elif (early := _dealt_before(start, deals)) is not None:
            findings.append(
                Finding(
                    "deal.commitment_late",
                    start.seq,
                    f"commitment stamped at {_stamp(start.at)}, after the deal at seq "
                    f"{early.seq} (stamped at {_stamp(early.at)}); the stream puts the "
                    "commitment first, so either it was written after that deal or the "
                    "writer's clock went back between them",
                )
            )
        if end is None or end.server_seed is None:
            findings.append(
                Finding(
                    "deal.not_revealed",
                    end.seq if end is not None else None,
                    "the server seed behind the commitment was never revealed"
                    if end is not None else "the log ends without MatchEnded: the server seed "
                    "behind the commitment is not revealed, so no deal can be checked",
                )
            )
        elif not _is_digest(start.commitment):
            findings.append(
                Finding(
                    "deal.seed_mismatch",
                    start.seq,
                    f"the published commitment ({_short_text(start.commitment)}) is not a "
                    "SHA-256 digest (64 hex digits): no revealed seed can match it",
                )
            )
        elif commitment_of(end.server_seed) != start.commitment.lower():
            findings.append(
                Finding(
                    "deal.seed_mismatch",
                    end.seq,
                    "revealed server seed does not hash to the published commitment"
                    + _recased(end.server_seed, start.commitment.lower()),
                )
            )
        else:
            server_seed = end.server_seed

    try:  # validate the rules before anything is sized from them (a deck of 10**9 jokers)
        check_rules(rules, players)
    except RulesError as exc:
        findings.append(Finding("deal.mismatch", start.seq,
                                f"cannot derive the deals: the rules are impossible: {exc}"))
        return findings

    material: list[Card] | None = None  # the deck in its fixed order, built once
    committed_key = hand_keys(server_seed, start.player_seeds) if server_seed is not None else None
    for k, d in enumerate(deals):
        if d.seed is not None and start.commitment is not None:
            findings.append(
                Finding(
                    "deal.not_committed",
                    d.seq,
                    f"hand {k} was dealt from a plain seed the dealer chose, but the match "
                    "committed: every deal must derive from the committed seed",
                )
            )
            continue
        if d.shuffle is not None and d.shuffle not in SHUFFLES:
            findings.append(
                Finding(
                    "deal.unknown_shuffle",
                    d.seq,
                    f"shuffle {d.shuffle!r} is not known to this buraco_log",
                )
            )
            continue
        if d.hand != k:
            findings.append(
                Finding(
                    "deal.mismatch", d.seq, f"deal is numbered hand {d.hand}, but it is hand {k}"
                )
            )
            continue
        dealer = (start.first_dealer + k) % players
        if d.seed is not None:
            key = hand_key(d.seed, (), k)
        elif committed_key is not None:
            key = committed_key(k)
        else:
            continue
        try:  # the rules were checked above: shuffle and deal without checking them again
            if material is None:
                material = deck(rules.jokers)
            derived = _split(rules, players, k, dealer, shuffle(material, key), seq=d.seq)
        except RulesError as exc:
            findings.append(Finding("deal.mismatch", d.seq, f"cannot derive the deal: {exc}"))
            continue
        why = _same_deal(d, derived)
        if why is not None:
            findings.append(Finding("deal.mismatch", d.seq, f"hand {k}: {why}"))
    return findings


def _stamp(at: int | None) -> str:
    """An event's ``at`` (milliseconds since the epoch) as UTC a referee can read, with the
    number the log holds."""
    if at is None:
        return "no time"
    from datetime import UTC, datetime  # only for this rare message (cold start)

    try:
        when = datetime.fromtimestamp(at / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):  # a stamp no calendar holds
        return str(at)
    return f"{when.strftime('%Y-%m-%d %H:%M:%S.%f')[:-3]} UTC ({at})"


def _dealt_before(start: MatchStarted, deals: Sequence[HandStarted]) -> HandStarted | None:
    """The first deal stamped (``at``) before the commitment, if any: any deal will do, the
    first one may carry no time."""
    if start.at is None:
        return None
    return next((d for d in deals if d.at is not None and d.at < start.at), None)


def _recased(seed: str, commitment: str) -> str:
    """A hint when the seed in another letter case is the committed one: the commitment and
    the deal keys hash the seed's exact bytes, so a re-cased reveal proves nothing (a site
    that upper-cases hex on output would otherwise look like a cheat, unexplained)."""
    for other in (seed.lower(), seed.upper()):
        if other != seed and commitment_of(other) == commitment:
            return (f" (its {'lower' if other == seed.lower() else 'upper'}-case form does: "
                    "the seed was re-cased after it was committed, and the deals derive from "
                    "its exact text)")
    return ""


_HEX = frozenset("0123456789abcdefABCDEF")


def _is_digest(commitment: str) -> bool:
    """A commitment as published: SHA-256 in hex, either case (it is compared lower-cased)."""
    return len(commitment) == 64 and _HEX.issuperset(commitment)


def _short_text(text: str) -> str:
    """A field from the log, quoted and cut, for a one-line finding."""
    return f"{len(text)} characters, {text[:16]!r}" + ("..." if len(text) > 16 else "")
