"""Readers and a concurrent compact: the readers' lock (store.reading), with real processes.

A query streams its rows in batches; a `compact` run in another process after its first batch
removed the files it had yet to read, and it stopped: "the archive changed while the query ran
(... was removed by a compact or a batch drop ...): run it again". Readers now hold a shared
lock on the archive's `.readers` file; compact removes the replaced files only once no reader
holds it, waiting a few seconds at its end, and otherwise leaves them to the next clean-up.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from buraco_log.archive import ingest, query, store
from buraco_log.archive.compact import _gather, compact
from buraco_log.archive.fixity import verify_archive
from buraco_log.archive.report import render_html, report
from buraco_log.archive.views import check_sql
from buraco_log.errors import ArchiveError
from tests.archive.conftest import Corpus
from tests.archive.readers import replaced_parts, started

ROOT = Path(__file__).resolve().parents[2]
BATCHES = 48  # DuckDB reads ahead: over 32 one-match batches the reader had read all files

# A slow reader: the query's first batch of 16 rows, "started", then the rest once a line
# comes on stdin; last, the row count and an order-free digest of the rows.
READER = r"""
import hashlib, sys
from buraco_log.archive import views
rows = []
with views.open_query(sys.argv[1], sys.argv[2], batch_rows=16, bound=False,
                      threads=1) as stream:
    batches = iter(stream)
    rows += next(batches).to_pylist()
    print("started", flush=True)
    sys.stdin.readline()
    for batch in batches:
        rows += batch.to_pylist()
print(len(rows), hashlib.sha256(repr(sorted(map(repr, rows))).encode()).hexdigest(), flush=True)
"""

# The command line with a shorter wait for readers at the end of compact (5 s by default).
CLI = r"""
import sys
from buraco_log.archive import store
store.WRITER_WAIT = float(sys.argv[1])
sys.argv = ["buraco-log", *sys.argv[2:]]
from cli.main import run
run()
"""

SQL = "SELECT * FROM melds"


@pytest.fixture(scope="module")
def batches(corpus: Corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Eight good logs, each ingested on its own, and their rows committed again as more
    batches of one match (cheaper than checking more logs): 48 batches. Read only."""
    site = tmp_path_factory.mktemp("readers") / "a"
    aside = tmp_path_factory.mktemp("staged")

    def set_aside(top: str) -> None:
        with contextlib.suppress(OSError):
            os.rename(top, aside / os.path.basename(top))

    with pytest.MonkeyPatch.context() as patch:
        # Input built, not tested: no fsync (its durability is not what these tests check),
        # and each commit's staging tree renamed out of the archive, not removed a directory
        # at a time (the store's clean-up of 48 trees took 1.2 s; the archive is the same).
        patch.setattr(os, "fsync", lambda fd: None)
        patch.setattr(store, "discard_tree", set_aside)
        for log in corpus.good[:8]:
            assert ingest([log], site, jobs=1).added == 1
        records = store.manifests(str(site))
        for i in range(BATCHES - len(records)):
            parts, errors, _counts = _gather(str(site), [records[i % len(records)]])
            store.commit(str(site), store.new_batch_id(), parts, errors)
    assert len(store.manifests(str(site))) == BATCHES
    assert os.listdir(site / store.STAGING) == []
    return site


