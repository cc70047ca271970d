"""Fault probes of the CLI, round 36: an archive whose marker is no regular file, given to
`verify`; a thread count DuckDB would refuse, given to `query`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True,
                          text=True, timeout=60, cwd=REPO)


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_verify_names_an_archive_marker_that_is_no_regular_file(
        tmp_path: Path, kind: str) -> None:
    """Before: `verify DIR` with a FIFO archive.json said 'DIR: not a regular file (a
    directory)', of the directory, as if it had been given as a log."""
    marker = tmp_path / "archive.json"
    if kind == "fifo":
        os.mkfifo(marker)
    else:
        marker.mkdir()
    r = _run("verify", str(tmp_path))
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.splitlines() == [
        f"buraco-log: error: {marker}: the archive's marker is not a regular file; restore it "
        "from a backup"]


def test_a_thread_count_above_duckdbs_is_a_usage_error(tmp_path: Path) -> None:
    """Before: `query --threads 1025` passed the option check and failed later, exit 1."""
    r = _run("query", str(tmp_path), "SELECT 1", "--threads", "1025")
    assert r.returncode == 2 and r.stdout == ""
    assert "--threads" in r.stderr and "1024" in r.stderr and len(r.stderr.splitlines()) == 1
