"""Probe 35, wild cards moving in runs and sets, and what they make of a canastra
(RULES.md §1, §5, §6):

- `002`'s own example: 3-4-JK-6-7, the 5 laid: the joker moves to an end. Grown to 3..9 with
  the joker, the run is dirty everywhere but `burraco`, where 3..9 is seven naturals in a row
  (semi-clean). Then the same-suit 2 arrives: in `burraco` 2..9 is eight in a row, still
  semi-clean; a second wild is refused in every preset.
- The natural 2 of its own suit: A-2-3 of spades is clean; a 2 of diamonds laid on is the
  wild (the 4, then pushed up as the naturals arrive); A..7 and the 2 is semi-clean in
  `burraco`, dirty in `classic`; A..Q and the 2 as the king is thirteen cards, and the king
  itself is refused (the 2 would have no place: `meld.run_too_long`).
- K-A-2 with the 2 as the wild queen is legal in every preset (the 2 stands for the Q),
  `burako` too, where both aces may be in one run but K-A-2-3 still wraps; the queen arriving
  pushes the 2 down, and 8..A with the 2 as the 7 is semi-clean in `burraco`.
- `mega`: one set per rank, and a run through that rank is no set; `burraco` has no limit.
- A set: eight naturals are clean, one joker more makes it dirty, a second is refused
  (`thirteen`, four jokers).
"""

from __future__ import annotations

import pytest

from tests.scenario import Scenario, refused

JOKER_PRESETS = ["thirteen", "burraco", "mega", "burako"]


@pytest.mark.parametrize("name", JOKER_PRESETS)
def test_the_joker_moves_to_an_end_and_the_run_is_semi_clean_in_burraco_only(name: str) -> None:
    hand0 = "3h 4h JK 6h 7h 5h 8h 9h 2h 2d Kc Qd Jc"
    s = Scenario(name, hands={0: hand0}, stock="Ts", hand_size=13,
                 upcard=None if name == "burako" else "4c")
    s.draw("Ts").meld("3h 4h JK 6h 7h")  # the joker as the 5
    s.layoff(0, "5h")  # 3..7 unbroken: the joker at an end (the 2 or the 8)
    s.layoff(0, "8h")
    # Seven cards, 3..8 and the joker: a canastra, dirty everywhere (six in a row only).
    assert len(s.state.melds[0][0].cards) == 7
    assert s.state.melds[0][0].canastra == "dirty"
    s.layoff(0, "9h")  # 3..9: seven naturals in a row beside the joker
    cls = "semi_clean" if name == "burraco" else "dirty"
    assert s.state.melds[0][0].canastra == cls
    s.layoff(0, "2h")  # the 2 of hearts in its own place: 2..9, the joker the ace or the 10
    assert s.state.melds[0][0].canastra == cls
    refused(s, "meld.too_many_wilds", (), "layoff", 0, "2d")
    s.discard("2d")


@pytest.mark.parametrize("name", ["classic", "burraco"])
def test_a_natural_2_of_its_suit_and_a_wild_2_pushed_up_the_run(name: str) -> None:
    hand0 = "As 2s 3s 2d 4s 5s 6s 7s 8s 9s Ts Js Qs 4c"
    s = Scenario(name, hands={0: hand0}, stock="Ks", hand_size=14)
    s.draw("Ks").meld("As 2s 3s")  # the 2s in its own place: natural, no wild
    s.layoff(0, "2d")  # so the 2d may join, as the 4
    s.layoff(0, "4s")  # A..4: the 2d pushed to the 5
    s.layoff(0, "5s 6s")  # A..6 and the 2d as the 7: seven cards, six in a row
    assert s.state.melds[0][0].canastra == "dirty"
    s.layoff(0, "7s")  # A..7, seven in a row, the 2d as the 8
    assert s.state.melds[0][0].canastra == ("semi_clean" if name == "burraco" else "dirty")
    s.layoff(0, "8s 9s Ts Js Qs")  # A..Q and the 2d as the king: thirteen cards
    # A..K and the 2d: fourteen, and the 2d has no place left (RULES.md §5: at most 13).
    refused(s, "meld.run_too_long", ("13",), "layoff", 0, "Ks")
    s.discard("4c")
    assert len(s.state.melds[0][0].cards) == 13


@pytest.mark.parametrize("name", ["classic", "thirteen", "burraco", "mega", "burako"])
def test_k_a_2_is_a_high_run_with_the_2_as_the_queen_then_pushed_down(name: str) -> None:
    hand0 = "Kh Ah 2h Qh Jh Th 9h 8h 3h 5d 6s"
    s = Scenario(name, hands={0: hand0}, stock="Kc")
    s.draw("Kc")
    refused(s, "meld.run_wraps", (), "meld", "Kh Ah 2h 3h")  # burako's two aces included
    s.meld("Kh Ah 2h")  # never K-A-2 natural (a wrap): the 2h is the queen
    s.layoff(0, "Qh")  # Q-K-A: the 2h down to the jack
    s.layoff(0, "Jh Th")  # the 2h the 9
    s.layoff(0, "9h 8h")  # 8..A, seven in a row, the 2h as the 7: eight cards
    cls = "semi_clean" if name == "burraco" else "dirty"
    assert s.state.melds[0][0].canastra == cls
    s.discard("Kc")


@pytest.mark.parametrize("name", ["mega", "burraco"])
def test_one_set_per_rank_in_mega_a_run_through_that_rank_is_no_set(name: str) -> None:
    s = Scenario(name, hands={0: "7s 7d 7c 5h 6h 7h 7s 7d 7h 4c Kd"}, stock="Qc")
    s.draw("Qc").meld("7s 7d 7c").meld("5h 6h 7h")  # a run holding a 7 is no second set
    if name == "mega":
        refused(s, "meld.second_set_of_rank", ("already has a set",), "meld", "7s 7d 7h")
        s.layoff(0, "7s 7d 7h")  # the same sevens join the one set
        assert len(s.state.melds[0][0].cards) == 6
    else:
        s.meld("7s 7d 7h")
        assert len(s.state.melds[0]) == 3
    s.discard("Qc")


def test_thirteen_a_set_of_eight_naturals_takes_one_joker_not_two() -> None:
    s = Scenario("thirteen", hands={0: "Qh Qh Qs Qs Qd Qd Qc Qc JK JK 4c 5d 6s"}, stock="Kc")
    s.draw("Kc").meld("Qh Qh Qs Qs Qd Qd Qc Qc")
    assert s.state.melds[0][0].canastra == "clean"
    s.layoff(0, "JK")  # nine cards, dirty
    assert s.state.melds[0][0].canastra == "dirty"
    refused(s, "meld.too_many_wilds", (), "layoff", 0, "JK")
    s.discard("JK")
