"""The instruction-count benchmark's stages still run against the current API.

Counting needs valgrind, which the test machine may lack; the stage code itself runs here
(the script's child mode, the part valgrind would watch) on two example logs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from buraco_log.log import read_events

REPO = Path(__file__).resolve().parents[2]
LOGS = sorted(str(p) for p in (REPO / "examples" / "sim").glob("thirteen-quick-*.blog"))


@pytest.mark.parametrize("stage", ["read", "replay", "provenance", "flatten", "chunk",
                                   "transfer", "ingest",
                                   pytest.param("imports", marks=pytest.mark.slow)])
def test_every_stage_of_count_instructions_runs(stage: str, tmp_path: Path) -> None:
    assert len(LOGS) == 2
    paths = tmp_path / "paths.txt"
    paths.write_text("\n".join(LOGS))
    out = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "count_instructions.py"), "--child", stage,
         "cold", str(paths), "--memo-limit", "50"],  # a small memo: eviction runs too
        capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout.split()[-1]) == sum(len(read_events(p)) for p in LOGS)
    if stage == "transfer":  # this tree packs its chunks: the stage must send them that way
        assert "transfer: Arrow IPC" in out.stderr
