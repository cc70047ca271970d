"""The recorder's shared journal (``Recorder(sync="journal")``): one fsync per round for all logs.

Each round of the recorder appends one record per log it writes to a journal file and syncs
that one file; the same bytes go to each log with a plain ``pwrite``. An event is acknowledged
once the journal holds it durably, so the logs themselves are fsynced only now and then (a
checkpoint: every log written since the last one, then the directory), after which that
journal is deleted. After a crash or a power loss, :func:`recover` writes every journal record
back into its log (where the log does not already hold those bytes) before the recorder
touches any log.

A journal file, ``DIR/.recorder.journal-GGGGGGGGGGGG`` (G: its generation, in order)::

    header = "BURACOLJ" u16:version u16:0 u32:crc32(the 12 bytes before)     (16 bytes)
    record = u32:length u32:crc32(body) body                                  (repeated)
    body   = msgpack [match, device, inode, offset, data]

``data`` is what the round wrote to the log of ``match`` at ``offset`` (a segment, or the file
header and the first segment of a new log); (device, inode) is the log's file. A record is
replayed only into that very file, so a log that another program rewrote meanwhile (a
``seal``, a ``repair``) is never written into: its records are counted as conflicts and the
journal is kept, renamed ``*.unfolded``, for an operator to look at. (A log the recorder itself
found rewritten, and adopted, or read afresh, gets its record naming the file it holds locked,
after a withdrawal of every earlier record of that file, since a rewrite can keep the inode
number; the records naming the old one are then spent. Should that never reach the journal,
a log at the path that holds every event of the records, each at its seq, has them all the
same: no conflict.) A torn record ends a journal: it belongs to a round whose sync did not
finish, so nothing in it was acknowledged. A damaged record with a whole record after it is
damage in the middle: it is skipped as a conflict (the journal is kept aside) and the rest is
written back.

A record with no ``data`` withdraws: the recorder refused the appends of a record it had
journaled (the log was removed or replaced under it, its write failed), and the bytes that
earlier records of that file put at ``offset`` or after are not written back. Only
acknowledged events come back. (A recorder of before withdrawals reads such a record as one
that writes nothing.)

Before writing into a file that has the records' (device, inode), :func:`recover` checks its
bytes: where they differ from a record's, they must be missing or zero (what a power loss
leaves of unsynced data). Other bytes there mean another file that was given the same inode
number: it is not written into (a conflict). Nor is a file whose events before the first
record are not the ones it continues (their count, and a sealed log's chain): another file of
the log's size, which ends where the records go. A file of that inode that ends in the events
and whose bytes in those places are equal, zero or missing cannot be told from the log itself
(``docs/recorder.md``).

Only the standard library and msgspec are used: this is core code.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import struct
import tempfile
import zlib
from collections.abc import Iterable
from typing import IO, Final, Protocol

import msgspec

from buraco_log import events as ev
from buraco_log import log
from buraco_log.errors import LogFormatError

PREFIX: Final = ".recorder.journal-"
VERSION: Final = 1
_NAME = re.compile(r"^\.recorder\.journal-([0-9]{12})(\.unfolded)?$")
_HEAD = struct.Struct("<8sHH")
HEADER_SIZE: Final = _HEAD.size + 4
_FRAME = struct.Struct("<II")
UNSYNCED: Final = ".recorder.unsynced"
"""A marker file: a sync of the directory's logs failed while journals held their records.
Linux marks the pages it could not write clean: they read back right, from the page cache,
until evicted, and a later fsync succeeds without writing them. Write-back cannot tell such a
log's bytes from durable ones by reading them, so while the marker is there :func:`recover`
writes every record again (the same bytes at the same offsets: the pages dirty again) and
syncs before it removes a journal; it removes the marker once no journal is left. (After a
power loss the marker may be gone with the pages: the bytes are then read from the disk.)"""
_MAX_RECORD: Final = log.MAX_PAYLOAD + (1 << 16)
"""The largest record a recorder writes: one log's segment (at most ``log.MAX_PAYLOAD`` of
payload), maybe its file header, and the match's name and place. A frame claiming more is
no record: the journal ends there."""
MATCH_NAME: Final = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.@+=-]{0,199}$")
"""A match name the recorder takes (a plain file name in its directory). A journal record
naming anything else (``../x``, a NUL) was not written by a recorder: it is never replayed."""


class Record(msgspec.Struct, array_like=True, frozen=True):
    """One log's share of one round."""

    match: str
    device: int
    inode: int
    offset: int
    data: bytes


