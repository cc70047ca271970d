"""Fold the journals a recorder kept aside (``.recorder.journal-N.unfolded``) into their logs.

A recorder that cannot write a journal record back into its log (the log was rewritten by
another program, replaced, removed, or the journal is damaged) keeps the journal aside, renamed
``*.unfolded``, and ``audit DIR`` notes it. Its records are acknowledged moves. :func:`fold`
is the operator's tool for them: for each log the journals name, it compares the moves the
records hold with the log's, seq by seq, and

- appends the moves the log lacks, when they continue it (the next seq on, nothing between);
- creates the log from them when it is gone and they begin at its first move;
- changes nothing where the log already holds every one (a ``seal`` rewrote it, or an earlier
  fold did): running it twice writes nothing the second time;
- refuses a log that disagrees with the records (another move at a seq, or moves missing
  between the log's end and the records'), a log with a torn tail, and records that disagree
  among themselves, naming the seq; that log is not written.

A journal all of whose logs then hold its moves is removed; any other is kept, whole. It works
by events, not bytes: a log sealed since (chain digests, a new file) takes the moves as a
writer appends them. The directory's recorder lock is held throughout (a running recorder
refuses it, and no recorder opens meanwhile), and the journals a stopped recorder left are
written back first, as a recorder does when it opens. Only the standard library and msgspec
are used: this is core code.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import itertools
import os
import stat
from typing import Final

import msgspec

from buraco_log import events as ev
from buraco_log import journal, log
from buraco_log.errors import LogFormatError
from buraco_log.recorder import LOCK_NAME, SUFFIX, FileOps


class FoldedLog(msgspec.Struct):
    """What :func:`fold` did to one log."""

    path: str
    action: str  # "appended", "created", "held" (nothing missing), "refused"
    events: int = 0  # moves written (or, with dry_run, to write)
    first_seq: int | None = None  # the first of them
    reason: str | None = None  # why it was refused
    seq: int | None = None  # the seq the refusal is about


class FoldReport(msgspec.Struct):
    """What :func:`fold` did to a directory."""

    directory: str
    journals: list[str] = msgspec.field(default_factory=list)  # the *.unfolded journals read
    written_back: int = 0  # records of journals a stopped recorder left, written back first
    logs: list[FoldedLog] = msgspec.field(default_factory=list)
    removed: list[str] = msgspec.field(default_factory=list)  # journals folded and removed
    kept: list[str] = msgspec.field(default_factory=list)  # journals kept (a refusal, damage)
    damaged: int = 0  # records that could not be read (their journal is kept)
    dry_run: bool = False

    @property
    def refused(self) -> list[FoldedLog]:
        return [entry for entry in self.logs if entry.action == "refused"]


_OPS: journal.SyncOps = FileOps()
"""The syncs of the logs fold holds (a test's power-loss layer takes its place)."""
_CHUNK: Final = 1 << 20


def fold(directory: str | os.PathLike[str], *, dry_run: bool = False) -> FoldReport:
    """Fold the ``*.unfolded`` journals of a recorder's ``directory`` into their logs (see the
    module). Raises ``LogFormatError`` (kind ``locked``) while a recorder runs there, or
    (``filetype``) when ``directory`` is none."""
    directory = os.path.abspath(os.fspath(directory))
    if not os.path.isdir(directory):
        raise LogFormatError("not a directory (fold takes a recorder's directory of logs)",
                             path=directory, kind="filetype")
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if not (journal.generations(directory, dir_fd=dir_fd)
                or journal.generations(directory, unfolded=True, dir_fd=dir_fd)):
            return FoldReport(directory=directory, dry_run=dry_run)  # (no lock file made)
        lock_fd = _take_lock(directory, dir_fd, dry_run)
        try:
            return _fold(directory, dir_fd, dry_run)
        except ValueError as exc:  # a journal of another version (journal.read_all)
            raise LogFormatError(str(exc), kind="version") from None  # (it names the file)
        except OSError as exc:  # a journal that cannot be read or removed, a full disk
            raise LogFormatError(f"cannot fold: {exc.strerror or exc}; what was folded "
                                 "stands, the journals are kept: fold again",
                                 path=exc.filename or directory, kind="io") from None
        finally:
            if lock_fd is not None:
                os.close(lock_fd)
    finally:
        os.close(dir_fd)


def _take_lock(directory: str, dir_fd: int, dry_run: bool) -> int | None:
    """The recorder lock of the directory (a dry run in a directory it cannot write takes
    none, if there is none to take); refused while a recorder holds it."""
    try:
        fd = os.open(LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o666,
                     dir_fd=dir_fd)
    except OSError as exc:
        if dry_run and exc.errno in (errno.EACCES, errno.EROFS, errno.EPERM):
            return None
        raise LogFormatError(f"cannot take the recorder's lock ({exc.strerror or exc})",
                             path=os.path.join(directory, LOCK_NAME), kind="io") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise LogFormatError(
            "a recorder is using this directory: stop it first (fold writes into its logs; "
            "the recorder holds .recorder.lock while it runs)", path=directory,
            kind="locked") from None
    return fd


def _fold(directory: str, dir_fd: int, dry_run: bool) -> FoldReport:
    report = FoldReport(directory=directory, dry_run=dry_run)
    if not dry_run and journal.generations(directory, dir_fd=dir_fd):
        # what a recorder opening the directory does first (it may keep more aside)
        done, _ = journal.recover(directory, dir_fd, SUFFIX, _OPS)
        report.written_back = done.applied
    found = journal.generations(directory, unfolded=True, dir_fd=dir_fd)
    by_match: dict[str, list[journal.Record]] = {}
    named: dict[str, set[str]] = {}  # journal -> the matches its records name
    damaged: set[str] = set()
    for _, path in found:
        records, skipped = journal.read_all(path, dir_fd)
        report.journals.append(path)
        report.damaged += skipped
        if skipped:
            damaged.add(path)
        named[path] = {r.match for r in records}
        for record in records:
            by_match.setdefault(record.match, []).append(record)
    refused: set[str] = set()
    # A sync of the logs failed (journal.UNSYNCED): what they hold may be in the page cache
    # alone, marked clean, and a sync writes it no more. Written again first, each is synced.
    again = bool(found) and not dry_run and journal.unsynced(dir_fd)
    for match in sorted(by_match):
        entry = (_write_again(os.path.join(directory, match + SUFFIX)) if again else None) \
            or _fold_one(directory, match, journal.withdraw(by_match[match]), dry_run)
        report.logs.append(entry)
        if entry.action == "refused":
            refused.add(match)
    for _, path in found:
        if path in damaged or not named[path].isdisjoint(refused) or dry_run:
            report.kept.append(path)
            continue
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.basename(path), dir_fd=dir_fd)
        report.removed.append(path)
    if again and not report.kept and not journal.generations(directory, dir_fd=dir_fd):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(journal.UNSYNCED, dir_fd=dir_fd)
    if report.removed:  # (the logs' names too: a failed sync may have left them unwritten)
        _OPS.fsync_dir(dir_fd)
    return report


