"""Probe 35, the classic family's own rules (RULES.md §2, §4, §7, §9):

- Relancinho with the pile: the whole hand laid in one turn, no meld earlier, counts when the
  hand was grown by the pile (RULES.md §7 says "lays the whole hand down in one turn"; `000`'s
  "onze cartas" is the usual count, not a limit).
- Six players in two triangles: a side's score takes the hands of all three of its players.
- The first-turn redraw belongs to the first turn of every hand: in the second hand it is seat
  1's (the deal rotated), and the second turn may not use it.

Every expected number is worked out by hand from RULES.md §9 (classic family: 2 10, ace 15,
8..K 10, 3..7 5; going out 50, relancinho 100, morto not taken 100 in biriba).
"""

from __future__ import annotations

import msgspec

from tests.scenario import Scenario, build_deal, refused


def test_classic_relancinho_after_taking_the_pile() -> None:
    s = Scenario("classic", hands={0: "3h 4h 5h 6h 7h 8h 9h Js Jd Ks Kh",
                                   1: "Ac Ad 3c 5d 7s 9d Jc Kc 4s 6c Qh"}, stock="Kd 5s")
    s.draw("Kd").discard("9h")  # seat 0 lays nothing in its first turn
    s.draw("5s").discard("Jc")
    s.take_pile()  # 9h Jc: thirteen cards
    s.meld("3h 4h 5h 6h 7h 8h 9h").meld("Js Jd Jc").meld("Ks Kh Kd").go_out()
    # 3..9 45, jacks 30, kings 30: 105; clean 200, relancinho 100, going out 50.
    side0 = 105 + 200 + 100 + 50
    # Seat 1 holds Ac Ad 3c 5d 7s 9d Kc 4s 6c Qh 5s: 30 + 25 + 10 + 10 + 10 + 5 = 90.
    side1 = -90
    refused(s, "score.mismatch", ("side 0", "recomputed 455"), "end_hand", "went_out",
            (side0 - 100, side1))
    s.end_hand("went_out", (side0, side1))
    assert s.state.results[0].scores[0].relancinho == 100


def test_classic_six_players_each_side_pays_its_three_hands() -> None:
    hands = {
        0: "3h 4h 5h 6h 7h 8h 9h Js Jd Jc Jh",
        1: "Ac Ad 3c 5d 7s 9d Jc Kc 4s 6c 8d",  # 30 + 20 + 10 + 10 + 10 + 5 + 10 = 95
        2: "2c 2d As 3s 5s 7c 9s Ts Kd 4d 6d",  # 20 + 15 + 15 + 30 + 10 = 90
        3: "Ah 3d 5c 7d 9c Tc Qc Qd 4c 6s 8s",  # 15 + 15 + 40 + 10 + 10 = 90
        4: "Ks Kh Qs Qh 2h 2s Td 8c 8h 7c 5h",  # 90 + 10 = 100
        5: "Ac Ad As 4h 6h 9h 3c 3s 5d 7s 9d",  # 45 + 20 + 30 = 95
    }
    s = Scenario("classic", 6, hands=hands, stock="Th")
    s.draw("Th").meld("3h 4h 5h 6h 7h 8h 9h Th").meld("Js Jd Jc Jh").go_out()
    # Seat 0's relancinho: 3..10 55, jacks 40, clean 200, relancinho 100, going out 50: 445;
    # less its partners' hands (seats 2 and 4).
    side0 = 445 - 90 - 100
    side1 = -95 - 90 - 95
    refused(s, "score.mismatch", ("side 0", "recomputed 255"), "end_hand", "went_out",
            (445, side1))
    refused(s, "score.mismatch", ("side 1", "recomputed -280"), "end_hand", "went_out",
            (side0, -95))
    s.end_hand("went_out", (side0, side1))


def test_biriba_the_redraw_is_the_first_turns_of_the_second_hand_too() -> None:
    s = Scenario("biriba", hands={0: "3c 4d 5s 6c 7d 8s 9c Td Js Qc Kd",  # 25 + 60 = 85
                                  1: "Ac Ad As 3s 4c 5d 6s 7c 8d 9s Tc"})  # 45 + 25 + 30
    while s.state.stock:
        s.pass_turn()
    refused(s, "score.mismatch", ("side 0",), "end_hand", "stock_out", (-85, -200))
    s.end_hand("stock_out", (-185, -200))  # hands and mortos, nobody laid a card
    deal = build_deal(s.rules, 2, {}, "Kh 4c 9d", {}, None, hand_no=1)
    s.push(msgspec.structs.replace(deal, seq=s.rep.seq + 1))
    assert s.turn == 1  # dealt by seat 0
    s.draw("Kh").reject("Kh").draw("4c").discard("4c")
    s.draw("9d")
    refused(s, "draw.redraw_only_first", (), "reject", "9d")
    s.discard("9d")
