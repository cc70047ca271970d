"""Fault probes, Spark engine, round 39: running out of memory, and a Spark that does not start.

A query whose constant Spark folds into a value too large for Java (``repeat('x',
2147483647)``) killed Spark's "serve-Arrow" thread with an OutOfMemoryError while the command
read that thread's socket: it waited forever (with --timeout, it said "stopped after the
timeout"). A task that ran the JVM out of memory ended it, and the command said "[Errno 111]
Connection refused" or "Job 5 cancelled because SparkContext was shut down". A bad --master or
--conf value said "Java gateway process exited before sending its port number ... install a Java
17+ runtime" (Java was there), or "internal error: Py4JJavaError" with Java's stack (an
unreachable master), or a line with no reason ("Error while instantiating
'...SessionStateBuilder':"); a JAVA_HOME without bin/java passed the check, since java was on
PATH, and Spark, which runs $JAVA_HOME/bin/java, did not start.

The sandbox held against this round's statements (file formats as tables, TRANSFORM ... USING,
variables, EXECUTE IMMEDIATE, catalog and session functions, hints, table-valued functions,
pipe syntax, recursive CTEs reading a session table): no new test for what was refused already.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import IngestReport
from buraco_log.errors import ArchiveError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def views(spark: Any, local_archive: tuple[Path, IngestReport]) -> Iterator[Any]:
    from buraco_log.archive import spark as engine

    engine.create_views(spark, local_archive[0])
    yield spark


def _cli(args: list[str], env: dict[str, str] | None = None, timeout: float = 300
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT, stdin=subprocess.DEVNULL,
                          env={**os.environ, **(env or {})}, check=False)


def _needs_spark() -> None:
    """Skip a test that starts its own JVM where Spark cannot run (as the fixture does)."""
    from tests.spark.conftest import IN_CI, spark_missing

    why = spark_missing()
    if why is not None:
        if IN_CI:
            pytest.fail(f"CI must run the Spark tests: {why}")
        pytest.skip(why)


# -- out of memory -------------------------------------------------------------------------------

def test_a_constant_too_large_for_java_is_one_line_not_a_wait_forever(
        views: Any, local_archive: tuple[Path, IngestReport]) -> None:
    """Before: the optimizer's OutOfMemoryError ended Spark's serve-Arrow thread, and the read
    of its socket never returned (this test waited 60 s, then failed). Now the plan is made
    in a call that returns Java's error; the JVM lives on."""
    from buraco_log.archive import spark as engine

    done: list[BaseException | Any] = []

    def run() -> None:
        try:
            done.append(engine.query(local_archive[0], "SELECT length(repeat('x', 2147483647))"
                                     " AS n", spark=views))
        except BaseException as exc:  # handed to the test's thread
            done.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(60)
    assert done, "the query still waits after 60 s"
    assert isinstance(done[0], ArchiveError), done
    assert str(done[0]) == ("query: Spark ran out of memory (java.lang.OutOfMemoryError: "
                            "Requested array size exceeds VM limit)")
    rows = engine.query(local_archive[0], "SELECT count(*) AS n FROM matches", spark=views)
    assert rows.to_pylist() == [{"n": local_archive[1].added}]


class _Proc:
    def __init__(self, status: int | None) -> None:
        self.status = status

    def poll(self) -> int | None:
        return self.status


class _Fake:
    """Just enough of a SparkSession for :func:`_jvm_stopped`: its JVM's process, and
    whether its context is stopped."""

    def __init__(self, status: int | None, stopped: bool) -> None:
        self.sparkContext = self
        self._gateway = self
        self.proc = _Proc(status)
        self._jsc = self
        self.stopped = stopped

    def sc(self) -> _Fake:
        return self

    def isStopped(self) -> bool:  # the Java name
        return self.stopped


def test_a_jvm_that_died_of_a_task_out_of_memory_is_named_so() -> None:
    from buraco_log.archive import spark as engine

    gone = engine._failure(_Fake(52, True), RuntimeError("[Errno 111] Connection refused"))  # type: ignore[arg-type]
    assert gone == ("Spark ran out of memory and its JVM stopped (exit status 52): ask for "
                    "fewer or smaller rows, or give it more (--conf spark.driver.memory=4g)")
    other = engine._failure(_Fake(1, True), RuntimeError("Error while sending or receiving"))  # type: ignore[arg-type]
    assert other.startswith("Spark's JVM stopped (exit status 1; its output: ")
    start = time.monotonic()  # a live context: its own error, at once
    alive = engine._failure(_Fake(None, False), RuntimeError("[DIVIDE_BY_ZERO] x"))  # type: ignore[arg-type]
    assert alive == "[DIVIDE_BY_ZERO] x"
    assert time.monotonic() - start < 1
    heap = engine._failure(_Fake(None, False), RuntimeError(  # type: ignore[arg-type]
        "An error occurred while calling o9.x.\n: java.lang.OutOfMemoryError: Java heap space"))
    assert heap == ("Spark ran out of memory (java.lang.OutOfMemoryError: Java heap space); "
                    "give it more (--conf spark.driver.memory=4g)")


