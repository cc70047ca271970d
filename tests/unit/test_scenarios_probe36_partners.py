"""Probe 36, partners (RULES.md §2, §7, §9) in `burraco` with four players:

Seat 0 takes the side's morto indirectly; before seat 0 plays again its partner (seat 2)
empties the hand by melding. The side's morto is gone, so that emptying is going out, not a
second morto; and a partner's going out does not void the indirect morto: it stands as seat
0's hand and its cards count as cards left in hand. Every number worked out by hand from
RULES.md §9 (burraco: joker 30, 2 20, ace 15, 8..K 10, 3..7 5).
"""

from __future__ import annotations

from tests.scenario import Scenario, refused
from tests.spec_points import spec_points

MORTO0 = "Ac Ad 5d 6d 8s Qc 9s Kc 7d 3d 6s"  # 15+15+5+5+10+10+10+10+5+5+5 = 95
SEAT1 = "Ac 3c 5s 7s 9d Jc 4s 6c 8d Tc 3s"  # 15+5+5+5+10+10+5+5+10+10+5 = 85
SEAT3 = "2c JK 5h 7c 9h Jh Kc 8h 6h 4h 3d"  # 20+30+5+5+10+10+10+10+5+5+5 = 115


def _to_partner_emptying() -> Scenario:
    s = Scenario("burraco", players=4,
                 hands={0: "3h 4h 5h 6h 7h 8h 9h Js Jd Jc 5c", 1: SEAT1,
                        2: "Qh Qs Qd Kh Ks Kd Th Ts Td 4d 4c", 3: SEAT3},
                 stock="Jh 9c 4s", mortos={0: MORTO0}, upcard="Tc")
    s.draw("Jh").meld("3h 4h 5h 6h 7h 8h 9h").meld("Js Jd Jc Jh").discard("5c")
    s.morto(direct=False)
    s.pass_turn()  # seat 1
    s.draw("4s").meld("Qh Qs Qd").meld("Kh Ks Kd").meld("Th Ts Td").meld("4d 4c 4s")
    return s


def test_burraco_partner_empties_after_the_morto_that_is_going_out() -> None:
    s = _to_partner_emptying()
    refused(s, "morto.not_available", (), "morto", True)
    s.go_out()


def test_burraco_partner_going_out_leaves_the_indirect_morto_standing() -> None:
    s = _to_partner_emptying()
    s.go_out()
    assert spec_points("burraco", MORTO0) == 95
    assert spec_points("burraco", SEAT1) == 85 and spec_points("burraco", SEAT3) == 115
    # Run 25 + 20 = 45, jacks 40, queens, kings, tens 30 each, fours 15: 190; clean 200,
    # going out 100; the standing morto, seat 0's hand, -95.
    side0 = 190 + 200 + 100 - 95
    side1 = -85 - 115 - 100
    # The morto read as voided by the partner: -100 and its cards not counted (390).
    refused(s, "score.mismatch", ("side 0", "recomputed 395"), "end_hand", "went_out",
            (190 + 200 + 100 - 100, side1))
    s.end_hand("went_out", (side0, side1))
    sc = s.state.results[0].scores
    assert (sc[0].morto_penalty, sc[1].morto_penalty) == (0, 100)
