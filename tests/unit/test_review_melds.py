"""Review of RULES.md §1 (material, wild cards), §5 (melds) and §6 (canastras and their
classes), for every preset: the meld reader on its own, and the same rules as the reducer
applies them on the table (lay-offs that change a meld's reading, per-side limits, and the
canastra bonuses in the hand score)."""

from __future__ import annotations

from collections import Counter

import pytest

from buraco_log.cards import JOKER, deck, parse_cards
from buraco_log.melds import MeldError, Reading, read_meld
from buraco_log.rules import PRESETS, Rules, derive, preset
from buraco_log.state import SideScore
from tests.scenario import Scenario

ALL = ["classic", "biriba", "bossa-nova", "thirteen", "burraco", "mega", "burako"]
WITH_JOKERS = [n for n in ALL if PRESETS[n].jokers]
NOT_BURAKO = [n for n in ALL if n != "burako"]
NOT_BURRACO = [n for n in ALL if n != "burraco"]
NOT_MEGA = [n for n in ALL if n != "mega"]


def card(text: str) -> int:
    return parse_cards(text)[0]


def read(text: str, name: str) -> Reading:
    return read_meld(parse_cards(text), PRESETS[name])


def refused(text: str, name: str) -> str:
    with pytest.raises(MeldError) as info:
        read(text, name)
    return info.value.rule


def meld_of(s: Scenario, side: int, i: int) -> tuple[str, str | None]:
    m = s.state.melds[side][i]
    return m.kind, m.canastra


def score(s: Scenario, side: int) -> SideScore:
    """The side's hand score if the hand ended now (the reducer's own scoring)."""
    return s.rep._t.score()[side]


# ------------------------------------------------------------------ §1 material, wild cards


@pytest.mark.parametrize(
    ("name", "jokers"),
    [("classic", 0), ("biriba", 0), ("bossa-nova", 0), ("thirteen", 4), ("burraco", 4),
     ("mega", 4), ("burako", 2)],
)
def test_each_preset_plays_two_decks_plus_its_jokers(name: str, jokers: int) -> None:
    r = PRESETS[name]
    assert r.jokers == jokers
    assert r.deck_size() == 104 + jokers
    counts = Counter(deck(r.jokers))
    assert counts[JOKER] == jokers and len(counts) == 53 if jokers else len(counts) == 52


def test_burako_is_106_tiles_and_reads_tiles_as_the_same_cards() -> None:
    r = preset("burako")
    assert r.deck_size() == 106 and r.rendering == "tiles"
    # tile 1 = ace, 11/12/13 = J/Q/K, colour = suit; the tatu is the joker
    assert parse_cards("12k 13k 1k tatu") == parse_cards("Qs Ks As JK")
    m = read_meld(parse_cards("12k 13k 1k"), r)
    assert (m.kind, m.lo, m.hi, m.wild) == ("run", 12, 14, None)


@pytest.mark.parametrize("name", ALL)
def test_the_two_copies_of_a_card_are_interchangeable_in_a_set(name: str) -> None:
    m = read("7s 7s 7h", name)
    assert (m.kind, m.rank, m.wild, m.size) == ("set", 7, None, 3)


@pytest.mark.parametrize("name", ALL)
def test_a_2_of_another_suit_in_a_run_is_wild(name: str) -> None:
    m = read("2h 3s 4s", name)
    assert (m.kind, m.suit, m.wild) == ("run", 3, card("2h"))
    assert (m.lo, m.hi) == (3, 4)


@pytest.mark.parametrize("name", ALL)
def test_a_2_of_the_runs_suit_in_its_own_place_is_natural(name: str) -> None:
    m = read("2s 3s 4s", name)
    assert (m.wild, m.lo, m.hi, m.size) == (None, 2, 4, 3)


@pytest.mark.parametrize("name", ALL)
def test_a_2_in_a_set_is_always_wild(name: str) -> None:
    m = read("9s 9h 2h", name)
    assert (m.kind, m.rank, m.wild) == ("set", 9, card("2h"))


