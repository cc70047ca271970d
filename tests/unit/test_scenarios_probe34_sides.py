"""Probe 34, what belongs to the side (RULES.md §2: "Scores, melds, morto and penalties belong
to sides; hands belong to players") where the other scenario files play one seat:

- `bossa-nova` in partnerships: the canastra that lets a player take the morto is the side's,
  so a partner's counts and an opponent's does not (RULES.md §7, `morto_needs_canastra`).
- `biriba` in partnerships at the stock-out: the partner who took the morto directly holds
  what is left of it as a hand; both partners' hands are the side's penalty, and the other
  side pays its hands and its morto (RULES.md §8, §9).
- Vulnerability from an odd target (RULES.md §10, "at least half the target"): a target of
  1001 makes a side vulnerable from 501, not 500.

Every expected number is worked out by hand from RULES.md §9's tables.
"""

from __future__ import annotations

import pytest

from buraco_log.rules import derive
from tests.scenario import Scenario, carried_in, refused
from tests.spec_points import spec_points


def test_bossa_nova_the_partners_canastra_takes_the_morto_the_opponents_does_not() -> None:
    s = Scenario("bossa-nova", 4, hands={
        0: "3h 4h 5h 6h 7h 8h 9h Kc Qd Jd 4c",
        1: "3s 3d 3c 4s 4d 4h 5s 5d 5c 6s 6d",
        2: "Ts Td Tc Qs Qh Qc Ks Kh Kd 8d 8h",
    }, stock="8c 6c 8s")
    s.draw("8c").meld("3h 4h 5h 6h 7h 8h 9h").discard("Kc")
    assert s.state.melds[0][0].canastra == "clean"
    # Seat 1: three sets, and the 6s would empty the hand; side 1 has no canastra (side 0's
    # on the table is not its own).
    s.draw("6c").meld("3s 3d 3c").meld("4s 4d 4h").meld("5s 5d 5c")
    refused(s, "morto.needs_canastra", ("canastra",), "meld", "6s 6d 6c")
    s.discard("6c")
    assert s.state.morto_taken == (False, False)
    # Seat 2 has no canastra of its own: its partner's is the side's.
    s.draw("8s").meld("Ts Td Tc").meld("Qs Qh Qc").meld("Ks Kh Kd").meld("8s 8d 8h")
    s.morto(direct=True)
    assert s.state.morto_taken == (True, False)
    assert len(s.hand(2)) == 11 and s.state.phase == "play" and s.turn == 2


def test_biriba_partnership_stock_out_the_partner_holds_the_rest_of_the_morto() -> None:
    morto = "Ac Ad 5c 6d 8s Qd Qs Kh Ks Kd 9c"
    held = {
        0: "3c 4d 5s 6c 7d 8d 9d Td Js Qc Kc",  # 25 + 60 = 85
        1: "Ac Ad As 3s 4c 5d 6s 7c 8c 9s Tc",  # 45 + 25 + 30 = 100
        3: "2c 2d 3d 4s 5h 6h 7s 8h 9h Th Jh",  # 20 + 25 + 40 = 85
    }
    s = Scenario("biriba", 4, hands={**held, 2: "3h 4h 5h 6h 7h 8h 9h Js Jd Jc Jh"},
                 stock="Kc Qc Th", mortos={0: morto})
    s.pass_turn()
    s.pass_turn()
    # Seat 2: an eight-card clean run and four jacks, the whole hand in one turn: the morto
    # directly, and the relancinho (RULES.md §7: in biriba the emptying that takes the morto).
    s.draw("Th").meld("3h 4h 5h 6h 7h 8h 9h Th").meld("Js Jd Jc Jh").morto(direct=True)
    s.meld("Kh Ks Kd").discard("9c")
    while s.state.stock:
        s.pass_turn()
    refused(s, "stock.floor_reached", ("floor 0",), "draw", "4c")
    # The morto's rest: Ac Ad 5c 6d 8s Qd Qs, 15 + 15 + 5 + 5 + 10 + 10 + 10 = 70.
    assert spec_points("biriba", s.hand(2)) == 70
    for seat, text in held.items():
        assert spec_points("biriba", s.hand(seat)) == spec_points("biriba", text)
    table = (25 + 30) + 40 + 30  # 3..10 of hearts, four jacks, three kings
    side0 = table + 200 + 100 - (85 + 70)  # clean canastra, relancinho, both hands: 270
    side1 = -(100 + 85) - 100  # both hands, the morto never taken: -285
    refused(s, "score.mismatch", ("side 0", "recomputed 270"), "end_hand", "stock_out",
            (side0 + 70, side1))  # the partner's morto cards not counted
    refused(s, "score.mismatch", ("side 1", "recomputed -285"), "end_hand", "stock_out",
            (side0, side1 + 100))  # the untaken morto not paid
    s.end_hand("stock_out", (side0, side1))
    sc = s.state.results[0].scores
    assert (sc[0].hand_penalty, sc[0].relancinho, sc[1].morto_penalty) == (155, 100, 100)


# -- vulnerability from an odd target ------------------------------------------------------

@pytest.mark.parametrize("name", ["classic", "biriba", "bossa-nova"])
@pytest.mark.parametrize("totals", [(501, 500), (500, 501)])
def test_a_target_of_1001_makes_a_side_vulnerable_from_501(
    name: str, totals: tuple[int, int]
) -> None:
    rules = derive(name, target_score=1001)
    assert rules.vulnerable_at == 501  # half of 1001 is 500.5: "at least half" is 501
    s = carried_in(Scenario(rules, hands={0: "Ah As Ad 7h 7s 7d 9c", 1: "3c 3d 3h Kc"},
                         stock="Qc Qd Qh"), totals)
    assert s.state.vulnerable == (totals[0] == 501, totals[1] == 501)
    # Each side opens with less than 75: aces 45 and sevens 15 (60), or three 3s (15).
    s.draw("Qc").meld("Ah As Ad").meld("7h 7s 7d")
    if totals[0] == 501:
        refused(s, "vulnerable.opening_too_low", ("75", "60"), "discard", "Qc")
        s.retract("Ah As Ad 7h 7s 7d")
    s.discard("Qc")
    s.draw("Qd").meld("3c 3d 3h")
    if totals[1] == 501:
        refused(s, "vulnerable.opening_too_low", ("75", "15"), "discard", "Qd")
        s.retract("3c 3d 3h")
    s.discard("Qd")
    assert [len(m) for m in s.state.melds] == [0 if totals[0] == 501 else 2,
                                               0 if totals[1] == 501 else 1]
