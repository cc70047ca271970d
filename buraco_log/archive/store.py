"""The archive directory: layout, the ingest lock, crash-safe batch commits, recovery.

Layout (see docs/archive.md)::

    archive.json                         marker: layout version
    <table>/preset=<p>/month=<m>/part-<batch>.parquet    (errors/part-<batch>.parquet)
    _batches/<batch>.json                the commit record of a batch: its files, counts and
                                         each file's SHA-256 and size
    _batches/<name>.intent               while a commit or a drop is under way: the batches
                                         whose part files it may leave without a record
    .staging/<batch>/...                 files being written (never read); .kind, written
                                         first, says the run's kind (ingest, compact)
    .lock                                held by the one running ingest
    .readers                             held shared by each running query, report, verify
    _batches/ (the directory)            the readers' gate: a writer waiting for the readers
                                         to go holds it, new readers wait there (flock)
    _batches/postponed.intent            part files left in place for readers (see recover)
    _ratings/, _index/                   derived: the ratings, and what ingest knows of the
                                         committed batches (keyindex.py); rebuilt when stale

A batch is committed in three steps: every file is written and fsynced under ``.staging``,
renamed into its partition (an atomic rename: a file is never visible half-written), and then
the batch record is written (temp file + rename). The record is the commit point: readers of
this library see only files listed in records, and the next ingest deletes files of batches that
have no record (a crash between the renames and the record) before it does anything else.

Only files that some run is known to have left are deleted so: a commit writes an intent
record (``_batches/<batch>.intent``, fsynced) before its first rename, a drop one naming the
batches it takes out before it unlinks their records, and a compacted batch's record names the
batches it replaced. A part file of a batch that has no record and that nothing names (its
record deleted by hand, say) is refused, never deleted (:func:`recover`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import math
import os
import re
import secrets
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any, Final, TypeVar

import msgspec
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from buraco_log.audit.files import walk
from buraco_log.errors import ArchiveError
from buraco_log.log import fsync_directory

from .schema import ARCHIVE_VERSION, PARTITIONED, SCHEMAS, SORT_KEYS, TABLES, storable

MARKER = "archive.json"
BATCHES = "_batches"
RATINGS = "_ratings"  # derived: the Elo fold of the committed batches (see write_ratings)
KEY_INDEX = "_index"  # derived: what ingest knows of the committed batches (keyindex.py)
STAGING = ".staging"
LOCK = ".lock"

# Column encodings chosen for size (bytes per event is a goal): the seq counter delta-packs
# to a few bits a row; the cards byte strings keep their bytes together (lengths delta-packed
# apart), so zstd sees the card codes as one byte stream; every other column uses a
# dictionary; all zstd. Every Parquet reader knows these encodings (format 2.x).
_ENCODING: dict[str, dict[str, str]] = {
    "events": {"seq": "DELTA_BINARY_PACKED", "cards": "DELTA_LENGTH_BYTE_ARRAY"},
}
ZSTD_LEVEL = 9
# The events' card bytes are half the archive: a slower zstd level pays there (about 4 % of
# the events table for 0.1 us an event of writing), nowhere else.
_LEVEL: dict[str, dict[str, int]] = {
    "events": {"cards": 15},
}
ROW_GROUP = 1 << 20
# Committed files are never written again (a new batch adds files; recovery unlinks them), so
# they are made read-only: a query that got a write past the sandbox still cannot change one.
READ_ONLY = 0o444


def _fsync_dir(path: str) -> None:
    fsync_directory(path)  # a name of its own: a test hook counts a commit's renames by it


def makedirs_durable(path: str) -> None:
    """``os.makedirs(path, exist_ok=True)`` whose new directories survive a power loss: the
    parent of each one made is fsynced (a file renamed into a directory whose own name was never
    made durable is lost with it, though its record, the commit point, is kept)."""
    made = []
    d = path
    while d and not os.path.isdir(d):
        made.append(d)
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    os.makedirs(path, exist_ok=True)
    for d in reversed(made):  # (not through _fsync_dir: a test hook counts a commit's renames)
        fsync_directory(os.path.dirname(d) or ".")


MAX_JSON = 64 << 20  # a record lists one batch's files: far below this


def read_json(path: str, what: str) -> Any:
    """The JSON in the archive's file ``path`` (``what`` it is, for the error), or one
    :class:`ArchiveError` naming it. Opened without blocking and only if it is a regular file
    (a FIFO there hung every command), and at most :data:`MAX_JSON` bytes of it."""
    try:  # not through a link: a record linking out of the archive was read where it led
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError as exc:
        if os.path.islink(path):
            raise ArchiveError(f"{path}: symbolic links are not allowed inside an archive "
                               f"(the {what} is one)") from None
        raise ArchiveError(f"{path}: unreadable {what}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ArchiveError(f"{path}: the {what} is not a regular file")
        # read(n) reserves n bytes first: MAX_JSON + 1 each time was 64 MiB for a record of
        # a few hundred bytes (a query near its memory bound failed on it with MemoryError)
        with open(fd, "rb", closefd=False) as f:
            data = f.read(min(st.st_size, MAX_JSON) + 1)
    except OSError as exc:
        raise ArchiveError(f"{path}: unreadable {what}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_JSON:
        raise ArchiveError(f"{path}: the {what} is larger than {MAX_JSON >> 20} MiB")
    try:
        return json.loads(data.decode("utf-8"))
    except ValueError as exc:  # not UTF-8, or not JSON
        raise ArchiveError(f"{path}: unreadable {what}: {exc}") from None


class UnreadableLayout(ArchiveError):
    """An archive of a layout version this buraco_log does not read (an older one to upgrade,
    or a newer one's): it cannot be read at all, as a log of a newer format version cannot, so
    the CLI exits 2 for it as for that log (it exited 1, the status of a finding)."""

    exit_status = 2


class NotAnArchive(ArchiveError):
    """The directory named as an archive is none (no ``archive.json``, or no directory at
    all), or one an ingest will not make an archive of (not empty): the user's slip, not a
    finding, so the CLI exits 2 as for a path that is not a log. ``report DIR`` and ``query``
    of a directory of logs exited 1 where ``report FILE`` exited 2, and ``verify DIR`` 2."""

    exit_status = 2


def is_archive(root: str) -> bool:
    return os.path.isfile(os.path.join(root, MARKER))


def _refuse_odd_marker(root: str, shown: str) -> None:
    """An ``archive.json`` that is there but no regular file (a FIFO, a directory, a link to
    nothing) is named as such: it was "not an archive (no archive.json ...)", and ingest said
    the directory was not empty and not an archive."""
    marker = os.path.join(root, MARKER)
    if os.path.lexists(marker) and not os.path.isfile(marker):
        raise ArchiveError(f"{os.path.join(shown, MARKER)}: the archive's marker is not a "
                           "regular file; restore it from a backup")


def _refuse_undecodable(real: str, shown: str) -> None:
    """An archive whose path is not UTF-8 text (a byte Python holds as a lone surrogate) is
    refused in one line: Arrow cannot write a file there nor DuckDB read one, and ingest
    failed with "internal error: UnicodeEncodeError", a staged batch left behind."""
    try:
        real.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = ord(real[exc.start])
        what = f"byte 0x{bad - 0xDC00:02x}" if 0xDC80 <= bad <= 0xDCFF else f"U+{bad:04X}"
        raise ArchiveError(f"{shown}: the archive's path is not UTF-8 text ({what}), where "
                           "Arrow and DuckDB cannot open files: rename it") from None


def check_archive(root: str) -> str:
    """The absolute, symlink-free path of an existing archive, or :class:`ArchiveError`."""
    real = os.path.realpath(root)
    if not os.path.isdir(real):
        raise NotAnArchive(f"{root}: no such archive directory")
    _refuse_undecodable(real, root)
    _refuse_odd_marker(real, root)
    if not is_archive(real):
        raise NotAnArchive(f"{root}: not an archive (no {MARKER}; create one with "
                           "`buraco-log ingest ... --archive DIR`)")
    meta = _marker(real, shown=os.path.join(root, MARKER))
    version = meta.get("version")
    # an integer: 2.0 and true are no layout versions (true == 1 and 2.0 == 2 in Python)
    if type(version) is not int or version != ARCHIVE_VERSION:
        older = type(version) is int and version < ARCHIVE_VERSION
        hint = ("upgrade it by ingesting its logs into a new archive (docs/archive.md, "
                "\"Upgrading\", says how to list them); nothing was changed" if older else
                "use the buraco_log that wrote it (a newer one); nothing was changed")
        shown = repr(version) if isinstance(version, str) else json.dumps(version)
        raise UnreadableLayout(f"{root}: archive layout version {shown}, this buraco_log reads "
                               f"version {ARCHIVE_VERSION} only: {hint} [archive.layout]")
    return real


class Settings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An archive's own settings, kept under ``"settings"`` in its ``archive.json``.

    ``require_commitment``: the same setting as the audit's (docs/audit-settings.md), for an
    archive of a site that commits its deals: while on, ingest refuses a match whose deals no
    commitment backs. Set with ``buraco-log ingest --require-commitment`` (or ``--no-...``).
    """

    require_commitment: bool = False


def _marker(root: str, shown: str | None = None) -> dict[str, Any]:
    shown = shown or os.path.join(root, MARKER)
    try:
        meta = read_json(os.path.join(root, MARKER), "archive marker")
    except ArchiveError as exc:  # named as the caller gave the archive
        message = str(exc).replace(os.path.join(root, MARKER), shown, 1)
        if isinstance(exc.__context__, ValueError):  # bytes there, but not JSON
            message += MARKER_ADVICE
        raise ArchiveError(message) from None
    if not isinstance(meta, dict):
        raise ArchiveError(f"{shown}: the archive marker is not a JSON object{MARKER_ADVICE}")
    return meta


MARKER_ADVICE: Final = (f"; restore it from a backup, or write it again as {{\"format\": "
                        f"\"buraco_log archive\", \"version\": {ARCHIVE_VERSION}}} (with any "
                        "\"settings\" it held); the data files are untouched")
"""What to do with a damaged ``archive.json``: only the marker is lost, never the data."""


def settings(root: str) -> Settings:
    """The settings of the archive at ``root`` (checked), defaults for any not set."""
    raw = _marker(root).get("settings", {})
    try:
        return msgspec.convert(raw, Settings)
    except msgspec.ValidationError as exc:
        raise ArchiveError(f"{os.path.join(root, MARKER)}: bad archive settings: {exc}"
                           ) from None


def set_setting(root: str, name: str, value: bool) -> None:
    """Change one setting (call with the ingest lock held): the marker is rewritten
    atomically, so a reader sees the old settings or the new ones."""
    if name not in Settings.__struct_fields__:
        raise ArchiveError(f"no archive setting {name!r} (known: "
                           f"{', '.join(Settings.__struct_fields__)})")
    meta = _marker(root)
    current = meta.get("settings", {})
    if not isinstance(current, dict):
        raise ArchiveError(f"{os.path.join(root, MARKER)}: bad archive settings: not an object")
    if current.get(name) == value:
        return
    meta["settings"] = {**current, name: value}
    _atomic_json(os.path.join(root, MARKER), meta)


def create_archive(root: str) -> str:
    """Create (or open) an archive directory; refuses a non-empty directory that is not one."""
    if os.path.exists(root) and not os.path.isdir(root):
        raise NotAnArchive(f"{root}: is a file, not an archive directory")
    if os.path.islink(root) and not os.path.exists(root):  # makedirs: "File exists"
        raise NotAnArchive(f"{root}: a symbolic link that leads nowhere (to a missing path, "
                           "or a loop of links), not an archive directory")
    _refuse_undecodable(os.path.realpath(root), root)  # before anything is made there
    if not is_archive(os.path.realpath(root)):
        _refuse_nested(root)
    makedirs_durable(root)
    real = os.path.realpath(root)
    _refuse_odd_marker(real, root)
    if is_archive(real):
        return check_archive(real)
    # A marker's temporary file is what a creation killed before its rename leaves: without
    # this, that directory was refused for ever as "not empty and not an archive".
    if any(not n.startswith(".") and not n.startswith(MARKER + ".tmp-")
           for n in os.listdir(real)) and not is_archive(real):
        # (the marker is checked again: another ingest creating this archive at the same
        # time writes it before anything else, and was taken for a stranger's directory)
        raise NotAnArchive(f"{root}: exists, is not empty and is not an archive; refusing to "
                           "write into it")
    # under the lock, shared with other creators: another ingest's clean-up (it found the
    # marker written, and took the lock) deleted this one's temporary marker as a creation's
    # leftover, and this run failed with "archive.json.tmp-...: No such file or directory"
    with locked(real, None, shared=True):
        _new_json(os.path.join(real, MARKER), {"format": "buraco_log archive",
                                               "version": ARCHIVE_VERSION})
        # from the start: a commit cut short (by either engine) never leaves parts without it
        makedirs_durable(os.path.join(real, BATCHES))
    return check_archive(real)


def _refuse_nested(root: str) -> None:
    """A new archive inside another one is refused: made in a table's directory, its part
    files were the outer archive's parts of no record (deleted as leftovers by the outer's
    next clean-up, before intent records; refused since)."""
    real = os.path.realpath(root)
    for parent in _parents(real + os.sep + "x")[:-1] if real != os.sep else []:
        if is_archive(parent):
            raise ArchiveError(f"{root}: inside the archive {parent}; an archive cannot be "
                               "made inside another: choose a directory outside it")


def _atomic_json(path: str, data: Any) -> None:
    """Write ``path`` whole or not at all (temporary file, fsync, rename)."""
    _write_json(path, data, os.replace)


def _new_json(path: str, data: Any) -> None:
    """Write ``path`` whole or not at all, only if no ``path`` exists yet: one that does
    (another process's) is left as it is. A hard link fails when the name is taken, where a
    rename replaces it: two ingests creating one archive at once each wrote the marker, and
    the second could undo a setting the first had already stored in it. A file system
    without hard links falls back to the rename."""

    def link(tmp: str, final: str) -> None:
        try:
            os.link(tmp, final)
        except FileExistsError:
            pass
        except OSError:  # no hard links here (EPERM, ENOTSUP): the rename is all there is
            if not os.path.exists(final):
                os.replace(tmp, final)
                return
        os.unlink(tmp)

    _write_json(path, data, link)


def _write_json(path: str, data: Any, place: Callable[[str, str], None]) -> None:
    tmp = f"{path}.tmp-{secrets.token_hex(4)}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, sort_keys=True)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        place(tmp, path)
    except BaseException:  # a full disk: no temporary left to hold the space
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(os.path.dirname(path))


_HELD: set[int] = set()  # descriptors of the locks this process holds


def _forget_locks() -> None:
    """In a forked child (an ingest's worker): close the copies of the lock descriptors. A
    ``flock`` belongs to the open file, which a fork shares, so a worker that outlived a
    killed ingest held the lock, and every later ingest was refused until it ended."""
    for fd in _HELD:
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()


os.register_at_fork(after_in_child=_forget_locks)


def check_writable(root: str) -> None:
    """Refuse, in one line naming it, an archive whose directories this process may not
    write (a read-only mount, another user's archive): ingest and compact may write files in
    any of them (the lock, staging, records, partitions, the clean-up). Before: the first clean-up
    step failed with "ARCHIVE/.staging: Permission denied", exit 2, as if the user had
    mistyped a path. Directories only, not following links (query refuses those)."""
    for dirpath, dirs, _names in walk(root):
        if not os.access(dirpath, os.W_OK | os.X_OK):
            why = "a read-only file system" if _read_only_fs(dirpath) else "permission denied"
            where = "the archive" if dirpath == root else "a directory of the archive"
            raise ArchiveError(f"{dirpath}: {where} cannot be written by this user ({why}): "
                               "ingest and compact may write in any directory of it; "
                               "query, report and verify only read it")
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(dirpath, d))]


