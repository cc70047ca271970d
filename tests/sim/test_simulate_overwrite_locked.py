"""``simulate --overwrite`` never replaces a log a writer holds (a recorder's live table whose
name a simulated match shares): renaming over it took every event the writer had
acknowledged from the log's name."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from buraco_log import log
from buraco_log.errors import LogFormatError
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match, write_match


def _simulate(out: Path, seed: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cli", "simulate", "--rules", "classic", "--players", "2",
         "--matches", "2", "--seed", seed, "-o", str(out), "--no-progress", *extra],
        capture_output=True, text=True, timeout=120)


def test_overwrite_refuses_a_log_a_writer_holds_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert _simulate(out, "a").returncode == 0
    names = sorted(os.listdir(out))
    before = {n: (out / n).read_bytes() for n in names}
    with log.LogLock(out / names[1]):  # the second: the first must not be written either
        done = _simulate(out, "b", "--overwrite")
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert f"{out / names[1]}: a writer holds this log" in done.stderr
    assert {n: (out / n).read_bytes() for n in sorted(os.listdir(out))} == before
    assert _simulate(out, "b", "--overwrite").returncode == 0  # free again: replaced
    assert (out / names[1]).read_bytes() != before[names[1]]


def test_write_match_replaces_only_under_the_writer_lock(tmp_path: Path) -> None:
    events = simulate_match(PRESETS["classic"], 2, seed="w", index=0)
    path = tmp_path / "m.blog"
    write_match(path, events)
    whole = path.read_bytes()
    with log.LogLock(path), pytest.raises(LogFormatError) as caught:  # taken in between
        write_match(path, simulate_match(PRESETS["classic"], 2, seed="v", index=0))
    assert caught.value.kind == "locked"
    assert path.read_bytes() == whole and os.listdir(tmp_path) == ["m.blog"]
