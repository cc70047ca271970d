"""Record many live matches at once: group commit across logs, bounded handles, clean restarts.

A game server calls ``Recorder.append(match, event)`` (or ``await append_async(...)``) for
every move of every table. The event is validated at once, in the caller, and the call returns
once the event is durable. One committer thread gathers the appends of all tables that arrive
within ``window`` seconds (or until ``max_batch`` events are waiting), writes each touched log's
events as one segment with one ``pwrite``, then fsyncs every touched file concurrently from a
small pool of threads (``fsync`` releases the GIL, and the file system folds concurrent fsyncs
into one journal commit). Only then are the appends of that round acknowledged. Or, with
``sync="journal"``, the round's segments also go to one shared journal file, synced once, and
the logs are made durable later by checkpoints (``buraco_log.journal``). Which to choose, and
why: ``docs/recorder.md``.

The per-match files are ordinary logs (``schema/LOG_FORMAT.md``, unchanged), each written under
the writer lock of ``buraco_log.log`` (an exclusive ``flock`` on the file at its path). At most
``max_open`` of them are open at a time; the least recently used are closed and reopened on
their next move, and a reopened file must still be the very file that was closed (same device,
inode and size), otherwise the recorder re-reads it and continues only if it holds the same
events (a ``seal`` that rewrote it in between), else refuses the table.

A new match's file is written under a hidden temporary name (header and first segment), fsynced,
then linked into place, and the directory fsynced before the first event is acknowledged: no
log is ever seen empty or without its first event, and a failure to create leaves nothing
behind. Opening a recorder sweeps the temporary files a crash left (those nobody holds locked)
and, on each match's first use, cuts a torn tail (by construction never acknowledged).

The recorder leaves Python's garbage collector as it finds it. A server with thousands of
tables should set it itself: a move's objects live until its table's next move, seconds later,
so the default young thresholds scan them for nothing. ``gc.set_threshold(200_000)`` and
``gc.freeze()`` every few seconds took the p99 at 10,000 paced tables from about 30 ms to about
12 ms (``docs/recorder.md``; ``examples/server/server.py --gc-young --gc-freeze``).

Only the standard library and msgspec are used: this is core code.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes  # imported here, not at a round's syncfs: out of descriptors, an import fails
import errno
import fcntl
import os
import re
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, Final

import msgspec

from buraco_log import __version__, journal, log, signalmask
from buraco_log import events as ev
from buraco_log.errors import IllegalMoveError, LogFormatError
from buraco_log.state import State

try:  # (Unix; imported here, not when a message needs it: out of descriptors, imports fail)
    import resource
except ImportError:  # pragma: no cover
    resource = None  # type: ignore[assignment]

SUFFIX: Final = ".blog"
LOCK_NAME: Final = ".recorder.lock"
SAVED_NAME: Final = ".recorder.state"
"""Where the recorder saves the state of its mid-match tables (see :class:`Recorder`)."""
_TEMP = re.compile(r"^\..+\.[0-9a-f]{12}\.new$")
"""The hidden temporary names of ``log._create_temp`` (the Writer's) and of this module."""
_MATCH = journal.MATCH_NAME
_LOADERS: Final = 8
"""Matches read at once on first use (each holds two descriptors while it is read)."""
_RESERVED: Final = 2 + 2 * _LOADERS
"""Descriptors of ``max_open`` kept for the directory, its lock and the loaders."""
_CHECKPOINT_THREADS: Final = 4
"""Logs a checkpoint fsyncs at once (each holds a descriptor meanwhile)."""
_NO_DESCRIPTORS: Final = frozenset({errno.EMFILE, errno.ENFILE})
"""A log could not be opened for want of a descriptor (the process's limit, or the system's)."""
_REGROW: Final = 60.0
"""Seconds after the last shortage of descriptors before the pool is its full size again."""


def _soft_nofile() -> str:
    """The process's limit on open files, as a user sets it (``ulimit -n``)."""
    try:
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (AttributeError, OSError, ValueError):
        return "unknown"
    return "unlimited" if soft < 0 else str(soft)


def default_max_open() -> int:
    """Half the soft limit on open files, at most 4,096 (512 under the usual 1,024)."""
    try:
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (AttributeError, OSError, ValueError):  # (AttributeError: no resource module)
        soft = 1024
    if soft <= 0:  # RLIM_INFINITY is -1 on Linux
        soft = 8192
    return max(64, min(4096, soft // 2))


class FileOps:
    """The two operations that make data durable. Tests swap in a layer that records what was
    synced, to simulate a power loss (see tests/recorder/powerloss.py)."""

    def fsync(self, fd: int) -> None:
        os.fsync(fd)

    def fsync_dir(self, fd: int) -> None:
        os.fsync(fd)

    def datasync(self, fd: int) -> None:
        """Make a file's data durable (the journal of ``sync="journal"``, once a round)."""
        os.fdatasync(fd)

    def append(self, fd: int, data: bytes) -> None:
        """Append a round's records to the journal, all of them or raise
        (:func:`buraco_log.journal.append_all`)."""
        journal.append_all(fd, data)

    def syncfs(self, fd: int) -> None:
        """Write back and wait for every file of the file system holding ``fd`` (Linux)."""
        # (``ctypes`` is imported with the module: imported here, the first syncfs of a process
        # out of descriptors failed, "Too many open files", and every table of the round
        # refused from then on, the disk unharmed)
        libc = ctypes.CDLL(None, use_errno=True)
        if not hasattr(libc, "syncfs"):
            raise NotImplementedError("syncfs is Linux only")
        if libc.syncfs(fd) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))


class _Saved(msgspec.Struct, array_like=True, frozen=True):
    """Where one mid-match log stood when the recorder saved it: the file (device, inode) and
    its size, the events in it, the chain's head there, and the rules engine's state after
    them (None when the recorder does not validate)."""

    match: str
    device: int
    inode: int
    size: int
    events: int
    head: str
    sealed: bool
    state: State | None


_ENGINE: Final = f"{__version__} {' '.join(State.__struct_fields__)}"
"""What wrote the saved states: a state saved by another version of the engine is not used."""


class _SavedFile(msgspec.Struct, frozen=True):
    tables: list[_Saved]
    format: int = 1
    engine: str = ""


class _SavedFileOut(msgspec.Struct, frozen=True):
    """:class:`_SavedFile` as written: the same fields, its entries encoded one at a time (the
    saving thread lets the event loop and the committer run between them)."""

    tables: list[msgspec.Raw]
    format: int = 1
    engine: str = ""


_SAVED_DECODER = msgspec.msgpack.Decoder(_SavedFile)
# The periodic save hands the GIL over for _SAVE_PAUSE every _SAVE_SLICE tables (about 1 ms
# of its work). A sleep(0) hands it over only when the waiting thread wins the race for it: at
# 10,000 paced tables saving every 5 s, the slowest acknowledgement was 0.4 to 0.8 s with
# sleep(0), against 0.19 to 0.32 s with these pauses (1.2 to 1.65 s with the save in the
# committer). `python benchmarks/bench_recorder.py --tables 10000 --modes paced --save-every 5`
_SAVE_SLICE = 32
_SAVE_PAUSE = 0.001


_SAVED_PER_LOG: Final = 64 * 1024
"""The most bytes of saved state a log of the directory accounts for (an entry is about 5 kB):
a larger state file is no recorder's, and is not read."""


def _saved_limit(directory: str) -> int:
    """How large the state file of ``directory`` may be: one entry per log there, at most."""
    with os.scandir(directory) as entries:
        logs = sum(1 for e in entries if e.name.endswith(SUFFIX))
    return (logs + 1) * _SAVED_PER_LOG


def _read_saved(directory: str) -> dict[str, _Saved]:
    """The saved states of a directory; nothing if there are none or they cannot be read
    (they only make loading faster: every entry is checked against its log before use)."""
    try:  # a regular file only, opened without blocking: a FIFO there hung the recorder's
        # opening, and a link to /dev/zero was read until memory ran out
        with os.fdopen(log.open_log_fd(os.path.join(directory, SAVED_NAME)), "rb") as f:
            # bounded before it is read: a sparse 100 GiB file raised MemoryError out of the
            # recorder's constructor (and a dense one of a few GiB took that much memory)
            if os.fstat(f.fileno()).st_size > _saved_limit(directory):
                return {}
            saved = _SAVED_DECODER.decode(f.read())
    except (OSError, LogFormatError, msgspec.DecodeError, msgspec.ValidationError):
        return {}
    if saved.format != 1 or saved.engine != _ENGINE:
        return {}
    return {entry.match: entry for entry in saved.tables}


class RecorderStats(msgspec.Struct):
    """Counters since the recorder opened (read them with :meth:`Recorder.stats`)."""

    events: int = 0  # acknowledged events
    rounds: int = 0  # group commits
    fsyncs: int = 0  # file fsyncs (one per file touched in a round; none with syncfs)
    syncfs: int = 0  # syncfs calls (one per round with sync="syncfs")
    dir_fsyncs: int = 0  # one per round that created logs
    created: int = 0  # new logs
    loaded: int = 0  # existing logs read on first use
    resumed: int = 0  # of those, read from their saved state (only the events after it)
    saves: int = 0  # times the tables' states were saved
    reopened: int = 0  # closed idle logs opened again
    closed_idle: int = 0  # logs closed to stay under max_open or after idle_timeout
    open_handles: int = 0  # log descriptors open now
    pool: int = 0  # logs kept open at most now: max_open less its reserve, lowered for a while
    # when the process ran out of descriptors (see short_of_descriptors)
    short_of_descriptors: int = 0  # rounds that could not open a log for want of a descriptor
    # (EMFILE, ENFILE): logs were closed to make room, and its moves went into the next round
    tables: int = 0  # matches held in memory now, each with its rules state (see held())
    max_open_handles: int = 0  # the most ever open at once
    swept: int = 0  # temporary files a crash left, removed at open
    torn_cut: int = 0  # torn tails (never acknowledged) cut on first use
    failed: int = 0  # appends that were refused after validation (I/O)
    journal_syncs: int = 0  # journal syncs (one per round with sync="journal")
    checkpoints: int = 0  # journals retired: their logs fsynced, then the journal removed
    checkpoint_fsyncs: int = 0  # log fsyncs made by checkpoints (none where syncfs does it)
    checkpoint_failures: int = 0  # checkpoints that failed (their journal is kept)
    recovered: int = 0  # journal records written back into their logs at open
    recreated: int = 0  # of those, logs created again (a power loss took their name)
    journal_conflicts: int = 0  # journal records left unapplied at open (see journal.py)
    journal_withdrawn: int = 0  # journal records of refused appends, not written back at open
    journal_withdrawals: int = 0  # records withdrawn: their appends were refused after all
    journal_backlog: int = 0  # journals a checkpoint failed to retire, to be retried (now)


class _WriteError(Exception):
    """A failed write, saying whether bytes may have reached the log, and whether the log no
    longer holds moves the recorder acknowledged (``lost``: another program put an older copy
    or another file in its place); ``keep``: the bytes of the held descriptor that are the
    acknowledged log, to copy aside before it is closed (the file was replaced, not cut)."""

    def __init__(self, error: LogFormatError, written: bool, *, lost: bool = False,
                 keep: int | None = None, short: bool = False) -> None:
        super().__init__(error.message)
        self.error = error
        self.written = written
        self.lost = lost
        self.keep = keep
        self.short = short  # not opened for want of a descriptor: nothing written


class _Waiter:
    """Something to tell when an append is durable: a thread future or an asyncio future."""

    __slots__ = ("future", "loop", "seq")

    def __init__(self, seq: int, future: Any, loop: asyncio.AbstractEventLoop | None) -> None:
        self.seq = seq
        self.future = future
        self.loop = loop


class _Table:
    """One match: its validator and in-memory state, its file, its pending events."""

    __slots__ = (
        "broken",
        "chain",
        "dead",
        "end",
        "ended",
        "exists",
        "expect",
        "fd",
        "fresh",
        "head",
        "identity",
        "lock",
        "match",
        "match_id",
        "next_seq",
        "path",
        "pending",
        "ready",
        "sealed",
        "stamp",
        "tail",
        "tmp",
        "unresolved",
        "used",
        "validator",
        "waiters",
        "whole",
    )

    def __init__(self, match: str, path: str) -> None:
        self.match = match
        self.path = path
        self.lock = threading.Lock()  # guards validator, expect, pending, waiters
        self.validator: Any = None
        self.expect = log.FIRST_SEQ  # seq of the next event, pending ones included
        self.pending: list[bytes] = []  # encoded events not yet handed to the committer
        self.waiters: list[_Waiter] = []
        self.dead = False  # dropped from the recorder: callers look the match up again
        self.ready = False  # read from its log (or found new): see Recorder.loaded
        self.ended = False  # MatchEnded was accepted: forget the table once it is durable
        self.unresolved = 0  # appends accepted and not yet acknowledged or failed
        self.broken: str | None = None  # a write or fsync failed: refuse everything
        self.match_id: str | None = None  # the match id it holds (see Recorder._claim)
        # Owned by the committer thread from here on.
        self.exists = False  # the log is linked at its path
        self.fresh = False  # read from its log, no round since (see Recorder._open_all)
        self.sealed = True
        self.chain: Any = log.chain_start()
        self.next_seq = log.FIRST_SEQ  # seq of the next event written to the file
        self.end = log.HEADER_SIZE  # file size after the last written segment
        self.identity: tuple[int, int] = (0, 0)
        self.stamp: tuple[int, int] | None = None  # (ctime_ns, mtime_ns) when last closed
        self.head = b""  # the log's first bytes, and its last ones (up to ``end``): what the
        self.tail = b""  # reopening compares (see Recorder._reopen)
        self.whole = False  # the tail is the last segment written, whole
        self.fd: int | None = None
        self.tmp: str | None = None  # temporary name while the new log is not yet linked
        self.used = 0.0


def sweep_temporaries(directory: str | os.PathLike[str]) -> list[str]:
    """Remove the hidden temporary files (``.NAME.HEX.new``) a crash left in ``directory``.

    A temporary file still being written is locked by its writer and is left alone, so this
    is safe while other writers run. Returns the paths removed.
    """
    directory = os.fspath(directory)
    dir_fd = os.open(directory, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return _sweep(directory, dir_fd)
    finally:
        os.close(dir_fd)


def _sweep(directory: str, dir_fd: int) -> list[str]:
    """``sweep_temporaries`` of the directory ``dir_fd`` holds (named by ``directory``'s
    path): by the path, another directory put there meanwhile had its files removed. Never
    through a symbolic link (one put at a temporary name had the file it named locked), and
    only the file locked (another put at the name meanwhile is left)."""
    removed = []
    with os.scandir(dir_fd) as entries:
        names = [e.name for e in entries
                 if _TEMP.match(e.name) and e.is_file(follow_symlinks=False)]
    for name in names:
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW,
                         dir_fd=dir_fd)
        except OSError:  # gone, or a link put there since
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        try:
            if _identity(fd) == _identity_at(dir_fd, name):
                os.unlink(name, dir_fd=dir_fd)  # unlinked while locked: no writer can be
                removed.append(os.path.join(directory, name))  # mid-way
        except FileNotFoundError:
            pass
        finally:
            os.close(fd)
    return removed


def _identity_at(dir_fd: int, name: str) -> tuple[int, int] | None:
    """The (device, inode) at ``name`` in the directory ``dir_fd`` holds (a link's own)."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def journal_notes(directory: str | os.PathLike[str]) -> list[str]:
    """What a reader of ``directory``'s logs should know of recorder journals there: a journal
    a stopped recorder left (acknowledged events its logs may lack until a recorder opens the
    directory again), or one kept unfolded (events that could not be written back). Empty
    when there is nothing to say (no journal, or a recorder at work: its journal is live)."""
    directory = os.fspath(directory)
    try:
        pending = journal.generations(directory)
        unfolded = journal.generations(directory, unfolded=True)
    except OSError:
        return []
    notes = []
    if pending and not _recorder_running(directory):
        notes.append(
            f"{directory}: a recorder stopped without folding its journal "
            f"({os.path.basename(pending[-1][1])}): these logs may lack acknowledged moves "
            "until a recorder opens the directory again, or `buraco-log fold "
            f"{directory}` folds them (a copy of a live directory: its journal names the "
            "original logs, and only fold writes them into the copies; docs/recorder.md)"
        )
    for _, path in unfolded:
        notes.append(
            f"{path}: moves a recorder could not write back, their "
            "logs having been rewritten or replaced by another program (or copied, with "
            "the directory) or the journal damaged: "
            f"`buraco-log fold {directory}` folds in what continues them, once no recorder "
            "runs there (docs/recorder.md)"
        )
    with contextlib.suppress(OSError), os.scandir(directory) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if _KEPT.match(entry.name):
                notes.append(
                    f"{entry.path}: a log as a recorder acknowledged it, kept when another "
                    "program replaced the log under it (docs/recorder.md)")
    return notes


_KEPT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.@+=-]*\.blog\.acknowledged(\.[0-9]+)?$")
"""The copies :meth:`Recorder._keep_acknowledged` makes (``LOG.acknowledged``, ``.1``, ...)."""


def _recorder_running(directory: str) -> bool:
    try:  # without blocking: a FIFO by that name hung `audit DIR`
        fd = os.open(os.path.join(directory, LOCK_NAME),
                     os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def _identity(fd: int) -> tuple[int, int] | None:
    """The (device, inode) ``fd`` names; None if it is closed."""
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return st.st_dev, st.st_ino


_HEAD: Final = 64
"""Bytes of a log's start the reopening compares: its header and its first segment's head,
with the first events' chain digest (sealed) or their checksum (unsealed): the match."""
_TAIL: Final = 512
"""At most this much of the last segment written is kept to compare (all of a usual one)."""


def _ends(fd: int, size: int) -> tuple[bytes, bytes]:
    """The first and last bytes of the log ``fd`` holds, ``size`` bytes long."""
    return os.pread(fd, min(_HEAD, size), 0), os.pread(fd, min(_HEAD, size), max(size - _HEAD, 0))


def _same_ends(fd: int, table: _Table) -> bool:
    """The file ``fd`` ends (at ``table.end``) and starts with the bytes the table knows. The
    last segment of a sealed log, whole, is enough: its chain digest covers every event
    before it (one ``pread``); else the start tells the match."""
    head, tail = table.head, table.tail
    if os.pread(fd, len(tail), table.end - len(tail)) != tail:
        return False
    return (table.whole and table.sealed) or os.pread(fd, len(head), 0) == head


def _ends_as_written(path: str, fd: int | None, end: int, head: bytes, tail: bytes,
                     identities: tuple[tuple[int, int], ...]) -> bool:
    """The file at ``path`` is one of ``identities``, at least ``end`` bytes long, starts with
    ``head`` and holds ``tail`` (the last segment the recorder wrote, or its end) just before
    ``end``: the checkpoint's check of a log. The size alone took another file copied in
    place (``cp``, the same inode) of the same or a larger size for the log; its last segment
    (a sealed one's chain digest) tells them apart, and, once the recorder wrote a move after
    the copy, its first bytes (the match) do. Two ``pread``s, through the log's open
    descriptor ``fd`` where there is one (another thread's: closed or taken by another file
    meanwhile, the bytes differ or the read fails, and the caller reads the log whole), else
    the file is opened."""
    opened = None
    try:
        if fd is None:
            fd = opened = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            st = os.fstat(fd)
        else:
            st = os.stat(path)
        return (st.st_size >= end and (st.st_dev, st.st_ino) in identities
                and os.pread(fd, len(tail), end - len(tail)) == tail
                and os.pread(fd, len(head), 0) == head)
    except OSError:
        return False
    finally:
        if opened is not None:
            os.close(opened)


def _lock_current(path: str) -> tuple[int, tuple[int, int], int, tuple[int, int]] | None:
    """Open and lock the file at ``path`` with ``log.LogLock`` (the one writer-lock discipline:
    the locked file is the one at ``path``). Returns the descriptor, its (device, inode), its
    size and its (ctime_ns, mtime_ns); None if there is no file."""
    try:
        quick = _lock_quickly(path)
    except OSError:  # out of descriptors: a new match needs none until its first round
        if not os.path.lexists(path):
            return None
        raise
    if quick is not None:
        return quick
    try:
        lock = log.LogLock(path)
    except LogFormatError:
        if not os.path.lexists(path):
            return None
        raise
    fd, lock.fd = lock.fd, None  # the recorder owns the locked descriptor from here
    assert fd is not None
    st = os.fstat(fd)
    return fd, lock.identity, st.st_size, (st.st_ctime_ns, st.st_mtime_ns)


def _lock_quickly(path: str) -> tuple[int, tuple[int, int], int, tuple[int, int]] | None:
    """``_lock_current`` for the usual case, in four calls: the regular file at ``path``, locked
    at once, still at ``path`` once locked (``log.LogLock``'s own checks, without its extra
    ones). None for anything else (no file, held, replaced meanwhile, not a regular file):
    ``log.LogLock`` then decides, and says why. A journal round reopens its closed logs before
    the journal names them, on the round's way: this halves what that costs (23 against 52 us
    a log on a loaded machine)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno in _NO_DESCRIPTORS:  # ``log.LogLock`` would meet the same, and say less
            raise
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        st = os.fstat(fd)
        at = os.stat(path)
        if stat.S_ISREG(st.st_mode) and (at.st_dev, at.st_ino) == (st.st_dev, st.st_ino):
            return fd, (st.st_dev, st.st_ino), st.st_size, (st.st_ctime_ns, st.st_mtime_ns)
    except OSError:
        pass
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    return None


class _Work:
    """One log's share of a round: its events, who waits for them, and how it went."""

    __slots__ = (
        "adopted", "began", "chain", "created", "data", "encoded", "error", "ident", "journaled",
        "new", "offset", "prior", "reopened", "settled", "spend", "synced", "table", "waiters",
    )

    def __init__(self, table: _Table, waiters: list[_Waiter], encoded: list[bytes]) -> None:
        self.table = table
        self.waiters = waiters
        self.encoded = encoded
        self.data = b""  # the segment (after the file header, for a new log)
        self.chain: Any = None  # the log's chain once the segment is written
        self.prior: Any = None  # and before it (a refused round is cut off again)
        self.offset = 0
        self.new = False
        self.ident = (0, 0)  # the file named by its journal record
        self.journaled: journal.Record | None = None  # its last journal record
        self.error: _WriteError | None = None
        self.reopened = False
        self.adopted = False  # reopened into a file a seal rewrote while it was closed
        self.spend = False  # its record is preceded by a withdrawal of the file's earlier ones
        self.began = False  # its segment's write into the log began
        self.synced = False
        self.created = False
        self.settled = False  # its waiters were failed or acknowledged, and counted


def _fsync_failed(table: _Table, exc: OSError, cut: bool = False) -> LogFormatError:
    return LogFormatError(
        f"fsync failed: {exc.strerror or exc}; not retried, " + (
            "these moves were not recorded (cut off the log again)" if cut else
            "the last events may not be on disk (reopen the log to see what was kept)"),
        path=table.path,
        kind="io",
    )


class Recorder:
    """The durable recorder of many matches, one log per match in ``directory``.

    ``append(match, event)`` validates ``event`` (the rules engine, unless ``validate=False``)
    and returns its seq once it is on disk; events of all matches arriving within ``window``
    seconds share one round of fsyncs. ``submit`` returns a future instead, and
    ``append_async`` is the same for asyncio code. A refused event (illegal move, wrong seq)
    raises at once and changes nothing. An I/O failure fails that match's waiting appends with
    a ``LogFormatError`` (kind ``io``) and refuses the match from then on; other matches go on.

    ``sync="fsync"`` (the default) fsyncs each file touched in a round, ``sync_threads`` at a
    time. ``sync="syncfs"`` makes a round durable with one ``syncfs`` of the file system
    instead: far less CPU per event, but it also waits for every other program's dirty data
    on that file system, and an error cannot be pinned on one file (every match of the round
    is refused from then on). Use it for a file system that holds only the logs (Linux 5.8 or
    later reports write-back errors through ``syncfs``). ``sync="journal"`` appends each round
    to a shared journal (``buraco_log.journal``) and syncs that one file; the logs get the same
    bytes unsynced, and are made durable in the background (one ``syncfs``) every
    ``checkpoint_every`` seconds (or ``checkpoint_bytes`` of journal), which retires the
    journal. Far fewer syncs; but after a power loss, an acknowledged event written since the
    last checkpoint may be only in the journal. The next recorder to open the directory (any
    ``sync``) writes it back into its log; other readers of the logs miss it until then.

    Matches are named by their file: ``directory/<match>.blog``. A recorder holds
    ``directory/.recorder.lock`` for its life, so two recorders never share a directory.
    The log's name is the table's, never its ``match_id``: two tables that start the same match
    id write two logs. With ``unique_match_ids``, a second table starting (or loading) a match
    id that a live table holds is refused (``LogFormatError`` kind ``duplicate``, naming the
    id and the table holding it); a table lets go of its id when it ends, is forgotten or
    fails. Off by default: load generators replay one match in many tables.

    Every ``save_every`` seconds (0: never) and at ``close``, the rules engine's state of each
    mid-match table is saved to ``directory/.recorder.state`` with where its log stood (file,
    size, seq, chain head). After a restart a match then loads from its saved state: its log is
    still read and checked whole (checksums, seq order, chain), but only the events written
    after the save are decoded and replayed. An entry that does not match its log exactly is
    ignored, and the log is read as if there were none.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        window: float = 0.002,
        max_batch: int = 8192,
        max_open: int | None = None,
        sync_threads: int = 16,
        sync: str = "fsync",
        idle_timeout: float = 60.0,
        validate: bool = True,
        sealed: bool = True,
        repair_torn: bool = True,
        ops: FileOps | None = None,
        save_every: float = 60.0,
        checkpoint_every: float = 10.0,
        checkpoint_bytes: int = 64 << 20,
        unique_match_ids: bool = False,
    ) -> None:
        self.directory = os.path.abspath(os.fspath(directory))
        if "\0" in self.directory:  # os said only "embedded null byte", naming nothing
            raise ValueError(f"the recorder's directory {self.directory!r} holds a NUL byte, "
                             "which no file name may hold")
        if not window <= _MAX_WINDOW:  # inf stopped the committer, 1e9 held every append
            raise ValueError(f"window must be a number of seconds up to {_MAX_WINDOW:g}, "
                             f"not {window!r}")
        self.window = max(0.0, window)
        for knob, value in (("idle_timeout", idle_timeout), ("save_every", save_every),
                            ("checkpoint_every", checkpoint_every)):
            if value != value:  # NaN: idle_timeout closed every log after every round (each
                # move reopened its log), checkpoint_every checkpointed every round
                raise ValueError(f"{knob} must be a number of seconds, not {value!r}")
        self.max_batch = max(1, max_batch)
        if sync not in ("fsync", "syncfs", "journal"):
            raise ValueError(f"sync must be 'fsync', 'syncfs' or 'journal', not {sync!r}")
        self.sync = sync
        # A journal and its checkpoint's fsyncs hold a few more descriptors. They count in the
        # least max_open too: below 27 with the journal no log had a slot, and no round ever
        # took an append (every append waited forever).
        extra = 2 + _CHECKPOINT_THREADS if sync == "journal" else 0
        self.max_open = max(_RESERVED + extra + 2,
                            max_open if max_open is not None else default_max_open())
        self._slots = self.max_open - _RESERVED - extra  # log descriptors open at most
        self._full_slots = self._slots  # (lowered for a while by a shortage: see _shed)
        self._short_at = 0.0  # when the process last ran out of descriptors (monotonic)
        self._pool = ThreadPoolExecutor(max(1, sync_threads), thread_name_prefix="recorder-sync")
        self._threads = max(1, sync_threads)
        self._ckrun = ThreadPoolExecutor(1, thread_name_prefix="recorder-checkpoint")
        self._ckio = ThreadPoolExecutor(_CHECKPOINT_THREADS, thread_name_prefix="recorder-ckio")
        self._saver = ThreadPoolExecutor(1, thread_name_prefix="recorder-save")
        self.idle_timeout = idle_timeout
        self.validate = validate
        self.sealed = sealed
        self.repair_torn = repair_torn
        self._ops = ops or FileOps()
        self._stats = RecorderStats()
        self._tables: dict[str, _Table] = {}
        self.unique_match_ids = unique_match_ids
        self._ids: dict[str, str] = {}  # match id -> the table holding it (guarded by _cv)
        self._open: OrderedDict[str, _Table] = OrderedDict()  # LRU of tables with a descriptor
        self._dirty: dict[str, _Table] = {}  # tables with pending events, in arrival order
        self._waiting = 0  # pending events not yet taken by the committer
        self._unresolved = 0  # accepted appends not yet acknowledged or failed
        self._loaders = threading.BoundedSemaphore(_LOADERS)
        self._first_at = 0.0  # when the oldest pending event arrived
        lock = threading.Lock()
        self._cv = threading.Condition(lock)  # appends resolved: flush, forget, close
        self._wake = threading.Condition(lock)  # the committer's: work arrived
        self._closing = False
        self._closed = False
        self._close_lock = threading.Lock()  # one close at a time (two closed fds twice)
        self._failed: str | None = None  # the committer stopped on a defect
        self._forget: list[_Table] = []  # ended tables to close and drop (committer's job)
        self._retiring: dict[str, _Table] = {}  # forgotten, appends not yet settled (_retired)
        self._fd_lock = threading.Lock()  # taking a log's descriptor to close it (_close_fd)
        if os.path.lexists(self.directory) and not os.path.isdir(self.directory):
            # makedirs said only "File exists"
            raise NotADirectoryError(errno.ENOTDIR, "not a directory (the recorder writes one "
                                     "log per match into a directory)", self.directory)
        made = []  # the directories makedirs creates, deepest first
        up = self.directory
        while not os.path.lexists(up) and os.path.dirname(up) != up:
            made.append(up)
            up = os.path.dirname(up)
        os.makedirs(self.directory, exist_ok=True)
        for path in reversed(made):  # each new directory's name, before any log in it is
            parent_fd = os.open(os.path.dirname(path), os.O_RDONLY | os.O_CLOEXEC)  # acked
            try:
                self._ops.fsync_dir(parent_fd)
            finally:
                os.close(parent_fd)
        # The directory first, then its lock through it: opened by the path after the lock, a
        # directory put at the path in between (``mv logs old; mkdir logs``) was the one the
        # recorder wrote, and the one it locked another's: a second recorder took that one.
        self._dir_fd = os.open(self.directory, os.O_RDONLY | os.O_CLOEXEC)
        try:
            self._lock_fd = self._take_lock()
        except BaseException:
            os.close(self._dir_fd)
            raise
        # what ``close`` checks a number still names before it closes it
        self._identities = {"_dir_fd": _identity(self._dir_fd),
                            "_lock_fd": _identity(self._lock_fd)}
        self._stats.swept = len(_sweep(self.directory, self._dir_fd))
        self._jfd: int | None = None  # the journal rounds append to (sync="journal")
        self._jsize = 0
        try:
            self._recover()  # before any log is read: the journals complete them
            if sync == "journal":
                self._jfd = journal.create(self.directory, self._dir_fd, self._jgen, self._ops)
                self._jsize = journal.HEADER_SIZE
        except (ValueError, OSError) as exc:  # let go of the directory: nothing was started
            os.close(self._dir_fd)
            os.close(self._lock_fd)
            kept = ("" if isinstance(exc, ValueError) else "; every journal not written back "
                    "is kept, written back when a recorder opens the directory again")
            raise LogFormatError(
                f"cannot write back or start the recorder's journal: {exc}{kept}",
                path=self.directory, kind="version" if isinstance(exc, ValueError) else "io",
            ) from None
        self.checkpoint_every = max(0.0, checkpoint_every)
        self.checkpoint_bytes = max(1, checkpoint_bytes)
        self._jopened = time.monotonic()
        # logs written since the journal was started, each with the table that wrote it last
        # (what the checkpoint compares the file at the path with, see _retire)
        self._jdirty: dict[str, _Table] = {}
        self._jretiring: dict[str, _Table] = {}  # those of the journal being retired
        self._jlingering: set[str] = set()  # those of journals a checkpoint failed to retire
        # Journals whose checkpoint failed for a reason that passes (no descriptor to open a
        # log, the journal's removal refused), each with its logs: every later checkpoint
        # retires them with its own, as if the journal had gone on (they stayed until the next
        # recorder opened the directory, and `audit` of a stopped site said its logs may lack
        # acknowledged moves). One whose sync failed is not retried: the kernel may have
        # dropped the bytes it could not write, and a later sync says nothing of them.
        self._jbacklog: list[tuple[int, dict[str, _Table]]] = []
        self._jstuck: set[str] = set()  # the logs of journals kept for the next recorder
        self._jtried = 0.0  # when the backlog was last tried (monotonic)
        self._junfolded: set[str] = set()  # those of journals a checkpoint kept as *.unfolded
        # logs found without moves the recorder acknowledged (another program put an older
        # copy in place): a journal that wrote them is kept as *.unfolded, not deleted
        self._spoiled: set[str] = set()
        self._checkpoint: Future[None] | None = None  # the one running, if any
        self.save_every = max(0.0, save_every)
        self._next_save = time.monotonic() + self.save_every
        self._saved = _read_saved(self.directory)  # taken out as their matches load
        for entry in self._saved.values():  # mid-match tables not loaded yet hold their ids
            if entry.state is not None and entry.state.match_id and unique_match_ids:
                self._ids.setdefault(entry.state.match_id, entry.match)
        self._saving: Future[None] | None = None  # the periodic save running, if any
        self._committer = threading.Thread(target=self._run, name="recorder-commit", daemon=True)
        try:  # last: a recorder refused before holds no thread (nor, here, the directory)
            self._start_threads(directory, self._committer)
        except LogFormatError:
            if self._jfd is not None:  # (an empty journal: the next recorder removes it)
                os.close(self._jfd)
            self._let_go_of_directory()
            raise

    def _start_threads(self, directory: str | os.PathLike[str],
                       committer: threading.Thread) -> None:
        """Start the threads the rounds use now, not at a round: a thread that cannot start
        (the process at its limit on memory, ``ulimit -v``, or on threads) failed the round
        "recorder error: RuntimeError("can't start new thread")", and every table of it
        refused from then on (500 tables of the example server under ``ulimit -v 200000``,
        ``MALLOC_ARENA_MAX=2``, all but 3 moves). Now the recorder does not open."""
        pools = [(self._pool, 1 if self.sync == "journal" else self._threads), (self._saver, 1)]
        if self.sync == "journal":
            pools.append((self._ckrun, 1))  # (its fsyncs' threads only where no syncfs is)
        try:
            for pool, count in pools:
                _start(pool, count)
            committer.start()
        except RuntimeError as exc:
            for pool in (self._pool, self._ckrun, self._ckio, self._saver):
                pool.shutdown(wait=False)
            raise LogFormatError(
                f"cannot start the recorder's threads ({exc}): the process is at its limit on "
                "threads or memory (ulimit -u, ulimit -v: each thread reserves its stack, and "
                "the C library up to 64 MiB of address space more, MALLOC_ARENA_MAX); raise "
                "it, or lower sync_threads", path=os.fspath(directory), kind="io") from None

    def _take_lock(self) -> int:
        """Open and lock the recorder's lock file in the directory it holds; its descriptor.
        Never through a symbolic link (``O_NOFOLLOW``): a dangling one there had the file it
        named made, in whatever directory it named."""
        named = os.path.join(self.directory, LOCK_NAME)
        try:
            fd = os.open(LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW,
                         0o666, dir_fd=self._dir_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise LogFormatError(
                    "a symbolic link, not the recorder's lock file (a recorder never follows "
                    "one there: remove it)", path=named, kind="filetype") from None
            raise type(exc)(exc.errno, exc.strerror, named) from None  # (it named the path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = ""
            with contextlib.suppress(OSError, ValueError):  # (a recorder of another version
                holder = f" (process {int(os.pread(fd, 32, 0))})"  # writes none)
            os.close(fd)
            raise LogFormatError(
                f"another recorder{holder} is using this directory (one recorder a directory: "
                f"it holds {LOCK_NAME} while it runs)", path=self.directory, kind="locked"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        with contextlib.suppress(OSError):  # who holds it, for the refusal above (a hint only;
            # written only into the recorder's own small file, never into a file of two names)
            st = os.fstat(fd)
            if stat.S_ISREG(st.st_mode) and st.st_nlink == 1 and st.st_size <= 64:
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return fd

    # -- public API
    def path_of(self, match: str) -> str:
        """The log file of ``match``."""
        # fullmatch: ``$`` alone also matches before a final newline ("t\n" made "t\n.blog")
        if not isinstance(match, str) or not _MATCH.fullmatch(match):
            raise LogFormatError(
                f"match name {match!r} is not a safe file name (letters, digits, _.@+=-; "
                "at most 200; not starting with a dot or dash)",
                kind="validate",
            )
        return os.path.join(self.directory, match + SUFFIX)

    def next_seq(self, match: str) -> int:
        """The seq the next event of ``match`` must carry (loading the match if needed).

        A table that refuses every move raises what an append raises: its log may or may not
        hold the refused move, so no seq is right (it counted the refused move: a site that
        went on from it skipped a seq). ``forget`` reads the match again from its log."""
        self._refuse_closed()  # a closed recorder no longer holds the directory: reads nothing
        while True:
            table = self._table(match)
            with table.lock:
                if table.dead:
                    continue  # dropped meanwhile: look it up again
                if table.broken is not None:
                    raise LogFormatError(table.broken, path=table.path, kind="io")
                expect = table.expect
                self._drop_unused(table)
                return expect

    def loaded(self, match: str) -> bool:
        """True when ``match`` is in memory, read from its log: an append or ``next_seq`` of it
        reads no file now. Otherwise its first use opens and reads its log, replaying it
        whole (65 ms for 43,000 events), and an ended match's log is read again at each use
        (it is not kept). An asyncio caller makes such a call from a thread, not in its event
        loop, whose other tasks it would hold up meanwhile (see the example server)."""
        table = self._tables.get(match)
        return table is not None and table.ready and not table.dead

    def submit(self, match: str, event: ev.AnyEvent) -> Future[int]:
        """Validate ``event`` now and return a future of its seq, set once it is durable."""
        future: Future[int] = Future()
        self._enqueue(match, event, future, None)
        return future

    def append(self, match: str, event: ev.AnyEvent) -> int:
        """Validate and record ``event``; return its seq once it is durable."""
        self._not_in_callback("append")
        return self.submit(match, event).result()

    async def append_async(self, match: str, event: ev.AnyEvent) -> int:
        """``append`` for asyncio: validation runs in the loop, the wait does not block it."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[int] = loop.create_future()
        self._enqueue(match, event, future, loop)
        return await future

    def forget(self, match: str) -> None:
        """Drop a match from memory once its accepted events are durable (an abandoned match;
        an ended one is forgotten by itself); a later append loads it again from its log.

        It takes effect before it returns: the log is closed (its writer lock let go), the
        match id freed, and the next append reads the match again from its log. (The commit
        thread did it at its next round: meanwhile an append still went to the forgotten table,
        which then lived on without its match id, and a seal or repair of the log was refused
        as locked.) An append of the match being checked meanwhile is waited for, and so are
        the appends accepted before it: a round or two, never more. An append that comes after
        (another thread's) goes to the match read afresh from its log, once those are durable.
        (It waited until no append of the match was unsettled: while another thread kept
        appending, for as long as that went on.)"""
        self._not_in_callback("forget")
        table = self._tables.get(match)
        if table is None:
            return
        with table.lock:  # no append of it is checked meanwhile, nor queued from now on
            if table.dead:
                return  # dropped meanwhile (failed, ended, forgotten)
            with self._cv:
                # Out of the lookup at once: a later append loads the match afresh (waiting
                # for this table's accepted appends first, see _table). Its match id is held
                # until they are settled.
                table.dead = True
                if self._tables.get(match) is table:
                    del self._tables[match]
                    self._retiring[match] = table
        self._retired(table)

    def _retired(self, table: _Table, wait: bool = True) -> bool:
        """Close a forgotten table's log and free its match id once its accepted appends are
        settled (durable or failed), waiting for that with ``wait``; True when done. Whoever
        gets there first does it: ``forget``, or the next append of the match (should the
        ``forget`` have been interrupted)."""
        with self._cv:
            while table.unresolved and wait and self._committer.is_alive():
                self._cv.wait(_MAX_WAIT)
            if table.unresolved and self._committer.is_alive():
                return False
        # Closed here: with nothing of it unsettled, and dead, no round has it or can take
        # it; the committer's closes of idle logs and this one each take the descriptor under
        # ``_fd_lock``, so it is closed once.
        self._close_fd(table)
        with self._cv:
            if self._retiring.get(table.match) is table:
                del self._retiring[table.match]
            self._release(table)
            self._cv.notify_all()
        return True

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until no accepted append is waiting (all durable or failed); False on timeout.
        Under constant load from other threads this waits for a quiet moment."""
        self._not_in_callback("flush")
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cv:
            while self._unresolved:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cv.wait(None if left is None else min(left, _MAX_WAIT))
        return True

    def stats(self) -> RecorderStats:
        """A copy of the counters."""
        with self._cv:
            self._stats.open_handles = len(self._open)
            self._stats.tables = len(self._tables)
            self._stats.pool = self._slots
            return msgspec.structs.replace(self._stats)

    def held(self) -> int:
        """The matches held in memory now (about 11 kB each, with its rules state): a match is
        held from its first use until it ends or is forgotten, whether or not its players are
        still there. What a server caps, site-wide (see the example server)."""
        return len(self._tables)

    def close(self) -> None:
        """Make everything submitted durable, then close every log and release the lock.
        A second call (from any thread) waits for the first to finish and returns."""
        self._not_in_callback("close")
        with self._close_lock:
            # Two threads closing at once both went past ``_closed`` and closed every
            # descriptor twice: OSError EBADF, or worse, a number reused meanwhile by
            # another file of the process (another recorder's lock) was closed.
            if not self._closed:
                self._close()

    def _close(self) -> None:
        with self._cv:
            self._closing = True
            self._cv.notify_all()
            self._wake.notify_all()
        self._committer.join()
        if self._saving is not None:  # one writer of the state file at a time
            with contextlib.suppress(Exception):
                self._saving.result()
        self._saver.shutdown(wait=True)
        with contextlib.suppress(Exception):  # a state not saved only slows the next start
            self._save_states()
        self._pool.shutdown(wait=True)
        with contextlib.suppress(Exception):  # only keeps more: never stops close
            self._keep_replaced()
        # A checkpoint that raised (a defect: its OSErrors are caught) stopped close here: the
        # logs and the directory lock were never let go, and every later close raised again.
        failed: BaseException | None = None
        if self._checkpoint is not None:
            try:
                self._checkpoint.result()
            except Exception as exc:
                failed = exc
        if self._jfd is not None:  # the last checkpoint: the logs are complete on their own
            fd, self._jfd = self._jfd, None
            try:
                self._retire(fd, self._jgen, self._jdirty)
            except Exception as exc:
                failed = failed or exc
        self._ckrun.shutdown(wait=True)
        self._ckio.shutdown(wait=True)
        for table in list(self._open.values()):
            self._close_fd(table)
        for table in self._tables.values():
            if table.tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(os.path.basename(table.tmp), dir_fd=self._dir_fd)
        self._let_go_of_directory()
        if failed is not None:  # the journal was kept: the next recorder writes it back
            raise LogFormatError(
                f"the recorder's last checkpoint failed ({failed!r}); its journal is kept, and "
                "the next recorder to open the directory writes it back into the logs",
                path=self.directory, kind="io") from failed

    def _keep_replaced(self) -> None:
        """At ``close``, before the last checkpoint: a log that another program cut or replaced
        since its last round (an older copy put back) had no move to find it, and its
        acknowledged moves went with the descriptor and the retired journal. Kept as a move
        would have kept them (``_keep_acknowledged``): a ``stat`` a table (and an ``fstat`` an
        open one), once. Not when the directory itself went (renamed, another put at its
        path): the logs went with it, none replaced, and a copy "kept" by the path went into
        the other directory."""
        if self._directory_gone():
            return
        # Each log is looked at in the directory held, not by its path: a directory put at
        # the path after the look above had every log taken for replaced (an open one copied
        # aside as acknowledged, a closed one's journal kept unfolded).
        at = self._dir_fd
        for table in list(self._tables.values()):
            if not table.exists or table.tmp is not None or table.broken is not None:
                continue
            name = os.path.basename(table.path)
            try:
                st = os.stat(name, dir_fd=at)
                replaced = (st.st_dev, st.st_ino) != table.identity
                cut = st.st_size < table.end
            except FileNotFoundError:
                replaced = cut = True
            keep = None
            if table.fd is not None:
                size = os.fstat(table.fd).st_size
                cut = size < table.end
                keep = table.end if replaced and size == table.end else None
            elif replaced or cut:  # unlocked meanwhile: a seal may have rewritten it
                held = [False]
                with contextlib.suppress(LogFormatError, OSError):
                    fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=at)
                    try:
                        _read_holding(table, held, fd)
                    finally:
                        os.close(fd)
                replaced = cut = not held[0]
            if replaced or cut:
                self._keep_acknowledged(table, _WriteError(
                    LogFormatError("", path=table.path), written=True, lost=True, keep=keep))

    def _let_go_of_directory(self) -> None:
        """Close the directory and its lock (releasing it), each once, and mark the recorder
        closed. A signal handler's exception between the two closes left ``_closed`` unset,
        and the next ``close`` closed the directory's number again, by then maybe another
        thread's file: the signals are held meanwhile, each number is forgotten as it is
        closed, and one that no longer names its file is not closed again."""
        with signalmask.held():
            for name in ("_dir_fd", "_lock_fd"):
                fd, identity = getattr(self, name), self._identities.get(name)
                if fd >= 0:
                    try:
                        if _identity(fd) == identity:
                            os.close(fd)
                    finally:
                        setattr(self, name, -1)
            self._closed = True

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the caller's side
    def _enqueue(
        self,
        match: str,
        event: ev.AnyEvent,
        future: Any,
        loop: asyncio.AbstractEventLoop | None,
    ) -> None:
        if not isinstance(event, ev.EVENT_TYPES):
            raise TypeError(f"event must be a buraco_log event (MatchStarted, CardDrawn, ...), "
                            f"not {type(event).__name__}")
        self._refuse_closed()
        if self._failed is not None:
            raise LogFormatError(self._failed, path=self.directory, kind="io")
        while True:
            table = self._table(match)
            with table.lock:
                if table.dead:
                    continue  # dropped meanwhile: look it up again
                try:
                    if table.broken is not None:
                        raise LogFormatError(table.broken, path=table.path, kind="io")
                    if event.seq != table.expect:
                        raise LogFormatError(
                            f"appended event has seq {event.seq}, expected {table.expect}",
                            path=table.path,
                            seq=event.seq,
                            kind="seq",
                        )
                    try:  # int64 only (kind "range"), a field msgspec cannot encode (an object,
                        # text with a lone surrogate: kind "validate"), before the rules
                        data = log.encode_checked(event)
                    except LogFormatError as exc:
                        raise LogFormatError(exc.message, path=table.path, seq=exc.seq,
                                             kind=exc.kind) from None
                    if len(data) > _MAX_EVENT:  # a record that big no reader takes
                        raise LogFormatError(
                            f"{type(event).__name__} is {len(data):,} bytes encoded; one record of "
                            f"a log holds at most {log.MAX_PAYLOAD:,}", path=table.path,
                            seq=event.seq, kind="range")
                    event = _readable(event, data, table.path)  # what a reader will decode
                    claimed = (self.unique_match_ids and isinstance(event, ev.MatchStarted)
                               and self._claim(table, event.match_id, event.seq))
                    try:
                        if table.validator is not None:
                            table.validator.step(event)  # raises, changing nothing, if illegal
                    except IllegalMoveError as exc:  # the same, naming the table and log
                        if claimed:
                            with self._cv:
                                self._release(table)
                        raise _located(exc, table) from None
                    except BaseException as exc:  # the rules engine may hold half the move
                        if claimed:
                            with self._cv:
                                self._release(table)
                        self._interrupted(table, exc)
                        raise
                    try:
                        self._buffer(table, match, event, data, future, loop)
                    except BaseException as exc:
                        self._interrupted(table, exc)
                        raise
                    return
                except BaseException:
                    self._drop_unused(table)  # refused: a match with no log keeps nothing
                    raise

    def _buffer(
        self,
        table: _Table,
        match: str,
        event: ev.AnyEvent,
        data: bytes,
        future: Any,
        loop: asyncio.AbstractEventLoop | None,
    ) -> None:
        """Queue an accepted move for the committer (the caller holds ``table.lock``). An
        exception in the middle (a signal handler's) undoes what was done of it: an event
        buffered without its waiter, or without ``expect`` counting it, was written twice or
        out of step with its waiter (a repeated seq acknowledged into a log no reader took)."""
        with self._cv:
            if self._closing:
                # close() began while this move was checked: its committer may have
                # ended already, and a move queued now was never resolved (the caller
                # waited forever). Refused instead; the rules engine holds the move,
                # so the table's state is never saved (nor used: the recorder closes).
                table.broken = "the recorder is closed"
                raise LogFormatError("the recorder is closed", path=self.directory,
                                     seq=event.seq, kind="closed")
            if self._failed is not None:  # the same, had the committer stopped on a
                table.broken = self._failed  # defect meanwhile (or the journal failed)
                raise LogFormatError(self._failed, path=self.directory, kind="io")
            waiter = _Waiter(event.seq, future, loop)
            marks = (len(table.pending), table.expect, table.ended, table.unresolved,
                     self._waiting, self._unresolved)
            try:
                table.pending.append(data)
                table.waiters.append(waiter)
                table.expect += 1
                if isinstance(event, ev.MatchEnded):
                    table.ended = True
                table.unresolved += 1  # guarded by self._cv: settled a round at a time
                self._waiting += 1
                self._unresolved += 1
                # In the same undo: counted but not marked dirty, the move was never taken by
                # a round (flush never returned True, and forget waited forever).
                first = not self._dirty
                if first:
                    self._first_at = time.monotonic()
                self._dirty[match] = table  # (left there if undone: a round takes nothing)
            except BaseException:  # holding both locks: nothing else changed them meanwhile
                count = marks[0]
                del table.pending[count:], table.waiters[count:]
                (table.expect, table.ended, table.unresolved, self._waiting,
                 self._unresolved) = marks[1:]
                raise
            # Wake the committer only when it has something new to do: the first append of
            # a round, or a full batch. A wake-up per append cost a thread switch each while
            # it waited out the window.
            if first or self._waiting >= self.max_batch:
                self._wake.notify()

    def _interrupted(self, table: _Table, exc: BaseException) -> None:
        """An exception other than a refusal (a signal handler's KeyboardInterrupt or timeout,
        a MemoryError) came after the rules engine began to take a move: it may hold the move
        while the log never gets it. The table refuses every move from now on; its accepted
        moves not yet written are failed by the committer, and ``forget`` (or a new recorder)
        reads the match again from its log."""
        if table.broken is None:
            table.broken = (f"an append was interrupted ({type(exc).__name__}) while its move was "
                            "taken; the match takes no more moves here (forget it, or restart "
                            "the recorder, to read it again from its log)")
        with self._cv:  # its queued moves are failed now (the wake-up may have been cut off),
            self._wake.notify()  # not at some later append's round

    def _claim(self, table: _Table, match_id: str, seq: int | None = None) -> bool:
        """Make ``table`` the holder of ``match_id``, or raise ``LogFormatError`` (kind
        ``duplicate``) naming the live table that holds it already: one match, one log. True if
        the claim is new (the caller releases it if the move is refused after all)."""
        with self._cv:
            name = self._ids.get(match_id)
            if name == table.match:  # its own (a saved state named it)
                table.match_id = match_id
                return False
            if name is not None:
                holder = self._tables.get(name)
                if holder is not None and not holder.dead:
                    live = True
                else:  # saved mid-match and not loaded since: held while its log is there
                    live = holder is None and os.path.exists(self.path_of(name))
                if live:
                    raise LogFormatError(
                        f"match id {match_id!r} is already held by live table {name!r} "
                        f"({self.path_of(name)}); a match is recorded by one table at a time "
                        "(end or forget that table first)",
                        path=table.path, seq=seq, kind="duplicate",
                    )
            self._ids[match_id] = table.match
            table.match_id = match_id
            return True

    def _release(self, table: _Table) -> None:
        """``table`` no longer holds its match id (caller holds ``self._cv``)."""
        if table.match_id is not None and self._ids.get(table.match_id) == table.match:
            del self._ids[table.match_id]
        table.match_id = None

    def _not_in_callback(self, what: str) -> None:
        """Refuse a call that waits for the committer from the committer's own thread: a
        future's done-callback runs there, and such a call waited for itself forever (every
        table hung), or, for ``close``, failed to join its own thread halfway."""
        if threading.current_thread() is self._committer:
            raise RuntimeError(
                f"{self.directory}: Recorder.{what}() waits for the recorder's commit thread, "
                "and was called on it (from a future's done-callback); call it from another "
                "thread, or use submit() there")

    def _refuse_closed(self) -> None:
        if self._closing:
            raise LogFormatError("the recorder is closed", path=self.directory, kind="closed")

    def _table(self, match: str) -> _Table:
        table = self._tables.get(match)
        if table is not None:
            return table
        path = self.path_of(match)
        fresh = _Table(match, path)
        with fresh.lock:
            with self._cv:
                table = self._tables.setdefault(match, fresh)
            if table is not fresh:
                return table  # another thread is loading it: its lock makes us wait there
            try:
                self._after_forget(fresh)
                with self._loaders:
                    self._load(fresh)
            except BaseException:
                with self._cv:
                    self._drop(fresh)
                raise
            fresh.ready = True
        return fresh

    def _after_forget(self, table: _Table) -> None:
        """Before ``table`` loads its match: a forgotten table of it must have settled its
        accepted appends and let go of the log (read now, the log lacked them, and was still
        locked). Waited for, a round or two; on the commit thread (a future's done-callback),
        which settles them, refused instead (kind ``locked``): it would wait for itself."""
        old = self._retiring.get(table.match)
        if old is None:
            return
        on_committer = threading.current_thread() is self._committer
        if not self._retired(old, wait=not on_committer):
            raise LogFormatError(
                "the match is being forgotten (forget() waits for its accepted moves to be "
                "durable) and a done-callback cannot wait for that; send the move again once "
                "forget() returns", path=table.path, kind="locked")

    def _load(self, table: _Table) -> None:
        """Read an existing log (if any) to learn its seq, chain and validator state: from the
        state saved for it when that still describes the log, else from its first event."""
        table.sealed = self.sealed
        with self._cv:  # the committer copies the rest when it saves
            saved = self._saved.pop(table.match, None)
        if self.validate:
            table.validator = log._new_validator(table.path)
        try:
            locked = _lock_current(table.path)
        except OSError as exc:  # out of descriptors (see _lock_quickly)
            raise LogFormatError(self._short_words(exc), path=table.path, kind="io") from None
        except LogFormatError as exc:
            if exc.kind != "locked":
                raise
            raise LogFormatError(  # (it said only "another writer holds this log")
                f"{exc.message} (a seal, repair or writer of another program, or another "
                "recorder's, through a link to this file); nothing was recorded: send it "
                "again once the other lets go", path=table.path, kind="locked") from None
        if locked is None:
            return  # a new match: its log is created with its first event
        fd, identity, size, times = locked
        stamp: tuple[int, int] | None = times
        try:
            self._refuse_not_named(table, identity)
            # The file locked is read, never the one at the path by then: another put there
            # meanwhile (a directory's copy at its path) gave its seq and chain to the table,
            # and the locked file's identity and size.
            read = self._read_from_saved(table, saved, identity, size, fd) if saved else None
            first: ev.AnyEvent | None = None
            last: ev.AnyEvent | None = None
            if read is None:
                with log.Reader(table.path, allow_torn=True, fd=fd) as reader:
                    for _, events in reader.segments():
                        if events:
                            first = first or events[0]
                            last = events[-1]
                        if table.validator is not None:
                            table.validator.run(events)
                    read = reader.info, reader._chain
            ends = _ends(fd, read[0].valid_bytes)  # (a torn tail is cut off below)
        except OSError as exc:  # the reader's own descriptor (a dup): it escaped the append
            if exc.errno not in _NO_DESCRIPTORS:  # raw, and the example server's client
                raise  # waited for an answer that never came
            raise LogFormatError(self._short_words(exc), path=table.path, kind="io") from None
        finally:
            os.close(fd)
        info, chain = read
        if info.torn is not None:
            if not self.repair_torn or info.torn.offset < log.HEADER_SIZE:
                raise LogFormatError(
                    f"the log ends in a torn tail ({info.torn.reason}); "
                    + (log.NO_HEADER_ADVICE if info.torn.offset < log.HEADER_SIZE
                       else "run `buraco-log repair` first"),
                    path=table.path,
                    offset=info.torn.offset,
                    kind="torn",
                )
            log.repair(table.path, backup=False)  # never acknowledged: cut it
            with self._cv:
                self._stats.torn_cut += 1
            size = info.valid_bytes
            try:
                st = os.stat(table.path)
                stamp = (st.st_ctime_ns, st.st_mtime_ns)
            except OSError:
                stamp = None
        if info.version != ev.FORMAT_VERSION:
            raise LogFormatError(
                f"cannot append to a log of event format version {info.version}; convert it first",
                path=table.path,
                kind="version",
            )
        if table.validator is not None:
            over = table.validator._t.phase == "over"
        else:
            over = isinstance(last, ev.MatchEnded)
        if self.unique_match_ids and not over:  # a mid-match log holds its match id
            if table.validator is not None:
                match_id = table.validator._t.match_id
            else:
                match_id = first.match_id if isinstance(first, ev.MatchStarted) else None
            if match_id:
                self._claim(table, match_id)
        table.ended = over  # read over: not kept once asked (see _drop_unused)
        table.exists = True
        table.fresh = self.sync == "journal"
        table.sealed = info.sealed
        table.identity = identity
        # Its times as read: the reopening compares them. Without them (None), a log changed
        # in the middle between its loading and its first move (same size, same ends) was
        # taken as ours, and moves were acknowledged after bytes no reader takes.
        table.stamp = stamp
        table.end = size
        table.head, table.tail = ends
        table.whole = False
        table.next_seq = table.expect = log.FIRST_SEQ + info.events
        table.chain = chain
        with self._cv:
            self._stats.loaded += 1

    def _refuse_not_named(self, table: _Table, identity: tuple[int, int]) -> None:
        """The log locked at first use is the file at its name in the directory the recorder
        holds: not a symbolic link's target (the moves went into a file anywhere, outside the
        directory, its lock and its journal; a reopening then refused the link), nor another
        directory's file (one put at the directory's path). A ``stat``, a log read once."""
        try:
            st = os.stat(os.path.basename(table.path), dir_fd=self._dir_fd,
                         follow_symlinks=False)
        except OSError:
            st = None
        if st is not None and (st.st_dev, st.st_ino) == identity:
            return
        if gone := self._directory_gone():
            raise LogFormatError(f"{gone}; nothing was recorded", path=table.path, kind="io")
        if st is not None and stat.S_ISLNK(st.st_mode):
            raise LogFormatError(
                "a symbolic link: a recorder writes only the logs in its directory, never "
                "through a link (put the log itself there, or open a recorder where it is); "
                "nothing was recorded", path=table.path, kind="filetype")
        raise LogFormatError(
            "another file was put at the log's name while the recorder opened it (by a "
            "program that ignores the writer lock); nothing was recorded: send it again",
            path=table.path, kind="locked")

    def _read_from_saved(
        self, table: _Table, saved: _Saved, identity: tuple[int, int], size: int, fd: int
    ) -> tuple[log.LogInfo, Any] | None:
        """Read the log as far as ``saved`` without decoding it, check that it still holds
        exactly what was saved (the same file, the seq and the chain head at the saved size),
        then replay only the events after it on the saved state. None: the entry does not
        describe this log (nothing is changed then)."""
        if (
            (saved.device, saved.inode) != identity
            or size < saved.size
            or (saved.state is None) == self.validate
        ):
            return None
        with log.Reader(table.path, allow_torn=True, skip_until=saved.size, fd=fd) as reader:
            after = [e for _, events in reader.segments() for e in events]
            if reader.skipped_to != (saved.events, saved.head):
                return None
            info, chain = reader.info, reader._chain
        if self.validate:
            table.validator = log._new_validator(table.path, saved.state)
            table.validator.run(after)
        with self._cv:
            self._stats.resumed += 1
        return info, chain

    def _save_states(self, share: bool = False) -> None:
        """Save the state of every mid-match table whose accepted events are all on disk (and
        keep the saved entries of matches not loaded since the start, while their logs exist).

        Runs in its own thread while the recorder records (``share``: the GIL is handed over
        every few tables, so the event loop and the committer are never held up for long; at
        10,000 tables the save takes about 0.4 s, which in the committer stopped every table
        for that long), or at close once the committer has stopped. Each entry is read under
        its table's lock with no round of it in flight: a table with appends not yet settled
        is skipped (its ``unresolved`` count drops only after its round wrote the log, set its
        size and chain, and synced), and no round can take it while the lock is held."""
        if self._directory_gone():  # another directory at its path (or none): the states
            return  # go with their logs, never into it (a restart there found them, of no log)
        with self._cv:  # callers take entries out as their matches load
            carried = list(self._saved.values())
        encode = msgspec.msgpack.Encoder().encode  # this thread's own
        entries = {e.match: msgspec.Raw(encode(e)) for e in carried  # not loaded since
                   if os.path.exists(os.path.join(self.directory, e.match + SUFFIX))}
        for k, table in enumerate(list(self._tables.values())):
            if share and k % _SAVE_SLICE == _SAVE_SLICE - 1:
                time.sleep(_SAVE_PAUSE)  # the event loop and the committer run meanwhile
            with table.lock:
                if (table.dead or table.ended or not table.exists or table.broken is not None
                        or table.unresolved or table.pending or table.expect != table.next_seq):
                    continue  # gone, over, or events accepted and not yet durable
                entry = _Saved(
                    table.match, *table.identity, table.end, table.next_seq,
                    table.chain.hexdigest(), table.sealed,
                    table.validator.state() if table.validator is not None else None,
                )
            entries[table.match] = msgspec.Raw(encode(entry))
        data = encode(_SavedFileOut(list(entries.values()), engine=_ENGINE))
        # A new file of a name of its own (O_EXCL), swept at open if a crash leaves it: a fixed
        # name was opened whatever it was, so a FIFO there hung close forever and a symbolic
        # link there had the state written into the file it named.
        # Made and put in place in the directory the recorder holds, never by its path: a
        # directory put at the path after the look above took the states, of no log there.
        at = self._dir_fd
        fd, tmp = log._create_temp(self.directory, SAVED_NAME, dir_fd=at)
        tmp = os.path.basename(tmp)
        try:
            try:
                log._write_all(fd, data, 0)
                self._ops.fsync(fd)  # a power loss leaves the old file or the whole new one
            finally:  # EBADF: other code of the process closed it (nothing to lose: every
                with contextlib.suppress(OSError):  # write to it was synced or failed);
                    os.close(fd)  # raised, it stopped the committer, its waiters unresolved
            os.replace(tmp, SAVED_NAME, src_dir_fd=at, dst_dir_fd=at)
        except BaseException:  # a full disk: no half-written state file is left beside it
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=at)
            raise
        with self._cv:
            self._stats.saves += 1

    def _save_in_background(self) -> None:
        with contextlib.suppress(Exception):  # a state not saved only slows the next start
            self._save_states(share=True)

    def _recover(self) -> None:
        """Fold the journals a recorder left (it crashed, or lost power) into their logs."""
        done, self._jgen = journal.recover(self.directory, self._dir_fd, SUFFIX, self._ops)
        self._stats.recovered = done.applied
        self._stats.recreated = done.created
        self._stats.journal_conflicts = done.conflicts
        self._stats.journal_withdrawn = done.withdrawn

    def _maybe_checkpoint(self) -> None:
        """Start a new journal and retire the old one in the background, when it is due; or,
        with journals left by a failed checkpoint, retry those alone, once a second at most."""
        if self._checkpoint is not None and not self._checkpoint.done():
            return
        now = time.monotonic()
        if now - self._jopened < self.checkpoint_every and self._jsize < self.checkpoint_bytes:
            if self._jbacklog and now - self._jtried >= min(1.0, self.checkpoint_every):
                self._jtried = now
                self._checkpoint = self._ckrun.submit(self._retire, None, None, {})
            return
        if not self._jdirty:
            self._jopened = now
            if self._jbacklog:
                self._jtried = now
                self._checkpoint = self._ckrun.submit(self._retire, None, None, {})
            return
        if self._directory_gone():  # never a journal in another directory at its path (kept
            self._jopened = now  # aside there at close): this one stays with its logs
            return
        new = self._jgen + 1
        while True:
            try:
                fd = journal.create(self.directory, self._dir_fd, new, self._ops)
                break
            except FileExistsError:  # the name is another program's (a link, a FIFO): never
                new += 1  # written through, and journals stay in order past it
            except OSError:
                self._jopened = now  # go on with this one; try again later
                return
        old = (self._jfd, self._jgen, self._jdirty)
        with self._cv:
            self._jretiring = self._jdirty
        self._jgen = new
        self._jfd, self._jsize, self._jopened, self._jdirty = fd, journal.HEADER_SIZE, now, {}
        self._checkpoint = self._ckrun.submit(self._retire, *old)

    def _retire(self, fd: int | None, generation: int | None,
                paths: dict[str, _Table]) -> None:
        """A checkpoint: make every log the journal ``generation`` wrote durable, then remove
        the journal. One ``syncfs`` does it for any number of logs (and their names), in one
        thread and one call; where there is none, each log is fsynced, then the directory. If
        any of it fails, the journal stays: retried with the next checkpoint when what failed
        passes (a log that could not be opened for want of a descriptor, the journal's
        removal), else (a failed sync) written back by the next recorder to open the
        directory. A log that no longer holds what the recorder acknowledged (an older copy
        put back that no move found) keeps the journal as ``*.unfolded``. The journals of
        earlier checkpoints that failed and may be retried (``_jbacklog``) are retired with
        it, checked with the tables that wrote their logs last: as one journal that went on.
        ``generation`` None: those alone."""
        if fd is not None:
            os.close(fd)
        with self._cv:
            backlog, self._jbacklog = self._jbacklog, []
        journals = backlog + ([(generation, paths)] if generation is not None else [])
        if not journals:
            return
        every: dict[str, _Table] = {}
        for _, written in journals:  # the last table of each log (a later journal's)
            every.update(written)
        passing = True  # what failed passes: the journals may be retried
        try:
            self._ops.syncfs(self._dir_fd)
            ok, fsyncs = True, 0
        except (AttributeError, NotImplementedError):  # no syncfs here (not Linux)
            ok, passing = self._fsync_each(every)
            fsyncs = len(every)
        except OSError:
            ok = passing = False
            fsyncs = 0
        if not passing:  # a sync failed: the bytes it could not write read back right from
            journal.mark_unsynced(self._dir_fd)  # the page cache, so the next recorder writes
            # every record of the journals kept again, not only those a log lacks
        if ok and self._check_retired:
            ok = self._check_logs(every)  # (not known: the journal is kept, its records stand)
        if ok and self._directory_gone():  # its name is not at that path: kept, and written
            ok = passing = False  # back by the next recorder opened where the directory is now
        left = [] if ok else journals  # the journals not removed
        for gen, written in journals if ok else []:
            with self._cv:
                spoiled = not written.keys().isdisjoint(self._spoiled)
            name, at = journal.name_of(gen), self._dir_fd  # (never by its path)
            try:
                if spoiled:  # its records are the only copy left of acknowledged moves
                    os.replace(name, name + ".unfolded", src_dir_fd=at, dst_dir_fd=at)
                    with self._cv:
                        self._junfolded |= written.keys()
                else:
                    os.unlink(name, dir_fd=at)
            except FileNotFoundError:  # done by a try whose directory fsync failed
                pass
            except OSError:
                left.append((gen, written))
        if ok and len(left) < len(journals):
            try:
                self._ops.fsync_dir(self._dir_fd)
            except OSError:  # the removals may come back after a power loss: written back
                left = journals  # then, nothing lost; tried again meanwhile
        with self._cv:
            self._stats.checkpoint_fsyncs += fsyncs
            if not left:
                self._stats.checkpoints += 1
            else:
                self._stats.checkpoint_failures += 1
                if passing:
                    self._jbacklog = left + self._jbacklog
                else:
                    for _, written in left:
                        self._jstuck |= written.keys()  # the next recorder writes them back
            self._jlingering = set(self._jstuck)  # the logs of journals kept: records stand
            for _, written in self._jbacklog:
                self._jlingering |= written.keys()
            self._stats.journal_backlog = len(self._jbacklog)

    _check_retired = True
    """Whether a checkpoint checks its logs (``_check_logs``); off only to measure its cost."""

    def _check_logs(self, paths: dict[str, _Table]) -> bool:
        """Before a checkpoint deletes its journal: each log it wrote must still be the file
        the recorder wrote, at least as long, with the first bytes and the last segment it wrote
        (a ``stat`` and two ``pread``s; a closed log is opened). An older copy put back after the
        table's last move (``cp backup.blog live.blog``, or a restore renamed into place), that
        no move found, had the checkpoint sync the copy and delete the only record of the
        moves it lacks. Such a log is read (``_holds_acknowledged``: a ``seal`` that rewrote
        it while closed is no loss) and, lacking them, spoils the journal: it is kept.
        False if a log could not be opened for want of a descriptor: not known, so the
        checkpoint fails and its journal stays, whole. (It was taken for a log lacking its
        moves: the journal was kept as ``*.unfolded``, never written back, and ``audit`` said
        acknowledged moves were missing, with nothing lost.)"""
        lost, unknown = [], False
        for path, table in paths.items():
            holds = self._holds_acknowledged(table)
            unknown |= holds is None
            if holds is False:
                lost.append(path)
        if lost:
            with self._cv:
                self._spoiled.update(lost)
        return not unknown

    def _holds_acknowledged(self, table: _Table) -> bool | None:
        """The log at ``table``'s path holds every event the recorder acknowledged into it
        (the checkpoint thread's check; the committer owns the table's fields meanwhile);
        None if it could not be opened for want of a descriptor."""
        for _ in range(1000):  # about 1 s: a round of the table in flight, wait for it
            if not table.exists:  # removed with the round that created it (_undo_round)
                return True
            head, tail = table.head, table.tail  # before ``end``: set after it (_write)
            end, identity = table.end, table.identity  # (only grow, or change on adopting)
            if _ends_as_written(table.path, table.fd, end, head, tail,
                                (identity, table.identity)):
                return True
            with table.lock:  # no round takes it meanwhile
                if not table.unresolved and not table.pending:
                    try:
                        fd = os.open(table.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
                    except OSError as exc:
                        return None if exc.errno in _NO_DESCRIPTORS else False
                    held = [False]
                    try:
                        with contextlib.suppress(LogFormatError, OSError):
                            _read_holding(table, held, fd)
                    finally:
                        os.close(fd)
                    return held[0]
            time.sleep(0.001)
        return False  # not known: the journal is kept

    def _fsync_each(self, paths: dict[str, _Table]) -> tuple[bool, bool]:
        """Fsync each log, then the directory: whether all were made durable, and whether
        what failed passes (a log that could not be opened: no sync failed)."""

        def sync(path: str) -> tuple[bool, bool]:
            try:
                log_fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except FileNotFoundError:
                return True, True  # removed since: nothing to keep
            except OSError:
                return False, True
            try:
                self._ops.fsync(log_fd)
                return True, True
            except OSError:
                return False, False
            finally:
                os.close(log_fd)

        done = list(self._ckio.map(sync, sorted(paths)))
        ok, passing = all(d[0] for d in done), all(d[1] for d in done)
        try:
            self._ops.fsync_dir(self._dir_fd)
        except OSError:
            return False, False
        return ok, passing

    def _drop_unused(self, table: _Table) -> None:
        """Forget ``table`` if its match has no log and it took no move, or its log was read
        already over and it took none since (the caller holds ``table.lock``). Each name asked
        for its next seq, or sent only refused moves, kept a table with its rules engine: a
        client of a server naming ever new tables took 2.5 kB of its memory a name, and one
        asking of each ended match's log in the directory 15 kB a log, without bound. (An
        ended match the recorder ended is forgotten once durable, the same.)"""
        if table.exists:
            if not table.ended or table.expect != table.next_seq:
                return
        elif table.expect != log.FIRST_SEQ:
            return
        if (table.pending or table.waiters or table.unresolved or table.broken is not None
                or table.match_id is not None):
            return
        with self._cv:
            if self._dirty.get(table.match) is not table:
                self._drop(table)

    def _drop(self, table: _Table) -> None:
        """Forget a table (caller holds ``self._cv``); its descriptor is closed by the
        committer, or here if the committer is not using it."""
        table.dead = True
        if self._tables.get(table.match) is table:
            del self._tables[table.match]
            self._release(table)

    # -- the committer thread
    def _run(self) -> None:
        try:
            self._rounds()
        except BaseException as exc:  # a defect: refuse from now on rather than hang callers
            with self._cv:
                self._failed = f"the recorder stopped on an internal error: {exc!r}"
                dirty = list(self._dirty.values())
                self._dirty.clear()
            for table in dirty:
                self._fail_table(table, self._failed, [], written=True)
            raise

    def _rounds(self) -> None:
        while True:
            with self._cv:
                while not self._dirty and not self._closing:
                    self._forget_tables()
                    self._wake.wait(self._idle_wait())
                    if not self._dirty:
                        self._close_idle()
                self._forget_tables()
                if not self._dirty and self._closing:
                    return
                deadline = self._first_at + self.window
                while self._waiting < self.max_batch and not self._closing:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._wake.wait(left)
                batch: list[_Table] = []
                if (self._slots < self._full_slots
                        and time.monotonic() - self._short_at >= _REGROW):
                    self._slots = self._full_slots  # no shortage for a while: try it again
                limit = self._slots  # one round never needs more descriptors than the pool
                for match in list(self._dirty):
                    if len(batch) >= limit:
                        break
                    batch.append(self._dirty.pop(match))
                if self._dirty:
                    self._first_at = 0.0  # the rest is overdue: commit it next, no window
            try:
                self._commit(batch)
            except Exception as exc:  # a bug: fail the round rather than hang callers
                for table in batch:
                    self._fail_table(table, f"recorder error: {exc!r}", [], written=True)
            if (self.save_every and time.monotonic() >= self._next_save
                    and (self._saving is None or self._saving.done())):
                self._next_save = time.monotonic() + self.save_every
                self._saving = self._saver.submit(self._save_in_background)

    def _forget_tables(self) -> None:
        """Close and drop the ended tables (caller holds ``self._cv``)."""
        busy = []
        while self._forget:
            table = self._forget.pop()
            # An append holding the table's lock is past its check that the table is alive:
            # dropped now, its event went into a table no one looks up, whose round reopened
            # the log and held it locked, so the match loaded afresh was refused ("another
            # writer holds this log"). Such a table is tried again later. (Lock order: a
            # table's lock, then ``self._cv``; not waiting for it here keeps that order.)
            if not table.lock.acquire(blocking=False):
                busy.append(table)
                continue
            try:
                if table.unresolved or table.pending or table.dead:
                    continue  # appended to again meanwhile: keep it
                self._close_fd(table)
                self._drop(table)
            finally:
                table.lock.release()
        self._forget.extend(busy)

    def _idle_wait(self) -> float | None:
        if not (self._open and self.idle_timeout > 0):
            return None
        return min(self.idle_timeout / 2, _MAX_WAIT)  # inf: a wait too long for the clock

    def _commit(self, batch: list[_Table]) -> None:
        work: list[_Work] = []
        taken = 0

        def take(table: _Table) -> None:  # called holding table.lock; releases it
            nonlocal taken
            try:
                encoded, waiters = table.pending, table.waiters
                n = _fitting(encoded)
                table.pending, table.waiters = encoded[n:], waiters[n:]
                encoded, waiters = encoded[:n], waiters[:n]
                more = bool(table.pending)
            finally:
                table.lock.release()
            if more:  # past what one segment holds: the rest goes in the next round
                with self._cv:
                    self._dirty.setdefault(table.match, table)
                    self._first_at = 0.0
            taken += len(encoded)
            if not encoded:
                return
            if table.broken is not None:  # failed and counted (an interrupted append)
                self._fail_table(table, table.broken, waiters, written=True)
                return
            if self._failed is not None:  # the journal failed: nothing more is acknowledged
                # (a move queued while its failed round ran went into the next round, after
                # the failed records, and was acknowledged: a write-back stops at a damaged
                # record, so a power loss took it)
                self._fail_table(table, self._failed, waiters, written=False)
                return
            work.append(_Work(table, waiters, encoded))

        # A table whose lock is held (its next move being validated) is taken last, waiting
        # for it then: waiting at once would hand the GIL back and forth for each such table.
        busy = []
        for table in batch:
            if table.lock.acquire(blocking=False):
                take(table)
            else:
                busy.append(table)
        for table in busy:
            table.lock.acquire()
            take(table)
        with self._cv:
            self._waiting -= taken
        if not work:
            return
        try:
            self._commit_work(work)
        except BaseException as exc:
            # A defect (an error no step expects): the round's taken appends were no longer
            # in their tables, so failing the tables alone left them waiting forever.
            for w in work:
                if not w.settled:
                    w.settled = True
                    self._fail_table(w.table, f"recorder error: {exc!r}", w.waiters,
                                     written=True)
            raise

    def _commit_work(self, work: list[_Work]) -> None:
        """Write, sync and settle the round's logs (``_commit``'s part after taking them)."""
        # Descriptors first: the round's open logs become the most recently used, and the
        # least recently used others are closed to make room for the ones it must open.
        closed = [w.table for w in work if w.table.fd is None]
        for w in work:
            if w.table.fd is not None:
                self._open.move_to_end(w.table.match)
        self._make_room(len(closed))
        journaled = self.sync == "journal"
        for w in work:
            self._prepare(w)
        if journaled:
            work = self._open_all(work)  # a journal record names its log's file, locked
        # The I/O of the round runs in the sync threads, one slice of the logs each: open,
        # write, fsync, check the path (or link a new log). Each syscall releases the GIL, so
        # the threads wait for it side by side instead of one after another.
        # A journal round's writes only copy bytes to the page cache: one thread writes them
        # (and opens the logs that need it) while the committer syncs the journal. More threads
        # only fight over the GIL: at 10,000 saturated tables, one thread gave 1.7 to 2x the
        # events/s of one per 32 logs to open, at half the CPU per event.
        count = 1 if journaled else min(self._threads, len(work))
        slices = [work[i::count] for i in range(count)]
        if journaled:  # the journal is synced while the threads write the logs
            futures = [self._pool.submit(self._io, s, False, True) for s in slices]
            try:
                failure = self._journal_round(work)
            finally:  # never leave a thread writing a log whose round has failed
                wait(futures)
            for s, f in zip(slices, futures, strict=True):
                if (exc := f.exception()) is not None:  # past _io's catch (a BaseException)
                    for w in s:
                        if w.error is None:
                            w.error = _WriteError(LogFormatError(
                                f"recorder error: {exc!r}", path=w.table.path, kind="io"),
                                written=True)
            self._journal_fixups(work, failure)
        else:
            list(self._pool.map(lambda s: self._io(s, self.sync == "fsync", False), slices))
        for table in closed:
            if table.fd is not None:
                self._track(table)
        if not journaled and (short := [w for w in work if w.error is not None
                                        and w.error.short]):
            work = [w for w in work if w.error is None or not w.error.short]
            self._short_of_descriptors(short, work)
        syncfs = self.sync == "syncfs"
        if syncfs:  # one call for the whole file system: no per-file error
            written = [w for w in work if w.error is None]
            if written:
                try:
                    self._ops.syncfs(self._dir_fd)
                except OSError as exc:
                    for w in written:
                        w.error = self._sync_failed(w, exc)
                list(self._pool.map(self._place_all, slices))
        created: list[_Work] = []
        done: list[_Work] = []
        for w in work:
            if w.error is not None:
                error = self._keep_acknowledged(w.table, w.error)
                w.settled = True
                self._fail_table(w.table, error.message, w.waiters, error, w.error.written)
            elif w.created and not journaled:  # (a journal holds new logs whole until the
                created.append(w)                # checkpoint: no directory fsync per round)
            else:
                done.append(w)
        if created:
            # (a directory put in place since they were created holds them: see _create)
            refused = self._directory_gone()
            if refused:
                refused += ("; the new log's first moves are not acknowledged, and the match "
                            "takes no more")
            else:
                try:
                    self._ops.fsync_dir(self._dir_fd)  # the new names are durable
                except OSError as exc:
                    refused = (f"directory fsync failed: {exc.strerror or exc}; not retried, "
                               "the new log's name, and its first moves with it, may not be on "
                               "disk (a new recorder reads what was kept)")
            if refused:
                for w in created:
                    w.settled = True
                    self._fail_table(w.table, refused, w.waiters, written=True)
                created = []
            done.extend(created)
        acked: list[_Waiter] = []
        for w in done:
            acked.extend(w.waiters)
            w.settled = True
        with self._cv:  # counted first: a caller woken by its ack sees its event counted
            self._stats.events += len(acked)
        self._resolve(acked, None)  # one wake-up per event loop for the whole round
        with self._cv:
            for w in done:
                w.table.unresolved -= len(w.waiters)
            self._unresolved -= len(acked)
            self._stats.rounds += 1
            if syncfs:
                self._stats.syncfs += 1
            elif journaled:
                self._stats.journal_syncs += 1
            else:
                self._stats.fsyncs += sum(1 for w in work if w.synced)
            self._stats.dir_fsyncs += 1 if created else 0
            self._stats.created += sum(1 for w in done if w.created)
            self._stats.reopened += sum(1 for w in work if w.reopened)
            for w in done:
                if w.table.ended and not w.table.unresolved:
                    self._forget.append(w.table)  # the match is over: free its memory
            self._forget_tables()
            self._cv.notify_all()
        self._close_idle()
        if journaled:
            self._maybe_checkpoint()

    def _keep_acknowledged(self, table: _Table, failed: _WriteError) -> LogFormatError:
        """A log found without moves the recorder acknowledged (``failed.lost``: another program
        put an older copy or another file in its place, or cut it): keep what the recorder
        still has of them, and say where. A descriptor that still holds the acknowledged log
        (the file was replaced or removed, not cut) is copied to ``LOG.acknowledged`` before
        it is closed; with ``sync="journal"``, the journals holding the log's records are kept
        as ``*.unfolded`` when they are retired. Returns the error to give (the same, or one
        naming the copy)."""
        error = failed.error
        if not failed.lost:
            return error
        kept = []
        if failed.keep is not None and table.fd is not None:
            copy = _keep_aside(table.fd, failed.keep, table.path, self._dir_fd, self._ops)
            kept.append(f"the log as the recorder acknowledged it ({failed.keep} bytes) is "
                        f"kept in {copy}" if copy
                        else "the log as acknowledged could not be copied aside")
        if self.sync == "journal":
            path = table.path
            with self._cv:
                self._spoiled.add(path)
                held = path in self._jdirty or path in self._jlingering or (
                    path in self._junfolded) or (
                    path in self._jretiring and self._checkpoint is not None
                    and not self._checkpoint.done())
            if held:
                kept.append("its moves in the recorder's journal are kept "
                            "(.recorder.journal-*.unfolded)")
        if not kept:
            return error
        return LogFormatError(f"{error.message}; {'; '.join(kept)}", path=error.path,
                              offset=error.offset, kind=error.kind)

    def _prepare(self, w: _Work) -> None:
        """Build the round's segment of one log (the file header first, for a new log)."""
        table = w.table
        w.new = table.fd is None and not table.exists
        blob = b"".join(w.encoded)
        payload = log._array_header(len(w.encoded)) + blob
        w.chain = table.chain.copy()  # the table's own changes once the write is done
        w.chain.update(blob)
        w.data = log._segment(
            payload, len(w.encoded), table.next_seq,
            w.chain.digest() if table.sealed else None,
        )
        w.offset = table.end
        if w.new:
            w.data = log._file_header(ev.FORMAT_VERSION, table.sealed) + w.data
            w.offset = 0

    def _open_all(self, work: list[_Work]) -> list[_Work]:
        """Journal mode: create the round's new logs under their temporary names, and reopen
        its closed ones under their writer locks, before the journal names their files. A log
        that cannot be created fails its appends now; one that cannot be reopened (a ``seal``
        holds it, it was removed) fails them with the round, and gets no record.

        Reopened here, not by the write thread while the journal is synced: a record made for
        a closed log before its reopening named the file its path showed then, and a ``seal``
        that had checked the journal before the record was appended and renamed its file over
        the log afterwards left that record naming the old file. Its round synced, a crash or
        power loss before the adopted file's record was synced kept the journal aside as
        ``*.unfolded`` with nothing lost. Locked now, the file cannot be replaced until the
        recorder lets go of it, and a seal that locks it later sees the record."""
        kept: list[_Work] = []
        short: list[_Work] = []  # not opened for want of a descriptor
        for w in work:
            table = w.table
            if w.new:
                try:
                    self._create(table)
                except OSError as exc:  # out of descriptors: after those open, see below
                    w.error = _WriteError(log.os_error(exc, table.path), written=False,
                                          short=True)
                    short.append(w)
                    continue
                except LogFormatError as exc:
                    w.settled = True
                    self._fail_table(table, exc.message, w.waiters, exc, written=False)
                    continue
                assert table.fd is not None
                st = os.fstat(table.fd)
                w.ident = (st.st_dev, st.st_ino)
            else:
                if table.fd is None:
                    try:
                        w.reopened = True
                        self._open_closed(w)
                        if table.fresh:
                            self._spend_earlier(w)
                    except _WriteError as exc:
                        w.error = exc
                        if exc.short:  # (still fresh: its next round spends as this one)
                            short.append(w)
                            continue
                    except Exception as exc:
                        w.error = self._defect(w, exc)
                table.fresh = False
                w.ident = table.identity
                w.spend = w.error is None and (w.spend or w.adopted)
            kept.append(w)
        if short:
            self._short_of_descriptors(short, kept)
        return kept

    def _spend_earlier(self, w: _Work) -> None:
        """A table read afresh from its log (after a refusal, a ``forget``) whose log a journal
        not yet retired holds records of: those are the earlier table's, and may name another
        file of the same inode number (two seals in a row can give the sealed file the number
        the first freed). Taken with the new table's records for one file, a write-back found
        the sealed bytes where the records said otherwise and kept the journal aside, the new
        table's acknowledged moves with it. The file is synced (it holds every acknowledged
        event, as read) and the round withdraws the earlier records (from offset 0) before its
        own. Raises ``_WriteError`` (nothing written)."""
        table = w.table
        path = table.path
        with self._cv:
            held = path in self._jlingering or (
                path in self._jretiring and self._checkpoint is not None
                and not self._checkpoint.done())
        if not (held or path in self._jdirty):
            return
        assert table.fd is not None
        try:
            self._ops.fsync(table.fd)
        except OSError as exc:
            raise _WriteError(_fsync_failed(table, exc), written=False) from None
        w.spend = True

    def _journal_round(self, work: list[_Work]) -> tuple[OSError, bool] | None:
        """Append the round's records to the journal and sync it (the committer's share of a
        journal round). Returns the error, if the journal could not be written, and whether
        the records may be in it all the same (written whole, but the sync failed).

        A log adopted as it was reopened (a seal rewrote it while it was closed) gets a
        withdrawal of every earlier record of its file (from offset 0) before its record: a
        rewrite can keep the inode number (two seals in a row can give the new file the old
        one's), and records naming that number with the old file's bytes were then taken for
        a conflict, so a power loss lost the acknowledged move."""
        records = []
        for w in work:
            if w.error is not None:  # not reopened: nothing is written into it
                continue
            w.journaled = journal.Record(w.table.match, *w.ident, w.offset, w.data)
            if w.spend:
                records.append(journal.withdrawal(journal.Record(w.table.match, *w.ident, 0,
                                                                 b"")))
            records.append(w.journaled)
        return self._journal_append(journal.frame(records), False)

    def _journal_withdraw(self, records: list[journal.Record]) -> tuple[OSError, bool] | None:
        """Append the withdrawals of ``records`` to the journal and sync it (as
        ``_journal_round``). If that fails, the records stand: the refused events may come
        back."""
        return self._journal_append(journal.frame(journal.withdrawal(r) for r in records), True)

    def _journal_append(self, blob: bytes, stands: bool) -> tuple[OSError, bool] | None:
        """Append ``blob`` to the journal and sync it. Returns the error, if any, with the flag
        the caller reports: ``stands`` when the append failed, True when only the sync failed
        (the blob may be in the journal all the same)."""
        assert self._jfd is not None
        try:
            self._ops.append(self._jfd, blob)  # O_APPEND: a torn record ends the journal
        except OSError as exc:
            # Cut off what the failed append left: a disk filling up mid-write (ENOSPC) left
            # its first records whole before the torn one, and after a crash the next recorder
            # wrote them back: the events of appends refused as "not recorded" came back.
            return exc, stands or not self._cut_journal(self._jsize)
        try:
            self._ops.datasync(self._jfd)
        except OSError as exc:
            return exc, True
        self._jsize += len(blob)
        return None

    def _cut_journal(self, size: int) -> bool:
        """Cut the journal back to ``size`` (a synced end), durably; False if it could not be
        (then what was appended after it may be written back by a restart)."""
        assert self._jfd is not None
        try:
            os.ftruncate(self._jfd, size)
            self._ops.datasync(self._jfd)
        except OSError:
            return False
        self._jsize = size
        return True

    def _journal_fixups(self, work: list[_Work], failure: tuple[OSError, bool] | None) -> None:
        """After a journal round: its logs count as written (the checkpoint fsyncs them).

        If the journal could not be written, nothing of this round is durable. The round's bytes
        already went to the logs (the threads write them while the journal is synced); they are
        cut off again, and the journal back to its synced end, so that a refused append leaves
        no event behind. Done, the round's appends fail, their tables are read again from their
        logs on their next move, and the recorder goes on (a disk that filled up and has room
        again: it stopped for good, every table refused until a restart). Else (only the sync
        failed, so the next recorder may write the records back; or a cut failed) that outcome
        is unknown, the error says so, and the recorder stops."""
        for w in work:
            # (not a log found without its acknowledged moves before anything was written:
            # its journal would be kept for nothing, see _keep_acknowledged)
            if w.error is None or (w.error.written and (w.began or not w.error.lost)):
                self._jdirty[w.table.path] = w.table
        if failure is None:
            # Appends refused after their record was journaled (their log was removed or
            # replaced, a write failed): the journal withdraws the record, durably, before
            # they are refused, or a write-back would bring the refused events back.
            refused = [w.journaled for w in work if w.error is not None and w.journaled]
            if not refused:
                return
            failed = self._journal_withdraw(refused)
            if failed is None:
                with self._cv:
                    self._stats.journal_withdrawals += len(refused)
                return
            # The round's other records are durable: those appends are acknowledged. The
            # refused ones may come back with a write-back, and the recorder stops.
            self._failed = (f"the journal failed: {failed[0].strerror or failed[0]}; not "
                            "retried, the refused events of this round may or may not be kept "
                            "(open the directory again to see what was kept)")
            for w in work:
                if w.error is not None and w.journaled is not None:
                    w.error = _WriteError(
                        LogFormatError(self._failed, path=self.directory, kind="io"),
                        written=True)
            return
        error, recorded = failure
        why = error.strerror or str(error)
        if not recorded and self._undo_round(work):
            message = (f"the journal failed: {why}; the events of this round were not "
                       "recorded: send them again (the match is read again from its log)")
            for w in work:
                if w.error is None:  # (a table refused for its own cause keeps that)
                    w.error = _WriteError(
                        LogFormatError(message, path=self.directory, kind="io"), written=False)
            return
        self._failed = (f"the journal failed: {why}; not retried, the events of this round "
                        "may or may not be kept (open the directory again to see what was "
                        "kept)")
        for w in work:
            if w.error is None:
                w.error = _WriteError(
                    LogFormatError(self._failed, path=self.directory, kind="io"), written=True)

    def _undo_round(self, work: list[_Work]) -> bool:
        """Cut each log of a round the journal refused back to where it stood before (a log
        the round created is removed), durably: a power loss must not bring the refused
        events back. False if any could not be."""
        ok = True
        removed = False
        for w in work:
            table = w.table
            if not w.began or table.fd is None:
                continue  # nothing reached this log (a log cut by another program is not
                # cut here: ftruncate to the round's offset filled it up with zeros)
            try:
                if w.new:  # created by this round: under its temporary name, or linked
                    os.ftruncate(table.fd, 0)
                    # (in the directory held: by the path, another directory put there left
                    # the log, cut to nothing, and a file of that name there was removed)
                    name = os.path.basename(table.path)
                    if w.created and _identity_at(self._dir_fd, name) == table.identity:
                        os.unlink(name, dir_fd=self._dir_fd)
                        table.exists = False
                        removed = True
                else:
                    os.ftruncate(table.fd, w.offset)
                self._ops.fsync(table.fd)
                if not w.new and w.prior is not None:  # what the log holds again (the
                    table.end, table.chain = w.offset, w.prior  # checkpoint compares it)
                    table.next_seq -= len(w.encoded)
            except OSError:
                ok = False
        if removed:
            try:
                self._ops.fsync_dir(self._dir_fd)
            except OSError:
                ok = False
        return ok

    def _io(self, items: list[_Work], fsync: bool, place: bool) -> None:
        """One sync thread's share of a round: write each log (opening it first if needed),
        then, with ``fsync``, fsync each and check it is still at its path (or link it); with
        ``place`` (journal rounds), check or link without an fsync.

        A defect (an error no step expects) fails the logs it met, and the round goes on: out
        of the thread, it skipped a journal round's fix-ups, so the journal kept the records of
        the refused appends and a restart wrote them back."""
        try:
            self._io_steps(items, fsync, place)
        except Exception as exc:  # past the steps' own catches: what is unsettled fails
            for w in items:
                if w.error is None:
                    w.error = self._defect(w, exc, cut=False)

    def _io_steps(self, items: list[_Work], fsync: bool, place: bool) -> None:
        for w in items:
            if w.error is not None:  # (journal mode: its reopening failed)
                continue
            try:
                if self._write(w):
                    w.reopened = True
            except _WriteError as exc:
                w.error = exc
            except Exception as exc:
                w.error = self._defect(w, exc)
        if not fsync:
            if place:
                self._place_all(items)
            return
        for w in items:
            if w.error is None:
                assert w.table.fd is not None
                w.synced = True
                try:
                    self._ops.fsync(w.table.fd)
                except OSError as exc:
                    w.error = self._sync_failed(w, exc)
                except Exception as exc:
                    w.error = self._defect(w, exc)
        self._place_all(items)

    def _sync_failed(self, w: _Work, exc: OSError) -> _WriteError:
        """A log's sync failed after the round wrote into it: what the round wrote is cut off
        again (not acknowledged). Linux marks the pages it could not write clean: left in place,
        the refused moves read back from the page cache, a recorder opened again went on after
        them, and later syncs never wrote them: after a power loss a hole of zeros stood before
        the moves acknowledged next, and no reader got past it. Cut off, the pages are gone."""
        table = w.table
        cut = (w.began and table.fd is not None and table.tmp is None
               and self._cut_partial(table, w.offset))
        return _WriteError(_fsync_failed(table, exc, cut), written=True)

    def _defect(self, w: _Work, exc: Exception, cut: bool = True) -> _WriteError:
        """A defect met one log's share of a round: its appends fail, and its table refuses
        from then on. With ``cut``, what the round wrote into an existing log is cut off again,
        durably (a refused event is never left in a log); a new log's temporary file is removed
        with the table's failure."""
        table = w.table
        kept = (cut and w.began and table.fd is not None and table.tmp is None
                and self._cut_partial(table, w.offset))
        return _WriteError(LogFormatError(
            f"recorder error: {exc!r}; " + ("these moves were not recorded" if kept or not w.began
                                           else "these moves may or may not be kept")
            + " (the match takes no more moves here: restart the recorder to read its log)",
            path=table.path, offset=w.offset, kind="io"), written=True)

    def _place_all(self, items: list[_Work]) -> None:
        """After the sync: a new log is linked into place; an old one must still be at its path
        (a writer never acknowledges an append to a file that was replaced)."""
        for w in items:
            if w.error is not None:
                continue
            table = w.table
            if table.tmp is None:
                try:
                    st: os.stat_result | None = os.stat(table.path)
                except OSError:
                    st = None
                if (st is None or (st.st_dev, st.st_ino) != table.identity) and (
                        gone := self._directory_gone()):
                    # Nothing to copy aside (the copy had nowhere to go): the log is where
                    # the directory went, or was removed with it. (Another directory at the
                    # path, a copy of it, holds another file by that name: the log was not
                    # replaced, and its copy went into that directory.)
                    w.error = _WriteError(LogFormatError(
                        f"{gone}; these events are not acknowledged, and the match takes no "
                        "more (a recorder opened on the directory where it is now reads what "
                        "the log holds)",
                        path=table.path, kind="io"), written=True)
                elif st is None or (st.st_dev, st.st_ino) != table.identity:
                    # The descriptor still holds the acknowledged log: it is copied aside
                    # before it is closed (``_keep_aside``), else it was lost with it.
                    w.error = _WriteError(
                        LogFormatError(
                            "the log was replaced or removed by a program that ignores the "
                            "writer lock; these events are not acknowledged, and the match "
                            "takes no more (restart the recorder to read what the log holds)",
                            path=table.path,
                            kind="io",
                        ),
                        written=True, lost=True, keep=w.offset,
                    )
                elif st.st_size != table.end:
                    # Cut or rewritten in place after the round's first check (``cp
                    # backup.blog live.blog`` during the sync): the same stat, so free. It
                    # was acknowledged, and the log did not hold it.
                    w.error = _WriteError(LogFormatError(
                        f"the log was {'cut' if st.st_size < table.end else 'appended to'} by "
                        "a program that ignores the writer lock while the recorder wrote it "
                        f"({st.st_size} bytes, where the recorder had written {table.end}); "
                        "these events are not acknowledged, and the match takes no more "
                        "(restart the recorder to read what the log holds)",
                        path=table.path, offset=w.offset, kind="io"), written=True,
                        lost=st.st_size < table.end)
                continue
            try:
                # the log appears with its first event (a rename that never replaces where
                # the file system makes no hard links: the temporary name is then gone)
                if table.fd is None:  # (the new file's, from its creation)
                    raise OSError(errno.EBADF, "its descriptor was closed by other code of "
                                  "this process")
                renamed = self._place_new(table.tmp, table.path, table.fd)
            except OSError as err:
                why = (
                    "a file of that name appeared"
                    if isinstance(err, FileExistsError)
                    else (err.strerror or str(err))
                )
                if err.errno == errno.ENOENT and (gone := self._directory_gone()):
                    why = gone  # (its temporary name is not in the directory at the path)
                w.error = _WriteError(
                    LogFormatError(f"cannot create the log: {why}", path=table.path, kind="io"),
                    written=False,
                )
                continue
            if not renamed:
                with contextlib.suppress(OSError):
                    os.unlink(os.path.basename(table.tmp), dir_fd=self._dir_fd)
            table.tmp = None
            table.exists = True
            if table.fd is not None:
                st = os.fstat(table.fd)
                table.identity = (st.st_dev, st.st_ino)
            w.created = True

    def _place_new(self, tmp: str, path: str, fd: int) -> bool:
        """``log.place_new`` in the directory the recorder holds (``journal.place_at``): the
        new log's file, made there, is linked at its name there. By the paths, another
        directory put at the directory's path since had the link made in it (``ENOENT``, or,
        a copy of the directory holding the temporary file, another log linked into the
        copy; a link put at the temporary name is refused, never put at the log's)."""
        return journal.place_at(self._dir_fd, tmp, path, fd)

    def _directory_gone(self) -> str:
        """Why the recorder's directory no longer holds its logs (renamed or removed under it,
        its path another directory's now), and where it is if it still exists; "" if it is
        still at its path. A ``stat`` (a log's creation, a failure, a save of the states)."""
        try:
            st = os.stat(self.directory)
            if (st.st_dev, st.st_ino) == self._identities["_dir_fd"]:
                return ""
        except OSError:
            pass
        where = ""
        with contextlib.suppress(OSError):  # (Linux: where the directory it holds now is)
            now = os.readlink(f"/proc/self/fd/{self._dir_fd}")
            where = ("; it was removed, its logs with it" if now.endswith(" (deleted)")
                     else f"; the directory it opened is now {now}")
        return (f"the recorder's directory {self.directory} was renamed or removed under it "
                f"(the rule: one recorder a directory, left in place while it runs){where}")

    def _write(self, w: _Work) -> bool:
        """Write the round's segment of one log (reopening it, or creating it under a temporary
        name first if it does not exist yet); the caller syncs. Runs in a sync thread, on a
        table no other thread touches during the round. Returns True if the log was reopened.
        Raises ``_WriteError``."""
        table = w.table
        reopened = False
        if table.fd is None:
            if w.new:
                try:
                    self._create(table)
                except LogFormatError as exc:
                    raise _WriteError(exc, written=False) from None
                except OSError as exc:
                    raise _WriteError(log.os_error(exc, table.path), written=False,
                                      short=exc.errno in _NO_DESCRIPTORS) from None
            else:
                reopened = True
                self._open_closed(w)
        assert table.fd is not None
        self._refuse_resized(table, w.offset)
        if table.tmp is None and not (reopened or w.reopened) and self._check_tails:
            self._refuse_rewritten(table, w.offset)  # (a reopening has just compared them)
        w.began = True
        try:
            log._write_all(table.fd, w.data, w.offset)
        except OSError as exc:
            cut = self._cut_partial(table, w.offset)
            error = LogFormatError(
                f"write failed: {exc.strerror or exc}" + (
                    "; the part written was cut off, the log ends whole: nothing of this "
                    "move was recorded: send it again (the match is read again from the log "
                    "first)" if cut else ""),
                path=table.path, offset=w.offset, kind="io",
            )
            raise _WriteError(error, written=not cut) from None
        table.end = w.offset + len(w.data)
        table.whole = len(w.data) <= _TAIL
        table.tail = w.data if table.whole else w.data[-_TAIL:]  # (no copy: the usual case)
        if not w.offset:
            table.head = w.data[:_HEAD]
        w.prior, table.chain = table.chain, w.chain
        table.next_seq += len(w.encoded)
        table.used = time.monotonic()
        return reopened

    def _open_closed(self, w: _Work) -> None:
        """Reopen the closed log of ``w`` under its lock; if a seal rewrote it meanwhile, the
        table adopts the new file and the segment is prepared again for it. Raises
        ``_WriteError`` (nothing written)."""
        table = w.table
        try:
            if self._reopen(table):  # adopted: a seal rewrote it meanwhile
                self._prepare(w)  # its end, chain and sealed flag are the new file's
                w.adopted = True
        except LogFormatError as exc:
            if exc.kind == "locked":  # a seal or repair holds the closed log: say what became
                # of the moves (it said only "another writer holds this log")
                exc = LogFormatError(
                    f"{exc.message} (a seal, repair or writer of another program); these moves "
                    "were not recorded: send them again (the match is read again from its log)",
                    path=table.path, kind="locked")
            raise _WriteError(exc, written=False) from None
        except OSError as exc:
            raise _WriteError(log.os_error(exc, table.path), written=False,
                              short=exc.errno in _NO_DESCRIPTORS) from None

    @staticmethod
    def _refuse_resized(table: _Table, offset: int) -> None:
        """The open log must end where the recorder last wrote: a program that ignores the
        lock cut it (the segment went past the end: a hole of zeros, then events acknowledged
        in a log no reader took again) or appended to it (its bytes overwritten, or left after
        ours as a torn tail). Raises ``_WriteError``; the table then refuses every move.

        One ``fstat`` per log and round, before the write (after it, a cut is no longer seen:
        the write fills the file up to where it expected): 5 to 8% of the events/s of 500
        journal tables (37,000 to 38,000 against 39,000 to 40,600, alternating runs); the
        other modes' fsyncs dwarf it."""
        assert table.fd is not None
        try:
            st = os.fstat(table.fd)
        except OSError as exc:  # EBADF: other code of the process closed it
            table.fd = None  # not ours to close again
            raise Recorder._lost_descriptor(table, offset, exc.strerror or str(exc)) from None
        if table.tmp is None and (st.st_dev, st.st_ino) != table.identity:
            # Other code of the process closed the descriptor and its number now names
            # another file: written, the segment went into that file. (The same fstat.)
            table.fd = None  # that file's, not ours to close
            raise Recorder._lost_descriptor(table, offset, "its number names another file")
        size = st.st_size
        if size != offset:
            how = "cut" if size < offset else "appended to"
            raise _WriteError(LogFormatError(
                f"the log was {how} by a program that ignores the writer lock ({size} bytes, "
                f"where the recorder had written {offset}); these events were not written, "
                "and the match takes no more (restart the recorder to read what the log holds)",
                path=table.path, offset=offset, kind="io"), written=True, lost=size < offset)

    _check_tails = True  # (off only to measure what the check costs: bench_recorder.py)

    @staticmethod
    def _refuse_rewritten(table: _Table, offset: int) -> None:
        """The open log must still end with the bytes the recorder last wrote (and start with
        its first ones, unless its last segment is a whole sealed one: its chain digest covers
        every event before it). Another file of the same size copied over it in place (``cp
        other.blog live.blog``: the same inode, the same size) passed the size check, and the
        next move was acknowledged after another match's bytes, in a log no reader takes. One
        ``pread`` a log and round (two for an unsealed log, or after a segment over 512 bytes).
        Raises ``_WriteError``; the table then refuses every move."""
        assert table.fd is not None
        try:
            if _same_ends(table.fd, table):
                return
        except OSError as exc:
            raise _WriteError(LogFormatError(
                f"cannot read back the end of the log: {exc.strerror or exc}; these events "
                "were not written, and the match takes no more (restart the recorder to read "
                "what the log holds)", path=table.path, offset=offset, kind="io"),
                written=True) from None
        raise _WriteError(LogFormatError(
            "the log was rewritten in place by a program that ignores the writer lock (the "
            "bytes the recorder wrote last are not there: another file copied over it?); it "
            f"no longer holds all {table.next_seq - log.FIRST_SEQ} events the recorder "
            "acknowledged; these events "
            "were not written, and the match takes no more (restart the recorder to read what "
            "the log holds)", path=table.path, offset=offset, kind="io"),
            written=True, lost=True)

    @staticmethod
    def _lost_descriptor(table: _Table, offset: int, why: str) -> _WriteError:
        return _WriteError(LogFormatError(
            f"the log's descriptor was closed by other code of this process ({why}); these "
            "events were not written (the match is read again from its log on its next move)",
            path=table.path, offset=offset, kind="io"), written=False)

    def _cut_partial(self, table: _Table, offset: int) -> bool:
        """Cut what a failed write left of its segment off the log (a full disk took part of
        it), durably; True if the log ends at ``offset`` again. The table then counts as not
        written: it is read again from its log on its next move, instead of refusing every
        move until a restart with a torn tail in the log meanwhile. Nothing of the segment
        was acknowledged."""
        assert table.fd is not None
        try:
            if os.fstat(table.fd).st_size > offset:
                os.ftruncate(table.fd, offset)
                self._ops.fsync(table.fd)
        except OSError:
            return False
        return True

    def _short_of_descriptors(self, short: list[_Work], others: list[_Work]) -> None:
        """Logs of the round (``short``) could not be opened: the process is out of
        descriptors (its limit on open files, which other code of it shares, or the system's).
        The pool is lowered to the logs open now less the recorder's reserve, the least
        recently used logs outside the round are closed to that, and the moves of ``short``
        go into the next round, nothing of them written. (They were refused "Too many open
        files", the new tables of a site with 150 clients under ``ulimit -n 256`` among them,
        while the recorder held 104 idle logs open.) Where no log can be let go (the round's
        own hold them all), they are refused, saying so: nothing was recorded."""
        with self._cv:
            self._stats.short_of_descriptors += 1
        self._short_at = time.monotonic()
        # the logs open now: the pool's, and the round's opened meanwhile (a journal round
        # counts them in the pool once its writes are done)
        held = len(self._open) + sum(1 for w in others if w.table.fd is not None
                                     and self._open.get(w.table.match) is not w.table)
        reserve = self.max_open - self._full_slots  # the directory's, loaders', checkpoint's
        self._slots = max(1, min(self._slots, held - reserve))
        round_ = {id(w.table) for w in others}
        freed = 0
        while held + len(short) > self._slots:
            victim = self._oldest_open()
            if victim is None or id(victim) in round_:
                break
            self._close_fd(victim)
            held -= 1
            freed += 1
            with self._cv:
                self._stats.closed_idle += 1
        progress = freed or any(w.table.fd is not None for w in others)
        for w in short:
            w.settled = True
            assert w.error is not None
            if progress:  # a log of the round, or one let go, frees a descriptor
                self._defer(w)
            else:
                error = LogFormatError(self._short_words(w.error.error), path=w.table.path,
                                       kind="io")
                self._fail_table(w.table, error.message, w.waiters, error, written=False)

    def _short_words(self, exc: OSError | LogFormatError) -> str:
        """The refusal of a log not opened for want of a descriptor (it said only "Too many
        open files")."""
        words = exc.strerror if isinstance(exc, OSError) else exc.message
        return (f"cannot open the log: the process is out of file descriptors ({words}; its "
                f"limit on open files is {_soft_nofile()}, and the recorder keeps up to "
                f"{self._slots} logs open, max_open {self.max_open}); nothing was recorded: "
                "send it again (raise the limit, `ulimit -n`, or lower max_open)")

    def _defer(self, w: _Work) -> None:
        """Put the round's moves of ``w`` back, ahead of any that came since, for the next
        round (nothing of them was written)."""
        table = w.table
        with table.lock:
            table.pending = w.encoded + table.pending
            table.waiters = w.waiters + table.waiters
            with self._cv:
                self._waiting += len(w.encoded)
                self._dirty.setdefault(table.match, table)
                self._first_at = 0.0  # overdue: no window
                self._wake.notify()

    def _make_room(self, needed: int) -> None:
        """Close the least recently used logs until ``needed`` more fit in the pool."""
        while len(self._open) + needed > self._slots:
            victim = self._oldest_open()  # least recently used: already durable
            if victim is None:
                break
            assert victim.tmp is None
            self._close_fd(victim)
            with self._cv:
                self._stats.closed_idle += 1

    def _create(self, table: _Table) -> None:
        # A directory put in its place (``mv logs logs.old; mkdir logs``) took the new logs,
        # outside the directory lock, and the directory fsynced before their first moves were
        # acknowledged was the old one: their names were not durable. (A ``stat``: a creation
        # costs far more.)
        if gone := self._directory_gone():
            raise LogFormatError(f"cannot create the log: {gone}", path=table.path, kind="io")
        try:
            fd, tmp = log._create_temp(self.directory, os.path.basename(table.path),
                                       dir_fd=self._dir_fd)  # (linked in place by path: a
            # directory put at the path meanwhile has no such name, and the log is not made)
        except OSError as exc:
            if exc.errno == errno.ENOENT and (gone := self._directory_gone()):
                raise LogFormatError(f"cannot create the log: {gone}", path=table.path,
                                     kind="io") from None
            if exc.errno in _NO_DESCRIPTORS:  # the caller makes room and tries again
                raise
            raise log.os_error(exc, table.path) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held from before the link
        except OSError as exc:
            os.close(fd)
            os.unlink(os.path.basename(tmp), dir_fd=self._dir_fd)
            raise log.os_error(exc, table.path) from None
        table.fd, table.tmp = fd, tmp
        table.end = log.HEADER_SIZE

    def _reopen(self, table: _Table) -> bool:
        """Open and lock the log again; True if it was another file holding our events (a seal
        rewrote it), which the table adopted. (Not told by its inode number: two seals in a
        row can give the new file the old one's number, freed by the first. Told by it, the
        segment prepared for the old file was written at the old end: a hole of zeros in the
        middle of the log, a damaged log.)"""
        locked = _lock_current(table.path)
        if locked is None:
            if gone := self._directory_gone():
                raise _WriteError(LogFormatError(
                    f"{gone}; these moves were not recorded, and the match takes no more "
                    "(a recorder opened on the directory where it is now reads what the log "
                    "holds)",
                    path=table.path, kind="io"), written=True)
            # Refused for good, as when it is removed while open: read again, the match started
            # afresh at seq 0 in a new log, and a checkpoint deleted the journal that held the
            # moves acknowledged into the removed one (it checked the new log).
            raise _WriteError(LogFormatError(
                "the log was removed while the recorder had it closed, with the "
                f"{table.next_seq - log.FIRST_SEQ} events it acknowledged (by a program that "
                "ignores the writer lock); these moves were not recorded, and the match takes "
                "no more here (forget it, or restart the recorder, to start it afresh)",
                path=table.path, kind="io"), written=True, lost=True)
        fd, identity, size, stamp = locked
        try:
            # (device, inode, size) alone took another file for the log: a removed log's
            # inode number is given to the next file created, which can have the same size.
            # Its change and modification times, kept when the log was closed, tell most such
            # files apart, not all: they come from a coarse clock (a jiffy), and a log read at
            # first use kept none. The last segment written (a sealed one's chain digest) and,
            # where that is not enough, the first bytes (the match) do: ``_same_ends``. A
            # mismatch is checked by reading the file, never trusted.
            adopted = (identity != table.identity or size != table.end
                       or (table.stamp is not None and stamp != table.stamp)
                       or not _same_ends(fd, table))
            if adopted:
                self._refuse_elsewhere(table, identity)
                self._adopt(table, fd, identity, size)
                if self.sync == "journal":  # its journal records are withdrawn (the
                    self._ops.fsync(fd)  # round's records): the file must hold the events
        except BaseException:
            os.close(fd)
            raise
        table.fd = fd
        return adopted

    def _refuse_elsewhere(self, table: _Table, identity: tuple[int, int]) -> None:
        """The other file a reopening found (``identity``) is the one at the log's name in the
        directory the recorder holds, not a symbolic link's target nor another directory's
        file: opened by the path, a link put at the name (to a copy of the log anywhere) and a
        copy of the directory put at its path (``cp -a logs new; mv logs old; mv new logs``)
        were read, held the same events, and were adopted: the moves went on into that file,
        away from the directory, its lock and its journal. (Only when the file changed: the
        file that was closed, reopened, is the recorder's wherever its name leads.) Raises
        ``_WriteError``."""
        try:
            st = os.stat(os.path.basename(table.path), dir_fd=self._dir_fd,
                         follow_symlinks=False)
            if (st.st_dev, st.st_ino) == identity:
                return
            link = stat.S_ISLNK(st.st_mode)
        except OSError:
            link = False
        if gone := self._directory_gone():
            raise _WriteError(LogFormatError(
                f"{gone}; these moves were not recorded, and the match takes no more (a "
                "recorder opened on the directory where it is now reads what the log holds)",
                path=table.path, kind="io"), written=True)
        raise _WriteError(LogFormatError(
            ("a symbolic link is at the log's name now" if link else
             "another file was put at the log's name while the recorder reopened it")
            + " (by a program that ignores the writer lock; the recorder writes only the file "
            "at the name in its directory); these moves were not recorded, and the match takes "
            "no more here (restart the recorder to go on from what the log holds)",
            path=table.path, kind="io"), written=True, lost=True)

    def _adopt(self, table: _Table, fd: int, identity: tuple[int, int], size: int) -> None:
        """The file changed while it was closed: continue only if it holds our events.

        If it holds them and more (a writer of another program, which took the lock while the
        recorder had let go of it, appended), the move is refused and the match read again
        from the log. If it does not hold every event the recorder acknowledged (an older copy
        put back, ``cp backup.blog live.blog``, or another file in its place), the table
        refuses every move from then on: read again, it went on from the older copy, and a
        server that resent its moves from ``next_seq`` wrote a log forking from what was
        acknowledged."""
        ours = table.next_seq - log.FIRST_SEQ
        want = table.chain.hexdigest()
        held = [False]
        try:
            info, chain, count = _read_holding(table, held, fd)  # the file locked, not
            # the one at the path now
        except LogFormatError as exc:  # say why the recorder read it (it said only "damaged")
            if not held[0]:
                raise self._not_ours(table, f"it reads: {exc.message}") from None
            raise LogFormatError(
                f"the log changed while the recorder had it closed (another program wrote it; "
                f"it reads: {exc.message})", path=table.path, offset=exc.offset, kind="io",
            ) from None
        if not held[0]:
            raise self._not_ours(table, f"{count} events on disk, {ours} acknowledged")
        if info.torn is not None or info.events != ours or chain.hexdigest() != want:
            raise LogFormatError(
                "the log changed while the recorder had it closed (another program wrote "
                f"it: {info.events} events on disk, {table.next_seq} recorded)",
                path=table.path,
                kind="io",
            )
        table.identity, table.end, table.sealed = identity, size, info.sealed
        table.chain = chain
        table.head, table.tail = _ends(fd, size)
        table.whole = False

    @staticmethod
    def _not_ours(table: _Table, why: str) -> _WriteError:
        """The log at the path lacks moves the recorder acknowledged: refused for good."""
        return _WriteError(LogFormatError(
            f"the log changed while the recorder had it closed and no longer holds the moves it "
            f"acknowledged ({why}: an older copy put back, or another file, by a program that "
            "ignores the writer lock); these moves were not recorded, and the match takes no "
            "more here (restart the recorder to go on from what the log holds)",
            path=table.path, kind="io"), written=True, lost=True)

    def _track(self, table: _Table) -> None:
        self._open[table.match] = table
        with self._cv:
            self._stats.max_open_handles = max(self._stats.max_open_handles, len(self._open))

    def _close_fd(self, table: _Table) -> None:
        """Close an idle log (every write to it is already durable). The committer's thread,
        or ``forget``'s holding the table's lock with nothing of it pending.

        Closed under ``_fd_lock`` too, not only taken: a call that found the descriptor taken
        by the other returned while the other had yet to close it, and the match read afresh
        (forget returned) met its log still locked ("another writer holds this log")."""
        with self._fd_lock:  # one of them takes the descriptor: closed once
            fd, table.fd = table.fd, None
            try:
                if fd is not None:
                    try:  # what the reopening compares (with its identity, set when it was
                        st = os.fstat(fd)  # linked, locked or adopted)
                        table.stamp = (st.st_ctime_ns, st.st_mtime_ns)
                    except OSError:
                        table.stamp = None
                    finally:  # EBADF: other code of the process closed it (nothing to lose:
                        with contextlib.suppress(OSError):  # every write to it was synced or
                            os.close(fd)  # failed); raised, it stopped the committer
            finally:  # out of the count once closed: ``stats().open_handles`` said 0 while
                # the log was still open and locked (a seal then was refused)
                if self._open.get(table.match) is table:  # (a new table of the match is not)
                    del self._open[table.match]

    def _oldest_open(self) -> _Table | None:
        """The least recently used open log. Looked at under ``_fd_lock``: ``forget`` closes a
        log from its own thread, and an iterator of ``_open`` made while it deletes an entry
        can raise "mutated during iteration" (out of ``_close_idle``, the recorder stops)."""
        with self._fd_lock:
            return next(iter(self._open.values()), None)

    def _close_idle(self) -> None:
        if self.idle_timeout <= 0:
            return
        old = time.monotonic() - self.idle_timeout
        while (table := self._oldest_open()) is not None:
            if table.used > old or table.tmp is not None:
                break
            self._close_fd(table)
            self._stats.closed_idle += 1

    def _fail_table(
        self,
        table: _Table,
        message: str,
        waiters: list[_Waiter],
        exc: LogFormatError | None = None,
        written: bool = True,
    ) -> None:
        """A write, fsync, open or create failed: fail this round's and every later accepted
        append of the table. If bytes may have reached its log, the table refuses everything
        from now on (never retried: the kernel may have dropped them). If nothing was written
        (a failure to open or create), the table is forgotten instead, and the next append
        reads the match again from its log (or starts it afresh: no empty log is left)."""
        error = exc or LogFormatError(message, path=table.path, kind="io")
        with table.lock:
            waiters = waiters + table.waiters
            count = len(waiters)
            try:  # closed before it is dropped: an append waiting for the lock then loads
                # the match afresh, and its log was still locked by this descriptor (refused
                # as held by another writer)
                if table.tmp is not None:
                    with contextlib.suppress(OSError):
                        os.unlink(os.path.basename(table.tmp), dir_fd=self._dir_fd)
                    table.tmp = None
                self._close_fd(table)  # out of the pool even if its descriptor was let go
            finally:  # counted whatever the cleanup meets: its callers wait for nothing else
                with self._cv:
                    self._waiting -= len(table.pending)
                    table.pending, table.waiters = [], []
                    if written and table.exists:
                        table.broken = message
                    else:
                        self._drop(table)
                    self._stats.failed += count
                    table.unresolved -= count
                    self._unresolved -= count
                    self._cv.notify_all()
        self._resolve(waiters, error)

    def _resolve(self, waiters: list[_Waiter], error: BaseException | None) -> None:
        by_loop: dict[asyncio.AbstractEventLoop, list[_Waiter]] = {}
        for waiter in waiters:
            if waiter.loop is None:
                if waiter.future.done():
                    continue  # cancelled by the caller
                with contextlib.suppress(Exception):  # cancelled just now
                    if error is None:
                        waiter.future.set_result(waiter.seq)
                    else:
                        waiter.future.set_exception(error)
            else:
                by_loop.setdefault(waiter.loop, []).append(waiter)
        for loop, group in by_loop.items():
            with contextlib.suppress(RuntimeError):  # the loop was closed meanwhile
                loop.call_soon_threadsafe(_settle, group, error)


