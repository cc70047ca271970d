"""Reading melds: sets, runs, the one wild card, and canastra classes (RULES.md §5–6).

A meld on the table is just the multiset of its cards; its reading (kind, where the wild
stands, canastra class) is recomputed from the cards whenever they change. That is what makes
wilds "move to an end" and a dirty run "turn clean" without any stored positions.

Run positions: 2..13 are the ranks, and an ace stands at 1 (low) or 14 (high). A run occupies
one interval of positions, so K-A-2 can never be read (it would wrap).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice
from typing import Any, Literal

from buraco_log.cards import ACE, JOKER, RANK, SUIT, Card, format_cards
from buraco_log.errors import BuracoLogError
from buraco_log.rules import Rules

Kind = Literal["set", "run"]
CanastraClass = Literal["clean", "semi_clean", "dirty", "royal", "ace_to_ace"]
CANASTRA_CLASSES: tuple[CanastraClass, ...] = (
    "clean",
    "semi_clean",
    "dirty",
    "royal",
    "ace_to_ace",
)


# The words a refusal uses, as the material is drawn (RULES.md §1: Burako's tiles are numbers
# in colours, tile 1 the ace; "only the rendering differs"): a Burako refusal speaks of tiles.
_WORDS: dict[str, dict[str, str]] = {
    "cards": {"cards": "cards", "rank": "rank", "suit": "suit", "ace": "ace", "aces": "aces",
              "wrap": "around the ace (K-A-2)"},
    "tiles": {"cards": "tiles", "rank": "number", "suit": "colour", "ace": "1", "aces": "1s",
              "wrap": "from 13 back to 1 (13-1-2)"},
}


def meld_words(rules: Rules) -> dict[str, str]:
    """The words of a meld refusal under ``rules``: cards, rank, suit, ace (or tiles, number,
    colour, 1 for Burako's tiles). Do not mutate."""
    return _WORDS["tiles" if rules.rendering == "tiles" else "cards"]


class MeldError(BuracoLogError):
    """Cards that do not form a meld. ``rule`` is a stable rule id.

    The message is rendered only when asked for: legal-move search and pile checks try many
    candidate melds and throw most errors away.
    """

    code = "meld"

    def __init__(self, rule: str, cards: Sequence[Card], detail: str) -> None:
        super().__init__(rule)
        self.rule = rule
        self.cards = tuple(cards)
        self.detail = detail

    def __str__(self) -> str:
        if not self.cards:  # a meld of no cards: nothing to show before the reason
            return self.detail
        return f"{_show(self.cards)}: {self.detail}"


class Reading:
    """How a valid meld reads. Immutable by convention (slots, no setters used)."""

    __slots__ = ("canastra", "gap", "hi", "kind", "lo", "rank", "size", "suit", "wild")

    def __init__(
        self,
        kind: Kind,
        size: int,
        *,
        suit: int = -1,
        rank: int = 0,
        lo: int = 0,
        hi: int = 0,
        wild: Card | None = None,
        gap: int | None = None,
        canastra: CanastraClass | None = None,
    ) -> None:
        self.kind: Kind = kind
        self.size = size
        self.suit = suit  # run suit, -1 for sets
        self.rank = rank  # set rank, 0 for runs
        self.lo = lo  # run: lowest position of a natural card (ace low = 1, high = 14)
        self.hi = hi
        self.wild = wild  # the wild card, if any
        self.gap = gap  # run: the position the wild fills, None when it extends an end
        self.canastra = canastra

    def __repr__(self) -> str:
        return (
            f"Reading({self.kind}, size={self.size}, suit={self.suit}, rank={self.rank}, "
            f"lo={self.lo}, hi={self.hi}, wild={self.wild}, gap={self.gap}, "
            f"canastra={self.canastra})"
        )


def read_meld(cards: Sequence[Card], rules: Rules) -> Reading:
    """Read ``cards`` as a meld under ``rules`` or raise :class:`MeldError` naming the rule."""
    got = _read(cards, rules)
    if isinstance(got, MeldError):
        raise got
    return got


# The reader below returns its refusal instead of raising it: the memo stores refusals, pile
# checks probe many melds that fail, and a raise through compiled frames costs more than the
# whole reading. Rank sets are bit masks (bit r for rank r; in runs an ace low is bit 1 and an
# ace high bit 14). tests/reference_melds.py keeps the first, plain version; the property tests
# hold the two to the same readings and the same refusals.


def _read(cards: Sequence[Card], rules: Rules) -> Reading | MeldError:
    n = len(cards)
    no_jokers = rules.jokers == 0
    n_nat = 0
    first_nat = -1
    ranks = 0  # ranks of the naturals, as a bit mask
    suits = 0  # suits of the naturals, as a bit mask
    twos: list[Card] = []
    jokers = 0
    rank_of = RANK  # locals: a module global is a dict look-up on every use, compiled too
    suit_of = SUIT
    # A code that is no card of the preset is what is wrong, before the count: the reducer
    # refuses such an event as event.invalid whatever else is wrong with it, and a reading of
    # a joker where the material has none ("7h 7s JK read as a set") contradicted it.
    for c in cards:
        if c == JOKER:
            if no_jokers:
                unit = "tile" if rules.rendering == "tiles" else "card"
                return MeldError("meld.not_a_card", (), f"#{c} is no {unit} of the "
                                 f"{rules.name} preset (it has no jokers)")
            jokers += 1
            continue
        rank = rank_of[c] if 0 <= c < JOKER else 0
        if rank == 2:
            twos.append(c)
        elif rank:
            n_nat += 1
            if first_nat < 0:
                first_nat = c
            ranks |= 1 << rank
            suits |= 1 << suit_of[c]
        else:
            return MeldError("meld.not_a_card", (), f"{c!r} is not a card code")
    if n < 3:
        return MeldError("meld.too_few_cards", cards,
                         f"a meld needs at least 3 {meld_words(rules)['cards']}")
    if not n_nat:
        # No natural card but 2s: a set of 2s (RULES.md §5), its 2s standing for 2s, so not
        # wild (§1: a 2 is wild "when it stands in for another card"); a joker beside them is
        # its one wild, and only a second one breaks the one-wild rule, named first (§5 order).
        if jokers < 2 and len(twos) >= 2:
            return MeldError("meld.set_of_twos", cards, ("2s alone" if not jokers else
                             "2s and a wild") + " make no meld (no set of 2s): "
                             f"it needs two natural {meld_words(rules)['cards']}")
        return MeldError("meld.too_many_wilds", cards,
                         f"needs at least two natural {meld_words(rules)['cards']}")
    if n_nat >= 2 and ranks & (ranks - 1) == 0:  # one rank
        return _read_set(cards, n, first_nat, twos, jokers, rules)
    if suits & (suits - 1) == 0:  # one suit (or none: 2s only)
        suit = suit_of[first_nat] if n_nat else suit_of[twos[0]]
        return _read_run(cards, suit, twos, jokers, rules)
    # Two suits means two naturals at least, so one rank was a set above.
    w = meld_words(rules)
    return MeldError(
        "meld.not_a_meld",
        cards,
        f"neither a set (one {w['rank']}) nor a run (one {w['suit']}, consecutive)",
    )


def _read_set(
    cards: Sequence[Card], n: int, natural: Card, twos: list[Card], jokers: int, rules: Rules
) -> Reading | MeldError:
    n_wild = len(twos) + jokers
    if n_wild > 1:
        return _too_many_wilds(cards, n_wild, rules)
    # Three cards or more with at most one wild: at least two naturals, as every meld needs.
    canastra: CanastraClass | None = None
    if n >= rules.canastra_size and rules.canastra_from_sets:
        canastra = "dirty" if n_wild else "clean"
    wild: Card | None = None
    if twos:
        wild = twos[0]
    elif jokers:
        wild = JOKER
    return Reading("set", n, rank=RANK[natural], wild=wild, canastra=canastra)


def _read_run(
    cards: Sequence[Card], suit: int, twos: list[Card], jokers: int, rules: Rules
) -> Reading | MeldError:
    fixed = 0  # the naturals' ranks other than the ace, as a bit mask
    n_fixed = 0
    aces = 0
    dup = False
    rank_of = RANK
    for c in cards:
        r = rank_of[c] if c != JOKER else 0
        if r == ACE:
            aces += 1
        elif r > 2:
            if fixed >> r & 1:
                dup = True
            fixed |= 1 << r
            n_fixed += 1
    # Canonical reading: a same-suit 2 is natural whenever the meld is valid read that way.
    first_error: MeldError | None = None
    own = -1  # where the first 2 of the run's suit is in ``twos``
    for i in range(len(twos)):
        if SUIT[twos[i]] == suit:
            own = i
            break
    if own >= 0:
        n_wild = jokers + len(twos) - 1
        if n_wild > 1:
            first_error = _too_many_wilds(cards, n_wild, rules)
        else:
            wild: Card | None = JOKER if jokers else None
            if len(twos) == 2:
                wild = twos[1 - own]
            got = _layout(cards, suit, fixed | 4, n_fixed + 1, aces, dup, wild, rules)
            if not isinstance(got, MeldError):
                return got
            first_error = got
    n_wild = jokers + len(twos)
    if n_wild > 1:
        # The 2 of the suit read as natural left a gap (5-6-7 2s 2h): read as a wild it makes
        # two, and two wilds is what is wrong. A wrap (K-JK-2) stays the wrap.
        if first_error is None or first_error.rule == "meld.run_not_consecutive":
            return _too_many_wilds(cards, n_wild, rules)
        return first_error
    wild = JOKER if jokers else twos[0] if twos else None
    got = _layout(cards, suit, fixed, n_fixed, aces, dup, wild, rules)
    if not isinstance(got, MeldError):
        return got
    return first_error or got


def _layout(
    cards: Sequence[Card],
    suit: int,
    fixed: int,
    n_fixed: int,
    aces: int,
    dup: bool,
    wild: Card | None,
    rules: Rules,
) -> Reading | MeldError:
    """Lay the naturals out as a run: ``fixed`` their non-ace ranks (a bit mask), ``aces``
    how many aces, ``dup`` whether a non-ace rank came twice."""
    if dup:
        return MeldError("meld.duplicate_in_run", cards,
                         f"a run holds each {meld_words(rules)['rank']} once")
    options: tuple[int, ...]
    if aces == 0:
        options = (fixed,)
    elif aces == 1:
        options = (fixed | 2, fixed | 1 << 14)
    elif aces == 2 and rules.ace_both_ends:
        options = (fixed | 2 | 1 << 14,)
    else:
        # With both ends allowed a third ace is the fault: "one ace" was wrong there.
        w = meld_words(rules)
        return MeldError(
            "meld.duplicate_in_run",
            cards,
            f"a run holds at most two {w['aces']}, one at each end" if rules.ace_both_ends
            else f"a run holds one {w['ace']} (low or high, never both)",
        )
    count = n_fixed + aces
    max_run = rules.max_run()
    # A dirty reading with the ace low is kept aside while the ace high is tried: the run
    # A..6-W-8..K also holds 8..K-A, seven naturals in a row, so it is semi-clean (RULES.md §6;
    # the cards are the meld, not where the ace was written).
    dirty: Reading | None = None
    for pos in options:
        lo = (pos & -pos).bit_length() - 1
        hi = pos.bit_length() - 1
        span = hi - lo + 1
        missing = span - count
        if missing == 0:
            size = span + (1 if wild is not None else 0)
            if size > max_run:
                continue
            got = _run(suit, size, lo, hi, wild, None, count, rules)
        elif missing == 1 and wild is not None:
            holes = ~pos & ((1 << hi) - (1 << lo))  # the positions lo .. hi - 1 not filled
            gap = (holes & -holes).bit_length() - 1
            got = _run(suit, span, lo, hi, wild, gap, max(gap - lo, hi - gap), rules)
        else:
            continue
        if dirty is not None and got.canastra != "semi_clean":
            return dirty
        if got.canastra == "dirty" and rules.semi_clean and len(options) > 1 and dirty is None:
            dirty = got
            continue
        return got
    if dirty is not None:
        return dirty
    w = meld_words(rules)  # words only once refused: a run's reading is replay's hot path
    if len(cards) > max_run:
        return MeldError("meld.run_too_long", cards,
                         f"a run has at most {max_run} {w['cards']}")
    if (aces == 1 or (aces == 0 and wild is not None)) and _wraps(fixed, count):
        return MeldError("meld.run_wraps", cards, f"a run never wraps {w['wrap']}")
    return MeldError(
        "meld.run_not_consecutive",
        cards,
        "not consecutive" + (" even with the wild filling one gap" if wild is not None else ""),
    )


def _wraps(fixed: int, count: int) -> bool:
    """Would the ranks ``fixed`` and the ace be (nearly) a run only by turning the corner,
    K-A-2? For the message only. On the 13-hour clock of ranks, the best run starts after the
    widest empty stretch; it is (nearly) whole when that stretch leaves at most one hole.
    ``count`` is the cards laid out: with a natural ace among them one hole may stay (K-A-3);
    with no ace, the wild stands for it and none may (K-JK-2). It wraps only when the ace lies
    inside that run: at its start (A-3-4) or its end (J-K-A) the hole is a plain gap."""
    clock = fixed >> 1 | 1  # rank r at hour r - 1, the ace at 0
    hours = [h for h in range(13) if clock >> h & 1]
    n = len(hours)
    stretches = [((hours[(i + 1) % n] - hours[i]) % 13 or 13, hours[(i + 1) % n])
                 for i in range(n)]
    widest = max(w for w, _ in stretches)
    if widest < 13 - count:
        return False
    # Every best run (two when two stretches tie) must hold the ace inside.
    return all(start != 0 and (start - w) % 13 != 0 for w, start in stretches if w == widest)


def _run(
    suit: int,
    size: int,
    lo: int,
    hi: int,
    wild: Card | None,
    gap: int | None,
    longest_natural_stretch: int,
    rules: Rules,
) -> Reading:
    canastra: CanastraClass | None = None
    if size >= rules.canastra_size:
        if wild is None:
            canastra = "clean"
            if rules.royal_canastras and lo == 1 and hi == 14:
                canastra = "ace_to_ace"
            elif rules.royal_canastras and lo == 1 and hi == 13:
                canastra = "royal"
        elif rules.semi_clean and longest_natural_stretch >= rules.canastra_size:
            canastra = "semi_clean"
        else:
            canastra = "dirty"
    return Reading("run", size, suit=suit, lo=lo, hi=hi, wild=wild, gap=gap, canastra=canastra)


def _drop_older_half(memo: dict[Any, Any]) -> None:
    """Make room in a full memo by dropping the entries made first (a dict keeps insertion
    order), not all of them: the recent half stays, so fewer melds are read again after a
    drop (a small gain; see the README's archive figures)."""
    for key in list(islice(memo, len(memo) // 2 or 1)):
        del memo[key]


class MeldCache:
    """Readings of melds under one rules value (refusals too), keyed by the sorted cards;
    melds recorded in a log also by their cards in the order given.

    Replay reads the whole meld again on every lay-off; the same card multisets come back
    often across a match and an archive, so a bounded memo saves most of that work.
    """

    __slots__ = ("_grown", "_memo", "limit", "rules")

    def __init__(self, rules: Rules, limit: int = 200_000) -> None:
        self.rules = rules
        self.limit = limit
        self._memo: dict[tuple[Card, ...], Reading | MeldError] = {}
        # (reading of a meld, cards added) -> reading of the grown meld. A reading object
        # stands for exactly one multiset of cards (the memo makes one per sorted key), so
        # this answers a lay-off without sorting and hashing the whole meld again.
        self._grown: dict[tuple[Reading, tuple[Card, ...]], Reading | MeldError] = {}

    def _lookup(self, cards: Sequence[Card], remember_order: bool = False) -> Reading | MeldError:
        # With remember_order (melds recorded in a log), the cards as given first: the same
        # meld tends to come back in the same order, which spares the sort. Either key maps to
        # the one reading of the multiset. Probes (pile checks) keep to the sorted key, so as
        # not to fill the memo with orders that never come back.
        raw = cards if type(cards) is tuple else tuple(cards)
        hit = self._memo.get(raw) if remember_order else None
        if hit is None:
            key = tuple(sorted(raw))
            hit = self._memo.get(key)
            if hit is None:
                hit = _read(raw, self.rules)  # refusals are remembered too: probes make many
                if len(self._memo) >= self.limit:
                    _drop_older_half(self._memo)
                self._memo[key] = hit
            if remember_order:
                self._memo[raw] = hit
        return hit

    def extended(self, reading: Reading, add: tuple[Card, ...], cards: Sequence[Card]) -> Reading:
        """The reading of ``cards``: the meld read as ``reading`` with ``add`` laid off on it.

        Equal to ``read(cards)``; faster when the same lay-off was seen before.
        """
        key = (reading, add)
        hit = self._grown.get(key)
        if hit is None:
            hit = self._lookup(cards)  # its own key is (reading, add): no need of the order
            if len(self._grown) >= self.limit:
                _drop_older_half(self._grown)
            self._grown[key] = hit
        if isinstance(hit, MeldError):
            raise MeldError(hit.rule, cards, hit.detail)
        return hit

    def extends(self, reading: Reading, add: tuple[Card, ...], cards: tuple[Card, ...]) -> bool:
        """Whether the meld ``cards``, read as ``reading``, takes ``add`` (never raises)."""
        if len(add) == 1:
            # Most probes end here. A natural card joins a set only with its rank and a run
            # only with its suit. A set holds two naturals of one rank, so another rank makes
            # neither a set nor a run. A run holds two naturals of different ranks, or one
            # natural beside two wilds; a natural of another suit makes no run, and no set
            # either (two ranks, or two wilds where a set allows one).
            c = add[0]
            rank = RANK[c] if c != JOKER else 2
            if rank != 2:
                if reading.kind == "set":
                    if rank != reading.rank:
                        return False
                elif SUIT[c] != reading.suit:
                    return False
        key = (reading, add)
        hit = self._grown.get(key)
        if hit is None:
            hit = self._lookup(cards + add)
            if len(self._grown) >= self.limit:
                _drop_older_half(self._grown)
            self._grown[key] = hit
        return not isinstance(hit, MeldError)

    def read(self, cards: Sequence[Card]) -> Reading:
        hit = self._lookup(cards, True)
        if isinstance(hit, MeldError):
            raise MeldError(hit.rule, cards, hit.detail)
        return hit

    def fits(self, cards: Sequence[Card]) -> bool:
        """Whether ``cards`` form a meld, without raising (probes refuse far more than not)."""
        return not isinstance(self._lookup(cards), MeldError)


# Keyed by the rules value, not the object: every decoded log brings its own equal copy, and
# an archive replays thousands of them under a handful of rules values.
_CACHES: dict[Rules, MeldCache] = {}


def cache_for(rules: Rules) -> MeldCache:
    """The shared :class:`MeldCache` of a rules value."""
    cache = _CACHES.get(rules)
    if cache is None:
        if len(_CACHES) > 64:
            _CACHES.clear()
        cache = _CACHES[rules] = MeldCache(rules)
    return cache


def is_meld(cards: Sequence[Card], rules: Rules) -> bool:
    return not isinstance(_read(cards, rules), MeldError)


def canastra_bonus(cls: CanastraClass | None, rules: Rules) -> int:
    if cls is None:
        return 0
    return int(getattr(rules.bonuses, cls))


def _too_many_wilds(cards: Sequence[Card], n_wild: int, rules: Rules) -> MeldError:
    return MeldError("meld.too_many_wilds", cards,
                     f"{n_wild} wild {meld_words(rules)['cards']}; at most one")


def _show(cards: Sequence[Card]) -> str:
    try:
        return format_cards(cards)
    except BuracoLogError:
        return repr(tuple(cards))