class SyncOps(Protocol):
    """The durability calls (the recorder's ``FileOps``)."""

    def fsync(self, fd: int) -> None: ...

    def fsync_dir(self, fd: int) -> None: ...


class Recovered(msgspec.Struct):
    """What :func:`recover` did."""

    journals: int = 0  # journal files read
    records: int = 0  # records in them
    applied: int = 0  # records written back into a log that lacked them
    created: int = 0  # logs created again from their first record (their name was lost)
    conflicts: int = 0  # records not applied: their log is another file now, or is missing
    withdrawn: int = 0  # records of refused appends, not written back (see withdraw)
    kept: list[str] = msgspec.field(default_factory=list)  # journals renamed *.unfolded
    rewritten: int = 0  # records written again after a failed sync (``UNSYNCED``)


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(Record)


def name_of(generation: int) -> str:
    return f"{PREFIX}{generation:012d}"


def header() -> bytes:
    head = _HEAD.pack(b"BURACOLJ", VERSION, 0)
    return head + struct.pack("<I", zlib.crc32(head))


def frame(records: Iterable[Record]) -> bytes:
    """The bytes of a round's records, ready to append to the journal."""
    out = []
    for record in records:
        body = _encoder.encode(record)
        out.append(_FRAME.pack(len(body), zlib.crc32(body)))
        out.append(body)
    return b"".join(out)


def generations(directory: str, *, unfolded: bool = False,
                dir_fd: int | None = None) -> list[tuple[int, str]]:
    """The journals in ``directory``, oldest first: (generation, path); with ``unfolded``, the
    ones kept aside (``*.unfolded``) instead. With ``dir_fd``, those of the directory it holds
    (named by ``directory``'s path joined), whatever is at that path now."""
    found = []
    with os.scandir(directory if dir_fd is None else dir_fd) as entries:
        for entry in entries:
            m = _NAME.match(entry.name)
            if m and bool(m.group(2)) == unfolded and entry.is_file(follow_symlinks=False):
                found.append((int(m.group(1)), os.path.join(directory, entry.name)))
    return sorted(found)


def read(path: str) -> list[Record]:
    """The complete records of one journal, up to its torn tail (see :func:`read_all`)."""
    return read_all(path)[0]


def read_all(path: str, dir_fd: int | None = None) -> tuple[list[Record], int]:
    """The complete records of one journal, and how many damaged records were skipped.

    A record that fails its checksum (or does not decode) ends the journal when nothing whole
    follows it: the torn tail of a round whose sync never finished. A whole record after it
    means damage in the middle (a bad sector, an edit): the damaged record is skipped and the
    rest read. (The rest was dropped as if torn, and a restart deleted the journal with every
    acknowledged move after the damage unwritten, without a word.)

    Read a record at a time (the whole file was read at once: a damaged journal of a huge
    size, or a frame claiming a gigabyte, took that much memory before anything was checked).

    With ``dir_fd``: the journal of ``path``'s name in the directory it holds, never through a
    symbolic link.
    """
    def opener(name: str, flags: int) -> int:
        return os.open(os.path.basename(name), flags | os.O_NOFOLLOW, dir_fd=dir_fd)

    with open(path, "rb", opener=None if dir_fd is None else opener) as f:
        head = f.read(HEADER_SIZE)
        skipped = 0
        if len(head) < HEADER_SIZE or zlib.crc32(head[:-4]) != int.from_bytes(head[-4:],
                                                                             "little"):
            # torn while it was being created (no round used it: the header is synced before
            # any), unless whole records follow: then the header was damaged since, and the
            # records (acknowledged moves) were dropped with it
            if len(head) < HEADER_SIZE or _record_at(f) is None:
                return [], 0
            f.seek(HEADER_SIZE)
            skipped = 1
        else:
            magic, version, _ = _HEAD.unpack(head[:-4])
            if magic != b"BURACOLJ" or version != VERSION:
                raise ValueError(f"{path} is not a recorder journal of version {VERSION} "
                                 f"(version {version}): open the directory with the "
                                 "buraco_log that wrote it")
        records: list[Record] = []
        while len(frame := f.read(_FRAME.size)) == _FRAME.size:
            length, crc = _FRAME.unpack(frame)
            if length > _MAX_RECORD:
                break
            body = f.read(length)
            if len(body) < length:
                break
            record = _record(body, crc)
            if record is None:
                after = f.tell()
                if _record_at(f) is None:
                    break  # the torn tail
                f.seek(after)
                skipped += 1
                continue
            records.append(record)
    return records, skipped


