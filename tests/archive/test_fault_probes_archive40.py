"""Fault probes, round 40, of the DuckDB archive: report's own time limit, DuckDB's stores in
the home directory (~/.duckdb) kept out of the sandbox and out of its messages, and files that
cannot be read recorded once however often they are ingested."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest

from buraco_log.archive import connect, ingest, query, report, store, views
from buraco_log.archive.compact import compact
from buraco_log.errors import ArchiveError
from tests.cli.probes import ROOT, cli, one_error_line

SIM = ROOT / "examples" / "sim"


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An archive of three simulated matches."""
    base = tmp_path_factory.mktemp("small40")
    logs = base / "logs"
    logs.mkdir()
    for log in sorted(SIM.glob("*-2p-*.blog"))[:3]:
        shutil.copy(log, logs)
    arch = base / "arch"
    rep = ingest([str(logs)], arch)
    assert rep.added == 3 and not rep.errors
    return arch


def _error_rows(arch: Path) -> list[tuple[str, str, str]]:
    table = query(arch, "SELECT source_path, rule, message FROM errors ORDER BY ALL")
    return [tuple(r.values()) for r in table.to_pylist()]  # type: ignore[misc]


# -- report --timeout ------------------------------------------------------------------------

def test_a_report_past_its_time_limit_is_an_archive_error(small: Path) -> None:
    with pytest.raises(ArchiveError) as err:
        report(small, timeout=1e-6)
    assert str(err.value) == ("report: stopped after the 1e-06 s time limit (--timeout; 0 for "
                              "no limit)")
    assert report(small, timeout=0).matches == 3  # 0: no limit


# A canned section DuckDB cannot finish (10^12 pairs): the limit must interrupt the query
# itself, not wait for a section to end.
SLOW_REPORT = """
import importlib, sys
report = importlib.import_module("buraco_log.archive.report")
report.CANNED["slow"] = ("slow", "SELECT count(*) AS n FROM range(1000000) AS a, "
                                 "range(1000000) AS b WHERE a.range + b.range = -1")
from cli.main import run
sys.argv = ["buraco-log", *sys.argv[1:]]
run()
"""


def test_report_stops_a_running_query_at_its_time_limit_and_writes_nothing(
        small: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    t = time.monotonic()
    done = subprocess.run([sys.executable, "-c", SLOW_REPORT, "report", str(small), "-f",
                           "html", "-o", str(out), "--timeout", "1"], capture_output=True,
                          text=True, cwd=ROOT, timeout=120, stdin=subprocess.DEVNULL,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), check=False)
    took = time.monotonic() - t
    line = one_error_line(done, 1)
    assert line == ("buraco-log: error: report: stopped after the 1 s time limit (--timeout; "
                    f"0 for no limit); nothing was written to {out}")
    assert took < 30, took  # the query alone runs for hours
    assert done.stdout == ""
    assert sorted(os.listdir(tmp_path)) == []  # no report, no temporary, no match pages


def test_report_timeout_is_checked_like_query_s(small: Path) -> None:
    line = one_error_line(cli("report", small, "--timeout", "nan"), 2)
    assert "Invalid value for '--timeout'" in line
    # checked before the engine is: a Spark report's limit too (tests/spark)
    line = one_error_line(cli("report", small, "--engine", "spark", "--timeout", "nan"), 2)
    assert "Invalid value for '--timeout'" in line


# -- DuckDB's own files in the home directory --------------------------------------------------

PRIVATE = [
    "SELECT * FROM duckdb_secrets()",
    "SELECT * FROM which_secret('s3://bucket/key', 's3')",
    "SELECT * FROM duckdb_extensions()",
    "SELECT * FROM duckdb_extension_repositories()",
    'SELECT * FROM "DuckDB_Extensions" /* a comment */ ()',
    "SELECT * FROM system.main.duckdb_secrets()",
    "SELECT (SELECT count(*) FROM duckdb_extensions()) AS n",
    "EXPLAIN SELECT * FROM duckdb_secrets()",
]


@pytest.mark.parametrize("sql", PRIVATE)
def test_duckdb_s_stores_in_the_home_directory_are_refused_by_name(small: Path,
                                                                   sql: str) -> None:
    with pytest.raises(ArchiveError) as err:
        query(small, sql)
    message = str(err.value)
    assert "is not available in the sandbox: it reads DuckDB's own" in message, message
    assert ".duckdb" not in message and os.path.expanduser("~") + "/" not in message


