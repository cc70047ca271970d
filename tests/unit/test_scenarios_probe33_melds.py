"""Probe 33, melds and canastras: the 2 of a run's suit growing a canastra, the wild that moves
when a natural 2 arrives, the set canastra with a wild in `burraco`, a canastra of aces.

RULES.md §5: "a 2 is read as natural whenever the meld is valid with it read that way"; the
wild "either fills the single gap or extends an end". RULES.md §6: semi-clean is `burraco`'s,
"one wild, but the run still holds 7+ consecutive naturals", and "applies to runs only"; "a
canastra can change class as cards are added". Every score is worked out by hand from RULES.md
§9's tables.
"""

from __future__ import annotations

import pytest

from buraco_log.cards import parse_cards
from buraco_log.rules import PRESETS
from buraco_log.wilds import wild_place
from tests.scenario import Scenario, refused
from tests.spec_points import spec_points

ALL = sorted(PRESETS)


def _card(text: str) -> int:
    return parse_cards(text)[0]


@pytest.mark.parametrize("name", ALL)
def test_the_runs_own_2_below_a_clean_canastra_keeps_it_clean_its_second_copy_is_the_wild(
    name: str,
) -> None:
    s = Scenario(name, hands={0: "3h 4h 5h 6h 7h 8h 9h 2h 2h 2c"}, stock="Kd")
    s.draw("Kd").meld("3h 4h 5h 6h 7h 8h 9h")
    assert s.state.melds[0][0].canastra == "clean"
    s.layoff(0, "2h")  # 2-3-..-9: the 2♥ stands in its own place, no wild
    m = s.state.melds[0][0]
    assert (len(m.cards), m.canastra) == (8, "clean")
    assert wild_place(m.cards, s.rules) is None
    # The second 2♥ cannot stand as the 2 again: it is the wild, the ace or the 10. The run
    # 2..9 keeps eight naturals in a row, so burraco calls it semi-clean, the rest dirty.
    s.layoff(0, "2h")
    m = s.state.melds[0][0]
    assert m.canastra == ("semi_clean" if name == "burraco" else "dirty")
    place = wild_place(m.cards, s.rules)
    assert place is not None and place.card == _card("2h") and place.kind == "end"
    refused(s, "meld.too_many_wilds", ("2 wild",), "layoff", 0, "2c")
    s.discard("Kd")
    assert s.turn == 1


@pytest.mark.parametrize("name", ALL)
def test_a_natural_2_below_the_run_sends_the_wild_into_the_gap_and_a_3_sends_it_back(
    name: str,
) -> None:
    s = Scenario(name, hands={0: "4h 5h 2c 2h 3h 2d"}, stock="Kd")
    s.draw("Kd").meld("4h 5h 2c")  # the 2♣ at either end: the 3 or the 6
    place = wild_place(s.state.melds[0][0].cards, s.rules)
    assert place is not None and place.kind == "end" and place.ranks == (3, 6)
    s.layoff(0, "2h")  # 2♥ natural, the 2♣ now the 3 between it and the 4
    place = wild_place(s.state.melds[0][0].cards, s.rules)
    assert place is not None and (place.card, place.kind, place.ranks) == (
        _card("2c"), "gap", (3,))
    refused(s, "meld.too_many_wilds", ("2 wild",), "layoff", 0, "2d")
    s.layoff(0, "3h")  # the 3 arrives: the 2♣ goes back to an end, the ace or the 6
    place = wild_place(s.state.melds[0][0].cards, s.rules)
    assert place is not None and (place.card, place.kind, place.ranks) == (
        _card("2c"), "end", (1, 6))
    assert len(s.state.melds[0][0].cards) == 5
    s.discard("Kd")


# The first hand: seven kings and a joker (a set canastra with a wild), three 4s; the 9♠ thrown
# last takes the morto indirectly. The morto: a run 5..10 of hearts with the pinella 2♥ (six
# naturals: dirty), three queens, and the 4♠ to throw when going out.
HAND0 = "Kh Kh Kc Kd Ks Ks Kc JK 4c 4d 9s"
MORTO0 = "5h 6h 7h 8h 9h Th 2h Qs Qd Qc 4s"


