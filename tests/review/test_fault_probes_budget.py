"""Fault probes of `review`'s numbers: a budget that would search for days, a time cap of
hours, digits that are not ASCII, a threshold that is not a finite number. Each is refused at
once (exit 2, one line naming the option; with `-f json` one JSON error on stdout), before the
log is searched. Real subprocesses with a timeout, so a review that runs on fails the test."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from buraco_log.expert import DEFAULT_BUDGET, MAX_WORK, Budget, budget_work, parse_budget

EXE = shutil.which("buraco-log")
GOOD = Path(__file__).resolve().parents[2] / "examples" / "sim" / "classic-2p-000000.blog"


@pytest.mark.parametrize("text", [
    "100000x1000r1000",  # taken: years of search
    "100000", "5000x20r0", "4801x5r3", "100000x1000/0ms", "8/10001ms", "8/99999999999999999999ms",
    "２", "8x٣", "96 x5",
])
def test_a_budget_that_would_search_for_hours_or_is_not_ascii_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="budget"):
        parse_budget(text)


@pytest.mark.parametrize(("text", "want"), [
    ("4800x5r3", Budget(4800, 5, 3)),  # the most search allowed at 5 candidates, 3 rounds
    ("300x30r0", Budget(300, 30, 0)),
    ("100000x5/500ms", Budget(100000, 5, 3, 500)),  # the time cap bounds the samples
    ("8/10000ms", Budget(8, 5, 3, 10000)),
])
def test_the_largest_budgets_allowed_are_read(text: str, want: Budget) -> None:
    assert parse_budget(text) == want


def test_the_bound_is_fifty_times_the_default() -> None:
    assert budget_work(DEFAULT_BUDGET) * 50 == MAX_WORK


def run(*args: object) -> subprocess.CompletedProcess[str]:
    assert EXE is not None
    return subprocess.run([EXE, *map(str, args)], capture_output=True, text=True, timeout=30,
                          env=dict(os.environ, COLUMNS="200"))


@pytest.mark.skipif(EXE is None, reason="buraco-log is not installed")
@pytest.mark.parametrize(("option", "value", "needle"), [
    ("--budget", "100000x1000r1000", "the search would run for hours"),
    ("--budget", "8/86400000ms", "ms 1-10000"),
    ("--threshold", "inf", "--threshold inf: out of range; give hand points"),
])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_review_refuses_at_once_with_one_line(tmp_path: Path, option: str, value: str,
                                              needle: str, fmt: str) -> None:
    out = tmp_path / "review.txt"
    r = run("review", GOOD, "--seat", "0", option, value, "-f", fmt, "-o", out)
    assert "Traceback" not in r.stderr
    assert r.returncode == 2, r
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("buraco-log: error: "), lines
    assert needle in lines[0], lines[0]
    if fmt == "json":  # stdout is JSON on failure too (a threshold of inf gave "Infinity")
        assert json.loads(r.stdout)["error"]["exit_status"] == 2
    else:
        assert r.stdout == ""
    assert not out.exists()