def _record(body: bytes, crc: int) -> Record | None:
    if zlib.crc32(body) != crc:
        return None
    try:
        return _decoder.decode(body)
    except msgspec.DecodeError:
        return None


def _record_at(f: IO[bytes]) -> Record | None:
    """The whole record at ``f``'s position, if there is one."""
    frame = f.read(_FRAME.size)
    if len(frame) < _FRAME.size:
        return None
    length, crc = _FRAME.unpack(frame)
    if length > _MAX_RECORD:
        return None
    body = f.read(length)
    return _record(body, crc) if len(body) == length else None


def append_all(fd: int, data: bytes | memoryview) -> None:
    """Append every byte of ``data`` to a file opened with ``O_APPEND``, or raise.

    ``write`` may write less than asked (a disk filling up writes what fits and fails on the
    next call): the rest is written after it, so a record is either whole or torn at the end of
    the journal, where :func:`read` stops."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def create(directory: str, dir_fd: int, generation: int, ops: SyncOps) -> int:
    """Create journal ``generation`` with its header, durable name and all; its descriptor."""
    name = name_of(generation)
    # O_EXCL: a new file, never what is at the name (a symbolic link there was followed and
    # the file it named overwritten with the journal; a FIFO there was opened). Made in the
    # directory ``dir_fd`` holds, never by its path: another directory put at that path between
    # the caller's look and this call took the journal, away from its logs.
    fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC, 0o644,
                 dir_fd=dir_fd)
    try:
        append_all(fd, header())
        ops.fsync(fd)
        ops.fsync_dir(dir_fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):  # ours: a later try creates it afresh
            os.unlink(name, dir_fd=dir_fd)
        raise
    return fd


def mark_unsynced(dir_fd: int) -> bool:
    """Leave the ``UNSYNCED`` marker in the directory ``dir_fd`` holds (a sync of its logs
    failed); False if it could not be made."""
    try:
        os.close(os.open(UNSYNCED, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                         0o644, dir_fd=dir_fd))
    except OSError:
        return False
    return True


def unsynced(dir_fd: int) -> bool:
    """Whether the ``UNSYNCED`` marker is in the directory ``dir_fd`` holds."""
    return _named(dir_fd, UNSYNCED) is not None


LOCK_WAIT: Final = 2.0
"""Seconds :func:`recover` waits for another program's writer lock on a log to write back."""