@pytest.mark.parametrize("name", WITH_JOKERS)
def test_a_joker_is_always_wild(name: str) -> None:
    assert read("9s 9h JK", name).wild == JOKER
    m = read("3s JK 5s", name)
    assert (m.wild, m.gap) == (JOKER, 4)


def test_a_joker_is_not_part_of_the_classic_material() -> None:
    with pytest.raises(ValueError, match="more copies"):
        Scenario("classic", hands={0: "7s 7h JK"})
    # ... but a "family" house rule adds two
    s = Scenario("classic", hands={0: "7s 7h JK"}, jokers=2).draw().meld("7s 7h JK")
    assert meld_of(s, 0, 0) == ("set", None)


# ------------------------------------------------------------------ §5 at most one wild


@pytest.mark.parametrize("name", WITH_JOKERS)
@pytest.mark.parametrize(
    "text",
    ["7s 7h JK JK", "7s 7h 2c JK", "7s 7h 2c 2d", "5s 6s JK 2h", "5s 6s 7s 2h 2d"],
)
def test_a_meld_holds_at_most_one_wild_in_every_preset(name: str, text: str) -> None:
    assert refused(text, name) == "meld.too_many_wilds"


@pytest.mark.parametrize("name", WITH_JOKERS)
def test_a_same_suit_2_out_of_its_place_beside_a_joker_is_refused(name: str) -> None:
    # 2s cannot be natural (nothing at 3, 4), so it is a second wild beside the joker.
    # (The reader reports why the natural reading failed: not consecutive.)
    for text in ("5s 6s 2s JK 8s", "5s 6s 7s JK 2s"):
        assert refused(text, name) in ("meld.too_many_wilds", "meld.run_not_consecutive")
    # ... while in its own place it is natural and the joker is the one wild
    m = read("2s 3s 4s JK 6s", name)
    assert (m.wild, m.gap, m.lo, m.hi) == (JOKER, 5, 2, 6)


@pytest.mark.parametrize("name", ALL)
def test_two_2s_in_a_set_are_two_wilds(name: str) -> None:
    assert refused("Ks Kh 2c 2d", name) == "meld.too_many_wilds"


@pytest.mark.parametrize("name", ALL)
def test_a_run_of_its_own_2_plus_an_off_suit_2_has_one_wild(name: str) -> None:
    # 2s is natural in its place, 2h is the one wild
    m = read("2s 3s 4s 2h", name)
    assert (m.wild, m.lo, m.hi, m.size) == (card("2h"), 2, 4, 4)


@pytest.mark.parametrize("name", ALL)
def test_the_second_copy_of_a_runs_own_2_is_the_wild(name: str) -> None:
    m = read("2s 2s 4s", name)
    assert (m.wild, m.gap, m.lo, m.hi) == (card("2s"), 3, 2, 4)


@pytest.mark.parametrize("name", WITH_JOKERS)
def test_a_wild_on_the_table_refuses_a_second_wild_laid_off(name: str) -> None:
    s = Scenario(name, hands={0: "9s 9h JK 2c 9d 5c 6d"}).draw().meld("9s 9h JK")
    with s.illegal("meld.too_many_wilds"):
        s.layoff(0, "2c")
    s.layoff(0, "9d")
    assert len(s.state.melds[0][0].cards) == 4


# ------------------------------------------------------------------ §5 no set of 2s


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("text", ["2s 2h 2d", "2s 2h 2d 2c", "2s 2h 2d 2c 2s 2h 2d"])
def test_no_set_of_2s_in_any_preset(name: str, text: str) -> None:
    assert refused(text, name) == "meld.set_of_twos"


@pytest.mark.parametrize("name", ALL)
def test_a_set_of_2s_of_one_suit_is_refused(name: str) -> None:
    # Named for what it is (not "two wilds": one 2s would be natural, which cannot help).
    assert refused("2s 2s 2s", name) == "meld.set_of_twos"
    assert refused("2s 2s 2s 2s", name) == "meld.set_of_twos"
    if PRESETS[name].jokers:  # the joker is its one wild: still a set of 2s (RULES.md §1)
        assert refused("2s 2s JK", name) == "meld.set_of_twos"
        assert refused("2s 2s JK JK", name) == "meld.too_many_wilds"