def _read_only_fs(path: str) -> bool:
    with contextlib.suppress(OSError):
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    return False


@contextlib.contextmanager
def locked(root: str, holder: str | None = "ingest", *, shared: bool = False
           ) -> Iterator[None]:
    """Hold the archive's ingest lock (one writer at a time; readers never wait). ``holder``
    ("ingest", "compact", "drop") is written into the lock file with the process id while it
    is held, so a writer refused names what holds it (a compact was called "another
    ingest"); None writes nothing (a dry run). ``shared``: held with other sharers, never
    with a writer (ingests creating one archive at once)."""
    path = os.path.join(root, LOCK)
    try:  # not through a link: a .lock linking out of the archive created the file it named
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
                     | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        if os.path.islink(path):
            raise ArchiveError(f"{path}: symbolic links are not allowed inside an archive"
                               ) from None
        raise ArchiveError(f"{path}: cannot open the ingest lock: {exc.strerror or exc}"
                           ) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ArchiveError(f"{path}: the ingest lock is not a regular file")
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ArchiveError(f"{root}: another {_lock_holder(fd)}, holding its lock file "
                               f"{LOCK}: one writer at a time, run it again once that one "
                               "ends [archive.locked]") from None
        _note_holder(fd, holder)
        if holder:  # a writer's run: the readers' lock is there before anything is removed
            made = _open_readers(root, writer=True)
            if made is not None:
                os.close(made)
        _HELD.add(fd)
        try:
            yield
        finally:
            _HELD.discard(fd)
            _note_holder(fd, None if holder is None else "")
    finally:
        os.close(fd)


def _note_holder(fd: int, holder: str | None) -> None:
    """Write ``holder`` and this process's id into the held lock file ("" clears it, None
    leaves it be). Only a name for another writer's message: a failure is never an error."""
    if holder is None:
        return
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        if holder:
            os.pwrite(fd, f"{holder} {os.getpid()}\n".encode(), 0)


def _lock_holder(fd: int) -> str:
    """What holds the lock ("compact is running on this archive (process 41)"): as the lock
    file names it, or, where it names none (a dry run, ingests creating the archive, a lock
    taken an instant ago, an older version), both writers and the process the system says
    holds it (:func:`_flock_holders`; it was no process at all)."""
    with contextlib.suppress(OSError, UnicodeDecodeError):
        word, _, pid = os.pread(fd, 64, 0).decode().strip().partition(" ")
        if word in LOCK_HOLDERS and pid.isdigit():
            return f"{LOCK_HOLDERS[word]} is running on this archive (process {pid})"
    held = {pid for pid, _ in _flock_holders(os.fstat(fd))}
    pids = sorted(held - {os.getpid()} or held)  # another's first: this one may hold it too
    said = f" (process {', '.join(map(str, pids))})" if pids else ""
    return f"ingest or compact is running on this archive{said}"


def _flock_holders(st: os.stat_result) -> list[tuple[int, bool]]:
    """The processes that hold an ``flock`` on the file ``st`` is of, and whether each holds
    it alone, as Linux lists them (``/proc/locks``); none where it cannot be read. Only read:
    a reader that took the lock to see, even for an instant, had a writer starting then
    refused."""
    dev = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    out: list[tuple[int, bool]] = []
    with contextlib.suppress(OSError, ValueError), \
            open("/proc/locks", encoding="ascii", errors="replace") as f:
        for line in f:
            words = line.split()
            # "1: FLOCK  ADVISORY  WRITE 41 fe:00:2376718 0 EOF"; "1: -> FLOCK ..." waits
            if len(words) >= 6 and words[1] == "FLOCK" and words[5] == dev:
                out.append((int(words[4]), words[3] == "WRITE"))
    return out


def running_writer(root: str) -> str | None:
    """The writer at work on the archive now, in words ("ingest (process 41)"), or None when
    none holds its lock. The lock is only looked at (:func:`_flock_holders`), never taken;
    where the system does not list locks, the process the lock file names, if it runs."""
    path = os.path.join(root, LOCK)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        holders = [pid for pid, alone in _flock_holders(st) if alone]
        word, pid = "", ""
        with contextlib.suppress(OSError, UnicodeDecodeError):
            word, _, pid = os.pread(fd, 64, 0).decode().strip().partition(" ")
    finally:
        os.close(fd)
    named = int(pid) if pid.isdigit() and word in LOCK_HOLDERS else None
    if holders:
        return (f"{LOCK_HOLDERS[word]} (process {named})" if named in holders
                else f"ingest or compact (process {holders[0]})")
    if named is None or os.path.exists("/proc/locks"):
        return None
    try:  # no list of locks: the process the lock file names, while it runs
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return None
    except OSError:
        pass
    return f"{LOCK_HOLDERS[word]} (process {named})"


