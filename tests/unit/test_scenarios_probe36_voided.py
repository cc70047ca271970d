"""Probe 36, `thirteen` with four players: an opponent's going out voids an indirect morto
(RULES.md §7, "If an opponent ends the hand by going out before that player's next turn, the
morto counts as not taken"), scored whole by RULES.md §9 (thirteen: joker 50, 2 10, ace 15,
8..K 10, 3..7 5; clean 200, going out 100, morto not taken −100).

Seat 1 takes side 1's morto by its last discard; seat 2 (side 0) then empties by melding,
takes side 0's morto directly, plays it out and goes out by a discard, before seat 1 plays
again. Side 1 pays the morto and its cards count for nothing.
"""

from __future__ import annotations

from tests.scenario import Scenario, refused
from tests.spec_points import spec_points

SEAT0 = "Ac 3c 4d 5d 7c 8c 9d 2c Tc 6h 4c Kh Qs"  # 105
SEAT3 = "JK 2d 7d 8d 9c Js 3d 6d 4s 5h 8s Ad Jd"  # 150
MORTO0 = "Ah As Ad 6c 6d 6s Kh Ks Kd Kc 7s"
MORTO1 = "Tc Th 5s 5d 4h 4d 8h 8d 2h 2s JK"  # 130, never counted once voided


def test_thirteen_opponent_goes_out_before_the_taker_plays_again() -> None:
    s = Scenario("thirteen", players=4,
                 hands={0: SEAT0, 1: "3s 4s 5s 6s 7s 8s 9s Qc Qd Qh Kc Kd 5c",
                        2: "3h 4h 5h 6h 7h 8h 9h Jh Js Jd Th Ts Td", 3: SEAT3},
                 stock="Qd Ks Jc", mortos={0: MORTO0, 1: MORTO1}, upcard="9h")
    s.pass_turn()  # seat 0
    s.draw("Ks").meld("3s 4s 5s 6s 7s 8s 9s").meld("Qc Qd Qh").meld("Kc Kd Ks")
    s.discard("5c").morto(direct=False)  # seat 1: side 1's morto, indirectly
    s.draw("Jc").meld("3h 4h 5h 6h 7h 8h 9h").meld("Jh Js Jd Jc").meld("Th Ts Td")
    s.morto(direct=True)  # seat 2: side 0's morto, directly
    s.meld("Ah As Ad").meld("6c 6d 6s").meld("Kh Ks Kd Kc").discard("7s")
    s.go_out()
    assert spec_points("thirteen", SEAT0) == 105 and spec_points("thirteen", SEAT3) == 150
    assert spec_points("thirteen", MORTO1) == 130
    # Side 0: run 45, jacks 40, tens 30, aces 45, sixes 15, kings 40 = 215; clean 200,
    # going out 100; seat 0's hand -105.
    side0 = 215 + 200 + 100 - 105
    # Side 1: run 45, queens 30, kings 30 = 105; clean 200; seat 3's hand -150; the morto -100.
    side1 = 105 + 200 - 150 - 100
    # The morto read as standing (seat 1's hand, 130, no penalty): 25.
    refused(s, "score.mismatch", ("side 1", "recomputed 55"), "end_hand", "went_out",
            (side0, 105 + 200 - 150 - 130))
    s.end_hand("went_out", (side0, side1))
    sc = s.state.results[0].scores
    assert (sc[0].morto_penalty, sc[1].morto_penalty) == (0, 100)
    assert sc[0].going_out == 100
