"""Fault probes of the query sandbox, second round: statements DuckDB's Python API cannot
name, SQL that is not UTF-8 or too long to plan within a time limit, a query that runs out of
memory with no room left to explain it, and DuckDB's logging and secrets functions. Each is one
line on stderr, exit 1, and the archive's bytes are unchanged."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from buraco_log.archive import query, store, views
from buraco_log.errors import ArchiveError
from tests.archive.conftest import Archived
from tests.archive.filetree import tree_digest as _digest

REPO = Path(__file__).resolve().parents[2]


def _run(*args: str | bytes, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=REPO,
                          env={**os.environ, "COLUMNS": "200"})


REFUSED = [
    # DuckDB's Python API has no name for this statement's type (29): reading it raised
    # ValueError, reported as "internal error ... a defect of buraco-log"
    ("UPDATE EXTENSIONS", "only read-only SELECT statements are allowed"),
    ("UPDATE EXTENSIONS (httpfs)", "only read-only SELECT statements are allowed"),
    ("EXPLAIN UPDATE EXTENSIONS", "not EXPLAIN of"),
    ("EXPLAIN ANALYZE UPDATE EXTENSIONS", "not EXPLAIN of"),
    # settings changed through table functions: refused by name before DuckDB sees them
    # (round 39; the locked configuration refuses them too, test_fault_probes_archive39.py)
    ("SELECT * FROM enable_logging(storage = 'file', storage_path = '{archive}/log')",
     "a table function that changes settings"),
    ("SELECT * FROM enable_profiling()", "a table function that changes settings"),
    ("SELECT * FROM disable_logging()", "a table function that changes settings"),
    # what DuckDB looks for under the home directory: refused by name (round 40: its error
    # named ~/.duckdb), nothing is opened
    ("SELECT * FROM duckdb_extensions()", "is not available in the sandbox"),
    ("SELECT * FROM duckdb_secrets()", "is not available in the sandbox"),
    ("SELECT * FROM read_duckdb('{archive}/x.duckdb')", "disabled by configuration"),
    ("SELECT * FROM read_text('/proc/self/environ')", "disabled by configuration"),
    # a look-alike keyword in full-width letters is no keyword
    ("ＳＥＬＥＣＴ 1", "syntax error"),
    ("WITH x AS (COPY matches TO '{archive}/x.csv') SELECT 1", "query:"),
]


# Through the command line: one statement of each kind in the default run, every one in the
# slow run (a process each took 16 s); every one through the library below, which words the
# line the command prints.
CLI_DEFAULT = {"UPDATE EXTENSIONS",
               "SELECT * FROM enable_logging(storage = 'file', storage_path = '{archive}/log')",
               "SELECT * FROM read_text('/proc/self/environ')",
               "WITH x AS (COPY matches TO '{archive}/x.csv') SELECT 1"}


@pytest.mark.parametrize(("sql", "said"), [
    pytest.param(sql, said, id=sql, marks=() if sql in CLI_DEFAULT else pytest.mark.slow)
    for sql, said in REFUSED])
def test_a_refused_statement_is_one_line_and_leaves_the_archive_as_it_was(
        archived: Archived, sql: str, said: str) -> None:
    before = _digest(archived.path)
    r = _run("query", str(archived.path), sql.format(archive=archived.path))
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 1 and r.stdout == "", r
    assert len(lines) == 1 and said in lines[0], r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    assert _digest(archived.path) == before


def test_every_refused_statement_is_one_line_from_the_library_and_changes_nothing(
        archived: Archived) -> None:
    before = _digest(archived.path)
    for sql, said in REFUSED:
        with pytest.raises(ArchiveError) as refused:  # not a ValueError (an internal error)
            query(archived.path, sql.format(archive=archived.path))
        message = str(refused.value)
        assert said in message and "\n" not in message.strip(), (sql, message)
    assert _digest(archived.path) == before


def test_sql_that_is_not_utf8_is_one_line_naming_the_byte(archived: Archived) -> None:
    """Before: a byte 0xff in the SQL argument reached DuckDB as a lone surrogate:
    'internal error: TypeError: extract_statements(): incompatible function arguments'."""
    before = _digest(archived.path)
    r = subprocess.run([sys.executable, "-m", "cli.main", "query", str(archived.path),
                        b"SELECT '\xff'"], capture_output=True, cwd=REPO, timeout=120)
    err = r.stderr.decode("utf-8", "replace").strip().splitlines()
    assert r.returncode == 1 and r.stdout == b""
    assert len(err) == 1 and "not UTF-8" in err[0] and "byte 0xff" in err[0], err
    with pytest.raises(ArchiveError, match="lone surrogate U\\+D800"):
        query(archived.path, "SELECT '\ud800'")
    assert _digest(archived.path) == before


def test_sql_longer_than_the_limit_is_refused_before_duckdb_plans_it(
        archived: Archived) -> None:
    """Before: DuckDB parses and plans without heeding an interrupt, so 300,000 OR terms ran
    15 s past a 2 s time limit. Now text over MAX_SQL bytes is refused at once; text at the
    limit still runs."""
    terms = " OR ".join(f"{i} = {i}" for i in range(300_000))
    sql = f"SELECT 1 AS one WHERE {terms}"
    assert len(sql.encode()) > views.MAX_SQL
    t = time.monotonic()
    with pytest.raises(ArchiveError, match=f"more than the {views.MAX_SQL:,}"):
        query(archived.path, sql, timeout=2)
    assert time.monotonic() - t < 2
    at_limit = "SELECT 1 AS one" + " " * (views.MAX_SQL - len("SELECT 1 AS one"))
    assert query(archived.path, at_limit).to_pylist() == [{"one": 1}]
    # multi-byte characters count as their UTF-8 bytes
    wide = "SELECT 'é' AS e -- " + "é" * (views.MAX_SQL // 2)
    with pytest.raises(ArchiveError, match="bytes long"):
        query(archived.path, wide)


def test_the_archive_marker_is_read_without_reserving_the_largest_size(
        archived: Archived) -> None:
    """Before: read_json reserved MAX_JSON (64 MiB) for every read, so a process near its
    memory bound failed to read archive.json (a MemoryError, a traceback)."""
    code = f"""
