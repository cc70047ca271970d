"""The archive: many match logs checked into a Parquet dataset, queried with DuckDB.

Edge module: it imports pyarrow and duckdb, and nothing in the core imports it.

Public API::

    ingest(sources, archive, jobs=1, on_progress=None) -> IngestReport
    connect(archive, sandbox=True, threads=2, memory_limit="1GB") -> duckdb connection with views
    create_views(con, archive)                       views over an archive, on your connection
    query(archive, sql, ...) -> pyarrow.Table        one read-only SELECT, sandboxed
    open_query(archive, sql, ...) -> QueryStream     the same, its result streamed in batches
    report(archive, ...) -> Report                   the canned analyses
    render_html(report) -> str                       one self-contained page
"""

from __future__ import annotations

import importlib
import os
import signal
import threading
from typing import Any


def _import_whole(name: str) -> None:
    """Import a native module with the signals' Python handlers held off until it is done.

    A KeyboardInterrupt (Ctrl-C, or SIGTERM as the command line raises it) that landed inside
    duckdb's module initialisation, in the Python its bindings run there, aborted the process
    (SIGABRT, "Critical nanobind error" and a traceback), made the import fail ("internal
    error: ImportError: Encountered an error while initializing the extension"), or was
    swallowed, and the command ran on to the end. Held, it is sent again once the import is
    whole, to the handler that was there."""
    if threading.current_thread() is not threading.main_thread():
        importlib.import_module(name)
        return
    held: list[int] = []
    previous: dict[int, Any] = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            handler = signal.getsignal(sig)
            if callable(handler):  # a default or ignored one stays as it is
                previous[sig] = handler
                signal.signal(sig, lambda signum, _frame: held.append(signum))
        importlib.import_module(name)
    finally:
        for before, was in previous.items():
            signal.signal(before, was)
        for signum in held[:1]:
            os.kill(os.getpid(), signum)


_import_whole("duckdb")

from .ingest import (  # noqa: E402
    ErrorSummary,
    IngestReport,
    Progress,
    ReusedPath,
    SharedMatchId,
    StrongerCopy,
    ingest,
)
from .report import Report, Section, render_html, report  # noqa: E402
from .schema import ARCHIVE_VERSION, SCHEMAS, TABLES  # noqa: E402
from .views import (  # noqa: E402
    DEFAULT_MEMORY_LIMIT,
    DEFAULT_THREADS,
    QueryStream,
    connect,
    create_views,
    open_query,
    query,
)

__all__ = [
    "ARCHIVE_VERSION",
    "DEFAULT_MEMORY_LIMIT",
    "DEFAULT_THREADS",
    "SCHEMAS",
    "TABLES",
    "ErrorSummary",
    "IngestReport",
    "Progress",
    "QueryStream",
    "Report",
    "ReusedPath",
    "Section",
    "SharedMatchId",
    "StrongerCopy",
    "connect",
    "create_views",
    "ingest",
    "open_query",
    "query",
    "render_html",
    "report",
]
