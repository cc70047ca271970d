"""User SQL cannot leave the archive: every escape attempt fails with a clear error."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from buraco_log.archive import query
from buraco_log.archive import views as views_mod
from buraco_log.errors import ArchiveError
from tests.archive.conftest import Archived


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


@pytest.mark.parametrize("attempt", ATTEMPTS)
def test_escape_attempt_fails_with_a_clear_error(attempt: str, archived: Archived,
                                                 outside: Path) -> None:
    # The second outside path reaches the same directory through "..".
    rel = os.path.relpath(outside.parent / "outside0", archived.path)
    sql = attempt.format(archive=archived.path, outside=outside)
    sql = sql.replace(f"{archived.path}/../../outside0", f"{archived.path}/{rel}")
    before = sorted(os.listdir(outside))
    with pytest.raises(ArchiveError) as err:
        query(archived.path, sql)
    message = str(err.value)
    assert message.startswith("query: ") and len(message) > 20
    assert sorted(os.listdir(outside)) == before
    assert not (archived.path / "inside.csv").exists()


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
]


@pytest.mark.parametrize("attempt", SECOND_WALL)
def test_duckdb_settings_hold_even_without_the_statement_check(
        attempt: str, archived: Archived, outside: Path) -> None:
    import duckdb

    con = views_mod.connect(archived.path)
    try:
        with pytest.raises(duckdb.Error, match=r"(?i)permission|locked|disabled"):
            con.execute(attempt.format(archive=archived.path, outside=outside))
    finally:
        con.close()
    assert not (outside / "stolen.csv").exists()
    assert not (archived.path.parent / "stolen.parquet").exists()
