"""User SQL cannot leave the archive: every escape attempt fails with a clear error."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from buraco_log.archive import query
from buraco_log.archive import views as views_mod
from buraco_log.errors import ArchiveError
from tests.archive.conftest import Archived
from tests.archive.filetree import sized_tree


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("outside")
    (d / "secret.csv").write_text("secret\n42\n")
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"secret": [42]}), d / "secret.parquet")
    return d


ATTEMPTS = [
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_csv_auto('/etc/passwd')",
    "FROM read_csv('/etc/passwd')",
    "SELECT * FROM '/etc/passwd'",
    "SELECT * FROM read_text('/etc/hostname')",
    "SELECT * FROM read_blob('/etc/passwd')",
    "SELECT * FROM read_json('/etc/passwd')",
    "SELECT * FROM sniff_csv('/etc/passwd')",
    "SELECT * FROM glob('/etc/*')",
    "SELECT * FROM glob('{outside}/*')",
    "SELECT * FROM read_parquet('{outside}/secret.parquet')",
    "SELECT * FROM '{outside}/secret.parquet'",
    "SELECT * FROM parquet_metadata('{outside}/secret.parquet')",
    "SELECT * FROM parquet_schema('{outside}/secret.parquet')",
    "SELECT * FROM read_csv('{archive}/../../outside0/secret.csv')",
    "SELECT * FROM read_csv('{archive}/matches/../../../outside0/secret.csv')",
    "SELECT * FROM read_csv(['{archive}/archive.json', '/etc/passwd'])",
    "SELECT * FROM read_csv('~/.bashrc')",
    "SELECT * FROM read_csv('https://example.com/x.csv')",
    "COPY matches TO '{outside}/stolen.csv'",
    "COPY (SELECT 1) TO '{archive}/inside.csv'",
    "EXPORT DATABASE '{outside}/export'",
    "ATTACH '{outside}/x.duckdb' AS x",
    "ATTACH ':memory:' AS m",
    "INSTALL httpfs",
    "LOAD httpfs",
    "LOAD '{outside}/evil.duckdb_extension'",
    "SET enable_external_access = true",
    "SET allowed_directories = ['/']",
    "RESET lock_configuration",
    "SET memory_limit = '100GB'",
    "PRAGMA threads = 64",
    "CALL pragma_version()",
    "CREATE TABLE t AS SELECT 1",
    "CREATE VIEW v AS SELECT * FROM read_csv('/etc/passwd')",
    "DROP VIEW matches",
    "CHECKPOINT",
    "DETACH memory",
    "SELECT 1; COPY matches TO '{outside}/two.csv'",
    "SELECT * FROM query('COPY (SELECT 1) TO ''{outside}/nested.csv''')",
    "SELECT * FROM query_table('{outside}/secret.parquet')",
    "SELECT * FROM timer",  # a Python variable in scope: no replacement scans
]


# Writes into the archive itself (issue 13, item 2: `EXPLAIN ANALYZE COPY ... TO` into a
# partition directory succeeded, and the file poisoned every later query), through every
# wrapper DuckDB has. {part} is a partition directory of the matches table.
WRITE_ATTEMPTS = [
    "EXPLAIN ANALYZE COPY (SELECT * FROM matches) TO '{part}/part-evil.parquet' "
    "(FORMAT parquet)",
    "EXPLAIN ANALYZE COPY (SELECT * FROM matches) TO '{archive}/_batches/evil.json'",
    "EXPLAIN ANALYZE COPY (SELECT * FROM matches) TO '{archive}/escape6.csv'",
    "EXPLAIN COPY (SELECT * FROM matches) TO '{archive}/escape6.csv'",
    "EXPLAIN (ANALYZE) COPY (SELECT 1) TO '{archive}/escape6.csv'",
    "EXPLAIN (ANALYZE, FORMAT json) COPY (SELECT 1) TO '{archive}/escape6.csv'",
    "EXPLAIN ANALYZE (FORMAT json) COPY (SELECT 1) TO '{archive}/escape6.csv'",
    "EXPLAIN /* ( */ ANALYZE -- )\n COPY (SELECT ')') TO '{archive}/escape6.csv'",
    "explain analyse copy (select 1) to '{archive}/escape6.csv'",
    "EXPLAIN VERBOSE COPY (SELECT 1) TO '{archive}/escape6.csv'",
    "EXPLAIN ANALYZE COPY matches TO '{part}/part-evil.parquet' (FORMAT parquet)",
    "EXPLAIN ANALYZE COPY (WITH m AS (SELECT * FROM matches) SELECT * FROM m) "
    "TO '{archive}/escape6.csv'",
    "EXPLAIN ANALYZE EXPORT DATABASE '{archive}/export'",
    "EXPLAIN ANALYZE ATTACH '{archive}/x.duckdb' AS x",
    "EXPLAIN ANALYZE CREATE MACRO evil() AS TABLE SELECT 1",
    "EXPLAIN ANALYZE SET enable_external_access = true",
    "EXPLAIN ANALYZE PRAGMA threads = 64",
    "EXPLAIN ANALYZE INSTALL httpfs",
    "EXPLAIN ANALYZE CHECKPOINT",
    "EXPLAIN ANALYZE EXPLAIN ANALYZE COPY (SELECT 1) TO '{archive}/escape6.csv'",
    "COPY (SELECT * FROM matches) TO '{part}/part-evil.parquet' (FORMAT parquet)",
    "COPY (WITH m AS (SELECT 1) SELECT * FROM m) TO '{archive}/escape6.csv'",
    "WITH m AS (SELECT 1) SELECT * FROM m; COPY matches TO '{archive}/escape6.csv'",
    "PREPARE p AS COPY (SELECT 1) TO '{archive}/escape6.csv'",
    "PREPARE p AS SELECT 1",
    "PREPARE p AS SELECT 1; EXECUTE p",
    "EXECUTE p",
    "CREATE MACRO evil() AS TABLE SELECT 1",
    "CREATE TEMP MACRO twice(x) AS x * 2",
    "CREATE OR REPLACE VIEW matches AS SELECT 1",
    "SET VARIABLE x = 1",
    "SET threads = 1",
    "RESET ALL",
    "PRAGMA enable_profiling",
    "PRAGMA profiling_output = '{archive}/profile.txt'",
    "SET profiling_output = '{archive}/profile.txt'",
    "ATTACH '{archive}/x.duckdb' AS x",
    "ATTACH '{part}/part-evil.duckdb'",
    "INSTALL json",
    "LOAD json",
    "FORCE INSTALL httpfs",
    "COPY FROM DATABASE memory TO x",
    "EXPORT DATABASE '{archive}/export'",
    "EXPORT DATABASE '{archive}/export' (FORMAT parquet)",
    "IMPORT DATABASE '{archive}'",
    "CREATE SECRET s (TYPE s3, KEY_ID 'k', SECRET 's')",
    "VACUUM",
    "ANALYZE",
    "USE memory",
    "BEGIN TRANSACTION",
    "INSERT INTO matches SELECT * FROM matches",
    "PIVOT matches ON preset USING count(*)",
    "SELECT * FROM query('COPY (SELECT 1) TO ''{archive}/escape6.csv''')",
    "SELECT * FROM query('EXPLAIN ANALYZE COPY (SELECT 1) TO ''{archive}/escape6.csv''')",
    "SELECT * FROM glob('{archive}/**')",
    "SELECT * FROM read_json('{archive}/_batches/*.json')",
    "SELECT * FROM read_text('{archive}/archive.json')",
]


def _fill(attempt: str, archived: Archived, outside: Path) -> str:
    # The second outside path reaches the same directory through "..".
    rel = os.path.relpath(outside.parent / "outside0", archived.path)
    part = next(p for p in (archived.path / "matches").glob("preset=*/month=*") if p.is_dir())
    sql = attempt.format(archive=archived.path, outside=outside, part=part)
    return sql.replace(f"{archived.path}/../../outside0", f"{archived.path}/{rel}")


@pytest.mark.parametrize("attempt", ATTEMPTS + WRITE_ATTEMPTS)
def test_escape_attempt_fails_with_a_clear_error(attempt: str, archived: Archived,
                                                 outside: Path) -> None:
    sql = _fill(attempt, archived, outside)
    before = sorted(os.listdir(outside)), sized_tree(archived.path)
    with pytest.raises(ArchiveError) as err:
        query(archived.path, sql)
    message = str(err.value)
    assert message.startswith("query: ") and len(message) > 20 and "\n" not in message
    assert (sorted(os.listdir(outside)), sized_tree(archived.path)) == before
    assert not (archived.path / "inside.csv").exists()


@pytest.mark.parametrize("wrapped", [
    "EXPLAIN SELECT count(*) FROM matches",
    "EXPLAIN ANALYZE SELECT count(*) FROM matches",
    "EXPLAIN (FORMAT json) SELECT count(*) FROM matches",
    "EXPLAIN (SELECT count(*) FROM matches) UNION ALL SELECT 1",
    "WITH m AS (SELECT * FROM matches) SELECT count(*) FROM m",
    "SUMMARIZE matches",
    "DESCRIBE events",
    "SELECT * FROM (PIVOT matches ON n_players IN (2, 4) USING count(*))",
])
def test_read_only_wrappers_still_work(wrapped: str, archived: Archived) -> None:
    before = sized_tree(archived.path)
    assert query(archived.path, wrapped).num_rows >= 1
    assert sized_tree(archived.path) == before


def test_the_committed_files_are_read_only_on_disk(archived: Archived) -> None:
    parts = list(archived.path.glob("*/**/part-*.parquet"))
    assert parts and all(p.stat().st_mode & 0o222 == 0 for p in parts)


def test_explain_analyze_copy_into_a_partition_is_refused_by_the_cli(
        archived: Archived, outside: Path) -> None:
    """The issue's reproduction, as a real process: one line, exit 1, no file anywhere."""
    sql = _fill(WRITE_ATTEMPTS[0], archived, outside)
    before = sized_tree(archived.path)
    r = subprocess.run([sys.executable, "-m", "cli.main", "query", str(archived.path), sql],
                       capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.startswith("buraco-log: error: query: ") and r.stderr.count("\n") == 1
    assert "EXPLAIN of COPY" in r.stderr
    assert sized_tree(archived.path) == before
    assert query(archived.path, "SELECT count(*) AS n FROM matches").column("n")[0].as_py() > 0


def test_there_are_at_least_thirty_escape_attempts() -> None:
    assert len(ATTEMPTS) >= 30


def test_a_symlink_inside_the_archive_is_refused(archived: Archived, outside: Path,
                                                 tmp_path: Path) -> None:
    arch = tmp_path / "a"
    shutil.copytree(archived.path, arch)
    (arch / "matches" / "link.csv").symlink_to(outside / "secret.csv")
    with pytest.raises(ArchiveError, match="symbolic links"):
        query(arch, "SELECT count(*) FROM matches")


def test_duckdb_itself_refuses_a_symlink_out_of_the_archive(
        archived: Archived, outside: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    arch = tmp_path / "a"
    shutil.copytree(archived.path, arch)
    (arch / "link.parquet").symlink_to(outside / "secret.parquet")
    monkeypatch.setattr(views_mod, "_refuse_symlinks", lambda root: None)
    with pytest.raises(ArchiveError, match="Permission"):
        query(arch, f"SELECT * FROM read_parquet('{arch}/link.parquet')")


def test_reading_inside_the_archive_still_works(archived: Archived) -> None:
    t = query(archived.path, "SELECT count(*) AS n FROM events WHERE kind = 'dr'")
    assert t.column("n")[0].as_py() > 0
    t = query(archived.path, "SELECT current_setting('enable_external_access') AS e, "
                             "current_setting('lock_configuration') AS l")
    assert t.to_pylist() == [{"e": False, "l": True}]


def test_a_runaway_query_is_stopped_by_the_time_limit(archived: Archived) -> None:
    with pytest.raises(ArchiveError, match="time limit"):
        query(archived.path, "SELECT count(*) FROM range(100000000000) a", timeout=0.2)


def test_the_memory_limit_holds(archived: Archived) -> None:
    with pytest.raises(ArchiveError, match=r"out of memory under the 64MB limit.*--memory-limit"):
        query(archived.path, "SELECT list(range) FROM range(200000000)",
              memory_limit="64MB")


SECOND_WALL = [
    "COPY matches TO '{outside}/stolen.csv'",
    "COPY (SELECT 1) TO '{archive}/../stolen.parquet' (FORMAT parquet)",
    "EXPORT DATABASE '{outside}/export'",
    "ATTACH '{outside}/x.duckdb' AS x",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET enable_external_access = true",
    "SET allowed_directories = ['/']",
    "SET memory_limit = '100GB'",
    "RESET lock_configuration",
    "PRAGMA threads = 64",
    "EXPLAIN ANALYZE COPY (SELECT * FROM matches) TO '{part}/part-evil.parquet' "
    "(FORMAT parquet)",
    "EXPLAIN ANALYZE COPY (SELECT 1) TO '{archive}/_batches/evil.json'",
    "COPY (SELECT 1) TO '{archive}/escape6.csv'",
    "EXPORT DATABASE '{archive}/export'",
    "ATTACH '{archive}/x.duckdb' AS x",
    "SELECT * FROM glob('{archive}/*')",
]


@pytest.mark.parametrize("attempt", SECOND_WALL)
def test_duckdb_settings_hold_even_without_the_statement_check(
        attempt: str, archived: Archived, outside: Path) -> None:
    import duckdb

    before = sized_tree(archived.path)
    con = views_mod.connect(archived.path)
    try:
        with pytest.raises(duckdb.Error, match=r"(?i)permission|locked|disabled"):
            con.execute(_fill(attempt, archived, outside))
    finally:
        con.close()
    assert sized_tree(archived.path) == before
    assert not (outside / "stolen.csv").exists()
    assert not (archived.path.parent / "stolen.parquet").exists()
