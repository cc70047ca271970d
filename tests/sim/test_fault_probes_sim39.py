"""Simulation probes, round 39: a match that never ends says why it may not."""

from __future__ import annotations

import pytest

from buraco_log import simulate
from buraco_log.rules import derive


def test_a_match_still_undecided_names_its_totals_and_target() -> None:
    # it said only "still undecided after 400 hands", which reads as a defect; house rules
    # with a one-card hand may simply never reach the target
    rules = derive("classic", target_score=50_000)
    with pytest.raises(simulate.SimulationError) as caught:
        simulate.simulate_match(rules, 2, seed="stall", max_hands=2)
    message = str(caught.value)
    assert "still undecided after 2 hands (totals " in message, message
    assert "target 50000" in message and "never reach the target" in message, message
