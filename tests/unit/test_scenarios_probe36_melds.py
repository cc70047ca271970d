"""Probe 36, melds and the edges of the draw, by RULES.md §4, §5 and §8:

- `thirteen`: a same-suit 2 standing in a gap makes a dirty canastra; when the card it stood
  for arrives the 2 goes back to its own place and the canastra is clean (canonical reading);
  a joker then makes it dirty again, and a second wild is refused.
- `thirteen`: a joker on top of the pile, taken with two hand cards, laid in a run; the pickup
  is not done until it is laid, and not with a 2 beside it (one wild per meld).
- no set of 2s, in `classic` and in `burako` (RULES.md §5, applied to every preset).
- `classic`: the stock at 0 with a free pile: the player may still take the pile; the next
  player who cannot draw ends the hand.
- `biriba`: the card rejected on the first draw lies on the pile, and the next player may take
  that pile (free pile).

Outcomes are worked out by hand from RULES.md, never read from the engine.
"""

from __future__ import annotations

import pytest

from buraco_log.events import CardDiscarded
from tests.scenario import Scenario, refused


def test_thirteen_a_2_in_a_gap_goes_home_when_its_card_arrives() -> None:
    hand0 = "3h 4h 2h 6h 7h 8h 9h 5h JK 2d Kc Qc Jd"
    s = Scenario("thirteen", hands={0: hand0}, stock="Ts", upcard="4c")
    s.draw("Ts").meld("3h 4h 2h 6h 7h 8h 9h")
    assert s.state.melds[0][0].canastra == "dirty"  # 2h as the 5
    s.layoff(0, "5h")  # 2h 3h .. 9h: the 2 in its own place, no wild
    assert s.state.melds[0][0].canastra == "clean"
    s.layoff(0, "JK")  # the joker as the ten
    assert s.state.melds[0][0].canastra == "dirty"
    refused(s, "meld.too_many_wilds", (), "layoff", 0, "2d")
    s.discard("2d")


def test_thirteen_a_joker_on_top_is_taken_with_two_hand_cards() -> None:
    hand0 = "5s 6s 2d 3c 9d Jc Qd Kh Ac 3d 4h 8c Td"
    s = Scenario("thirteen", hands={0: hand0}, upcard="JK")
    s.take_pile()
    refused(s, "pile.must_use_top", (), "discard", "3c")
    refused(s, "meld.too_many_wilds", (), "meld", "5s 6s 2d JK")
    s.meld("5s 6s JK").discard("3c")
    assert s.state.melds[0][0].canastra is None and s.turn == 1


@pytest.mark.parametrize("name", ["classic", "burako"])
def test_no_set_of_twos(name: str) -> None:
    s = Scenario(name, hands={0: "2c 2d 2h 5s 6s 7s"}, stock="Kd")
    s.draw("Kd")
    refused(s, "meld.set_of_twos", (), "meld", "2c 2d 2h")
    s.meld("5s 6s 7s 2c")  # a 2 is still a wild in a run


def test_classic_stock_at_zero_the_pile_may_still_be_taken() -> None:
    s = Scenario("classic", stock="Kd")
    while s.state.stock:
        s.pass_turn()
    # A free pile: the player to move takes it instead of ending the hand (RULES.md §8).
    n = len(s.state.pile)
    s.take_pile()
    assert len(s.hand(s.turn)) == 11 + n and s.state.pile == ()
    s.push(CardDiscarded(s.turn, s.hand(s.turn)[-1], seq=s._seq()))  # any card held
    refused(s, "stock.floor_reached", ("floor 0",), "draw", "4c")
    s.end_hand("stock_out")
    assert s.state.phase in ("between", "over")


def test_biriba_the_rejected_first_card_may_be_taken_by_the_next_player() -> None:
    s = Scenario("biriba", hands={1: "9s 9d"}, stock="9h Kd 4c")
    s.draw("9h").reject("9h").draw("Kd").discard("Kd")
    assert len(s.state.pile) == 2
    s.take_pile()
    s.meld("9s 9d 9h")
    assert len(s.hand(1)) == 11 + 2 - 3