def recover(directory: str, dir_fd: int, suffix: str, ops: SyncOps) -> tuple[Recovered, int]:
    """Write every journal's records back into their logs, make the logs durable, and remove
    the journals (keeping, renamed, any with a conflict). Returns what was done and the
    generation a new journal should take. The caller holds the directory for itself.

    The journals are read and removed in the directory ``dir_fd`` holds; the logs are written
    by their paths (each checked against the file its records name). Another directory put at
    the path meanwhile: the journals are kept (``OSError``), removed by the path they were
    another directory's, unread, and read by it they were not the logs' own."""
    done = Recovered()
    found = generations(directory, dir_fd=dir_fd)
    by_match: dict[str, list[Record]] = {}
    damaged = False
    for _, path in found:
        records, skipped = read_all(path, dir_fd)
        done.journals += 1
        done.records += len(records)
        done.conflicts += skipped  # their events may be missing: the journal is kept aside
        damaged = damaged or skipped > 0
        for record in records:
            by_match.setdefault(record.match, []).append(record)
    conflicted: set[str] = set()
    rewrite = unsynced(dir_fd)
    try:
        _replay_all(directory, dir_fd, suffix, by_match, rewrite, done, conflicted, ops)
    except OSError:  # a sync failed: the pages it could not write read back right meanwhile
        mark_unsynced(dir_fd)
        raise
    if found and _identity(directory) != _identity(dir_fd):
        raise OSError(errno.ESTALE, "the directory was renamed, or another put at its path, "
                      "while its journals were written back (they are kept: open the "
                      "recorder again where they are)", directory)
    keep = bool(conflicted) or damaged
    for _, path in found:
        name = os.path.basename(path)
        if keep:
            kept = path + ".unfolded"
            os.replace(name, name + ".unfolded", src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            done.kept.append(kept)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=dir_fd)
    # every record durable again; a journal kept aside (now or before) is fold's to do
    if rewrite and not keep and not generations(directory, unfolded=True, dir_fd=dir_fd):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(UNSYNCED, dir_fd=dir_fd)
    if found:
        ops.fsync_dir(dir_fd)
    return done, max([g for g, _ in found] + [_last_taken(dir_fd)]) + 1


def _replay_all(directory: str, dir_fd: int, suffix: str, by_match: dict[str, list[Record]],
                rewrite: bool, done: Recovered, conflicted: set[str], ops: SyncOps) -> None:
    """Replay each log's records (see :func:`recover`), noting in ``done`` and
    ``conflicted``; with ``rewrite``, every record is written again."""
    created = False
    for match, records in list(by_match.items()):
        standing = withdraw(records)
        done.withdrawn += len(records) - len(standing)
        if not standing:
            continue
        records = standing
        if not MATCH_NAME.fullmatch(match):  # it would write outside the directory
            done.conflicts += len(records)
            conflicted.add(match)
            continue
        path = os.path.join(directory, match + suffix)
        applied, made, lost = _replay(directory, dir_fd, path, records, ops, rewrite)
        done.applied += applied
        done.created += made
        if rewrite and not made:
            done.rewritten += len(records) - lost
        created = created or made > 0
        if lost:
            done.conflicts += lost
            conflicted.add(match)
    if created:
        ops.fsync_dir(dir_fd)


def _identity(where: str | int) -> tuple[int, int] | None:
    """(device, inode) of the directory at a path, or that a descriptor holds; None if none."""
    try:
        st = os.stat(where)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _last_taken(directory: str | int) -> int:
    """The highest generation any entry's name takes, journal or not (kept aside, or a FIFO
    or link of that name): the next journal is created past it."""
    with os.scandir(directory) as entries:
        return max((int(m.group(1)) for e in entries if (m := _NAME.match(e.name))), default=0)


def withdrawal(record: Record) -> Record:
    """The record that withdraws ``record`` (its appends were refused after it was
    journaled): the same file and offset, no data."""
    return Record(record.match, record.device, record.inode, record.offset, b"")


def withdraw(records: list[Record]) -> list[Record]:
    """``records`` (one log's, in journal order) without the withdrawals and what each one
    withdraws: the bytes earlier records of its file put at its offset or after."""
    kept: list[Record] = []
    named: set[tuple[int, int]] = set()  # every file a record so far named
    for record in records:
        file, cut = (record.device, record.inode), record.offset
        if record.data:
            kept.append(record)
            named.add(file)
            continue
        if file not in named:
            # A withdrawal naming a file no record named yet: the recorder adopted that file
            # (a seal rewrote the log while it was closed), having checked and synced that it
            # holds the events, and withdrew it from offset 0 before journaling it afresh.
            # Every earlier record of the log is spent. (Its next record torn by a power loss,
            # the earlier records named the old file, events and all, with the round's own
            # unacknowledged one the new file lacks: kept aside as a conflict.)
            kept = []
            named.add(file)
            continue
        out = []
        for k in kept:
            if (k.device, k.inode) != file or k.offset + len(k.data) <= cut:
                out.append(k)
            elif k.offset < cut:
                out.append(Record(k.match, k.device, k.inode, k.offset, k.data[:cut - k.offset]))
        kept = out
    return kept


