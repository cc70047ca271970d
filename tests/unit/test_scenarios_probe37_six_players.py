"""Probe 37, `classic` with six players, two sides of three on alternate seats (RULES.md §2),
and the vulnerability of a side (RULES.md §10): the minimum is the side's, so a short opening
taken back by one player raises it to 90 for the partners too, for the rest of the hand; once
a partner has opened, the third partner lays what it likes; the other side, below half the
target, needs nothing.
"""

from __future__ import annotations

from tests.scenario import Scenario, carried_in, refused

HANDS = {
    0: "Kc Kd Ks Qc Qd Qs",         # 60: short of 75
    1: "3c 3d 3h",                  # 15: side 1 is not vulnerable
    2: "Jc Jd Js Ac Ad As 9c 9d 9h",  # 30 + 45 = 75, then 105 with the nines
    4: "4c 4d 4s",                  # 15: the side has opened by then
}


def test_six_players_the_sides_minimum_rises_to_90_for_the_partners() -> None:
    s = carried_in(Scenario("classic", 6, hands=HANDS, stock="5c 5d 5s 6c 6d 6s 7c"),
                 (800, 100))
    assert s.state.sides == (0, 1, 0, 1, 0, 1)
    assert s.state.vulnerable == (True, False)
    s.draw("5c").meld("Kc Kd Ks").meld("Qc Qd Qs")
    refused(s, "vulnerable.opening_too_low", ("75", "60"), "discard", "5c")
    s.retract()
    s.discard("5c")
    assert s.state.opening_min == (90, 75) and not s.state.melds[0]
    s.draw("5d").meld("3c 3d 3h").discard("5d")  # side 1: no minimum below 750
    # Seat 2, the partner: 75 was enough before the retraction, not now.
    s.draw("5s").meld("Jc Jd Js").meld("Ac Ad As")
    refused(s, "vulnerable.opening_too_low", ("90", "75"), "discard", "5s")
    s.meld("9c 9d 9h")  # 105
    s.discard("5s")
    assert s.state.opened == (True, True)
    s.pass_turn()  # seat 3
    s.draw("6d").meld("4c 4d 4s").discard("6d")  # seat 4: fifteen points, the side has opened
    assert [len(m.cards) for m in s.state.melds[0]] == [3, 3, 3, 3]
    assert s.turn == 5


def test_six_players_a_partner_may_not_take_back_the_sides_good_opening() -> None:
    s = carried_in(Scenario("classic", 6, hands=HANDS, stock="5c 5d 5s 6c 6d 6s 7c"),
                 (800, 100))
    s.pass_turn()
    s.pass_turn()
    s.draw("5s").meld("Jc Jd Js").meld("Ac Ad As").meld("9c 9d 9h")
    refused(s, "vulnerable.retract_not_needed", ("short",), "retract")
    s.discard("5s")
    s.pass_turn()
    s.draw("6d").meld("4c 4d 4s")
    refused(s, "vulnerable.retract_not_needed", ("short",), "retract")
    s.discard("6d")
    assert s.state.opening_min == (75, 75)
