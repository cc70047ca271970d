"""The archive: many match logs checked into a Parquet dataset, queried with DuckDB.

Edge module: it imports pyarrow and duckdb, and nothing in the core imports it. Each name
below loads its own module when first asked for, so that a command loads only what it uses:
`verify ARCHIVE` and `compact` no DuckDB, `query` no ingest (duckdb, the whole package and its
worker pool were imported by every archive command's start: 0.1-0.2 s of CPU).

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
import sys
import threading
import types
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


# Each public name and the module it comes from.
_HOMES = {
    **dict.fromkeys(("ErrorSummary", "IngestReport", "Progress", "ReusedPath", "SharedMatchId",
                     "StrongerCopy", "ingest"), "ingest"),
    **dict.fromkeys(("Report", "Section", "render_html", "report"), "report"),
    **dict.fromkeys(("ARCHIVE_VERSION", "SCHEMAS", "TABLES"), "schema"),
    **dict.fromkeys(("DEFAULT_MEMORY_LIMIT", "DEFAULT_THREADS", "QueryStream", "connect",
                     "create_views", "open_query", "query"), "views"),
}


class _Package(types.ModuleType):
    """The package, whose ``ingest`` and ``report`` stay the functions: the import system
    binds a submodule to its package's name as it loads it, and the modules of these two names
    load later now, whenever something imports them (the package imported them all first)."""

    def __setattr__(self, name: str, value: object) -> None:
        if name in ("ingest", "report") and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

# mypy reads any name TYPE_CHECKING as true (as buraco_log/__init__.py does)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from .ingest import (
        ErrorSummary,
        IngestReport,
        Progress,
        ReusedPath,
        SharedMatchId,
        StrongerCopy,
        ingest,
    )
    from .report import Report, Section, render_html, report
    from .schema import ARCHIVE_VERSION, SCHEMAS, TABLES
    from .views import (
        DEFAULT_MEMORY_LIMIT,
        DEFAULT_THREADS,
        QueryStream,
        connect,
        create_views,
        open_query,
        query,
    )
else:

    def __getattr__(name: str) -> object:
        home = _HOMES.get(name)
        if home is None:  # a submodule (store, fixity, ...): loaded as `import` would
            if name.startswith("_"):
                raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
            try:
                return importlib.import_module(f"{__name__}.{name}")
            except ModuleNotFoundError as e:
                if e.name != f"{__name__}.{name}":
                    raise
                raise AttributeError(
                    f"module {__name__!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})


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
