"""Fault probes, Spark SQL sandbox, round 38: DISTRIBUTE BY, CLUSTER BY and SORT BY are read-only
and run; statements nested too deeply, or too long, are one line that says so, quickly (the
check's own ``toJSON`` of the plan grew four-fold with each nested CASE and ran the driver out of
memory; 100,000 parentheses did the same in Spark's parser); and the functions the deny-list
names are refused however they are called (``SELECT current_user`` without parentheses returned
the OS user), as is any function that is not one of Spark's built-ins (a Python function the
session registered ran)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import IngestReport
from buraco_log.errors import ArchiveError

ROOT = Path(__file__).resolve().parents[2]
UDF = "probe38_udf"  # a Python function registered in the session, not a built-in


@pytest.fixture(scope="module")
def views(spark: Any, local_archive: tuple[Path, IngestReport]) -> Iterator[Any]:
    from buraco_log.archive import spark as engine

    engine.create_views(spark, local_archive[0])
    spark.udf.register(UDF, lambda x: "the session's function ran", "string")
    yield spark


def _refused(spark: Any, sql: str) -> str:
    from buraco_log.archive import spark as engine

    with pytest.raises(ArchiveError) as err:
        engine.check_sql(spark, sql)
    message = str(err.value)
    assert message.startswith("query: ") and "\n" not in message, message
    assert "An error occurred while calling" not in message and "\tat " not in message, message
    return message


# -- DISTRIBUTE BY, CLUSTER BY, SORT BY ----------------------------------------------------------

SPREAD = [
    "SELECT game_id FROM matches DISTRIBUTE BY game_id",
    "SELECT game_id FROM matches CLUSTER BY game_id",
    "SELECT game_id FROM matches SORT BY game_id",
    "SELECT game_id FROM matches DISTRIBUTE BY game_id SORT BY game_id DESC",
    "SELECT count(*) AS n FROM (SELECT game_id FROM events DISTRIBUTE BY hand)",
]


@pytest.mark.parametrize("sql", SPREAD)
def test_distribute_cluster_and_sort_by_are_read_only_and_run(
        views: Any, local_archive: tuple[Path, IngestReport], sql: str) -> None:
    """Before: "only read-only queries are allowed, not RepartitionByExpression"."""
    from buraco_log.archive import spark as engine

    rows = engine.query(local_archive[0], sql, spark=views).to_pylist()
    if "count(*)" in sql:
        plain = engine.query(local_archive[0], "SELECT count(*) AS n FROM events", spark=views)
        assert rows == plain.to_pylist()
    else:
        assert sorted(r["game_id"] for r in rows) == sorted(
            r["game_id"] for r in engine.query(local_archive[0], "SELECT game_id FROM matches",
                                               spark=views).to_pylist())
        assert len(rows) == local_archive[1].added


@pytest.mark.parametrize("sql", [
    "SELECT /*+ REPARTITION(100000) */ game_id FROM matches",
    "SELECT /*+ REPARTITION_BY_RANGE(3, game_id) */ game_id FROM matches",
    "SELECT /*+ REBALANCE */ * FROM matches",
    "SELECT game_id FROM matches DISTRIBUTE BY reflect('java.lang.System', 'getenv', 'HOME')",
    "SELECT game_id FROM matches CLUSTER BY (SELECT max(s) FROM probe38_nothing)",
])
def test_what_spreads_rows_otherwise_is_still_refused(views: Any, sql: str) -> None:
    message = _refused(views, sql)
    assert ("hints are not allowed: /*+ RE" in message or "reflect" in message
            or "probe38_nothing" in message)


# -- statements nested too deeply or too long ----------------------------------------------------

BOMBS = {
    "array": "SELECT " + "array(" * 1500 + "1" + ")" * 1500,
    "parentheses": "SELECT " + "(" * 100_000 + "1" + ")" * 100_000,
    "case": "SELECT " + "CASE WHEN true THEN " * 2000 + "1" + " END" * 2000,
    "struct": "SELECT " + "struct(" * 1500 + "1" + ")" * 1500,
    "subqueries": "SELECT * FROM " + "(SELECT * FROM " * 500 + "matches" + ")" * 500,
    "brackets": "SELECT " + "array(" * 50 + "1" + ")" * 50 + "[0]" * 10 + "[" * 200 + "0"
                + "]" * 200,
    "in list": "SELECT 1 IN (" + ",".join(map(str, range(100_000))) + ")",
    "10 MB": "SELECT length('" + "x" * 10_000_000 + "')",
}


@pytest.mark.parametrize("name", list(BOMBS))
def test_a_statement_too_deep_or_too_long_is_refused_in_one_line_before_spark_reads_it(
        name: str) -> None:
    """No session needed: the text is refused before Spark parses it (the parentheses ran
    the driver out of memory after 5 minutes; the list took 4 minutes to check)."""
    from buraco_log.archive import spark as engine

    start = time.monotonic()
    with pytest.raises(ArchiveError) as err:
        engine.check_text(BOMBS[name])
    message = str(err.value)
    assert time.monotonic() - start < 5
    assert "\n" not in message and len(message) < 200, message
    assert ("nested too deeply" in message) == (name not in ("in list", "10 MB")), message
    assert "too long" in message or "characters long" in message or "nested" in message


CHAINS = [
    "SELECT " + "NOT " * 5000 + "true",
    "SELECT " + "- " * 5000 + "1",
    "SELECT " + "+".join(["1"] * 9000),
    " UNION ALL ".join(["SELECT 1"] * 3000),
]


@pytest.mark.parametrize("sql", CHAINS, ids=["not", "minus", "plus", "union"])
def test_a_chain_spark_cannot_parse_is_one_line_that_says_it_nests_too_deeply(
        views: Any, sql: str) -> None:
    """No parentheses, but as deep for Spark's parser: its "too complex" error and a stack
    overflow both say what to change."""
    start = time.monotonic()
    message = _refused(views, sql)
    assert message.startswith("query: the statement is nested too deeply for Spark ("), message
    assert time.monotonic() - start < 60


def test_nested_case_is_checked_in_linear_time(views: Any) -> None:
    """Before: the plan check's toJSON wrote each CASE's branches again inside it, four-fold
    a level: 16 levels took 7 s and 31 MB, 30 would never end; 100 ran out of memory."""
    from buraco_log.archive import spark as engine

    for depth in (30, 95):
        sql = ("SELECT " + "CASE WHEN game_id > 0 THEN " * depth + "1" + " ELSE 2 END" * depth
               + " AS x FROM matches")
        start = time.monotonic()
        assert engine.check_sql(views, sql).columns == ["x"]
        assert time.monotonic() - start < 30, depth


def test_strings_comments_and_quoted_names_hold_no_levels() -> None:
    from buraco_log.archive import spark as engine

    inert = ("'" + "(" * 200 + "'", '"' + "[" * 200 + '"', "`" + "(" * 200 + "`",
             "/* " + "(" * 200 + " /* nested */ */", "-- " + "(" * 200 + "\n",
             "r'\\" + "(" * 200 + "'", "'it''s " + "(" * 200 + "'", "'\\' " + "(" * 200 + "'")
    for text in inert:
        engine.check_text(f"SELECT {text} 1")
    engine.check_text("SELECT " + "(" * 100 + "1" + ")" * 100)  # the limit itself
    with pytest.raises(ArchiveError, match=r"nested too deeply: more than 100 levels .* "
                                           r"\(at character 107\)$"):
        engine.check_text("SELECT " + "(" * 101 + "1" + ")" * 101)
    with pytest.raises(ArchiveError, match="more than 100 levels"):  # CASE ... END nests
        engine.check_text("SELECT " + "(CASE WHEN 1 THEN " * 51 + "1" + " END)" * 51)
    engine.check_text("SELECT " + "(CASE WHEN 1 THEN 1 END)" * 500)  # closed: no depth


def test_spark_errors_of_depth_are_named_as_such() -> None:
    from buraco_log.archive.spark import _first_line

    overflow = ("An error occurred while calling o54.parsePlan.\n: java.lang.StackOverflowError"
                "\n\tat org.antlr.v4.runtime.Parser.enterRule(Parser.java:1)\n")
    assert _first_line(RuntimeError(overflow)) == \
        "the statement is nested too deeply for Spark (java.lang.StackOverflowError)"
    complex_ = ("[FAILED_TO_PARSE_TOO_COMPLEX] The statement, including potential SQL "
                "functions and referenced views, was too complex to parse. SQLSTATE: 54001")
    assert _first_line(RuntimeError(complex_)).startswith(
        "the statement is nested too deeply for Spark (FAILED_TO_PARSE_TOO_COMPLEX")
    memory = ("An error occurred while calling o9.sql.\n: java.lang.OutOfMemoryError: Java heap "
              "space\n\tat x.Y.z(Y.java:1)\n")
    assert _first_line(RuntimeError(memory)) == \
        "Spark ran out of memory (java.lang.OutOfMemoryError: Java heap space)"


def test_the_cli_refuses_a_deep_statement_in_one_line_without_starting_spark(
        local_archive: tuple[Path, IngestReport]) -> None:
    sql = "SELECT " + "array(" * 1500 + "1" + ")" * 1500
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "cli.main", "query", str(local_archive[0]), sql,
                        "--engine", "spark"], capture_output=True, text=True, timeout=120,
                       cwd=ROOT, stdin=subprocess.DEVNULL, check=False)
    assert (r.returncode, r.stdout) == (1, ""), r.stderr[-2000:]
    assert r.stderr.splitlines() == [
        "buraco-log: error: query: the statement is nested too deeply: more than 100 levels "
        "of parentheses, brackets and CASE (at character 612)"], r.stderr[-2000:]
    assert time.monotonic() - start < 30  # no JVM was started


# -- functions past the deny-list ----------------------------------------------------------------

@pytest.mark.parametrize(("sql", "name"), [
    ("SELECT current_user", "current_user"),
    ("SELECT user", "current_user"),
    ("SELECT session_user", "current_user"),
    ("SELECT count(*) FROM matches WHERE current_user IS NOT NULL", "current_user"),
    ("SELECT current_path", "current_path"),
])
def test_a_denied_function_without_parentheses_is_refused(views: Any, sql: str, name: str
                                                          ) -> None:
    """Before: a column name to the parsed check, a function after analysis: it returned the
    user the JVM runs as ('root') and the session's function path."""
    message = _refused(views, sql)
    assert message == f"query: function {name} is not allowed", message