def _home_error(con: duckdb.DuckDBPyConnection, sql: str) -> str | None:
    """The one line a query of ``sql`` fails with on the locked connection, past the
    statement check (as a table function the check does not know would run)."""
    try:
        con.execute(sql).fetchall()
    except duckdb.Error as exc:
        return str(views._query_error(exc, 60, "1GB"))
    return None


def test_no_message_names_duckdb_s_home_directory(small: Path) -> None:
    """Past the check too (a new DuckDB's function reading ~/.duckdb): every table function
    called bare on the sandboxed connection fails, if it fails, without naming ~/.duckdb."""
    con = connect(small)
    try:
        names = sorted({r[0] for r in con.execute(
            "SELECT function_name FROM duckdb_functions() WHERE function_type = 'table'"
        ).fetchall()})
        assert set(views.PRIVATE_TABLE_FUNCTIONS) <= set(names)
        said = {}
        for name in names:
            if name in views.ACTING_TABLE_FUNCTIONS:
                continue
            line = _home_error(con, f"SELECT * FROM {name}() LIMIT 1")
            if line is not None:
                said[name] = line
    finally:
        con.close()
    # DuckDB names them when asked directly: the scrub is what keeps them out
    assert {"duckdb_extensions", "duckdb_extension_repositories"} <= said.keys()
    for name, line in said.items():
        assert ".duckdb" not in line, (name, line)
    assert "DuckDB's own files in the home directory" in said["duckdb_extensions"]


