"""The generator id a simulated log records: one id and one seed make one match.

The expert's leaving the pile (its fourth draw in a row with the stock unchanged) changed its
matches, yet they kept recording ``buraco_log.simulate/v3``: two logs of one seed, one bots line
and one generator id could differ.
"""

from __future__ import annotations

import pytest

import buraco_log.expert as expert
from buraco_log.rules import PRESETS
from buraco_log.simulate import GENERATOR, generator_of, simulate_match

# burraco, 2 players, seed "10": the expert at 1x2r1 leaves the pile here, and without that
# rule it plays another match (453 events against 480)
BOTS = ("expert:1x2r1", "heuristic")


def _generator(bots: tuple[str, ...]) -> str:
    ev = simulate_match(PRESETS["thirteen-quick"], 2, seed="g", bots=bots)  # a short match
    return str(ev[0].metadata["generator"])  # type: ignore[union-attr]


def test_a_match_with_an_expert_seat_records_the_id_of_the_expert_that_leaves_the_pile() -> None:
    assert _generator(("expert:1x2r1", "heuristic")) == "buraco_log.simulate/v4" == GENERATOR


def test_matches_of_bots_whose_play_did_not_change_keep_their_id_and_bytes() -> None:
    assert _generator(("heuristic", "random")) == "buraco_log.simulate/v3"
    assert generator_of(["heuristic"]) == "buraco_log.simulate/v3"
    assert generator_of(["random", "expert:16x4"]) == "buraco_log.simulate/v4"


@pytest.mark.slow
def test_the_expert_match_under_the_old_play_differs_so_it_may_not_share_the_old_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = simulate_match(PRESETS["burraco"], 2, seed="10", bots=BOTS)
    monkeypatch.setattr(expert, "STALL_DRAWS", 10**9)  # the expert as v3 played
    before = simulate_match(PRESETS["burraco"], 2, seed="10", bots=BOTS)
    assert now != before
    assert now[0].metadata["generator"] != "buraco_log.simulate/v3"  # type: ignore[union-attr]