def test_a_column_named_like_a_denied_function_still_reads(views: Any) -> None:
    from buraco_log.archive import spark as engine

    df = engine.check_sql(views, "SELECT user, version FROM (SELECT 1 AS user, 2 AS version)")
    assert [tuple(r) for r in df.collect()] == [(1, 2)]


@pytest.mark.parametrize("sql", [f"SELECT {UDF}(1)", f"SELECT upper({UDF}(game_id)) FROM matches",
                                 "SELECT count(*) FROM matches WHERE no_such_function(1) = 1"])
def test_a_function_that_is_not_built_in_is_refused(views: Any, sql: str) -> None:
    """Before: the session's Python function ran ("the session's function ran"); a name
    that is no built-in is looked up in the session and its catalog, whose functions load
    the files they name."""
    message = _refused(views, sql)
    assert message.endswith("is not allowed (not one of Spark's built-in functions)"), message
    assert "ran" not in message


@pytest.mark.parametrize(("sql", "why"), [
    ("SELECT * FROM matches LATERAL VIEW no_such_generator(players) p AS n",
     "function [no_such_generator] is not allowed (not one of Spark's built-in functions)"),
    (f"SELECT * FROM matches LATERAL VIEW OUTER {UDF}(game_id) p AS n",
     f"function [{UDF}] is not allowed (not one of Spark's built-in functions)"),
    ("SELECT * FROM matches LATERAL VIEW java_method('java.lang.System', 'getenv', 'HOME') "
     "p AS n", "function [java_method] is not allowed"),
])
def test_a_lateral_view_calls_only_built_in_generators(views: Any, sql: str, why: str) -> None:
    """A LATERAL VIEW's function is no UnresolvedFunction: its name went unchecked to the
    session and its catalog (before: "ROUTINE_NOT_FOUND ... `default`.`no_such_generator`",
    a catalog's function looked up; java_method resolved, then refused as no generator)."""
    assert _refused(views, sql) == f"query: {why}"


