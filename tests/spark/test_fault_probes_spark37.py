"""Fault probes, Spark SQL sandbox: a name allowed as a CTE somewhere in a query was allowed
everywhere in it, so ``FROM t WHERE EXISTS (WITH t AS (SELECT 1) SELECT 1)`` (or a CTE reading
its own name, or a CTE named after another that reads it) read any table ``t`` of the session.
The analyzed plan is now checked as well: every view it reads must be one of the archive's.
And the XML functions read files: xpath loads the external DTD a document names (its entities
came back in the result), from_xml the XSD its options name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import IngestReport
from buraco_log.errors import ArchiveError

SECRET = "probe37_secret"  # a table of the session that is not one of the archive's views


@pytest.fixture(scope="module")
def views(spark: Any, local_archive: tuple[Path, IngestReport]) -> Iterator[Any]:
    """The archive's views, and a table of the session beside them (once: views are slow to
    make, and only this module's tests run between its first and its last)."""
    from buraco_log.archive import spark as engine

    engine.create_views(spark, local_archive[0])
    spark.sql("SELECT 'top secret' AS s").createOrReplaceTempView(SECRET)
    yield spark
    spark.catalog.dropTempView(SECRET)


SCOPE_ESCAPES = [
    # the CTE is in scope only inside the EXISTS: the outer name is the session's table
    f"SELECT * FROM {SECRET} WHERE EXISTS (WITH {SECRET} AS (SELECT 1) SELECT 1)",
    f"SELECT count(*) FROM (WITH {SECRET} AS (SELECT 1 AS x) SELECT x FROM {SECRET}) "
    f"JOIN {SECRET}",
    f"SELECT (SELECT max(s) FROM {SECRET}) FROM (WITH {SECRET} AS (SELECT 1) SELECT 1)",
    f"SELECT count(*) FROM matches WHERE game_id IN (SELECT game_id FROM events WHERE "
    f"EXISTS (SELECT s FROM {SECRET} WHERE EXISTS (WITH {SECRET} AS (SELECT 1) SELECT 1)))",
    # a CTE's body reads the name it defines (not RECURSIVE): the session's table
    f"WITH {SECRET} AS (SELECT * FROM {SECRET}) SELECT * FROM {SECRET}",
    # a CTE reads one defined after it: the session's table
    f"WITH a AS (SELECT * FROM {SECRET}), {SECRET} AS (SELECT 1) SELECT * FROM a",
    # the events view's stored half, read by the same tricks
    "SELECT * FROM _events_stored WHERE EXISTS (WITH _events_stored AS (SELECT 1) SELECT 1)",
    "WITH _events_stored AS (SELECT * FROM _events_stored) SELECT count(*) FROM _events_stored",
]


@pytest.mark.parametrize("sql", SCOPE_ESCAPES)
def test_a_cte_name_out_of_its_scope_reads_no_table_of_the_session(views: Any, sql: str
                                                                    ) -> None:
    from buraco_log.archive import spark as engine

    with pytest.raises(ArchiveError) as err:
        engine.check_sql(views, sql)
    message = str(err.value)
    assert message.startswith("query: only the archive's views can be read"), message
    assert ("not " + SECRET in message or "not _events_stored" in message) and \
        "\n" not in message, message


STILL_RUN = [
    "WITH a AS (SELECT game_id FROM matches), b AS (SELECT game_id FROM a) "
    "SELECT count(*) FROM b, b AS b2",
    "WITH matches AS (SELECT * FROM matches) SELECT count(*) FROM matches",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) "
    "SELECT count(*) FROM r",
    "SELECT * FROM VALUES (1) AS t(a) LATERAL VIEW explode(array(1)) x AS y",
    "SELECT count(*) FROM events e JOIN matches USING (game_id) WHERE EXISTS "
    "(SELECT 1 FROM players p WHERE p.game_id = e.game_id) AND e.seq > "
    "(SELECT min(seq) FROM events)",
    "SELECT count(*) FROM errors UNION ALL SELECT count(*) FROM melds",
    "SELECT 1",
    "SELECT to_xml(named_struct('a', 1)), from_json('{\"a\": 1}', 'a INT'), "
    "get_json_object('{\"a\": 1}', '$.a'), parse_url('http://x/y', 'HOST')",
]