def test_a_set_of_2s_is_refused_on_the_table() -> None:
    s = Scenario("biriba", hands={0: "2s 2h 2d 5c 6d"}).draw()
    with s.illegal("meld.set_of_twos"):
        s.meld("2s 2h 2d")


# ------------------------------------------------------------------ §5 ace, wrap, run length


@pytest.mark.parametrize("name", ALL)
def test_k_a_2_is_q_k_a_with_the_2_as_wild_in_every_preset(name: str) -> None:
    m = read("Ks As 2s", name)
    assert (m.lo, m.hi, m.wild, m.gap, m.size) == (13, 14, card("2s"), None, 3)
    # the same with the 2 written first
    m = read("2s Ks As", name)
    assert (m.lo, m.hi, m.wild) == (13, 14, card("2s"))


@pytest.mark.parametrize("name", ALL)
def test_a_run_never_wraps_in_any_preset(name: str) -> None:
    assert refused("Ks As 3s", name) == "meld.run_wraps"
    assert refused("Qs Ks As 2s 3s", name) == "meld.run_wraps"


@pytest.mark.parametrize("name", ALL)
def test_a_long_run_ending_in_ace_2_reads_the_2_as_the_wild_below(name: str) -> None:
    m = read("Ts Js Qs Ks As 2s", name)
    assert (m.lo, m.hi, m.wild, m.gap, m.size) == (10, 14, card("2s"), None, 6)


@pytest.mark.parametrize("name", ALL)
def test_ace_low_and_ace_high_runs(name: str) -> None:
    low = read("As 2s 3s", name)
    assert (low.lo, low.hi, low.wild) == (1, 3, None)
    high = read("Qs Ks As", name)
    assert (high.lo, high.hi, high.wild) == (12, 14, None)


@pytest.mark.parametrize("name", NOT_BURAKO)
def test_both_aces_in_one_run_only_in_burako(name: str) -> None:
    full = "As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks As"
    assert refused(full, name) == "meld.duplicate_in_run"
    assert PRESETS[name].max_run() == 13


def test_burako_runs_ace_to_ace_in_14_cards() -> None:
    assert preset("burako").max_run() == 14
    m = read("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks As", "burako")
    assert (m.size, m.lo, m.hi, m.wild, m.canastra) == (14, 1, 14, None, "ace_to_ace")


@pytest.mark.parametrize("name", ALL)
def test_a_clean_ace_to_king_run_is_13_cards_everywhere(name: str) -> None:
    m = read("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks", name)
    assert (m.size, m.wild) == (13, None)
    assert m.canastra == ("royal" if name == "burako" else "clean")


@pytest.mark.parametrize("name", NOT_BURAKO)
def test_no_wild_past_a_full_ace_to_king_run_outside_burako(name: str) -> None:
    w = "JK" if PRESETS[name].jokers else "2h"
    assert refused(f"As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks {w}", name) == "meld.run_too_long"
    # 2..A with the wild below the 2 is 14 cards too
    assert refused(f"2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks As {w}", name) == "meld.run_too_long"


def test_burako_takes_a_wild_as_the_second_ace_of_an_ace_to_king_run() -> None:
    m = read("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks JK", "burako")
    assert (m.size, m.wild, m.canastra) == (14, JOKER, "dirty")


@pytest.mark.parametrize("name", ALL)
def test_thirteen_cards_with_a_wild_for_the_missing_2(name: str) -> None:
    w = "JK" if PRESETS[name].jokers else "2h"
    m = read(f"As {w} 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks", name)
    # in burraco 3..K unbroken beside the wild is semi-clean
    want = "semi_clean" if name == "burraco" else "dirty"
    assert (m.size, m.gap, m.canastra) == (13, 2, want)


def test_burako_refuses_two_aces_that_are_not_a_full_run() -> None:
    assert refused("As 2s 3s As", "burako") == "meld.run_not_consecutive"
    # a single gap in an ace-to-ace run takes the wild
    m = read("As 2s 3s 4s 5s 6s JK 8s 9s Ts Js Qs Ks As", "burako")
    assert (m.size, m.gap, m.canastra) == (14, 7, "dirty")


# ------------------------------------------------------------------ §5 wild position


