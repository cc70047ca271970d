"""Fault probes, archive: a query's time limit and the wait at the readers' gate (a writer
waiting for a reader, and the command line, in processes of its own, asked for a short
limit)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from buraco_log.archive import ingest, store
from tests.archive.conftest import Corpus

ROOT = Path(__file__).resolve().parents[2]

def cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "cli", *args], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.fixture(scope="module")
def two_batches(corpus: Corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two batches of one match each: a compact merges them. Read only."""
    site = tmp_path_factory.mktemp("two47") / "site"
    for log in corpus.good[:2]:
        assert ingest([log], site, jobs=1).added == 1
    return site


@pytest.fixture
def site(two_batches: Path, tmp_path: Path) -> Path:
    shutil.copytree(two_batches, tmp_path / "site")
    return tmp_path / "site"


def gate_held(site: Path) -> bool:
    fd = os.open(site / store.BATCHES, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


@contextlib.contextmanager
def writer_at_the_gate(site: Path, wait: float) -> Iterator[None]:
    """A writer's wait for the readers (compact's and drop's, before they remove files): a
    reader is in (the readers' lock shared), and the writer holds the gate while it waits
    ``wait`` s for that reader to go."""
    reader = os.open(site / store.READERS, os.O_RDONLY)
    fcntl.flock(reader, fcntl.LOCK_SH)

    def write() -> None:
        with store._readers_gone(str(site), wait):
            pass

    writer = threading.Thread(target=write)
    try:
        writer.start()
        deadline = time.monotonic() + 10
        while not gate_held(site):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        yield
    finally:
        os.close(reader)
        writer.join()


def test_a_query_and_a_report_waiting_at_the_gate_stop_within_their_time_limit(
        site: Path) -> None:
    """Before: the limit started after the gate: `--timeout 1` waited out compact's wait
    (up to 8 s), then ran and succeeded."""
    with writer_at_the_gate(site, 6.0):
        t0 = time.monotonic()
        q = cli("query", str(site), "SELECT count(*) FROM matches", "--timeout", "1")
        r = cli("report", str(site), "--timeout", "1")
        (q_out, q_err), (r_out, r_err) = q.communicate(timeout=60), r.communicate(timeout=60)
        took = time.monotonic() - t0
        assert gate_held(site)  # the writer still waits: the limit ended them
    assert q.returncode == 1 and q_out == "", (q_out, q_err)
    assert q_err.strip() == ("buraco-log: error: query: stopped after the 1.0 s time limit "
                             "(waiting for a compact or drop to remove files)")
    assert r.returncode == 1 and r_out == "", (r_out, r_err)
    assert "report: stopped after the 1 s time limit (waiting for a compact" in r_err
    assert took < 4.5, took