@pytest.fixture
def site(batches: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "a"
    shutil.copytree(batches, copy)
    return copy


def digest(site: Path) -> str:
    rows = query(site, SQL).to_pylist()
    return f"{len(rows)} {hashlib.sha256(repr(sorted(map(repr, rows))).encode()).hexdigest()}"


@pytest.fixture
def reader(site: Path) -> Iterator[subprocess.Popen[str]]:
    """The slow reader, started, its first batch read."""
    with started(READER, str(site), SQL) as p:
        yield p


def finish(p: subprocess.Popen[str]) -> str:
    out, err = p.communicate("go\n", timeout=60)
    assert p.returncode == 0, err
    return out.strip().splitlines()[-1]  # after DuckDB's progress bar, when it shows one


def compact_cli(site: Path, wait: float = 5.0, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", CLI, str(wait), "compact", str(site), *args],
                            cwd=ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def committed_compaction(site: Path, seconds: float = 60) -> None:
    """Wait until a compacted batch's record is committed."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if any(r.get("compacted") for r in store.manifests(str(site))):
                return
        except store.Changed:  # read as the compact swapped its records: look again
            pass
        time.sleep(0.02)
    raise AssertionError("compact committed nothing")


def test_a_query_reading_while_compact_runs_gets_every_row_and_compact_waits_for_it(
        site: Path, reader: subprocess.Popen[str]) -> None:
    """Before: the reader stopped with "the archive changed while the query ran"."""
    want = digest(site)
    c = compact_cli(site)
    committed_compaction(site)
    # (a new reader now waits at the gate compact holds while it waits for this one, up to
    # the end of that wait: asked here, before this reader goes on, it held compact's wait
    # to its end and the replaced files stayed)
    assert finish(reader) == want
    out, err = c.communicate(timeout=60)
    assert c.returncode == 0, err
    assert "left in place" not in out and replaced_parts(site) == []
    assert digest(site) == want  # the merged batch alone, every row once
    assert os.listdir(site / "_batches") == [f"{store.manifests(str(site))[0]['batch']}.json"]


@pytest.mark.slow  # the CLI's line and a compact's clean-up; the drop below is the quick case
def test_a_query_still_reading_when_compact_ends_keeps_its_files_for_the_next_clean_up(
        site: Path, reader: subprocess.Popen[str]) -> None:
    want = digest(site)
    c = compact_cli(site, 0.2)
    out, err = c.communicate(timeout=60)
    assert c.returncode == 0, err
    held = replaced_parts(site)
    assert len(held) > BATCHES and f"{len(held)} replaced files left in place for the " \
        "queries still reading them: the next ingest or compact removes them" in out, out
    assert digest(site) == want  # a new reader sees the merged batch, every row once
    assert verify_archive(str(site)).ok
    assert finish(reader) == want
    again = compact(str(site))
    # no run was cut short: the clean-up says nothing of one ("cleaned up after an
    # interrupted compact" is said when recovered is not empty)
    assert (again.recovered, again.cut_short, again.postponed) == ([], [], [])
    assert replaced_parts(site) == [] and digest(site) == want
    assert not (site / "_batches" / f"{store.POSTPONED}{store.INTENT}").exists()


@pytest.mark.slow
def test_a_killed_reader_holds_nothing(site: Path, reader: subprocess.Popen[str]) -> None:
    want = digest(site)
    reader.send_signal(signal.SIGKILL)
    reader.wait()
    c = compact_cli(site, 60)
    out, err = c.communicate(timeout=30)  # not the 60 s wait: the lock went with the process
    assert c.returncode == 0, err
    assert replaced_parts(site) == [] and "left in place" not in out
    assert digest(site) == want


@pytest.mark.slow
def test_a_drop_waits_for_a_reader_and_the_reader_gets_every_row(
        site: Path, reader: subprocess.Popen[str]) -> None:
    """A batch drop takes the batch out at once (its record), and its files once the reader
    that listed them ends. Before: the reader stopped with "run it again"."""
    want = digest(site)
    first = store.manifests(str(site))[-1]["batch"]  # read last
    drop = subprocess.Popen(
        [sys.executable, "-c", "import sys; from buraco_log.archive import store; "
         "store.WRITER_WAIT = 60; store.drop_batches(sys.argv[1], [sys.argv[2]])",
         str(site), first], cwd=ROOT, text=True, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while (site / "_batches" / f"{first}.json").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert digest(site) != want  # dropped for every new reader
    assert finish(reader) == want
    _out, err = drop.communicate(timeout=30)
    assert drop.returncode == 0, err
    assert [p for p in site.rglob(f"part-{first}.parquet")] == []


def test_a_read_only_archive_is_read_without_the_lock(arch: Path, tmp_path: Path) -> None:
    """A read-only mount of an archive that has no lock file (one no writer of this version
    wrote): no lock, read as before."""
    want = [{"n": len(query(arch, "SELECT * FROM melds"))}]
    (arch / store.READERS).unlink()  # made by the ingests
    mount = tmp_path / "ro"
    mount.mkdir()
    if subprocess.run(["mount", "--bind", str(arch), str(mount)], capture_output=True,
                      check=False).returncode:
        pytest.skip("no bind mount here (not root)")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(mount)], check=True)
        assert query(mount, "SELECT count(*) AS n FROM melds").to_pylist() == want
        with store.reading(str(mount)) as held:
            assert not held
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_a_query_writes_nothing_in_the_archive_and_a_writer_makes_the_lock_for_every_user(
        arch: Path) -> None:
    """The lock file of an archive written by an older version (none) is made by the next
    ingest, compact or drop, never by a reader (query, report and verify only read the
    archive); under a umask of 077 it is still 0644, so other users' queries lock it too."""
    (arch / store.READERS).unlink()
    query(arch, "SELECT count(*) FROM matches")
    verify_archive(str(arch))
    assert not (arch / store.READERS).exists()
    old = os.umask(0o077)
    try:
        compact(str(arch), dry_run=True)  # writes nothing: a dry run
        assert not (arch / store.READERS).exists()
        compact(str(arch))
    finally:
        os.umask(old)
    assert (arch / store.READERS).stat().st_mode & 0o777 == 0o644
    with store.reading(str(arch)) as held:
        assert held


SIM = ROOT / "examples" / "sim"


@pytest.fixture(scope="module")
def stock_ends(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Matches with hands ended by the stock: mega's (floor 2) and bossa-nova's (floor 0)."""
    arch = tmp_path_factory.mktemp("stock") / "a"
    logs = [str(SIM / n) for n in ("mega-4p-000000.blog", "bossa-nova-3p-000000.blog")]
    assert ingest(logs, arch, jobs=1).added == 2
    return arch


def test_the_report_says_stock_end_of_megas_hands_as_show_does(stock_ends: Path) -> None:
    """The report's hand endings named mega's stock end by the reason code, "stock_out",
    where 2 cards remain (`show` and `replay` say "stock end", "the stock is down to its last
    2 cards"); its chart read "mega stock_out". The stored code stays; the words are added."""
    rep = report(stock_ends)
    section = next(s for s in rep.sections if s.name == "hand_endings")
    rows = [dict(zip(section.columns, r, strict=True)) for r in section.rows]
    ended = {(r["preset"], r["reason"]): r["ended"] for r in rows}
    assert ended[("mega", "stock_out")] == "stock end"
    assert ended[("bossa-nova", "stock_out")] == "stock out"
    assert {ended[(p, "went_out")] for p in ("mega", "bossa-nova")} == {"went out"}
    assert query(stock_ends, "SELECT DISTINCT reason FROM hands ORDER BY 1").to_pylist() == [
        {"reason": "stock_out"}, {"reason": "went_out"}]  # the stored codes, as they were
    page = render_html(rep)
    assert ">mega stock end</text>" in page and ">bossa-nova stock out</text>" in page
    assert "mega stock_out" not in page and "mega stock out" not in page


# -- a refused statement is named as written -------------------------------------------------

NAMED = [  # DuckDB's type for it, said before, in the comment
    ("USE memory", "USE"),  # SET
    ("use memory", "USE"),  # SET
    ("/* why */ RESET threads", "RESET"),  # SET
    ("PRAGMA threads = 1", "PRAGMA"),  # SET
    ("CHECKPOINT", "CHECKPOINT"),  # CALL
    ("FORCE CHECKPOINT", "FORCE CHECKPOINT"),  # CALL
    ("UPDATE EXTENSIONS", "UPDATE EXTENSIONS"),  # UNKNOWN
    ("BEGIN TRANSACTION", "BEGIN"),  # TRANSACTION
    ("ROLLBACK", "ROLLBACK"),  # TRANSACTION
    ("TRUNCATE matches", "TRUNCATE"),  # DELETE
    ("ANALYZE", "ANALYZE"),  # VACUUM
    ("DEALLOCATE p", "DEALLOCATE"),  # DROP
    ("COMMENT ON TABLE matches IS 'x'", "COMMENT"),  # ALTER
    ("IMPORT DATABASE 'x'", "IMPORT"),  # PRAGMA
    ("COPY FROM DATABASE memory TO x", "COPY"),  # PRAGMA
    ("MERGE INTO matches USING matches AS x ON true WHEN MATCHED THEN DELETE", "MERGE"),
    ("EXPLAIN CHECKPOINT", "EXPLAIN of CHECKPOINT"),  # EXPLAIN of CALL
    ("EXPLAIN ANALYZE UPDATE EXTENSIONS", "EXPLAIN of UPDATE EXTENSIONS"),
    # as before
    ("FORCE INSTALL httpfs", "FORCE INSTALL"),
    ("UPDATE matches SET hands = 0", "UPDATE"),
    ("WITH a AS (SELECT 1) INSERT INTO t SELECT * FROM a", "INSERT"),
]


@pytest.mark.parametrize(("sql", "name"), NAMED)
def test_a_refused_statement_is_named_as_written(sql: str, name: str) -> None:
    """docs/archive.md: "the refusal names the statement as written". It said "not SET" of
    USE, "not CALL" of CHECKPOINT, "not UNKNOWN" of UPDATE EXTENSIONS, and so on."""
    with pytest.raises(ArchiveError) as err:
        check_sql(sql)
    assert str(err.value) == f"query: only read-only SELECT statements are allowed, not {name}"


def test_files_left_for_a_reader_are_removed_later_as_no_interrupted_run(
        arch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A drop under a reader (this process's own, another open of the lock file) leaves the
    dropped batch's files, named by the postponed intent; the next clean-up removes them and
    says no run was cut short (it said "cleaned up after an interrupted drop")."""
    monkeypatch.setattr(store, "WRITER_WAIT", 0.0)
    root = str(arch)
    last = store.manifests(root)[-1]["batch"]
    mine = sorted(str(p.relative_to(arch)) for p in arch.rglob(f"part-{last}.parquet"))
    with store.reading(root) as held:
        assert held
        store.drop_batches(root, [last])
        assert all((arch / rel).exists() for rel in mine)
        assert store.postponed_parts(root) == mine
        assert store.clean_up(root) == ([], [])  # still read: left in place again
        left, lost = store.orphan_parts(root)
        assert (sorted(left), lost) == (mine, [])
    fixity = verify_archive(root)
    assert fixity.ok and sorted(fixity.leftovers) == sorted(
        [*mine, f"{store.BATCHES}/{store.POSTPONED}{store.INTENT}"])
    assert store.clean_up(root) == ([], [])  # removed, and no run was cut short
    assert not any((arch / rel).exists() for rel in mine)
    assert store.postponed_parts(root) == [] and verify_archive(root).leftovers == []
    assert last not in {r["batch"] for r in store.all_records(root)}