@pytest.mark.parametrize("name", WITH_JOKERS)
def test_the_wild_moves_from_the_gap_to_an_end_when_a_natural_fills_it(name: str) -> None:
    s = Scenario(name, hands={0: "3s 4s JK 6s 7s 5s 9d Kc"}).draw().meld("3s 4s JK 6s 7s")
    assert s.rep._t.meld_readings[0][0].gap == 5
    s.layoff(0, "5s")
    r = s.rep._t.meld_readings[0][0]
    assert (r.gap, r.lo, r.hi, r.wild, r.size) == (None, 3, 7, JOKER, 6)


@pytest.mark.parametrize("name", ALL)
def test_a_wild_below_an_ace_high_run_moves_down_when_the_gap_fills(name: str) -> None:
    w = "JK" if PRESETS[name].jokers else "2h"
    before = read(f"Qs {w} As", name)
    assert (before.gap, before.lo, before.hi) == (13, 12, 14)
    after = read(f"Qs {w} As Ks", name)
    assert (after.gap, after.lo, after.hi, after.size) == (None, 12, 14, 4)


@pytest.mark.parametrize("name", ALL)
def test_a_gap_filled_below_a_full_run_leaves_no_room_for_the_wild(name: str) -> None:
    w = "JK" if PRESETS[name].jokers else "2h"
    meld = f"As {w} 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks"
    if name == "burako":
        m = read(meld + " 2s", name)  # the wild becomes the second ace
        assert (m.size, m.gap, m.canastra) == (14, None, "dirty")
    else:
        assert refused(meld + " 2s", name) == "meld.run_too_long"


@pytest.mark.parametrize("name", ALL)
def test_a_run_has_at_most_one_gap(name: str) -> None:
    w = "JK" if PRESETS[name].jokers else "2h"
    assert refused(f"3s {w} 5s 7s", name) == "meld.run_not_consecutive"


# ------------------------------------------------------------------ §5 canonical reading of 2s


@pytest.mark.parametrize("name", ALL)
def test_a_2_that_filled_a_gap_becomes_natural_when_its_card_arrives(name: str) -> None:
    dirty = read("3s 5s 2s", name)
    assert (dirty.wild, dirty.gap) == (card("2s"), 4)
    clean = read("3s 5s 2s 4s", name)
    assert (clean.wild, clean.lo, clean.hi, clean.gap) == (None, 2, 5, None)


@pytest.mark.parametrize("name", ALL)
def test_a_dirty_canastra_turns_clean_on_the_table_when_its_2_finds_its_place(
    name: str,
) -> None:
    s = Scenario(name, hands={0: "2s 3s 5s 6s 7s 8s 9s Ts 4s Kc"}).draw()
    s.meld("2s 3s 5s 6s 7s 8s 9s Ts")  # 2s stands for the 4 (2s-3s would leave a gap at 4)
    assert meld_of(s, 0, 0) == ("run", "dirty")  # burraco too: 5..10 is only six in a row
    assert score(s, 0).canastra_bonus == 100
    s.layoff(0, "4s")
    assert meld_of(s, 0, 0) == ("run", "clean")
    assert score(s, 0).canastra_bonus == 200
    assert s.rep._t.meld_readings[0][0].wild is None


@pytest.mark.parametrize("name", ALL)
def test_a_same_suit_2_with_an_off_suit_2_keeps_its_own_place(name: str) -> None:
    # 2h 2s 3s 4s: 2s is natural, 2h is the wild
    s = Scenario(name, hands={0: "2h 2s 3s 4s 5s 9d Kc"}).draw().meld("2h 2s 3s 4s")
    r = s.rep._t.meld_readings[0][0]
    assert (r.wild, r.lo, r.hi) == (card("2h"), 2, 4)
    s.layoff(0, "5s")
    r = s.rep._t.meld_readings[0][0]
    assert (r.wild, r.lo, r.hi, r.size) == (card("2h"), 2, 5, 5)


# ------------------------------------------------------------------ §5 sets, mega's limit


