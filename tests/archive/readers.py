"""Readers and writers of one archive at once: a reader process held mid-query, the part
files a compaction or a drop replaced, and a writer waiting at the readers' gate (helpers of
the readers' lock probes)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from buraco_log.archive import store

ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def started(script: str, *args: str) -> Iterator[subprocess.Popen[str]]:
    """``python -c script args``, once it has said "started" (its first rows read, its lock
    held); killed at the end if it still runs."""
    p = subprocess.Popen([sys.executable, "-c", script, *args], cwd=ROOT, text=True,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert p.stdout is not None
        assert p.stdout.readline() == "started\n", p.communicate()
        yield p
    finally:
        if p.poll() is None:
            p.kill()
        p.wait()
        for f in (p.stdin, p.stdout, p.stderr):
            if f is not None:
                f.close()


def replaced_parts(site: Path) -> list[str]:
    """The part files no committed batch names any more (a compaction's or a drop's)."""
    kept = {rel for r in store.manifests(str(site)) for rels in r["files"].values()
            for rel in rels}
    return sorted(rel for p in site.rglob("part-*.parquet") if "_ratings" not in p.parts
                  and (rel := str(p.relative_to(site))) not in kept)


def gate_held(site: Path) -> bool:
    """Whether a writer holds the readers' gate (a shared try fails)."""
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
