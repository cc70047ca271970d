"""Fault probes, round 43, of the archive: a run's own staging directory is removed without
recursion (a tree deeper than Python's recursion limit planted there during the run was
'RecursionError' after the commit); the summary's cap of stronger copies named one a line."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa  # type: ignore[import-untyped]
import pytest

from buraco_log.archive import ingest, query, report, spark, store, views
from buraco_log.archive.fixity import verify_archive
from buraco_log.archive.store import CommitError
from buraco_log.errors import ArchiveError
from tests.cli.probes import ROOT, cli

SIM = ROOT / "examples" / "sim"
report_module = sys.modules["buraco_log.archive.report"]  # the package's `report` is the function
LOGS = sorted(SIM.glob("thirteen-quick-2p-*.blog"))[:2]
DEPTH = 1100  # past the recursion limit (1,000); 2,200 bytes of path, within PATH_MAX


def _plant(base: str) -> None:
    where = base
    os.makedirs(where, exist_ok=True)
    for _ in range(DEPTH):
        where = os.path.join(where, "d")
        os.mkdir(where)
    Path(where, "x").write_bytes(b"x")


def _planting(monkeypatch: pytest.MonkeyPatch, name: str) -> list[str]:
    """Wrap ``store.NAME`` (called during a commit, the stage still there) so that it plants
    a deep tree in every stage of the archive's .staging first; returns the stages planted."""
    planted: list[str] = []
    real: Callable[..., Any] = getattr(store, name)

    def plant_then(root: str, *args: Any, **kwargs: Any) -> Any:
        staging = os.path.join(root, store.STAGING)
        for run in os.listdir(staging) if os.path.isdir(staging) else ():
            _plant(os.path.join(staging, run, "deep"))
            planted.append(os.path.join(staging, run))
        return real(root, *args, **kwargs)

    monkeypatch.setattr(store, name, plant_then)
    return planted