LOCK_HOLDERS: Final = {"ingest": "ingest", "compact": "compact", "drop": "drop of batches"}
"""What may hold the archive's lock, as the lock file names it, and in words."""


READERS: Final = ".readers"
"""The readers' lock file. ``query``, ``report`` and ``verify`` hold it shared while they read
(:func:`reading`); a writer removes the part files of a batch that was committed (replaced by
a compaction, or dropped) only while it holds it alone (:func:`recover`). Without it, a query
whose files a concurrent ``compact`` removed after its first rows stopped ("run it again")."""

READER_WAIT = 2.0
"""Seconds a reader waits at most for the readers' lock: a writer holds it alone only while
it unlinks files. Past it (a writer stopped by a signal, say) the reader reads unlocked."""

WRITER_WAIT = 5.0
"""Seconds compact and a drop wait at their end for readers still reading files they would
remove (:func:`recover`); what is still read then is left for the next clean-up."""

LOCK_POLL = 0.005  # seconds between tries of a lock that is not waited on by blocking


def _open_readers(root: str, *, writer: bool) -> int | None:
    """A descriptor of the readers' lock file, or None where a reader cannot open it (none
    there yet, on an archive no writer of this version has written; a file of another user
    it may not read). A writer makes it when missing (mode 0644: the users who read the
    archive lock it too); a reader never writes in the archive. A link or a file that is not
    regular is None for a reader (query and report refuse a link themselves) and an
    :class:`ArchiveError` for a writer."""
    path = os.path.join(root, READERS)
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        try:
            fd = os.open(path, flags)
        except FileNotFoundError:
            if not writer:
                return None
            fd = os.open(path, flags | os.O_CREAT, 0o644)
            with contextlib.suppress(OSError):  # a umask of 077 kept other readers out
                os.fchmod(fd, 0o644)
    except OSError as exc:
        if not writer:
            return None
        if os.path.islink(path):
            raise ArchiveError(f"{path}: symbolic links are not allowed inside an archive"
                               ) from None
        raise ArchiveError(f"{path}: cannot open the readers' lock: {exc.strerror or exc}"
                           ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        if writer:
            raise ArchiveError(f"{path}: the readers' lock is not a regular file")
        return None
    return fd


WAIT_SAID = 2.0
"""Seconds a process waits for another's hold on the readers' lock or gate before it says so
(:data:`on_wait`): a query held at the gate for 8 s, or a compact waiting 5 s for the
queries still reading, looked hung and said nothing of what it waited for."""

on_wait: Callable[[str], None] | None = None
"""Where such a wait is said, once, in one line naming the lock and the processes holding it
(the command line sets it: a note on stderr); None: it is not said."""


def _flock_within(fd: int, how: int, seconds: float,
                  waiting: Callable[[], str] | None = None) -> bool:
    """``flock(fd, how)``, tried until it is had or ``seconds`` have passed. ``waiting``:
    what is waited for, in words, said through :data:`on_wait` after :data:`WAIT_SAID`."""
    start = time.monotonic()
    deadline = start + seconds
    said = waiting is None
    while True:
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            now = time.monotonic()
            if now >= deadline:
                return False
            if not said and now - start >= WAIT_SAID:
                said = True
                hook = on_wait
                if hook is not None and waiting is not None:
                    with contextlib.suppress(Exception):  # only words: never the wait's end
                        hook(waiting())
            time.sleep(LOCK_POLL)


def _holders(fd: int) -> str:
    """The other processes holding the lock on ``fd``: "process 41", "processes 41, 52"."""
    with contextlib.suppress(OSError):
        pids = sorted({pid for pid, _ in _flock_holders(os.fstat(fd))} - {os.getpid()})
        if pids:
            return f"process{'es' if len(pids) > 1 else ''} {', '.join(map(str, pids))}"
    return "another process"


def _writer_waited(root: str, fd: int, held: str) -> Callable[[], str]:
    """What a reader waits for at the gate or the readers' lock, in words."""
    def words() -> str:
        writer = running_writer(root) or f"compact or drop ({_holders(fd)})"
        return (f"{root}: waiting for the {writer} to remove the files it replaced: it holds "
                f"{held}; a reader waits at most {GATE_WAIT:g} s")
    return words


@contextlib.contextmanager
def reading(root: str, within: float | None = None) -> Iterator[bool]:
    """Hold the readers' lock, shared, while the block reads the archive: no writer removes a
    file of a committed batch meanwhile (compact and drop leave it for later, see
    :func:`recover`). Yields whether it is held: not on an archive that has no lock file yet
    (every ingest, compact and drop makes it; until then read as before, unlocked), nor
    after :data:`READER_WAIT`. A reader that dies releases it with its process
    (``flock``).

    ``within`` (seconds; None or 0: no bound) bounds the whole wait, at the gate and for the
    lock: a caller with a time limit passes what is left of it, and :class:`GateTimeout` is
    raised when it ran out before the reader was through. Without it, a ``query --timeout 2``
    waited up to 10 s at the gate before its limit started."""
    fd = _open_readers(root, writer=False)
    if fd is None:
        yield False
        return
    deadline = time.monotonic() + within if within else math.inf
    # through the gate first (see _readers_gone); one nested in a read of this process's
    # does not wait there, or a writer waiting at the gate for the outer one held both
    mine = _reading_now()
    gate = None if mine else _open_gate(root)
    with contextlib.ExitStack() as stack:
        passed = True
        if gate is not None:
            stack.callback(os.close, gate)
            passed = stack.enter_context(_holding_open(
                gate, fcntl.LOCK_SH, _bounded(GATE_WAIT, deadline),
                _writer_waited(root, gate, f"the readers' gate ({BATCHES}/)")))
        with _holding(fd, fcntl.LOCK_SH, _bounded(READER_WAIT, deadline),
                      _writer_waited(root, fd, f"the readers' lock ({READERS})")) as held:
            stack.close()  # out of the gate once in: a writer may be waiting there
            if not (passed and held) and time.monotonic() >= deadline:
                raise GateTimeout(f"{root}: the time limit ran out at the readers' gate")
            mine.append(fd)
            try:
                yield held
            finally:
                mine.remove(fd)


def _bounded(wait: float, deadline: float) -> float:
    """``wait`` seconds, or fewer where ``deadline`` (``time.monotonic()``) comes first."""
    return max(min(wait, deadline - time.monotonic()), 0.0)


class GateTimeout(ArchiveError):
    """A reader's time (:func:`reading`'s ``within``) ran out while it waited at the gate or
    for the readers' lock: a compact or a drop was removing files. Callers say it as their
    own time limit."""


_READING = threading.local()


def _reading_now() -> list[int]:
    """The readers' locks this thread took and holds (another thread's reads are not this
    one's: a server reading in many threads waits at the gate in each)."""
    if not hasattr(_READING, "fds"):
        _READING.fds = []
    fds: list[int] = _READING.fds
    return fds


GATE_WAIT = WRITER_WAIT + READER_WAIT + 1.0
"""Seconds a new reader waits at most at the gate (:func:`_readers_gone`): a writer holds it
no longer than its wait for the readers already in, and its unlinks."""


def _open_gate(root: str) -> int | None:
    """A descriptor of the readers' gate, the ``_batches`` directory (an ``flock`` on it;
    nothing is written), or None where there is none to open."""
    try:
        return os.open(os.path.join(root, BATCHES),
                       os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None


@contextlib.contextmanager
def _readers_gone(root: str, wait: float) -> Iterator[bool]:
    """Hold the readers' lock alone (call with the ingest lock held), waiting at most
    ``wait`` seconds for the readers that hold it; yields whether it is held.

    Meanwhile it holds the gate, which each new reader passes (shared) before it takes the
    readers' lock: so new readers wait, and the readers in at the start end, and a gap comes
    however the readers overlap. Without it, a dashboard's queries run back to back, each
    one starting before the last ended, held the lock shared for good, and the files of
    every compaction stayed (postponed) for ever."""
    fd = _open_readers(root, writer=True)
    assert fd is not None
    gate = _open_gate(root)
    with contextlib.ExitStack() as stack:
        if gate is not None:
            stack.callback(os.close, gate)
            stack.enter_context(_holding_open(gate, fcntl.LOCK_EX, wait))

        def readers() -> str:
            return (f"{root}: waiting for the readers still reading files this run would "
                    f"remove (query, report or verify: {_holders(fd)}, holding the readers' "
                    f"lock {READERS}): at most {wait:g} s, then the files are left for the "
                    "next clean-up")

        with _holding(fd, fcntl.LOCK_EX, wait, readers) as held:
            yield held


@contextlib.contextmanager
def _holding(fd: int, how: int, wait: float, waiting: Callable[[], str] | None = None
             ) -> Iterator[bool]:
    """The readers' lock on ``fd`` taken as ``how`` within ``wait`` seconds (yields whether
    it is held); ``fd`` is closed after, which releases it. ``waiting``: as
    :func:`_flock_within` says a long wait."""
    try:
        with _holding_open(fd, how, wait, waiting) as held:
            yield held
    finally:
        os.close(fd)


@contextlib.contextmanager
def _holding_open(fd: int, how: int, wait: float, waiting: Callable[[], str] | None = None
                  ) -> Iterator[bool]:
    """:func:`_holding`, released (``LOCK_UN``) after, ``fd`` left open."""
    held = _flock_within(fd, how, wait, waiting)
    if held:
        _HELD.add(fd)
    try:
        yield held
    finally:
        if held:
            _HELD.discard(fd)
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)


def new_batch_id() -> str:
    """Sortable by time, unique across processes and machines."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(4)


def batch_of(filename: str) -> str | None:
    if filename.startswith("part-") and filename.endswith(".parquet"):
        return filename[5:-8]
    return None


UnreadKey = tuple[str, str, str]
"""``(source_path, rule, message)``: what identifies the errors row of a file never read."""

DAMAGED_RECORD = ("restore it from a backup, or delete it: the next ingest then removes that "
                  "batch's files and stores its logs again when given them")


def manifests(root: str) -> list[dict[str, Any]]:
    """The committed batches, oldest first. A record that cannot be read, or does not say
    what a record says (its batch, named as the file is, and its files: paths of that batch
    inside their table's directory), is an :class:`ArchiveError` naming it: nothing is read
    from, or recovered in, an archive whose commits are not known (a record taken for absent
    would have its batch's files deleted as uncommitted).

    A batch that a compacted batch's record names under ``"compacted"`` is no longer committed:
    its rows are the compacted batch's (see :mod:`buraco_log.archive.compact`), and until
    :func:`recover` removes its record and files it is skipped here, so no reader sees a row
    twice."""
    records = all_records(root)
    merged = _replaced(records)
    return [r for r in records if r["batch"] not in merged]


_T = TypeVar("_T")


class Changed(ArchiveError):
    """A batch record or committed file listed a moment ago is gone: a compact or a batch drop
    committed while it was read (readers take no lock)."""


RELISTS = 8
"""Times a reader lists the batches at most when one it listed is gone as it reads it (each
compaction or drop that commits meanwhile can cost one)."""


def _listed(root: str, read: Callable[[str], _T]) -> _T:
    """``read(root)``, again while it meets a record or file that a concurrent compact or drop
    removed: a reader that listed the batches just before a compaction committed read a
    replaced batch's record after its removal ("unreadable batch record: No such file or
    directory"). Read again, the listing holds the compacted batch: every row once."""
    for _ in range(RELISTS - 1):
        with contextlib.suppress(Changed):
            return read(root)
    return read(root)


def _replaced(records: list[dict[str, Any]]) -> set[str]:
    """The batches that these records' compactions replaced."""
    return {b for r in records for b in r.get("compacted", ())}


def merged_into(root: str) -> dict[str, str]:
    """Batch id -> the compacted batch that holds its rows now, for batches still named by a
    committed record (an old ingest report's batch id, say)."""
    return {b: r["batch"] for r in manifests(root) for b in r.get("compacted", ())}


def all_records(root: str) -> list[dict[str, Any]]:
    """Every batch record on disk, oldest first, including batches that a compacted batch
    replaced and recovery has not yet removed (:func:`manifests` skips those). Listed again
    when a record goes as it is read (a compact or drop committed meanwhile)."""
    return _listed(root, _all_records)


def _all_records(root: str) -> list[dict[str, Any]]:
    d = os.path.join(root, BATCHES)
    if not os.path.lexists(d):
        _refuse_lost_records(root)
        return []
    if os.path.islink(d) or not os.path.isdir(d):  # not "no batches": recovery deleted all
        raise ArchiveError(f"{d}: the directory of the batch records is not a directory: "
                           "restore it from a backup (without it, no batch is committed)")
    out = []
    if len(_READ_RECORDS) > _READ_RECORDS_MAX:
        _READ_RECORDS.clear()
    for name in sorted(os.listdir(d)):
        if name.endswith(".json") and ".tmp-" not in name:
            path = os.path.join(d, name)
            seen = _record_stat(path)
            hit = _READ_RECORDS.get(path)
            if seen is not None and hit is not None and hit[0] == seen:
                out.append(hit[1])  # the same file, unchanged since this process read it
                continue
            try:
                record = read_json(path, "batch record")
            except ArchiveError as exc:
                if os.path.lexists(path):
                    raise ArchiveError(f"{exc}; {DAMAGED_RECORD} "
                                       "[archive.record_damaged]") from None
                raise Changed(f"{path}: removed while the batch records were read (a compact "
                              "or a batch drop ran at the same time): run it again") from exc
            problem = _record_problem(record, name[: -len(".json")])
            if problem is not None:
                raise ArchiveError(f"{path}: damaged batch record: {problem}; "
                                   f"{DAMAGED_RECORD} [archive.record_damaged]")
            if seen is not None:
                _READ_RECORDS[path] = (seen, record)
            out.append(record)
    return out


# Batch records read by this process, by path: a record is written once (temp file, rename)
# and never rewritten, so one whose inode, size and times are unchanged is the record read
# before. One ingest listed the records six times (the lock's clean-up, what is stored, the
# commit, the ratings); at 1,000 nightly batches that was 6,000 JSON reads, 2 s of a night's
# 8. A change in place moves the change time (ctime), which no one can set back.
_READ_RECORDS: dict[str, tuple[tuple[int, int, int, int, int], dict[str, Any]]] = {}
_READ_RECORDS_MAX = 1 << 18


def _record_stat(path: str) -> tuple[int, int, int, int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _refuse_lost_records(root: str) -> None:
    """An archive without ``_batches`` whose tables hold part files lost its records (a
    deletion, a copy or backup that left the directory out): refused. Taken for an archive
    with no batch, every file was shown as uncommitted (a query counted no match) and the next
    ingest or compact deleted all of them as the leftovers of an interrupted run. A commit
    makes the directory before it moves any file into place (:func:`_commit`), and a new
    archive has it from the start, so no crash leaves parts without it."""
    for table in TABLES:
        base = os.path.join(root, table)
        if os.path.islink(base) or not os.path.isdir(base):
            continue
        for dirpath, _dirs, names in walk(base):
            part = next((n for n in names if batch_of(n) is not None), None)
            if part is not None:
                raise ArchiveError(
                    f"{os.path.join(root, BATCHES)}: the directory of the batch records is "
                    f"missing, but the tables hold part files ({os.path.join(dirpath, part)}, "
                    "...): restore it from a backup (without it no batch is committed, and "
                    "a clean-up would delete every file); if no ingest ever finished here, "
                    "ingest into a new archive")


def _record_problem(record: Any, batch: str) -> str | None:
    """What is wrong with a batch record, or None."""
    if not isinstance(record, dict):
        return "not a JSON object"
    if record.get("batch") != batch:
        return f"it names batch {json.dumps(record.get('batch'))}, not {batch}"
    files = record.get("files")
    if not isinstance(files, dict):
        return "no object of files"
    for table, rels in files.items():
        if table not in TABLES:
            return f"no table {json.dumps(table)} in this layout"
        if not isinstance(rels, list):
            return f"the files of {table} are not a list"
        if len(set(map(str, rels))) != len(rels):  # read twice, its rows were shown twice
            return f"a file of {table} is listed twice"
        depth = 4 if table in PARTITIONED else 2  # table/preset=/month=/part, errors/part
        for rel in rels:
            parts = rel.split("/") if isinstance(rel, str) else []
            if (len(parts) != depth or parts[0] != table or parts[-1] != f"part-{batch}.parquet"
                    or any(p in ("", ".", "..") for p in parts)
                    or (depth == 4 and not (parts[1].startswith("preset=")
                                            and parts[2].startswith("month=")))):
                return f"{json.dumps(rel)} is no file of batch {batch} in {table}/"
    merged = record.get("compacted", [])
    if not isinstance(merged, list) or not all(isinstance(b, str) and b for b in merged) \
            or len(set(merged)) != len(merged) or batch in merged:
        return "its list of compacted batches is not a list of other batch ids"
    return None


def committed_files(root: str) -> dict[str, list[str]]:
    """Absolute paths of every committed file, per table. A listed file that is missing, not
    a regular file (a FIFO there hung every query), unreadable, or of another size than its
    batch committed is an :class:`ArchiveError` naming it. The size costs nothing more than
    the ``lstat`` already made, and catches a file cut short (DuckDB then said only "No magic
    bytes found") or another file put in its place: a file swapped with one of another
    partition was read with this path's ``preset`` and ``month``, wrong rows without a word,
    and one of another table failed the report with a binder error naming no file."""
    return _listed(root, _committed_files)


def _committed_files(root: str) -> dict[str, list[str]]:
    files: dict[str, list[str]] = {t: [] for t in TABLES}
    present = {t: os.path.isdir(os.path.join(root, t)) for t in TABLES}
    records = manifests(root)
    # each directory once, for every batch: a per-batch look was 11 lstats a batch
    refuse_linked_dirs(root, (rel for m in records for rels in m["files"].values()
                              for rel in rels))
    for m in records:
        kept = m.get("fingerprints")
        kept = kept if isinstance(kept, dict) else {}
        since = _record_time(root, m["batch"])
        for table, rels in m["files"].items():
            if rels and not present[table]:
                where = os.path.join(root, table)
                what = "is not a directory" if os.path.lexists(where) else "is missing"
                raise ArchiveError(f"{where}: the directory of the {table} table {what}, and "
                                   "with it the files the batch records list there: restore "
                                   "it from a backup")
            for rel in rels:
                path = os.path.join(root, rel)
                try:
                    _check_committed(path, m["batch"], kept.get(rel), since)
                except ArchiveError as exc:
                    _refuse_replaced(root, path, m["batch"], exc)
                    raise
                files[table].append(path)
    return files


def refuse_linked_dirs(root: str, rels: Iterable[str]) -> None:
    """Refuse, naming it, a directory between ``root`` and any of the relative files ``rels``
    that is a symbolic link: the file itself is opened without following one, but through a
    linked partition directory ingest and compact read committed files where the link led
    and wrote their new parts there, out of the archive (and left the old ones there). One
    ``lstat`` for each directory, each once."""
    seen: set[str] = set()
    for rel in rels:
        head = os.path.dirname(rel)
        while head and head not in seen:  # a seen one's parents were looked at with it
            seen.add(head)
            if os.path.islink(os.path.join(root, head)):
                raise ArchiveError(f"{os.path.join(root, head)}: symbolic links are not "
                                   "allowed inside an archive")
            head = os.path.dirname(head)


def _refuse_replaced(root: str, path: str, batch: str, exc: ArchiveError) -> None:
    """:class:`Changed` when committed file ``path`` is gone because its batch is no longer
    committed (a compaction replaced it, or it was dropped, since the listing)."""
    if not os.path.lexists(path) and batch not in {m["batch"] for m in manifests(root)}:
        raise Changed(f"{path}: removed while the committed files were listed (a compact or a "
                      "batch drop ran at the same time): run it again") from exc


def _record_time(root: str, batch: str) -> int | None:
    """When the record of ``batch`` was written (ns): a commit writes it after its files, so
    a file modified later was changed after its commit (:func:`_check_committed`)."""
    try:
        return os.lstat(os.path.join(root, BATCHES, f"{batch}.json")).st_mtime_ns
    except OSError:
        return None


def _check_committed(path: str, batch: str, kept: object, since: int | None = None) -> None:
    """:func:`committed_files`' checks of one file, cheap ones only: no byte is read unless
    the file was modified after its batch record was written (``since``). A byte changed in
    a part's pages gave a query wrong rows without a word (DuckDB checks no page checksum),
    and hashing every file cost each query 0.3 s over 100 M events; a write over the file
    moves its modification time, so only such a file is read back against its fingerprint.
    (A copy that does not keep times, ``cp -r``, makes the files copied after their record
    read back too: slower, never wrong.)"""
    try:
        st = os.lstat(path)
    except OSError as exc:
        rule = "part_missing" if exc.errno == errno.ENOENT else "part_unreadable"
        raise ArchiveError(f"{path}: a file of committed batch {batch} cannot be read: "
                           f"{exc.strerror or exc} [archive.{rule}]") from None
    if not stat.S_ISREG(st.st_mode):
        raise ArchiveError(f"{path}: a file of committed batch {batch} is not a regular file "
                           "[archive.part_unreadable]")
    fp = kept if isinstance(kept, list) and len(kept) == 2 and type(kept[1]) is int else None
    if fp is not None and st.st_size != fp[1]:
        raise ArchiveError(f"{path}: damaged archive file: {st.st_size:,} bytes, where batch "
                           f"{batch} committed {fp[1]:,} (cut short, or another file put in "
                           "its place); `buraco-log verify ARCHIVE` lists every such file "
                           "[archive.part_changed]")
    if not os.access(path, os.R_OK):  # one syscall; DuckDB named it inside its IO Error
        raise ArchiveError(f"{path}: a file of committed batch {batch} cannot be read: "
                           "Permission denied (give the reading user read access to it) "
                           "[archive.part_unreadable]")
    if fp is not None and since is not None and st.st_mtime_ns > since \
            and isinstance(fp[0], str):
        try:
            sha, _size = fingerprint(path)
        except OSError as exc:
            raise ArchiveError(f"{path}: a file of committed batch {batch} cannot be read: "
                               f"{exc.strerror or exc} [archive.part_unreadable]") from None
        if sha != fp[0]:
            raise ArchiveError(
                f"{path}: damaged archive file: its bytes changed since batch {batch} "
                f"committed it (SHA-256 {sha[:16]}..., committed {fp[0][:16]}...), so its "
                "rows would be wrong: restore it from a backup; `buraco-log verify ARCHIVE` "
                "lists every such file [archive.part_changed]")


INTENT = ".intent"
"""Suffix of an intent record in ``_batches``: not ``.json``, so that earlier versions of
buraco_log, which read every ``_batches/*.json`` as a batch record, pass it by."""


def note_intent(root: str, name: str, action: str, batches: list[str],
                files: list[str]) -> None:
    """Say, durably (fsynced), that ``action`` ("ingest", "compact", "drop") may leave part
    files of ``batches`` (``files``, relative) without a record: written before the first
    rename of a commit and before a drop unlinks a record, so that :func:`recover` knows
    those parts for the leftovers of a run, and refuses any other part of no record."""
    makedirs_durable(os.path.join(root, BATCHES))
    _atomic_json(os.path.join(root, BATCHES, f"{name}{INTENT}"),
                 {"action": action, "batches": batches, "files": files})


def end_intent(root: str, name: str) -> None:
    """Remove an intent record once its run is whole (committed, or cleaned up). Not
    fsynced: an intent that outlives a power cut names committed batches only, whose files
    it never lets :func:`recover` delete, and the next clean-up removes it."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(root, BATCHES, f"{name}{INTENT}"))


_DELETE_INTENT: Final = ("delete it (the next ingest or compact then names the part files of "
                         "no batch record, if any, and deletes none)")


def _intents(root: str) -> dict[str, set[str]]:
    """Intent record file name -> the batches it names. One that cannot be read is an
    :class:`ArchiveError`: what it allows to delete is not known."""
    return {name: batches for name, (_action, batches) in _intent_records(root).items()}


def _intent_records(root: str) -> dict[str, tuple[str, set[str]]]:
    """Intent record file name -> its action ("ingest", "compact", "drop"; "" if it names
    none) and the batches it names, as :func:`_intents` reads them."""
    d = os.path.join(root, BATCHES)
    out: dict[str, tuple[str, set[str]]] = {}
    if not os.path.isdir(d):
        return out
    for name in sorted(os.listdir(d)):
        if not name.endswith(INTENT) or ".tmp-" in name:
            continue
        path = os.path.join(d, name)
        try:
            intent = read_json(path, "intent record")
        except ArchiveError as exc:
            raise ArchiveError(f"{exc}; {_DELETE_INTENT}") from None
        batches = intent.get("batches") if isinstance(intent, dict) else None
        if not isinstance(batches, list) or not all(isinstance(b, str) and b
                                                    for b in batches):
            raise ArchiveError(f"{path}: damaged intent record: no list of batches; "
                               f"{_DELETE_INTENT}")
        action = intent.get("action")
        out[name] = (action if action in (*CUT_SHORT, POSTPONED) else "", set(batches))
    return out


RUN_KIND: Final = ".kind"
"""The file, in a run's staging directory, that says what the run is ("ingest", "compact"):
written before anything else is staged, so that a clean-up names the run a kill cut short
while staging (it could only say "ingest or compact"). Not a part: never counted as one."""


def mark_stage(root: str, run: str, kind: str) -> str:
    """Make the staging directory of ``run`` and say in it that it is an ``kind`` run (see
    :data:`RUN_KIND`); returns the directory. Not fsynced: a kind lost to a power cut only
    leaves the clean-up's older words."""
    stage = os.path.join(root, STAGING, run)
    os.makedirs(stage, exist_ok=True)
    with open(os.path.join(stage, RUN_KIND), "w", encoding="ascii") as f:
        f.write(kind)
    return stage


def _staged_kinds(root: str) -> dict[str, str]:
    """Run id -> what its staging directory says it is (of :data:`CUT_SHORT`); a run of a
    version that wrote no kind, or one cut before it was whole, is not in it."""
    kinds: dict[str, str] = {}
    for run in _staged_runs(root):
        path = os.path.join(root, STAGING, run, RUN_KIND)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with open(fd, "rb") as f:
                said = f.read(16).decode("ascii", "replace")
        except OSError:
            continue
        if said in CUT_SHORT:
            kinds[run] = said
    return kinds


def _staged_runs(root: str) -> set[str]:
    """The batch ids (or Spark run ids) that have a directory under ``.staging``: a commit
    removes its own after its record, so one there is a run that never finished (one of a
    buraco_log older than intent records included)."""
    staging = os.path.join(root, STAGING)
    if os.path.islink(staging) or not os.path.isdir(staging):
        return set()
    return {n for n in os.listdir(staging) if os.path.isdir(os.path.join(staging, n))
            and not os.path.islink(os.path.join(staging, n))}  # a run makes directories


def orphan_parts(root: str, records: list[dict[str, Any]] | None = None
                 ) -> tuple[list[str], list[str]]:
    """The part files of batches without a (current) record, relative, in two lists: those
    an interrupted run left (named by an intent, a compacted batch's record or a staging
    directory), which :func:`recover` deletes, and the others, which it refuses to."""
    records = all_records(root) if records is None else records
    committed = {r["batch"] for r in records} - _replaced(records)
    known_runs = (_replaced(records) | _staged_runs(root)
                  | {b for named in _intents(root).values() for b in named})
    # a committed batch's file its record does not list (the record edited, a part copied
    # into another partition), or a Parquet file of no batch at all: no reader of the
    # library reads it, but every glob does, and its rows were left out without a word
    listed = {rel for r in records if r["batch"] in committed
              for rels in r["files"].values() for rel in rels}
    unlisted: list[str] = []
    left: list[str] = []
    lost: list[str] = []
    for table in TABLES:
        base = os.path.join(root, table)
        if os.path.islink(base):  # the walk would delete "uncommitted" files where it leads
            raise ArchiveError(f"{base}: symbolic links are not allowed inside an archive")
        if not os.path.isdir(base):
            continue
        top = os.path.join(root, "")
        for dirpath, _dirs, names in walk(base):
            # relpath made each path absolute and normal again: 0.5 s a walk of 5,000 files
            inside = dirpath[len(top):] if dirpath.startswith(top) else \
                os.path.relpath(dirpath, root)
            for name in sorted(names):
                b = batch_of(name)
                rel = os.path.join(inside, name)
                # a link is no data of the archive (no commit writes one): removed, never
                # followed, as before
                if ".tmp-" in name or (b is not None and b in known_runs - committed) or (
                        b is not None and b not in committed
                        and os.path.islink(os.path.join(dirpath, name))):
                    left.append(rel)
                elif b is not None and b not in committed:
                    lost.append(rel)
                elif (b is not None and rel not in listed) or (
                        b is None and name.endswith(".parquet")
                        and not os.path.islink(os.path.join(dirpath, name))):
                    unlisted.append(rel)
    if lost:  # looked at again, intents before records: a commit running (verify takes no
        # lock) writes its intent before its first file is in place, and removes it only
        # once its record is written, so a part of it is named by one or the other now
        now = {b for named in _intents(root).values() for b in named}
        now |= {r["batch"] for r in all_records(root)}
        lost = [rel for rel in lost if batch_of(os.path.basename(rel)) not in now]
    return left, sorted(lost + unlisted)


def unrecorded_parts(root: str) -> list[str]:
    """The part files (relative) of no batch record and of no interrupted run, which every
    reader leaves out (:func:`orphan_parts`): a listing of the tables' directories and of the
    records, no part read. For a line on stderr after a query or report, so never an error:
    an archive this cannot look over is one the reader itself refuses, or reads whole."""
    try:
        return orphan_parts(root)[1]
    except (ArchiveError, OSError):
        return []


def refuse_lost(root: str, lost: list[str]) -> None:
    """One line for part files that belong to no batch record and to no interrupted run."""
    if not lost:
        return
    more = f" and {len(lost) - 2:,} more" if len(lost) > 2 else ""
    raise ArchiveError(
        f"{root}: {len(lost):,} part file(s) belong to no batch record and to no interrupted "
        f"run ({', '.join(shown_path(p) for p in lost[:2])}{more}): their records in "
        f"{BATCHES}/ were deleted or lost; restore them from a backup, or move those files "
        "out of the archive if their rows are not wanted; nothing was deleted "
        "[archive.part_unrecorded]")


def shown_path(path: str) -> str:
    """A path as the archive's messages and tables show it: a byte that is not UTF-8 (held
    by Python as a lone surrogate) as ``\\xNN``, as :func:`buraco_log.archive.schema.storable`
    stores it."""
    return storable(path)


CUT_SHORT: Final = ("ingest", "compact", "drop")
"""The operations whose leftovers :func:`clean_up` may find, as intent records name them."""

POSTPONED: Final = "postponed"
"""The intent record ``_batches/postponed.intent`` (its action too): the batches, once
committed, whose part files a compact or drop left in place because readers held the
readers' lock (:data:`READERS`). No run was cut short: the next clean-up that finds no reader
removes them, and says nothing of an interrupted run."""


def recover(root: str, wait: float = 0.0) -> list[str]:
    """Delete what an interrupted ingest, compact or drop left: staging files, the parts of
    batches it never committed or took out, records of batches a compaction replaced.

    Must be called with the lock held. Returns the removed paths (relative). Part files of
    no record that no interrupted run names (see the module docstring) are an
    :class:`ArchiveError`, and nothing is removed.

    The part files of a batch that readers may be reading (one a compaction replaced, or a
    drop took out) are removed only while no reader holds the readers' lock (:func:`reading`),
    waited for at most ``wait`` seconds; otherwise they stay, named by the intent record
    :data:`POSTPONED`, for the next clean-up (:func:`postponed_parts`).
    """
    records = all_records(root)  # first: a damaged record stops it all
    return _recover(root, records, _intent_records(root), wait)


def postponed_parts(root: str) -> list[str]:
    """The part files (relative) that a clean-up left in place for readers (:func:`recover`)
    and that are still there."""
    try:
        intent = read_json(os.path.join(root, BATCHES, POSTPONED + INTENT), "intent record")
    except ArchiveError:
        return []
    files = intent.get("files") if isinstance(intent, dict) else None
    return [rel for rel in (files if isinstance(files, list) else ())
            if isinstance(rel, str) and os.path.lexists(os.path.join(root, rel))]


def clean_up(root: str, wait: float = 0.0) -> tuple[list[str], list[str]]:
    """:func:`recover` (``wait`` as there), and which operations were cut short (of
    :data:`CUT_SHORT`, in that order), as the intent records and a compacted batch's record
    tell; "ingest or compact" for a run that left files before its intent was written (while
    staging). Empty when nothing was removed. Ingest said "an interrupted ingest" after a
    drop's leftovers too."""
    records = all_records(root)  # read before they go: what they name tells what was cut
    intents = _intent_records(root)
    staged = _staged_kinds(root)
    removed = recover(root, wait)
    # the files left for readers by a finished compact or drop are no run's leftovers
    later = {b for action, named in intents.values() if action == POSTPONED for b in named}
    removed = [rel for rel in removed if batch_of(os.path.basename(rel)) not in later]
    return removed, _cut_short(removed, records, intents, staged) if removed else []


def _cut_short(removed: list[str], records: list[dict[str, Any]],
               intents: dict[str, tuple[str, set[str]]],
               staged: dict[str, str] | None = None) -> list[str]:
    """The operations whose leftovers ``removed`` are (see :func:`clean_up`); ``staged``:
    what each staging directory said its run was (:data:`RUN_KIND`)."""
    by_batch: dict[str, set[str]] = {run: {kind} for run, kind in (staged or {}).items()}
    for action, batches in intents.values():
        for b in batches:
            by_batch.setdefault(b, set()).add(action)
    replaced = _replaced(records)
    found: set[str] = set()
    unknown = False
    for rel in removed:
        parts = rel.split(os.sep)
        batch = parts[1] if parts[0] == STAGING and len(parts) > 2 else \
            batch_of(os.path.basename(rel)) or (
                parts[1].removesuffix(".json") if parts[0] == BATCHES else None)
        if batch is not None and batch in replaced:
            found.add("compact")  # its record and parts, replaced by a compacted batch
        elif batch is not None and by_batch.get(batch, set()) - {""}:
            found |= by_batch[batch] - {""}
        else:
            unknown = True
    if not found and unknown:
        return ["ingest or compact"]
    return [a for a in CUT_SHORT if a in found]


def _recover(root: str, records: list[dict[str, Any]],
             intents: dict[str, tuple[str, set[str]]], wait: float = 0.0) -> list[str]:
    left, lost = orphan_parts(root, records)
    refuse_lost(root, lost)  # before anything is removed
    merged = _replaced(records) & {r["batch"] for r in records}
    # parts that were committed once, so a reader that listed them may be reading them: those
    # of a compaction's replaced batches and of a drop's; an ingest's or compact's own
    # uncommitted parts were never listed
    once = _replaced(records) | {b for action, named in intents.values()
                                 if action not in ("ingest", "compact") for b in named}
    guarded = {rel for rel in left if batch_of(os.path.basename(rel)) in once}
    with contextlib.ExitStack() as stack:
        if guarded and not stack.enter_context(_readers_gone(root, wait)):
            _postpone(root, guarded)
            left = [rel for rel in left if rel not in guarded]
        else:
            guarded = set()
        return _remove_left(root, merged, left, intents, keep=POSTPONED + INTENT
                            if guarded else None)
    raise AssertionError("unreachable")


def _postpone(root: str, parts: set[str]) -> None:
    """Name ``parts`` in the intent record :data:`POSTPONED` (fsynced, before any intent
    that named them goes), so that every clean-up knows them for leftovers until removed."""
    note_intent(root, POSTPONED, POSTPONED,
                sorted({b for rel in parts if (b := batch_of(os.path.basename(rel)))}),
                sorted(parts))


def _remove_left(root: str, merged: set[str], left: list[str],
                 intents: dict[str, tuple[str, set[str]]], keep: str | None) -> list[str]:
    """:func:`_recover`'s removals; ``keep``: an intent record not to remove."""
    removed: list[str] = []
    # A compaction committed, then cut short: its replaced batches' records go before their
    # files (one unlink each, as drop_batches does), so no reader finds a record's file gone.
    for gone in sorted(merged):
        os.unlink(os.path.join(root, BATCHES, f"{gone}.json"))
        removed.append(os.path.join(BATCHES, f"{gone}.json"))
    if merged:
        _fsync_dir(os.path.join(root, BATCHES))
    staging = os.path.join(root, STAGING)
    if os.path.islink(staging):
        raise ArchiveError(f"{staging}: symbolic links are not allowed inside an archive")
    # the parts before what names them (the staging directory of a run of a version that
    # wrote no intent, the intents below): a clean-up cut short is finished by the next
    for rel in left:
        os.unlink(os.path.join(root, rel))
        removed.append(rel)
    if os.path.isdir(staging):
        # every file, not the batch directory holding them: "1 uncommitted file(s)" was said
        # of a batch of 40 files a kill left while staging
        removed += (os.path.relpath(p, root) for p in _remove_tree(staging)
                    if not (os.path.basename(p) == RUN_KIND
                            and os.path.dirname(os.path.dirname(p)) == staging))
    for name in os.listdir(root):  # the marker's, from a creation or setting cut short
        if name.startswith(MARKER + ".tmp-"):
            os.unlink(os.path.join(root, name))
            removed.append(name)
    for derived in (RATINGS, KEY_INDEX):
        ratings = os.path.join(root, derived)
        if os.path.isdir(ratings) and not os.path.islink(ratings):
            # a ratings (or key index) write cut short (write_ratings): it removes these
            # itself only when it runs again, and a compact that then had nothing to merge
            # left them for good
            for name in os.listdir(ratings):
                if name.startswith((".tmp-", "current.json.tmp-")):
                    os.unlink(os.path.join(ratings, name))
                    removed.append(os.path.join(derived, name))
    bd = os.path.join(root, BATCHES)
    if os.path.isdir(bd):
        for name in os.listdir(bd):
            if ".tmp-" in name:
                os.unlink(os.path.join(bd, name))
                removed.append(os.path.join(BATCHES, name))
    # last: every batch an intent names is committed or cleaned up now (a crash before this
    # leaves the intent for the next clean-up), and durably so: the unlinks of its parts
    # first, or a power cut could keep parts that nothing names any more
    for d in sorted({os.path.dirname(os.path.join(root, rel)) for rel in left} if intents
                    else ()):
        with contextlib.suppress(FileNotFoundError):
            _fsync_dir(d)
    for name in intents:
        if name != keep:
            end_intent(root, name.removesuffix(INTENT))
    return removed


def _remove_tree(top: str) -> list[str]:
    """Remove the directory ``top`` and everything in it, following no link, as
    ``shutil.rmtree`` does; return the files removed (links to directories aside), in the
    walk's order. Python 3.11's rmtree recursed once a level: a tree 1,100 directories deep
    left under ``.staging`` was an internal error (RecursionError) of every clean-up."""
    def unreadable(exc: OSError) -> None:
        raise exc  # rmtree's error too: a directory it cannot list is not removed

    removed: list[str] = []
    below: list[str] = []
    for dirpath, dirs, names in walk(top, unreadable):
        below.append(dirpath)
        for name in names:
            os.unlink(os.path.join(dirpath, name))
            removed.append(os.path.join(dirpath, name))
        for name in [d for d in dirs if os.path.islink(os.path.join(dirpath, d))]:
            os.unlink(os.path.join(dirpath, name))
            dirs.remove(name)
    for dirpath in reversed(below):  # a directory after everything below it
        os.rmdir(dirpath)
    return removed


def discard_tree(top: str) -> None:
    """``shutil.rmtree(top, ignore_errors=True)`` without its recursion: a run's own staging
    directory, removed after its commit or its failure. A tree 1,100 directories deep planted
    there during the run was an internal error (RecursionError) of a committed ingest. What
    cannot be removed stays for the next run's clean-up (:func:`recover`)."""
    if os.path.islink(top):  # as rmtree: a link in its place is no tree of this run's
        return
    with contextlib.suppress(OSError):
        _remove_tree(top)


def drop_batches(root: str, batches: Iterable[str]) -> list[str]:
    """Take committed batches out of the archive: the delete half of a delete-then-append
    re-ingest (of a day's logs, say: the batches its ingest report lists).

    Each batch record goes first (one unlink: the batch vanishes for every reader at once),
    then its files, as :func:`recover` removes an uncommitted batch's. Its logs are no longer
    known, so the next ingest checks and stores them again. Takes the lock; returns the removed
    paths (relative). An unknown batch id is an :class:`ArchiveError`, and nothing is removed.
    """
    root = check_archive(root)
    wanted = list(dict.fromkeys(batches))
    check_writable(root)
    with locked(root, "drop"):
        have = {m["batch"] for m in manifests(root)}
        missing = [b for b in wanted if b not in have]
        if missing:
            into = merged_into(root).get(missing[0])
            raise ArchiveError(f"{root}: no committed batch {missing[0]}" + (
                f" (compact merged it into batch {into}: drop that one, and ingest again "
                "the logs of every batch it merged)" if into else ""))
        # first what an interrupted run left: a compaction cut short before it removed the
        # records it replaced had them back in the archive once its batch was dropped
        removed = recover(root)
        records = {m["batch"]: m for m in manifests(root)}
        intent = f"drop-{new_batch_id()}"
        note_intent(root, intent, "drop", wanted,
                    sorted(rel for b in wanted for rels in records[b]["files"].values()
                           for rel in rels))
        for b in wanted:
            os.unlink(os.path.join(root, BATCHES, f"{b}.json"))
            removed.append(os.path.join(BATCHES, f"{b}.json"))
        _fsync_dir(os.path.join(root, BATCHES))
        removed += recover(root, WRITER_WAIT)  # the dropped batches' files, then the intent
    return removed


FileKey = tuple[str, bool]
"""How ingest knows a file it met before: its bytes' SHA-256 and whether its name makes it
JSON Lines (the same bytes named ``.blog`` and ``.jsonl`` are read two ways, so two files)."""


def known(root: str) -> tuple[dict[str, int], set[FileKey], set[FileKey], set[UnreadKey],
                             set[str], set[str]]:
    """What the archive holds: digest -> game id, the :data:`FileKey` of the files of its
    matches and of its errors, the errors of files never read (:func:`recorded_unread`), its
    match ids (a new match under one of them is named: ingest.shared_match_ids) and the
    source paths of its matches (a new match at one of them is named: ingest.reused_paths).
    Keyed on the hash alone, a binary log's bytes named ``.jsonl`` were refused beside the
    ``.blog`` in one run but "already stored" in a later one."""
    import pyarrow.compute as pc  # type: ignore[import-untyped]  # here: a query never needs it

    from .keyindex import load
    committed_files(root)  # every committed file there, of its size, unchanged since
    # read from the key index, and from the files of the batches it does not cover yet
    # (stored after the commit, with the ratings: an archive refused by the clean-up that
    # follows is left as it was): a night's ingest read a few columns of every batch's files
    index = load(root, manifests(root))
    t = index["matches"]
    digests: dict[str, int] = {}
    shas: set[FileKey] = set()
    ids: set[str] = set()
    sources: set[str] = set()
    if t.num_rows:
        digests = dict(zip(t.column("digest").to_pylist(), t.column("game_id").to_pylist(),
                           strict=True))
        ids = set(pc.unique(t.column("match_id")).to_pylist())
        sources = set(pc.unique(t.column("source_path")).to_pylist())
        jsonl = pc.equal(t.column("log_format"), "jsonl")
        shas = set(zip(t.column("file_sha256").to_pylist(), jsonl.to_pylist(), strict=True))
    bad: set[FileKey] = set()
    unread: set[UnreadKey] = set()
    t = index["errors"]
    if t.num_rows:
        hashes = t.column("file_sha256").to_pylist()
        bad = set(zip(hashes, _jsonl_names(t.column("source_path")).to_pylist(), strict=True))
        if "" in hashes:  # the paths and messages only when some file was never read
            unread = _unread(t)
    return digests, shas, bad, unread, ids, sources


StoredTail = tuple[str, str, bool]
"""What the archive keeps of a stored match's copy: match id, ``integrity``, ``signed``."""


def stored_tails(root: str, digests: set[str]) -> dict[str, StoredTail]:
    """:data:`StoredTail` of the stored matches of ``digests``: what ingest compares a copy
    of a stored match with. A file written before ``signed`` was added reads it as False
    (as every reader reads it NULL). Read only when some copy of a stored match was met."""
    out: dict[str, StoredTail] = {}
    for path in committed_files(root)["matches"]:
        t = read_columns([path], ["digest", "match_id", "integrity"])
        try:
            signed = read_columns([path], ["signed"]).column("signed").to_pylist()
        except ArchiveError:  # a file from before the column
            signed = [False] * t.num_rows
        for d, m, i, s in zip(t.column("digest").to_pylist(), t.column("match_id").to_pylist(),
                              t.column("integrity").to_pylist(), signed, strict=True):
            if d in digests:
                out[d] = (m, i, bool(s))
    return out


def _jsonl_names(paths: pa.ChunkedArray) -> pa.ChunkedArray:
    """:func:`buraco_log.log.is_jsonl_name` of each stored path (a name ending ``.jsonl``
    ends so in its basename too)."""
    import pyarrow.compute as pc  # here: a query never needs it
    return pc.ends_with(paths, ".jsonl")


def recorded_unread(root: str) -> set[UnreadKey]:
    """The errors rows of files that were never read (no file hash: a dangling link, a FIFO,
    a file that cannot be opened), as :data:`UnreadKey`. Such a file has no hash to be known
    by, so every ingest recorded it again: a FIFO in a directory ingested every night held
    one row per night. Shared by both engines, which must keep the same rows."""
    files = committed_files(root)["errors"]
    return _unread(read_columns(files, list(_UNREAD_COLUMNS))) if files else set()


_UNREAD_COLUMNS = ("file_sha256", "source_path", "rule", "message")


def _unread(errors: pa.Table) -> set[UnreadKey]:
    import pyarrow.compute as pc  # here: a query never needs it
    t = errors.filter(pc.equal(errors.column("file_sha256"), ""))
    return set(zip(t.column("source_path").to_pylist(), t.column("rule").to_pylist(),
                   t.column("message").to_pylist(), strict=True))


def drop_recorded(rows: list[dict[str, Any]], recorded: set[UnreadKey]
                  ) -> tuple[list[dict[str, Any]], int]:
    """``rows`` (errors rows of files never read) without those the archive already holds
    for the same path and the same reason, and how many were dropped: re-ingesting the same
    sources adds no row, and a file that fails for another reason now is recorded again."""
    kept = [r for r in rows if (storable(r["source_path"]), r["rule"],
                                storable(r["message"])) not in recorded]
    return kept, len(rows) - len(kept)


_READ_FAILURES = (pa.ArrowException, OSError, ValueError, KeyError)


def read_columns(paths: list[str], columns: list[str]) -> pa.Table:
    """Columns of committed files; a file that cannot give them (truncated, garbage, another
    table's) is an :class:`ArchiveError` naming it, found by reading the files one by one
    once reading them together failed."""
    try:
        return pq.ParquetDataset(paths, partitioning=None).read(columns=columns)
    except _READ_FAILURES as exc:
        first = exc
    for path in paths:
        try:
            t = pq.read_table(path, columns=columns, partitioning=None)
            missing = [c for c in columns if c not in t.column_names]
            if missing:
                raise ValueError(f"no column {missing[0]}")
        except _READ_FAILURES as exc:  # named once: Arrow's message may name it again
            if isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EPERM):
                # not damaged: the archive's owner has only to let this user read it
                raise ArchiveError(f"{path}: a committed file cannot be read: "
                                   f"{os.strerror(exc.errno)}") from None
            line = _line(exc).replace(f"Could not open Parquet input source '{path}': ", "")
            raise ArchiveError(f"{path}: damaged archive file: {line}") from None
    raise ArchiveError(f"cannot read the archive's files: {_line(first)}") from None


def _line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _write_options(table: str, t: pa.Table) -> dict[str, Any]:
    encoding = _ENCODING.get(table, {})
    return {
        "compression": "zstd",
        "compression_level": {f.name: _LEVEL.get(table, {}).get(f.name, ZSTD_LEVEL)
                              for f in t.schema},
        "use_dictionary": [f.name for f in t.schema if f.name not in encoding],
        "column_encoding": encoding or None,
        "row_group_size": ROW_GROUP,
        "write_statistics": True,
    }


class CommitError(ArchiveError, OSError):
    """A batch that could not be written: nothing of it was committed."""


def commit(root: str, batch: str, parts: dict[tuple[str, str], dict[str, pa.Table]],
           errors: pa.Table | None, *, compacted: list[str] | None = None) -> dict[str, Any]:
    """Write one batch crash-safely (see the module docstring) and return its record.

    Every row of ``matches`` and ``errors`` is marked with ``batch`` and, for an ingest, with
    the commit time as ``ingested_at``. A compaction names the batches it merges in
    ``compacted``: its rows keep their time of ingest, and their NULLs from files older than
    a column (:func:`stored_schema`).

    A write that fails (a full disk, a file size limit) is a :class:`CommitError` naming the
    archive and the file; what the batch had staged is removed at once (it held the space a
    rerun needs). Files already renamed into place belong to no record: no reader sees them,
    and the next ingest removes them (:func:`recover`)."""
    at = [os.path.join(root, STAGING, batch)]  # the file being written
    record = os.path.join(root, BATCHES, f"{batch}.json")
    try:
        return _commit(root, batch, parts, errors, at, compacted)
    except (OSError, pa.ArrowException) as exc:
        if os.path.exists(record):  # past the commit point (its directory's fsync failed)
            raise
        discard_tree(os.path.join(root, STAGING, batch))
        _undo_placed(root, batch)
        what = "compact" if compacted else "ingest"  # the command to run again
        raise CommitError(f"{root}: batch {batch} was not committed (none of its rows is "
                           f"visible; run the {what} again {_once_fixed(exc, at[0])}): "
                           f"writing {at[0]}: {_reason(exc)}") from None


def _undo_placed(root: str, batch: str) -> None:
    """After a commit failed before its record: remove the files it had put in place, then
    its intent record, as far as the failure lets (what is left, the next clean-up removes:
    the intent stays while any file it names does)."""
    path = os.path.join(root, BATCHES, f"{batch}{INTENT}")
    try:
        intent = read_json(path, "intent record")
    except ArchiveError:  # none written yet (or unreadable: left to the next clean-up)
        return
    files = intent.get("files") if isinstance(intent, dict) else None
    for rel in files if isinstance(files, list) else []:
        if isinstance(rel, str) and batch_of(os.path.basename(rel)) == batch:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(root, rel))
    if isinstance(files, list) and not any(
            isinstance(rel, str) and os.path.lexists(os.path.join(root, rel))
            for rel in files):
        end_intent(root, batch)


def _once_fixed(exc: BaseException, path: str) -> str:
    """When to run a failed commit again. "Once there is room" was said of every failure,
    also of a file lying where the archive needs a partition's directory (a stray file
    named ``preset=classic``), which no free space fixes."""
    code = exc.errno if isinstance(exc, OSError) and exc.errno else next(
        (int(m) for m in _ERRNO.findall(str(exc))), None)
    if code in (errno.ENOTDIR, errno.EEXIST):
        blocking = next((p for p in _parents(path) if os.path.lexists(p)
                         and not os.path.isdir(p)), None)
        where = f" ({blocking})" if blocking else ""
        return f"once the file where it needs a directory{where} is moved away"
    if code in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "once this user may write there"
    return "once there is room"


def _parents(path: str) -> list[str]:
    """``path``'s directories, nearest last."""
    out: list[str] = []
    head = os.path.dirname(path)
    while head and head != os.path.dirname(head):
        out.append(head)
        head = os.path.dirname(head)
    return out[::-1]


_ERRNO = re.compile(r"\[errno (\d+)\]", re.IGNORECASE)


def _reason(exc: BaseException) -> str:
    """Why a write failed, in the system's words: Arrow's "Error writing bytes to file.
    Detail: [errno 28] No space left on device" is "No space left on device"."""
    code = next((int(m) for m in _ERRNO.findall(str(exc))), None)  # Arrow's OSError too
    if code:
        return os.strerror(code)
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else _line(exc)


def _commit(root: str, batch: str, parts: dict[tuple[str, str], dict[str, pa.Table]],
            errors: pa.Table | None, at: list[str],
            compacted: list[str] | None = None) -> dict[str, Any]:
    merged = bool(compacted)
    stamp = datetime.now(UTC)
    ms = pa.scalar(stamp, pa.timestamp("ms", tz="UTC"))
    at[0] = os.path.join(root, STAGING, batch, RUN_KIND)
    stage = mark_stage(root, batch, "compact" if merged else "ingest")
    planned: list[tuple[str, str, str]] = []  # table, staged path, final relative path
    counts = {t: 0 for t in TABLES}
    for (preset, month), tables in sorted(parts.items()):
        for table in PARTITIONED:
            t = tables.get(table)
            if t is None or t.num_rows == 0:
                continue
            if table == "matches":
                n = t.num_rows
                if not merged:
                    t = t.set_column(t.schema.get_field_index("ingested_at"), "ingested_at",
                                     pa.array([ms.value] * n, pa.timestamp("ms", tz="UTC")))
                t = t.set_column(t.schema.get_field_index("batch"), "batch",
                                 pa.array([batch] * n, pa.string()))
            rel = os.path.join(table, f"preset={preset}", f"month={month}",
                               f"part-{batch}.parquet")
            at[0] = os.path.join(stage, rel)
            planned.append((table, _stage(stage, rel, table, t, merged), rel))
            counts[table] += t.num_rows
    if errors is not None and errors.num_rows:
        n = errors.num_rows
        if not merged:
            errors = errors.set_column(errors.schema.get_field_index("ingested_at"),
                                       "ingested_at",
                                       pa.array([ms.value] * n, pa.timestamp("ms", tz="UTC")))
        errors = errors.set_column(errors.schema.get_field_index("batch"), "batch",
                                   pa.array([batch] * n, pa.string()))
        rel = os.path.join("errors", f"part-{batch}.parquet")
        at[0] = os.path.join(stage, rel)
        planned.append(("errors", _stage(stage, rel, "errors", errors, merged), rel))
        counts["errors"] += n
    if not planned:
        discard_tree(stage)
        return {}
    kept = {rel: list(fingerprint(staged)) for _t, staged, rel in planned}
    # the records' directory first: parts in place without it are a lost _batches, refused
    # (_refuse_lost_records), never a first commit cut short
    if not os.path.isdir(os.path.join(root, BATCHES)):
        os.makedirs(os.path.join(root, BATCHES), exist_ok=True)
        _fsync_dir(root)
    # before any file is in place: a crash from here on leaves parts that recover() knows
    # for this run's, where parts of no record that nothing names are refused
    try:  # never placed out of the archive
        refuse_linked_dirs(root, [rel for _t, _s, rel in planned])
    except ArchiveError:
        discard_tree(stage)  # nothing was placed: nothing for a clean-up to name
        raise
    at[0] = os.path.join(root, BATCHES, f"{batch}{INTENT}")
    note_intent(root, batch, "compact" if merged else "ingest", [batch],
                [rel for _t, _s, rel in planned])
    for _table, staged, rel in planned:
        final = at[0] = os.path.join(root, rel)
        makedirs_durable(os.path.dirname(final))
        os.replace(staged, final)
        _fsync_dir(os.path.dirname(final))
    record = {
        "batch": batch, "committed_at": stamp.isoformat(timespec="milliseconds"),
        "files": {t: [rel for tt, _s, rel in planned if tt == t] for t in TABLES},
        "rows": counts,
        "fingerprints": kept,  # [sha256, bytes] of each file, for `verify ARCHIVE`
    }
    if compacted:
        record["compacted"] = list(compacted)  # these batches' rows are this one's now
    makedirs_durable(os.path.join(root, BATCHES))
    at[0] = os.path.join(root, BATCHES, f"{batch}.json")
    _atomic_json(at[0], record)  # the commit point
    end_intent(root, batch)
    discard_tree(stage)
    return record


# The schemas as written: the column docs live in schema/archive.md, not in every file's footer
# (they were two thirds of it, 2.3 kB a file).
_STORED = {name: pa.schema([f.remove_metadata() for f in schema])
           for name, schema in SCHEMAS.items()}


def fingerprint(path: str) -> tuple[str, int]:
    """``(sha256 hex, size)`` of a file, read without following a final link: what a batch
    record keeps of each file it commits (:mod:`buraco_log.archive.fixity` checks them)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    h = hashlib.sha256()
    size = 0
    with open(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise OSError(f"{path}: not a regular file")
        while chunk := f.read(1 << 20):
            h.update(chunk)
            size += len(chunk)
    return h.hexdigest(), size


def stored_schema(table: str, t: pa.Table | None = None) -> pa.Schema:
    """The schema ``table`` is written with; for ``t``, with a column made nullable where
    ``t`` holds nulls the schema does not allow: rows of a file written before that column
    was added, which every reader reads as NULL, merged by `compact`."""
    schema = _STORED[table]
    if t is None:
        return schema
    return pa.schema([f.with_nullable(True) if not f.nullable and f.name in t.column_names
                      and t.column(f.name).null_count else f for f in schema])


def _stage(stage: str, rel: str, table: str, t: pa.Table, merged: bool = False) -> str:
    path = os.path.join(stage, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # rows an ingest checked fill every column; merged ones may hold NULLs of older files
    t = t.cast(stored_schema(table, t if merged else None))
    t = t.sort_by([(k, "ascending") for k in SORT_KEYS[table]])
    pq.write_table(t, path, **_write_options(table, t))
    with open(path, "rb+") as f:
        os.fsync(f.fileno())
    os.chmod(path, READ_ONLY)
    return path


def drop_games(t: pa.Table, games: set[int]) -> pa.Table:
    """``t`` without the rows of ``games`` (duplicates found after the check)."""
    import pyarrow.compute as pc  # here: a query never needs it
    if not games:
        return t
    mask = pc.invert(pc.is_in(t.column("game_id"), value_set=pa.array(sorted(games), pa.int64())))
    return t.filter(mask)


def batch_set_digest(root: str) -> str:
    """Names the committed contents: the derived ratings are current when this matches."""
    ids = "\n".join(sorted(m["batch"] for m in manifests(root)))
    return hashlib.sha256(ids.encode()).hexdigest()


def current_ratings(root: str) -> str | None:
    """Path of the stored ratings file, if it was computed over exactly the committed batches."""
    record = os.path.join(root, RATINGS, "current.json")
    try:
        meta = read_json(record, "ratings record")
    except ArchiveError:  # derived: computed again when its record is damaged
        return None
    name = meta.get("file") if isinstance(meta, dict) else None
    if not isinstance(name, str) or os.path.basename(name) != name or name in ("", ".", ".."):
        return None
    path = os.path.join(root, RATINGS, name)
    if meta.get("batches") != batch_set_digest(root) or not os.path.isfile(path) \
            or os.path.islink(path):
        return None
    return path


def write_ratings(root: str, table: pa.Table) -> str:
    """Store the ratings of the committed batches (temp file, rename, then the record)."""
    d = os.path.join(root, RATINGS)
    if os.path.islink(d):  # its old files are deleted below: never where a link leads
        raise ArchiveError(f"{d}: symbolic links are not allowed inside an archive")
    os.makedirs(d, exist_ok=True)
    digest = batch_set_digest(root)
    name = f"ratings-{digest[:16]}.parquet"
    tmp = os.path.join(d, f".tmp-{secrets.token_hex(4)}.parquet")
    try:
        pq.write_table(table, tmp, compression="zstd")
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, READ_ONLY)
        os.replace(tmp, os.path.join(d, name))
        _atomic_json(os.path.join(d, "current.json"), {"batches": digest, "file": name})
    except (OSError, pa.ArrowException) as exc:  # a full disk: the batches stay committed
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise ArchiveError(f"{d}: the ratings could not be stored ({_reason(exc)}); every batch "
                           "of this run is committed, and report computes the ratings until "
                           "the next ingest stores them") from None
    for old in os.listdir(d):  # earlier ratings and leftovers of an interrupted write
        if old != name and (old.startswith((".tmp-", "current.json.tmp-"))
                            or (old.startswith("ratings-") and old.endswith(".parquet"))):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(d, old))
    return os.path.join(d, name)
