"""Fault probes, Spark SQL: statements that got past the check (a Java method called by a
name IDENTIFIER() builds, EXECUTE IMMEDIATE of any text, a temporary view over any file, a
table named by a column alias), and a query that ran away in the driver past --timeout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from buraco_log.errors import ArchiveError
from tests.spark.conftest import SparkRuns, spark_missing

ROOT = Path(__file__).resolve().parents[2]

ESCAPES = [
    # reflect() under a name the parser does not see: it ran, and returned $HOME
    ("SELECT IDENTIFIER('reflect')('java.lang.System', 'getenv', 'HOME')", "IDENTIFIER"),
    ("SELECT IDENTIFIER('java_' || 'method')('java.lang.System', 'getenv', 'HOME')",
     "IDENTIFIER"),
    ("SELECT count(*) FROM matches WHERE IDENTIFIER('reflect')('java.lang.System', "
     "'getenv', 'HOME') IS NOT NULL", "IDENTIFIER"),
    # any SQL text, run unchecked
    ("EXECUTE IMMEDIATE 'SELECT * FROM text.`/etc/passwd`'", "not UnresolvedExecuteImmediate"),
    ("EXECUTE IMMEDIATE 'SELECT 1'", "not UnresolvedExecuteImmediate"),
    # a command outside Catalyst's plans package: it ran, and made a view over /etc/passwd
    ("CREATE TEMPORARY VIEW probe_passwd USING text OPTIONS (path '/etc/passwd')",
     "not CreateTempViewUsing"),
    ("CREATE OR REPLACE TEMPORARY VIEW probe_passwd USING csv OPTIONS (path '/etc')",
     "not CreateTempViewUsing"),
    # a column alias taken for a CTE's name let any table of the session be read
    ("WITH c AS (SELECT 1 AS _events_stored) SELECT count(*) FROM _events_stored",
     "only the archive's views"),
    ("WITH c AS (SELECT 1 AS probe_passwd) SELECT * FROM probe_passwd",
     "only the archive's views"),
]


def _query_error(spark: Any, spark_runs: SparkRuns, sql: str, why: str) -> str:
    """The one-line error of a query that must fail, checked to say ``why``."""
    from buraco_log.archive import spark as engine

    with pytest.raises(ArchiveError) as err:
        engine.query(spark_runs.path, sql, spark=spark)
    message = str(err.value)
    assert message.startswith("query: ") and why in message and "\n" not in message, message
    return message


@pytest.mark.parametrize(("sql", "why"), ESCAPES)
def test_escapes_past_the_spark_check_are_refused_before_they_run(
        spark: Any, spark_runs: SparkRuns, sql: str, why: str) -> None:
    message = _query_error(spark, spark_runs, sql, why)
    assert "/root" not in message
    assert not spark.catalog.tableExists("probe_passwd")


STILL_RUN = [
    "SELECT * FROM IDENTIFIER('matches') LIMIT 1",
    "WITH a AS (SELECT game_id FROM matches), b AS (SELECT game_id FROM a) "
    "SELECT count(*) FROM b",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) "
    "SELECT count(*) FROM r",
    "SELECT transform(array(1, 2), x -> x + 1) AS t, filter(cards, c -> c > 0) AS f "
    "FROM events LIMIT 1",
    "SELECT * FROM matches LATERAL VIEW explode(players) t AS p LIMIT 1",
    "SELECT count(*) FROM matches m WHERE EXISTS (SELECT 1 FROM players p "
    "WHERE p.game_id = m.game_id)",
]


@pytest.mark.parametrize("sql", STILL_RUN)
def test_plain_queries_still_run(spark: Any, spark_runs: SparkRuns, sql: str) -> None:
    from buraco_log.archive import spark as engine

    assert engine.query(spark_runs.path, sql, spark=spark).num_rows >= 1


@pytest.mark.slow
@pytest.mark.spark
def test_a_query_that_runs_away_in_the_driver_stops_at_the_timeout(
        spark_runs: SparkRuns) -> None:
    """The optimizer folds this in the driver: no job, nothing for cancelAllJobs to stop.
    It ran 300 s past --timeout 10 before the command was abandoned."""
    why = spark_missing()
    if why is not None:
        pytest.skip(why)
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "cli.main", "query", str(spark_runs.path),
                        "SELECT size(transform(sequence(1, 100000000), x -> x)) AS n",
                        "--engine", "spark", "--master", "local[1]", "--timeout", "5"],
                       cwd=ROOT, capture_output=True, text=True, timeout=240, check=False)
    assert (r.returncode, r.stdout) == (1, ""), r.stderr[-1000:]
    assert r.stderr.strip().splitlines()[-1] == \
        "buraco-log: error: query: stopped after the 5 s timeout (--timeout)"
    assert time.monotonic() - t0 < 120


JAVA_FAILURES = [
    # Py4J's own line ("An error occurred while calling o110.getResult.") said nothing (the
    # xpath functions these probes first used are refused now: they load external DTDs)
    ("SELECT from_csv('x', 'a INT', map('mode', 'FAILFAST')) AS x", 'For input string: "x"'),
    ("SELECT from_json(match_id, 'a INT', map('mode', 'FAILFAST')) AS x FROM matches",
     "Unrecognized token 'sim'"),
]


@pytest.mark.parametrize(("sql", "why"), JAVA_FAILURES)
def test_a_query_that_fails_in_java_is_named_by_its_java_cause(
        spark: Any, spark_runs: SparkRuns, sql: str, why: str) -> None:
    message = _query_error(spark, spark_runs, sql, why)
    assert "An error occurred while calling" not in message


def test_a_python_error_keeps_its_own_first_line() -> None:
    from buraco_log.archive import spark as engine

    assert engine._first_line(ValueError("bad thing\nmore")) == "bad thing"
    assert engine._first_line(ValueError("")) == "ValueError"
    java = ("An error occurred while calling o7.sql.\n: org.apache.spark.SparkException: outer\n"
            "\tat x.y(Z.java:1)\nCaused by: java.lang.IllegalStateException: inner reason\n")
    assert engine._first_line(ValueError(java)) == "inner reason"


def test_empty_logs_are_refused_as_the_local_engine_refuses_them(
        spark: Any, spark_corpus: Any, tmp_path: Path) -> None:
    """Spark's file scan drops zero-byte files before any task sees them: an empty log was
    neither stored nor refused (and not counted), where the local engine refuses it."""
    from buraco_log.archive import ingest
    from buraco_log.archive import spark as engine

    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(_good_logs(spark_corpus)[0], src / "good.blog")
    (src / "empty.blog").write_bytes(b"")
    (src / "em pty é%20.jsonl").write_bytes(b"")  # a name its URI has to percent-encode
    ref = ingest([str(src)], tmp_path / "local", jobs=1)
    got = engine.ingest([str(src)], tmp_path / "spark", spark=spark)
    assert (got.files, got.added, got.duplicates, len(got.errors)) == (
        ref.files, ref.added, ref.duplicates, len(ref.errors)) == (3, 1, 0, 2)
    # The two empty files have one hash but are read two ways (JSON Lines, binary): each is
    # checked and refused in its own words, neither as the other's copy (round 41).
    first = str(src / "em pty é%20.jsonl")
    assert sorted((e.path, e.rule, e.message) for e in got.errors) == sorted(
        (e.path, e.rule, e.message) for e in ref.errors)
    assert [(e.path, e.rule) for e in got.errors] == [
        (first, "archive.not_started"), (str(src / "empty.blog"), "archive.not_started")]
    assert not any(e.message.startswith("the same bytes as") for e in got.errors)
    assert "header" in got.errors[1].message and "header" not in got.errors[0].message
    assert engine.table_checksums(tmp_path / "spark") == engine.table_checksums(
        tmp_path / "local")



def test_a_binary_logs_bytes_named_jsonl_are_refused_in_a_later_run_as_locally(
        spark: Any, spark_corpus: Any, tmp_path: Path) -> None:
    """A file met before is known by its hash and form (round 41b): the bytes of a stored
    .blog named .jsonl were "already stored" in a later run, refused in the same one."""
    from buraco_log.archive import ingest
    from buraco_log.archive import spark as engine

    src, later = tmp_path / "src", tmp_path / "later"
    src.mkdir()
    later.mkdir()
    shutil.copy(_good_logs(spark_corpus)[0], src / "m.blog")
    shutil.copy(src / "m.blog", later / "m.jsonl")
    for arch, run in ((tmp_path / "local", ingest), (tmp_path / "spark", engine.ingest)):
        kw: dict[str, Any] = {"spark": spark} if run is engine.ingest else {}
        assert run([str(src)], arch, **kw).added == 1
        got = run([str(later)], arch, **kw)
        assert (got.already_stored, got.added, [e.path for e in got.errors]) == (
            0, 0, [str(later / "m.jsonl")]), run
    assert engine.table_checksums(tmp_path / "spark") == engine.table_checksums(
        tmp_path / "local")

def _good_logs(corpus: Any) -> list[Path]:
    bad = {"unfinished.blog", "illegal.blog", "torn.blog", "garbage.blog"}
    return sorted(p for p in corpus.a.glob("*.blog") if p.name not in bad)


def test_spark_reads_the_files_the_local_walk_reads_and_keeps_the_same_first_copy(
        spark: Any, spark_corpus: Any, tmp_path: Path) -> None:
    """Spark's listing skips names starting with _ or . (directories too), passes over FIFOs
    and dangling links, follows links to directories and reads only *.blog/*.jsonl names;
    and it took the first of two copies by path text, where the local walk meets a
    directory's files before its subdirectories. The local engine's walk decides now."""
    from buraco_log.archive import ingest
    from buraco_log.archive import spark as engine

    good = _good_logs(spark_corpus)
    src = tmp_path / "src"
    for d in ("b", "_u", ".hid"):
        (src / d).mkdir(parents=True)
    shutil.copy(good[0], src / "z.blog")  # met first by the walk; "b/x.blog" < "z.blog"
    shutil.copy(good[0], src / "b" / "x.blog")
    shutil.copy(good[1], src / "_under.blog")
    shutil.copy(good[2], src / "_u" / "u.blog")
    shutil.copy(good[3], src / ".hid" / "h.blog")
    shutil.copy(good[4], src / "by-magic.log")  # a binary log by its magic, not its name
    os.mkfifo(src / "fifo.blog")
    (src / "dangling.blog").symlink_to(tmp_path / "nowhere.blog")
    linked = tmp_path / "linked"
    linked.mkdir()
    shutil.copy(good[5], linked / "l.blog")
    (src / "linkdir").symlink_to(linked)  # the walk does not follow it (no loops)
    ref = ingest([str(src)], tmp_path / "local", jobs=1)
    got = engine.ingest([str(src)], tmp_path / "spark", spark=spark)
    counts = (ref.files, ref.added, ref.duplicates, len(ref.errors))
    assert counts == (8, 5, 1, 2)
    assert (got.files, got.added, got.duplicates, len(got.errors)) == counts
    assert sorted((e.path, e.rule) for e in got.errors) == sorted(
        (e.path, e.rule) for e in ref.errors) == [
        (str(src / "dangling.blog"), "log.unreadable"),
        (str(src / "fifo.blog"), "log.filetype")]
    assert engine.table_checksums(tmp_path / "spark") == engine.table_checksums(
        tmp_path / "local")
    stored = engine.query(tmp_path / "spark", "SELECT source_path FROM matches",
                          spark=spark).column("source_path").to_pylist()
    assert str(src / "z.blog") in stored and str(src / "b" / "x.blog") not in stored


@pytest.mark.parametrize(("uri", "path"), [
    ("file:///tmp/a/b.blog", "file:/tmp/a/b.blog"),
    ("file:///tmp/em%20pty%20%C3%A9%2520.blog", "file:/tmp/em pty é%20.blog"),
    ("s3a://bucket/logs/x%20y.jsonl", "s3a://bucket/logs/x y.jsonl"),
    ("hdfs://nn:8020/logs/a.blog", "hdfs://nn:8020/logs/a.blog"),
])
def test_a_listed_uri_maps_to_the_name_of_the_path_column(uri: str, path: str) -> None:
    from buraco_log.archive import spark as engine

    assert engine.hadoop_path(uri) == path