def test_the_cli_names_no_home_directory(small: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "somebody"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # DuckDB's ~/.duckdb is under $HOME
    line = one_error_line(cli("query", small, "SELECT * FROM duckdb_extensions()"), 1)
    assert str(home) not in line and ".duckdb" not in line, line
    assert list(home.iterdir()) == []  # nothing made there either


def test_a_path_the_user_wrote_is_said_as_written(small: Path) -> None:
    with pytest.raises(ArchiveError) as err:
        query(small, "SELECT * FROM read_text('~/.duckdb/x')")
    assert '"~/.duckdb/x"' in str(err.value)


# -- files never read, recorded once -----------------------------------------------------------

def _unreadable_sources(base: Path) -> Path:
    src = base / "src"
    src.mkdir()
    shutil.copy(sorted(SIM.glob("*-2p-*.blog"))[0], src / "good.blog")
    (src / "dangling.blog").symlink_to(base / "nowhere")
    os.mkfifo(src / "pipe.blog")
    return src


def test_reingesting_unreadable_files_adds_no_error_rows(tmp_path: Path) -> None:
    src = _unreadable_sources(tmp_path)
    arch = tmp_path / "arch"
    first = ingest([str(src)], arch)
    assert (first.added, len(first.errors), first.known_errors) == (1, 2, 0)
    rows = _error_rows(arch)
    assert [r[1] for r in rows] == ["log.unreadable", "log.filetype"]
    for _ in range(2):
        again = ingest([str(src)], arch)
        assert (again.added, again.errors, again.known_errors, again.already_stored) == (
            0, [], 2, 1)
        assert again.batches == []  # nothing to commit at all
        assert _error_rows(arch) == rows


def test_an_unreadable_file_failing_for_a_new_reason_is_recorded_again(tmp_path: Path) -> None:
    src = _unreadable_sources(tmp_path)
    arch = tmp_path / "arch"
    ingest([str(src)], arch)
    (src / "dangling.blog").unlink()
    (src / "dangling.blog").symlink_to(src / "pipe.blog")  # now a link to a FIFO
    again = ingest([str(src)], arch)
    assert [(e.path, e.rule) for e in again.errors] == [(str(src / "dangling.blog"),
                                                          "log.filetype")]
    assert again.known_errors == 1  # the FIFO itself, for the same reason as before
    assert len(_error_rows(arch)) == 3


def test_drop_recorded_keys_on_path_and_reason() -> None:
    row = {"source_path": "/a", "rule": "log.filetype", "message": "not a regular file"}
    other = {**row, "message": "a directory, not a log"}
    assert store.drop_recorded([row, other], {("/a", "log.filetype", "not a regular file")}
                               ) == ([other], 1)
    assert store.drop_recorded([row], set()) == ([row], 0)


def test_the_cli_says_the_unreadable_files_were_refused_before(tmp_path: Path) -> None:
    src = _unreadable_sources(tmp_path)
    arch = tmp_path / "arch"
    assert cli("ingest", src, "-a", arch).returncode == 1  # two refused now
    done = cli("ingest", src, "-a", arch)
    assert done.returncode == 0, done.stderr
    assert "2 refused before, 0 refused now" in done.stdout
    files = store.committed_files(str(arch))["errors"]
    assert sum(pq.read_metadata(f).num_rows for f in files) == 2


# -- a query DuckDB does not stop at its time limit ---------------------------------------------

# One value built inside a scalar function: DuckDB heeds the interrupt only between chunks, so
# this ran 17 s past a 0.2 s limit (regexp_replace over 30 MB), lpad of 400 MB 26 s past 2 s.
OVERRUN = """
import importlib, sys
importlib.import_module("buraco_log.archive.views").OVERRUN_GRACE = 0.5
from cli.main import run
sys.argv = ["buraco-log", *sys.argv[1:]]
run()
"""
UNHEEDING = "SELECT length(regexp_replace(repeat('a', 30000000), 'a', 'bb', 'g')) AS n"


def test_a_query_that_does_not_heed_the_interrupt_is_ended_past_its_limit(
        small: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.csv"
    t = time.monotonic()
    done = subprocess.run([sys.executable, "-c", OVERRUN, "query", str(small), UNHEEDING,
                           "-f", "csv", "-o", str(out), "--timeout", "0.5"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120,
                          stdin=subprocess.DEVNULL, check=False,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    took = time.monotonic() - t
    assert one_error_line(done, 1) == "buraco-log: error: query: stopped after the 0.5 s time limit"
    assert took < 12, took  # the query itself runs 17 s or more
    assert sorted(os.listdir(tmp_path)) == []  # neither the result nor its temporary


# -- damaged layouts ---------------------------------------------------------------------------

def _parts(arch: Path) -> list[Path]:
    return sorted(arch.rglob("part-*.parquet"))


def test_an_archive_that_lost_its_batch_records_is_refused_not_emptied(small: Path,
                                                                       tmp_path: Path) -> None:
    """Without _batches every file looked uncommitted: a query counted no match, and the next
    compact or ingest deleted every file as the leftovers of an interrupted run."""
    arch = tmp_path / "arch"
    shutil.copytree(small, arch)
    shutil.rmtree(arch / "_batches")
    parts = _parts(arch)
    assert parts
    said = f"{arch}/_batches: the directory of the batch records is missing, but the tables " \
           "hold part files"
    for attempt in (lambda: compact(str(arch)), lambda: ingest([str(SIM)], arch),
                    lambda: query(arch, "SELECT count(*) FROM matches"), lambda: report(arch)):
        with pytest.raises(ArchiveError) as err:
            attempt()
        assert str(err.value).startswith(said), str(err.value)
    assert said in one_error_line(cli("compact", arch), 1)
    assert _parts(arch) == parts


def test_a_new_archive_has_its_records_directory_before_any_commit(tmp_path: Path) -> None:
    arch = tmp_path / "arch"
    rep = ingest([], arch)
    assert rep.batches == [] and (arch / "_batches").is_dir()
    assert query(arch, "SELECT count(*) AS n FROM matches").to_pylist() == [{"n": 0}]


def test_an_uncommitted_part_in_a_new_archive_is_still_cleaned_up(tmp_path: Path) -> None:
    """A first commit cut short between its renames and its record leaves parts, its intent
    record and no batch record: recovered, not refused."""
    arch = tmp_path / "arch"
    ingest([], arch)
    stray = arch / "matches" / "preset=classic" / "month=unknown" / "part-X-1.parquet"
    stray.parent.mkdir(parents=True)
    store.note_intent(str(arch), "X-1", "ingest", ["X-1"], [str(stray.relative_to(arch))])
    stray.write_bytes(b"PAR1 cut short")
    assert store.recover(str(arch)) == [str(stray.relative_to(arch))]
    assert os.listdir(arch / "_batches") == []


def test_a_table_directory_that_is_a_file_is_said_to_be_one(small: Path, tmp_path: Path) -> None:
    arch = tmp_path / "arch"
    shutil.copytree(small, arch)
    shutil.rmtree(arch / "events")
    (arch / "events").write_text("not a directory")
    with pytest.raises(ArchiveError) as err:
        query(arch, "SELECT count(*) FROM matches")
    assert str(err.value).startswith(f"{arch}/events: the directory of the events table is "
                                     "not a directory")


@pytest.mark.parametrize("name", ["a[1]", "a*", "a?"])
def test_an_archive_path_with_glob_characters_reads_its_own_files(small: Path, tmp_path: Path,
                                                                  name: str) -> None:
    """DuckDB globs every path it reads: at ``a[1]`` it read ``a1``'s files (a copy of it,
    with the same batch ids), refused by the sandbox or, unsandboxed, shown as this one's."""
    arch = tmp_path / name
    shutil.copytree(small, arch)
    other = tmp_path / "a1"  # matched by each pattern; its matches emptied
    shutil.copytree(small, other)
    for part in _parts(other / "matches"):
        part.chmod(0o644)
        pq.write_table(pq.read_table(part).slice(0, 0), part)
    assert query(arch, "SELECT count(*) AS n FROM matches").to_pylist() == [{"n": 3}]
    con = connect(arch, sandbox=False)
    try:
        assert con.execute("SELECT count(*) FROM matches").fetchall() == [(3,)]
    finally:
        con.close()
    rep = report(arch)
    assert rep.matches == 3 and len(next(s for s in rep.sections
                                         if s.name == "leaderboard").rows) > 0


def test_a_file_where_a_partition_directory_must_go_is_named_and_nothing_committed(
        tmp_path: Path) -> None:
    """It said "run the ingest again once there is room", which no free space fixes."""
    arch = tmp_path / "arch"
    ingest([str(SIM / "burako-2p-000000.blog")], arch)
    stray = arch / "matches" / "preset=classic"
    stray.write_text("a stray file")
    records = sorted(os.listdir(arch / "_batches"))
    with pytest.raises(ArchiveError) as err:
        ingest([str(SIM / "classic-2p-000000.blog")], arch)
    assert f"run the ingest again once the file where it needs a directory ({stray}) is " \
           "moved away): writing" in str(err.value), str(err.value)
    assert sorted(os.listdir(arch / "_batches")) == records
    stray.unlink()
    assert ingest([str(SIM / "classic-2p-000000.blog")], arch).added == 1


# -- file names that are not UTF-8 -------------------------------------------------------------

def test_logs_whose_names_are_not_utf8_are_stored_with_those_bytes_escaped(
        tmp_path: Path) -> None:
    """One such log made the whole ingest fail: "internal error: UnicodeEncodeError"."""
    src = tmp_path / "src"
    src.mkdir()
    good = os.fsdecode(bytes(src) + b"/good\xff.blog")
    shutil.copy(SIM / "classic-2p-000000.blog", good)
    Path(os.fsdecode(bytes(src) + b"/torn\xfe.blog")).write_bytes(b"BURACOLG torn")
    os.mkfifo(os.fsdecode(bytes(src) + b"/pipe\xfd.blog"))
    arch = tmp_path / "arch"
    first = ingest([str(src)], arch)
    assert (first.added, len(first.errors)) == (1, 2)
    stored = query(arch, "SELECT source_path FROM matches").column(0).to_pylist()
    assert stored == [f"{src}/good\\xff.blog"]
    refused = query(arch, "SELECT source_path FROM errors ORDER BY 1").column(0).to_pylist()
    assert refused == [f"{src}/pipe\\xfd.blog", f"{src}/torn\\xfe.blog"]
    again = ingest([str(src)], arch)  # the never-read FIFO too is known by its stored name
    assert (again.added, again.errors, again.known_errors, again.already_stored) == (
        0, [], 2, 1)


def test_storable_keeps_utf8_and_escapes_the_rest() -> None:
    from buraco_log.archive.schema import storable

    assert storable("çé😀 plain") == "çé😀 plain"
    assert storable("a\udcffb") == "a\\xffb"
    assert storable("a\ud800b") == "a\\ud800b"  # a lone surrogate of no byte


def test_an_archive_whose_path_is_not_utf8_is_refused_in_one_line(small: Path,
                                                                  tmp_path: Path) -> None:
    """Ingest failed with "internal error: UnicodeEncodeError" (Arrow cannot write there, nor
    DuckDB read), a staged batch left behind."""
    new = Path(os.fsdecode(bytes(tmp_path) + b"/new\xff"))
    said = "the archive's path is not UTF-8 text (byte 0xff), where Arrow and DuckDB cannot " \
           "open files: rename it"
    with pytest.raises(ArchiveError, match=r"path is not UTF-8 text \(byte 0xff\)"):
        ingest([str(SIM / "classic-2p-000000.blog")], new)
    assert not new.exists()
    moved = Path(os.fsdecode(bytes(tmp_path) + b"/old\xff"))
    shutil.copytree(small, moved)
    for attempt in (lambda: query(moved, "SELECT 1"), lambda: report(moved),
                    lambda: compact(str(moved))):
        with pytest.raises(ArchiveError) as err:
            attempt()
        assert str(err.value).endswith(said), str(err.value)


# -- the lock names what holds it ----------------------------------------------------------------

@pytest.mark.parametrize(("holder", "words"), [("compact", "another compact"),
                                               ("drop", "another drop of batches"),
                                               ("ingest", "another ingest")])
def test_a_writer_refused_by_the_lock_names_what_holds_it(small: Path, holder: str,
                                                          words: str) -> None:
    with store.locked(str(small), holder), pytest.raises(ArchiveError) as caught:
        compact(str(small))
    assert f"{words} is running on this archive (process {os.getpid()})" in str(caught.value)


@pytest.mark.parametrize("note", [b"\xff\xfe garbage", b"", b"compact x"])
def test_a_lock_file_that_names_nothing_names_both_writers(small: Path, note: bytes) -> None:
    """And the process holding the lock, as the system lists it (it named none)."""
    with store.locked(str(small)):
        (small / ".lock").write_bytes(note)
        with pytest.raises(ArchiveError,
                           match=r"another ingest or compact is running on this archive "
                                 rf"\(process {os.getpid()}\), holding its lock file \.lock: "
                                 r"one writer at a time, run it again once that one ends "
                                 r"\[archive\.locked\]$"):
            store.drop_batches(str(small), ["x"])


def test_a_dry_run_names_no_holder_and_a_lock_let_go_names_none(small: Path) -> None:
    with store.locked(str(small), None):
        assert (small / ".lock").read_bytes() == b""
    with store.locked(str(small), "compact"):
        assert (small / ".lock").read_bytes() == f"compact {os.getpid()}\n".encode()
    assert (small / ".lock").read_bytes() == b""


def test_the_cli_names_a_compact_holding_the_lock(small: Path) -> None:
    logs = small.parent / "logs"
    with store.locked(str(small), "compact"):
        err = one_error_line(cli("ingest", str(logs), "--archive", str(small)), 1)
    assert f"another compact is running on this archive (process {os.getpid()})" in err, err


# -- a damaged marker says how to mend it -------------------------------------------------------

@pytest.mark.parametrize("marker", [b"{bad", b"[1]", b"\xff", b""])
def test_a_damaged_marker_says_how_to_write_it_again_and_that_advice_works(
        small: Path, tmp_path: Path, marker: bytes) -> None:
    arch = tmp_path / "a"
    shutil.copytree(small, arch)
    (arch / "archive.json").write_bytes(marker)
    with pytest.raises(ArchiveError) as caught:
        query(arch, "SELECT 1")
    advice = str(caught.value)
    assert "restore it from a backup, or write it again as {" in advice
    (arch / "archive.json").write_text(advice.split("write it again as ")[1].split(" (with")[0])
    assert query(arch, "SELECT count(*) AS n FROM matches").to_pylist() == [{"n": 3}]


# -- a VARIANT is its JSON text ---------------------------------------------------------------

def test_a_variant_comes_out_as_its_json_text_alone_nested_or_null(small: Path) -> None:
    got = query(small, "SELECT 1::VARIANT AS v, {'a': [1, 2]}::VARIANT AS w, "
                       "[2::VARIANT] AS l, NULL::VARIANT AS n, 7 AS k").to_pylist()
    assert got == [{"v": "1", "w": '{"a":[1,2]}', "l": ["2"], "n": None, "k": 7}]


def test_a_variant_among_columns_of_one_name_keeps_each_in_its_place(small: Path) -> None:
    table = query(small, 'SELECT 1::VARIANT AS "a""b", 7 AS "a""b"')
    assert table.column_names == ['a"b', 'a"b']
    assert [c.to_pylist() for c in table.columns] == [["1"], [7]]


def test_the_cli_prints_a_variant_as_json_text_in_every_format(small: Path) -> None:
    for fmt, shown in (("csv", '"{""a"":[1,2]}"'), ("table", '{"a":[1,2]}'),
                       ("json", '"{\\"a\\":[1,2]}"')):
        done = cli("query", str(small), "SELECT {'a': [1, 2]}::VARIANT AS w", "-f", fmt)
        assert done.returncode == 0 and shown in done.stdout, (fmt, done.stdout)
        assert "metadata" not in done.stdout


def test_a_variant_inside_a_struct_map_or_array_is_json_there_as_on_spark(small: Path) -> None:
    got = query(small, "SELECT {'k': '[true]'::JSON::VARIANT, 'n': 1} AS o, "
                       "MAP {'a': 1::VARIANT} AS m, [1::VARIANT, 2]::VARIANT[2] AS a, "
                       "[[{'x': 2::VARIANT}]] AS deep").to_pylist()
    assert got == [{"o": {"k": "[true]", "n": 1}, "m": [("a", "1")], "a": ["1", "2"],
                    "deep": [[{"x": "2"}]]}]
