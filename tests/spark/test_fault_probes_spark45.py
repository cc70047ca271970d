"""Fault probes, Spark engine, round 45: ``DATE - DATE`` (an interval on Spark, a number of days
on DuckDB) is refused with the query that gives DuckDB's answer; user SQL that reads files,
writes, or changes the session is refused before it runs, however it is put; and Ctrl-C or
SIGTERM to a query stuck in the driver (no job to cancel) ends the JVM with the command (it
lived on, orphaned, after the command had exited)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import IngestReport, views
from buraco_log.errors import ArchiveError
from tests.spark.conftest import IN_CI, spark_missing

ROOT = Path(__file__).resolve().parents[2]
OUT = "/tmp/probe45"  # what a statement would write or make, if it ran


@pytest.fixture(scope="module")
def archive(spark: Any, local_archive: tuple[Path, IngestReport]) -> Iterator[Path]:
    from buraco_log.archive import spark as engine

    engine.create_views(spark, local_archive[0])
    yield local_archive[0]


def _refused(spark: Any, sql: str) -> str:
    from buraco_log.archive import spark as engine

    with pytest.raises(ArchiveError) as err:
        engine.check_sql(spark, sql)
    message = str(err.value)
    assert message.startswith("query: ") and "\n" not in message, message
    assert "An error occurred while calling" not in message and "\tat " not in message, message
    return message


# -- DATE - DATE ---------------------------------------------------------------------------------

@pytest.mark.spark
def test_a_difference_of_dates_is_refused_with_the_query_that_gives_duckdbs_answer(
        spark: Any, archive: Path) -> None:
    """Before: Spark answered INTERVAL 28 DAYS where DuckDB answers 28."""
    from buraco_log.archive import spark as engine

    for sql in ("SELECT DATE '2026-03-01' - DATE '2026-02-01' AS d",
                "SELECT max(CAST(started_at AS DATE)) - min(CAST(started_at AS DATE)) AS d "
                "FROM matches"):
        assert _refused(spark, sql) == engine.DATE_MINUS_DATE
    ours = engine.query(archive, "SELECT datediff(DATE '2026-03-01', DATE '2026-02-01') AS d, "
                        "DATE '2026-03-01' - 1 AS e", spark=spark)
    duck = views.query(archive, "SELECT date_diff('day', DATE '2026-02-01', "
                       "DATE '2026-03-01') AS d, DATE '2026-03-01' - 1 AS e")
    assert ours.to_pylist() == duck.to_pylist() == [{"d": 28, "e": duck.column("e")[0].as_py()}]


# -- the sandbox: what reads files, writes or changes the session --------------------------------

SANDBOX = [
    "SELECT * FROM parquet.`/etc`",
    "SELECT * FROM parquet.`{archive}/events`",  # the archive's files past its views
    "SELECT * FROM read_files('/etc/passwd', format => 'text')",
    "SELECT (SELECT max(value) FROM text.`/etc/passwd`) AS v",
    "SELECT * FROM matches, LATERAL (SELECT * FROM text.`/etc/passwd`)",
    f"CREATE TABLE probe45 (a STRING) USING text LOCATION '{OUT}'",
    "CREATE TABLE probe45 USING parquet LOCATION '{archive}/events'",
    f"INSERT OVERWRITE DIRECTORY '{OUT}' USING csv SELECT * FROM matches",
    "SET spark.sql.ansi.enabled=false",
    "CACHE TABLE probe45 AS SELECT * FROM matches",
    f"CREATE FUNCTION probe45 AS 'org.apache.hadoop.hive.ql.udf.UDFReflect' USING JAR "
    f"'{OUT}.jar'",
    "SELECT * FROM matches WHERE java_method('java.lang.Thread', 'sleep', 1L) IS NULL",
    "SELECT _metadata.file_path AS f FROM events",
]


@pytest.mark.spark
def test_what_reads_files_writes_or_changes_the_session_is_refused_in_one_line(
        spark: Any, archive: Path) -> None:
    from buraco_log.archive import spark as engine

    before = ({t.name for t in spark.catalog.listTables()}, spark.conf.get(
        "spark.sql.ansi.enabled"), str(spark.sparkContext._jsc.sc().listJars()))
    for sql in SANDBOX:
        message = _refused(spark, sql.replace("{archive}", str(archive)))
        assert "/root" not in message and "java.lang" not in message, message
    assert not Path(OUT).exists() and not Path(f"{OUT}.jar").exists()
    assert not spark.catalog.functionExists("probe45")
    assert ({t.name for t in spark.catalog.listTables()}, spark.conf.get(
        "spark.sql.ansi.enabled"), str(spark.sparkContext._jsc.sc().listJars())) == before
    assert engine.check_sql(spark, "SELECT count(*) FROM matches").columns == ["count(1)"]


@pytest.mark.spark
@pytest.mark.parametrize(("sql", "name"), [
    ("SELECT * FROM read_files('/etc/passwd')", "read_files"),
    ("SELECT * FROM range(3) AS t(a)", "range"),
    ("SELECT * FROM system.builtin.explode(array(1))", "system.builtin.explode"),
])
def test_a_table_function_is_refused_by_its_name(spark: Any, archive: Path, sql: str,
                                                 name: str) -> None:
    """Before: "UnresolvedTableValuedFunction is not allowed", Catalyst's class name."""
    assert _refused(spark, sql).startswith(f"query: a table function ({name}) is not allowed: "
                                           "only the archive's views can be read (")


