"""Fault probes, archive: readers that never stop overlapping (a dashboard whose queries run
back to back, the next one in before the last is out) held the readers' lock shared for good,
so compact, drop and ingest left the replaced files in place for ever ("left in place for the
queries still reading them"). A writer that would remove them now holds a gate that new
readers wait at, for a bounded time, until the readers already in are out."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from buraco_log.archive import ingest, query, store
from tests.archive.conftest import Corpus

ROOT = Path(__file__).resolve().parents[2]

# A dashboard: three threads, each running a real query and holding the readers' lock
# 0.6 s, started 0.2 s apart, so that at every instant one or more are reading; each line
# on stdout is a query's row count; it stops when stdin closes.
DASHBOARD = r"""
import sys, threading, time
from buraco_log.archive import store, views
root, stop, counts = sys.argv[1], threading.Event(), []
def run():
    while not stop.is_set():
        with store.reading(root):
            with views.open_query(root, "SELECT * FROM matches", bound=False, threads=1,
                                  batch_rows=4) as stream:
                n = sum(b.num_rows for b in stream)
            time.sleep(0.6)
        counts.append(n)
threads = [threading.Thread(target=run, daemon=True) for _ in range(3)]
for t in threads:
    t.start()
    time.sleep(0.2)
print("started", flush=True)
sys.stdin.read()
stop.set()
for t in threads:
    t.join()
print(*sorted(set(counts)), len(counts), flush=True)
"""


@pytest.fixture
def site(corpus: Corpus, tmp_path: Path) -> Path:
    """Two batches of one match each: a compact merges them."""
    site = tmp_path / "site"
    for log in corpus.good[:2]:
        assert ingest([log], site, jobs=1).added == 1
    return site


@pytest.fixture
def dashboard(site: Path) -> Iterator[subprocess.Popen[str]]:
    p = subprocess.Popen([sys.executable, "-c", DASHBOARD, str(site)], cwd=ROOT, text=True,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert p.stdout is not None
        assert p.stdout.readline() == "started\n", p.communicate()
        yield p
    finally:
        if p.poll() is None:
            p.kill()
        p.communicate()


def replaced_parts(site: Path) -> list[str]:
    kept = {rel for r in store.manifests(str(site)) for rels in r["files"].values()
            for rel in rels}
    return sorted(rel for p in site.rglob("part-*.parquet") if "_ratings" not in p.parts
                  and (rel := str(p.relative_to(site))) not in kept)


def test_a_compact_removes_its_files_while_readers_overlap_without_end(
        site: Path, dashboard: subprocess.Popen[str]) -> None:
    """Before: "4 replaced files left in place for the queries still reading them", every
    time, however long the compact waited."""
    c = subprocess.run([sys.executable, "-m", "cli", "compact", str(site)], cwd=ROOT,
                       text=True, capture_output=True, timeout=120)
    assert c.returncode == 0, c.stderr
    assert "merged 2 batches into 1" in c.stdout, c.stdout
    assert "left in place" not in c.stdout, c.stdout
    assert replaced_parts(site) == []
    assert not (site / "_batches" / f"{store.POSTPONED}{store.INTENT}").exists()
    out, err = dashboard.communicate("", timeout=60)
    assert dashboard.returncode == 0, err
    counts = out.split()
    assert counts[0] == "2" and len(counts) == 2 and int(counts[1]) > 3, out  # every row
    assert query(site, "SELECT count(*) AS n FROM matches").column("n").to_pylist() == [2]
