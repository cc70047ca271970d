"""Probe 33, layouts beyond two players.

- The six-player `classic` table (two triangles, RULES.md §2) under vulnerability (RULES.md
  §10), which is the side's: once a triangle has opened its other two players lay any meld, and
  once one player of a triangle took a short opening back the other two need 90 for the rest of
  the hand.
- Three-player `biriba` (three sides, three mortos): the indirect morto's taker has two
  opponents, and either going out before the taker's own next turn voids it (RULES.md §7).
"""

from __future__ import annotations

from tests.scenario import Scenario, refused
from tests.spec_points import spec_points


def test_classic_six_players_vulnerability_belongs_to_each_triangle() -> None:
    s = Scenario("classic", 6, hands={
        0: "Kh Ks Kd Qh Qs Qd Jh Js Jd",  # 90: side 0 opens
        1: "3c 3d 3h",  # 15: short, taken back
        2: "4c 4d 4h",  # 15 after side 0 opened: fine
        3: "Ah As Ad Kc Kh Kd 5c 5d 5s",  # 45 + 30 = 75 is short after the retraction; 90 not
        5: "6c 6d 6h",
    }, stock="9c 9d 9h 9s Tc Td", vulnerable_at=0)
    assert s.state.sides == (0, 1, 0, 1, 0, 1)
    s.draw("9c").meld("Kh Ks Kd").meld("Qh Qs Qd").meld("Jh Js Jd").discard("9c")
    s.draw("9d").meld("3c 3d 3h")
    refused(s, "vulnerable.opening_too_low", ("75", "15"), "discard", "9d")
    s.retract("3c 3d 3h").discard("9d")
    assert s.state.opening_min == (75, 90)
    s.draw("9h").meld("4c 4d 4h").discard("9h")
    s.draw("9s").meld("Ah As Ad").meld("Kc Kh Kd")
    refused(s, "vulnerable.opening_too_low", ("90", "75"), "discard", "9s")
    s.meld("5c 5d 5s").discard("9s")
    s.pass_turn()
    s.draw("Td").meld("6c 6d 6h").discard("Td")  # side 1 opened at seat 3: 15 is fine now
    # side 0: kings, queens, jacks, fours; side 1: aces, kings, fives, sixes
    assert [len(side) for side in s.state.melds] == [4, 4]
    assert s.turn == 0


def test_biriba_three_players_the_second_opponent_out_after_the_first_played_voids_the_morto(
) -> None:
    # RULES.md §7: the indirect morto counts as not taken if an opponent goes out before the
    # taker's next turn. With three players the taker has two opponents: seat 1 plays a turn
    # in between, and seat 2 going out still comes before seat 0's turn.
    s = Scenario("biriba", 3, hands={0: "3h 4h 5h 6h 7h 8h 9h Ks Kd Kc 4c",
                                     2: "3s 3d 3c 4s 4d 4c 5s 5d 5c 6s 6d"},
                 stock="Kh Qd 6c", mortos={2: "7s 7d 7c 8s 8d 8c 9s 9d 9c 9s 9d"})
    s.draw("Kh").meld("3h 4h 5h 6h 7h 8h 9h").meld("Ks Kd Kc Kh").discard("4c")
    s.morto(direct=False)
    assert s.state.morto_pending == (0, None, None)
    s.pass_turn()  # seat 1 draws Qd and throws it
    assert s.state.morto_pending == (0, None, None)  # an opponent's turn is not the taker's
    s.draw("6c").meld("3s 3d 3c").meld("4s 4d 4c").meld("5s 5d 5c").meld("6s 6d 6c")
    s.morto(direct=True)
    s.meld("7s 7d 7c").meld("8s 8d 8c").meld("9s 9d 9c 9s 9d").go_out()
    # Side 0: run 3..7 25 + 8, 9 20, kings 40 = 85; clean 200; relancinho 100 (noted at once);
    # the morto voided: -100, its cards not counted. Side 1: its hand, its morto never taken.
    # Side 2: 3s to 7s 5 x 15 = 75, eights 30, five nines 50 = 155, no canastra; going out 50,
    # relancinho 100.
    side0 = 85 + 200 + 100 - 100
    side1 = -spec_points("biriba", s.hand(1)) - 100
    side2 = 155 + 50 + 100
    refused(s, "score.mismatch", (), "end_hand", "went_out",
            (side0 + 100 - spec_points("biriba", s.hand(0)), side1, side2))  # a morto standing
    s.end_hand("went_out", (side0, side1, side2))
    sc0 = s.state.results[-1].scores[0]
    assert (sc0.morto_penalty, sc0.hand_penalty, sc0.relancinho) == (100, 0, 100)
