"""Ingest: many logs in, checked, flattened and committed in crash-safe batches.

The coordinator (this process) finds the logs, hashes their bytes (a file already archived, or
already refused, is skipped without being read again) and hands chunks of paths to worker
processes. Each worker checks and flattens its chunk (:mod:`.flatten`) and sends back Arrow
tables. The coordinator drops matches whose content digest is already stored, gathers the rest,
and commits a batch (:func:`.store.commit`) every ``commit_events`` events or
``commit_seconds`` seconds, and at the end. An interrupted run loses at most the batch it was
gathering; running it again finishes the job.
"""

from __future__ import annotations

import gc
import hashlib
import itertools
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from contextlib import contextmanager
from typing import Any

import msgspec
import pyarrow as pa  # type: ignore[import-untyped]

from buraco_log import log
from buraco_log.audit import find_logs
from buraco_log.audit.files import file_problem
from buraco_log.audit.pool import worker_pool, working_on
from buraco_log.errors import LogFormatError

from . import store
from .flatten import Rows, Tail, check_file, error_row
from .schema import ERRORS, storable

HASH_PROGRESS_EVERY = 1000  # files hashed between progress reports while none is checked


class ErrorSummary(msgspec.Struct, frozen=True):
    path: str
    code: str
    rule: str
    message: str
    seq: int | None = None


class StrongerCopy(msgspec.Struct):
    """A copy of a match the archive holds (stored before, or by a batch this run committed
    before it met the copy), met as a duplicate though it holds more after its events: its
    seal, or more signature records. Ingest stores it in place of the archive's copy
    (:mod:`.replace`: the batch that holds that copy is rewritten as a compaction), and
    ``replaced`` names the new batch; with ``replace_stored=False`` it is only named."""

    path: str
    match_id: str
    stronger: list[str]  # "sealed", "signatures"
    integrity: str  # this copy's: sealed or unsealed
    signatures: int  # this copy's signature records
    stored_integrity: str  # the archive's copy's
    stored_signed: bool
    stored_signatures: int | None = None  # None: the archive keeps only ``signed``
    replaced: str | None = None  # the batch that holds this copy now in place of the old


class SharedMatchId(msgspec.Struct):
    """A match this run stored under a match id that another stored match holds too: other
    content (another deal, other moves), so not a copy of it. Both are stored, each with its
    own ``game_id``, and every report counts them as two matches (a game server that reused
    an id, or a disputed version of the match). Named once: against matches stored before,
    and against one of this run with an earlier path, as `audit` names it."""

    path: str  # this run's log, as the archive stores it
    match_id: str
    others: list[str]  # the stored logs of the other matches under that id, by path


class ReusedPath(msgspec.Struct):
    """A match this run stored from a path where an earlier run stored another match, under
    another match id: the log was written over (a server that reuses file names, a copy over
    the wrong file). Both are stored; docs/archive.md says how to keep only the new one."""

    path: str  # this run's log, as the archive stores it
    match_id: str
    earlier: list[str]  # the match ids stored from that path before, sorted


class IngestReport(msgspec.Struct):
    """What one ingest run did. ``--format json`` of ``buraco-log ingest`` prints this."""

    archive: str
    files: int = 0  # log files found
    added: int = 0  # matches stored by this run
    events: int = 0  # events stored by this run
    already_stored: int = 0  # files whose bytes were already archived
    duplicates: int = 0  # logs whose content (head digest) was already archived
    known_errors: int = 0  # files already in the errors table (unread ones: for the same
    # reason), not checked or recorded again
    errors: list[ErrorSummary] = msgspec.field(default_factory=list)  # refused by this run
    batches: list[str] = msgspec.field(default_factory=list)
    recovered: list[str] = msgspec.field(default_factory=list)  # left by an interrupted run
    seconds: float = 0.0
    jobs: int = 1
    interrupted: bool = False
    require_commitment: bool = False  # the archive's setting this run checked with
    cut_short: list[str] = msgspec.field(default_factory=list)  # what left ``recovered``:
    # ingest, compact, drop (store.clean_up), or "ingest or compact" (cut while staging)
    stronger_copies: list[StrongerCopy] = msgspec.field(default_factory=list)  # by path
    shared_match_ids: list[SharedMatchId] = msgspec.field(default_factory=list)  # by path
    reused_paths: list[ReusedPath] = msgspec.field(default_factory=list)  # by path


