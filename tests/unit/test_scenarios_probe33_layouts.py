"""Probe 33, layouts: the six-player `classic` table (two triangles, RULES.md §2) under
vulnerability (RULES.md §10), which is the side's: once a triangle has opened its other two
players lay any meld, and once one player of a triangle took a short opening back the other two
need 90 for the rest of the hand.
"""

from __future__ import annotations

from tests.scenario import Scenario, refused


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
