"""Fault probes, the audit table's scoring section: every scoring finding is one line naming
its seq and rule, as the other sections print theirs.

A hand end recording three scores for two sides, or a match end with wrong totals, was a
finding (exit 1) whose table showed no seq and no rule: the count mismatch was not shown at all
("1 with a wrong recorded score" and nothing under it), the totals line carried no seq or rule.
The expected numbers come from the log itself (the clean match's recorded hand scores, which
its own audit accepts), never from the audit's output.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

from buraco_log.events import AnyEvent, HandEnded, MatchEnded
from cli.main import app
from tests import brokenlogs as bl


@pytest.fixture(scope="module")
def clean() -> list[AnyEvent]:
    return bl.fair_match("thirteen-quick", 2, 1)


def _audit(path: Path) -> tuple[int, list[str]]:
    result = CliRunner().invoke(app, ["audit", str(path)])
    return result.exit_code, result.stdout.splitlines()


def _hand_ends(events: list[AnyEvent]) -> list[HandEnded]:
    return [e for e in events if isinstance(e, HandEnded)]


def test_a_hand_end_recording_a_score_too_many_is_shown_with_seq_and_rule(
        tmp_path: Path, clean: list[AnyEvent]) -> None:
    first = _hand_ends(clean)[0]
    assert first.scores is not None and len(first.scores) == 2
    bad = [msgspec.structs.replace(e, scores=(*first.scores, 0)) if e is first else e
           for e in clean]
    code, lines = _audit(bl.write(tmp_path / "three.log", bad))
    assert code == 1
    assert f"    seq {first.seq} [score.mismatch] hand 0: 3 scores recorded for 2 sides" in lines


def test_wrong_match_totals_are_shown_with_seq_and_rule(
        tmp_path: Path, clean: list[AnyEvent]) -> None:
    end = clean[-1]
    assert isinstance(end, MatchEnded)
    # the totals are the sums of the hands' recorded scores, per side
    ends = _hand_ends(clean)
    totals = [sum(e.scores[side] for e in ends if e.scores) for side in (0, 1)]
    bad = [*clean[:-1], msgspec.structs.replace(end, totals=(totals[0] + 50, totals[1]))]
    code, lines = _audit(bl.write(tmp_path / "totals.log", bad))
    assert code == 1
    assert (f"    seq {end.seq} [score.mismatch] match totals: recorded "
            f"[{totals[0] + 50}, {totals[1]}], recomputed [{totals[0]}, {totals[1]}]") in lines
    header = next(line for line in lines if line.startswith("  scoring "))
    assert header.endswith("the recorded match totals do not"), header


def test_a_wrong_side_score_names_seq_rule_and_its_recomputation(
        tmp_path: Path, clean: list[AnyEvent]) -> None:
    bad, seq = bl.with_wrong_score(clean, 35)
    first = _hand_ends(clean)[0]
    assert first.scores is not None
    right = first.scores[0]
    code, lines = _audit(bl.write(tmp_path / "score.log", bad))
    assert code == 1
    line = (f"    seq {seq} [score.mismatch] hand 0, side 0: recorded {right + 35}, recomputed "
            f"{right} (difference +35)")
    i = lines.index(line)
    # the recomputation follows it, ending with the recorded figure
    below = lines[i + 1:i + 10]
    assert any(x.split() == ["recomputed", str(right)] for x in below), below
    assert any(x.split()[:2] == ["recorded", str(right + 35)] for x in below), below


def test_a_clean_match_shows_no_scoring_finding(tmp_path: Path, clean: list[AnyEvent]) -> None:
    code, lines = _audit(bl.write(tmp_path / "clean.log", clean))
    assert code == 0
    assert not [x for x in lines if "[score." in x]
    assert "recorded scores agree with the recomputed ones" in "\n".join(lines)