_PAGE: Final = 4096


def _consistent(have: bytes, want: bytes) -> bool:
    """``have`` (a file's bytes where a record goes) could be the record's ``want`` after a
    power loss: equal, cut short, or with pages zero-filled or zero past a kept start. Any
    other byte is another file's."""
    if have == want[:len(have)]:
        return True
    for at in range(0, len(have), _PAGE):
        page, ours = have[at:at + _PAGE], want[at:at + _PAGE]
        if page != ours and not ours.startswith(page.rstrip(b"\0")):
            return False
    return True


def _segment_events(record: Record) -> list[ev.AnyEvent] | None:
    """The events of one record's segment (after the file header, at offset 0); None if its
    bytes are not one whole segment (a log with or without chain digests: its head's
    checksum tells which)."""
    data = memoryview(record.data)[log.HEADER_SIZE if record.offset == 0 else 0:]
    for digest in (0, log._DIGEST):
        size = log._SEG_HEAD.size + digest + log._SEG_TAIL.size
        head = bytes(data[:size])
        if len(head) < size or zlib.crc32(head[:-4]) != int.from_bytes(head[-4:], "little"):
            continue
        length, count, _ = log._SEG_HEAD.unpack_from(head)
        payload = bytes(data[size:size + length])
        if len(data) != size + length or zlib.crc32(payload) != int.from_bytes(
                head[-8:-4], "little"):
            return None
        if count == 0:  # a signature record (the recorder writes none): nothing to hold
            return []
        try:
            return log.decode_records(payload, ev.FORMAT_VERSION)
        except LogFormatError:
            return None
    return None


def _segment_start(record: Record) -> tuple[int, bytes | None, bytes] | None:
    """The first seq, the chain digest (None: an unsealed log's segment) and the events' bytes
    of a record's segment at offset > 0; None if its head is not a segment's."""
    data = record.data
    for digest in (0, log._DIGEST):
        size = log._SEG_HEAD.size + digest + log._SEG_TAIL.size
        head = data[:size]
        if len(head) < size or zlib.crc32(head[:-4]) != int.from_bytes(head[-4:], "little"):
            continue
        length, count, first_seq = log._SEG_HEAD.unpack_from(head)
        events = data[size:size + length][len(log._array_header(count)):]
        return first_seq, head[16:16 + digest] if digest else None, events
    return None


def _continues(path: str, fd: int, record: Record) -> bool:
    """The file ``fd`` holds, up to the record's offset, the events its segment continues: a
    whole segment ends there, after as many events as the segment's first seq, and (a sealed
    log) the chain its digest extends. A file that took the log's inode number, with its size,
    in the clock tick of the recorder's look at it (``docs/recorder.md``) ends there too, and
    had a power loss come before the withdrawal of a record made for it, its bytes where the
    record goes were all missing: it got the record. Read without decoding (checksums and the
    chain), only where a record is to be written back: after a power loss, never per round."""
    start = _segment_start(record)
    if start is None:
        return False
    first_seq, digest, events = start
    try:  # the reader goes on past a skipped part: it gets a copy of the bytes before it
        with _copy_of(fd, record.offset) as before, log.Reader(
                path, fd=before.fileno(), allow_torn=True, skip_until=record.offset) as reader:
            for _ in reader.segments():
                pass
            if reader.skipped_to is None or reader.skipped_to[0] != first_seq:
                return False
            chain = reader._chain
    except (OSError, LogFormatError):
        return False
    chain.update(events)
    return digest is None or chain.digest() == digest


