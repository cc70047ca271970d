"""Fault probes, round 39, of the query sandbox: DuckDB 2.0's table functions that act rather
than read (a CHECKPOINT, settings, the log store, external resources, SQL run from a string),
a PIVOT DuckDB runs as two statements, and DuckDB's advice to change a setting or install an
extension, which the sandbox refuses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from buraco_log.archive import query, views
from buraco_log.errors import ArchiveError
from tests.archive.conftest import Archived
from tests.archive.filetree import tree_digest as digest

ROOT = Path(__file__).resolve().parents[2]


def refused(archive: Path, sql: str) -> str:
    """The one-line error of ``sql``, which must leave the archive as it was."""
    before = digest(archive)
    with pytest.raises(ArchiveError) as err:
        query(archive, sql, timeout=30)
    assert digest(archive) == before
    message = str(err.value)
    assert message.startswith("query: ") and "\n" not in message, message
    return message


# Every table function DuckDB 2.0 has that only reads (or fails to bind in the sandbox): a
# DuckDB with a table function in neither this list nor views.ACTING_TABLE_FUNCTIONS fails
# the test below, so a new one is looked at before it can be called from a SELECT.
READING = frozenset({
    "arrow_scan", "arrow_scan_dumb", "duckdb_approx_database_count", "duckdb_available_metrics",
    "duckdb_columns", "duckdb_connection_count", "duckdb_constraints", "duckdb_coordinate_systems",
    "duckdb_databases", "duckdb_dependencies", "duckdb_dialects", "duckdb_eviction_queues",
    "duckdb_extension_repositories", "duckdb_extensions", "duckdb_external_file_cache",
    "duckdb_external_resource_types", "duckdb_external_resources", "duckdb_functions",
    "duckdb_grammar_extensions", "duckdb_indexes", "duckdb_keywords", "duckdb_live_query_metrics",
    "duckdb_log_contexts", "duckdb_logs", "duckdb_logs_parsed", "duckdb_memory",
    "duckdb_optimizers", "duckdb_prepared_statements", "duckdb_profiling_settings",
    "duckdb_schemas", "duckdb_secret_type_parameters", "duckdb_secret_types", "duckdb_secrets",
    "duckdb_sequences", "duckdb_settings", "duckdb_table_sample", "duckdb_tables",
    "duckdb_temporary_files", "duckdb_triggers", "duckdb_types", "duckdb_variables",
    "duckdb_views", "generate_series", "glob", "histogram", "histogram_values",
    "icu_calendar_names", "json_each", "json_tree", "pandas_scan", "parquet_bloom_probe",
    "parquet_file_metadata", "parquet_full_metadata", "parquet_kv_metadata", "parquet_metadata",
    "parquet_page_index", "parquet_scan", "parquet_schema", "pg_timezone_names",
    "pragma_collations", "pragma_database_size", "pragma_metadata_info", "pragma_platform",
    "pragma_show", "pragma_storage_info", "pragma_table_info", "pragma_user_agent",
    "pragma_version", "python_arrow_scan", "python_map_function", "query_table", "range",
    "read_blob", "read_csv", "read_csv_auto", "read_duckdb", "read_json", "read_json_auto",
    "read_json_objects", "read_json_objects_auto", "read_ndjson", "read_ndjson_auto",
    "read_ndjson_objects", "read_parquet", "read_single_csv_file", "read_single_json_file",
    "read_single_parquet_file", "read_text", "repeat", "repeat_row", "seq_scan", "sniff_csv",
    "summary", "test_all_types", "test_vector_types", "unnest", "which_secret",
})


def test_every_table_function_is_known_to_read_or_refused() -> None:
    con = duckdb.connect()
    try:
        names = {r[0] for r in con.execute(
            "SELECT function_name FROM duckdb_functions() "
            "WHERE function_type IN ('table', 'table_macro')").fetchall()}
    finally:
        con.close()
    unknown = sorted(names - READING - views.ACTING_TABLE_FUNCTIONS.keys())
    assert not unknown, f"table functions neither known to read nor refused: {unknown}"
    assert not READING & views.ACTING_TABLE_FUNCTIONS.keys()


ACTING = [
    # each ran inside a SELECT before round 39 (checkpoint, truncate_duckdb_logs and the
    # external resources succeeded; query() ran any SELECT, those above too)
    ("SELECT * FROM checkpoint()", "checkpoint(), a table function that checkpoints"),
    ("SELECT * FROM checkpoint('memory')", "checkpoint()"),
    ("FROM force_checkpoint()", "force_checkpoint()"),
    ("SELECT * FROM truncate_duckdb_logs()", "truncate_duckdb_logs()"),
    ("SELECT * FROM register_external_resource_type('t', kind := 'database', "
     "create_function := 'read_text')", "changes the database's external resources"),
    ("SELECT * FROM destroy_external_resource('read_text', '/etc/hostname')",
     "destroy_external_resource()"),
    ("SELECT * FROM query('SELECT * FROM chec' || 'kpoint()')",
     "query(), a table function that runs SQL given as a string"),
    ("SELECT * FROM json_execute_serialized_sql(json_serialize_sql("
     "'SELECT * FROM truncate_duckdb_logs()'))", "json_execute_serialized_sql()"),
    ("SELECT * FROM add_grammar_extension('x')", "changes the SQL parser"),
    # however the name is written
    ('SELECT * FROM "system".main."CheckPoint"()', "checkpoint()"),
    ("SELECT * FROM CHECKPOINT /* a comment */ ()", "checkpoint()"),
    ("SELECT count(*) FROM matches WHERE EXISTS (FROM truncate_duckdb_logs())",
     "truncate_duckdb_logs()"),
    ("EXPLAIN ANALYZE SELECT * FROM checkpoint()", "checkpoint()"),
    ("SELECT * FROM enable_logging(storage := 'file', storage_path := '/tmp/x')",
     "changes settings"),
]


@pytest.mark.parametrize(("sql", "said"), ACTING, ids=[s for s, _ in ACTING])
def test_a_table_function_that_acts_is_refused_by_name(archived: Archived, sql: str,
                                                       said: str) -> None:
    message = refused(archived.path, sql)
    assert message.startswith("query: only read-only SELECT statements are allowed, not ")
    assert said in message, message


@pytest.mark.parametrize("sql", [
    "SELECT 'checkpoint()' AS said, 1 AS query",
    "SELECT count(*) AS n FROM query_table('matches')",
    "SELECT count(*) AS n FROM range(3) -- checkpoint()",
    'SELECT "query" FROM (SELECT 1 AS query)',
    "SELECT count(*) AS n FROM duckdb_logs",
])
def test_the_names_in_a_string_a_comment_or_a_column_are_no_call(archived: Archived,
                                                                  sql: str) -> None:
    assert query(archived.path, sql).num_rows == 1


@pytest.mark.parametrize("sql", [
    "SELECT * FROM enable_logging(storage := 'file', storage_path := '{out}/log')",
    "SELECT * FROM enable_profiling()",
    "SELECT * FROM add_grammar_extension('x')",
])
def test_the_locked_connection_refuses_the_setting_ones_without_the_check(
        archived: Archived, sql: str, tmp_path: Path) -> None:
    """The second wall: DuckDB's locked configuration refuses them too."""
    con = views.connect(archived.path)
    try:
        with pytest.raises(duckdb.Error, match="locked"):
            con.execute(sql.format(out=tmp_path))
    finally:
        con.close()
    assert list(tmp_path.iterdir()) == []


