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

from .ingest import ErrorSummary, IngestReport, Progress, SharedMatchId, StrongerCopy, ingest
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
