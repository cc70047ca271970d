"""Probe 41, the meld reader against a reading of RULES.md §5–6 written afresh for this probe
(not tests/reference_melds.py, the reader's first version, which could share its mistakes).

The oracle tries every reading the spec allows and nothing else: a set is one rank (never 2)
with two naturals or more and at most one wild; a run is one suit laid out on one interval of
positions (2..13, the ace at 1 or 14, both only with `ace_both_ends` and then 1..14), at most
`max_run` long, its naturals on distinct positions and the one wild, if any, on the one left;
a 2 of the run's suit is natural whenever some reading holds it so (RULES.md §5, "canonical
reading"). Class by §6: clean (royal / ace-to-ace in `burako`), semi-clean when some reading
has `canastra_size` naturals in a row (`burraco`), else dirty; a 7+ set only with
`canastra_from_sets`. Random melds near runs and sets, every preset: the engine must accept
exactly what the oracle reads, with the same kind and class.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from buraco_log.cards import ALL_CODES, JOKER, RANK, SUIT, format_cards
from buraco_log.melds import MeldError, read_meld
from buraco_log.rules import PRESETS, Rules

Outcome = tuple[str, str | None] | None


def _set(n: int, n_wild: int, r: Rules) -> Outcome:
    if n_wild > 1:
        return None
    canastra = n >= r.canastra_size and r.canastra_from_sets
    return ("set", ("dirty" if n_wild else "clean") if canastra else None)


def _layouts(ranks: list[int], n: int, n_wild: int, r: Rules) -> list[list[int]]:
    """Every interval of positions the naturals ``ranks`` and ``n_wild`` wilds can fill."""
    aces = ranks.count(1)
    others = [x for x in ranks if x != 1]
    if len(set(others)) != len(others) or n > r.max_run():
        return []
    places = {0: [others], 1: [[*others, 1], [*others, 14]]}.get(aces)
    if places is None:
        places = [[*others, 1, 14]] if aces == 2 and r.ace_both_ends else []
    found = []
    for pos in places:
        for lo in range(1, 16 - n):
            hi = lo + n - 1
            if min(pos) < lo or max(pos) > hi or hi - lo + 1 - len(pos) != n_wild:
                continue
            if lo == 1 and hi == 14 and not r.ace_both_ends:
                continue
            found.append(sorted(pos))
    return found


def _longest_stretch(pos: list[int]) -> int:
    best = run = 0
    for x in range(1, 15):
        run = run + 1 if x in pos else 0
        best = max(best, run)
    return best


def oracle(cards: tuple[int, ...], r: Rules) -> Outcome:
    n = len(cards)
    nat = [c for c in cards if c != JOKER and RANK[c] != 2]
    twos = [c for c in cards if c != JOKER and RANK[c] == 2]
    jokers = cards.count(JOKER)
    if n < 3:
        return None
    if len(nat) >= 2 and len({RANK[c] for c in nat}) == 1:
        return _set(n, len(twos) + jokers, r)
    suits = {SUIT[c] for c in nat} or {SUIT[c] for c in twos[:1]}
    if len(suits) != 1:
        return None
    suit = suits.pop()
    own = any(SUIT[c] == suit for c in twos)
    for natural_twos in ((1, 0) if own else (0,)):  # the 2 natural first (canonical)
        ranks = [RANK[c] for c in nat] + [2] * natural_twos
        n_wild = jokers + len(twos) - natural_twos
        layouts = _layouts(ranks, n, n_wild, r) if n_wild <= 1 and len(ranks) >= 2 else []
        if not layouts:
            continue
        if n < r.canastra_size:
            return ("run", None)
        if n_wild == 0:
            full = set(range(1, 14)) <= set(ranks) or set(range(2, 15)) <= {
                14 if x == 1 else x for x in ranks}
            if r.royal_canastras and ranks.count(1) == 2:
                return ("run", "ace_to_ace")
            return ("run", "royal" if r.royal_canastras and full else "clean")
        stretch = max(_longest_stretch(p) for p in layouts)
        return ("run", "semi_clean" if r.semi_clean and stretch >= r.canastra_size else "dirty")
    return None


def engine(cards: tuple[int, ...], r: Rules) -> Outcome:
    try:
        reading = read_meld(cards, r)
    except MeldError:
        return None
    return (reading.kind, reading.canastra)


def _random_meld(rng: random.Random) -> tuple[int, ...]:
    suit = rng.randrange(4)
    if rng.random() < 0.7:  # a stretch of one suit, maybe holed, maybe with wilds or strays
        n, lo = rng.randint(3, 15), rng.randint(1, 13)
        cards = [suit * 16 + (lo - 1 + i) % 13 + 1 for i in range(n)]
        for _ in range(rng.randint(0, 2)):
            cards.pop(rng.randrange(len(cards)))
        extras = [JOKER, suit * 16 + 2, (suit + 1) % 4 * 16 + 2, suit * 16 + 1]
    else:  # a set, maybe with wilds
        rank = rng.choice([1, *range(3, 14)])
        cards = [rng.randrange(4) * 16 + rank for _ in range(rng.randint(2, 8))]
        extras = [JOKER, rng.randrange(4) * 16 + 2]
    for _ in range(rng.randint(0, 2)):
        cards.append(rng.choice([*extras, rng.choice(ALL_CODES)]))
    return tuple(cards)


@pytest.mark.parametrize("name", list(PRESETS))
def test_the_reader_reads_what_the_spec_reads(name: str) -> None:
    r = PRESETS[name]
    rng = random.Random(f"probe41-{name}")
    seen: Counter[Outcome] = Counter()
    for _ in range(6000):
        cards = _random_meld(rng)
        counts = Counter(cards)
        if counts[JOKER] > r.jokers or any(k > 2 for c, k in counts.items() if c != JOKER):
            continue  # not in the material
        want = oracle(cards, r)
        assert engine(cards, r) == want, (format_cards(cards), want)
        seen[want] += 1
    # the draw reaches every class the preset has
    classes = {o[1] for o in seen if o is not None}
    expected = {None, "clean", "dirty"} | ({"semi_clean"} if r.semi_clean else set()) | (
        {"royal", "ace_to_ace"} if r.royal_canastras else set())
    assert expected <= classes, classes
    assert seen[None] > 100