def test_a_lateral_view_of_a_built_in_generator_still_runs(
        views: Any, local_archive: tuple[Path, IngestReport]) -> None:
    from buraco_log.archive import spark as engine

    rows = engine.query(local_archive[0], "SELECT count(*) AS n FROM matches LATERAL VIEW "
                        "posexplode(players) p AS i, name", spark=views).to_pylist()
    assert rows == [{"n": sum(len(m) for m in engine.query(
        local_archive[0], "SELECT players FROM matches", spark=views).column(0).to_pylist())}]


def test_the_analyzed_check_refuses_a_session_function_however_it_got_in(views: Any) -> None:
    """The second line of defence: the analyzed plan of a DataFrame calling the session's
    function (the parsed check never saw it) is refused by class."""
    from buraco_log.archive import spark as engine

    plan = views.sql(f"SELECT {UDF}(1) AS x")._jdf.queryExecution().analyzed()
    with pytest.raises(ArchiveError, match=f"function {UDF} is not allowed"):
        engine._check_calls(views, plan)
    engine._check_calls(views, views.sql("SELECT abs(-1)")._jdf.queryExecution().analyzed())


# -- hostile statements: each refused in one line ------------------------------------------------

HOSTILE = [
    "ADD JAR /tmp/probe38.jar", "ADD FILE /etc/passwd", "ADD ARCHIVE /tmp/probe38.zip",
    "LIST FILE", "LIST JAR", "SET spark.sql.runSQLOnFiles=true", "SET", "RESET",
    "SET TIME ZONE 'America/New_York'", "USE global_temp", "DECLARE VARIABLE probe38 INT",
    "CACHE TABLE matches", "CACHE LAZY TABLE probe38 AS SELECT * FROM matches", "CLEAR CACHE",
    "UNCACHE TABLE matches", "REFRESH '/etc'", "CREATE TEMP VIEW probe38 AS SELECT 1",
    "CREATE OR REPLACE GLOBAL TEMP VIEW probe38 AS SELECT 1",
    "CREATE TEMPORARY VIEW probe38 USING text OPTIONS (path '/etc/passwd')",
    "CREATE TEMPORARY FUNCTION probe38 AS 'org.apache.spark.sql.catalyst.expressions.Upper'",
    "CREATE TEMPORARY FUNCTION probe38() RETURNS INT RETURN 1",
    "CREATE FUNCTION probe38 AS 'x' USING JAR 'http://127.0.0.1:9/x.jar'",
    "INSERT OVERWRITE LOCAL DIRECTORY '/tmp/probe38' SELECT * FROM matches",
    "LOAD DATA LOCAL INPATH '/etc/passwd' INTO TABLE matches",
    "BEGIN SELECT 1; END", "EXPLAIN SELECT * FROM matches", "DESCRIBE FUNCTION reflect",
    "SHOW TABLES", "CALL system.probe38()",
    "SELECT * FROM text.`/etc/passwd`", "SELECT * FROM IDENTIFIER('text.`/etc/passwd`')",
    "SELECT * FROM TABLE(read_files('/etc/passwd'))",
    "SELECT builtin.reflect('java.lang.System', 'getenv', 'HOME')",
    "VALUES (java_method('java.lang.System', 'getenv', 'HOME'))",
    "SELECT transform(array(1), x -> try_reflect('java.lang.System', 'getenv', 'HOME'))",
    "SELECT /*+ BROADCAST(m) */ * FROM matches m",
]


