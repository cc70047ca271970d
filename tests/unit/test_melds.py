"""Meld reading (RULES.md §5–6): each test reads like the rule it checks."""

from __future__ import annotations

import pytest

from buraco_log.cards import JOKER, parse_cards
from buraco_log.melds import MeldError, read_meld
from buraco_log.rules import PRESETS, derive, preset

# The readings below hold jokers: classic with the family's two (RULES.md §11), as classic
# itself has none and reads no meld with a joker (meld.not_a_card).
CLASSIC = derive("classic", jokers=2)
BURRACO = preset("burraco")
BURAKO = preset("burako")
MEGA = preset("mega")


def read(text: str, rules=CLASSIC):  # type: ignore[no-untyped-def]
    return read_meld(parse_cards(text), rules)


def refused(text: str, rule: str, rules=CLASSIC) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(MeldError) as info:
        read(text, rules)
    assert info.value.rule == rule, str(info.value)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_a_2_3_reads_the_2_as_natural_so_the_run_is_clean(name: str) -> None:
    m = read("As 2s 3s 4s 5s 6s 7s", PRESETS[name])
    assert (m.kind, m.wild, m.lo, m.hi) == ("run", None, 1, 7)
    assert m.canastra == "clean"


def test_q_k_a_is_a_run_with_the_ace_high() -> None:
    m = read("Qs Ks As")
    assert (m.lo, m.hi, m.wild) == (12, 14, None)


def test_k_a_3_is_refused_because_a_run_never_wraps() -> None:
    refused("Ks As 3s", "meld.run_wraps")
    refused("Ks As 2s 3s", "meld.run_wraps")


def test_k_wild_2_is_refused_as_a_wrap_the_wild_standing_for_the_ace() -> None:
    # with the 2 natural the wild would be the ace between K and 2; with the 2 wild too there
    # would be two wilds: no reading holds, and the one that comes closest wraps
    refused("Ks JK 2s", "meld.run_wraps")
    refused("Ks 2h 2s", "meld.run_wraps")
    refused("Qs Ks JK 2s 3s", "meld.run_wraps")
    refused("Ks JK 3s", "meld.run_not_consecutive")  # K-A-2-3 needs two fillers
    # J-K with the 2 natural is no run at all (a gap, and the corner); with the 2 wild it is
    # J-Q-K-A holding two wilds: the wilds are what is wrong (docs/rules.md, probe 32)
    refused("Js Ks JK 2s", "meld.too_many_wilds")


def test_k_a_2_is_legal_only_as_q_k_a_with_the_2_as_the_wild() -> None:
    m = read("Ks As 2s")
    assert (m.lo, m.hi, m.wild, m.gap) == (13, 14, parse_cards("2s")[0], None)


def test_two_wilds_in_one_meld_are_refused() -> None:
    refused("7s 7h JK JK", "meld.too_many_wilds")
    refused("5s 6s 2h 2d", "meld.too_many_wilds")


def test_a_joker_plus_an_off_suit_2_is_refused() -> None:
    refused("3s 4s JK 2h", "meld.too_many_wilds")


def test_a_joker_plus_a_same_suit_2_in_its_own_place_is_one_wild() -> None:
    m = read("2s 3s JK 5s")
    assert m.wild == JOKER and m.gap == 4


def test_a_dirty_run_turns_clean_when_the_card_its_2_stood_for_arrives() -> None:
    dirty = read("2s 4s 5s")
    assert dirty.wild == parse_cards("2s")[0]
    clean = read("2s 4s 5s 3s")
    assert clean.wild is None and (clean.lo, clean.hi) == (2, 5)


def test_a_wild_in_the_gap_moves_to_an_end_when_the_gap_is_filled() -> None:
    before = read("3s 4s JK 6s 7s")
    assert before.gap == 5
    after = read("3s 4s JK 6s 7s 5s")
    assert after.gap is None and after.size == 6


def test_a_wild_cannot_move_to_an_end_of_a_full_ace_to_king_run() -> None:
    refused("As 2h 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks 2s", "meld.run_too_long")


@pytest.mark.parametrize("run", ["As 2h 3s 4s 5s 6s 7s 8s 9s", "3s 4s 5s 6s 7s 8s 9s JK"])
def test_a_wild_beside_seven_consecutive_naturals_is_semi_clean_in_burraco(run: str) -> None:
    assert read(run, BURRACO).canastra == "semi_clean"


def test_a_wild_that_leaves_no_seven_naturals_in_a_row_is_dirty() -> None:
    assert read("3s 4s 5s 6s JK 8s 9s Ts", BURRACO).canastra == "dirty"


def test_semi_clean_exists_only_in_burraco() -> None:
    assert read("As 2h 3s 4s 5s 6s 7s 8s 9s", CLASSIC).canastra == "dirty"


def test_semi_clean_applies_to_runs_only() -> None:
    assert read("7s 7h 7d 7c 7s 7h 7d JK", BURRACO).canastra == "dirty"


def test_six_cards_are_not_a_canastra() -> None:
    assert read("3s 4s 5s 6s 7s 8s").canastra is None


