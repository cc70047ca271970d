"""Fault probes of the query sandbox, as a hostile or careless user of a club's shared archive
would try it: a committed file read by a reader of another format, an error message the user
writes, naming a committed file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from buraco_log.archive import query, store, views
from buraco_log.errors import ArchiveError

SLOW = pytest.mark.slow


def _part(archive: Path) -> str:
    return store.committed_files(str(archive))["matches"][0]


# Before: each said "ARCHIVE/matches/.../part-....parquet: damaged archive file: ...": the
# file is whole (its bytes are those its batch record keeps), the user read it as text, JSON
# or CSV, or wrote the words themselves. A referee told the archive is damaged restores a
# backup over a sound archive, or doubts every result drawn from it.
@pytest.mark.parametrize("sql", [
    "SELECT error('Corrupt file ''{p}''') AS e",
    pytest.param("SELECT * FROM read_text('{p}')", marks=SLOW),
    pytest.param("SELECT * FROM read_json('{p}')", marks=SLOW),
    pytest.param("SELECT * FROM read_csv('{p}')", marks=SLOW),
    pytest.param("SELECT * FROM sniff_csv('{p}')", marks=SLOW),
    pytest.param("SELECT * FROM read_json_objects('{p}')", marks=SLOW),
])
def test_a_whole_file_read_as_another_format_is_not_called_damaged(three: Path,
                                                                   sql: str) -> None:
    part = _part(three)
    with pytest.raises(ArchiveError) as err:
        query(three, sql.format(p=part), timeout=30)
    message = str(err.value)
    assert "damaged" not in message, message
    assert message.startswith("query: ") and "\n" not in message, message


@pytest.mark.slow
def test_a_committed_file_whose_bytes_changed_is_still_named_damaged(three: Path,
                                                                      tmp_path: Path) -> None:
    """The other side: a file whose bytes are not those its record keeps is named damaged
    when the user's read of it fails, as before."""
    arch = tmp_path / "arch"
    shutil.copytree(three, arch)
    part = _part(arch)
    data = bytearray(Path(part).read_bytes())
    data[4:12] = b"\xff" * 8  # the first page's header, past the magic bytes
    Path(part).chmod(0o644)
    Path(part).write_bytes(bytes(data))
    with pytest.raises(ArchiveError) as err:
        query(arch, f"SELECT * FROM read_parquet('{part}')", timeout=30)
    assert str(err.value).startswith(f"{part}: damaged archive file"), err.value


def test_a_parquet_key_error_advises_no_pragma(three: Path) -> None:
    """Before: "No key with name "k" exists. Add it with PRAGMA add_parquet_key(...)", a
    statement the sandbox refuses; the archive's files are not encrypted."""
    sql = f"SELECT * FROM read_parquet('{_part(three)}', encryption_config = {{footer_key: 'k'}})"
    with pytest.raises(ArchiveError) as err:
        query(three, sql, timeout=30)
    message = str(err.value)
    assert 'No key with name "k" exists' in message, message
    assert "PRAGMA" not in message and "add_parquet_key" not in message, message
    assert "not encrypted" in message and "\n" not in message, message


# -- data-modifying CTEs (DuckDB 2.0): the statement is a SELECT, its WITH clause writes ------


def _digest(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def test_a_copy_in_a_with_clause_does_not_overwrite_a_committed_file(three: Path,
                                                                      tmp_path: Path) -> None:
    """Before: exit 0, one row, and the committed part held "x\\n42\\n": DuckDB 2.0 runs a
    WITH clause's COPY TO as part of the SELECT it leads (its type is SELECT), and the
    committed files are the paths the sandbox lets DuckDB open."""
    arch = tmp_path / "arch"
    shutil.copytree(three, arch)
    part = _part(arch)
    before = _digest(arch)
    sql = (f"WITH c AS (COPY (SELECT 42 AS x) TO '{part}' (FORMAT csv, USE_TMP_FILE false)) "
           "SELECT * FROM c")
    with pytest.raises(ArchiveError) as err:
        query(arch, sql, timeout=30)
    assert _digest(arch) == before
    assert str(err.value) == ("query: only read-only SELECT statements are allowed, not COPY "
                              "in a WITH clause (DuckDB runs it as part of the SELECT)")


@pytest.mark.parametrize("sql", [
    "WITH c AS MATERIALIZED (/* a comment */ copy (SELECT 1) TO '{out}') FROM c",
    "WITH a AS (SELECT 1), c AS (COPY matches TO '{out}') TABLE c",
    "EXPLAIN ANALYZE WITH c AS (COPY matches TO '{out}') SELECT 1",
    "WITH d AS (DELETE FROM matches RETURNING *) SELECT count(*) FROM d",
    "WITH d AS (INSERT INTO matches SELECT * FROM matches RETURNING *) SELECT 1",
    "WITH d AS (UPDATE matches SET preset = 'x' RETURNING *) SELECT 1",
])
def test_every_data_modifying_with_clause_is_refused(three: Path, tmp_path: Path,
                                                     sql: str) -> None:
    with pytest.raises(ArchiveError) as err:
        query(three, sql.format(out=tmp_path / "out.csv"), timeout=30)
    message = str(err.value)
    assert message.startswith("query: only read-only SELECT statements are allowed, not "), \
        message
    assert message.endswith("in a WITH clause (DuckDB runs it as part of the SELECT)"), message
    assert list(tmp_path.iterdir()) == []


def test_a_word_like_a_statement_in_parentheses_is_no_with_clause(three: Path) -> None:
    """`(copy)`, `(update)`: a column, read as one; only a statement is refused."""
    got = query(three, "SELECT (copy) + (update) AS n FROM (SELECT 1 AS copy, 2 AS update)")
    assert got.column("n").to_pylist() == [3]


@pytest.mark.parametrize(("sql", "said"), [
    ("CONNECT 'quack://example.invalid'", "not CONNECT"),
    ("DISCONNECT", "not DISCONNECT"),
    ("MERGE INTO matches USING (SELECT 1) s ON true WHEN MATCHED THEN DELETE", "not MERGE"),
])
def test_duckdb_2_statements_are_refused_by_name(sql: str, said: str) -> None:
    """DuckDB 2.0's statements with no name in the Python API (CONNECT is type 31) are
    refused by the word that leads them, never as "UNKNOWN"."""
    with pytest.raises(ArchiveError) as err:
        views.check_sql(sql)
    assert str(err.value) == f"query: only read-only SELECT statements are allowed, {said}"
