"""Spark SQL over the archive: the same views and canned reports as DuckDB, and the sandbox's
promise kept by checking the statement first (user SQL reads only the archive's views)."""

from __future__ import annotations

import decimal
import importlib
import math
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import IngestReport, connect, report
from buraco_log.archive import query as duck_query
from buraco_log.errors import ArchiveError
from tests.spark.conftest import SparkRuns

pytestmark = pytest.mark.spark
report_mod = importlib.import_module("buraco_log.archive.report")  # the module, not the function


def norm(v: Any) -> Any:
    """A value as both engines agree on it: numbers as floats to 9 digits, lists by value."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, int | float | decimal.Decimal):
        f = float(v)
        return None if math.isnan(f) else round(f, 9)
    if isinstance(v, list | tuple):
        return [norm(x) for x in v]
    return str(v)


def rows_of(section: Any) -> list[list[Any]]:
    return [[norm(v) for v in r] for r in section.rows]


@pytest.mark.parametrize("which", [pytest.param("local", marks=pytest.mark.slow), "spark"])
def test_every_canned_report_equals_duckdbs(
        spark: Any, which: str, spark_runs: SparkRuns,
        local_archive: tuple[Path, IngestReport]) -> None:
    from buraco_log.archive import spark as engine

    path = local_archive[0] if which == "local" else spark_runs.path
    ours = engine.report(path, top=0, spark=spark)
    ref = report(path, top=0)
    assert (ours.matches, ours.events) == (ref.matches, ref.events) != (0, 0)
    assert [s.name for s in ours.sections] == [s.name for s in ref.sections]
    for mine, theirs in zip(ours.sections, ref.sections, strict=True):
        assert mine.columns == theirs.columns, mine.name
        assert rows_of(mine) == rows_of(theirs), mine.name
        assert mine.rows, mine.name  # the corpus gives every section rows


def test_the_elo_fold_over_spark_sql_equals_duckdbs(
        spark: Any, local_archive: tuple[Path, IngestReport]) -> None:
    """The leaderboard computed live (no stored ratings) from Spark SQL's rows."""
    from buraco_log.archive import spark as engine

    engine.create_views(spark, local_archive[0])
    ours = report_mod.ratings(engine._Con(spark))  # type: ignore[arg-type]
    con = connect(local_archive[0])
    try:
        ref = report_mod.ratings(con)
    finally:
        con.close()
    assert ours.num_rows == ref.num_rows > 0
    assert [[norm(v) for v in r.values()] for r in ours.to_pylist()] == \
        [[norm(v) for v in r.values()] for r in ref.to_pylist()]


EQUAL_QUERIES = [
    # the events view's derived counters (stock, pile, count) and card bytes, row by row
    "SELECT game_id, seq, hand, kind, seat, card, cards, meld, count, direct, stock, pile, "
    "preset, month FROM events ORDER BY game_id, seq",
    "SELECT kind, count(*) AS n, sum(stock) AS s, max(pile) AS p FROM events GROUP BY kind "
    "ORDER BY kind",
    "WITH w AS (SELECT game_id, winner_side FROM matches) SELECT p.player, count(*) AS n "
    "FROM players p JOIN w USING (game_id) WHERE p.side = w.winner_side GROUP BY p.player "
    "ORDER BY n DESC, p.player",
    "SELECT rule, count(*) AS n FROM errors GROUP BY rule ORDER BY rule",
]


@pytest.mark.parametrize("sql", EQUAL_QUERIES)
def test_a_query_gives_duckdbs_rows(spark: Any, sql: str, spark_runs: SparkRuns) -> None:
    from buraco_log.archive import spark as engine

    ours = engine.query(spark_runs.path, sql, spark=spark)
    ref = duck_query(spark_runs.path, sql, bound=False)
    assert ours.column_names == ref.column_names
    assert ref.num_rows > 0
    assert [[norm(v) for v in r.values()] for r in ours.to_pylist()] == \
        [[norm(v) for v in r.values()] for r in ref.to_pylist()]


REFUSED = [
    ("SELECT * FROM parquet.`/etc`", "only the archive's views"),
    ("SELECT * FROM csv.`/etc/passwd`", "only the archive's views"),
    ("SELECT * FROM some_table", "only the archive's views"),
    ("SELECT * FROM default.matches", "only the archive's views"),
    ("SELECT reflect('java.lang.System', 'getenv', 'HOME')", "not allowed"),
    ("SELECT java_method('java.lang.Runtime', 'getRuntime')", "not allowed"),
    ("SELECT input_file_name() FROM matches", "not allowed"),
    ("SELECT * FROM read_files('/etc/passwd')", "not allowed"),
    ("SELECT * FROM range(10)", "not allowed"),
    ("SET spark.sql.runSQLOnFiles=true", "only read-only"),
    ("CREATE TABLE t AS SELECT * FROM matches", "only read-only"),
    ("INSERT INTO matches SELECT * FROM matches", "only read-only"),
    ("CACHE TABLE matches", "only read-only"),
    ("DROP VIEW matches", "only read-only"),
    ("ADD JAR /tmp/x.jar", "only read-only"),
    ("SELECT 1; SELECT 2", "query:"),
    ("SELECT /*+ BROADCAST(m) */ * FROM matches m", "hints are not allowed: /*+ BROADCAST"),
    ("SELEC 1", "query:"),
]


@pytest.mark.parametrize(("sql", "why"), REFUSED)
def test_sql_that_could_reach_past_the_views_is_refused_before_it_runs(
        spark: Any, sql: str, why: str, spark_runs: SparkRuns) -> None:
    from buraco_log.archive import spark as engine

    with pytest.raises(ArchiveError) as err:
        engine.query(spark_runs.path, sql, spark=spark)
    assert why in str(err.value)
    assert "\n" not in str(err.value)
    assert not spark.catalog.tableExists("t")


ACCEPTED = [
    "SELECT count(*) FROM matches",
    "WITH x AS (SELECT game_id FROM matches) SELECT count(*) FROM x",
    "SELECT preset, count(*) FROM hands GROUP BY ALL ORDER BY ALL",
    "SELECT * FROM (SELECT game_id FROM matches) AS m WHERE game_id IN "
    "(SELECT game_id FROM events WHERE kind = 'pt')",
    "SELECT explode(cards) FROM events WHERE kind = 'ml' LIMIT 3",
]


@pytest.mark.parametrize("sql", ACCEPTED)
def test_plain_queries_over_the_views_run(spark: Any, sql: str, spark_runs: SparkRuns) -> None:
    from buraco_log.archive import spark as engine

    assert engine.query(spark_runs.path, sql, spark=spark).num_rows > 0


@pytest.mark.parametrize(("x", "digits", "want"), [
    (127.35, 1, 127.3),  # 127.349999... as a double: Spark's own round gives 127.4
    (127.25, 1, 127.3), (-0.25, 1, -0.3), (2 / 3, 4, 0.6667), (5, 1, 5.0), (None, 1, None),
    (decimal.Decimal("0.12345"), 4, 0.1235),
])
def test_the_reports_round_as_duckdb_does(x: Any, digits: int, want: float | None) -> None:
    import duckdb

    from buraco_log.archive.spark import duckdb_round

    assert duckdb_round(x, digits) == want
    if x is not None and not isinstance(x, decimal.Decimal):
        assert duckdb.sql(f"SELECT round({x!r}::DOUBLE, {digits})").fetchall() == [(want,)]
