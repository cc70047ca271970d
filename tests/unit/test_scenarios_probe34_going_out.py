"""Probe 34, `burako`'s going out (docs/rules.md: "Burako's going out needs a canastra of any
kind"): `004` asks for "pelo menos uma canastra suja", RULES.md §7 for a canastra of any kind
(`go_out_needs_canastra`). A clean canastra and a dirty one both let the side go out; with
none, the meld that would leave one card to throw is refused. The morto is taken with no
canastra at all (burako has no `morto_needs_canastra`), and only indirectly.

Every expected number is worked out by hand from RULES.md §9's tables.
"""

from __future__ import annotations

import pytest

from tests.scenario import Scenario, refused
from tests.spec_points import spec_points

HAND0 = "Ts Td Tc Qs Qd Qc Qh Ks Kd Kc 4c"  # three sets, eleven cards, and the 4c
HAND1 = "Ad 3c 5d 7s 9d Tc Qh 4s 6c 8d 2d"  # 15 + 5 * 5 + 10 * 4 + 10 (the 2) = 90


@pytest.mark.parametrize(("seventh", "canastra"), [("9h", "clean"), ("JK", "dirty"),
                                                   ("Jc", None)])
def test_burako_goes_out_with_a_clean_or_a_dirty_canastra_not_with_none(
    seventh: str, canastra: str | None
) -> None:
    morto = f"3h 4h 5h 6h 7h 8h {seventh} Js Jd Jc 5c"
    s = Scenario("burako", hands={0: HAND0, 1: HAND1}, stock="Kh 8c Jh", mortos={0: morto})
    # Sets only, no canastra: the morto is taken all the same, by the last discard.
    s.draw("Kh").meld("Ts Td Tc").meld("Qs Qd Qc Qh").meld("Ks Kd Kc Kh").discard("4c")
    s.morto(direct=False)
    s.pass_turn()
    s.draw("Jh")
    if canastra is None:
        s.meld("3h 4h 5h 6h 7h 8h")  # six cards: no canastra
        refused(s, "go_out.needs_canastra", ("canastra",), "meld", "Js Jd Jc Jc Jh")
        s.discard("5c")  # the jacks kept, the turn ends as any other
        assert s.turn == 1 and len(s.hand(0)) == 5
        return
    s.meld(f"3h 4h 5h 6h 7h 8h {seventh}")
    assert s.state.melds[0][3].canastra == canastra
    s.meld("Js Jd Jc Jh").discard("5c").go_out()
    # RULES.md §9, burako: joker 50, 2 10, ace 15, 8..K 10, 3..7 5; clean 200, dirty 100,
    # going out 100, morto not taken 100.
    sets = 30 + 40 + 40
    run = 5 * 5 + 10 + (10 if seventh == "9h" else 50)
    side0 = sets + run + 40 + (200 if canastra == "clean" else 100) + 100
    assert spec_points("burako", HAND1) == 90
    side1 = -90 - 100
    refused(s, "score.mismatch", ("side 0",), "end_hand", "went_out", (side0 + 50, side1))
    s.end_hand("went_out", (side0, side1))
    assert s.state.totals == ((495, -190) if canastra == "clean" else (435, -190))