def _write_again(path: str) -> FoldedLog | None:
    """Write the log at ``path`` again over itself, the same bytes (its pages dirty again),
    and sync it, holding its writer lock; a refusal if it is held, None when done (or there is
    no regular file there: nothing to write)."""
    if not os.path.isfile(path) or os.path.islink(path):
        return None
    try:
        lock = log.LogLock(path, timeout=journal.LOCK_WAIT)
    except LogFormatError as exc:
        return _refused(path, f"cannot write the log again after a failed sync: {exc.message}")
    with lock:
        assert lock.fd is not None
        size = os.fstat(lock.fd).st_size
        for at in range(0, size, _CHUNK):
            log._write_all(lock.fd, os.pread(lock.fd, min(_CHUNK, size - at), at), at)
        _OPS.fsync(lock.fd)
    return None


def _refused(path: str, reason: str, seq: int | None = None) -> FoldedLog:
    return FoldedLog(path=path, action="refused", reason=reason, seq=seq)


def _fold_one(directory: str, match: str, records: list[journal.Record],
              dry_run: bool) -> FoldedLog:
    """Fold one log's records (in journal order, withdrawals applied)."""
    path = os.path.join(directory, match + SUFFIX)
    if not journal.MATCH_NAME.fullmatch(match):  # it would write outside the directory
        return _refused(path, f"the journal names {match!r}, which is no match's name (no "
                        "recorder wrote it)")
    wanted: dict[int, ev.AnyEvent] = {}
    sealed = True
    for record in records:
        events = journal._segment_events(record)
        if events is None:
            return _refused(path, f"a record of the journal (byte {record.offset} of the log) "
                            "is not one whole segment of moves")
        if record.offset == 0:
            sealed = bool(int.from_bytes(record.data[12:16], "little") & log.FLAG_SEALED)
        for event in events:
            if wanted.setdefault(event.seq, event) != event:
                return _refused(path, "the journals hold two different moves at this seq (a "
                                "log of this name removed and started afresh?)", event.seq)
    if not wanted:
        return FoldedLog(path=path, action="held")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return _create(path, wanted, sealed, dry_run)
    if not stat.S_ISREG(st.st_mode):
        return _refused(path, "not a regular file (a link or another file is at the log's "
                        "name): fold writes only logs in the directory")
    try:
        with log.Reader(path, allow_torn=True) as reader:
            held = 0
            for event in reader:
                held += 1
                want = wanted.get(event.seq)
                if want is not None and want != event:
                    return _refused(path, _disagree(event, want), event.seq)
            torn = reader.info.torn
    except LogFormatError as exc:
        return _refused(path, f"the log cannot be read: {exc.message}", exc.seq)
    missing = sorted(seq for seq in wanted if seq >= log.FIRST_SEQ + held)
    if not missing:
        if not dry_run:  # the journal, their only durable copy maybe, is removed next
            _sync(path)
        return FoldedLog(path=path, action="held")
    first = log.FIRST_SEQ + held
    if missing[0] != first or missing[-1] != first + len(missing) - 1:
        gap = first if missing[0] != first else _first_gap(missing)
        return _refused(path, f"the journal's moves do not continue the log: seq {gap} is in "
                        "neither", gap)
    if torn is not None:
        return _refused(path, f"the log has a torn tail at byte {torn.offset} ({torn.reason}): "
                        "cut it with `buraco-log repair`, then fold again", first)
    events = [wanted[seq] for seq in missing]
    if not dry_run:
        try:
            writer = log.Writer(path, validate=False, batched=True)
        except LogFormatError as exc:  # held by another writer, torn meanwhile, ...
            return _refused(path, f"cannot append to the log: {exc.message}", first)
        try:
            if writer.next_seq != first:  # written meanwhile by another program's writer
                return _refused(path, f"the log changed while it was read (it now ends before "
                                f"seq {writer.next_seq})", writer.next_seq)
            writer.append_many(events)
        finally:
            writer.close()
    return FoldedLog(path=path, action="appended", events=len(events), first_seq=first)