@pytest.mark.slow
def test_a_task_that_runs_the_jvm_out_of_memory_is_one_line_that_says_so(
        spark_corpus: Any, local_archive: tuple[Path, IngestReport]) -> None:
    """Its own JVM (it dies), with a small heap. Before: "[Errno 111] Connection refused"."""
    _needs_spark()
    r = _cli(["query", str(local_archive[0]), "SELECT length(repeat(match_id, 30000000)) AS n "
              "FROM matches", "--engine", "spark", "--master", "local[1]", "--timeout", "0",
              "--conf", "spark.driver.memory=512m"])
    assert (r.returncode, r.stdout) == (1, ""), r.stderr[-2000:]
    assert r.stderr.splitlines() == [
        "buraco-log: error: query: Spark ran out of memory and its JVM stopped (exit status "
        "52): ask for fewer or smaller rows, or give it more (--conf spark.driver.memory=4g)"]


# -- Spark does not start ------------------------------------------------------------------------

STARTS = [
    # spark-submit's own error (a bad --master, --conf spark.executor.cores=-1)
    ('Exception in thread "main" org.apache.spark.SparkException: Master must either be yarn '
     "or start with spark, k8s, or local\n\tat org.apache.spark.deploy.SparkSubmit.error(x)",
     "[JAVA_GATEWAY_EXITED] Java gateway process exited before sending its port number.",
     "Master must either be yarn or start with spark, k8s, or local"),
    # the java launcher's (--conf spark.driver.memory=lots)
    ("Invalid maximum heap size: -Xmxlots\nError: Could not create the Java Virtual Machine.\n",
     "[JAVA_GATEWAY_EXITED] Java gateway process exited before sending its port number.",
     "Invalid maximum heap size: -Xmxlots"),
    # the shell's, and a java that says why it cannot run
    ("/x/pyspark/bin/spark-class: line 71: /opt/jdk/bin/java: No such file or directory\n",
     "[JAVA_GATEWAY_EXITED] x", "/opt/jdk/bin/java: No such file or directory"),
    ("Error: broken java\n", "[JAVA_GATEWAY_EXITED] x", "broken java"),
    # an unreachable master: PySpark's error says nothing, Spark logged why
    ("26/12/05 23:16:11 ERROR SparkContext: Error initializing SparkContext.\n"
     "26/12/05 23:16:11 ERROR StandaloneSchedulerBackend: Application has been killed. Reason: "
     "All masters are unresponsive! Giving up.\n",
     "An error occurred while calling None.org.apache.spark.sql.classic.SparkSession.\n: "
     "java.lang.IllegalStateException: Cannot call methods on a stopped SparkContext.",
     "Application has been killed. Reason: All masters are unresponsive! Giving up."),
    # PySpark's error names the cause: it wins over a generic logged error
    ("12:00:00 ERROR SparkContext: Error initializing SparkContext.\n",
     "An error occurred while calling None.org.apache.spark.api.java.JavaSparkContext.\n: "
     "org.apache.spark.SparkException: Could not parse Master URL: 'local[abc]'\n\tat x(y)",
     "Could not parse Master URL: 'local[abc]'"),
]


@pytest.mark.parametrize(("output", "error", "why"), STARTS,
                         ids=["submit", "launcher", "shell", "java", "master", "pyspark"])
def test_a_failed_start_says_what_the_jvm_said(tmp_path: Path, output: str, error: str,
                                               why: str) -> None:
    """Before: "Spark did not start ([JAVA_GATEWAY_EXITED] ...); install a Java 17+ runtime"
    whatever the JVM had said."""
    from buraco_log.archive import spark as engine

    log = tmp_path / "jvm.log"
    log.write_text("an earlier run's line\nError: not ours\n" + output)
    start = len("an earlier run's line\nError: not ours\n")
    assert engine._start_failure(RuntimeError(error), str(log), start) == why


def test_a_java_too_old_is_told_to_install_java_17(tmp_path: Path) -> None:
    from buraco_log.archive import spark as engine

    log = tmp_path / "jvm.log"
    log.write_text('Exception in thread "main" java.lang.UnsupportedClassVersionError: '
                   "org/apache/spark/launcher/Main has been compiled by a more recent version\n")
    why = engine._start_failure(RuntimeError("[JAVA_GATEWAY_EXITED] x"), str(log), 0)
    assert why.startswith("java.lang.UnsupportedClassVersionError: org/apache/spark/")
    assert why.endswith(engine.INSTALL_JAVA)


