"""Every meld a hand can lay, and every set of cards a meld on the table can take.

Complete, not heuristic: ``legal_moves`` lists what these return, and the pile check of
``must_use_top`` asks them whether the top card can be used together with cards of the hand.
Candidates are generated from the shape every valid meld has, then put through the meld reader,
so a candidate the shape lets through but the reader refuses is never returned:

- a set is two or more naturals of one rank (any of the hand's copies) and at most one wild;
- a run is the naturals of one suit on an interval of positions (ace 1 or 14, a same-suit 2 at
  2), with at most one position inside it left for the wild, or none and the wild at an end.

Results are sorted tuples of card codes, each multiset once. Core module: stdlib only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from buraco_log.cards import ACE, JOKER, RANK, SUIT, Card
from buraco_log.melds import MeldCache, Reading
from buraco_log.rules import Rules


def _counts(cards: Iterable[Card]) -> dict[Card, int]:
    out: dict[Card, int] = {}
    for c in cards:
        out[c] = out.get(c, 0) + 1
    return out


def _is_wild(c: Card) -> bool:
    return c == JOKER or RANK[c] == 2


def _sub_multisets(codes: list[Card], counts: dict[Card, int]) -> list[tuple[Card, ...]]:
    """Every sub-multiset of ``codes`` (each up to its count), the empty one included."""
    out: list[tuple[Card, ...]] = [()]
    for c in codes:
        out = [(*prefix, *([c] * k)) for prefix in out for k in range(counts[c] + 1)]
    return out


def _position_card(suit: int, pos: int) -> Card:
    """The natural card of ``suit`` standing at run position ``pos`` (1 and 14: the ace)."""
    rank = ACE if pos in (1, 14) else pos
    return suit * 16 + rank


def _run_shapes(
    suit: int, avail: int, max_run: int, needed: int = 0
) -> Iterable[tuple[tuple[Card, ...], bool]]:
    """(naturals, needs a wild) for every interval of run positions whose naturals are all in
    ``avail`` (a bit mask of positions), with at most one position inside left for the wild
    (held or not); without one the wild is optional (it extends an end). With ``needed``,
    only intervals whose naturals hold one of those positions."""
    for a in range(1, 15):
        if not avail >> a & 1:
            continue
        missing = 0
        for b in range(a + 1, min(14, a + max_run - 1) + 1):
            if not avail >> b & 1:
                if missing:
                    break
                missing = b
                continue
            span = (1 << (b + 1)) - (1 << a)
            for hole in (missing,) if missing else (0, *range(a + 1, b)):
                naturals_mask = span & ~(1 << hole) if hole else span
                if needed and not naturals_mask & needed:
                    continue
                yield tuple(_position_card(suit, p) for p in range(a, b + 1) if p != hole), bool(
                    hole
                )


def _positions(cards: Iterable[Card], suit: int) -> int:
    """The run positions of ``suit`` that ``cards`` can fill, as a bit mask (an ace both 1 and
    14, a 2 of the suit its own place)."""
    mask = 0
    for c in cards:
        if c != JOKER and SUIT[c] == suit:
            rank = RANK[c]
            mask |= (1 << 1 | 1 << 14) if rank == ACE else 1 << rank
    return mask


def _fits(have: dict[Card, int], need: Sequence[Card]) -> bool:
    used: dict[Card, int] = {}
    for c in need:
        k = used.get(c, 0) + 1
        if k > have.get(c, 0):
            return False
        used[c] = k
    return True


def meld_options(
    hand: Sequence[Card], rules: Rules, cache: MeldCache, must: Card | None = None
) -> list[tuple[Card, ...]]:
    """Every multiset of cards of ``hand`` that reads as a meld, sorted, each once; with
    ``must``, only those holding that card."""
    have = _counts(hand)
    wilds = sorted(c for c in have if _is_wild(c))
    found: set[tuple[Card, ...]] = set()
    natural_must = must is not None and not _is_wild(must)

    def add(cards: tuple[Card, ...]) -> None:
        key = tuple(sorted(cards))
        if key not in found and (must is None or must in key) and cache.fits(key):
            found.add(key)

    by_rank: dict[int, list[Card]] = {}
    for c in have:
        if not _is_wild(c) and not (natural_must and must is not None and RANK[c] != RANK[must]):
            by_rank.setdefault(RANK[c], []).append(c)
    for codes in by_rank.values():
        codes.sort()
        for combo in _sub_multisets(codes, have):
            if len(combo) >= 3:
                add(combo)
            if len(combo) >= 2:
                for w in wilds:
                    add((*combo, w))
    # A run holds a natural other than a 2 (two naturals, and one 2 at most in its place).
    suits = {SUIT[c] for c in have if not _is_wild(c)}
    if natural_must and must is not None:
        suits &= {SUIT[must]}
    for suit in sorted(suits):
        avail = _positions(have, suit)
        needed = _positions((must,), suit) if natural_must and must is not None else 0
        for naturals, needs_wild in _run_shapes(suit, avail, rules.max_run(), needed):
            if not _fits(have, naturals):
                continue
            if not needs_wild and len(naturals) >= 3:
                add(naturals)
            for w in wilds:
                if _fits(have, (*naturals, w)):
                    add((*naturals, w))
    return sorted(found)


def layoff_options(
    meld: Sequence[Card],
    reading: Reading,
    hand: Sequence[Card],
    cache: MeldCache,
    must: Card | None = None,
) -> list[tuple[Card, ...]]:
    """Every non-empty multiset of cards of ``hand`` that the meld ``meld`` (read as
    ``reading``) takes, sorted, each once; with ``must``, only those holding that card."""
    have = _counts(hand)
    wilds = [c for c in sorted(have) if _is_wild(c)]
    found: set[tuple[Card, ...]] = set()
    base = tuple(meld)

    def add(cards: tuple[Card, ...]) -> None:
        key = tuple(sorted(cards))
        if key and key not in found and (must is None or must in key) and cache.fits(
            base + key
        ):
            found.add(key)

    if reading.kind == "set":
        codes = sorted(c for c in have if not _is_wild(c) and RANK[c] == reading.rank)
        for combo in _sub_multisets(codes, have):
            add(combo)
            for w in wilds:
                add((*combo, w))
        return sorted(found)
    in_meld = _counts(base)
    meld_wilds = [c for c in in_meld if _is_wild(c)]
    choices: list[tuple[Card, ...]] = [(), *((w,) for w in sorted(set(wilds) | set(meld_wilds)))]
    avail = _positions((*base, *have), reading.suit)
    needed = _positions((must,), reading.suit) if must is not None and not _is_wild(must) else 0
    for naturals, needs_wild in _run_shapes(reading.suit, avail, cache.rules.max_run(), needed):
        for wild in choices:
            if needs_wild and not wild:
                continue
            result = _counts((*naturals, *wild))
            if any(result.get(c, 0) < k for c, k in in_meld.items()):
                continue  # every card of the meld stays in it
            add_cards: list[Card] = []
            for c, k in result.items():
                add_cards.extend([c] * (k - in_meld.get(c, 0)))
            if _fits(have, add_cards):
                add(tuple(add_cards))
    return sorted(found)