# -- a signal to a query stuck in the driver ------------------------------------------------------

# Folded by the optimizer in the driver (a projection over VALUES): minutes, and no job.
FOLDED = ("SELECT size(transform(sequence(1, 50000), x -> size(transform(sequence(1, 50000), "
          "y -> y + x + z)))) AS n FROM VALUES (1) AS t(z)")


def _in_session(sid: int) -> str:
    """The live processes of session ``sid`` (a zombie, already ended, waits for init)."""
    ps = subprocess.run(["ps", "-o", "pid,stat,comm", "--no-headers", "-s", str(sid)],
                        capture_output=True, text=True, check=False).stdout
    return "\n".join(line for line in ps.splitlines() if line.split()[1][:1] != "Z")


def _jstack() -> str | None:
    found = shutil.which("jstack")
    home = os.environ.get("JAVA_HOME")
    if found is None and home and os.path.exists(os.path.join(home, "bin", "jstack")):
        found = os.path.join(home, "bin", "jstack")
    return found


def _folding(sid: int, jstack: str) -> bool:
    """The JVM of session ``sid`` is folding the query, by its threads' stacks."""
    java = [line.split()[0] for line in _in_session(sid).splitlines() if line.endswith("java")]
    stacks = subprocess.run([jstack, *java[:1]], capture_output=True, text=True, check=False)
    return bool(java) and "ArrayTransform" in stacks.stdout