import resource
from buraco_log.archive import store, views
used = views._data_in_use()
soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
resource.setrlimit(resource.RLIMIT_DATA, (used + (24 << 20), hard))
for _ in range(3):
    print(store.check_archive({str(archived.path)!r}) is not None,
          len(store.manifests({str(archived.path)!r})) > 0)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=REPO, timeout=60)
    assert r.returncode == 0 and r.stdout.split() == ["True"] * 6, r.stderr[-500:]
    assert resource.getrlimit(resource.RLIMIT_DATA)  # this process was never bounded


def test_a_query_that_runs_out_of_memory_is_one_line(archived: Archived) -> None:
    """Before: 1,500 window functions exhausted the process bound, and explaining the error
    read archive.json again (64 MiB reserved): MemoryError, a traceback on stderr."""
    windows = ", ".join(f"sum(seq) OVER (PARTITION BY hand ORDER BY seq ROWS {i} PRECEDING)"
                        for i in range(1500))
    before = _digest(archived.path)
    r = _run("query", str(archived.path), f"SELECT {windows} FROM events",
             "--memory-limit", "256MB", "--format", "csv")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-800:]
    assert len(lines) == 1 and "out of memory under the 256MB limit" in lines[0], lines
    assert _digest(archived.path) == before



OVERWRITES = [
    "COPY (SELECT 1 AS x) TO '{f}' (FORMAT parquet, USE_TMP_FILE false)",
    "EXPLAIN ANALYZE COPY (SELECT 1 AS x) TO '{f}' (FORMAT parquet, USE_TMP_FILE false)",
    "EXPLAIN (ANALYZE) COPY (SELECT 1 AS x) TO '{f}' (USE_TMP_FILE 0)",
    "SELECT * FROM query('COPY (SELECT 1 AS x) TO ''{f}'' (USE_TMP_FILE false)')",
    "SELECT 1; COPY (SELECT 1 AS x) TO '{f}' (FORMAT csv, USE_TMP_FILE false)",
    "/* SELECT */ COPY matches TO '{f}' (USE_TMP_FILE false, OVERWRITE_OR_IGNORE)",
]


@pytest.mark.parametrize("sql", OVERWRITES)
def test_no_wrapper_overwrites_a_committed_file_in_place(archived: Archived, sql: str) -> None:
    """A committed file is in allowed_paths, and DuckDB lets COPY write it in place (no
    temporary file) when the process may write it, as root may whatever its mode: the
    statement check must refuse every form of it."""
    target = str(store.committed_files(str(archived.path))["matches"][0])
    before = _digest(archived.path)
    with pytest.raises(ArchiveError, match="query: "):
        query(archived.path, sql.format(f=target))
    assert _digest(archived.path) == before