def test_royal_and_ace_to_ace_canastras_in_burako() -> None:
    assert read("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks", BURAKO).canastra == "royal"
    assert read("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks As", BURAKO).canastra == "ace_to_ace"
    # The same thirteen cards whichever end the ace is written at.
    assert read("2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks As", BURAKO).canastra == "royal"
    # Twelve naturals and a wild are not royal.
    assert read("2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks JK", BURAKO).canastra == "dirty"
    assert read("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks", CLASSIC).canastra == "clean"


def test_both_aces_in_one_run_only_in_burako() -> None:
    refused("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks As", "meld.duplicate_in_run")
    refused("As As 3s", "meld.duplicate_in_run")
    refused("Qs Ks As As 2s 3s", "meld.run_not_consecutive", BURAKO)  # A..A needs all 14


def test_a_set_holds_one_rank_and_at_most_one_wild() -> None:
    m = read("7s 7h 2c")
    assert (m.kind, m.rank, m.wild) == ("set", 7, parse_cards("2c")[0])
    assert read("7s 7h 7d 7c 7s 7h 7d 7c JK").size == 9  # eight naturals and one wild


def test_a_set_of_2s_is_refused() -> None:
    refused("2s 2h 2d", "meld.set_of_twos")
    with pytest.raises(MeldError, match=r"2s alone make no meld \(no set of 2s\)"):
        read("2s 2h 2d 2c", CLASSIC)
    # A joker among them is the set's one wild (its 2s stand for 2s, RULES.md §1): still a
    # set of 2s; a second joker breaks the one-wild rule, named first (§5 order).
    with pytest.raises(MeldError, match=r"2s and a wild make no meld \(no set of 2s\)") as info:
        read("2s 2h JK", CLASSIC)
    assert info.value.rule == "meld.set_of_twos"
    refused("2s 2h JK JK", "meld.too_many_wilds")
    refused("2s JK JK", "meld.too_many_wilds")


def test_a_set_needs_two_naturals() -> None:
    refused("7s JK 2h", "meld.too_many_wilds")


def test_a_meld_needs_three_cards() -> None:
    refused("7s 7h", "meld.too_few_cards")


def test_a_run_holds_one_suit_and_no_repeated_rank() -> None:
    refused("3s 4h 5s", "meld.not_a_meld")
    refused("3s 4s 4s 5s", "meld.duplicate_in_run")


def test_a_run_gap_needs_the_wild() -> None:
    refused("3s 5s 6s", "meld.run_not_consecutive")
    refused("3s JK 6s", "meld.run_not_consecutive")


def test_seven_card_sets_are_canastras_except_in_mega() -> None:
    assert read("9s 9h 9d 9c 9s 9h 9d").canastra == "clean"
    assert read("9s 9h 9d 9c 9s 9h 9d", MEGA).canastra is None
    assert read("3s 4s 5s 6s 7s 8s 9s", MEGA).canastra == "clean"


def test_a_dirty_canastra() -> None:
    assert read("9s 9h 9d 9c 9s 9h JK").canastra == "dirty"
    assert read("3s 4s 5s JK 7s 8s 9s").canastra == "dirty"


def test_a_code_that_is_no_card_is_refused() -> None:
    with pytest.raises(MeldError) as info:
        read_meld((99, parse_cards("3s")[0], parse_cards("4s")[0]), CLASSIC)
    assert info.value.rule == "meld.not_a_card"


def test_a_full_memo_drops_its_older_half_and_still_reads_right() -> None:
    """A full memo makes room by dropping the entries made first, not all of them, so a long
    ingest keeps the melds it saw lately; every answer stays the reader's own."""
    from buraco_log.cards import make
    from buraco_log.melds import MeldCache

    rules = preset("classic")
    cache = MeldCache(rules, limit=8)
    melds = [(make(r, 0), make(r, 1), make(r, 2)) for r in range(3, 13)]  # ten sets
    melds += [(make(r, 3), make(r + 1, 3), make(r + 2, 3)) for r in range(3, 11)]  # eight runs
    for cards in melds:
        assert repr(cache.read(cards)) == repr(read_meld(cards, rules))
        assert 0 < len(cache._memo) <= 8
    assert all(m in cache._memo for m in melds[-4:])  # the newest half stays
    assert melds[0] not in cache._memo  # the oldest went
    for cards in melds:  # read again after the drops: the same readings (no __eq__: by repr)
        assert repr(cache.read(cards)) == repr(read_meld(cards, rules))
    for bad in [(make(3, 0), make(9, 1), make(12, 2))] * 3:  # refusals are remembered too
        with pytest.raises(MeldError):
            cache.read(bad)
    assert len(cache._memo) <= 8


def test_a_meld_of_no_cards_gives_its_reason_alone() -> None:
    with pytest.raises(MeldError) as info:
        read_meld((), CLASSIC)
    assert info.value.rule == "meld.too_few_cards"
    assert str(info.value) == "a meld needs at least 3 cards"  # no ': ' before it


def test_a_refused_meld_still_shows_its_cards_first() -> None:
    with pytest.raises(MeldError) as info:
        read("7s 7h")
    assert str(info.value) == "7s 7h: a meld needs at least 3 cards"
