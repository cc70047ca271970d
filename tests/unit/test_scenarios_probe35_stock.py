"""Probe 35, the stock running out under must-use-top with both mortos left (RULES.md §4, §8,
§9; `001`: "Se o monte acabar e a carta de cima do descarte não puder ser usada, a mão termina
e é pontuada").

The player who draws the last stock card throws the Kc. The next player cannot draw:

- holding no king, no wild and no club near the king (J, Q, A), that player cannot use the Kc,
  so the hand ends; nobody went out, both sides pay their hands and their mortos;
- holding two kings, the Kc can be used, so the hand may not end (`stock.pile_can_be_taken`):
  the pile is taken and the kings laid.
"""

from __future__ import annotations

import pytest

from tests.scenario import Scenario, refused
from tests.spec_points import spec_points

LAST = "Kc 3h 4d 6s 8h 9c Th Jd Qs 3d 5c 7h 8d"  # the last drawer's hand, the Kc to throw
STUCK = "3c 4h 5s 6h 7c 8s 9s Td Jh Qh Ad 3s 5d"  # no king, no wild, no Jc Qc Ac
KINGS = "Kd Ks 5s 6h 7c 8s 9s Td Jh Qh Ad 3s 5d"


@pytest.mark.parametrize("name", ["thirteen", "thirteen-quick"])
@pytest.mark.parametrize("usable", [False, True])
def test_must_use_top_the_last_stock_card_and_both_mortos_left(name: str, usable: bool) -> None:
    probe = Scenario(name)
    last = (len(probe.state.stock) - 1) % 2  # the seat that draws the last card
    other = 1 - last
    s = Scenario(name, hands={last: LAST, other: KINGS if usable else STUCK})
    while len(s.state.stock) > 1:
        s.pass_turn()
    assert s.turn == last
    s.draw().discard("Kc")
    assert s.state.stock == () and s.turn == other
    refused(s, "stock.floor_reached", ("floor 0",), "draw", "4c")
    if usable:
        refused(s, "stock.pile_can_be_taken", (), "end_hand", "stock_out")
        s.take_pile().meld("Kd Ks Kc")
        return
    held_last = spec_points(name, s.hand(last))
    held_other = spec_points(name, STUCK)
    # 3c 5 + 4h 5 + 5s 5 + 6h 5 + 7c 5 + 8s 10 + 9s 10 + Td 10 + Jh 10 + Qh 10 + Ad 15 + 3s 5
    # + 5d 5 = 100.
    assert held_other == 100
    scores = [0, 0]
    scores[last], scores[other] = -held_last - 100, -held_other - 100
    wrong = list(scores)
    wrong[other] += 100  # the morto not paid at a stock-out: one reading off
    refused(s, "score.mismatch", (f"side {other}",), "end_hand", "stock_out", tuple(wrong))
    s.end_hand("stock_out", tuple(scores))
    sc = s.state.results[0].scores
    assert [x.going_out for x in sc] == [0, 0] and [x.morto_penalty for x in sc] == [100, 100]