class _Throwable:
    def __init__(self, message: str | None, cause: _Throwable | None = None) -> None:
        self.message, self.cause = message, cause

    def getMessage(self) -> str | None:  # the Java name
        return self.message

    def getCause(self) -> _Throwable | None:  # the Java name
        return self.cause


def test_a_captured_error_without_a_reason_is_named_by_its_deepest_cause() -> None:
    """Before: "Error while instantiating 'org.apache.spark.sql.internal.SessionStateBuilder':"
    (a bad spark.sql.* value), whose text holds no stack to read the cause from."""
    from buraco_log.archive import spark as engine

    exc = RuntimeError("Error while instantiating 'org.apache.spark.sql.internal."
                       "SessionStateBuilder':")
    exc._origin = _Throwable(str(exc), _Throwable(  # type: ignore[attr-defined]
        "[INVALID_CONF_VALUE.TYPE_MISMATCH] The value 'abc' in the config "
        '"spark.sql.shuffle.partitions" is invalid.', _Throwable(None)))
    assert engine._first_line(exc) == ("[INVALID_CONF_VALUE.TYPE_MISMATCH] The value 'abc' in "
                                       'the config "spark.sql.shuffle.partitions" is invalid.')


def test_a_java_home_without_java_is_named_before_spark_starts(
        tmp_path: Path, local_archive: tuple[Path, IngestReport]) -> None:
    """Spark runs $JAVA_HOME/bin/java whenever JAVA_HOME is set: java on PATH passed the
    check, then the start failed saying to install Java. No JVM starts here."""
    _needs_spark()
    r = _cli(["report", str(local_archive[0]), "--engine", "spark"],
             {"JAVA_HOME": str(tmp_path)}, timeout=60)
    assert (r.returncode, r.stdout) == (2, ""), r.stderr[-2000:]
    assert r.stderr.splitlines() == [
        f"buraco-log: error: --engine spark needs Java: JAVA_HOME ({tmp_path}) has no bin/java; "
        "set it to a Java 17+ runtime, or unset it"]


def test_a_bad_jvm_setting_is_one_line_naming_it(local_archive: tuple[Path, IngestReport]
                                                  ) -> None:
    """End to end, the JVM's own words (about 4 s: the JVM refuses its settings at once).
    Before: "Java gateway process exited ...; install a Java 17+ runtime"."""
    _needs_spark()
    r = _cli(["query", str(local_archive[0]), "SELECT 1 AS n", "--engine", "spark", "--conf",
              "spark.driver.memory=lots"])
    assert (r.returncode, r.stdout) == (2, ""), r.stderr[-2000:]
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr[-2000:]
    assert lines[0].startswith("buraco-log: error: Spark did not start (master local[")
    assert "): Invalid maximum heap size: -Xmxlots (its output: " in lines[0]
    assert "install" not in lines[0]


@pytest.mark.slow
@pytest.mark.parametrize(("args", "why"), ids=["master", "master-url", "sql-conf"], argvalues=[
    (["--master", "nonsense"], "Master must either be yarn or start with spark, k8s, or local"),
    (["--master", "local[abc]"], "Could not parse Master URL: 'local[abc]'"),
    (["--conf", "spark.sql.shuffle.partitions=abc"],
     "[INVALID_CONF_VALUE.TYPE_MISMATCH] The value 'abc' in the config "
     '"spark.sql.shuffle.partitions" is invalid.'),
])
def test_a_bad_master_or_setting_is_one_line_that_names_it(
        local_archive: tuple[Path, IngestReport], args: list[str], why: str) -> None:
    """Each starts a JVM (slow). Before: "Java gateway process exited ...", a line ending in
    "SessionStateBuilder':", or Spark's generic "An error occurred while calling"."""
    _needs_spark()
    r = _cli(["query", str(local_archive[0]), "SELECT 1 AS n", "--engine", "spark", *args])
    assert (r.returncode, r.stdout) == (2, ""), r.stderr[-2000:]
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and why in lines[0], r.stderr[-2000:]
    assert lines[0].startswith("buraco-log: error: Spark did not start (master ")


# -- what DuckDB takes -----------------------------------------------------------------------------

def test_limit_all_is_read_only_and_gives_duckdbs_rows(
        views: Any, local_archive: tuple[Path, IngestReport]) -> None:
    """Before: "only read-only queries are allowed, not LimitAll"."""
    from buraco_log.archive import query as duck_query
    from buraco_log.archive import spark as engine

    sql = "SELECT game_id, events FROM matches ORDER BY game_id LIMIT ALL"
    ours = engine.query(local_archive[0], sql, spark=views).to_pylist()
    assert ours == duck_query(local_archive[0], sql, bound=False).to_pylist()
    assert len(ours) == local_archive[1].added > 0