def test_burraco_a_set_canastra_with_a_wild_is_dirty_and_a_jack_makes_the_run_semi_clean(
) -> None:
    s = Scenario("burraco", hands={0: HAND0}, stock="4h 3c Jh", mortos={0: MORTO0})
    s.draw("4h").meld("Kh Kh Kc Kd Ks Ks Kc JK").meld("4c 4d 4h").discard("9s")
    assert s.state.melds[0][0].canastra == "dirty"  # semi-clean is for runs only
    s.morto(direct=False)
    s.pass_turn()
    s.draw("Jh").meld("5h 6h 7h 8h 9h Th 2h")
    assert s.state.melds[0][2].canastra == "dirty"  # 5..10: six naturals in a row
    s.layoff(2, "Jh")  # 5..J: seven in a row beside the wild
    assert s.state.melds[0][2].canastra == "semi_clean"
    s.meld("Qs Qd Qc").discard("4s").go_out()
    # Side 0: kings 70 + joker 30, fours 15, 5h 6h 7h 15 + 8h..Jh 40 + pinella 20, queens 30:
    # 220 on the table; dirty 100 + semi-clean 150; closing 100; no card left.
    assert spec_points("burraco", "Kh Kh Kc Kd Ks Ks Kc JK 4c 4d 4h 5h 6h 7h 8h 9h Th Jh 2h "
                       "Qs Qd Qc") == 220
    side0 = 220 + 100 + 150 + 100
    side1 = -spec_points("burraco", s.hand(1)) - 100  # its pozzetto never taken
    # The set read as semi-clean too (150 for 100) is a wrong score.
    refused(s, "score.mismatch", (), "end_hand", "went_out", (side0 + 50, side1))
    s.end_hand("went_out", (side0, side1))
    sc0 = s.state.results[-1].scores[0]
    assert sc0.canastras == {"semi_clean": 1, "dirty": 1}
    assert (sc0.table_points, sc0.canastra_bonus, sc0.total) == (220, 250, 570)


def test_classic_a_canastra_of_seven_aces_in_a_relancinho() -> None:
    s = Scenario("classic", hands={0: "As As Ah Ah Ad Ad Ac 5c 5d 5h 9s"}, stock="5s")
    s.draw("5s").meld("As As Ah Ah Ad Ad Ac").meld("5c 5d 5h 5s").discard("9s")
    assert s.state.melds[0][0].canastra == "clean"
    s.go_out()
    # Aces 7 x 15 = 105, fives 20; clean 200; going out 50; relancinho 100; no card left.
    side0 = 105 + 20 + 200 + 50 + 100
    side1 = -spec_points("classic", s.hand(1))
    refused(s, "score.mismatch", (), "end_hand", "went_out", (side0 - 100, side1))
    s.end_hand("went_out", (side0, side1))
    assert s.state.results[-1].scores[0].total == 475


# RULES.md §5: "A run never wraps: K-A-3 is illegal everywhere." A hole beside an ace that
# sits at an end of the run (A-_-3-4 with the ace low, J-_-K-A with the ace high) turns no
# corner: it is a plain gap, meld.run_not_consecutive (the engine called it meld.run_wraps, and
# so did the reference meld reader the property tests hold it to).
@pytest.mark.parametrize("name", ALL)
def test_a_hole_beside_an_ace_at_the_end_of_a_run_is_a_gap_not_a_wrap(name: str) -> None:
    s = Scenario(name, hands={0: "Ah 3h 4h 2h Jd Kd Ad Qd Kc Ac 3c"}, stock="9s")
    s.draw("9s")
    refused(s, "meld.run_wraps", ("wraps",), "meld", "Kc Ac 3c")  # K-A-(2)-3 turns it
    refused(s, "meld.run_not_consecutive", ("not consecutive",), "meld", "Ah 3h 4h")
    refused(s, "meld.run_not_consecutive", ("not consecutive",), "meld", "Jd Kd Ad")
    s.meld("Ah 2h 3h 4h").meld("Jd Qd Kd Ad")
    assert [m.kind for m in s.state.melds[0]] == ["run", "run"]
