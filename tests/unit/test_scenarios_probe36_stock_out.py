"""Probe 36, hands scored whole at a stock-out or after a canastra that is less than it looks
(RULES.md §6, §8, §9), each number worked out by hand from RULES.md's tables:

- `bossa-nova`: a clean canastra on the table, no morto taken by either side, the stock runs
  out: both sides pay their hands and their mortos, no going-out bonus.
- `mega`: seven nines are no canastra (`canastra_from_sets` off): at the stock-out (floor 2)
  the set scores its cards and no bonus; the indirect morto stands as the taker's hand.
- `burako`: a thirteen-card A..K run of hearts with a tatu in the 7's place is dirty (100),
  not royal (500, clean runs only); going out by a discard after the indirect morto.
"""

from __future__ import annotations

from tests.scenario import Scenario, refused
from tests.spec_points import spec_points

HAND1 = "Ac Ad 3c 5d 7s 9d Jc Kc 4s 6c 8d"  # 95 in every table here (no joker, no 2)


def to_floor(s: Scenario, floor: int) -> None:
    while len(s.state.stock) > floor:
        s.pass_turn()
    refused(s, "stock.floor_reached", (f"floor {floor}",), "draw", "4c")


def test_bossa_nova_stock_out_both_sides_pay_their_mortos() -> None:
    s = Scenario("bossa-nova", hands={0: "3h 4h 5h 6h 7h 8h 9h Ac Kd 5s 6d", 1: HAND1},
                 stock="Qc")
    s.draw("Qc").meld("3h 4h 5h 6h 7h 8h 9h").discard("Qc")
    to_floor(s, 0)
    held0 = 15 + 10 + 5 + 5
    assert spec_points("bossa-nova", s.hand(0)) == held0 == 35
    assert spec_points("bossa-nova", s.hand(1)) == 95
    side0 = 45 + 200 - held0 - 100  # run, clean canastra, hand, morto: 110
    side1 = -95 - 100
    # A going-out bonus (50) given at a stock-out: one reading off.
    refused(s, "score.mismatch", ("side 0", "recomputed 110"), "end_hand", "stock_out",
            (side0 + 50, side1))
    s.end_hand("stock_out", (side0, side1))
    assert [sc.morto_penalty for sc in s.state.results[0].scores] == [100, 100]


def test_mega_seven_nines_score_their_cards_and_no_bonus_at_the_stock_out() -> None:
    hand0 = "9s 9h 9d 9c 9s 9h 9d 4c 4d 4s 4h"
    morto = "Th Ts Td Qh Qs Qd 5c 6c 7c Kc Ks"  # 30 + 30 + 15 + 20 = 95
    hand1 = "Ac Ad 3c 5d 7s Td Jc Kc 4s 6c 8d"  # HAND1 with Td for 9d (the nines are out)
    s = Scenario("mega", hands={0: hand0, 1: hand1}, stock="Kd", mortos={0: morto},
                 upcard="8c")
    s.draw("Kd").meld("9s 9h 9d 9c 9s 9h 9d").meld("4c 4d 4s 4h").discard("Kd")
    s.morto(direct=False)
    to_floor(s, 2)
    assert s.state.morto_taken[0]
    assert spec_points("mega", s.hand(0)) == 95
    side0 = 70 + 20 - 95  # nines, fours, the morto as the hand: -5
    side1 = -95 - 100
    # The nines read as a clean canastra: 200 more.
    refused(s, "score.mismatch", ("side 0", "recomputed -5"), "end_hand", "stock_out",
            (side0 + 200, side1))
    s.end_hand("stock_out", (side0, side1))
    assert not s.state.results[0].scores[0].canastras


def test_burako_a_thirteen_card_run_with_a_tatu_is_dirty_not_royal() -> None:
    hand0 = "Ah 2h 3h 4h 5h 6h JK 8h 9h Th 5c"
    morto = "Qh Kh Ts Td Tc Ks Kd Kc 9s 9d 9c"
    s = Scenario("burako", hands={0: hand0, 1: HAND1}, stock="Jh 6s 4d", mortos={0: morto})
    s.draw("Jh").meld("Ah 2h 3h 4h 5h 6h JK 8h 9h Th Jh").discard("5c")
    assert s.state.melds[0][0].canastra == "dirty"  # the tatu as the 7, the 2h itself
    s.morto(direct=False)
    s.pass_turn()
    s.draw("4d").layoff(0, "Qh Kh")
    assert s.state.melds[0][0].canastra == "dirty"  # all thirteen ranks, one of them wild
    s.meld("Ts Td Tc").meld("Ks Kd Kc").meld("9s 9d 9c").discard("4d")
    s.go_out()
    # Run: A 15, 2h 10, 3..6 20, tatu 50, 8h 10, 9..K 50 = 155; three sets 90; dirty 100,
    # going out 100.
    side0 = 155 + 90 + 100 + 100
    side1 = -95 - 100
    refused(s, "score.mismatch", ("side 0", "recomputed 445"), "end_hand", "went_out",
            (side0 + 400, side1))
    s.end_hand("went_out", (side0, side1))
    assert s.state.results[0].scores[0].canastras == {"dirty": 1}
