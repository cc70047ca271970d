"""The hand-built golden matches in examples/golden/ replay to the scores worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from buraco_log.errors import IllegalMoveError
from buraco_log.events import HandEnded
from buraco_log.jsonl import read_jsonl
from buraco_log.reducer import Replayer, replay
from tests.golden_matches import GOLDEN, events

GOLDEN_DIR = Path(__file__).resolve().parents[2] / "examples" / "golden"
EXPECTED = json.loads((GOLDEN_DIR / "expected.json").read_text())


def test_every_preset_has_a_golden_match() -> None:
    from buraco_log.rules import PRESETS

    assert set(EXPECTED) == set(PRESETS) == set(GOLDEN)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_golden_match_replays_to_the_hand_worked_scores(name: str) -> None:
    state = replay(read_jsonl(GOLDEN_DIR / f"{name}.jsonl"))
    want = EXPECTED[name]
    assert [[s.total for s in r.scores] for r in state.results] == want["hands"]
    assert list(state.totals) == want["totals"]
    assert state.winner == want["winner"] and state.phase == "over"
    assert state.rules is not None and state.rules.name == name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_committed_file_is_what_the_builder_makes(name: str) -> None:
    assert read_jsonl(GOLDEN_DIR / f"{name}.jsonl") == events(name), (
        "examples/golden is stale: run `python -m tests.golden_matches`"
    )


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_wrong_recorded_score_in_a_golden_match_is_caught(name: str) -> None:
    evs = read_jsonl(GOLDEN_DIR / f"{name}.jsonl")
    i = next(i for i, e in enumerate(evs) if isinstance(e, HandEnded))
    he = evs[i]
    assert isinstance(he, HandEnded) and he.scores is not None
    evs[i] = msgspec.structs.replace(he, scores=(he.scores[0] + 5, *he.scores[1:]))
    r = Replayer()
    with pytest.raises(IllegalMoveError) as info:
        for e in evs:
            r.step(e)
    assert info.value.rule == "score.mismatch" and info.value.seq == he.seq