@pytest.mark.parametrize("name", WITH_JOKERS)
def test_a_set_takes_all_eight_naturals_and_one_wild(name: str) -> None:
    eight = "7s 7h 7d 7c 7s 7h 7d 7c"
    s = Scenario(name, hands={0: eight + " JK 2c Kd"}).draw().meld(eight)
    clean = None if name == "mega" else "clean"
    assert meld_of(s, 0, 0) == ("set", clean)
    s.layoff(0, "JK")  # the canastra changes class: clean becomes dirty
    assert meld_of(s, 0, 0) == ("set", None if name == "mega" else "dirty")
    assert len(s.state.melds[0][0].cards) == 9
    with s.illegal("meld.too_many_wilds"):
        s.layoff(0, "2c")


def test_mega_one_set_per_rank_counts_the_partners_sets() -> None:
    s = Scenario("mega", players=4, hands={0: "7h 7s JK 5c", 2: "7d 7c 2h 9s"})
    s.draw().meld("JK 7h 7s").discard("5c")  # the wild written first
    s.pass_turn()
    s.draw()
    assert s.turn == 2
    with s.illegal("meld.second_set_of_rank"):
        s.meld("7d 7c 2h")
    s.layoff(0, "7d")  # the partner lays off on the side's set instead
    assert s.state.melds[0][0].cards == parse_cards("JK 7h 7s 7d")


def test_mega_one_set_per_rank_does_not_bind_the_opponents() -> None:
    s = Scenario("mega", hands={0: "7h 7s 7d 5c", 1: "7c 7c 7h 9s"})
    s.draw().meld("7h 7s 7d").discard("5c")
    s.draw().meld("7c 7c 7h")
    assert [len(m) for m in s.state.melds] == [1, 1]


def test_mega_a_run_holding_a_rank_does_not_block_a_set_of_it() -> None:
    s = Scenario("mega", hands={0: "6s 7s 8s 7h 7d 7c 5c Kd"}).draw()
    s.meld("6s 7s 8s").meld("7h 7d 7c")
    assert [m.kind for m in s.state.melds[0]] == ["run", "set"]


def test_mega_a_second_set_of_a_rank_is_refused_but_laying_off_on_the_first_is_not() -> None:
    s = Scenario("mega", hands={0: "9h 9s 9d 9c 9h 2c Kd"}).draw().meld("9h 9s 9d")
    with s.illegal("meld.second_set_of_rank"):
        s.meld("9c 9h 2c")
    s.layoff(0, "9c").layoff(0, "9h")
    assert s.state.melds[0][0].cards == parse_cards("9h 9s 9d 9c 9h")


@pytest.mark.parametrize("name", NOT_MEGA)
def test_two_sets_of_a_rank_are_allowed_outside_mega(name: str) -> None:
    s = Scenario(name, hands={0: "9h 9s 9d 9c 9h 9s Kd"}).draw().meld("9h 9s 9d")
    s.meld("9c 9h 9s")
    assert [m.kind for m in s.state.melds[0]] == ["set", "set"]
    assert PRESETS[name].max_sets_per_rank == 0


def test_a_house_rule_can_limit_sets_per_rank() -> None:
    r = derive("classic", max_sets_per_rank=1)
    s = Scenario(r, hands={0: "9h 9s 9d 9c 9h 9s Kd"}).draw().meld("9h 9s 9d")
    with s.illegal("meld.second_set_of_rank"):
        s.meld("9c 9h 9s")


# ------------------------------------------------------------------ §6 canastra classes


@pytest.mark.parametrize("name", ALL)
def test_clean_and_dirty_run_canastras_in_every_preset(name: str) -> None:
    assert read("3s 4s 5s 6s 7s 8s 9s", name).canastra == "clean"
    w = "JK" if PRESETS[name].jokers else "2h"
    assert read(f"3s 4s 5s {w} 7s 8s 9s", name).canastra == "dirty"
    assert read("3s 4s 5s 6s 7s 8s", name).canastra is None
    assert read(f"3s 4s 5s 6s 7s {w}", name).canastra is None


