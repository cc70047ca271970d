"""Fault probes, archive: readers that never stop overlapping (a dashboard whose queries run
back to back, the next one in before the last is out) held the readers' lock shared for good,
so compact, drop and ingest left the replaced files in place for ever ("left in place for the
queries still reading them"). A writer that would remove them now holds a gate that new
readers wait at, for a bounded time, until the readers already in are out."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from buraco_log.archive import ingest, query, store
from buraco_log.archive.compact import compact
from tests.archive.conftest import Corpus
from tests.archive.readers import replaced_parts, started

ROOT = Path(__file__).resolve().parents[2]

# A dashboard: two threads running real queries, each holding the readers' lock until the
# other's next query has taken it (or 2 s have passed), so that one is always reading: the next
# query in before the last is out. Each line on stdout is a query's row count; it stops when
# stdin closes.
DASHBOARD = r"""
import sys, threading
from buraco_log.archive import store, views
root, stop, counts = sys.argv[1], threading.Event(), []
turn = threading.Condition()
entered = [0]
def run():
    while not stop.is_set():
        with store.reading(root):
            with turn:
                entered[0] += 1
                mine = entered[0]
                turn.notify_all()
            with views.open_query(root, "SELECT * FROM matches", bound=False, threads=1,
                                  batch_rows=4) as stream:
                counts.append(sum(b.num_rows for b in stream))
            with turn:
                turn.wait_for(lambda: entered[0] > mine or stop.is_set(), timeout=2.0)
threads = [threading.Thread(target=run, daemon=True) for _ in range(2)]
for t in threads:
    t.start()
with turn:
    turn.wait_for(lambda: entered[0] >= 10)  # past the first, slower queries
print("started", flush=True)
sys.stdin.read()
stop.set()
for t in threads:
    t.join()
print(*sorted(set(counts)), len(counts), flush=True)
"""


@pytest.fixture
def site(two_batches: Path, tmp_path: Path) -> Path:
    shutil.copytree(two_batches, tmp_path / "site")
    return tmp_path / "site"


@pytest.fixture
def dashboard(site: Path) -> Iterator[subprocess.Popen[str]]:
    with started(DASHBOARD, str(site)) as p:
        yield p


def test_a_compact_removes_its_files_while_readers_overlap_without_end(
        site: Path, dashboard: subprocess.Popen[str]) -> None:
    """Before: "4 replaced files left in place for the queries still reading them", every
    time, however long the compact waited."""
    done = compact(str(site))
    assert (done.batches_before, done.postponed) == (2, [])
    assert replaced_parts(site) == []
    assert not (site / "_batches" / f"{store.POSTPONED}{store.INTENT}").exists()
    out, err = dashboard.communicate("", timeout=60)
    assert dashboard.returncode == 0, err
    counts = out.split()
    assert counts[0] == "2" and len(counts) == 2 and int(counts[1]) > 3, out  # every row
    assert query(site, "SELECT count(*) AS n FROM matches").column("n").to_pylist() == [2]


# -- -o over an existing file --------------------------------------------------------------------

@pytest.mark.parametrize(("command", "mode"), [
    (["report", "--format", "json"], 0o600),
    (["query", "SELECT game_id FROM matches", "--format", "csv"], 0o640),
])
def test_an_output_written_again_keeps_the_mode_of_the_file_it_replaces(
        site: Path, tmp_path: Path, command: list[str], mode: int) -> None:
    """The file is replaced whole (a temporary renamed over it), and keeps its mode. Before:
    0644 whatever it was, so a report kept private was readable by every user."""
    out = tmp_path / "out.txt"
    out.write_text("the old one\n")
    out.chmod(mode)
    r = subprocess.run([sys.executable, "-m", "cli", command[0], str(site), *command[1:],
                        "-o", str(out)], cwd=ROOT, text=True, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert out.stat().st_mode & 0o777 == mode
    assert "the old one" not in out.read_text() and out.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt", "site"]  # no temporary


@pytest.mark.slow  # the case above is the quick one; this one waits for a gap twice
def test_an_ingest_removes_the_files_left_for_readers_that_never_stop_overlapping(
        site: Path, dashboard: subprocess.Popen[str], corpus: Corpus,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: an ingest tried once, found a reader (there always is one), and left them."""
    monkeypatch.setattr(store, "WRITER_WAIT", 0.05)  # a compact that waits too little
    assert compact(str(site)).postponed
    monkeypatch.setattr(store, "WRITER_WAIT", 5.0)
    again = ingest([corpus.good[0]], site, jobs=1)
    assert (again.added, again.recovered) == (0, [])  # no interrupted run: nothing said
    assert store.postponed_parts(str(site)) == [] and replaced_parts(site) == []
    assert not (site / "_batches" / f"{store.POSTPONED}{store.INTENT}").exists()
    out, err = dashboard.communicate("", timeout=60)
    assert dashboard.returncode == 0 and out.split()[0] == "2", (out, err)


# -- a damaged part that a query's error does not name -------------------------------------------

def test_a_part_whose_flipped_bit_arrow_still_decodes_is_found_by_its_fingerprint(
        site: Path) -> None:
    """A query failing on a damaged part in words that name no file ("TProtocolException:
    Invalid data") has the part looked for: Arrow reading each through found none when Arrow
    decoded the flipped bit (DuckDB did not), and the line named no file. Now the parts'
    fingerprints are compared too."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    from buraco_log.archive.views import find_damaged

    part = next((site / "events").rglob("part-*.parquet"))
    data = bytearray(part.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little")
    rng = random.Random(46)
    for _ in range(500):  # a flip in a data page that Arrow reads through
        pos = rng.randrange(4, len(data) - 8 - footer)
        flipped = bytearray(data)
        flipped[pos] ^= 1 << rng.randrange(8)
        part.write_bytes(flipped)
        try:
            pq.read_table(part)
        except Exception:  # Arrow finds this one itself: not the case here
            continue
        break
    else:
        pytest.skip("no flip that Arrow reads through")
    # as a bit rotted on the medium: no newer time (one written over is read back first)
    batch = part.name.removeprefix("part-").removesuffix(".parquet")
    before = (site / "_batches" / f"{batch}.json").stat().st_mtime_ns - 10**9
    os.utime(part, ns=(before, before))
    found = find_damaged(str(site))
    assert found is not None and found[0] == str(part), found
    assert "its bytes changed since batch" in found[1]


def test_verify_says_how_many_bytes_the_files_left_for_readers_hold(
        site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: only how many files ("11 leftover files ..."), not the space they keep."""
    monkeypatch.setattr(store, "WRITER_WAIT", 0.05)
    with store.reading(str(site)):  # a query still reading: compact leaves its files
        left = compact(str(site)).postponed
    assert left
    held = sum((site / rel).stat().st_size for rel in left) + (
        site / "_batches" / f"{store.POSTPONED}{store.INTENT}").stat().st_size
    r = subprocess.run([sys.executable, "-m", "cli", "verify", str(site)], cwd=ROOT, text=True,
                       capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert f"; {len(left) + 1} leftover files ({held:,} bytes) of an interrupted run, or left " \
        "for the queries that were reading them" in r.stdout, r.stdout