def test_a_refused_table_function_is_one_line_from_the_command(archived: Archived) -> None:
    r = subprocess.run([sys.executable, "-m", "cli.main", "query", str(archived.path),
                        "SELECT * FROM query('SELECT 1')"], cwd=ROOT, capture_output=True,
                       text=True, timeout=120, check=False, stdin=subprocess.DEVNULL)
    assert (r.returncode, r.stdout) == (1, ""), r.stderr
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(
        "buraco-log: error: query: only read-only SELECT statements are allowed, not query()")


def test_a_pivot_that_does_not_list_its_values_says_so(archived: Archived) -> None:
    """It said "not MULTI", DuckDB's name for the CREATE TYPE and SELECT it makes of one."""
    message = refused(archived.path, "SELECT * FROM (PIVOT matches ON n_players USING count(*))")
    assert "MULTI" not in message and "PIVOT ... ON col IN (" in message, message
    listed = ("SELECT * FROM (PIVOT matches ON n_players IN (2, 4) USING count(*) "
              "GROUP BY preset)")
    assert query(archived.path, listed).num_rows == 1


_VALUES = ", ".join(str(i) for i in range(400))
ADVICE = [
    ("SELECT 1 // 0", "use TRY(...)"),
    ("SELECT count(*) % 0 FROM matches", "Division by zero"),
    # 400 x 400 columns: past DuckDB's pivot_limit, with the SQL well under its own limit
    ("SELECT * FROM (PIVOT (SELECT range AS a, range AS b FROM range(3)) "
     f"ON a IN ({_VALUES}), b IN ({_VALUES}) USING count(*))",
     "a PIVOT may make at most 100000 columns"),
    ("SELECT * FROM read_xlsx('x.xlsx')", "excel extension, which the sandbox does not load"),
    ("SELECT st_point(1, 2)", "spatial extension, which the sandbox does not load"),
]


@pytest.mark.parametrize(("sql", "said"), ADVICE, ids=[s[:60] for s, _ in ADVICE])
def test_no_error_advises_a_setting_or_an_install_the_sandbox_refuses(
        archived: Archived, sql: str, said: str) -> None:
    """Before: "... or SET error_on_division_by_zero=false ...", "Use SET pivot_limit=X to
    increase the limit.", "... exists in the excel extension." (which the query cannot
    install)."""
    message = refused(archived.path, sql)
    assert said in message, message
    assert "SET " not in message and "PRAGMA" not in message, message


@pytest.mark.parametrize("text", [
    "Invalid Input Error: Failed to read file \"/a/part-x.parquet\": the OffsetIndex of column "
    "\"seq\" is corrupt. Page 3 should hold 10 rows according to the index, but holds 9 values. "
    "The file can be read without its page index: SET parquet_use_page_index = false",
    "IO Error: The parquet file '/a/part-x.parquet' seems to have incorrectly set page "
    "offsets. This interferes with DuckDB's prefetching optimization. DuckDB may still be able "
    "to scan this file by manually disabling the prefetching mechanism using: "
    "'SET disable_parquet_prefetching=true'.",
])
def test_a_damaged_file_is_not_met_with_a_setting_to_change(text: str) -> None:
    """DuckDB's words (from its library) about a damaged Parquet file: the damage is said, the
    setting that would read past it is not."""
    line = views._first_line(duckdb.InvalidInputException(text))
    assert "SET " not in line and "part-x.parquet" in line, line