def _copy_of(fd: int, size: int) -> IO[bytes]:
    """A file in memory (or a temporary one) holding the first ``size`` bytes of ``fd``."""
    copy: IO[bytes]
    if hasattr(os, "memfd_create"):
        copy = os.fdopen(os.memfd_create("buraco-journal-check", os.MFD_CLOEXEC), "w+b")
    else:
        copy = tempfile.TemporaryFile()  # noqa: SIM115 (the caller closes it: a with)
    try:
        copy.write(os.pread(fd, size, 0))
        copy.flush()
    except BaseException:
        copy.close()
        raise
    return copy


def _holds_events(path: str, records: list[Record]) -> bool:
    """The log at ``path`` holds every event of ``records``, each at its seq, whatever its
    bytes: a ``seal`` rewrote the log (chain digests, a new file) after the recorder wrote it,
    and the recorder checked the new file holds its events before it went on (an adopted
    log). Had the journal no record of that adoption (a power loss, or its append failed
    before it was synced), the records naming the old file were taken for a conflict, and the
    journal was kept aside as ``*.unfolded`` with nothing missing from the log."""
    wanted: dict[int, ev.AnyEvent] = {}
    for record in records:
        events = _segment_events(record)
        if events is None:
            return False
        wanted.update((event.seq, event) for event in events)
    if not wanted:
        return False
    try:
        with log.Reader(path, allow_torn=True) as reader:
            for event in reader:
                if event.seq in wanted and wanted.pop(event.seq) != event:
                    return False
                if not wanted:
                    return True
    except (OSError, LogFormatError):
        return False
    return False


