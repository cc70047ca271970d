"""kill -9 at random points: every acknowledged event is in its log after the crash.

Each run starts a recorder process in the same directory (so every run after the first is a
restart after a crash: temporary files swept, torn tails cut, matches reloaded), lets it record
for a random time and kills it with SIGKILL. The acks it printed are then checked against the
logs: an acked event that is not on disk is a lost event, and there must be none.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from buraco_log import log
from tests.recorder.sources import matches, on_disk, source_of

ROOT = Path(__file__).resolve().parents[2]


def _kill_runs(tmp_path: Path, runs: int, seed: int) -> tuple[int, int, int]:
    """Returns (events acknowledged, acknowledged events lost, matches a restart loaded from
    a saved state)."""
    rng = random.Random(seed)
    directory = tmp_path / "logs"
    directory.mkdir()
    sources = matches()
    acked_total = lost = resumed = 0
    for run in range(runs):
        out_path = tmp_path / f"acks{run}.txt"
        with open(out_path, "wb") as out:
            child = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tests.recorder.crash_child",
                    str(directory),
                    "24",
                    "4",
                    str(run),
                ],
                cwd=ROOT,
                stdout=out,
                stderr=subprocess.PIPE,
            )
            deadline = time.monotonic() + 30
            while b"ready" not in out_path.read_bytes() and child.poll() is None:
                assert time.monotonic() < deadline, "the recorder process did not start"
                time.sleep(0.005)
            time.sleep(rng.uniform(0.0, 0.4))
            child.send_signal(signal.SIGKILL)
            _, err = child.communicate(timeout=30)
        lines = out_path.read_text().splitlines()
        assert child.returncode in (-signal.SIGKILL, 0), err.decode()
        latest: dict[str, int] = {}
        for line in lines:
            if line.startswith("ready"):
                resumed += int(line.split()[1])
                continue
            if line == "done":
                continue
            name, text = line.split()
            latest[name] = max(latest.get(name, -1), int(text))
            acked_total += 1
        for name, seq in latest.items():
            kept = on_disk(str(directory / f"{name}.blog"))
            lost += max(0, seq + 1 - len(kept))
            assert kept == list(source_of(name, sources)[: len(kept)])
        for path in directory.glob("*.blog"):
            log.verify(path)  # torn tails are allowed; damage raises
    return acked_total, lost, resumed


def test_kill_9_at_random_points_loses_no_acknowledged_event(tmp_path: Path) -> None:
    acked, lost, _ = _kill_runs(tmp_path, runs=4, seed=5)
    assert acked > 0
    assert lost == 0


@pytest.mark.slow
def test_kill_9_at_200_random_points_loses_no_acknowledged_event(tmp_path: Path) -> None:
    acked, lost, resumed = _kill_runs(tmp_path, runs=200, seed=200)
    print(f"kill -9 runs: 200, acknowledged events: {acked}, lost: {lost}, "
          f"matches loaded from a saved state after a kill: {resumed}")
    assert acked > 10000
    assert lost == 0
    assert resumed > 0  # the restarts after kills went through saved states too
