"""The ``--engine spark`` side of ``ingest``, ``query`` and ``report``: parse the Spark options
and call :mod:`buraco_log.archive.spark` (imported only here, only when asked for)."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterator, Sequence
from enum import StrEnum
from typing import Any, cast

from cli.common import EXIT_USAGE, fail


class Engine(StrEnum):
    local = "local"
    spark = "spark"


ENGINE_HELP = ("local: this machine (DuckDB, a process pool); spark: Apache Spark (the [spark] "
               "extra and Java 17+), see docs/spark.md.")
MASTER_HELP = ("Spark master with --engine spark: local[N], spark://HOST:PORT, yarn, k8s://... "
               "(default: local[--jobs], or the one spark-submit gives).")
CONF_HELP = "A Spark setting KEY=VALUE with --engine spark (repeatable)."


def spark_options(engine: Engine, master: str | None, conf: Sequence[str] | None
                  ) -> dict[str, str]:
    """``--conf`` as a dict; usage errors for Spark options given to the local engine."""
    if engine is not Engine.spark:
        if master is not None or conf:
            raise fail("--master and --conf go with --engine spark", EXIT_USAGE)
        return {}
    out: dict[str, str] = {}
    for item in conf or ():
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise fail(f"--conf {item!r}: KEY=VALUE, e.g. spark.executor.memory=4g", EXIT_USAGE)
        out[key.strip()] = value
    return out


def master_or(master: str | None, cores: int | None) -> str | None:
    """The master to start: the one given; under ``spark-submit`` none (it gave one); else
    local mode with ``cores`` threads (all CPUs when None)."""
    if master is not None or "PYSPARK_GATEWAY_PORT" in os.environ:
        return master
    return f"local[{cores}]" if cores else "local[*]"


def _module() -> Any:
    from buraco_log.archive import spark

    return spark


@contextlib.contextmanager
def _py4j_quiet() -> Iterator[None]:
    """Py4J logs a call cut by Ctrl-C or SIGTERM (or by the JVM's death) with
    ``logging.exception`` on the root logger, which sets logging up to print it, traceback
    and all, on stderr: the command's one line says it. While Spark runs, the root logger
    has a handler that drops it (only if it has none: a program's own logging stays)."""
    root = logging.getLogger()
    if root.handlers:
        yield
        return
    drop = logging.NullHandler()
    root.addHandler(drop)
    try:
        yield
    finally:
        root.removeHandler(drop)


def ingest(sources: list[str], root: str, master: str | None, conf: dict[str, str],
           require_commitment: bool | None) -> Any:
    """The Spark ingest; a SIGTERM or Ctrl-C before its commit leaves the archive as it was
    and comes out as KeyboardInterrupt (the caller says so in one line)."""
    with _py4j_quiet():
        return _module().ingest(sources, root, master=master, conf=conf,
                                require_commitment=require_commitment)


class TableStream:
    """A query's Arrow table in the shape of :class:`buraco_log.archive.QueryStream`."""

    def __init__(self, table: Any) -> None:
        self.schema = table.schema
        self._table = table

    def __iter__(self) -> Iterator[Any]:
        return iter(self._table.to_batches(max_chunksize=65_536))


CANCEL_GRACE = 5.0  # seconds a cancelled query may take to stop before it is abandoned


def query(root: str, sql: str, master: str | None, conf: dict[str, str],
          timeout: float) -> TableStream:
    """The checked query on Spark SQL; ``timeout`` seconds (0: none) cancel its jobs.

    A query can also run away in the driver, where there is no job to cancel (the optimizer
    folding ``size(transform(sequence(1, 100000000), ...))``: it ran 300 s past a 10 s
    timeout). So it runs in a thread, and one that has not stopped :data:`CANCEL_GRACE`
    seconds after its jobs were cancelled is abandoned: the error is raised, and the JVM, a
    child of this process, goes when the command exits."""
    engine = _module()
    engine.check_text(sql)  # a statement too long or too deep: refused before Spark starts
    spark = engine.session(master, conf)
    if not timeout:
        return TableStream(engine.query(root, sql, spark=spark))
    fired = threading.Event()
    done: list[Any] = []

    def cancel() -> None:
        fired.set()
        spark.sparkContext.cancelAllJobs()

    def run() -> None:
        try:
            done.append(TableStream(engine.query(root, sql, spark=spark)))
        except BaseException as exc:  # handed to the caller's thread
            done.append(exc)

    timer = threading.Timer(timeout, cancel)
    timer.daemon = True
    worker = threading.Thread(target=run, daemon=True, name="spark-query")
    timer.start()
    worker.start()
    try:
        worker.join(timeout + CANCEL_GRACE)
    finally:
        timer.cancel()
    stopped = engine.ArchiveError(f"query: stopped after the {timeout:g} s timeout "
                                  "(--timeout)")
    if not done:  # still running in the driver
        raise stopped
    if isinstance(done[0], Exception) and fired.is_set():  # whatever the cancelled job raised
        raise stopped from done[0]
    if isinstance(done[0], BaseException):
        raise done[0]
    return cast(TableStream, done[0])


def report(root: str, top: int, master: str | None, conf: dict[str, str]) -> Any:
    with _py4j_quiet():
        return _module().report(root, top=top, master=master, conf=conf)
