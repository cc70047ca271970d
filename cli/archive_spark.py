"""The ``--engine spark`` side of ``ingest``, ``query`` and ``report``: parse the Spark options
and call :mod:`buraco_log.archive.spark` (imported only here, only when asked for)."""

from __future__ import annotations

import os
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


def _module() -> Any:
    from buraco_log.archive import spark

    return spark


def ingest(sources: list[str], root: str, master: str | None, conf: dict[str, str],
           require_commitment: bool | None) -> Any:
    return _module().ingest(sources, root, master=master, conf=conf,
                            require_commitment=require_commitment)


class TableStream:
    """A query's Arrow table in the shape of :class:`buraco_log.archive.QueryStream`."""

    def __init__(self, table: Any) -> None:
        self.schema = table.schema
        self._table = table

    def __iter__(self) -> Iterator[Any]:
        return iter(self._table.to_batches(max_chunksize=65_536))


def query(root: str, sql: str, master: str | None, conf: dict[str, str],
          timeout: float) -> TableStream:
    """The checked query on Spark SQL; ``timeout`` seconds (0: none) cancel its jobs."""
    engine = _module()
    spark = engine.session(master, conf)
    timer = None
    if timeout:
        timer = threading.Timer(timeout, spark.sparkContext.cancelAllJobs)
        timer.daemon = True
        timer.start()
    try:
        return TableStream(engine.query(root, sql, spark=spark))
    except engine.ArchiveError as exc:
        if timer is not None and not timer.is_alive():
            raise engine.ArchiveError(f"query: stopped after the {timeout:g} s timeout "
                                      "(--timeout)") from exc
        raise
    finally:
        if timer is not None:
            timer.cancel()


def report(root: str, top: int, master: str | None, conf: dict[str, str]) -> Any:
    return _module().report(root, top=top, master=master, conf=conf)
