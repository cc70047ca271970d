"""The ``--engine spark`` side of ``ingest``, ``query`` and ``report``: parse the Spark options
and call :mod:`buraco_log.archive.spark` (imported only here, only when asked for)."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from collections.abc import Iterator, Sequence
from enum import StrEnum
from typing import Any

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


def check_local_size(option: str, value: int, ctx: Any, master: str | None,
                     as_json: bool = False) -> None:
    """``--threads`` or ``--jobs`` (``option``, read through the command's context ``ctx``)
    size Spark's local mode (``local[N]``, :func:`master_or`): given with ``--master``, or
    under ``spark-submit``, nothing reads them, and they were ignored without a word. Refused
    there, in one line naming the option."""
    if master is None and "PYSPARK_GATEWAY_PORT" not in os.environ:
        return
    source = ctx.get_parameter_source(option.lstrip("-").replace("-", "_"))
    if source is None or source.name in ("DEFAULT", "DEFAULT_MAP"):
        return
    whose = "--master" if master is not None else "spark-submit's master"
    raise fail(f"{option} {value}: sizes Spark's local mode (local[N]) only; with {whose} the "
               "cluster's settings decide (--conf spark.executor.cores=N)", EXIT_USAGE,
               as_json=as_json)


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
           require_commitment: bool | None, replace_stored: bool = True) -> Any:
    """The Spark ingest; a SIGTERM or Ctrl-C before its commit leaves the archive as it was
    and comes out as KeyboardInterrupt (the caller says so in one line)."""
    with _py4j_quiet():
        return _module().ingest(sources, root, master=master, conf=conf,
                                require_commitment=require_commitment,
                                replace_stored=replace_stored)


class TableStream:
    """A query's Arrow table in the shape of :class:`buraco_log.archive.QueryStream`."""

    def __init__(self, table: Any) -> None:
        self.schema = table.schema
        self._table = table

    def __iter__(self) -> Iterator[Any]:
        return iter(self._table.to_batches(max_chunksize=65_536))


def query(root: str, sql: str, master: str | None, conf: dict[str, str],
          timeout: float) -> TableStream:
    """The checked query on Spark SQL; ``timeout`` seconds (0: none) stop it.

    The engine runs it in a job group of its own and cancels that group at the timeout, or
    when Ctrl-C or SIGTERM interrupts this thread; one still running in the driver (where
    there is no job to cancel) a few seconds later is abandoned, and the JVM, a child of
    this process, goes when the command exits."""
    with _py4j_quiet():  # a call cut by Ctrl-C or SIGTERM: the command's one line says it
        engine = _module()
        engine.check_text(sql)  # a statement too long or too deep: refused before Spark starts
        engine.store.check_archive(root)  # as is an archive of another layout version
        spark = _session(master, conf)
        try:
            return TableStream(engine.query(root, sql, spark=spark, timeout=timeout))
        except engine.QueryTimeout as exc:
            _stop(spark)  # one abandoned in the driver still runs there
            raise engine.ArchiveError(f"{exc} (--timeout)") from None
        except KeyboardInterrupt:
            _stop(spark)
            raise


def report(root: str, top: int, master: str | None, conf: dict[str, str],
           timeout: float) -> Any:
    """The canned report on Spark; ``timeout`` seconds (0: none) stop it, as they stop a
    query (:func:`query`), with the line the local report gives."""
    with _py4j_quiet():
        engine = _module()
        engine.store.check_archive(root)  # another layout version: refused before Spark starts
        spark = _session(master, conf)
        try:
            return engine.report(root, top=top, spark=spark, timeout=timeout)
        except engine.QueryTimeout:
            _stop(spark)  # a fold still running in the driver
            raise engine.ArchiveError(f"report: stopped after the {timeout:g} s time limit "
                                      "(--timeout; 0 for no limit)") from None
        except KeyboardInterrupt:
            _stop(spark)
            raise


JVM_STOP = 10.0
"""Seconds the JVM of an interrupted query or report has to stop before it is killed."""


def _stop(spark: Any) -> None:
    """After Ctrl-C, SIGTERM or the query's timeout: cancel every job and end the JVM this
    command started (none under ``spark-submit``, whose JVM is the parent), waiting for it.
    A query the optimizer folds in the driver has no job to cancel: it kept a core busy
    until the JVM, orphaned once the command had exited, read the end of its input."""
    sc = getattr(spark, "sparkContext", None)  # None: a session that never started
    if sc is None:
        return
    with contextlib.suppress(Exception):  # the JVM may be gone
        sc.cancelAllJobs()
    proc = getattr(getattr(sc, "_gateway", None), "proc", None)
    if proc is None:
        return
    # Its calls still running fail as it goes, and Py4J logs each on the root logger, which
    # prints it when it has no handler: the process is ending, the handler stays.
    logging.getLogger().addHandler(logging.NullHandler())
    with contextlib.suppress(Exception):
        proc.stdin.close()  # the JVM's end-of-input: it stops Spark and exits
    try:
        proc.wait(JVM_STOP)
    except Exception:  # still running (a shutdown hook that waits): killed
        with contextlib.suppress(Exception):
            proc.kill()
            proc.wait(JVM_STOP)


def _session(master: str | None, conf: dict[str, str]) -> Any:
    """The Spark session, the SIGINT handler kept. PySpark's own (cancel every job, raise
    KeyboardInterrupt) replaced the command's, and the KeyboardInterrupt came out of the
    cancelled job as ``[SPARK_JOB_CANCELLED]``, exit 1: the command could not tell Ctrl-C
    from a failed query. The JVM goes when the command exits."""
    held = signal.getsignal(signal.SIGINT)
    try:
        return _module().session(master, conf)
    except KeyboardInterrupt:
        # Ctrl-C while the session starts met PySpark's handler: the command's says it (it
        # was the bare "interrupted", without the command or its -o file)
        if callable(held):
            held(signal.SIGINT, None)
        raise
    finally:
        if held is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, held)