@pytest.mark.spark
@pytest.mark.slow  # its own JVM: one to three minutes on the loaded machine
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["INT", "TERM"])
def test_a_signal_to_a_query_stuck_in_the_driver_ends_its_jvm_with_the_command(
        tmp_path: Path, sig: signal.Signals) -> None:
    """Before: exit 130 or 143 and one line, but the JVM, still folding, outlived the command
    (orphaned, a core busy, until it read the end of its input and shut down)."""
    why = spark_missing()
    if why is not None and not IN_CI:
        pytest.skip(why)
    a = tmp_path / "a"
    subprocess.run([sys.executable, "-m", "cli.main", "ingest", "--archive", str(a),
                    str(ROOT / "examples/sim/thirteen-quick-4p-000000.blog")], cwd=ROOT,
                   check=True, capture_output=True)
    p = subprocess.Popen([sys.executable, "-m", "cli.main", "query", str(a), FOLDED,
                          "--timeout", "0", "--engine", "spark", "--master", "local[1]"],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        jstack, deadline = _jstack(), time.monotonic() + 300
        if jstack is None:  # no JDK to look with: the JVM is up and folding by then
            time.sleep(90)
        while jstack and not _folding(p.pid, jstack) and time.monotonic() < deadline \
                and p.poll() is None:
            time.sleep(2)
        time.sleep(2)
        assert p.poll() is None, p.communicate()
        p.send_signal(sig)
        out, err = p.communicate(timeout=60)
        left = _in_session(p.pid)  # at once: what the command left behind
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    how = "interrupted" if sig == signal.SIGINT else "terminated (SIGTERM)"
    assert (p.returncode, out, err) == (130 if sig == signal.SIGINT else 143, "",
                                        f"buraco-log: error: query: {how}\n")
    assert left == "", left


@pytest.mark.spark
@pytest.mark.slow  # its own JVM: a minute or two on the loaded machine
def test_a_query_stuck_in_the_driver_past_its_timeout_ends_its_jvm_with_the_command(
        tmp_path: Path) -> None:
    """Before: the timeout's one line and exit 1, but the JVM, still folding, outlived the
    command."""
    why = spark_missing()
    if why is not None and not IN_CI:
        pytest.skip(why)
    a = tmp_path / "a"
    subprocess.run([sys.executable, "-m", "cli.main", "ingest", "--archive", str(a),
                    str(ROOT / "examples/sim/thirteen-quick-4p-000000.blog")], cwd=ROOT,
                   check=True, capture_output=True)
    p = subprocess.Popen([sys.executable, "-m", "cli.main", "query", str(a), FOLDED,
                          "--timeout", "20", "--engine", "spark", "--master", "local[1]"],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=600)
        left = _in_session(p.pid)  # at once: what the command left behind
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    assert (p.returncode, out, err) == (
        1, "", "buraco-log: error: query: stopped after the 20 s timeout (--timeout)\n")
    assert left == "", left


# -- equal results: every preset, JSON Lines logs damaged every way ------------------------------

def _presets_and_damaged_jsonl(directory: Path) -> None:
    """A finished match of every preset (one of them only as JSON Lines), and JSON Lines logs
    torn, with a line that is not JSON, tampered with, with an unknown field, with an illegal
    move, unfinished, and not JSON at all."""
    from buraco_log.jsonl import binary_to_jsonl, dump
    from buraco_log.log import read_events
    from buraco_log.rules import PRESETS
    from tests import brokenlogs
    from tests.archive.corpus import make_corpus

    logs = make_corpus(str(directory), len(PRESETS), seed="presets45", jobs=1,
                       presets=tuple(PRESETS))
    binary_to_jsonl(logs[-1], directory / "only-as-jsonl.jsonl")
    os.unlink(logs[-1])
    source = directory / "source.jsonl"
    binary_to_jsonl(logs[0], source)
    lines = source.read_bytes().splitlines(keepends=True)
    os.unlink(source)
    (directory / "torn.jsonl").write_bytes(b"".join(lines)[:-40])
    (directory / "not-json-line.jsonl").write_bytes(b"".join(
        [*lines[:5], b'{"t":"cd","seq":\n', *lines[6:]]))
    # the first two cards of the first hand dealt swapped: legal, but not the chained bytes
    tampered = re.sub(rb'\[\["(\w+)","(\w+)"', rb'[["\2","\1"', lines[2], count=1)
    assert tampered != lines[2]
    (directory / "tampered.jsonl").write_bytes(b"".join([*lines[:2], tampered, *lines[3:]]))
    (directory / "unknown-field.jsonl").write_bytes(b"".join(
        [*lines[:6], lines[6].replace(b'"seq":', b'"x":0,"seq":', 1), *lines[7:]]))
    events = read_events(logs[1])
    illegal, _ = brokenlogs.with_illegal_discard(events)
    with open(directory / "illegal.jsonl", "w", encoding="utf-8") as f:
        dump(iter(illegal), f, sealed=True)
    with open(directory / "unfinished.jsonl", "w", encoding="utf-8") as f:
        dump(iter(events[:-5]), f, sealed=False)
    (directory / "garbage.jsonl").write_bytes(bytes(range(256)))


@pytest.mark.spark
@pytest.mark.slow  # a Spark ingest of its own: a minute or two on the loaded machine
def test_every_preset_and_damaged_json_lines_give_the_local_engines_rows(
        spark: Any, tmp_path: Path) -> None:
    """The shared corpus holds one preset and no damaged JSON Lines log."""
    from buraco_log.archive import ingest
    from buraco_log.archive import spark as engine

    src = tmp_path / "logs"
    _presets_and_damaged_jsonl(src)
    local = ingest([str(src)], tmp_path / "local", jobs=1)
    ours = engine.ingest([str(src)], tmp_path / "spark", spark=spark)
    assert (ours.added, ours.events) == (local.added, local.events) == (8, local.events)
    assert sorted((e.path, e.rule, e.message) for e in ours.errors) == sorted(
        (e.path, e.rule, e.message) for e in local.errors)
    assert len(local.errors) == 7, [(e.path, e.message) for e in local.errors]
    assert engine.table_checksums(tmp_path / "spark") == engine.table_checksums(
        tmp_path / "local")


# -- Ctrl-C while the session starts ---------------------------------------------------------------

def test_ctrl_c_while_the_session_starts_is_said_by_the_commands_handler(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """PySpark puts its own SIGINT handler in place while its context starts: a Ctrl-C then
    never reached the command's, and came out as the bare "interrupted" (not "query:
    interrupted; nothing was written to FILE"). A real SIGINT, to this process."""
    from cli import archive_spark

    met: list[int] = []

    def ours(signum: int, _frame: object) -> None:
        met.append(signum)
        raise KeyboardInterrupt

    class Starting:  # what SparkContext does as it starts, then the Ctrl-C
        @staticmethod
        def session(master: str | None, conf: dict[str, str]) -> None:
            def theirs(_signum: int, _frame: object) -> None:
                raise KeyboardInterrupt

            signal.signal(signal.SIGINT, theirs)
            signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(archive_spark, "_module", lambda: Starting)
    previous = signal.signal(signal.SIGINT, ours)
    try:
        with pytest.raises(KeyboardInterrupt):
            archive_spark._session(None, {})
        assert (met, signal.getsignal(signal.SIGINT)) == ([signal.SIGINT], ours)
    finally:
        signal.signal(signal.SIGINT, previous)
