"""Fault probes of `review` (round 38): a budget of one candidate (only the move played was
searched, so every review said "0 decisions" with no word of why), SIGTERM during the search
(it killed the process without a word) and Ctrl-C, each one line naming the log with no output
file left, a seat with no decision yet, and the decision that ends a hand by stock
exhaustion."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from buraco_log import events as ev
from buraco_log.expert import Budget
from buraco_log.review import review_events
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match
from tests.command_line import sigint_default

ROOT = Path(__file__).resolve().parents[2]
GOOD = ROOT / "examples" / "sim" / "classic-2p-000000.blog"


def _cmd(*args: object) -> list[str]:
    return [sys.executable, "-m", "cli.main", "review", *map(str, args)]


def run(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_cmd(*args), capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"})


@pytest.mark.parametrize("budget", ["96x1", "4x1r0", "8x1/500ms"])
def test_a_budget_of_one_candidate_says_it_compares_nothing(budget: str) -> None:
    p = run(GOOD, "--seat", "0", "--budget", budget)
    assert p.returncode == 0 and "Traceback" not in p.stderr
    head = p.stdout.splitlines()[1]  # was "total: 0 decisions" with no word of why
    assert "with 1 candidate only the move played is searched" in head, head
    assert "seat 0 had no decision to review" in p.stdout


def test_two_candidates_review_decisions() -> None:
    p = run(GOOD, "--seat", "0", "--budget", "2x2r1", "-f", "json")
    assert p.returncode == 0 and json.loads(p.stdout)["decisions"] > 50


# The real review, touching a marker file when a decision's search begins (in a worker with
# -j 2): the signal then comes during the search, however long the start took.
SEARCHING = """
import pathlib, sys
from buraco_log import review
marker, real = pathlib.Path(sys.argv[1]), review.evaluate
def evaluate(task, budget):
    marker.touch()
    return real(task, budget)
review.evaluate = evaluate
sys.argv = ["buraco-log", *sys.argv[2:]]
from cli.main import run
run()
"""


@pytest.mark.parametrize(("sig", "jobs", "status", "word"), [
    (signal.SIGTERM, 1, 143, "terminated (SIGTERM)"),
    (signal.SIGTERM, 2, 143, "terminated (SIGTERM)"),
    (signal.SIGINT, 2, 130, "interrupted"),
])
def test_a_signal_during_the_search_is_one_line_and_leaves_no_output(
        tmp_path: Path, sig: signal.Signals, jobs: int, status: int, word: str) -> None:
    marker, folder = tmp_path / "searching", tmp_path / "out"
    folder.mkdir()
    out = folder / "r.html"
    child = subprocess.Popen(
        [sys.executable, "-c", SEARCHING, str(marker), "review", str(GOOD), "--seat", "0",
         "--budget", "64x5r3", "-j", str(jobs), "-f", "html", "-o", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, start_new_session=True,
        preexec_fn=sigint_default)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():  # the search under way (it takes a minute)
            assert child.poll() is None and time.monotonic() < deadline, child.communicate()
            time.sleep(0.02)
        os.killpg(child.pid, sig)  # the whole group, as a terminal's Ctrl-C or `timeout` does
        stdout, stderr = child.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    assert child.returncode == status, stderr  # SIGTERM: -15, no word
    assert stderr.count("\n") == 1 and f"{GOOD}: {word}" in stderr, stderr
    assert "no review was written" in stderr and stdout == ""
    assert list(folder.iterdir()) == []  # no page, no temporary file


def test_the_decision_that_ends_a_hand_by_stock_exhaustion_is_reviewed() -> None:
    for n in range(40):  # a seed whose first stock-out comes early
        events = list(simulate_match(PRESETS["bossa-nova"], 2, seed=f"x{n}"))
        end = next((e for e in events if isinstance(e, ev.HandEnded)
                    and e.reason == "stock_out"), None)
        if end is not None and end.seq < 600:
            break
    else:
        pytest.skip("no stock-out among the seeds tried")
    prefix = events[:end.seq + 1]
    seat = next(e.seat for e in reversed(prefix[:end.seq]) if hasattr(e, "seat"))
    seat = (seat + 1) % 2  # the seat whose turn found the stock empty
    review = review_events(prefix, seat, budget=Budget(4, 3, 1), seqs={end.seq})
    assert [m.seq for m in review.moves] == [end.seq]
    for m in review.moves:  # a choice: end the hand or take the pile
        assert m.kind == "draw" and m.played == "end the hand: the stock ran out"
        assert len(m.alternatives) >= 2
        assert any(a.move.startswith("take the pile") for a in m.alternatives)


@pytest.mark.parametrize("cut", [1, 2, 3])  # match started; hand dealt; seat 0 has drawn
def test_a_seat_with_no_decision_yet_is_told_so(tmp_path: Path, cut: int) -> None:
    from tests.brokenlogs import write

    events = list(simulate_match(PRESETS["classic"], 2, seed="p38"))[:cut]
    log = write(tmp_path / "m.blog", events)
    p = run(log, "--seat", "1", "--budget", "2x2r1")
    assert p.returncode == 0 and p.stderr == ""
    assert "seat 1 had no decision to review" in p.stdout  # was "total: 0 decisions" alone
    assert "total: 0 decisions" in p.stdout.splitlines()[-1]