@pytest.mark.parametrize("name", ALL)
def test_set_canastras_count_except_in_mega(name: str) -> None:
    w = "JK" if PRESETS[name].jokers else "2h"
    clean = read("Qs Qh Qd Qc Qs Qh Qd", name).canastra
    dirty = read(f"Qs Qh Qd Qc Qs Qh {w}", name).canastra
    if name == "mega":
        assert (clean, dirty) == (None, None)
        assert PRESETS[name].canastra_from_sets is False
    else:
        assert (clean, dirty) == ("clean", "dirty")


@pytest.mark.parametrize("name", NOT_BURRACO)
def test_semi_clean_is_only_burracos(name: str) -> None:
    w = "JK" if PRESETS[name].jokers else "2h"
    assert read(f"As {w} 3s 4s 5s 6s 7s 8s 9s", name).canastra == "dirty"
    assert read(f"3s 4s 5s 6s 7s 8s 9s {w}", name).canastra == "dirty"


@pytest.mark.parametrize(
    ("run", "cls"),
    [
        ("As JK 3s 4s 5s 6s 7s 8s 9s", "semi_clean"),  # RULES.md: 3..9 unbroken
        ("3s 4s 5s 6s JK 8s 9s Ts", "dirty"),  # RULES.md: no 7 in a row
        ("3s 4s 5s 6s 7s 8s 9s JK Js", "semi_clean"),  # 3..9, the wild at 10
        ("3s 4s 5s 6s 7s 8s JK Ts Js", "dirty"),  # 3..8 and 10..J
        ("As 2h 3s 4s 5s 6s 7s 8s", "dirty"),  # 3..8: six
        ("2s 3s 4s 5s 6s 7s 8s 2h", "semi_clean"),  # natural 2s..8s, 2h at an end
        ("2s 4s 5s 6s 7s 8s 9s Ts", "semi_clean"),  # 2s is the wild: 4..10 unbroken
        ("3s 4s 5s 6s 7s 8s 9s 2s", "clean"),  # 2s is natural in its own place
        ("Ts Js Qs Ks As 9s 8s JK", "semi_clean"),  # ace high: 8..A unbroken
    ],
)
def test_burraco_semi_clean_needs_seven_naturals_in_a_row(run: str, cls: str) -> None:
    assert read(run, "burraco").canastra == cls


def test_burraco_semi_clean_scores_150_on_the_table() -> None:
    s = Scenario("burraco", hands={0: "As JK 3s 4s 5s 6s 7s 8s 9s Kc Qd"}).draw()
    s.meld("As JK 3s 4s 5s 6s 7s 8s 9s")
    assert meld_of(s, 0, 0) == ("run", "semi_clean")
    sc = score(s, 0)
    assert sc.canastras == {"semi_clean": 1} and sc.canastra_bonus == 150
    # jolly 30, ace 15, 3..7 five each, 8 and 9 ten each
    assert sc.table_points == 30 + 15 + 5 * 5 + 10 + 10


def test_burraco_a_dirty_canastra_turns_semi_clean_when_its_gap_fills() -> None:
    s = Scenario("burraco", hands={0: "3s 4s 5s 6s JK 8s 9s Ts 7s Kc"}).draw()
    s.meld("3s 4s 5s 6s JK 8s 9s Ts")
    assert meld_of(s, 0, 0) == ("run", "dirty")
    assert score(s, 0).canastra_bonus == 100
    s.layoff(0, "7s")  # the joker moves to an end: 3..10 unbroken
    assert meld_of(s, 0, 0) == ("run", "semi_clean")
    assert score(s, 0).canastra_bonus == 150


def test_burraco_a_dirty_canastra_turns_semi_clean_as_the_stretch_grows() -> None:
    s = Scenario("burraco", hands={0: "As 2h 3s 4s 5s 6s 7s 8s 9s Kc Qd"}).draw()
    s.meld("As 2h 3s 4s 5s 6s 7s 8s")
    assert meld_of(s, 0, 0) == ("run", "dirty")
    s.layoff(0, "9s")
    assert meld_of(s, 0, 0) == ("run", "semi_clean")


def test_burraco_a_semi_clean_canastra_turns_clean_when_its_2_finds_its_place() -> None:
    s = Scenario("burraco", hands={0: "2s 4s 5s 6s 7s 8s 9s Ts 3s Kc"}).draw()
    s.meld("2s 4s 5s 6s 7s 8s 9s Ts")
    assert meld_of(s, 0, 0) == ("run", "semi_clean")
    s.layoff(0, "3s")
    assert meld_of(s, 0, 0) == ("run", "clean")
    assert score(s, 0).canastra_bonus == 200


