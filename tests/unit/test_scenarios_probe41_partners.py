"""Probe 41, going out in a partnership needs no partner's leave (RULES.md §2, §7).

Some tables make a player ask the partner ("posso bater?") before going out. RULES.md §7 and
the seeds know no such rule: going out is a player's move on its own turn, when the side's
morto is taken (morto presets) and, where `go_out_needs_canastra`, the side has a canastra.
So a log holds no question and no answer: a partner's going out follows the partner's own
moves directly, and a seat cannot go out for its partner or out of turn.
"""

from __future__ import annotations

from tests.scenario import Scenario, refused

RUN = "3h 4h 5h 6h 7h 8h 9h"


def test_classic_partner_goes_out_on_its_own_turn_without_leave() -> None:
    s = Scenario("classic", players=4, hands={2: f"{RUN} Js Jd Jc 5c"}, stock="Kc Qd Jh")
    s.pass_turn().pass_turn()  # seats 0 and 1
    s.draw("Jh").meld(RUN).meld("Js Jd Jc Jh").discard("5c")
    assert s.state.phase == "emptied"
    refused(s, "turn.not_your_turn", (), "go_out", 0)  # the partner cannot do it for seat 2
    s.go_out()
    s.end_hand()
    scores = s.state.results[0].scores
    assert scores[0].going_out == 50 and scores[1].going_out == 0