def place_at(dir_fd: int, tmp: str, path: str, fd: int) -> bool:
    """``log.place_new`` in the directory ``dir_fd`` holds, of the names ``tmp`` and ``path``
    end with: a hard link made there, whatever directory is at their paths now; where the file
    system makes none, by the paths (a rename that never replaces: ``log.place_new``). True if
    ``tmp``'s name is gone. ``fd``: the file written; what is at ``tmp``'s name is that file
    (looked at before the link and after it), else ``OSError`` EBUSY naming ``path`` and the
    name made taken back: a link or another file put at the temporary name was put at the
    log's."""
    src, dst = os.path.basename(tmp), os.path.basename(path)
    mine = _identity(fd)
    if _named(dir_fd, src) != mine:
        raise OSError(errno.EBUSY, log._SWAPPED, path)
    try:
        os.link(src, dst, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in log._NO_HARD_LINKS:
            raise
        return log.place_new(tmp, path, fd)
    if _named(dir_fd, dst) != mine:
        with contextlib.suppress(OSError):  # the name made is a second name of what is at
            if _named(dir_fd, dst) == _named(dir_fd, src):  # tmp's: that one only
                os.unlink(dst, dir_fd=dir_fd)
        raise OSError(errno.EBUSY, log._SWAPPED, path)
    return False


def _named(dir_fd: int, name: str) -> tuple[int, int] | None:
    """(device, inode) of what is at ``name`` in the directory ``dir_fd`` holds (a link's
    own); None if nothing is."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _replay(directory: str, dir_fd: int, path: str, records: list[Record],
            ops: SyncOps, rewrite: bool = False) -> tuple[int, int, int]:
    """Replay one log's records in order: (applied, created, conflicts). With ``rewrite`` (a
    sync failed, ``UNSYNCED``), the records' bytes the log holds are written again too."""
    # The file the recorder wrote last. Records naming an earlier file are of a log that a
    # program rewrote while the recorder had it closed (a seal), and the recorder checked it
    # holds the same events before it went on in the new file: those records are spent.
    ours = (records[-1].device, records[-1].inode)
    records = [r for r in records if (r.device, r.inode) == ours]
    # A record at offset 0 is a log being created (header and first segment): the records
    # before the last such one are of an earlier file of that name, even if they name the same
    # inode (a file system reuses a removed file's inode number, ext4 at once). Written back,
    # the old log's bytes overwrote the new one's and left the old log's tail after them.
    starts = [i for i, r in enumerate(records) if r.offset == 0]
    if starts:
        records = records[starts[-1]:]
    try:
        # a seal or repair holds the lock a moment (a seal refuses a log this journal is
        # ahead of, and lets go): wait for it rather than leave the records unwritten
        lock: log.LogLock | None = log.LogLock(path, timeout=LOCK_WAIT)
    except LogFormatError:
        if os.path.lexists(path) or records[0].offset != 0:
            return 0, 0, len(records)  # held by another writer, or its beginning is lost
        lock = None
    if lock is None:  # the new log's name was never made durable: create it again
        # Every record goes in before the name does: a log linked with its first record alone
        # and the rest still to write was, after a crash there, another file than the records
        # name (a conflict), and the acknowledged events after its first were never written.
        # Made and linked in the directory held, beside its journal (by the path, another
        # directory put there meanwhile took the log).
        fd, tmp = log._create_temp(directory, os.path.basename(path), dir_fd=dir_fd)
        try:
            size = written = 0
            for record in records:
                if not 0 <= record.offset <= size:  # a gap: the log ends before it
                    break
                log._write_all(fd, record.data, record.offset)
                size = max(size, record.offset + len(record.data))
                written += 1
            ops.fsync(fd)
            renamed = place_at(dir_fd, tmp, path, fd)
        except BaseException:
            os.close(fd)
            os.unlink(os.path.basename(tmp), dir_fd=dir_fd)
            raise
        os.close(fd)
        if not renamed:
            os.unlink(os.path.basename(tmp), dir_fd=dir_fd)
        return written, 1, len(records) - written
    held, lock.fd = lock.fd, None
    assert held is not None
    fd = held
    if lock.identity != ours:  # another file now: not ours to touch
        try:
            # unless it already holds every record (a log this function created again from
            # the journal, by a recovery that stopped before it removed the journal), or
            # every event of them (a seal rewrote it: below)
            if (all(os.pread(fd, len(r.data), r.offset) == r.data for r in records)
                    or _holds_events(path, records)):
                return 0, 0, 0
        finally:
            os.close(fd)
        return 0, 0, len(records)
    applied = touched = 0
    try:
        # The same (device, inode) is not yet the same file: a removed log's inode number is
        # given to the next file created (ext4 at once), and that file can have the same size.
        # Ours holds each record's bytes, or after a power loss some of them missing or zero.
        if not all(r.offset < 0 or _consistent(os.pread(fd, len(r.data), r.offset), r.data)
                   for r in records):  # (before the file: the loop below stops there)
            return 0, 0, 0 if _holds_events(path, records) else len(records)
        # Missing bytes are no proof either: another file of the log's size ends where the
        # records go. What is to be written must continue what the file holds before it.
        first = records[0]
        if (first.offset > 0
                and any(os.pread(fd, len(r.data), r.offset) != r.data for r in records)
                and not _continues(path, fd, first)):
            return 0, 0, 0 if _holds_events(path, records) else len(records)
        # Synced whether or not a byte is written: after a crash of the process alone the
        # log holds the records' bytes in the page cache, unsynced, and the journal, their only
        # durable copy, is deleted next (it was synced only where a record was written back:
        # a power loss soon after the restart lost every move the logs held unsynced).
        touched = 1
        size = os.fstat(fd).st_size
        for i, record in enumerate(records):
            if not 0 <= record.offset <= size:  # a gap (or before the file): written, it
                # would leave zeros no reader gets past; the log ends where it is instead
                return applied, 0, len(records) - i
            size = max(size, record.offset + len(record.data))
            if os.pread(fd, len(record.data), record.offset) != record.data:
                log._write_all(fd, record.data, record.offset)
                applied += 1
            elif rewrite:  # equal in the page cache, which is no proof they are on disk
                log._write_all(fd, record.data, record.offset)
        return applied, 0, 0
    finally:
        try:
            if touched:
                ops.fsync(fd)
        finally:
            os.close(fd)