@pytest.mark.parametrize("sql", STILL_RUN)
def test_queries_over_the_views_and_their_own_ctes_still_pass(views: Any, sql: str) -> None:
    from buraco_log.archive import spark as engine

    assert engine.check_sql(views, sql).columns  # analyzed, not run


def test_the_plan_check_refuses_any_other_leaf_or_view(views: Any) -> None:
    """What the parsed check already refuses (a range, a file, a view of the session) is
    refused again by the analyzed plan's check, whichever way it got in."""
    from buraco_log.archive import spark as engine

    def plan(df: Any) -> Any:
        return df._jdf.queryExecution().analyzed()

    for df, why in [(views.range(3), "not Range"),
                    (views.table(SECRET), f"not {SECRET}"),
                    (views.table("_events_stored"), "not _events_stored"),
                    (views.sql("SELECT 1").join(views.range(1)), "not Range")]:
        with pytest.raises(ArchiveError, match=why):
            engine._check_reads(plan(df))
    engine._check_reads(plan(views.table("events").join(views.table("matches"), "game_id")))


def test_the_escape_end_to_end_reads_nothing(views: Any,
                                             local_archive: tuple[Path, IngestReport]) -> None:
    """Through :func:`query`: it read the session's table before."""
    from buraco_log.archive import spark as engine

    with pytest.raises(ArchiveError, match=f"only the archive's views .* not {SECRET}$"):
        engine.query(local_archive[0], f"SELECT s FROM {SECRET} WHERE EXISTS "
                     f"(WITH {SECRET} AS (SELECT 1) SELECT 1)", spark=views)
    rows = engine.query(local_archive[0], "SELECT count(*) AS n FROM matches WHERE "
                        "EXISTS (WITH m AS (SELECT 1) SELECT 1 FROM m)", spark=views)
    assert rows.to_pylist() == [{"n": local_archive[1].added}]


FILE_READERS = [
    # the DTD's entity came back as the result: 'SECRET-FROM-DTD'
    "SELECT xpath_string('<!DOCTYPE a SYSTEM \"file://{dtd}\"><a>&e;</a>', 'a')",
    "SELECT xpath('<!DOCTYPE a SYSTEM \"file://{dtd}\"><a><b>&e;</b></a>', 'a/b/text()')",
    "SELECT count(*) FROM matches WHERE xpath_boolean('<!DOCTYPE a SYSTEM \"file://{dtd}\">"
    "<a>&e;</a>', 'a = \"SECRET-FROM-DTD\"')",
    "SELECT XPATH_INT('<!DOCTYPE a SYSTEM \"file://{gone}\"><a>1</a>', 'a')",  # file oracle
    # the XSD named by an option, its key computed: "File ... does not exist", or read
    "SELECT from_xml('<a><b>1</b></a>', 'b STRING', map(concat('rowValidation', 'XSDPath'), "
    "'{gone}'))",
    "SELECT schema_of_xml('<a><b>1</b></a>', map('rowValidationXSDPath', '{dtd}'))",
    "SELECT from_protobuf(X'00', 'M', '{dtd}')",  # a descriptor file by path
]


@pytest.mark.parametrize("sql", FILE_READERS)
def test_functions_that_read_files_named_in_their_arguments_are_refused(
        views: Any, tmp_path: Path, sql: str) -> None:
    from buraco_log.archive import spark as engine

    dtd = tmp_path / "a.dtd"
    dtd.write_text('<!ENTITY e "SECRET-FROM-DTD">\n')
    sql = sql.replace("{dtd}", str(dtd)).replace("{gone}", str(tmp_path / "gone.xsd"))
    with pytest.raises(ArchiveError) as err:
        engine.check_sql(views, sql)
    message = str(err.value)
    assert message.startswith("query: function [") and "is not allowed" in message, message
    assert "SECRET" not in message and "gone" not in message