def test_a_committed_ingest_removes_a_deep_tree_planted_in_its_stage(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: RecursionError out of ingest, after its batch was committed."""
    planted = _planting(monkeypatch, "end_intent")
    report = ingest([str(LOGS[0])], tmp_path / "arch")
    assert report.added == 1 and planted
    assert not any(os.path.exists(p) for p in planted)


def test_a_failed_commit_removes_a_deep_tree_planted_in_its_stage(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The commit fails (a full disk) with a deep tree in its stage: one CommitError, the
    stage gone (it holds the space a rerun needs). Before: RecursionError."""
    planted = _planting(monkeypatch, "note_intent")

    def full(path: str, data: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store, "_atomic_json", full)
    with pytest.raises(CommitError, match="No space left on device"):
        ingest([str(LOGS[0])], tmp_path / "arch")
    assert planted and not any(os.path.exists(p) for p in planted)


def test_spark_clean_up_removes_a_deep_tree_in_its_stage(tmp_path: Path) -> None:
    """The Spark engine's clean-up after a run (no JVM needed: each of its Spark steps is
    skipped when it fails). Before: RecursionError."""
    stage = tmp_path / store.STAGING / "run1"
    _plant(str(stage / "deep"))
    spark._clean_up(None, None, str(tmp_path), "run1", False)  # type: ignore[arg-type]
    assert not stage.exists()


def test_discard_tree_follows_no_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("kept")
    stage = tmp_path / "stage"
    _plant(str(stage))
    os.symlink(outside, stage / "link")
    os.symlink(outside, tmp_path / "as-link")
    store.discard_tree(str(stage))
    store.discard_tree(str(tmp_path / "as-link"))
    assert not stage.exists() and (outside / "keep").read_text() == "kept"


# -- the summary names 20 stronger copies, then says how many more ---------------------------

V2 = ROOT / "examples" / "format" / "v2.jsonl"
MATCH = "sim-classic-2p-1c3486710156-000000"
COPIES = 23


def test_the_summary_names_twenty_stronger_copies_and_counts_the_rest(tmp_path: Path) -> None:
    """The live (unsealed) copy stored, then 23 sealed copies (copies of the same bytes are
    named once): 20 lines name a copy each, one says '... and 3 more'; --format json lists
    all 23."""
    live, sealed = tmp_path / "live", tmp_path / "sealed"
    live.mkdir()
    sealed.mkdir()
    lines = V2.read_text().splitlines(keepends=True)
    assert lines[-1].startswith('{"log": "end"')
    (live / "m.jsonl").write_text("".join(lines[:-1]))
    signatures = [i for i, x in enumerate(lines) if x.startswith('{"log": "signature"')]
    for k in range(COPIES):  # each without one signature record: 23 distinct files
        kept = [x for i, x in enumerate(lines) if i != signatures[k]]
        (sealed / f"m{k:02d}.jsonl").write_text("".join(kept))
    arch = tmp_path / "arch"
    assert ingest([live], arch).added == 1
    done = cli("ingest", sealed, "--archive", arch, "--keep-stored-copies")
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert f"{COPIES} duplicates" in out[0], out[0]
    named = [x for x in out[1:] if f"a sealed copy of stored match {MATCH}" in x]
    assert [x.split(":")[0] for x in named] == [str(sealed / f"m{i:02d}.jsonl")
                                                for i in range(20)]
    more = f"... and {COPIES - 20} more stronger copies (--format json lists them all)"
    assert out[1:] == [*named, more]
    js = cli("ingest", sealed, "--archive", arch, "--format", "json",
             "--keep-stored-copies")
    assert js.returncode == 0, js.stderr
    listed = json.loads(js.stdout)["stronger_copies"]
    assert [c["path"] for c in listed] == [str(sealed / f"m{i:02d}.jsonl")
                                           for i in range(COPIES)]


# -- a reader while a compaction or an ingest commits in another process ----------------------
# Readers take no lock. A compaction commits its batch, then removes the records and files of
# the batches it replaced: a reader that listed them just before met a record gone ("unreadable
# batch record: No such file or directory"), listed the files twice (the sandbox's and the
# views': "damaged archive file: Cannot access file - file system operations are disabled"),
# or found a listed file gone when it scanned ("the archive changed while the query ran: run
# it again"). Each now lists again; a reader never sees a batch in part.

COUNTS = ("SELECT (SELECT count(*) FROM events) AS e, (SELECT count(*) FROM matches) AS m, "
          "(SELECT count(*) FROM hands) AS h, (SELECT count(*) FROM players) AS p, "
          "(SELECT count(*) FROM melds) AS d")


# The command line with no wait for readers at the end of compact: the reader that runs it
# here holds the readers' lock until it has run to its end, so the wait would only stall it.
_NO_WAIT = ("import sys; from buraco_log.archive import store; store.WRITER_WAIT = 0.0; "
            "sys.argv = ['buraco-log', *sys.argv[1:]]; from cli.main import run; run()")


def _other_process(*args: object) -> Callable[[], None]:
    """Run ``buraco-log ARGS`` to its end in a second process, once, at the first call."""
    done: list[bool] = []

    def run() -> None:
        if not done:
            done.append(True)
            finished = subprocess.run([sys.executable, "-c", _NO_WAIT, *map(str, args)],
                                      cwd=ROOT, capture_output=True, text=True, timeout=120,
                                      check=False, stdin=subprocess.DEVNULL)
            assert finished.returncode == 0, finished.stderr

    return run


def _before_first(monkeypatch: pytest.MonkeyPatch, owner: object, name: str,
                  act: Callable[[], None], when: Callable[..., bool] = lambda *a: True) -> None:
    real: Callable[..., Any] = getattr(owner, name)

    def hooked(*args: Any, **kwargs: Any) -> Any:
        if when(*args):
            act()
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, hooked)


