"""Probe 38, the stock at its floor under a free pile, and a wild laid on a clean canastra
(RULES.md §4, §6, §8, §9):

- At the floor (0; 2 in `mega`) the player to move cannot draw, but may still take the pile
  and play on; the next player, facing the floor again, ends the hand by not taking it. Every
  hand left counts, and every morto not taken is paid; nobody goes out.
- A canastra is classified by its current cards: a wild laid off on a clean run makes it dirty
  (100 in place of 200), or semi-clean in `burraco` where the seven naturals stay unbroken.
"""

from __future__ import annotations

import pytest

from buraco_log.cards import format_card, parse_cards
from tests.scenario import Scenario, refused
from tests.spec_points import spec_points

FREE = ("classic", "biriba", "bossa-nova", "burraco", "mega", "burako")
FLOOR = {"mega": 2}
HAND0 = "3h 4h 5h 6h 7h 8h 9h Ks Kd Kc Qc"
HAND1 = "Ac Ad 3c 5d 7s 9d Jc Kh 4s 6c 8d"  # 15+15+5+5+5+10+10+10+5+5+10 = 95


@pytest.mark.parametrize("name", FREE)
def test_at_the_floor_the_pile_is_taken_then_the_next_player_ends_the_hand(name: str) -> None:
    s = Scenario(name, hands={0: HAND0, 1: HAND1}, stock="9c")
    s.draw("9c").meld("3h 4h 5h 6h 7h 8h 9h").meld("Ks Kd Kc").discard("9c")
    floor = FLOOR.get(name, 0)
    while len(s.state.stock) > floor:
        s.pass_turn()
    taker = s.turn
    refused(s, "stock.floor_reached", (f"floor {floor}",), "draw", "4c")
    pile = s.state.pile
    s.take_pile()
    assert s.state.pile == () and len(s.hand(taker)) >= len(pile)
    thrown = s.hand(taker)[0]
    s.discard(format_card(thrown))  # the taker lays nothing: a free pile asks for nothing
    refused(s, "stock.floor_reached", (f"floor {floor}",), "draw", "4c")
    morto = 100 if s.rules.morto else 0
    # By RULES.md §9: side 0's run 45 + kings 30 and the clean 200, less its hand; side 1 its
    # hand; each side its morto where there is one. No going out.
    side0 = 45 + 30 + 200 - spec_points(name, s.hand(0)) - morto
    side1 = -spec_points(name, s.hand(1)) - morto
    refused(s, "score.mismatch", ("side 0",), "end_hand", "stock_out", (side0 + 50, side1))
    s.end_hand("stock_out", (side0, side1))
    assert s.state.results[0].went_out is None


ALL = ("classic", "biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
       "burako")


@pytest.mark.parametrize("name", ALL)
def test_a_wild_on_a_clean_canastra_makes_it_dirty(name: str) -> None:
    s = Scenario(name, hands={0: "3h 4h 5h 6h 7h 8h 9h 2c Th 5s 6d"}, stock="Kc")
    s.draw("Kc").meld("3h 4h 5h 6h 7h 8h 9h")
    assert s.state.melds[0][0].canastra == "clean"
    s.layoff(0, "2c")
    # 3..9 unbroken beside the wild: semi-clean in burraco; dirty elsewhere.
    assert s.state.melds[0][0].canastra == ("semi_clean" if name == "burraco" else "dirty")
    s.layoff(0, "Th")  # the wild at an end either way: the class stays
    assert s.state.melds[0][0].canastra == ("semi_clean" if name == "burraco" else "dirty")
    assert s.state.melds[0][0].cards == parse_cards("3h 4h 5h 6h 7h 8h 9h 2c Th")
    s.discard("Kc")