class Progress(msgspec.Struct):
    """Where an ingest run stands. Files are hashed as the checks need them, so ``files``
    grows during the run; every file found is done when checked or, once hashed, skipped:
    ``done + hashed - files`` of ``found``."""

    files: int  # files to check, among those hashed so far
    done: int  # files checked
    events: int  # events checked
    matches: int  # matches accepted
    errors: int  # refused by this run so far (the report's ``errors``), copies of them too
    elapsed: float
    found: int = 0  # log files found
    hashed: int = 0  # of those, hashed so far (the rest are not yet sorted into new or known)
    # The report's counts of files skipped, so far: the bar and the summary say the same. A
    # copy of a file checked in this run counts with its first once that one's verdict is in.
    already_stored: int = 0
    duplicates: int = 0
    known_errors: int = 0


class ChunkOut(msgspec.Struct):
    parts: dict[tuple[str, str], dict[str, pa.Table]]  # Arrow IPC bytes while packed
    ok: list[tuple[str, str, int, int, bool, Tail]]  # path, digest, game id, events, fresh,
    # what the copy holds after its events
    errors: list[dict[str, Any]]
    events: int
    packed: bool = False

    def pack(self) -> ChunkOut:
        """The tables as Arrow IPC streams, to cross to another process: sent as pickled
        Tables, a chunk of 32 logs added 1,939 instructions an event to the worker's check,
        as IPC 859 (``benchmarks/count_instructions.py --stages transfer-warm --chunk 32``)."""
        if not self.packed:
            self.parts = {k: {name: _ipc_bytes(t) for name, t in tables.items()}
                          for k, tables in self.parts.items()}
            self.packed = True
        return self

    def unpack(self) -> ChunkOut:
        if self.packed:
            self.parts = {k: {name: pa.ipc.open_stream(b).read_all() for name, b in tables.items()}
                          for k, tables in self.parts.items()}
            self.packed = False
        return self


def _ipc_bytes(t: pa.Table) -> pa.Buffer:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, t.schema) as writer:
        writer.write_table(t)
    return sink.getvalue()


@contextmanager
def few_collections() -> Iterator[None]:
    """Run the cyclic garbage collector rarely for a while.

    Checking a log allocates many small objects that live a little (events, rows, memo
    entries) and hold no cycles (the events are not even tracked), so with the default
    thresholds the collector kept sweeping them: 10-16 % of a worker's time, measured with
    ``gc.callbacks``. Reference counting still frees everything else at once.
    """
    old = gc.get_threshold()
    gc.set_threshold(100_000, 50, 100)
    try:
        yield
    finally:
        gc.set_threshold(*old)


def check_chunk(items: Sequence[tuple[str, str, int]], require_commitment: bool = False
                ) -> ChunkOut:
    """Worker: check and flatten ``(path, sha256, size)`` items."""
    with few_collections():
        return _check_chunk(items, require_commitment)


def check_chunk_packed(items: Sequence[tuple[str, str, int]], require_commitment: bool = False
                       ) -> ChunkOut:
    """Worker process: :func:`check_chunk`, its tables packed for the trip back."""
    return check_chunk(items, require_commitment).pack()


def _check_chunk(items: Sequence[tuple[str, str, int]], require_commitment: bool) -> ChunkOut:
    rows: dict[tuple[str, str], Rows] = {}

    def rows_for(preset: str, month: str) -> Rows:
        key = (preset, month)
        r = rows.get(key)
        if r is None:
            r = rows[key] = Rows()
        return r

    ok: list[tuple[str, str, int, int, bool, Tail]] = []
    errors: list[dict[str, Any]] = []
    n_events = 0
    seen: set[str] = set()  # one match twice in a chunk: its rows only once
    for path, sha, size in items:
        with working_on(path):  # a worker killed here names this log
            res = check_file(path, sha, size, rows_for, seen,
                             require_commitment=require_commitment)
        if isinstance(res, dict):
            errors.append(res)
        else:
            ok.append((path, *res))
            n_events += res[2]
    return ChunkOut({k: r.tables() for k, r in rows.items() if r.n_matches}, ok, errors,
                    n_events)


CHANGED = ("the file changed while it was being ingested (its bytes no longer have the hash "
           "taken before the check): run the ingest again once nothing writes to it")


def _changed(paths: Iterable[str], checking: dict[str, str]) -> set[str]:
    """Those of the checked ``paths`` whose bytes no longer have the hash taken before their
    check. That hash keys the matches and errors tables: a log rewritten in between stored
    one file's rows or verdict under another's hash (a good log overwritten while checked
    was refused for ever as "refused before"). Such a log is refused with no hash of its own
    (rule ``archive.file_changed``), so the next ingest checks it again."""
    out: set[str] = set()
    for p in paths:
        sha = checking.pop(p, None)
        if sha is not None and _sha256(p) != sha:
            out.add(p)
    return out


