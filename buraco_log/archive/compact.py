"""Compaction: many small batches merged into few, the same rows in fewer and larger files.

Each ingest commits at least one batch, and a batch writes one file per table and partition.
A site that ingests every hour, or every day for a year, ends with thousands of small files,
and every query opens them all. :func:`compact` merges small batches, oldest first, into
batches of up to ``target_events`` events (the size an ingest commits at most), as one more
crash-safe batch commit:

1. every file of the merged batches is read back against its batch record's SHA-256 (a
   damaged file is refused, never merged into a new file with a fresh fingerprint);
2. the rows are written as a new batch, whose record names the batches it replaces under
   ``"compacted"``. That record is the commit point: from then on every reader of this
   library skips the replaced batches (:func:`buraco_log.archive.store.manifests`), so no
   row is ever seen twice or missed;
3. the replaced batches' records, then their files, are removed (:func:`store.recover`,
   which also finishes this step after a crash, at the next ingest or compact). A file is
   removed only while no query or report reads the archive (:func:`store.reading`): one that
   is still reading when the run ends (after :data:`store.WRITER_WAIT` more seconds) keeps the
   files it may read, and the next ingest or compact removes them.

Rows are unchanged but for ``matches.batch`` and ``errors.batch``, which name the new batch;
``ingested_at`` keeps when each row was first ingested.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from buraco_log.errors import ArchiveError

from . import store
from .schema import PARTITIONED, TABLES

TARGET_EVENTS = 2_000_000
"""Events per compacted batch at most: what one ingest commits at most (``commit_events``)."""


@dataclass
class Merge:
    """One compacted batch: the batches it replaces and their files."""

    batch: str  # the new batch ("" in a dry run)
    replaces: list[str]
    files_before: int
    files_after: int = 0
    rows: dict[str, int] = field(default_factory=dict)


@dataclass
class CompactReport:
    archive: str
    batches_before: int = 0
    batches_after: int = 0
    files_before: int = 0
    files_after: int = 0
    merges: list[Merge] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)  # left by an interrupted run
    dry_run: bool = False
    seconds: float = 0.0
    # small batches found in groups to merge, merged or not: merging a group whose batches
    # hold different partitions makes no fewer files, so it is left as it is
    small: int = 0
    cut_short: list[str] = field(default_factory=list)  # what left ``recovered``
    # replaced files left in place for the queries reading them (the next clean-up's)
    postponed: list[str] = field(default_factory=list)
    # the stored ratings did not cover the committed batches (a batch dropped, an ingest cut
    # before it stored them) and were computed again (in a dry run: would be)
    ratings_refreshed: bool = False


def _files(record: dict[str, Any]) -> list[tuple[str, str]]:
    return [(table, rel) for table, rels in record["files"].items() for rel in rels]


def _committed_on(record: dict[str, Any]) -> date | None:
    try:
        return datetime.fromisoformat(str(record.get("committed_at"))).date()
    except ValueError:
        return None


def plan(records: list[dict[str, Any]], target_events: int = TARGET_EVENTS,
         before: date | None = None) -> list[list[dict[str, Any]]]:
    """Groups of two or more batch records to merge, oldest first. A batch already at half the
    target or more stays as it is, and with ``before`` so does every batch committed on or
    after that day (kept apart so that a recent day can still be dropped and ingested again on
    its own)."""
    groups: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] = []
    events = 0
    for record in records:
        rows = record.get("rows")
        n = rows.get("events", 0) if isinstance(rows, dict) else 0
        n = n if isinstance(n, int) else 0
        day = _committed_on(record)
        if n * 2 >= target_events or (before is not None and (day is None or day >= before)):
            continue
        if current and events + n > target_events:
            groups.append(current)
            current, events = [], 0
        current.append(record)
        events += n
    groups.append(current)
    return [g for g in groups if len(g) >= 2]


def _read(root: str, record: dict[str, Any], table: str, rel: str) -> pa.Table:
    """One committed file, parsed from the very bytes shown to be the committed ones (read
    once: a file changed between its check and its read was merged unchecked, and reading it
    twice cost half of a compaction of thousands of small files)."""
    path = f"{root}/{rel}"
    kept = (record.get("fingerprints") or {}).get(rel)
    try:
        data = _bytes(path, record["batch"])
        if kept is not None and [hashlib.sha256(data).hexdigest(), len(data)] != list(kept):
            raise ArchiveError(
                f"{path}: damaged archive file: its bytes are not those batch "
                f"{record['batch']} committed; compact merges nothing from it (see "
                "`buraco-log verify ARCHIVE`, restore it from a backup) [archive.part_changed]")
        # one thread: parts are small, and a pool started here was torn down at exit while
        # it ran (std::terminate, exit -6, after the error line of a part not read)
        return _conform(pq.ParquetFile(pa.BufferReader(data)).read(use_threads=False), table)
    except (OSError, pa.ArrowException, ValueError) as exc:  # ValueError: a column's type
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else store._line(exc)
        raise ArchiveError(f"{path}: a file of committed batch {record['batch']} cannot be "
                           f"read: {why}") from None


def _bytes(path: str, batch: str) -> bytes:
    """The whole of a committed file, opened only if it is a regular file (a FIFO there would
    hang the read) and not through a link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ArchiveError(f"{path}: a file of committed batch {batch} is a symbolic "
                               "link, not the file its batch committed; compact merges "
                               "nothing from it") from None
        raise
    with open(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise ArchiveError(f"{path}: a file of committed batch {batch} is not a regular "
                               "file; compact merges nothing from it")
        return f.read()


def _conform(t: pa.Table, table: str) -> pa.Table:
    """``t`` in the table's current schema: a file written before a column was added to the
    layout gets that column as nulls, as the views read it."""
    schema = store.stored_schema(table)
    have = set(t.column_names)  # once: the list is built anew at every call
    columns = [t.column(f.name) if f.name in have else pa.nulls(t.num_rows, f.type)
               for f in schema]
    # cast, not assumed: a reader may hand back another physical type (a dictionary, say);
    # a column this file lacks stays NULL, nullable, as the views read it
    out = pa.Table.from_arrays(columns, names=schema.names)
    return out.cast(store.stored_schema(table, out))


def _gather(root: str, group: list[dict[str, Any]]
            ) -> tuple[dict[tuple[str, str], dict[str, pa.Table]], pa.Table | None,
                       dict[str, int]]:
    pieces: dict[tuple[str, str], dict[str, list[pa.Table]]] = {}
    errors: list[pa.Table] = []
    for record in group:
        held = dict.fromkeys(TABLES, 0)
        for table, rel in _files(record):
            t = _read(root, record, table, rel)
            held[table] += t.num_rows
            if table in PARTITIONED:
                _table, preset, month, _name = rel.split("/")
                key = (preset.removeprefix("preset="), month.removeprefix("month="))
                pieces.setdefault(key, {}).setdefault(table, []).append(t)
            else:
                errors.append(t)
        said = _expected([record])
        if said is not None and said != held:  # named by its record: the one edited
            wrong = next(t for t in TABLES if said[t] != held[t])
            raise ArchiveError(
                f"{os.path.join(root, store.BATCHES, record['batch'] + '.json')}: damaged "
                f"batch record: it says its {wrong} files hold {said[wrong]:,} rows, they "
                f"hold {held[wrong]:,}; nothing of batch {record['batch']} was merged (see "
                "`buraco-log verify ARCHIVE`) [archive.record_damaged]")
    parts = {key: {table: _concat(ts) for table, ts in tables.items()}
             for key, tables in pieces.items()}
    counts = {t: 0 for t in TABLES}
    for tables in parts.values():
        for table, t in tables.items():
            counts[table] += t.num_rows
    error_table = _concat(errors) if errors else None
    counts["errors"] = error_table.num_rows if error_table is not None else 0
    return parts, error_table, counts


def _concat(tables: list[pa.Table]) -> pa.Table:
    """One table of same-layout pieces; a column nullable in one (a file older than the
    column) is nullable in all."""
    schema = pa.unify_schemas([t.schema for t in tables])
    return pa.concat_tables([t.cast(schema) for t in tables])


def _expected(group: list[dict[str, Any]]) -> dict[str, int] | None:
    """Rows per table the group's records say they hold (None when one does not say)."""
    out = {t: 0 for t in TABLES}
    for record in group:
        rows = record.get("rows")
        if not isinstance(rows, dict):
            return None
        for t in TABLES:
            n = rows.get(t, 0)
            if not isinstance(n, int):
                return None
            out[t] += n
    return out


def compact(archive: str, *, target_events: int = TARGET_EVENTS, before: date | None = None,
            dry_run: bool = False,
            on_progress: Callable[[int, int], None] | None = None) -> CompactReport:
    """Merge the archive's small batches (see the module docstring) and return what was done.

    Takes the ingest lock, and first cleans up after an interrupted ingest or compact. With
    ``dry_run`` nothing is written: the report says what would be merged.
    ``on_progress(batches_done, batches_total)`` follows the merged batches. A file that is
    missing, damaged or unreadable is an :class:`ArchiveError` naming it; batches merged before
    it stay merged, and nothing of the group it belongs to is."""
    t0 = time.monotonic()
    root = store.check_archive(archive)
    report = CompactReport(archive=archive, dry_run=dry_run)
    store.check_writable(root)  # a dry run too: it takes the lock
    with store.locked(root, None if dry_run else "compact"):
        if not dry_run:
            report.recovered, report.cut_short = store.clean_up(root)
        else:  # what the run itself would refuse, first (it said "would merge", exit 0)
            store.refuse_lost(root, store.orphan_parts(root)[1])
        records = store.manifests(root)
        # every committed file as its record keeps it, merged or not: a damaged archive
        # is refused whole (it said "nothing to compact", exit 0, over a part cut short)
        store.committed_files(root)
        report.batches_before = len(records)
        report.ratings_refreshed = bool(records) and store.current_ratings(root) is None
        report.files_before = sum(len(_files(r)) for r in records)
        groups = plan(records, target_events, before)
        total = report.small = sum(len(g) for g in groups)  # progress: skipped ones done
        done = 0
        if on_progress is not None:
            on_progress(0, total)
        # Ctrl-C: the merges committed stay; the one under way is cleaned up by the next run
        for group in groups:
            # one file per table and partition the group holds rows of
            merge = Merge("", [r["batch"] for r in group], sum(len(_files(r)) for r in group),
                          len({rel.rsplit("/", 1)[0] for r in group for _t, rel in _files(r)}))
            if merge.files_after >= merge.files_before:
                done += len(group)  # batches of different partitions: no file saved
                continue
            if dry_run:
                report.merges.append(merge)
                continue
            parts, errors, counts = _gather(root, group)
            want = _expected(group)
            if want is not None and want != counts:
                raise ArchiveError(f"{root}: batches {merge.replaces[0]}..."
                                   f"{merge.replaces[-1]} hold {counts} rows, their "
                                   f"records say {want}: nothing of them was merged "
                                   "[archive.record_damaged]")
            new = store.commit(root, store.new_batch_id(), parts, errors,
                               compacted=merge.replaces)
            merge.batch, merge.rows = new["batch"], new["rows"]
            report.merges.append(merge)
            store.recover(root)  # the replaced batches' records, then their files
            done += len(group)
            if on_progress is not None:
                on_progress(done, total)
        if not dry_run and store.postponed_parts(root):  # readers still at work
            store.recover(root, wait=store.WRITER_WAIT)
            report.postponed = store.postponed_parts(root)
        # with nothing merged too: a maintenance run leaves the ratings current, or the
        # report folds every match again at each run (a merge alone makes them stale: it
        # renames the batches, so that is no news to say)
        if not dry_run and store.current_ratings(root) is None and store.manifests(root):
            from .ingest import _store_ratings

            _store_ratings(root)
        after = store.manifests(root)
        if dry_run:
            merged = sum(len(m.replaces) for m in report.merges)
            report.batches_after = len(after) - merged + len(report.merges)
            report.files_after = report.files_before - sum(
                m.files_before - m.files_after for m in report.merges)
        else:
            report.batches_after = len(after)
            report.files_after = sum(len(_files(r)) for r in after)
    report.seconds = time.monotonic() - t0
    return report
