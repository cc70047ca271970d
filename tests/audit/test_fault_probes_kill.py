"""Fault probes, `audit DIR -j 2` killed by SIGKILL while its workers audit: no worker
outlives it holding the caller's pipe (a `| cat` reading it never ended). Real processes."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "sim"

# The CLI with every worker's audit slowed down: the worker writes its pid to the file named
# by argv[1], then sleeps, so the test can kill the audit while its workers are busy.
SLOW_WORKERS = """
import importlib, os, sys, time
mod = importlib.import_module("buraco_log.audit")
marker, real = sys.argv[1], mod._audit_safely
def _audit_safely(*args, **kwargs):
    with open(marker, "a") as f:
        f.write(f"{os.getpid()}\\n")
    time.sleep(30)
    return real(*args, **kwargs)
mod._audit_safely = _audit_safely
sys.argv = ["buraco-log", *sys.argv[2:]]
from cli.main import run
run()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG")
def test_an_audit_killed_while_its_workers_run_leaves_no_worker_holding_its_pipes(
        tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for p in sorted(EXAMPLES.glob("*.blog"))[:8]:
        shutil.copy(p, logs)
    marker = tmp_path / "workers"
    p = subprocess.Popen([sys.executable, "-c", SLOW_WORKERS, str(marker), "audit", str(logs),
                          "-j", "2"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not (marker.exists() and marker.read_text().endswith("\n")):
            assert p.poll() is None and time.monotonic() < deadline, "no worker started"
            time.sleep(0.05)
        workers = [int(w) for w in marker.read_text().split()]
        p.kill()
        try:
            p.communicate(timeout=15)  # ends only when no worker holds the pipes any more
        except subprocess.TimeoutExpired:
            pytest.fail("a worker of the killed audit still holds its stdout and stderr")
        assert p.returncode == -signal.SIGKILL
    finally:
        with contextlib.suppress(ProcessLookupError):
            p.kill()
        p.wait()
        for w in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(w, signal.SIGKILL)