def _sha256(path: str) -> str | None:
    """The file's SHA-256 as :func:`_hash` reads it (never blocking), None if unreadable."""
    try:
        fd = log.open_log_fd(path)
        h = hashlib.sha256()
        with open(fd, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
    except (OSError, LogFormatError):
        return None
    return h.hexdigest()


MAX_LOG_BYTES = 2**31 - 1
"""The most bytes of a file ingest reads as a log: 15 bytes an event, this is a billion
events, and no match has that many. A larger file is refused unread (rule ``log.limit``),
as Spark's ``binaryFile`` cannot read it either."""


def _hash(path: str) -> tuple[str, str, int] | dict[str, Any]:
    """``(absolute path, sha256, size)``, or the errors-table row of a file that cannot be read.

    Only a regular file is opened, and never in a way that blocks: a FIFO, a device (a link
    to ``/dev/zero``), a socket or a directory the walk listed is recorded with its reason
    (rule ``log.filetype``) instead of hanging the run on an open or a read that never ends;
    one of more than :data:`MAX_LOG_BYTES` is refused unread (rule ``log.limit``).
    """
    p = os.path.abspath(path)
    problem = file_problem(p)
    if problem is not None:
        return error_row(p, "", None, "integrity", "log.filetype", problem)
    try:
        fd = log.open_log_fd(p)  # refuses a FIFO or device swapped in since the check above
    except (OSError, LogFormatError) as exc:  # the opener reports OS failures as kind "io"
        reason = exc.message if isinstance(exc, LogFormatError) else exc.strerror or str(exc)
        if getattr(exc, "kind", None) == "filetype":
            return error_row(p, "", None, "integrity", "log.filetype", reason)
        return error_row(p, "", None, "integrity", "log.unreadable",
                         f"cannot read the log: {reason}")
    try:
        length = os.fstat(fd).st_size
    except OSError:
        length = 0
    if length > MAX_LOG_BYTES:  # hashed, then read by the check: a 1 TB file (a sparse
        # one reads as zeros) held the run for an hour, showing nothing
        os.close(fd)
        return error_row(p, "", length, "integrity", "log.limit",
                         f"not read: {length:,} bytes, more than a match log holds "
                         f"(at most {MAX_LOG_BYTES:,}, a billion events)")
    h = hashlib.sha256()
    size = 0
    try:
        with open(fd, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
                size += len(chunk)
    except OSError as exc:
        return error_row(p, "", None, "integrity", "log.unreadable",
                         f"cannot read the log: {exc.strerror or exc}")
    return p, h.hexdigest(), size


class _Batch:
    def __init__(self) -> None:
        self.parts: dict[tuple[str, str], dict[str, list[pa.Table]]] = {}
        self.errors: list[dict[str, Any]] = []
        self.events = 0
        self.matches = 0
        self.started = time.monotonic()

    def forget(self, gid: int) -> None:
        """Drop the rows of match ``gid`` gathered so far (a stronger copy takes its place)."""
        for tables in self.parts.values():
            for name, ts in tables.items():
                tables[name] = [store.drop_games(t, {gid}) for t in ts]

    def add(self, out: ChunkOut, drop: set[int]) -> None:
        for key, tables in out.parts.items():
            dst = self.parts.setdefault(key, {})
            for name, t in tables.items():
                dst.setdefault(name, []).append(store.drop_games(t, drop))
        self.errors += out.errors

    def tables(self) -> dict[tuple[str, str], dict[str, pa.Table]]:
        return {k: {n: pa.concat_tables(ts) for n, ts in v.items()} for k, v in self.parts.items()}

    def error_table(self) -> pa.Table | None:
        if not self.errors:
            return None
        cols: dict[str, list[Any]] = {f.name: [] for f in ERRORS}
        for row in self.errors:
            for f in ERRORS:
                cols[f.name].append(row.get(f.name, 0 if f.name == "ingested_at" else
                                            "" if f.name == "batch" else None))
        for name in ("source_path", "message"):  # a file name that is not UTF-8, in either
            cols[name] = [storable(v) for v in cols[name]]
        return pa.Table.from_pydict(cols, schema=ERRORS)

    def empty(self) -> bool:
        return not self.parts and not self.errors


def _once(paths: list[str]) -> list[str]:
    """``paths`` in order, each file's first name only (by absolute path)."""
    seen: set[str] = set()
    out: list[str] = []
    for p in paths:
        key = os.path.abspath(p)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def ingest(
    sources: Sequence[str | os.PathLike[str]],
    archive: str | os.PathLike[str],
    *,
    jobs: int = 1,
    chunk_size: int = 128,
    commit_events: int = 2_000_000,
    commit_seconds: float = 60.0,
    on_progress: Callable[[Progress], None] | None = None,
    require_commitment: bool | None = None,
    replace_stored: bool = True,
    on_no_pool: Callable[[OSError], None] | None = None,
) -> IngestReport:
    """Check every log under ``sources`` and add the good ones to ``archive``.

    Never stops for a bad log: it lands in the errors table and in ``report.errors``.
    Idempotent (by file hash and by content digest) and incremental. On KeyboardInterrupt the
    matches already checked are committed, and the report says ``interrupted``.

    ``require_commitment`` (None: keep it) sets the archive's setting of that name (kept in
    its ``archive.json``) before the run: while it is on, a match whose deals no commitment
    backs (a committed match stripped of its commitment and reveal, or cut before the reveal)
    is refused into the errors table instead of stored.

    ``replace_stored``: a stronger copy (sealed, or more signature records) of a match
    committed before it is stored in place of the archive's copy (:mod:`.replace`); False
    only names it in ``stronger_copies``.

    ``on_no_pool``: told why, when ``jobs`` worker processes cannot be started (no file
    descriptor left, ``ulimit -n``; no process, ``ulimit -u``): the logs are then checked in
    this process, as with ``jobs=1`` (and ``report.jobs`` says 1).
    """
    t0 = time.monotonic()
    root = store.create_archive(str(archive))
    report = IngestReport(archive=root, jobs=max(1, jobs))
    store.check_writable(root)
    with store.locked(root):
        if require_commitment is not None:
            store.set_setting(root, "require_commitment", require_commitment)
        strict = report.require_commitment = store.settings(root).require_commitment
        # what is stored first: an archive with a damaged record or file is left untouched
        digests, shas, bad, unread_before, match_ids, held_paths = store.known(root)  # unread:
        # by path and reason; match ids and held paths: of the matches stored before
        # files a compact or drop left for readers: it waits a while for a gap in the reads
        report.recovered, report.cut_short = store.clean_up(root, store.WRITER_WAIT)
        # A file named twice (``a.blog a.blog``, or itself and its directory) is one file,
        # not a copy: it counted as a duplicate, and as two of the files found.
        paths = _once(find_logs([str(s) for s in sources]))
        report.files = len(paths)
        # No more workers than a few logs each (as audit): -j 1000 forked 1000 processes for
        # 200 logs, five times slower than two, and as many as asked for any number of logs.
        report.jobs = min(report.jobs, max(1, len(paths) // 4))
        batch = _Batch()
        ids = set(digests.values())
        stored_ids: list[str] = []  # the match ids of the matches this run stores
        stored_paths: list[str] = []  # and their paths
        checking: dict[str, str] = {}  # path -> hash, of the files sent to be checked
        copies: dict[tuple[str, bool], list[str]] = {}  # _copy_key -> later files, unread
        refused: dict[tuple[str, bool], ErrorSummary] = {}  # _copy_key -> the finding
        unreadable: list[dict[str, Any]] = []
        sized: dict[str, tuple[str, int]] = {}  # path -> hash and size: to check it again
        kept: dict[str, _Kept] = {}  # digest -> the copy this run stores
        dupes: list[tuple[str, str, Tail]] = []  # path, digest, tail of copies left out
        flushes = 0  # batches committed so far: a kept copy of this batch can be replaced
        progress = Progress(files=0, done=0, events=0, matches=0, errors=0, elapsed=0.0,
                            found=len(paths))
        judged: set[tuple[str, bool]] = set()  # _copy_key of the files whose verdict is in

        def tally() -> None:
            """The counts of ``report`` into ``progress``, copies with their first's verdict
            (the bar said "2 refused" where the summary said "5 refused now": the copies of a
            refused log were counted only at the end)."""
            copied = [(key in refused, len(paths)) for key, paths in copies.items()
                      if key in judged]
            progress.errors = len(report.errors) + len(unreadable) + sum(
                n for bad_copy, n in copied if bad_copy)
            progress.duplicates = report.duplicates + sum(
                n for bad_copy, n in copied if not bad_copy)
            progress.already_stored = report.already_stored
            progress.known_errors = report.known_errors
            progress.elapsed = time.monotonic() - t0
        # Small inputs still spread over every worker: a few chunks each at least.
        size = max(1, min(chunk_size, len(paths) // (report.jobs * 4)))

        def chunks() -> Iterator[list[tuple[str, str, int]]]:
            """The files to check, hashed as they are needed: the workers start on the first
            chunk at once, and a file already archived (or refused) is skipped unread."""
            seen: set[tuple[str, bool]] = set()
            chunk: list[tuple[str, str, int]] = []
            for path in paths:
                item = _hash(path)
                progress.hashed += 1
                if isinstance(item, dict):
                    if store.drop_recorded([item], unread_before)[1]:  # same path, same reason
                        report.known_errors += 1
                    else:
                        unreadable.append(item)
                        batch.errors.append(item)
                elif (key := _copy_key(item[1], item[0])) in shas:  # as stored, read as then
                    report.already_stored += 1
                elif key in bad:
                    report.known_errors += 1
                elif key in seen:  # counted with the first's verdict
                    copies.setdefault(key, []).append(item[0])
                else:
                    seen.add(key)
                    chunk.append(item)
                    checking[item[0]] = item[1]
                    sized[item[0]] = item[1], item[2]
                    progress.files += 1
                    if len(chunk) == size:
                        yield chunk
                        chunk = []
                if on_progress is not None and progress.hashed % HASH_PROGRESS_EVERY == 0:
                    tally()
                    on_progress(progress)
            if chunk:
                yield chunk

        def take(out: ChunkOut) -> None:
            with _interrupt_after():
                _take(out)

        def _take(out: ChunkOut) -> None:
            drop: set[int] = set()
            changed = _changed([p for p, *_ in out.ok] + [r["source_path"] for r in out.errors],
                               checking)
            if changed:  # the verdict is of bytes no longer there: keep none of it
                out.errors = [r for r in out.errors if r["source_path"] not in changed]
                out.errors += [error_row(p, "", None, "integrity", "archive.file_changed",
                                         CHANGED) for p in sorted(changed)]
            swapped: dict[str, ChunkOut] = {}  # digest -> the rows of its stronger copy
            for _path, digest, gid, n, fresh, tail in out.ok:
                if _path in changed:
                    drop.add(gid)
                    continue
                if not fresh or digest in digests:  # a copy of a match earlier in the same
                    # chunk (no rows of its own), stored before, or by another chunk
                    report.duplicates += 1
                    if fresh:
                        drop.add(gid)
                    had = kept.get(digest)
                    again = _stronger_rows(_path, digest, tail, had, flushes, sized, strict)
                    if had is None or again is None:
                        dupes.append((_path, digest, tail))
                        continue
                    # within this batch: the stronger copy is stored, the other is the duplicate
                    dupes.append((had.path, digest, had.tail))
                    kept[digest] = _Kept(_path, tail, flushes)
                    batch.forget(gid)
                    drop.add(gid)
                    swapped[digest] = again
                    continue
                if gid in ids:  # two digests, one 63-bit id: never seen; refuse, do not mix
                    drop.add(gid)
                    out.errors.append(error_row(_path, "", None, "duplicate", "archive.game_id",
                                                f"game id {gid} is taken by another match"))
                    continue
                digests[digest] = gid
                ids.add(gid)
                stored_ids.append(tail.match_id)
                stored_paths.append(_path)
                kept[digest] = _Kept(_path, tail, flushes)
                report.added += 1
                report.events += n
                batch.events += n
                batch.matches += 1
            batch.add(out, drop)
            for again in swapped.values():
                batch.add(again, set())
            for row in out.errors:
                report.errors.append(ErrorSummary(row["source_path"], row["code"], row["rule"],
                                                  row["message"], row["seq"]))
                if row.get("file_sha256"):  # none when the bytes changed under the check
                    refused[_copy_key(row["file_sha256"], row["source_path"])] = \
                        report.errors[-1]
            judged.update(_copy_key(checking[p], p) for p, *_ in out.ok if p in checking)
            judged.update(_copy_key(checking[r["source_path"]], r["source_path"])
                          for r in out.errors if r["source_path"] in checking)
            progress.done += len(out.ok) + len(out.errors)
            progress.events += out.events
            progress.matches = report.added
            tally()
            if on_progress is not None:
                on_progress(progress)

        def flush(force: bool = False) -> None:
            nonlocal batch, flushes
            if batch.empty():
                return
            if not force and batch.events < commit_events and \
                    time.monotonic() - batch.started < commit_seconds:
                return
            with _interrupt_after():  # the commit, and the batch reset with it, run whole
                record = store.commit(root, store.new_batch_id(), batch.tables(),
                                      batch.error_table())
                if record:
                    report.batches.append(record["batch"])
                batch = _Batch()
                flushes += 1

        try:
            if report.jobs == 1 or len(paths) <= size:
                for chunk in chunks():
                    take(check_chunk(chunk, strict))
                    flush()
            else:
                left = _run_pool(chunks(), report.jobs, take, flush, strict)
                if left is not None:  # no worker could be started: checked here instead
                    exc, rest = left
                    if on_no_pool is not None:
                        on_no_pool(exc)
                    report.jobs = 1
                    for chunk in rest:
                        take(check_chunk(chunk, strict))
                        flush()
        except KeyboardInterrupt:
            report.interrupted = True  # keep what was checked; any other error aborts the batch
        with _interrupt_after(raise_after=False) as caught:
            flush(force=True)  # a Ctrl-C now is held until the commit is whole
        report.interrupted = report.interrupted or bool(caught)
        try:  # what follows reads what is committed: a Ctrl-C cuts it, never the commits
            _after_commit(root, report, strict, replace_stored, copies, refused, dupes, kept,
                          match_ids, stored_ids, held_paths, stored_paths)
        except KeyboardInterrupt:  # it said "nothing was committed" of committed batches
            report.interrupted = True
        for row in unreadable:  # committed in the errors table: named in the summary too
            report.errors.append(ErrorSummary(row["source_path"], row["code"], row["rule"],
                                              row["message"], row["seq"]))
        if on_progress is not None:  # the last word: the summary's counts
            progress.matches, progress.errors = report.added, len(report.errors)
            progress.duplicates, progress.already_stored, progress.known_errors = (
                report.duplicates, report.already_stored, report.known_errors)
            progress.elapsed = time.monotonic() - t0
            on_progress(progress)
    report.seconds = time.monotonic() - t0
    return report


def _after_commit(root: str, report: IngestReport, strict: bool, replace_stored: bool,
                  copies: dict[tuple[str, bool], list[str]],
                  refused: dict[tuple[str, bool], ErrorSummary],
                  dupes: list[tuple[str, str, Tail]], kept: dict[str, _Kept],
                  match_ids: set[str], stored_ids: list[str], held_paths: set[str],
                  stored_paths: list[str]) -> None:
    """An ingest's last steps, once its batches are committed: the copies counted, the
    stronger copies, shared match ids and reused paths named (each read from the committed
    files), the stronger copies stored in place, the ratings stored."""
    _count_copies(report, copies, refused)
    report.stronger_copies = _stronger_copies(root, dupes, kept)
    if match_ids.intersection(stored_ids) or len(set(stored_ids)) < len(stored_ids):
        report.shared_match_ids = shared_match_ids(root, report.batches)  # read only then
    if held_paths.intersection(storable(p) for p in stored_paths):
        report.reused_paths = reused_paths(root, report.batches)  # read only then
    if replace_stored and report.stronger_copies and not report.interrupted:
        _replace(root, report, strict)
    if store.current_ratings(root) is None and store.manifests(root):
        _store_ratings(root)  # derived: cut short, the report computes them when missing


_HELD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # SIGHUP: cli.signals raises it


@contextmanager
def _interrupt_after(raise_after: bool = True) -> Iterator[list[int]]:
    """Ctrl-C (SIGINT) and SIGTERM inside the block are held until the block is done, then
    raised: a batch's commit, and the bookkeeping of a chunk, are never cut in the middle. Cut
    while staging, the checked work of the whole run was lost ("Ctrl-C commits what was already
    checked" did not hold), and cut after a commit but before the batch was reset, the final
    commit would have stored its rows a second time. Only the main thread can hold them.
    Yields the signals caught; with ``raise_after`` false they are only reported there (a
    KeyboardInterrupt out of the block is then one its code raised: a crash, not Ctrl-C), and
    the handlers they were held from still see them (the CLI's SIGTERM handler notes it)."""
    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return
    previous = {sig: signal.signal(sig, lambda signum, _frame: caught.append(signum))
                for sig in _HELD}
    try:
        yield caught
    finally:
        for held, handler in previous.items():
            signal.signal(held, handler)
    for sig in dict.fromkeys(caught):
        handler = previous[signal.Signals(sig)]
        if callable(handler):  # Python's own SIGINT handler raises KeyboardInterrupt
            try:
                handler(sig, None)
            except KeyboardInterrupt:
                if raise_after:
                    raise
        elif handler == signal.SIG_DFL:  # the process was to die of it: it does, now
            os.kill(os.getpid(), sig)


def _copy_key(sha: str, path: str) -> store.FileKey:
    """What makes a file a copy of another, in one run or across runs (:func:`store.known`):
    the same bytes read the same way. The name says how (binary, or JSON Lines): an empty
    ``e.jsonl`` beside an empty ``e.blog`` was refused as "the same bytes as e.blog: file
    header cut short", in binary-log words, and a binary log's bytes named ``.jsonl`` counted
    as a duplicate of the stored match."""
    return sha, log.is_jsonl_name(path)


def _count_copies(report: IngestReport, copies: dict[tuple[str, bool], list[str]],
                  refused: dict[tuple[str, bool], ErrorSummary]) -> None:
    """Files with the bytes of a file checked in the same run, read the same way
    (:func:`_copy_key`): a copy of a refused log is refused too, named with the first one's
    finding (it counted as a duplicate match, so 4,744 broken copies were "duplicates" and
    named nowhere, and the next run counted them as refused); a copy of a stored log is a
    duplicate."""
    for key, paths in copies.items():
        first = refused.get(key)
        if first is None:
            report.duplicates += len(paths)
            continue
        for path in paths:
            report.errors.append(ErrorSummary(path, first.code, first.rule,
                                              f"the same bytes as {first.path}: "
                                              f"{first.message}", first.seq))


class _Kept(msgspec.Struct, frozen=True):
    path: str
    tail: Tail
    batch: int  # the ``flushes`` count when it was gathered: its batch's number in the run


def shared_match_ids(root: str, batches: list[str]) -> list[SharedMatchId]:
    """The matches of ``batches`` (one run's) whose match id another stored match holds (see
    :class:`SharedMatchId`), sorted by path. Read from the committed ``matches`` files, as
    both engines store them: one more read of four columns, only after a run that stored
    something."""
    import pyarrow.compute as pc  # type: ignore[import-untyped]  # here: a query never needs it
    if not batches:
        return []
    files = store.committed_files(root)["matches"]
    if not files:
        return []
    t = store.read_columns(files, ["match_id", "game_id", "source_path", "batch"])
    new = pc.is_in(t.column("batch"), value_set=pa.array(batches, pa.string()))
    ids = pc.unique(pc.filter(t.column("match_id"), new))
    near = t.filter(pc.is_in(t.column("match_id"), value_set=ids))  # this run's ids only
    held: dict[str, list[tuple[int, str, bool]]] = {}  # match id -> game id, path, of run
    for mid, gid, path, b in zip(*(near.column(c).to_pylist() for c in near.column_names),
                                 strict=True):
        held.setdefault(mid, []).append((gid, path, b in batches))
    out: list[SharedMatchId] = []
    for mid, rows in held.items():
        for gid, path, ours in rows:
            others = sorted(p for g, p, o in rows if g != gid and (not o or p < path))
            if ours and others:
                out.append(SharedMatchId(path, mid, others))
    return sorted(out, key=lambda s: s.path)


def reused_paths(root: str, batches: list[str]) -> list[ReusedPath]:
    """The matches of ``batches`` (one run's) stored from a path where a batch before them
    stored a match under another match id (see :class:`ReusedPath`), sorted by path. Read
    from the committed ``matches`` files, only after a run that stored such a path."""
    import pyarrow.compute as pc  # here: a query never needs it
    if not batches:
        return []
    files = store.committed_files(root)["matches"]
    if not files:
        return []
    t = store.read_columns(files, ["match_id", "source_path", "batch"])
    new = pc.is_in(t.column("batch"), value_set=pa.array(batches, pa.string()))
    ours = pc.unique(pc.filter(t.column("source_path"), new))
    near = t.filter(pc.is_in(t.column("source_path"), value_set=ours))
    run: dict[str, list[str]] = {}  # path -> match ids of this run
    before: dict[str, set[str]] = {}  # path -> match ids of earlier batches
    for mid, path, b in zip(*(near.column(c).to_pylist() for c in near.column_names),
                            strict=True):
        if b in batches:
            run.setdefault(path, []).append(mid)
        else:
            before.setdefault(path, set()).add(mid)
    out = [ReusedPath(path, mid, sorted(before[path] - {mid}))
           for path, mids in run.items() if path in before for mid in mids]
    return sorted((r for r in out if r.earlier), key=lambda r: (r.path, r.match_id))


def _stronger_rows(path: str, digest: str, tail: Tail, had: _Kept | None, flushes: int,
                   sized: dict[str, tuple[str, int]], strict: bool) -> ChunkOut | None:
    """The rows of ``path``, a copy of a match this run keeps in the batch it gathers, when it
    ranks above the kept one (:meth:`Tail.rank`): checked again alone (a copy met in the same
    chunk has no rows of its own). None when it is weaker, the kept copy is committed, or the
    file no longer gives that match with those bytes."""
    if had is None or had.batch != flushes or tail.rank() <= had.tail.rank():
        return None
    sha, size = sized[path]
    out = check_chunk([(path, sha, size)], strict)
    if len(out.ok) != 1 or out.ok[0][1] != digest or out.ok[0][5] != tail or \
            _sha256(path) != sha:
        return None
    return out


def _stronger_copies(root: str, dupes: list[tuple[str, str, Tail]], kept: dict[str, _Kept]
                     ) -> list[StrongerCopy]:
    """The copies left out as duplicates that hold more than the archive's copy: the seal, or
    more signature records (against a match stored before, which keeps only ``signed``: a
    signed copy of an unsigned one). Sorted by path, as both engines list them."""
    before = {d for _, d, _ in dupes if d not in kept}
    stored = store.stored_tails(root, before) if before else {}
    out: list[StrongerCopy] = []
    for path, digest, tail in dupes:
        k = kept.get(digest)
        ref: tuple[bool, bool, int | None]
        if k is not None:
            ref = (k.tail.sealed, k.tail.signatures > 0, k.tail.signatures)
        elif digest in stored:
            ref = (stored[digest][1] == "sealed", stored[digest][2], None)
        else:  # refused (a game id taken), or its bytes changed: not in the archive
            continue
        copy = _compare(path, tail, *ref)
        if copy is not None:
            out.append(copy)
    return sorted(out, key=lambda c: c.path)


def _compare(path: str, tail: Tail, sealed: bool, signed: bool, signatures: int | None
             ) -> StrongerCopy | None:
    stronger = []
    if tail.sealed and not sealed:
        stronger.append("sealed")
    if tail.signatures > signatures if signatures is not None else \
            tail.signatures and not signed:  # of a signed match stored before, no count
        stronger.append("signatures")
    if not stronger:
        return None
    return StrongerCopy(path, tail.match_id, stronger,
                        "sealed" if tail.sealed else "unsealed", tail.signatures,
                        "sealed" if sealed else "unsealed", signed, signatures)


def _import_before_fork() -> None:
    """Import here what a worker's first chunk imports on first use: pyarrow.compute, and
    pyarrow's answer to "is pandas here?" at its first ``pa.array`` or ``pa.scalar`` (a
    library caller's pyarrow imports pandas then, 0.25-0.3 s of CPU; the command line's
    answers "no" without it, :mod:`buraco_log.archive.nopandas`). The coordinator needs both
    too; done before the pool forks, the workers inherit them instead of each doing it."""
    import pyarrow.compute  # noqa: F401  # here: a query never needs it

    pa.array([0])


_Chunk = list[tuple[str, str, int]]


def _run_pool(chunks: Iterable[_Chunk], jobs: int,
              take: Callable[[ChunkOut], None], flush: Callable[[], None],
              require_commitment: bool) -> tuple[OSError, Iterable[_Chunk]] | None:
    """Check ``chunks`` in a pool of ``jobs`` workers. None when done; when the workers
    cannot be started (:class:`~buraco_log.audit.pool.NoWorkers`, before any chunk was
    checked), why and the chunks left, for this process to check: it was "DIR: Too many
    open files", exit 2, under a ``ulimit -n`` that ``-j 1`` worked in."""
    from buraco_log.audit.pool import NoWorkers

    # Bounded in flight: a few chunks per worker, so memory stays flat on huge inputs. The
    # workers die with this process, even by SIGKILL (worker_pool): orphans held the lock.
    after = "batches committed before stay; the rest was not committed"
    _import_before_fork()
    chunks = iter(chunks)
    first = next(chunks, None)
    if first is None:
        return None
    pending: set[Future[ChunkOut]] = set()
    try:
        with worker_pool(jobs, "checking logs", after) as pool:
            # the first submit starts every worker: no chunk is checked before it succeeds
            pending.add(pool.submit(check_chunk_packed, first, require_commitment))
            for chunk in chunks:
                pending.add(pool.submit(check_chunk_packed, chunk, require_commitment))
                if len(pending) >= jobs * 3:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in done:
                        take(fut.result().unpack())
                    flush()
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    take(fut.result().unpack())
                flush()
    except NoWorkers as exc:
        if pending:  # a worker started later (a start method that starts them one by one)
            raise
        why = OSError(exc.errno, exc.strerror)  # not its traceback, which holds the pool
    else:
        return None
    gc.collect()  # the half-made pool's pipes: every file after it was "Too many open files"
    return why, itertools.chain([first], chunks)


def _replace(root: str, report: IngestReport, strict: bool) -> None:
    """The stronger copies put in place of the archive's (:func:`.replace.replace_stored`),
    as whole commits: a Ctrl-C meanwhile is held until the one under way is committed."""
    from .replace import replace_stored

    with _interrupt_after(raise_after=False) as caught:
        made = replace_stored(root, report.stronger_copies, strict)
    report.interrupted = report.interrupted or bool(caught)
    merged = {old: new for new, old in ((b, r) for b in made
                                        for r in _compacted(root, b))}
    report.batches = [merged.get(b, b) for b in report.batches]
    report.batches += [b for b in made if b not in report.batches]


def _compacted(root: str, batch: str) -> list[str]:
    return [b for r in store.manifests(root) if r["batch"] == batch
            for b in r.get("compacted", ())]


def _store_ratings(root: str) -> None:
    """The Elo fold is sequential over every match, so ingest does it once for the report."""
    from .elo import leaderboard_rows, ratings_of_rows
    from .keyindex import refresh

    # the key index stored with the new batches (their files read, no other: the writer
    # checked every committed file before its commits; a check again was an lstat and an
    # access of each, 18,000 files at 3,650 nightly batches)
    index = refresh(root, store.manifests(root))
    store.write_ratings(root, ratings_of_rows(leaderboard_rows(root, index)))
