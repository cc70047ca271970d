"""The fast meld reader gives the same reading, or the same refusal, as the plain reference
reader (tests/reference_melds.py) for every preset: exhaustively over small melds, and over
Hypothesis melds of every length, drawn to hit runs, sets, wilds and near misses."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from buraco_log.cards import ALL_CODES, JOKER, NATURALS
from buraco_log.melds import MeldCache, MeldError, Reading, is_meld, read_meld
from buraco_log.rules import PRESETS, Rules
from tests import reference_melds

PRESET_NAMES = list(PRESETS)
VARIANTS: list[Rules] = [PRESETS[n] for n in PRESET_NAMES]


def knobs(r: Rules) -> tuple[object, ...]:
    """The rules knobs the reader reads."""
    return (r.canastra_size, r.canastra_from_sets, r.ace_both_ends, r.semi_clean,
            r.royal_canastras)


# One preset for each combination of the reader's knobs that the presets have.
DISTINCT = list({knobs(PRESETS[n]): n for n in reversed(PRESET_NAMES)}.values())


def outcome(read: object, cards: Sequence[int], rules: Rules) -> tuple[object, ...]:
    try:
        r = read(cards, rules)  # type: ignore[operator]
    except MeldError as exc:
        return ("refused", exc.rule, exc.cards, exc.detail, str(exc))
    assert isinstance(r, Reading)
    return ("read", r.kind, r.size, r.suit, r.rank, r.lo, r.hi, r.wild, r.gap, r.canastra)


def same(cards: Sequence[int], rules: Rules) -> None:
    want = outcome(reference_melds.read_meld, cards, rules)
    assert outcome(read_meld, cards, rules) == want, cards
    assert is_meld(cards, rules) == (want[0] == "read")
    cache = MeldCache(rules)  # the memo's non-raising path answers the same (its refusals
    # name the cards asked about, so only the rule and the detail are compared)
    got = outcome(lambda c, _r: cache.read(c), cards, rules)
    assert got[:2] + got[3:4] == want[:2] + want[3:4] if want[0] == "refused" else got == want


@pytest.mark.parametrize("name", DISTINCT)
def test_every_three_card_meld_reads_as_the_reference(name: str) -> None:
    rules = PRESETS[name]
    n = 0
    for cards in itertools.combinations_with_replacement(ALL_CODES, 3):
        for order in {cards, (cards[1], cards[2], cards[0])}:
            same(order, rules)
            n += 1
    assert n > 20_000


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_every_run_window_of_one_suit_with_a_wild_reads_as_the_reference(name: str) -> None:
    """Every stretch of ranks in one suit, with one card left out (at either end or anywhere
    inside) or doubled, a 2 or a joker added: the gaps, both ace ends, the wrap and the length
    limit."""
    rules = PRESETS[name]
    for suit in (0, 3):
        ranks = [suit * 16 + r for r in range(1, 14)]
        for lo in range(13):
            for hi in range(lo + 2, 15):
                window = [ranks[i % 13] for i in range(lo, hi)]
                for extra in ((), (JOKER,), (suit * 16 + 2,), ((suit + 1) % 4 * 16 + 2,),
                              (JOKER, JOKER)):
                    same((*window, *extra), rules)
                    same((*window[1:], *extra), rules)
                    if len(window) > 3:
                        for gap in range(1, len(window) - 1):  # a hole anywhere inside
                            same((*window[:gap], *window[gap + 1:], *extra), rules)
                        same((*window, window[2], *extra), rules)


def naturals_of(suit: int) -> list[int]:
    return [c for c in NATURALS if c >> 4 == suit]


@st.composite
def melds(draw: st.DrawFn) -> tuple[int, ...]:
    """Mostly one-suit or one-rank cards, so that valid melds and near misses are common."""
    shape = draw(st.sampled_from(["suit", "rank", "any"]))
    if shape == "suit":
        pool = naturals_of(draw(st.integers(0, 3)))
    elif shape == "rank":
        rank = draw(st.integers(1, 13))
        pool = [s * 16 + rank for s in range(4)]
    else:
        pool = list(ALL_CODES)
    cards = draw(st.lists(st.sampled_from(pool), min_size=0, max_size=15))
    wilds = draw(st.lists(st.sampled_from([JOKER, 2, 18, 34, 50]), max_size=3))
    junk = draw(st.lists(st.sampled_from([0, 14, 15, 65, -1]), max_size=1))
    out = cards + wilds + junk
    return tuple(draw(st.permutations(out)))


# 300 drawn melds by default (the exhaustive tests above cover the small ones); the slow twin
# draws 5,000.
@settings(max_examples=300, deadline=None)
@given(cards=melds(), rules=st.sampled_from(VARIANTS))
def test_any_meld_reads_as_the_reference(cards: tuple[int, ...], rules: Rules) -> None:
    same(cards, rules)


@pytest.mark.slow
@settings(max_examples=5000, deadline=None)
@given(cards=melds(), rules=st.sampled_from(VARIANTS))
def test_many_melds_read_as_the_reference(cards: tuple[int, ...], rules: Rules) -> None:
    same(cards, rules)