def test_burraco_a_set_with_a_wild_is_dirty_however_long() -> None:
    s = Scenario("burraco", hands={0: "8s 8h 8d 8c 8s 8h 8d JK 8c"}).draw()
    s.meld("8s 8h 8d 8c 8s 8h 8d JK")
    assert meld_of(s, 0, 0) == ("set", "dirty")
    s.layoff(0, "8c")
    assert meld_of(s, 0, 0) == ("set", "dirty")


@pytest.mark.parametrize("name", NOT_BURAKO)
def test_royal_and_ace_to_ace_are_only_burakos(name: str) -> None:
    assert read("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks", name).canastra == "clean"
    assert read("2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks As", name).canastra == "clean"


def test_burako_a_clean_run_short_of_a_to_k_is_only_clean() -> None:
    assert read("3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks As", "burako").canastra == "clean"
    assert read("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs", "burako").canastra == "clean"
    assert read("As JK 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks", "burako").canastra == "dirty"


def test_burako_a_clean_run_becomes_royal_then_ace_to_ace() -> None:
    s = Scenario("burako", hands={0: "As 2s 3s 4s 5s 6s 7s 8s 9s 4c 9d", 1: "Ts Js Qs Ks As"})
    s.draw().meld("As 2s 3s 4s 5s 6s 7s 8s 9s").discard("4c")
    assert meld_of(s, 0, 0) == ("run", "clean")
    for c in ("Ts", "Js", "Qs", "Ks"):  # seat 1 discards the spades, seat 0 passes
        s.draw().discard(c)
        if c != "Ks":
            s.pass_turn()
    s.take_pile()  # seat 0 takes the whole pile
    s.layoff(0, "Ts Js Qs")
    assert meld_of(s, 0, 0) == ("run", "clean")
    assert score(s, 0).canastra_bonus == 200
    s.layoff(0, "Ks")
    assert meld_of(s, 0, 0) == ("run", "royal")
    assert score(s, 0).canastras == {"royal": 1}
    assert score(s, 0).canastra_bonus == 500
    s.discard("9d")
    s.draw().discard("As")
    s.take_pile().layoff(0, "As")
    assert meld_of(s, 0, 0) == ("run", "ace_to_ace")
    sc = score(s, 0)
    assert sc.canastras == {"ace_to_ace": 1} and sc.canastra_bonus == 1000
    # aces 15, the 2 ten, 3..7 five each, 8..K ten each
    assert sc.table_points == 2 * 15 + 10 + 5 * 5 + 6 * 10


def test_burako_royal_wherever_the_ace_is_written_on_the_table() -> None:
    s = Scenario("burako", hands={0: "2s 3s 4s 5s 6s 7s 8s 9s Ts Js 4c", 1: "Qs Ks As"})
    s.draw().meld("2s 3s 4s 5s 6s 7s 8s 9s Ts Js").discard("4c")
    for c in ("Qs", "Ks", "As"):
        s.draw().discard(c)
        if c != "As":
            s.pass_turn()
    s.take_pile().layoff(0, "Qs Ks As")  # 2..K with the ace high: all thirteen ranks
    assert meld_of(s, 0, 0) == ("run", "royal")


def _wild(name: str) -> str:
    return "JK" if PRESETS[name].jokers else "2c"


@pytest.mark.parametrize("name", ALL)
def test_a_clean_canastra_scores_its_bonus_in_every_preset(name: str) -> None:
    s = Scenario(name, hands={0: "3s 4s 5s 6s 7s 8s 9s Kc Qd"}).draw()
    s.meld("3s 4s 5s 6s 7s 8s 9s")
    sc = score(s, 0)
    assert sc.canastras == {"clean": 1} and sc.canastra_bonus == 200
    assert sc.table_points == 5 * 5 + 10 + 10