@pytest.mark.parametrize("sql", HOSTILE)
def test_hostile_statements_are_refused_in_one_line(views: Any, sql: str) -> None:
    from buraco_log.archive import spark as engine

    before = {t.name for t in views.catalog.listTables()}
    message = _refused(views, sql)
    assert "/root" not in message
    assert {t.name for t in views.catalog.listTables()} == before
    assert not Path("/tmp/probe38").exists()
    assert not views.catalog.functionExists("probe38")  # nothing it named was made
    assert engine.check_sql(views, "SELECT count(*) FROM matches").columns == ["count(1)"]


# -- SIGTERM during a Spark ingest ---------------------------------------------------------------

# Every Python process of the run (the CLI, Spark's Python workers) starts with this: each log
# check notes its pid in $PROBE38_MARKER first and takes half a second, so the test can send
# its signal while the check job runs.
SLOW_CHECK = """
import os, time
marker = os.environ.get("PROBE38_MARKER")
if marker:
    import buraco_log.archive.flatten as flatten
    real = flatten.check_file
    def check_file(*args, **kwargs):
        with open(marker, "a") as f:
            f.write(f"{os.getpid()}\\n")
        time.sleep(0.5)
        return real(*args, **kwargs)
    flatten.check_file = check_file
"""


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals, process groups")
@pytest.mark.parametrize("group", [False, True], ids=["process", "group"])
def test_a_sigterm_mid_spark_ingest_leaves_the_archive_as_it_was_and_says_so(
        spark_corpus: Any, tmp_path: Path, group: bool) -> None:
    """Before: the Spark ingest died of SIGTERM without a word (status -15). A Spark run
    commits only when its jobs are done, so cut before that it keeps nothing: the archive is
    byte for byte as it was, one line says so, exit 143, and the next run adds the rest."""
    import os
    import signal

    from buraco_log.archive import ingest
    from tests.spark.conftest import spark_missing

    why = spark_missing()
    if why is not None:
        pytest.skip(why)
    arch, marker, site = tmp_path / "arch", tmp_path / "checks", tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SLOW_CHECK)
    first = ingest([str(spark_corpus.a)], arch, jobs=1)  # a/ is stored; b/ is left to check
    before = _snapshot(arch)
    env = {**os.environ, "PROBE38_MARKER": str(marker),
           "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    p = subprocess.Popen([sys.executable, "-m", "cli.main", "ingest", str(spark_corpus.root),
                          "-a", str(arch), "--engine", "spark", "--jobs", "2"], cwd=ROOT,
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 400  # Spark's start-up: minutes on a loaded machine
        while not (marker.exists() and marker.read_text().strip()):
            assert p.poll() is None and time.monotonic() < deadline, "no log checked"
            time.sleep(0.05)
        if group:  # the JVM dies with it
            os.killpg(p.pid, signal.SIGTERM)
        else:
            p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    assert p.returncode == 143, (p.returncode, err[-3000:])
    assert err.splitlines() == ["buraco-log: error: terminated (SIGTERM): nothing was "
                                "committed; run the same command again"], err[-3000:]
    assert out == ""
    assert _snapshot(arch) == before  # no batch, no part file, no staged file left
    rest = ingest([str(spark_corpus.root)], arch, jobs=1)
    assert rest.added == spark_corpus.good - first.added > 0
