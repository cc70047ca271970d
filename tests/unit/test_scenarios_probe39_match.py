"""Probe 39, negative scores, the match end and the morto penalty as a knob (RULES.md §9, §10):

- Scores go below zero and stay there (`000`: "anotando-se, então, o resultado positivo ou
  negativo"): a side carried in at -200 is not vulnerable, loses more in the hand, and the
  match ends when the other side reaches the target; a total recorded as if clamped at zero
  is refused.
- A stock-out costs each side its hand, below zero, and the morto penalty where the preset
  has one; in 3-player `biriba` each of the three sides pays its own.
- Switching `morto` on over `classic` (house rules) keeps `classic`'s `morto_not_taken` of 0:
  nobody pays for a morto not taken unless the house rules set the penalty too.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.scenario import Scenario, carried_in, refused
from tests.spec_points import spec_points

HAND0 = "3c 4d 5s 6h 7c 9d Ts Jh Qc Kd As"  # 5*5 + 10*5 + 15 = 90, no meld in it
HAND1 = "Jc Jd Js 3h 4h 5h 6h 7h 8h 9h Jh"


def test_a_negative_total_stays_negative_and_the_other_side_wins_at_the_target() -> None:
    s = carried_in(Scenario("classic", hands={0: HAND0, 1: HAND1}, stock="Ad Th"),
                   (-200, 1400))
    assert s.state.vulnerable == (False, True)  # below zero is below half the target
    s.draw("Ad").discard("Ad")
    # Side 1 is vulnerable: jacks 30 alone are short, the run and four jacks are 95.
    s.draw("Th").meld("Jc Jd Js")
    refused(s, "vulnerable.opening_too_low", ("75",), "discard", "Jh")
    s.meld("3h 4h 5h 6h 7h 8h 9h Th").layoff(0, "Jh").go_out()
    # Side 1: four jacks 40, run 3..10 = 5*5 + 10*3 = 55; clean 200; out 50; a
    # relancinho (nothing laid before): 100. Side 0 holds its 90.
    side1 = 40 + 55 + 200 + 50 + 100
    assert spec_points("classic", HAND0) == 90
    s.end_hand("went_out", (-90, side1))
    assert s.state.totals == (-290, 1400 + side1)
    assert s.state.phase == "decided" and s.state.winner == 1
    refused(s, "score.mismatch", ("recorded totals",), "end_match", totals=(0, 1400 + side1))
    s.end_match(totals=(-290, 1400 + side1), winner=1)


def _stock_out(s: Scenario) -> None:
    while len(s.state.stock) > s.rules.stock_floor:
        s.pass_turn()


@pytest.mark.parametrize(("knobs", "penalty"), [
    ({}, 0),
    ({"bonuses": {"morto_not_taken": 100}}, 100),
])
def test_classic_with_a_morto_charges_for_it_only_when_the_house_rules_say(
        knobs: dict[str, Any], penalty: int) -> None:
    s = Scenario("classic", hands={0: HAND0}, morto=True, player_counts=(2, 3, 4), **knobs)
    assert s.rules.morto and len(s.state.mortos) == 2
    _stock_out(s)
    hands = [spec_points("classic", s.hand(seat)) for seat in (0, 1)]
    right = (-hands[0] - penalty, -hands[1] - penalty)
    wrong = (-hands[0] - (100 - penalty), -hands[1] - (100 - penalty))
    refused(s, "score.mismatch", ("side 0",), "end_hand", "stock_out", wrong)
    s.end_hand("stock_out", right)
    assert all(x.morto_penalty == penalty for x in s.state.results[0].scores)


def test_biriba_three_players_a_stock_out_leaves_every_side_below_zero() -> None:
    s = Scenario("biriba", 3, hands={0: HAND0})
    _stock_out(s)
    totals = tuple(-spec_points("biriba", s.hand(seat)) - 100 for seat in range(3))
    assert all(t < -100 for t in totals)
    s.end_hand("stock_out", totals)
    assert s.state.totals == totals and s.state.phase == "between"