@pytest.mark.parametrize("name", ALL)
def test_a_dirty_canastra_scores_its_bonus_in_every_preset(name: str) -> None:
    w = _wild(name)
    s = Scenario(name, hands={0: f"3s 4s 5s {w} 7s 8s 9s Kc Qd"}).draw()
    s.meld(f"3s 4s 5s {w} 7s 8s 9s")
    sc = score(s, 0)
    assert sc.canastras == {"dirty": 1} and sc.canastra_bonus == 100
    r: Rules = PRESETS[name]
    assert sc.table_points == 4 * 5 + 10 + 10 + r.card_points(card(w))


@pytest.mark.parametrize("name", ALL)
def test_a_seven_card_set_scores_a_canastra_bonus_except_in_mega(name: str) -> None:
    s = Scenario(name, hands={0: "Qs Qh Qd Qc Qs Qh Qd 4c 9d"}).draw()
    s.meld("Qs Qh Qd Qc Qs Qh Qd")
    sc = score(s, 0)
    if name == "mega":
        assert meld_of(s, 0, 0) == ("set", None)
        assert sc.canastras == {} and sc.canastra_bonus == 0
    else:
        assert sc.canastras == {"clean": 1} and sc.canastra_bonus == 200
    assert sc.table_points == 70


def test_classic_hand_score_counts_the_canastra_at_the_end_of_the_hand() -> None:
    s = Scenario("classic", hands={0: "3s 4s 5s 6s 7s 8s 9s Th Tc Td Kc"}, stock="Kd 5h Ts")
    s.draw().meld("3s 4s 5s 6s 7s 8s 9s").meld("Th Tc Td").discard("Kd")
    s.pass_turn()
    s.draw().layoff(1, "Ts").discard("Kc")
    s.go_out().end_hand()
    sc = s.state.results[0].scores[0]
    assert sc.canastras == {"clean": 1} and sc.canastra_bonus == 200
    assert (sc.table_points, sc.going_out, sc.relancinho, sc.hand_penalty) == (85, 50, 0, 0)
    assert sc.total == 85 + 200 + 50


@pytest.mark.parametrize("name", ALL)
def test_a_2_laid_off_in_its_place_completes_a_clean_canastra_and_a_wild_dirties_it(
    name: str,
) -> None:
    s = Scenario(name, hands={0: "3s 4s 5s 6s 7s 8s 2s 2h Kc"}).draw().meld("3s 4s 5s 6s 7s 8s")
    assert meld_of(s, 0, 0) == ("run", None)
    s.layoff(0, "2s")  # natural in its own place: 2..8, seven naturals
    assert meld_of(s, 0, 0) == ("run", "clean")
    s.layoff(0, "2h")  # a wild at an end: 2..8 still unbroken
    assert meld_of(s, 0, 0) == ("run", "semi_clean" if name == "burraco" else "dirty")
    assert score(s, 0).canastra_bonus == (150 if name == "burraco" else 100)


def test_burraco_six_naturals_and_a_wild_are_dirty_until_the_seventh_natural() -> None:
    s = Scenario("burraco", hands={0: "3s 4s 5s 6s 7s 8s JK 9s Kc"}).draw()
    s.meld("3s 4s 5s 6s 7s 8s JK")
    assert meld_of(s, 0, 0) == ("run", "dirty")
    s.layoff(0, "9s")
    assert meld_of(s, 0, 0) == ("run", "semi_clean")


def test_burako_no_wild_beyond_an_ace_to_ace_run() -> None:
    full = "As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks As"
    assert refused(full + " JK", "burako") == "meld.run_too_long"


@pytest.mark.parametrize("name", ALL)
def test_a_seven_card_set_counts_as_the_sides_canastra_except_in_mega(name: str) -> None:
    s = Scenario(name, hands={0: "Qs Qh Qd Qc Qs Qh Qd 4c 9d"}).draw()
    s.meld("Qs Qh Qd Qc Qs Qh Qd")
    assert s.rep._t.has_canastra(0) is (name != "mega")
    r = Scenario(name, hands={0: "3h 4h 5h 6h 7h 8h 9h 4c 9d"}).draw().meld("3h 4h 5h 6h 7h 8h 9h")
    assert r.rep._t.has_canastra(0) is True
