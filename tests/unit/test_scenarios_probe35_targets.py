"""Probe 35, every preset's target score (RULES.md §10) reached, or missed by five points, in
one hand that a side closes in a single turn (two for `burako`, whose morto is taken only
indirectly).

RULES.md §10: "It ends after the hand in which a side reaches `target_score` (`classic`
family 1500, `thirteen` 2005, `thirteen-quick` 1005, `burraco` 2005, `mega` and `burako`
... 3000 and 3000)". The match is carried in just below the target (`TotalsCarried`), so the
one hand decides it. Every hand score is worked out by hand from RULES.md §9's tables, never
read from the engine, and is also refused one reading off (`score.mismatch`).
"""

from __future__ import annotations

import pytest

from tests.scenario import refused
from tests.spec_points import spec_points
from tests.unit.closing_hands import HAND1, HAND1_13, MORTO0, SIDE0, closing_hand

TARGETS = {"classic": 1500, "biriba": 1500, "bossa-nova": 1500, "thirteen": 2005,
           "thirteen-quick": 1005, "burraco": 2005, "mega": 3000, "burako": 3000}


def test_the_hands_held_are_what_rules_md_counts() -> None:
    assert spec_points("classic", HAND1) == 95
    assert spec_points("thirteen", HAND1_13) == 105
    assert spec_points("burako", MORTO0) == 30 + 40 + 45 + 5


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_reaching_the_target_exactly_ends_the_match(name: str) -> None:
    target = TARGETS[name]
    s, scores = closing_hand(name, (target - SIDE0[name], target - 1))
    refused(s, "score.mismatch", ("side 0",), "end_hand", "went_out",
            (scores[0] + 50, scores[1]))
    s.end_hand("went_out", scores)
    after = (target, target - 1 + scores[1])
    assert s.state.totals == after
    assert s.state.phase == "decided" and s.state.winner == 0
    refused(s, "match.wrong_winner", ("side 0 won",), "end_match", winner=1)
    s.end_match(totals=after, winner=0)
    final = s.state
    assert final.phase == "over"


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_five_points_short_of_the_target_the_match_goes_on(name: str) -> None:
    target = TARGETS[name]
    s, scores = closing_hand(name, (target - SIDE0[name] - 5, target - 1))
    s.end_hand("went_out", scores)
    assert s.state.totals == (target - 5, target - 1 + scores[1])
    assert s.state.phase == "between" and s.state.winner is None
    refused(s, "match.not_over", (f"target {target}",), "end_match")