def _read_holding(table: _Table, held: list[bool],
                  fd: int | None = None) -> tuple[log.LogInfo, Any, int]:
    """Read the log at the table's path whole (the file ``fd`` holds, if given: the one the
    caller locked); ``held[0]`` is set once its first events are
    every event the recorder acknowledged (the same chain there, wherever the segments split:
    a seal rewrites them into larger ones). Returns its info, chain and event count; raises
    ``LogFormatError`` if it does not read (``held`` says what was seen before)."""
    ours = table.next_seq - log.FIRST_SEQ
    want = table.chain.hexdigest()
    count = 0
    with log.Reader(table.path, allow_torn=True, fd=fd) as reader:
        reader.read_header()
        before = reader._chain.copy()
        for _, events in reader.segments():
            if not held[0] and count < ours <= count + len(events):
                at = reader._chain.copy()
                if count + len(events) > ours:  # our last event is within this segment
                    at = before
                    for event in events[:ours - count]:
                        at.update(ev.encode(event))
                held[0] = at.hexdigest() == want
            count += len(events)
            before = reader._chain.copy()
        return reader.info, reader._chain, count


def _keep_aside(fd: int, size: int, path: str, dir_fd: int, ops: FileOps) -> str | None:
    """Copy the first ``size`` bytes of ``fd`` (a log the recorder acknowledged, replaced at
    its path by another program) to a new file ``PATH.acknowledged`` (or ``.1``, ...), durably,
    in the directory ``dir_fd`` holds (the log's, whatever is at its path by then); its path,
    or None if it could not be made."""
    base = os.path.basename(path) + ".acknowledged"
    name, n = base, 0
    while True:
        try:  # (O_EXCL: a dangling link at a name is passed by, never written through)
            out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666,
                          dir_fd=dir_fd)
            break
        except FileExistsError:
            n += 1
            name = f"{base}.{n}"
        except OSError:
            return None
    try:
        pos = 0
        while pos < size:
            chunk = os.pread(fd, min(1 << 20, size - pos), pos)
            if not chunk:
                break
            log._write_all(out, chunk, pos)
            pos += len(chunk)
        ops.fsync(out)
        ops.fsync_dir(dir_fd)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=dir_fd)
        return None
    finally:
        os.close(out)
    return os.path.join(os.path.dirname(path), name)