def _after_first(monkeypatch: pytest.MonkeyPatch, owner: object, name: str,
                 act: Callable[[], None]) -> None:
    real: Callable[..., Any] = getattr(owner, name)

    def hooked(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        act()
        return out

    monkeypatch.setattr(owner, name, hooked)


def _record(path: str, _what: str = "") -> bool:
    return os.sep + store.BATCHES + os.sep in path and path.endswith(".json")


@pytest.mark.parametrize("where", ["a record read", "the files listed", "the views made"])
def test_a_query_reads_every_row_once_while_compact_commits(
        arch: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """Before: 'unreadable batch record: No such file or directory', 'damaged archive file:
    Cannot access file ...', 'the archive changed while the query ran'."""
    want = query(arch, COUNTS).to_pylist()
    assert len(store.manifests(str(arch))) == 3
    compacting = _other_process("compact", arch)
    if where == "a record read":
        store._READ_RECORDS.clear()  # this process read them above: it reads them again
        _before_first(monkeypatch, store, "read_json", compacting, _record)
    elif where == "the files listed":
        _after_first(monkeypatch, store, "committed_files", compacting)
    else:
        _after_first(monkeypatch, views, "connect", compacting)
    assert query(arch, COUNTS).to_pylist() == want
    monkeypatch.undo()
    assert len(store.manifests(str(arch))) == 1  # it did compact, under the query


def test_a_report_reads_every_row_once_while_compact_commits(
        arch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    want = report(arch)
    _after_first(monkeypatch, report_module, "connect", _other_process("compact", arch))
    got = report(arch)
    monkeypatch.undo()
    assert len(store.manifests(str(arch))) == 1
    assert (got.matches, got.events) == (want.matches, want.events) > (0, 0)
    assert [s.rows for s in got.sections] == [s.rows for s in want.sections]


def test_a_query_sees_a_batch_ingested_meanwhile_whole_or_not_at_all(
        arch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The listing is taken before the other process commits: its batch is not seen at all."""
    want = query(arch, COUNTS).to_pylist()
    _after_first(monkeypatch, store, "committed_files",
                 _other_process("ingest", LOGS[0], "--archive", arch))
    assert query(arch, COUNTS).to_pylist() == want
    monkeypatch.undo()
    after = query(arch, COUNTS).to_pylist()[0]
    assert after["m"] == want[0]["m"] + 1 and after["e"] > want[0]["e"]


def test_the_look_for_orphan_parts_lists_again_while_compact_commits(
        arch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """verify's look for parts of no record (store.orphan_parts, no lock) reads the records
    too: one gone as it was read was 'unreadable batch record: No such file or directory'."""
    _before_first(monkeypatch, store, "read_json", _other_process("compact", arch), _record)
    assert store.orphan_parts(str(arch)) == ([], [])
    monkeypatch.undo()
    assert len(store.manifests(str(arch))) == 1


def test_verify_while_compact_commits_verifies_every_file_it_listed(
        arch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: 'ok' with 0 files verified (the listed batches' files were gone, skipped as
    dropped), and the compacted batch's record named a leftover of an interrupted run. Verify
    holds the readers' lock: the compact leaves the files it listed in place, and it verifies
    them all; they are leftovers now, for the next clean-up, and the compacted batch's record
    is none."""
    listed = sorted(rel for r in store.manifests(str(arch)) for rels in r["files"].values()
                    for rel in rels)
    _after_first(monkeypatch, store, "manifests", _other_process("compact", arch))
    got = verify_archive(str(arch))
    monkeypatch.undo()
    assert len(store.manifests(str(arch))) == 1
    assert (got.ok, got.files, got.verified) == (True, len(listed), len(listed)), got
    assert sorted(got.leftovers) == sorted([*listed,
                                            f"{store.BATCHES}/{store.POSTPONED}{store.INTENT}"])
    assert store.clean_up(str(arch)) == ([], [])  # no run was cut short
    assert verify_archive(str(arch)).leftovers == []


@pytest.mark.slow  # a few seconds; the hooked tests above hit each window for certain
def test_a_query_reads_every_row_once_while_compact_runs(arch: Path) -> None:
    """A real second process, unsynchronised: every answer is the whole archive's."""
    want = query(arch, COUNTS).to_pylist()
    compacting = subprocess.Popen([sys.executable, "-m", "cli", "compact", str(arch)],
                                  cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    answers = []
    while compacting.poll() is None or not answers:
        answers.append(query(arch, COUNTS).to_pylist())
    _, err = compacting.communicate()
    assert compacting.returncode == 0, err
    assert answers and all(a == want for a in answers), answers


# -- the query sandbox: one refusal line for each family of access ---------------------------

REFUSED = {
    "read_* table functions": ("SELECT * FROM read_csv(['/etc/passwd'])", "Cannot access file"),
    "a path through the archive": ("SELECT * FROM read_parquet('{a}/matches/../../../etc/"
                                   "passwd')", "Cannot access file"),
    "glob": ("SELECT * FROM glob('~/*')", "Cannot access file"),
    "getenv": ("SELECT getenv('HOME')", "getenv does not exist"),
    "the network": ("SELECT * FROM read_text('https://example.com/x')", "Cannot access file"),
    "an object store": ("SELECT * FROM read_parquet('s3://bucket/x.parquet')",
                        "Cannot access file"),
    "a file's metadata": ("SELECT * FROM parquet_metadata('/etc/passwd')", "Cannot access file"),
    "ATTACH": ("ATTACH '/tmp/x.db'", "not ATTACH"),
    "a setting": ("SET enable_external_access = true", "not SET"),
    "a pragma": ("PRAGMA database_list", "not PRAGMA"),
    "a variable": ("SET VARIABLE x = 1", "not SET"),
    "writing a file": ("COPY (SELECT 1) TO '/tmp/x.csv'", "not COPY"),
    "loading an extension": ("LOAD httpfs", "not LOAD"),
    "an extension autoloaded": ("SELECT * FROM sqlite_scan('/tmp/x.db', 't')",
                                "sqlite_scanner extension, which the sandbox does not load"),
    "SQL in a string": ("SELECT * FROM query('SELECT 1')", "runs SQL given as a string"),
    "secrets": ("SELECT * FROM which_secret('s3://x', 's3')", "not available in the sandbox"),
}


@pytest.mark.parametrize("family", sorted(REFUSED))
def test_the_sandbox_refuses_each_family_in_one_line(arch: Path, family: str) -> None:
    sql, said = REFUSED[family]
    with pytest.raises(ArchiveError) as refused:
        query(arch, sql.format(a=arch))
    line = str(refused.value)
    assert said in line and "\n" not in line and line.startswith("query: "), line


def test_the_sandbox_scans_no_python_object_of_its_caller(arch: Path) -> None:
    """DuckDB's Python client reads a table named in the SQL from a variable of the calling
    frame (a replacement scan): the sandboxed connection must not (without it, it does)."""
    secret = pa.table({"x": [42]})
    assert secret.num_rows == 1  # the name the SQL below reaches for
    open_con = views.connect(arch, sandbox=False)
    try:
        assert open_con.sql("SELECT * FROM secret").fetchall() == [(42,)]
    finally:
        open_con.close()
    con = views.connect(arch)
    try:
        with pytest.raises(duckdb.CatalogException, match="secret does not exist"):
            con.sql("SELECT * FROM secret").fetchall()
    finally:
        con.close()


# -- compact killed at seeded random points, then run again ---------------------------------

KILL_POINTS = 4


@pytest.fixture(scope="module")
def fsyncs(three: Path, tmp_path_factory: pytest.TempPathFactory) -> int:
    """How many times one compaction of the three batches calls os.fsync."""
    from tests.archive.killed_at import KILLER

    arch = tmp_path_factory.mktemp("fsyncs") / "a"
    shutil.copytree(three, arch)
    r = subprocess.run([sys.executable, "-c", KILLER, "fsync", "0", "compact", str(arch)],
                       cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    return int(r.stderr.split("calls ")[1])


@pytest.mark.slow
@pytest.mark.parametrize("draw", range(KILL_POINTS))
def test_compact_killed_at_a_random_fsync_then_run_again_keeps_every_row(
        arch: Path, fsyncs: int, draw: int) -> None:
    """SIGKILL at the k-th os.fsync (k drawn with a fixed seed): between the kill and the
    rerun, and after it, every table's order-free checksum is the one before; the rerun
    leaves one batch and a verified archive (test_compact kills at os.replace and os.unlink)."""
    from tests.archive.compact_sums import checksums
    from tests.archive.killed_at import KILLER

    k = random.Random(f"compact43-{draw}").randint(1, fsyncs)
    before = checksums(arch)
    killed = subprocess.run([sys.executable, "-c", KILLER, "fsync", str(k), "compact",
                             str(arch)], cwd=ROOT, capture_output=True, text=True, timeout=120,
                            check=False)
    assert killed.returncode == -9, (k, killed.stderr)
    assert checksums(arch) == before, k
    again = cli("compact", arch)
    assert again.returncode == 0, again.stderr
    assert checksums(arch) == before and len(store.manifests(str(arch))) == 1
    assert verify_archive(str(arch)).ok


def test_a_damaged_footer_duckdb_names_no_file_of_is_named(arch: Path) -> None:
    """A matches part's footer damaged: the views' DESCRIBE failed with "cannot open the
    archive's views: don't know what type:" (or "TProtocolException: Invalid data"), naming
    no file. (test_fault_probes_archive41b flipped the middle byte of a part, in its
    footer for some parts: its query failed so, at times.)"""
    record = store.manifests(str(arch))[0]
    part = arch / record["files"]["matches"][0]
    data = bytearray(part.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little")
    data[len(data) - 8 - footer] = 0xFF  # its first field's header: no type thrift knows
    part.chmod(0o644)
    part.write_bytes(bytes(data))
    # as a bit rotted on the medium: no newer time (one written over is read back first)
    before = (arch / "_batches" / f"{record['batch']}.json").stat().st_mtime_ns - 10**9
    os.utime(part, ns=(before, before))
    with pytest.raises(ArchiveError) as damaged:
        query(arch, "SELECT count(*) FROM hands")
    line = str(damaged.value)
    assert line.startswith(f"{part}: damaged archive file (") and "\n" not in line, line
