"""Match pages for the matches an archive report names, written beside the report.

The report's sections are plain rows; any section with a ``source_path`` column names matches
by the log they were ingested from. Each log still at its recorded path gets its replay page;
the report links to it. Stdlib only here: the archive (duckdb) stays on its side of the edge.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from buraco_log.errors import BuracoLogError
from buraco_log.view.page import Page


class Rows(Protocol):
    columns: list[str]
    rows: list[list[Any]]


def page_name(source_path: str, taken: set[str]) -> str:
    """A file name for the page of the log at ``source_path``: the log's name, made safe."""
    name = Path(source_path).name
    for suffix in (".jsonl", ".blog"):
        name = name.removesuffix(suffix)
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", name) or "match"
    name = f"{stem}.html"
    n = 1
    while name in taken:
        n += 1
        name = f"{stem}-{n}.html"
    taken.add(name)
    return name


def match_pages(sections: Iterable[Rows], out_dir: str | os.PathLike[str]) -> dict[str, str]:
    """Write the page of every match the sections name whose log is still at its recorded
    path; return ``{source_path: page file name}`` (relative to ``out_dir``) for the links."""
    from buraco_log.view import page_for_log, write_page

    paths: list[str] = []
    for s in sections:
        if "source_path" in s.columns:
            i = s.columns.index("source_path")
            paths.extend(str(r[i]) for r in s.rows if r[i] and str(r[i]) not in paths)
    out: dict[str, str] = {}
    taken: set[str] = set()
    for p in paths:
        if not os.path.isfile(p):
            continue  # moved or deleted since the ingest: the report names it without a link
        try:
            page: Page = page_for_log(p)
        except BuracoLogError:
            continue
        name = page_name(p, taken)
        write_page(Path(out_dir) / name, page.html)
        out[p] = name
    return out


def linked(columns: Sequence[str], row: Sequence[Any], links: dict[str, str]) -> str | None:
    """The page a report row links to, if it names a match whose page was written."""
    if "source_path" not in columns:
        return None
    return links.get(str(row[list(columns).index("source_path")]))
