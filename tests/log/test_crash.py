"""kill -9 the writer at random points: no acknowledged event is ever lost.

The writer runs in a real process (``tests/log/killwriter.py``) appending to a log on disk with
fsync, and reports each acknowledgement on stdout. After SIGKILL the log must read (a torn tail
allowed) as a prefix of what was appended, holding at least every acknowledged event; after
``repair`` a new writer continues it.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from buraco_log import log
from tests.log.samples import sample_events

ROOT = Path(__file__).resolve().parents[2]
COUNT = 400


def _run_once(tmp: Path, run: int, rng: random.Random) -> tuple[int, int, bool]:
    """One writer killed at a random moment: (acknowledged, recovered, torn)."""
    path = tmp / f"kill{run}.blog"
    mode = "batched" if run % 3 == 2 else "durable"
    lines: list[str] = []
    with subprocess.Popen(
        [sys.executable, "-m", "tests.log.killwriter", str(path), str(run), str(COUNT), mode],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    ) as proc:
        out = proc.stdout
        assert out is not None
        if out.readline() != "open\n":  # the log exists; now let it write for a while
            raise AssertionError("the writer did not start")
        reader = threading.Thread(target=lambda: lines.extend(out), daemon=True)
        reader.start()
        time.sleep(rng.uniform(0, 0.15))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        reader.join()
    acked = -1
    for line in lines:
        if line.startswith("ack "):
            acked = int(line.split()[1])
    events = sample_events(COUNT, run)
    info = log.verify(path)
    got = log.read_events(path, allow_torn=True)
    assert got == events[: len(got)], "the recovered log is not a prefix of what was appended"
    assert len(got) >= acked + 1, f"lost acknowledged events: {acked + 1} acked, {len(got)} kept"
    if info.torn is not None:
        report = log.repair(path)
        assert report is not None and report.events_kept == len(got)
    with log.Writer(path, validate=False) as w:  # the match goes on after recovery
        w.append_many(events[len(got) : len(got) + 3])
    assert log.read_events(path) == events[: len(got) + 3]
    return acked + 1, len(got), info.torn is not None


def _runs(tmp: Path, n: int, seed: int) -> None:
    rng = random.Random(seed)
    lost = 0
    for run in range(n):
        acked, kept, _ = _run_once(tmp, run, rng)
        lost += max(0, acked - kept)
    assert lost == 0


def test_kill_9_during_appends_never_loses_an_acknowledged_event(tmp_path: Path) -> None:
    _runs(tmp_path, 9, seed=1)  # a third of them batched; 200 under -m slow


@pytest.mark.slow
def test_kill_9_two_hundred_times_never_loses_an_acknowledged_event(tmp_path: Path) -> None:
    _runs(tmp_path, 200, seed=2)