def _disagree(have: ev.AnyEvent, want: ev.AnyEvent) -> str:
    """The refusal of a log whose move at a seq is not the journal's."""
    mine, theirs = type(have).__name__, type(want).__name__
    if mine != theirs:
        return f"the log and the journal disagree: the log holds {mine}, the journal {theirs}"
    ids = (getattr(have, "match_id", None), getattr(want, "match_id", None))
    which = f" (match {ids[0]!r}, the journal's {ids[1]!r})" if None not in ids else ""
    return f"the log and the journal disagree: the log's {mine} is another one{which}"


def _sync(path: str) -> None:
    """Make the log at ``path`` durable (a copy made by ``cp``, or bytes a killed recorder
    wrote, may be in the page cache alone)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)
    try:
        _OPS.fsync(fd)
    finally:
        os.close(fd)


def _first_gap(seqs: list[int]) -> int:
    """The first seq missing between the first and the last of ``seqs`` (sorted, not
    consecutive)."""
    return next(a + 1 for a, b in itertools.pairwise(seqs) if b != a + 1)


def _create(path: str, wanted: dict[int, ev.AnyEvent], sealed: bool,
            dry_run: bool) -> FoldedLog:
    """A log whose name is gone, made again from the records (from its first move on)."""
    seqs = sorted(wanted)
    if seqs[0] != log.FIRST_SEQ or seqs[-1] != log.FIRST_SEQ + len(seqs) - 1:
        seq = log.FIRST_SEQ if seqs[0] != log.FIRST_SEQ else _first_gap(seqs)
        return _refused(path, f"there is no log, and the journal lacks seq {seq}: the moves "
                        "before it are nowhere", seq)
    if not dry_run:
        log.write_log(path, [wanted[s] for s in seqs], sealed=sealed, validate=False)
    return FoldedLog(path=path, action="created", events=len(seqs), first_seq=log.FIRST_SEQ)
