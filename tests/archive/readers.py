"""Readers and writers of one archive at once: a reader process held mid-query, and the part
files a compaction or a drop replaced (helpers of the readers' lock probes)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
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