def test_a_damaged_committed_file_is_named_in_one_line(
        spark: Any, local_archive: tuple[Path, IngestReport], tmp_path: Path) -> None:
    """Spark reads the files' footers when it makes the views: a damaged one was an internal
    error, Py4J's Java stack on one line, not the file."""
    import shutil

    from buraco_log.archive import spark as engine

    copy = tmp_path / "archive"
    shutil.copytree(local_archive[0], copy)
    damaged = sorted((copy / "events").rglob("*.parquet"))[0]
    damaged.write_bytes(b"PAR1" + b"\0" * 64 + b"PAR1")
    with pytest.raises(ArchiveError) as err:
        engine.query(copy, "SELECT count(*) FROM matches", spark=spark)
    message = str(err.value)
    # the batch record's size names it first now, as the local engine does
    assert message.startswith(f"{damaged}: damaged archive file: ") and "\n" not in message, \
        message
    assert "Py4J" not in message and "\tat " not in message and len(message) < 500, message


def test_a_spark_failure_names_the_archive_file_its_java_error_names() -> None:
    from buraco_log.archive.spark import _read_failure

    text = ("An error occurred while calling o67.parquet.\n"
            ": org.apache.spark.SparkException: [FAILED_READ_FILE.CANNOT_READ_FILE_FOOTER] "
            "Encountered error while reading file file:/a/events/preset=x/month=y/p-1.parquet."
            " Could not read footer.\n\tat org.apache.spark.sql.X.y(X.scala:1)\n"
            "Caused by: java.lang.RuntimeException: corrupted file: the footer index is not "
            "within the file: -17\n\tat org.apache.parquet.Z.z(Z.java:2)\n")
    assert _read_failure(RuntimeError(text)) == \
        "/a/events/preset=x/month=y/p-1.parquet: corrupted file: the footer index is not " \
        "within the file: -17"
    assert _read_failure(RuntimeError("no file here")) == "no file here"


def test_the_engines_timeout_is_said_as_the_commands_option(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The timer fired while the views were being made (reading the files' footers is a
    job): the cancelled job's Py4J error was printed as an internal error, not the timeout.
    The engine now raises QueryTimeout whatever its cancelled job raised (round 40's probes
    run it for real); the command names the option that set the limit."""
    from types import SimpleNamespace

    import cli.archive_spark as cli_spark
    from buraco_log.archive.spark import QueryTimeout

    asked: list[float] = []

    def query(root: str, sql: str, spark: Any, timeout: float) -> Any:
        asked.append(timeout)
        raise QueryTimeout(f"query: stopped after the {timeout:g} s timeout", "g")

    fake = SimpleNamespace(session=lambda master, conf: SimpleNamespace(), query=query,
                           QueryTimeout=QueryTimeout, ArchiveError=ArchiveError,
                           check_text=lambda sql: None,
                           store=SimpleNamespace(check_archive=lambda root: None))
    monkeypatch.setattr(cli_spark, "_module", lambda: fake)
    with pytest.raises(ArchiveError) as err:
        cli_spark.query("archive", "SELECT 1", None, {}, 0.1)
    assert (str(err.value), asked) == ("query: stopped after the 0.1 s timeout (--timeout)",
                                       [0.1])
    assert not isinstance(err.value, QueryTimeout)


def test_a_java_error_without_a_message_is_named_by_its_class() -> None:
    """A statement nested 1,500 deep overflows the parser's stack: the error was Py4J's own
    line, "An error occurred while calling o54.parsePlan.", which says nothing."""
    from buraco_log.archive.spark import _first_line

    text = "An error occurred while calling o54.parsePlan.\n: java.lang.StackOverflowError\n" \
        "\tat org.antlr.v4.runtime.Parser.enterRule(Parser.java:1)\n"
    assert _first_line(RuntimeError(text)) == \
        "the statement is nested too deeply for Spark (java.lang.StackOverflowError)"
    text = text.replace("StackOverflowError", "NullPointerException")
    assert _first_line(RuntimeError(text)) == "java.lang.NullPointerException"


@pytest.mark.parametrize("depth", [1500])
def test_a_statement_nested_too_deep_is_one_line_that_says_so(views: Any, depth: int) -> None:
    from buraco_log.archive import spark as engine

    with pytest.raises(ArchiveError) as err:
        engine.check_sql(views, "SELECT " + "(" * depth + "1" + ")" * depth)
    message = str(err.value)
    assert "An error occurred while calling" not in message and "\n" not in message, message
