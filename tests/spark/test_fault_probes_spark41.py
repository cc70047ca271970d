"""Fault probes, Spark engine, round 41: copies told apart by how they are read, JSON nulls in
a VARIANT, and intervals.

Ingest matched a copy by its bytes alone, on both engines: an empty ``e.jsonl`` beside an
empty ``e.blog`` was refused as "the same bytes as e.blog: file header cut short", in a binary
log's words, and a binary log's bytes named ``.jsonl`` counted as a duplicate of the stored
match on the local engine while Spark refused it (the engines' errors tables differed). A copy
is now the same bytes read the same way (binary, or JSON Lines), on both.

A log whose name holds a colon (``a:b.blog``) failed the whole Spark ingest: Hadoop cannot read
it ("Relative path in absolute URI"); it is read on the driver now, as empty logs are. An
archive whose path holds a colon and glob characters was created by a Spark ingest and could
never be read again: it is refused in one line, as one whose path is not UTF-8. A source whose
name is not UTF-8 was "internal error: Py4JError"; its logs are read on the driver.

Query: a JSON ``null`` at the top of a VARIANT was the text ``null`` on Spark and SQL NULL on
DuckDB; a year-month or calendar interval failed with Spark's own "not supported in
conversion to Arrow", and a day-time interval came out as a duration (seconds in json), not
DuckDB's INTERVAL. Both engines now give Arrow's month-day-nano interval, printed alike.

The sandbox held against this round's statements (TRANSFORM ... USING, CACHE TABLE, ADD JAR,
SET, REFRESH, INSERT OVERWRITE DIRECTORY, temporary views over paths, hints, table-valued
functions, LATERAL VIEW of a denied function, qualified built-ins, IDENTIFIER, time travel,
streaming reads, parameters): no new test for what was refused already.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import IngestReport, ingest
from buraco_log.archive import query as duck_query
from tests.archive.corpus import make_corpus

ROOT = Path(__file__).resolve().parents[2]


# -- ingest: a copy is the same bytes read the same way ------------------------------------------

def _copies(tmp_path: Path) -> Path:
    """Empty e.blog, e.jsonl and f.jsonl; a match as g.blog and its very bytes as g.jsonl."""
    src = tmp_path / "in"
    src.mkdir()
    for name in ("e.blog", "e.jsonl", "f.jsonl"):
        (src / name).write_bytes(b"")
    (log,) = make_corpus(str(tmp_path / "corpus"), 1, jobs=1)
    shutil.copy(log, src / "g.blog")
    shutil.copy(log, src / "g.jsonl")
    return src


def _alone(tmp_path: Path, src: Path, name: str) -> str:
    """The message the local engine gives ``name`` ingested on its own."""
    lone = tmp_path / f"lone-{name}"
    lone.mkdir()
    shutil.copy(src / name, lone / name)
    (err,) = ingest([str(lone)], tmp_path / f"lone-{name}-archive").errors
    return err.message


def test_an_empty_jsonl_beside_an_empty_blog_is_refused_in_json_lines_words(
        tmp_path: Path) -> None:
    """Before: e.jsonl was "the same bytes as e.blog: ... file header cut short ...", and
    g.jsonl (a binary log's bytes) a duplicate match, named nowhere."""
    src = _copies(tmp_path)
    rep = ingest([str(src)], tmp_path / "archive")
    by = {Path(e.path).name: e for e in rep.errors}
    assert sorted(by) == ["e.blog", "e.jsonl", "f.jsonl", "g.jsonl"]
    assert by["e.jsonl"].message == _alone(tmp_path, src, "e.jsonl")
    assert "header" not in by["e.jsonl"].message
    assert by["e.blog"].message == _alone(tmp_path, src, "e.blog")
    assert by["f.jsonl"].message == f"the same bytes as {src / 'e.jsonl'}: {by['e.jsonl'].message}"
    assert by["g.jsonl"].message == _alone(tmp_path, src, "g.jsonl")
    assert by["g.jsonl"].rule == "log.header"  # a binary log named .jsonl is no JSON Lines log
    assert (rep.added, rep.duplicates) == (1, 0)
    # every file is known now, by hash and form: g.jsonl (the stored log's bytes named as
    # JSON Lines) is the error it was, not "already stored" as the .blog is
    again = ingest([str(src)], tmp_path / "archive")
    assert (again.errors, again.known_errors, again.already_stored) == ([], 4, 1)


@pytest.mark.spark
@pytest.mark.slow  # two Spark ingests and a local one: 10-30 s on a loaded machine
def test_spark_tells_copies_apart_as_the_local_engine_does(spark: Any, tmp_path: Path) -> None:
    from buraco_log.archive import spark as engine

    src = _copies(tmp_path)
    local = ingest([str(src)], tmp_path / "local")
    ours = engine.ingest([str(src)], tmp_path / "spark", spark=spark)
    assert engine.table_checksums(tmp_path / "spark") == engine.table_checksums(
        tmp_path / "local")
    assert sorted(ours.errors, key=lambda e: e.path) == sorted(local.errors,
                                                             key=lambda e: e.path)
    assert (ours.added, ours.duplicates) == (local.added, local.duplicates) == (1, 0)
    again = engine.ingest([str(src)], tmp_path / "spark", spark=spark)
    assert (again.errors, again.known_errors, again.already_stored) == ([], 3, 2)


@pytest.mark.spark
@pytest.mark.slow  # a Spark ingest and a local one: 5-10 s (7 s measured)
def test_logs_whose_paths_hadoop_or_py4j_cannot_take_are_ingested_as_locally(
        spark: Any, tmp_path: Path) -> None:
    """Before: the whole Spark ingest failed, nothing committed: "Relative path in absolute
    URI: .a:b.blog.crc" (Hadoop parses the name of the file's checksum file as a URI)."""
    from buraco_log.archive import spark as engine

    src = tmp_path / "in"
    (src / "x:y").mkdir(parents=True)
    latin1 = os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9")  # a name that is not UTF-8
    os.mkdir(latin1)
    logs = make_corpus(str(tmp_path / "corpus"), 5, jobs=1)
    names = ("a:b.blog", "x:y/c:d.blog", "x:y/plain.blog", "x:y/[z].blog")
    for log, name in zip(logs, names, strict=False):
        shutil.copy(log, src / name)
    shutil.copy(logs[4], os.path.join(latin1, "l.blog"))
    os.symlink(str(tmp_path / "gone"), os.path.join(latin1, "dangling.blog"))  # an error row
    (src / "e:mpty.jsonl").write_bytes(b"")
    # a colon and glob characters in one path: Hadoop's globber failed on it, as a source
    # too; a source that is not UTF-8: "internal error: Py4JError"
    sources = [str(src), str(src / "x:y" / "[z].blog"), latin1]
    local = ingest(sources, tmp_path / "local")
    ours = engine.ingest(sources, tmp_path / "spark", spark=spark)
    assert (ours.added, len(ours.errors)) == (local.added, len(local.errors)) == (5, 2)
    assert engine.table_checksums(tmp_path / "spark") == engine.table_checksums(
        tmp_path / "local")


@pytest.mark.spark
def test_an_archive_spark_cannot_read_back_is_refused_in_one_line(
        spark: Any, local_archive: tuple[Path, IngestReport], tmp_path: Path) -> None:
    """Before: a Spark ingest created it and committed, and every later read (a query, the
    next ingest) failed with "java.net.URISyntaxException: Relative path in absolute URI"."""
    from buraco_log.archive import spark as engine
    from buraco_log.errors import ArchiveError

    arch = tmp_path / "club[1]:x"
    shutil.copytree(local_archive[0], arch)
    with pytest.raises(ArchiveError, match=r"^Spark cannot read an archive whose path holds a "
                       r"colon and glob characters .*: .*club\[1\]:x; rename it"):
        engine.query(arch, "SELECT count(*) FROM matches", spark=spark)
    fresh = tmp_path / "new[2]:y"
    with pytest.raises(ArchiveError, match=r"^spark ingest: Spark cannot read an archive"):
        engine.ingest([str(tmp_path / "nothing")], fresh, spark=spark)
    assert not fresh.exists()  # refused before it was made
    latin1 = os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9")
    with pytest.raises(ArchiveError, match=r"^spark ingest: Spark cannot read an archive whose "
                       r"path is not UTF-8: .*/caf\\xe9; rename it"):
        engine.ingest([str(tmp_path / "nothing")], latin1, spark=spark)
    assert not os.path.exists(latin1)


# -- query: JSON nulls and intervals as DuckDB gives them ------------------------------------------

SPARK_SQL = (
    "SELECT parse_json('null') AS v, array(parse_json('null'), parse_json('1')) AS l, "
    "parse_json('[1,null]') AS a, named_struct('k', parse_json('null')) AS o, "
    "INTERVAL 14 MONTH AS ym, -INTERVAL 2 YEAR AS y, INTERVAL 3 DAY AS d, "
    "INTERVAL 90 MINUTE AS mi, TIMESTAMP '2026-01-01' - TIMESTAMP '2026-01-03 01:00' AS span, "
    "make_interval(0, 1, 0, 2, 3, 4, 5.5) AS c, -make_interval(0, 1, 0, 2, 3, 4, 5.5) AS nc, "
    "CAST(NULL AS INTERVAL MONTH) AS z, array(INTERVAL 1 MONTH, NULL) AS li, "
    "named_struct('k', INTERVAL 2 DAY, 'c', make_interval(1)) AS si, "
    "map('a', INTERVAL 3 MONTH) AS mp")
DUCK_SQL = (
    "SELECT 'null'::JSON::VARIANT::JSON AS v, ['null'::JSON::VARIANT::JSON, "
    "'1'::JSON::VARIANT::JSON] AS l, '[1,null]'::JSON::VARIANT::JSON AS a, "
    "{'k': 'null'::JSON::VARIANT::JSON} AS o, "
    "INTERVAL 14 MONTH AS ym, -INTERVAL 2 YEAR AS y, INTERVAL 3 DAY AS d, "
    "INTERVAL 90 MINUTE AS mi, TIMESTAMP '2026-01-01' - TIMESTAMP '2026-01-03 01:00' AS span, "
    "INTERVAL '1 month 2 days 03:04:05.5' AS c, -INTERVAL '1 month 2 days 03:04:05.5' AS nc, "
    "CAST(NULL AS INTERVAL) AS z, [INTERVAL 1 MONTH, NULL] AS li, "
    "{'k': INTERVAL 2 DAY, 'c': INTERVAL 1 YEAR} AS si, MAP {'a': INTERVAL 3 MONTH} AS mp")


@pytest.mark.spark
def test_json_nulls_and_intervals_are_what_duckdb_gives(
        spark: Any, local_archive: tuple[Path, IngestReport]) -> None:
    """Before: ``null`` as text; year-month and calendar intervals "not supported in
    conversion to Arrow"; day-time ones durations."""
    import pyarrow as pa  # type: ignore[import-untyped]

    from buraco_log.archive import spark as engine

    ours = engine.query(local_archive[0], SPARK_SQL, spark=spark)
    theirs = duck_query(local_archive[0], DUCK_SQL, bound=False)
    assert ours.to_pylist() == theirs.to_pylist()
    row = ours.to_pylist()[0]
    assert (row["v"], row["l"], row["o"]) == (None, [None, "1"], {"k": None})
    assert ours.schema.field("ym").type == ours.schema.field("span").type == \
        pa.month_day_nano_interval()


@pytest.mark.spark
@pytest.mark.slow  # two commands, one of them starting Spark: 15-30 s
def test_the_cli_prints_a_spark_interval_as_it_prints_duckdbs(
        spark: Any, local_archive: tuple[Path, IngestReport]) -> None:
    sql = "SELECT INTERVAL 1 MONTH AS m, INTERVAL 3 DAY AS d"

    def run(*engine: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "cli.main", "query", *engine,
                               str(local_archive[0]), sql, "-f", "json"],
                              capture_output=True, text=True, cwd=ROOT, timeout=300,
                              env={**os.environ, "COLUMNS": "200"})

    ours, theirs = run("--engine", "spark"), run()
    assert (ours.returncode, ours.stderr) == (0, "")
    assert ours.stdout == theirs.stdout
    assert '"months": 1' in ours.stdout
