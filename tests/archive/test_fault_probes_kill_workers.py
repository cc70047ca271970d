"""Fault probes, an ingest with worker processes killed by SIGKILL while its workers check
logs, then run again at once: the workers die with it, the lock is free, and the rows equal a
clean ingest's. Real processes, under timeouts."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import ingest
from tests.archive.conftest import Corpus
from tests.archive.ingest_sums import checksums

ROOT = Path(__file__).resolve().parents[2]

# The CLI with every worker's chunk check slowed down: the worker writes its pid to the file
# named by argv[1], then sleeps before checking, so the test can kill the ingest mid-run.
SLOW_WORKERS = """
import importlib, os, sys, time
mod = importlib.import_module("buraco_log.archive.ingest")
marker, real = sys.argv[1], mod.check_chunk_packed
def check_chunk_packed(*args, **kwargs):
    with open(marker, "a") as f:
        f.write(f"{os.getpid()}\\n")
    time.sleep(30)
    return real(*args, **kwargs)
check_chunk_packed.__qualname__ = "check_chunk_packed"
mod.check_chunk_packed = check_chunk_packed
sys.argv = ["buraco-log", *sys.argv[2:]]
from cli.main import run
run()
"""


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except OSError:
        return False


@pytest.fixture
def logs(corpus: Corpus, tmp_path: Path) -> Path:
    d = tmp_path / "logs"
    d.mkdir()
    for p in corpus.good[:8]:
        shutil.copy(p, d)
    return d


@pytest.fixture
def reference(logs: Path, tmp_path: Path) -> dict[str, Any]:
    arch = tmp_path / "ref"
    ingest([str(logs)], arch)
    return checksums(arch)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, PR_SET_PDEATHSIG")
def test_an_ingest_killed_while_its_workers_check_can_be_run_again_at_once(
        logs: Path, reference: dict[str, Any], tmp_path: Path) -> None:
    """Before: the workers outlived the killed ingest (waiting for work for ever) and held its
    flock, shared by the fork, so the next ingest said "another ingest is running"."""
    arch, marker = tmp_path / "a", tmp_path / "workers"
    p = subprocess.Popen([sys.executable, "-c", SLOW_WORKERS, str(marker), "ingest", str(logs),
                          "--archive", str(arch), "--jobs", "2"], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not (marker.exists() and marker.read_text().endswith("\n")):
            assert p.poll() is None and time.monotonic() < deadline, "no worker started"
            time.sleep(0.05)
        workers = [int(w) for w in marker.read_text().split()]
        p.kill()
        _, err = p.communicate(timeout=15)  # ends only when no worker holds its pipes
        assert p.returncode == -signal.SIGKILL, err
        again = subprocess.run([sys.executable, "-m", "cli.main", "ingest", str(logs),
                                "--archive", str(arch), "--jobs", "2"], cwd=ROOT,
                               capture_output=True, text=True, timeout=120, check=False,
                               stdin=subprocess.DEVNULL)
        assert again.returncode == 0, again.stderr
        assert not [w for w in workers if alive(w)], "a worker outlived the killed ingest"
        assert checksums(arch) == reference
    finally:
        with contextlib.suppress(ProcessLookupError):
            p.kill()
        p.wait()
        for w in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(w, signal.SIGKILL)


def test_more_jobs_than_logs_start_no_more_workers_than_a_few_logs_each(logs: Path,
                                                                      tmp_path: Path) -> None:
    """Before: one worker per job asked for, whatever the number of logs (-j 1000, 1000
    processes)."""
    rep = ingest([str(logs)], tmp_path / "a", jobs=64)
    assert (rep.jobs, rep.added) == (2, 8)
