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


def test_bots_find_a_move_when_the_pile_top_can_be_used_only_after_another_lay() -> None:
    # Under must-use-top the pile may be taken when a lay-off that makes a canastra must come
    # before the top is laid (round 39's ruling); the bots' quick list held only the ways to
    # lay the top now, so it was empty, and simulate said "no legal move at seq 96 (play)"
    from buraco_log.moves import quick_moves
    from buraco_log.reducer import states
    from buraco_log.rules import preset

    events = simulate.simulate_match(preset("thirteen-quick"), 4, seed="s2", index=1,
                                     bots=("heuristic", "random"))
    pending = [s for s in states(events) if s.phase == "play" and s.pile_top is not None]
    assert pending  # the match takes must-use-top piles
    assert all(quick_moves(s) for s in pending)