_MAX_WINDOW: Final = 60.0
"""The longest group-commit window (seconds): every append waits up to that long."""

_MAX_WAIT: Final = 3600.0  # a condition wait longer than this overflows the clock (inf)

_MAX_EVENT: Final = log.MAX_EVENT  # a segment's payload: an array header, then events


def _start(pool: ThreadPoolExecutor, count: int) -> None:
    """Start ``count`` threads of ``pool`` now (each task holds its thread until all are
    running, so each submit starts one more). Raises ``RuntimeError`` if one cannot start."""
    gate = threading.Event()
    started = []
    try:
        for _ in range(count):
            started.append(pool.submit(gate.wait))
    finally:
        gate.set()
    wait(started)


def _fitting(encoded: list[bytes]) -> int:
    """How many of ``encoded`` (events, each at most ``_MAX_EVENT``) one segment holds: its
    payload, their array, is at most ``log.MAX_PAYLOAD`` bytes (a reader refuses more)."""
    size = 0
    for i, data in enumerate(encoded):
        size += len(data)
        if size > _MAX_EVENT and i:
            return i
    return len(encoded)


def _readable(event: ev.AnyEvent, data: bytes, path: str) -> ev.AnyEvent:
    """``event`` as a reader decodes ``data``, its encoding; a field of the wrong type (a
    string or ``True`` for a seat, a bare name for a player) is refused as ``LogFormatError``
    kind ``validate``: recorded, it would make the whole log unreadable."""
    try:
        return ev.decode(data)
    except msgspec.ValidationError:
        why = log.unreadable(event, data) or f"{type(event).__name__} cannot be recorded"
        raise LogFormatError(why, path=path,
                             seq=event.seq if isinstance(event.seq, int) else None,
                             kind="validate") from None


def _located(exc: IllegalMoveError, table: _Table) -> IllegalMoveError:
    """``exc`` (the rules engine's refusal) naming the table and its log in its one line: a
    server with thousands of tables must see which one refused a move. Its rule, seq and
    explanation are unchanged."""
    located = IllegalMoveError(
        exc.rule, exc.explanation, seq=exc.seq, tag=exc.tag, seat=exc.seat, cards=exc.cards,
        path=table.path, table=table.match,
    )
    located.match_id = exc.match_id
    return located


def _settle(waiters: Iterable[_Waiter], error: BaseException | None) -> None:
    for waiter in waiters:
        if not waiter.future.done():
            if error is None:
                waiter.future.set_result(waiter.seq)
            else:
                waiter.future.set_exception(error)


__all__ = [
    "SUFFIX",
    "FileOps",
    "Recorder",
    "RecorderStats",
    "default_max_open",
    "journal_notes",
    "sweep_temporaries",
]
