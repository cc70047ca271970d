"""Fault probes of `review` (round 55): a club checking a disputed review.

- One log, seat, seed and budget give the same text and JSON review bytes in a process of
  another hash seed, with ``--jobs 2`` instead of 1, and with the engine run from its ``.py``
  sources instead of the compiled copies.
- A review of a long match (thousands of events) under load, stopped by ``timeout`` (SIGTERM):
  status 143, its progress lines and one error line on stderr, no output file and no
  temporary file beside it, as docs/review.md says.
- A review with a time cap (``96x5r3/20ms``) named "96 samples" in its header, and under load
  its decisions searched 2 to 10 of them: the text said nothing of it. It now ends with a line
  saying how many decisions the cap cut short (the JSON has each move's ``samples``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from buraco_log.expert import Budget
from buraco_log.review import review_events, to_text
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match, write_match
from tests.pure_engine import PURE_PRELUDE

ROOT = Path(__file__).resolve().parents[2]

# The CLI in a child; with "pure" first, the engine's compiled modules come from their .py.
CHILD = PURE_PRELUDE + """
sys.argv = ["buraco-log", *sys.argv[3:]]
from cli.main import run
try:
    run()
finally:
    assert all(sys.modules[n].__file__.endswith(".py") == pure for n in names if n in sys.modules)
"""


def _review(log: Path, out: Path, fmt: str, *, hashseed: str, engine: str,
            jobs: int) -> bytes:
    env = {**os.environ, "PYTHONHASHSEED": hashseed, "PYTHONPATH": str(ROOT)}
    p = subprocess.run(
        [sys.executable, "-c", CHILD, str(ROOT), engine, "review", str(log), "--seat", "1",
         "--budget", "4x3r1", "--seed", "club55", "-f", fmt, "-j", str(jobs), "--no-progress",
         "-o", str(out)], capture_output=True, text=True, timeout=900, env=env, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    return out.read_bytes()


@pytest.mark.slow  # four reviews of a 4-player match, two of them on the plain-Python engine
def test_a_review_is_the_same_bytes_in_any_process_for_any_jobs_and_either_engine(
        tmp_path: Path) -> None:
    events = simulate_match(PRESETS["mega"], 4, seed="club55", bots=("random", "heuristic"))
    log = tmp_path / "m.blog"
    write_match(log, events[:500])
    for fmt in ("json", "text"):
        first = _review(log, tmp_path / f"a.{fmt}", fmt, hashseed="0", engine="compiled",
                        jobs=1)
        second = _review(log, tmp_path / f"b.{fmt}", fmt, hashseed="1", engine="pure", jobs=2)
        assert first == second, fmt
        assert b"decisions" in first


@pytest.mark.slow  # a review stopped after several seconds, while the CPUs are kept busy
def test_a_long_match_reviewed_under_load_and_stopped_by_timeout_is_one_line(
        tmp_path: Path) -> None:
    events = simulate_match(PRESETS["bossa-nova"], 3, seed="end55-0", bots=("random",))
    assert len(events) > 5000  # thousands of events, about 2,000 decisions for seat 0
    log, folder = tmp_path / "long.blog", tmp_path / "out"
    write_match(log, events)
    folder.mkdir()
    load = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        p = subprocess.run(
            ["timeout", "--preserve-status", "8", sys.executable, "-m", "cli.main", "review",
             str(log), "--seat", "0", "-j", "2", "--progress", "-o", str(folder / "r.json"),
             "-f", "json"], capture_output=True, text=True, timeout=300, cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)}, start_new_session=True)
    finally:
        for child in load:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signal.SIGKILL)
            child.wait()
    assert p.returncode == 128 + signal.SIGTERM, p.stderr
    lines = p.stderr.splitlines()
    errors = [ln for ln in lines if not ln.startswith("buraco-log: progress: review: ")]
    assert errors == [f"buraco-log: error: {log}: terminated (SIGTERM) during the search: "
                      "no review was written"], p.stderr
    assert lines[0].startswith("buraco-log: progress: review: 0/"), p.stderr
    assert list(folder.iterdir()) == []  # no review, no temporary file
    assert '"exit_status": 143' in p.stdout  # the JSON error object, as every command's


def test_a_review_whose_time_cap_cut_the_search_short_says_so_in_its_text() -> None:
    events = simulate_match(PRESETS["thirteen-quick"], 2, seed="cap55")[:40]
    capped = review_events(events, 0, budget=Budget(samples=4000, candidates=2, rounds=1, ms=1))
    assert capped.decisions > 2
    last = to_text(capped).splitlines()[-1]
    # the header said "4000 samples ..., at most 1 ms per decision" and nothing said that
    # each decision searched a handful of them
    fewest = min(m.samples for m in capped.moves)
    assert last.startswith(f"time cap: {capped.decisions} of {capped.decisions} decisions "
                           f"searched fewer than 4000 samples (fewest {fewest}, median "), last
    assert "not reproducible" in last
    plain = review_events(events, 0, budget=Budget(samples=2, candidates=2, rounds=1))
    assert to_text(plain).splitlines()[-1].startswith("total: ")
