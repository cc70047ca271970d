"""The match log: append-only framing, integrity chain, writer, reader, recovery.

One file per match. ``schema/LOG_FORMAT.md`` is the full description; in short::

    file    = header segment*
    header  = "BURACOLG" u16:layout u16:version u32:flags u32:crc32            (20 bytes)
    segment = u32:length u32:count u64:first_seq [32 bytes:chain] u32:payload_crc u32:header_crc
              payload: a MessagePack array of ``count`` events, ``length`` bytes

Integers are little-endian. ``chain`` is present only in sealed logs: the SHA-256 of every event
byte from the first event to the end of this segment (one running hash, so the head digest does
not depend on how events were grouped into segments). Only the standard library and msgspec are
used here: the core never imports the edge libraries.
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import fcntl
import functools
import hashlib
import importlib
import itertools
import operator
import os
import re
import select
import stat
import struct
import threading
import time
import warnings
import weakref
import zlib
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import IO, Any, Concatenate, Final, Literal, NoReturn, ParamSpec, Protocol, TypeVar

import msgspec

from buraco_log import __version__, watch
from buraco_log import events as ev
from buraco_log.errors import WRITE_FAILURES, IllegalMoveError, LogFormatError, LogWriteError
from buraco_log.signing import record as sigrec

MAGIC: Final = b"BURACOLG"
LAYOUT: Final = 1
"""Version of the framing described above (the events inside carry ``events.FORMAT_VERSION``)."""
FLAG_SEALED: Final = 1
KNOWN_FLAGS: Final = FLAG_SEALED
SIGNED_VERSION: Final = 2
"""From this event format version on, a segment of ``count`` 0 is a signature record."""
NEWER_ADVICE: Final = (f": it was written by a newer release than this one "
                       f"({__version__}); upgrade buraco-log to read it")
"""What a reader says of a log whose header it cannot read because a later release wrote it."""
FIRST_SEQ: Final = 0
"""The seq of the first event of every log; seqs then go up by one."""

MAX_PAYLOAD: Final = 16 * 1024 * 1024
"""Largest segment payload a reader accepts, checked before anything is read or decoded."""
MAX_DEPTH: Final = 32
"""Deepest MessagePack nesting accepted before an untyped decode (events need 4)."""
BATCH_EVENTS: Final = 16384
"""Events per segment in batched mode and when a log is rewritten (about 0.5 MB)."""

_HEADER = struct.Struct("<8sHHII")
HEADER_SIZE: Final = _HEADER.size
_SEG_HEAD = struct.Struct("<IIQ")
_SEG_TAIL = struct.Struct("<II")
_DIGEST = 32
_CHAIN_DOMAIN = b"buraco-log chain\x00"
_READ_BUFFER = 1 << 20
_SEQ = operator.attrgetter("seq")


WRITER_HOLDS: Final = ("; a writer holds this log's lock and may be writing it now (read again "
                       "once it is done)")
"""What a torn tail's reason ends with when it was read while a writer held the lock: the
record being written now, which `repair` refuses to cut until the writer lets go."""


class Torn(msgspec.Struct, frozen=True):
    """An incomplete last segment: what a crash during an append leaves behind."""

    offset: int  # where the incomplete segment starts; everything before it is valid
    size: int  # bytes from ``offset`` to the end of the file
    reason: str
    # (`verify`) the recorder's journal that holds acknowledged events these bytes lack: then
    # the tail is no unacknowledged write, and `repair` refuses to cut it
    journal: str | None = None
    # the seq the torn record would have begun with (the next event's); None for a signature
    # record, which holds no seq (its reason names the seq it follows)
    seq: int | None = None


class LogInfo(msgspec.Struct, frozen=True):
    """What a full read of a log found. ``head`` is computed even for an unsealed log."""

    path: str
    version: int
    sealed: bool
    events: int
    segments: int
    valid_bytes: int
    head: str
    torn: Torn | None = None
    signatures: int = 0  # signature records read (format version 2)


class RepairReport(msgspec.Struct, frozen=True):
    path: str
    cut_offset: int
    cut_bytes: int
    backup: str | None
    reason: str
    events_kept: int


# -- building blocks ---------------------------------------------------------------------------


def _file_header(version: int, sealed: bool) -> bytes:
    flags = FLAG_SEALED if sealed else 0
    head = _HEADER.pack(MAGIC, LAYOUT, version, flags, 0)[:-4]
    return head + struct.pack("<I", zlib.crc32(head))


def _array_header(count: int) -> bytes:
    if count < 16:
        return bytes((0x90 | count,))
    if count < 0x10000:
        return b"\xdc" + count.to_bytes(2, "big")
    return b"\xdd" + count.to_bytes(4, "big")


def chain_start(version: int = ev.FORMAT_VERSION) -> Any:
    """A fresh running hash for a log of event format ``version`` (``hashlib.sha256`` object)."""
    return hashlib.sha256(_CHAIN_DOMAIN + version.to_bytes(2, "little"))


def _segment(payload: bytes, count: int, first_seq: int, chain: bytes | None) -> bytes:
    head = _SEG_HEAD.pack(len(payload), count, first_seq)
    if chain is not None:
        head += chain
    head += zlib.crc32(payload).to_bytes(4, "little")
    return head + zlib.crc32(head).to_bytes(4, "little") + payload


_WIDTHS: Final = {0xC4: 1, 0xC5: 2, 0xC6: 4, 0xD9: 1, 0xDA: 2, 0xDB: 4}
_EXT_WIDTHS: Final = {0xC7: 1, 0xC8: 2, 0xC9: 4}
_FIXED_SIZES: Final = {0xCA: 4, 0xCB: 8, 0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8, 0xD0: 1, 0xD1: 2,
                       0xD2: 4, 0xD3: 8}


def _token(mv: memoryview, pos: int) -> tuple[int, int]:
    """The MessagePack token at ``pos``: (where the next one starts, how many values it
    contains: -1 for a scalar, else a container's item count, a map's keys and values both
    counted). Raises ``ValueError`` on a byte that is never MessagePack."""
    b = mv[pos]
    pos += 1
    size = 0  # bytes of body to skip
    items = -1  # >= 0 for a container
    if b <= 0x7F or b >= 0xE0 or b in (0xC0, 0xC2, 0xC3):
        pass
    elif b <= 0x8F:
        items = (b & 0x0F) * 2
    elif b <= 0x9F:
        items = b & 0x0F
    elif b <= 0xBF:
        size = b & 0x1F
    elif b == 0xC1:
        raise ValueError(f"byte 0xc1 at {pos - 1} is not MessagePack")
    elif b in _WIDTHS:
        width = _WIDTHS[b]
        size = width + int.from_bytes(mv[pos : pos + width], "big")
    elif b in _EXT_WIDTHS:
        width = _EXT_WIDTHS[b]
        size = width + 1 + int.from_bytes(mv[pos : pos + width], "big")
    elif b in _FIXED_SIZES:
        size = _FIXED_SIZES[b]
    elif b <= 0xD8:  # fixext 1, 2, 4, 8, 16 plus the type byte
        size = 1 + (1, 2, 4, 8, 16)[b - 0xD4]
    elif b in (0xDC, 0xDE):
        items = int.from_bytes(mv[pos : pos + 2], "big") * (2 if b == 0xDE else 1)
        pos += 2
    else:  # 0xDD, 0xDF
        items = int.from_bytes(mv[pos : pos + 4], "big") * (2 if b == 0xDF else 1)
        pos += 4
    return pos + size, items


def msgpack_depth(data: bytes | memoryview, limit: int = MAX_DEPTH) -> int:
    """Deepest nesting of the MessagePack values in ``data``, read without decoding them.

    Raises ``ValueError`` past ``limit`` or on malformed bytes. msgspec's untyped decoder can
    overflow the C stack on very deep input (before Python 3.14), so this runs before it.
    """
    mv = memoryview(data)
    n = len(mv)
    pos = 0
    stack: list[int] = []  # items still expected by each open container
    deepest = 0
    while pos < n:
        pos, items = _token(mv, pos)
        if pos > n:
            raise ValueError("MessagePack value runs past the end of the data")
        if stack:
            stack[-1] -= 1
        if items > 0:
            stack.append(items)
            deepest = max(deepest, len(stack))
            if deepest > limit:
                raise ValueError(f"MessagePack nesting deeper than {limit}")
        elif items == 0:
            deepest = max(deepest, len(stack) + 1)
        while stack and stack[-1] == 0:
            stack.pop()
    if stack:
        raise ValueError("MessagePack container runs past the end of the data")
    return deepest


def _value_end(mv: memoryview, pos: int, limit: int) -> int:
    """Where the one MessagePack value starting at ``pos`` ends, nested at most ``limit``
    deep (the rule of :func:`msgpack_depth`), read without decoding it. Raises
    ``ValueError``."""
    n = len(mv)
    stack: list[int] = []
    while True:
        if pos >= n:
            raise ValueError("MessagePack container runs past the end of the data")
        pos, items = _token(mv, pos)
        if pos > n:
            raise ValueError("MessagePack value runs past the end of the data")
        if stack:
            stack[-1] -= 1
        if items > 0:
            stack.append(items)
            if len(stack) > limit:
                raise ValueError(f"MessagePack nesting deeper than {limit + 1}")
        while stack and stack[-1] == 0:
            stack.pop()
        if not stack:
            return pos


INT_MIN: Final = -(2**63)
INT_MAX: Final = 2**63 - 1
"""Every integer in an event is a signed 64-bit value, in both formats. MessagePack could hold
up to 2**64 - 1 and JSON any size, but the other form could not: a value outside is refused."""


def out_of_range(value: Any, name: str = "") -> str | None:
    """Where in ``value`` (an event, or any part of one) an integer lies outside
    ``INT_MIN..INT_MAX``, as ``field``, ``field[2][0]`` or ``rules.jokers``; None if nowhere."""
    if isinstance(value, bool) or value is None or isinstance(value, (str, float, bytes)):
        return None
    if isinstance(value, int):
        return None if INT_MIN <= value <= INT_MAX else (name or "value")
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            if (found := out_of_range(item, f"{name}[{i}]")) is not None:
                return found
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{name}.{key}" if name else str(key)
            if (found := out_of_range(item, where)) is not None:
                return found
        return None
    fields = getattr(value, "__struct_fields__", None)
    if fields is not None:
        for field in fields:
            where = f"{name}.{field}" if name else field
            if (found := out_of_range(getattr(value, field), where)) is not None:
                return found
    return None


_HUGE = re.compile(rb"\xcf[\x80-\xff]")


def _maybe_huge(data: bytes) -> bool:
    """Whether MessagePack ``data`` may hold an integer of 2**63 or more: a uint64 marker whose
    value has its top bit set (or the same two bytes inside other data). One C-level search:
    a plain 0xcf is common (every ``at`` after 1970 + 50 days is a uint64)."""
    return _HUGE.search(data) is not None


_RAW_ITEMS = msgspec.msgpack.Decoder(list[msgspec.Raw])


def _suspects(payload: bytes, start: int) -> list[int]:
    """The indices of the events of a segment whose own bytes hold the uint64 pattern of
    :func:`_maybe_huge` (``start``: where the first event begins, after the array header).

    The pattern is common inside other data (a card code 0xcf before a nil is ``cc cf c0``),
    so a segment that has it somewhere is not looked at event by event: its items' bytes are
    cut out in one C-level decode, and each match is placed in the item holding it."""
    ends = list(itertools.accumulate(map(len, _RAW_ITEMS.decode(payload)), initial=start))
    found: list[int] = []
    for match in _HUGE.finditer(payload, start):
        index = bisect.bisect_right(ends, match.start()) - 1
        if not found or found[-1] != index:
            found.append(index)
    return found


def _range_error(event: Any, where: str) -> str:
    tag = type(event).__struct_config__.tag
    return (
        f"event {tag!r}: field {where!r} holds an integer outside the signed 64-bit range "
        f"({INT_MIN} to {INT_MAX})"
    )


_ENCODE_ERRORS: Final = (TypeError, UnicodeEncodeError)
"""What msgspec raises for a field it cannot encode: an object of no known type, or text with
a lone surrogate (``"\\ud800"``, which no UTF-8 file can hold)."""


def cannot_encode(event: ev.AnyEvent, exc: BaseException) -> str:
    """Why ``event`` cannot be encoded at all (``exc``: what msgspec raised), naming the field."""
    name = type(event).__name__
    for field in getattr(type(event), "__struct_fields__", ()):
        try:
            ev._encoder.encode(getattr(event, field))
        except OverflowError:
            continue
        except _ENCODE_ERRORS as inner:
            exc = inner
            break
    else:
        field = ""
    if isinstance(exc, UnicodeEncodeError):
        return (f"{name} cannot be recorded: {f'field {field!r}' if field else 'a field'} "
                f"holds text with a lone surrogate ({exc.object[exc.start:exc.end]!r}), which "
                "is not Unicode: a log's text is UTF-8")
    return f"{name} cannot be recorded: {exc}{f' (field {field!r})' if field else ''}"


def _seq_of(event: Any) -> int | None:
    seq = getattr(event, "seq", None)
    return seq if type(seq) is int else None


def encode_checked(event: ev.AnyEvent) -> bytes:
    """``events.encode``, refusing an integer outside the signed 64-bit range (a
    :class:`LogFormatError` of kind ``range`` naming the field) instead of ``OverflowError``,
    and a field msgspec cannot encode at all (an object of an unknown type, text with a lone
    surrogate) as kind ``validate`` instead of ``TypeError`` or ``UnicodeEncodeError``."""
    try:
        data = ev.encode(event)
    except OverflowError:
        data = b"\xcf\xff"  # too large even for MessagePack: find which field below
    except _ENCODE_ERRORS as exc:
        raise LogFormatError(cannot_encode(event, exc), seq=_seq_of(event),
                             kind="validate") from None
    if _maybe_huge(data):
        where = out_of_range(event)
        if where is not None:
            raise LogFormatError(_range_error(event, where), seq=event.seq, kind="range")
    return data


MAX_EVENT: Final = MAX_PAYLOAD - 5  # a segment's payload: an array header, then its events


def _too_large(event: ev.AnyEvent, size: int) -> str:
    return (f"{type(event).__name__} is {size:,} bytes encoded; a log's record holds at most "
            f"{MAX_EVENT:,}")


def unreadable(event: ev.AnyEvent, data: bytes) -> str | None:
    """Why a reader could not decode ``data``, the encoding of ``event``, naming the field (a
    string or ``True`` for a seat, an int for a note), or None if it can. msgspec encodes
    whatever a field holds; written, such an event made the rest of the log unreadable."""
    try:
        decoded = ev.decode(data)
    except msgspec.ValidationError as exc:
        # an event is an array [tag, field...]: say `$[3]` as the field's name
        fields = type(event).__struct_fields__
        text = re.sub(r" - at `\$\[(\d+)\](.*)`$", lambda m: (
            f" (field {fields[int(m[1]) - 1]!r}{', at ' + m[2] if m[2] else ''})"
            if 1 <= int(m[1]) <= len(fields) else m[0]), str(exc))
        return f"{type(event).__name__} cannot be recorded: {text}"
    if decoded != event:  # a list where the event holds a tuple: the same bytes, but the
        # rules engine (compiled) takes only what a reader hands it, and raised TypeError
        return f"{type(event).__name__} cannot be recorded: {_not_as_read(event, decoded)}"
    return None


def _not_as_read(event: ev.AnyEvent, decoded: ev.AnyEvent) -> str:
    """Which field of ``event`` differs from what a reader decodes of it, and how."""
    given: Any = event
    read: Any = decoded
    path = ""
    while True:  # down to the first value that differs: through structs and tuples
        if isinstance(given, msgspec.Struct) and type(given) is type(read):
            name = next((n for n in given.__struct_fields__
                         if getattr(given, n) != getattr(read, n)), None)
            if name is None:
                break
            given, read = getattr(given, name), getattr(read, name)
            path += f".{name}" if path else name
        elif type(given) is tuple and type(read) is tuple and len(given) == len(read):
            i = next((i for i, (a, b) in enumerate(zip(given, read, strict=True)) if a != b),
                     None)
            if i is None:
                break
            given, read = given[i], read[i]
            path += f"[{i}]"
        else:
            break
    field, _, at = path.partition("[")
    where = f"field {field!r}" + (f", at [{at}" if at else "")
    return (f"{where} holds a {type(given).__name__} ({clip(repr(given), 60)}) where a reader "
            f"reads a {type(read).__name__}: build events as a reader does (tuples for "
            "sequences)")


_SECTOR = 512


_LOST_END: Final = 8
"""The fewest zero bytes, from a sector boundary to the end of the file, that read as a last
sector never written (fewer could be a value's own zeros)."""


def _lost_pages(f: IO[bytes], start: int, payload: bytes, room: int = 0) -> bool:
    """True if ``payload`` (read from byte ``start``) is the end of the file and one of its
    512-byte sectors is all zero, or everything from its last sector boundary to the end of the
    file (at least ``_LOST_END`` bytes): the record was written but some of its pages never
    reached the disk. etcd calls this a torn entry and truncates it, as a torn tail; an edit in
    the middle of a log, or one that leaves no zero sector, is still damage.

    ``room``: how many bytes may follow the payload in the same write (a signed log writes an
    events record and its signature record, at most ``room`` bytes, with one fsync): a sector
    of the events lost while the signature's reached the disk is the same torn write."""
    rest = f.read(room + 1)
    if len(rest) > room:
        # Zero bytes from here to the end of the file: the records written after this one
        # with the same fsync (one append_many, a batch of several segments) lost whole, as
        # its own sectors were (it was damage: no repair, and nothing had been acknowledged).
        # Any other byte after it is a record's: damage, as ever.
        if rest.count(0) != len(rest) or _nonzero_at(f) is not None:
            return False
        rest = bytes(_SECTOR)
    written = payload + rest  # the lost sector must take some of the payload's bytes
    first = -start % _SECTOR  # the first sector boundary inside the payload
    for i in range(first, min(len(payload), len(written) - _SECTOR + 1), _SECTOR):
        if written.count(0, i, i + _SECTOR) == _SECTOR:
            return True
    last = first + max(0, len(written) - first) // _SECTOR * _SECTOR  # the last boundary
    return (first <= last < len(payload) and last <= len(written) - _LOST_END
            and written.count(0, last) == len(written) - last)


_PACKED: Final = ((b"\x1f\x8b", "gzip-compressed"), (b"\x28\xb5\x2f\xfd", "zstd-compressed"),
                  (b"\xfd7zXZ\x00", "xz-compressed"), (b"BZh", "bzip2-compressed"),
                  (b"PK\x03\x04", "a zip archive"), (b"\x04\x22\x4d\x18", "lz4-compressed"))


def compressed(head: bytes) -> str | None:
    """What compressed a file that begins with ``head`` ("gzip-compressed", ...), or None: an
    archive of logs is often kept compressed, and "bad magic" alone does not say why."""
    return next((what for magic, what in _PACKED if head.startswith(magic)), None)


def _is_zero(f: IO[bytes], first: bytes) -> bool:
    """True if ``first`` and everything left in ``f`` are zero bytes (a zero-filled tail)."""
    return first.count(0) == len(first) and _nonzero_at(f) is None


def _nonzero_at(f: IO[bytes]) -> int | None:
    """The offset of the first byte that is not zero from ``f``'s position on, None if there
    is none (everything left is zero)."""
    # Holes are skipped (SEEK_DATA), not read: a sparse tail of any size is answered at once
    # (a 100 GiB one took minutes). Only data regions are read, with pread.
    fd = f.fileno()
    pos, end = f.tell(), os.fstat(fd).st_size
    while pos < end:
        try:
            data = os.lseek(fd, pos, os.SEEK_DATA)
            hole = os.lseek(fd, data, os.SEEK_HOLE)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # nothing but a hole up to the end
                return None
            data, hole = pos, end  # no SEEK_DATA here: read everything
        pos = data
        while pos < min(hole, end):
            chunk = os.pread(fd, min(_READ_BUFFER, min(hole, end) - pos), pos)
            if not chunk:
                return None
            if chunk.count(0) != len(chunk):
                return pos + len(chunk) - len(chunk.lstrip(b"\0"))
            pos += len(chunk)
    return None


# -- reading -----------------------------------------------------------------------------------


class _Torn(Exception):
    """Internal signal: the segment at ``offset`` is incomplete."""

    def __init__(self, offset: int, reason: str, *, signature: bool = False) -> None:
        super().__init__(reason)
        self.offset = offset
        self.reason = reason
        self.signature = signature  # a signature record: it holds no seq (its reason names
        # the seq it follows)


def _write_locked(f: IO[bytes], *, mine: bool = False) -> bool | None:
    """Whether another process holds the writer lock (an exclusive ``flock``) on the file
    ``f`` reads, as Linux's /proc/locks says; None where it cannot say (falsy). Read only:
    trying the lock would, for a moment, refuse a writer or `repair` that took it then. (A
    lock of this process is its own reading, as a recorder reads the logs it has locked;
    ``mine``: count it too, as a thread of this process may be the writer.)"""
    st = os.fstat(f.fileno())
    where = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}".encode()
    me = b"" if mine else str(os.getpid()).encode()
    try:
        with open("/proc/locks", "rb") as locks:
            for line in locks:  # "1: FLOCK  ADVISORY  WRITE 1234 fe:00:2295219 0 EOF"
                parts = line.split()
                if (parts[1:2] == [b"FLOCK"] and parts[3:4] == [b"WRITE"]
                        and parts[5:6] == [where] and parts[4:5] != [me]):
                    return True
    except OSError:
        return None
    return False


class Reader:
    """Streams the events of one log with memory bounded by one segment.

    Every segment is checked before any of its events is handed out: checksums, seq order, the
    chain of a sealed log. Damage raises :class:`LogFormatError` naming the byte offset (and the
    seq when known); nothing after damage is ever returned. A torn tail ends the stream: it
    raises too unless ``allow_torn``, in which case it is recorded in :attr:`info`.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        allow_torn: bool = False,
        fd: int | None = None,
        skip_until: int = 0,
        canonical: bool = False,
        refuse_repeats: bool = False,
    ) -> None:
        """``fd``: read this open descriptor of ``path`` (duplicated, read from byte 0) instead
        of opening ``path`` again; a lock holder reads the very file it locked this way.

        ``canonical``: refuse (kind ``decode``) an event whose bytes are not the ones
        buraco_log writes for it (a map key twice, an integer in a longer form than needed:
        another program's writing). Its head digest is over those bytes, so a rewrite
        (``seal``, ``convert``) would change it; they read this way.

        ``skip_until``: the segments that end at or before this byte offset are checked
        (checksums, seq order, the chain) but not decoded, and yield no events: a reader that
        already holds what they decode to (a state saved at that offset) reads only the rest.
        :attr:`skipped_to` then says where the skipped part ended.

        ``refuse_repeats`` (implied by ``canonical``): refuse (kind ``seq``) a signature
        record that repeats the one before it. A writer records one per head, so the copy was
        put in the file by something else; the audit reports it (``sign.duplicate``) and so
        reads on, but `verify` must not pass it, nor may a rewrite drop it unsaid."""
        self.path = os.fspath(path)
        self._where = os.path.abspath(self.path)  # the same file after a chdir
        self.allow_torn = allow_torn
        self._skip_until = skip_until
        self._canonical = canonical
        self._refuse_repeats = refuse_repeats or canonical
        self._start_key: str | None = None  # the key id the match start records: signed
        self.skipped_to: tuple[int, str] | None = None
        """``(seq of the next event, chain head)`` where a segment ended exactly at
        ``skip_until`` (None: no segment did)."""
        self._lock_holder = fd is not None  # given the locked descriptor of a writer
        if fd is None:
            fd = open_log_fd(self.path)
        else:
            fd = os.dup(fd)
            os.lseek(fd, 0, os.SEEK_SET)
        self._f: IO[bytes] = os.fdopen(fd, "rb", buffering=_READ_BUFFER)
        self._offset = 0
        self._next_seq = FIRST_SEQ
        self._segments = 0
        self.version = ev.FORMAT_VERSION
        self.sealed = False
        self._chain = chain_start()
        self._torn: Torn | None = None
        self._torn_signature = False  # the torn record is a signature record
        self.signatures: list[sigrec.SignedHead] = []  # checked against the chain, not keys
        self._header_read = False
        self._done = False
        self._seg_head_size = _SEG_HEAD.size + _SEG_TAIL.size  # the header says (sealed: more)
        self._end: int | None = None  # no record starting here or later is read (None: any)

    # context manager and cleanup
    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._f.close()

    def _error(
        self, message: str, kind: str, offset: int, seq: int | None = None
    ) -> LogFormatError:
        return LogFormatError(message, path=self.path, offset=offset, seq=seq, kind=kind)

    @property
    def info(self) -> LogInfo:
        """What has been read so far (the whole log once iteration has finished)."""
        return LogInfo(
            path=self.path,
            version=self.version,
            sealed=self.sealed,
            events=self._next_seq - FIRST_SEQ,
            segments=self._segments,
            valid_bytes=self._offset,
            head=self._chain.hexdigest(),
            torn=self._torn,
            signatures=len(self.signatures),
        )

    @property
    def head(self) -> str:
        return str(self._chain.hexdigest())

    def __iter__(self) -> Iterator[ev.AnyEvent]:
        for _, events in self.segments():
            yield from events

    def read_header(self) -> None:
        """Read and check the file header now (``version`` and ``sealed`` are then known)."""
        if self._header_read or self._done:
            return
        try:
            self._read_header()
        except _Torn as torn:
            self._stop_torn(torn)

    def segments(self) -> Iterator[tuple[int, list[ev.AnyEvent]]]:
        """Yield ``(byte offset, events)`` for each segment, in order."""
        self.read_header()
        if self._done:
            return
        # The log as it was when reading began: its records that start before its size then
        # (the last read whole, however far it runs). A writer appending as fast as the log
        # was read (a batch import) kept `convert` reading, and writing, for as long as it
        # wrote; the JSON Lines reader stops at that size too. `follow` reads on.
        self._end = os.fstat(self._f.fileno()).st_size
        watched = watch.active()  # a bar on the terminal: a log of millions of events
        if watched:
            what = f"reading {os.path.basename(self.path)}"
            size = self._end
            gap = watch.every(size, 1 << 16)
            mark = self._offset + gap
        try:
            while True:
                seg = self._read_segment()
                if seg is None:
                    break
                if watched and self._offset >= mark:
                    watch.note(what, self._offset, size, "bytes")
                    mark = self._offset + gap
                yield seg
        except _Torn as torn:
            self._stop_torn(torn)
        except OSError as exc:
            raise os_error(exc, self.path, self._offset) from None
        finally:
            if watched:
                watch.note(what, size, size, "bytes")  # the step is over, however it ended
        self._done = True

    def _stop_torn(self, torn: _Torn) -> None:
        self._done = True
        self._f.seek(0, os.SEEK_END)
        reason = torn.reason
        held = torn.offset >= HEADER_SIZE and not self._lock_holder and _write_locked(self._f)
        if held:
            # read while a writer appends: no crash, the record it is writing right now
            reason += WRITER_HOLDS
        self._torn_signature = torn.signature
        self._torn = Torn(torn.offset, self._f.tell() - torn.offset, reason,
                          seq=self.torn_seq)
        if not self.allow_torn:
            advice = ("no event is intact: delete the file" if torn.offset < HEADER_SIZE else
                      "the events before it are intact" if held else  # repair is refused
                      "the events before it are intact (`buraco-log repair` cuts it off)")
            raise self._error(
                f"torn tail: {reason}; {advice}",
                "torn",
                torn.offset,
                self.torn_seq,
            )

    @property
    def torn_seq(self) -> int | None:
        """The seq a torn tail's record would have begun with (the next event's); None when
        it is a signature record, which holds no seq: its reason names the seq it follows,
        as every error of a signature record does, never the event after it."""
        return None if self._torn_signature else self._next_seq

    def follow(
        self, *, poll: float = 0.05, idle_timeout: float | None = None,
        torn_timeout: float = 1.0,
    ) -> Iterator[ev.AnyEvent]:
        """Tail a log that is still being written.

        A partial last segment while a writer holds the log's lock is "not yet written": wait
        and read it again. With no writer holding the lock, it is a crash's torn tail once it
        has stayed the same for ``torn_timeout`` seconds (a copy still being made grows
        meanwhile): the torn-tail error is raised (kind ``torn``, its byte offset and seq), or
        with ``allow_torn`` the stream ends and :attr:`info` records it. Stops after the
        ``MatchEnded`` event, or after ``idle_timeout`` seconds without new events (on a torn
        tail no writer holds, with that error). A path that has named no file for
        ``torn_timeout`` seconds (the log removed, or renamed away: nothing will be appended
        to it that a writer acknowledges) ends it with an error of kind ``io``.
        """
        self._end = None  # it reads on, past the size the log had when a read began
        last = time.monotonic()
        torn_since: tuple[float, int, int] | None = None  # (when, offset, file size) unlocked
        gone_since: float | None = None
        while True:
            torn: _Torn | None = None
            try:
                if not self._header_read:
                    self._read_header()
                while (seg := self._read_segment()) is not None:
                    last = time.monotonic()
                    torn_since = None
                    for event in seg[1]:
                        yield event
                        if isinstance(event, ev.MatchEnded):
                            return
            except _Torn as exc:
                torn = exc
            # Everything in this file is read. A `seal` may have renamed a new file over it
            # (the writer then appends there): go on in that one, after the events read here.
            if self._header_read and (fd := self._replacement()) is not None:
                rest = self._move_to(fd)
                if rest:
                    last = time.monotonic()
                torn_since = None
                for event in rest:
                    yield event
                    if isinstance(event, ev.MatchEnded):
                        return
                continue
            now = time.monotonic()
            idle = idle_timeout is not None and now - last > idle_timeout
            size = os.fstat(self._f.fileno()).st_size
            if size < self._offset:  # only a program that ignores the lock cuts a log there
                self._done = True
                raise self._error(
                    f"the log was cut to {size} bytes while it was followed, shorter than the "
                    f"{self._offset} bytes read from it: events already read are gone from it",
                    "damage", size)
            gone_since = (gone_since or now) if self._gone() else None
            if gone_since is not None and (idle or now - gone_since >= torn_timeout):
                self._done = True
                raise self._error(
                    f"the log is no longer at {self.path}: removed or renamed away while it "
                    f"was followed ({self._next_seq - FIRST_SEQ} events read)", "io",
                    self._offset, self._next_seq)
            seen = torn_since
            torn_since = None if torn is None else self._torn_unlocked(torn, seen, now)
            if torn is not None and torn_since is not None:
                if torn_since is seen and (idle or now - torn_since[0] >= torn_timeout):
                    self._stop_torn(torn)
                    return
                # first seen: look once more before saying "torn", even when idle
            elif idle:
                return
            time.sleep(poll)
            self._f.seek(self._offset)

    def _gone(self) -> bool:
        """Whether the path the log was opened by names no file now."""
        try:
            os.stat(self._where)
        except FileNotFoundError:
            return True
        except OSError:  # a directory above it may not be searched, and the like
            return False
        return False

    def _torn_unlocked(self, torn: _Torn, since: tuple[float, int, int] | None,
                       now: float) -> tuple[float, int, int] | None:
        """Since when ``torn`` has been the tail, unchanged, with no writer holding the lock
        (None: a writer holds it, or it cannot be told). The lock is looked at after the bytes
        were read, then they are read once more: a writer that held it during the first read
        has since written its record whole, and an unlocked tail torn twice at the same offset
        and file size is no write in progress."""
        if self._lock_holder or _write_locked(self._f, mine=True) is not False:
            return None
        size = os.fstat(self._f.fileno()).st_size
        if since is not None and since[1:] == (torn.offset, size):
            return since
        return (now, torn.offset, size)

    def _replacement(self) -> int | None:
        """An open descriptor of the file now at :attr:`path`, if it is no longer the one
        being read; None while it is (or while nothing is there)."""
        try:
            now = _identity(_stat_named(self._where, self.path))
        except OSError:
            return None
        if now == _identity(os.fstat(self._f.fileno())):
            return None
        try:
            fd = open_log_fd(self._where)
        except LogFormatError:  # a directory above it may not be searched: as _stat_named
            fd = open_log_fd(self.path)
        if _identity(os.fstat(fd)) == _identity(os.fstat(self._f.fileno())):
            os.close(fd)  # replaced back meanwhile
            return None
        return fd

    def _move_to(self, fd: int) -> list[ev.AnyEvent]:
        """Go on reading in the file ``fd`` (now at the path), which must begin with exactly
        the events read so far (a ``seal`` regroups them, changing no byte of any): returns its
        events after them that are already there. Raises if it holds other events."""
        try:
            new = Reader(self.path, allow_torn=True, fd=fd)
        finally:
            os.close(fd)
        try:
            new.read_header()
            if new._done:  # no whole header yet: look again on the next poll
                new.close()
                return []
            read = self._next_seq
            check = chain_start(new.version)
            rest: list[ev.AnyEvent] = []
            with contextlib.suppress(_Torn):  # the writer may be appending to it right now
                while new._next_seq < read and (seg := new._read_segment()) is not None:
                    for event in seg[1]:
                        if event.seq < read:
                            check.update(ev.encode(event) if new.version == ev.FORMAT_VERSION
                                         else ev.encode_as(event, new.version))
                        else:
                            rest.append(event)
            if new._next_seq < read or check.digest() != self._chain.digest():
                raise self._error(
                    f"the log was replaced while it was followed by a file that does not begin "
                    f"with the {read - FIRST_SEQ} events read from it", "chain", 0, read)
        except BaseException:
            new.close()
            raise
        self._f.close()
        self._f, new._f = new._f, self._f
        self._offset, self._next_seq, self._segments = new._offset, new._next_seq, new._segments
        self.version, self.sealed, self._chain = new.version, new.sealed, new._chain
        self._seg_head_size, self.signatures = new._seg_head_size, new.signatures
        self._f.seek(self._offset)
        return rest

    def _jsonl_hint(self, raw: bytes) -> str:
        """Why a file that looks like JSON Lines was read as binary: its name, in lower case
        letters, does not end in .jsonl (``.JSONL`` is read as binary, as by every reader)."""
        if raw.removeprefix(b"\xef\xbb\xbf").lstrip()[:1] not in (b"{", b"#"):
            return ""
        flat = b"".join(raw.split())  # the first bytes of a receipt or key file, spaces dropped
        if flat.startswith(b'{"match_id":'):  # what `Receipt` and its JSON open with
            return "; it looks like a player's receipt, which `audit LOG --receipt` takes"
        if flat.startswith(b'{"key_id":'):  # a published key (NAME.pub)
            return "; it looks like a published key (NAME.pub), which `audit --keys` takes"
        suffix = self.path[-6:]
        if suffix.lower() == ".jsonl":
            return (f"; it looks like JSON Lines, which are read from a file whose name ends in "
                    f".jsonl in lower case (this name ends in {suffix}: rename it)")
        return "; it looks like JSON Lines, which are read from a file whose name ends in .jsonl"

    def _refuse_jsonl(self, raw: bytes) -> None:
        """A file named .jsonl that is no binary log: say it in JSON Lines' words. Its empty
        form read as "file header cut short (0 of 20 bytes)", and a JSON Lines one was told
        to rename itself to the name it had."""
        if not is_jsonl_name(self.path) or raw.startswith(MAGIC):
            return
        if not raw and os.fstat(self._f.fileno()).st_size == 0:
            raise self._error("the JSON Lines file is empty: it holds no event (this reader "
                              "reads binary logs; JSON Lines are read by buraco_log.jsonl)",
                              "header", 0)
        raise self._error("a JSON Lines log (its name ends in .jsonl), not a binary one: read "
                          "it with buraco_log.jsonl (JsonlReader, read_jsonl)", "header", 0)

    def _read_header(self) -> None:
        raw = self._f.read(HEADER_SIZE)
        self._refuse_jsonl(raw)
        if len(raw) < HEADER_SIZE:
            if raw[:8] == MAGIC[: len(raw)] or _is_zero(self._f, raw):
                self._f.seek(0)
                zeros = (", all zero bytes (NUL): it never reached the disk"
                         if raw and not raw.strip(b"\0") else "")
                raise _Torn(0, f"file header cut short ({len(raw)} of {HEADER_SIZE} "
                               f"bytes{zeros})")
            raise self._error("not a buraco-log file (bad magic)" + self._jsonl_hint(raw),
                              "header", 0)
        magic, layout, version, flags, crc = _HEADER.unpack(raw)
        if magic != MAGIC and not raw.strip(b"\0"):
            self._zero_header(raw)
        if magic != MAGIC:
            packed = compressed(raw)
            raise self._error(
                "not a buraco-log file (bad magic)" + (
                    self._jsonl_hint(raw) or
                    (f"; it is {packed}: decompress it first" if packed else "")), "header", 0)
        if zlib.crc32(raw[:-4]) != crc:
            raise self._error("file header checksum mismatch", "damage", 0)
        if layout != LAYOUT:
            raise self._error(
                f"log layout {layout} is not known to this buraco_log (it reads layout {LAYOUT})"
                + (NEWER_ADVICE if layout > LAYOUT else ""),
                "version",
                8,
            )
        if version > ev.FORMAT_VERSION or version < 1:
            raise self._error(
                f"event format version {version} is not known to this buraco_log "
                f"(it reads 1 to {ev.FORMAT_VERSION})"
                + (NEWER_ADVICE if version > ev.FORMAT_VERSION else ""),
                "version",
                10,
            )
        if flags & ~KNOWN_FLAGS:  # the header's checksum holds: a newer writer set them
            raise self._error(f"header flags {flags:#x} are not known to this buraco_log (it "
                              f"knows {KNOWN_FLAGS:#x}, sealed){NEWER_ADVICE}", "version", 12)
        self.version = version
        self.sealed = bool(flags & FLAG_SEALED)
        self._chain = chain_start(version)
        self._seg_head_size = _SEG_HEAD.size + (_DIGEST if self.sealed else 0) + _SEG_TAIL.size
        self._offset = HEADER_SIZE
        self._header_read = True

    def _zero_header(self, raw: bytes) -> None:
        """A file header of zero bytes (NUL): what a crash leaves where the data never reached
        the disk, not another kind of file ("bad magic", exit 2, as a JPEG is). A file no
        longer than a header holds no event: a match not started, like one of fewer zero
        bytes (that was NOT STARTED, 20 zero bytes "bad magic"). A longer one may have held
        events, lost with it: no log header can be read (kind ``header``, exit 2, as before),
        said in words that name what is there."""
        size = os.fstat(self._f.fileno()).st_size
        if size <= HEADER_SIZE:
            self._f.seek(0)
            raise _Torn(0, f"file header all zero bytes (NUL) ({len(raw)} of {HEADER_SIZE} "
                           "bytes): it never reached the disk")
        rest = ("and so is all that was read after it: no record survives"
                if _is_zero(self._f, raw)
                else "and records follow it: the header was wiped")
        raise self._error(f"the file header is {HEADER_SIZE} zero bytes (NUL), not a log header "
                          f"(what a crash leaves where the data never reached the disk), {rest}; "
                          "no event can be read", "header", 0)

    def _read_segment(self) -> tuple[int, list[ev.AnyEvent]] | None:
        """The next segment of events, after any signature records before it."""
        while (seg := self._read_record()) is not None and not seg[1]:
            pass
        return seg

    def _read_record(self) -> tuple[int, list[ev.AnyEvent]] | None:
        off = self._offset
        if self._end is not None and off >= self._end:
            return None
        f = self._f
        hsize = self._seg_head_size
        head = f.read(hsize)
        if not head:
            return None
        if len(head) < hsize:
            f.seek(off)
            raise _Torn(off, f"segment header cut short ({len(head)} of {hsize} bytes)")
        if zlib.crc32(head[:-4]) != int.from_bytes(head[-4:], "little"):
            if _is_zero(f, head):
                f.seek(off)
                raise _Torn(off, "zero-filled tail (a crash before the data reached the disk)")
            if not head.strip(b"\0"):  # zero bytes, then data again: not a torn tail
                f.seek(off + hsize)
                again = _nonzero_at(f)
                signed = bool(self.signatures or self._start_key) and self._next_seq > FIRST_SEQ
                after = f"the record after seq {self._next_seq - 1}" if signed else (
                    "the next record")
                raise self._error(  # a signed log's next record may be a signature record
                    f"zero bytes (NUL) where {after} should start, and data again at byte "
                    f"{again}: {self._lost_before(again)}pages lost or wiped inside the log, "
                    "not at its end (no torn tail: what follows cannot be read)", "damage",
                    off, None if signed else self._next_seq)
            if head.startswith(MAGIC):  # `cat a.blog b.blog > c.blog`: say so
                raise self._error(
                    "a second log's file header where the next record should start (two logs "
                    "joined into one file?); each log is read from a file of its own",
                    "damage", off, self._next_seq)
            cut = -off % _SECTOR  # the first sector boundary after the record's start
            if (0 < cut < hsize and len(head) - cut >= _LOST_END and not head[cut:].strip(b"\0")
                    and _nonzero_at(f) is None):
                # its header's last sector and all after it zero to the end of the file: the
                # crash's torn write, as a payload's lost last sector is (it was damage)
                f.seek(off)
                raise _Torn(off, "last record partly zeroed (pages lost in a crash)")
            raise self._damaged_header(off, head)
        length, count, first_seq = _SEG_HEAD.unpack_from(head)
        signature = count == 0 and self.version >= SIGNED_VERSION
        if length > MAX_PAYLOAD:  # named by the seq it should hold, not the one it claims
            raise self._error(
                f"segment of {length} bytes exceeds the limit of {MAX_PAYLOAD}",
                "limit",
                off,
                None if signature else self._next_seq,
            )
        if signature:
            return self._read_signature(off, head, length, first_seq)
        if count == 0 or count > length:
            raise self._error(
                f"segment claims {count} events in {length} bytes", "damage", off,
                self._next_seq)
        if first_seq != self._next_seq:
            raise self._error(
                f"expected seq {self._next_seq}, found a record starting at seq {first_seq} "
                "(a record was deleted, duplicated, reordered or inserted)",
                "seq",
                off,
                self._next_seq,
            )
        payload = f.read(length)
        if len(payload) < length:
            f.seek(off)
            raise _Torn(off, f"segment payload cut short ({len(payload)} of {length} bytes)")
        if zlib.crc32(payload) != int.from_bytes(head[-8:-4], "little"):
            room = hsize + sigrec.MAX_RECORD if self.version >= SIGNED_VERSION else 0
            if _lost_pages(f, off + hsize, payload, room):
                f.seek(off)
                raise _Torn(off, "last record partly zeroed (pages lost in a crash)")
            raise self._error(
                "segment checksum mismatch (damaged record)", "damage", off, first_seq
            )
        array = _array_header(count)
        if not payload.startswith(array):
            raise self._error(
                "segment payload is not an array of its event count", "decode", off, first_seq
            )
        self._chain.update(memoryview(payload)[len(array) :])
        if self.sealed and self._chain.digest() != head[16:48]:
            raise self._error(
                f"integrity chain broken at seq {first_seq}: this record or one before it was "
                "changed",
                "chain",
                off,
                first_seq,
            )
        end = off + hsize + length
        if end <= self._skip_until:  # checked above; its events are not wanted
            self._offset = end
            self._next_seq = first_seq + count
            self._segments += 1
            if end == self._skip_until:
                self.skipped_to = (self._next_seq, self._chain.hexdigest())
            return off, []
        events = self._decode(payload, off, first_seq)
        if first_seq == FIRST_SEQ and isinstance(events[0], ev.MatchStarted):
            self._start_key = events[0].key_id
        if _maybe_huge(payload):  # then look at the events that hold the pattern
            for i in _suspects(payload, len(array)):
                if (where := out_of_range(events[i])) is not None:
                    raise self._error(_range_error(events[i], where), "range", off, first_seq + i)
        last = first_seq + count
        if list(map(_SEQ, events)) != list(range(first_seq, last)):
            bad = next(i for i, e in enumerate(events) if e.seq != first_seq + i)
            raise self._error(
                f"event {bad} of the record has seq {events[bad].seq}, expected {first_seq + bad}",
                "seq",
                off,
                first_seq + bad,
            )
        if self._canonical and (odd := self._not_canonical(payload, events)) is not None:
            raise self._error(
                f"event {odd} of the record is not stored as buraco_log encodes it (written by "
                "another program?): rewriting it would change its bytes and so the head "
                "digest, so it is not rewritten",
                "decode",
                off,
                first_seq + odd,
            )
        self._offset = off + hsize + length
        self._next_seq = last
        self._segments += 1
        return off, events

    def _lost_before(self, at: int | None) -> str:
        """What the zeros before byte ``at`` stood for, when a whole record of events starts
        there (its header's checksum holds): the seqs it names the lost records. "" otherwise
        (the bytes there are no record's header)."""
        if at is None:
            return ""
        try:
            head = os.pread(self._f.fileno(), self._seg_head_size, at)
        except OSError:
            return ""
        if (len(head) < self._seg_head_size
                or zlib.crc32(head[:-4]) != int.from_bytes(head[-4:], "little")):
            return ""
        _, count, first_seq = _SEG_HEAD.unpack_from(head)
        if count == 0 or first_seq < self._next_seq:
            return ""
        if first_seq == self._next_seq:
            return (f"a whole record of seq {first_seq} starts there, the one the zeros were "
                    "put before: ")
        lost = (f"seq {self._next_seq}" if first_seq == self._next_seq + 1
                else f"seqs {self._next_seq} to {first_seq - 1}")
        return (f"a whole record of seq {first_seq} starts there, so the zeros stand where "
                f"the events of {lost}, written before it, were: ")

    def _damaged_header(self, off: int, head: bytes) -> LogFormatError:
        """A record header that fails its checksum. In a signed log's place after an event it
        may be a signature record's or the next events' (it was named seq N+1, the next event,
        for a signature record's too). Its fields are not to be trusted: what the record is
        comes from its payload when that is whole and matches the header's payload checksum,
        else from how the header reads, or the error says that it cannot tell."""
        what = "segment header checksum mismatch (damaged record)"
        last = self._next_seq - 1
        if not (self.signatures or self._start_key) or last < FIRST_SEQ:
            return self._error(what, "damage", off, self._next_seq)  # an unsigned log's
        length, count, first_seq = _SEG_HEAD.unpack_from(head)
        signature = self._payload_is_signature(off + len(head), length, head)
        if signature is None and first_seq == self._next_seq:  # else how the header reads
            signature = count == 0
        if signature is False:
            return self._error(what, "damage", off, self._next_seq)
        if signature:
            return self._error(f"the signature record after seq {last}: {what}", "damage", off)
        return self._error(
            f"the record after seq {last}: {what}; the header is too damaged to say whether it "
            f"holds seq {self._next_seq} on or a signature record", "damage", off)

    def _payload_is_signature(self, at: int, length: int, head: bytes) -> bool | None:
        """Whether the payload at ``at`` is a signature record's, when it is whole and its CRC
        is the one ``head`` holds (so ``length`` and that CRC are intact); None otherwise."""
        if length > MAX_PAYLOAD:
            return None
        try:
            payload = os.pread(self._f.fileno(), length, at)
        except OSError:
            return None
        if len(payload) < length or zlib.crc32(payload) != int.from_bytes(head[-8:-4], "little"):
            return None
        try:
            sigrec.decode(payload)
        except msgspec.MsgspecError:
            return False
        return True

    def _not_canonical(self, payload: bytes, events: list[ev.AnyEvent]) -> int | None:
        """The index of the first event whose bytes in ``payload`` are not its encoding."""
        if self.version == ev.FORMAT_VERSION and ev.encode_many(events) == payload:
            return None
        for i, (raw, event) in enumerate(zip(_RAW_ITEMS.decode(payload), events, strict=True)):
            if bytes(raw) != ev.encode_as(event, self.version):
                return i
        return None

    def _read_signature(
        self, off: int, head: bytes, length: int, first_seq: int
    ) -> tuple[int, list[ev.AnyEvent]]:
        """A signature record: it must sign exactly the chain's head so far (the key is checked
        by ``buraco_log.signing.check``; this reader needs no cryptography).

        Its errors name it as "the signature record after seq N" and carry no seq of their
        own: the seq after it (its frame's) is an event it is not, and was read out as one."""
        last = self._next_seq - 1
        if last < FIRST_SEQ:
            raise self._error(
                "a record of 0 events (a signature record) before the first event: a signature "
                "follows the events it signs",
                "damage",
                off,
            )
        what = f"the signature record after seq {last}"
        if length > sigrec.MAX_RECORD:
            raise self._error(
                f"{what} is of {length} bytes, over the limit of {sigrec.MAX_RECORD}: it is out "
                "of place or damaged", "damage", off)
        payload = self._f.read(length)
        if first_seq != self._next_seq:  # framed for another place: moved, if it reads whole
            moved = self._moved(payload, head, last)
            raise self._error(
                moved or f"{what} is framed for the place after seq {first_seq - 1} (it is out "
                "of place: moved or copied here, or damaged)", "seq" if moved else "damage", off)
        if len(payload) < length:
            self._f.seek(off)
            raise _Torn(off, f"signature record cut short ({len(payload)} of {length} bytes) "
                             f"after seq {last}", signature=True)
        if zlib.crc32(payload) != int.from_bytes(head[-8:-4], "little"):
            if _lost_pages(self._f, off + self._seg_head_size, payload):
                self._f.seek(off)  # it holds no seq, as when it is cut short
                raise _Torn(off, f"{what}: last record partly zeroed (pages lost in a crash)",
                            signature=True)
            raise self._error(f"{what}: checksum mismatch (damaged record)", "damage", off)
        try:
            signed = sigrec.decode(payload)
        except msgspec.MsgspecError as exc:
            raise self._error(f"{what} does not decode: {exc}", "decode", off) from None
        digest = self._chain.digest()
        if signed.seq != last or signed.head != digest or (
            self.sealed and head[16:48] != digest
        ):
            moved = self._moved(payload, head, last) if signed.seq != last else None
            raise self._error(
                moved or f"{what} signs seq {signed.seq} with a head that is not this log's: "
                + sigrec.whose(signed, self.signatures, "record"),
                "seq" if moved else "chain",
                off,
            )
        if self._refuse_repeats and self.signatures and signed.repeats(self.signatures[-1]):
            raise self._error(
                f"{what} repeats the one before it (a duplicated record; the audit's "
                "sign.duplicate): a writer records one signature per head, so this copy was put "
                "in the file by something else",
                "seq", off)
        if self.signatures and signed == self.signatures[-1]:
            signed = self.signatures[-1]  # a copy holds no memory of its own: a file of
            # millions of copies took gigabytes, now 8 bytes each
        self.signatures.append(signed)
        self._offset = off + self._seg_head_size + length
        return off, []

    def _moved(self, payload: bytes, head: bytes, last: int) -> str | None:
        """What a whole signature record standing after seq ``last`` is, when it signs this
        log's head at another seq (it was moved or copied from there), else None."""
        if zlib.crc32(payload) != int.from_bytes(head[-8:-4], "little"):
            return None
        try:
            signed = sigrec.decode(payload)
        except msgspec.MsgspecError:
            return None
        what = f"the signature record after seq {last}"
        if signed.seq > last:  # its head is not read yet: say what it names
            return (f"{what} signs seq {signed.seq}, which comes later (a writer puts "
                    "each signature right after the events it signs): events before it were "
                    f"deleted, or it was moved here from after seq {signed.seq}")
        if signed.seq == last or signed.seq < FIRST_SEQ or (
                self._head_at(signed.seq) != signed.head):
            return None
        return (f"{what} signs this log's head at seq {signed.seq}, not the head after seq "
                f"{last}: it was moved or copied here from after seq {signed.seq} (a writer "
                "puts each signature right after the events it signs)")

    def _head_at(self, seq: int) -> bytes | None:
        """The chain's head after ``seq`` when a record of this log ends there, read again
        from the start (only to name a misplaced signature record); None if none ends there
        or the file cannot be read again."""
        if not self._f.seekable():
            return None
        where = self._f.tell()
        try:
            with Reader(self.path, fd=self._f.fileno(), skip_until=self._offset) as again:
                again.read_header()
                while again._next_seq <= seq and again._read_record() is not None:
                    pass
                return again._chain.digest() if again._next_seq == seq + 1 else None
        except (LogFormatError, _Torn, OSError):
            return None
        finally:
            self._f.seek(where)

    def _decode(self, payload: bytes, off: int, first_seq: int) -> list[ev.AnyEvent]:
        if self.version in ev.FAST_VERSIONS:
            try:
                events = ev.decode_many(payload)
            except msgspec.MsgspecError:
                pass  # diagnosed below, record by record, to name the event and field
            else:
                # An older version's start decoded as today's has today's layout: not that
                # version's; the upcaster below refuses it.
                if self.version == ev.FORMAT_VERSION or not any(
                        type(e) is ev.MatchStarted for e in events):
                    return events
        return decode_records(
            payload, self.version, path=self.path, offset=off, first_seq=first_seq
        )


def decode_records(
    payload: bytes,
    version: int,
    *,
    path: str | None = None,
    offset: int | None = None,
    first_seq: int | None = None,
) -> list[ev.AnyEvent]:
    """Decode a segment payload through the upcasters, naming the first bad record.

    The slow path: used for logs of older format versions and to explain a failed fast decode.
    The events are read one at a time and the first bad one ends the reading, so a hostile
    payload (millions of tiny items) costs the time and memory of the events before it, not
    of a decoded copy of all of it.
    """
    if payload[:1] and (0x90 <= payload[0] <= 0x9F or payload[0] in (0xDC, 0xDD)):
        return list(_decode_items(payload, version, path, offset, first_seq))
    try:
        msgpack_depth(payload)
        msgspec.msgpack.decode(payload)
    except (ValueError, msgspec.MsgspecError) as exc:
        raise LogFormatError(
            f"undecodable record: {exc}", path=path, offset=offset, seq=first_seq, kind="decode"
        ) from None
    raise LogFormatError(
        "segment payload is not an array",
        path=path,
        offset=offset,
        seq=first_seq,
        kind="decode",
    )


def _decode_items(
    payload: bytes, version: int, path: str | None, offset: int | None, first_seq: int | None
) -> Iterator[ev.AnyEvent]:
    """The events of the MessagePack array ``payload``, each decoded, upcast and checked in
    turn; raises at the first that is not an event."""
    mv = memoryview(payload)
    pos, count = _token(mv, 0)
    if pos > len(payload):
        raise LogFormatError("undecodable record: the array header runs past the end of the data",
                             path=path, offset=offset, seq=first_seq, kind="decode")
    for i in range(count):
        seq = None if first_seq is None else first_seq + i
        try:
            end = _value_end(mv, pos, MAX_DEPTH - 1)
            record = msgspec.msgpack.decode(mv[pos:end])
        except (ValueError, msgspec.MsgspecError) as exc:
            raise LogFormatError(
                f"undecodable record: {exc}", path=path, offset=offset, seq=seq, kind="decode"
            ) from None
        pos = end
        if (where := _record_out_of_range(record)) is not None:
            raise LogFormatError(where, path=path, offset=offset, seq=seq, kind="range")
        try:
            event = ev.from_record(ev.upcast(record, version))
        except msgspec.MsgspecError as exc:
            raise LogFormatError(
                describe_bad_record(record, exc), path=path, offset=offset, seq=seq, kind="unknown"
            ) from None
        yield event
    if pos != len(payload):
        raise LogFormatError(
            f"undecodable record: {len(payload) - pos} bytes after the array of {count} events",
            path=path, offset=offset, seq=first_seq, kind="decode")


def _record_out_of_range(record: Any) -> str | None:
    """The range error of a raw record holding an integer outside the signed 64-bit range,
    naming the field when the tag is known; None if every integer fits."""
    where = out_of_range(record)
    if where is None:
        return None
    tag = record[0] if isinstance(record, list) and record else None
    cls = ev.TAGS.get(tag) if isinstance(tag, str) else None
    if cls is not None and where.startswith("["):
        index = int(where[1 : where.index("]")]) - 1
        names = cls.__struct_fields__
        if 0 <= index < len(names):
            where = names[index] + where[where.index("]") + 1 :]
    return (
        f"event {tag!r}: field {where!r} holds an integer outside the signed 64-bit range "
        f"({INT_MIN} to {INT_MAX})"
    )


MAX_MESSAGE: Final = 400
"""Longest error message made from what a file holds: a hostile value (a tag, a card, a key
of half a megabyte) is shown by its start and end, not echoed whole into one line."""


def clip(message: str, limit: int = MAX_MESSAGE) -> str:
    """``message`` if it is at most ``limit`` characters, else its start and its end (where a
    decoder says which field) around a note of how much was left out."""
    if len(message) <= limit:
        return message
    tail = limit // 4
    head = limit - tail
    return f"{message[:head]}[... {len(message) - head - tail:,} characters ...]{message[-tail:]}"


def describe_bad_record(record: Any, exc: Exception) -> str:
    """One line naming what is wrong with a raw record: unknown type, unknown field, or why."""
    if not isinstance(record, list) or not record:
        return f"record is not an event array: {exc}"
    tag = record[0]
    cls = ev.TAGS.get(tag) if isinstance(tag, str) else None
    if cls is None:
        known = ", ".join(sorted(ev.TAGS))
        return f"unknown event type {clip(repr(tag), 80)} (this buraco_log knows {known})"
    fields = cls.__struct_fields__
    if len(record) - 1 > len(fields):
        extra = len(record) - 1 - len(fields)
        return (
            f"event {tag!r} has {extra} unknown field(s) after {fields[-1]!r} "
            "(written by a newer buraco_log?)"
        )
    named = ev.name_field(tag, str(exc))
    return f"invalid event {tag!r}: {named}{newer_knob(named)}"


_UNKNOWN_KNOB = re.compile(r"Object contains unknown field `[^`]*` - at `rules`$")


def newer_knob(message: str) -> str:
    """What to add to a decoder's ``message`` when it names a key of a match's rules that this
    release does not know: a house rule of a newer release (or a misspelt one), not damage."""
    if not _UNKNOWN_KNOB.search(message):
        return ""
    return (f" (a house rule this buraco_log ({__version__}) does not know: written by a newer "
            "buraco_log, or misspelt; `buraco-log rules show NAME --format json` lists the "
            "knobs it knows)")


def read_events(path: str | os.PathLike[str], *, allow_torn: bool = False) -> list[ev.AnyEvent]:
    """Every event of a log, verified. See :class:`Reader` for streaming."""
    with Reader(path, allow_torn=allow_torn) as reader:
        return gathered(reader)


_T = TypeVar("_T")


def gathered(items: Iterable[_T]) -> list[_T]:
    """``list(items)``, the list held by this frame while it fills. ``list(reader)`` cut short
    by Ctrl-C freed its millions of events one by one as the interrupt unwound, before any
    handler ran: 4 s at 20 million events before the command said a word. Held here, they go
    with the traceback, which the command line keeps until the process ends."""
    held: list[_T] = []
    held.extend(items)
    return held


def iter_events(
    path: str | os.PathLike[str], *, allow_torn: bool = False
) -> Generator[ev.AnyEvent, None, None]:
    """Stream the verified events of a log, closing the file when done or abandoned."""
    with Reader(path, allow_torn=allow_torn) as reader:
        yield from reader


def verify(path: str | os.PathLike[str]) -> LogInfo:
    """Check a whole log: raises on damage (a repeated signature record included); a torn
    tail is reported in ``LogInfo.torn``."""
    with Reader(path, allow_torn=True, refuse_repeats=True) as reader:
        for _ in reader.segments():
            pass
        info = reader.info
        if info.torn is not None and info.torn.offset >= HEADER_SIZE and (
                journaled := _journal_ahead(reader.path, reader._f.fileno(), _identity(
                    os.fstat(reader._f.fileno())))) is not None:
            # a recorder's log after a crash: its tail is acknowledged events, in the journal
            info = msgspec.structs.replace(info, torn=msgspec.structs.replace(
                info.torn, journal=journaled,
                reason=f"{info.torn.reason}; but the recorder's journal {journaled} holds "
                "acknowledged events of this log that its bytes lack: open the recorder on its "
                "directory, which writes them back (`repair` refuses to cut them)"))
        return info


# -- writing -----------------------------------------------------------------------------------


def os_error(exc: OSError, path: str, offset: int | None = None) -> LogFormatError:
    """An operating-system failure on a log, as the project's own error (kind ``io``)."""
    return LogFormatError(exc.strerror or str(exc), path=path, offset=offset, kind="io")


def write_error(exc: OSError, path: str, message: str | None = None) -> LogFormatError:
    """A failure to create or write the new file ``path``, as the project's own error: a
    :class:`LogWriteError` (exit 1) when the file system refused the bytes (a full disk, a
    quota, EIO: :data:`WRITE_FAILURES`), else kind ``io`` (a name that cannot be written:
    exit 2, as for a usage error). ``message`` replaces the OS's words (which it should say)."""
    words = message or exc.strerror or str(exc)
    if exc.errno in WRITE_FAILURES:
        return LogWriteError(words, path=path)
    return LogFormatError(words, path=path, kind="io")


def temp_error(exc: LogFormatError | OSError, temp: str, path: str,
               what: str) -> LogFormatError | None:
    """A failure on ``temp`` (the new file written beside ``path`` before it is renamed into
    place) as an error naming ``path``, which is what the user asked for; the temporary name
    and the byte and seq in it mean nothing to them. None if the failure was not on ``temp``."""
    if isinstance(exc, LogFormatError):
        if exc.path != temp:
            return None
        message, kind, seq = exc.message, exc.kind, exc.seq
        cls = type(exc)  # a failed write (LogWriteError) stays one: exit 1
    else:
        if exc.filename not in (None, temp):
            return None
        message, kind, seq = exc.strerror or str(exc), "io", None
        cls = LogWriteError if exc.errno in WRITE_FAILURES else LogFormatError
    # the cut of a partial record was in the temporary, which is removed anyway
    message = message.removeprefix("write failed: ").partition(PARTIAL_CUT)[0]
    message = message.partition(NOT_ACKED)[0]  # of events of the temporary, removed anyway
    message = message.partition(FSYNC_UNSURE)[0]
    for made in (CREATE_FAILED, MADE_NOT_DURABLE):  # the temporary's: only the system's words
        if message.startswith(made):
            message = message[len(made):].partition(";")[0].partition("):")[0]
    # the seq of an event refused (a rule, a range) is the source's too; that of a failed
    # write only says how far the new file got
    return cls(f"{what}: {message}", path=path, kind=kind, seq=None if kind == "io" else seq)


_FILE_TYPES: Final = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def is_jsonl_name(path: str | os.PathLike[str]) -> bool:
    """Whether readers take ``path`` as JSON Lines: its name ends in ``.jsonl`` in these
    letters (``.JSONL`` is binary to every reader)."""
    return os.path.basename(os.fspath(path)).endswith(".jsonl")


def file_type(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, in words ("a FIFO", ...)."""
    return next((name for test, name in _FILE_TYPES if test(mode)), "not a regular file")


def open_log_fd(path: str | os.PathLike[str], flags: int = os.O_RDONLY) -> int:
    """Open a log's file without ever blocking, refusing anything but a regular file.

    Every reader and writer goes through here. ``O_NONBLOCK`` makes opening a FIFO return at
    once (a plain open waits for a writer forever); ``fstat`` on the open descriptor then
    refuses a FIFO, device, socket or directory with one :class:`LogFormatError` (kind
    ``filetype``) naming the file, before a byte is read. A symlink to a regular file is
    followed; a symlink to ``/dev/zero`` is a character device and refused.
    """
    path = os.fspath(path)
    try:
        fd = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket, or a FIFO opened for writing without a reader
            try:
                what = file_type(os.stat(path).st_mode)  # as `show` says it
            except OSError:
                what = "a socket or FIFO"
            raise LogFormatError(
                f"not a regular file ({what}): not read as a log",
                path=path,
                kind="filetype",
            ) from None
        if exc.errno == errno.EISDIR:  # opened for writing: refused before fstat could say it
            raise LogFormatError(
                "not a regular file (a directory): not read as a log", path=path,
                kind="filetype") from None
        if exc.errno == errno.ENOENT and os.path.islink(path):  # "no such file" of a name
            # that is there: say where it leads
            with contextlib.suppress(OSError):
                raise LogFormatError(
                    f"a symbolic link to {os.readlink(path)!r}, which does not exist",
                    path=path, kind="io") from None
        raise os_error(exc, path) from None
    try:
        st = os.fstat(fd)
        mode = st.st_mode
        if not stat.S_ISREG(mode):
            raise LogFormatError(
                f"not a regular file ({file_type(mode)}): not read as a log",
                path=path,
                kind="filetype",
            )
        if st.st_size == 0 and not _readable_now(fd):
            # a kernel file that looks regular but waits for data (/proc/kmsg): read blocking,
            # it hung the command
            raise LogFormatError(
                "not readable without waiting (a special file): not read as a log",
                path=path,
                kind="filetype",
            )
        # Regular files ignore O_NONBLOCK; clear it anyway so nothing downstream is surprised.
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _readable_now(fd: int) -> bool:
    """Would reading ``fd`` return at once? Always for a file on disk (poll says so of every
    regular file); a kernel file such as /proc/kmsg says so only when it holds data."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


_hook: Callable[[str], None] | None = None
"""Tests only: called with a point's name ("lock.opened", "seal.locked", ...) so that a test can
pause one process there and force an interleaving with another. None in normal use."""


def _point(name: str) -> None:
    if _hook is not None:
        _hook(name)


def _open(path: str, flags: int) -> int:
    return open_log_fd(path, flags)


def fsync_directory(directory: str) -> None:
    """Flush ``directory`` itself: the names created, renamed or unlinked in it survive a power
    loss."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: str) -> None:
    """Flush the directory holding ``path``: a name just created, renamed or unlinked there
    survives a power loss. A failure names ``path``: an EIO naming no file was put on the log
    being read (the CLI cannot tell a read's EIO from a write's)."""
    try:
        fsync_directory(os.path.dirname(os.path.abspath(path)) or ".")
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, path) from None


class NotDurableError(LogWriteError):
    """A file put in place whole (a rename or link done) whose directory's fsync then failed:
    its bytes are all there, but its name is not known to survive a power loss. Exit 1, as a
    failed write; the file is left in place, since taking it back (an unlink) needs the same
    fsync, and seal and repair cannot take back a rename over the log or a cut.
    ``reason`` is the system's words (``Input/output error``)."""

    def __init__(self, done: str, reason: str, *, path: str) -> None:
        super().__init__(f"{done}, but its directory could not be made durable ({reason}): "
                         "the file is whole and in place, but a power loss may undo it", path=path)
        self.reason = reason

    def as_failed(self, path: str) -> LogWriteError:
        """The error of a temporary that is removed after all: a failed write of ``path``."""
        return LogWriteError(f"writing the new file failed: {self.reason}", path=path)


def durable(path: str, done: str, shown: str | None = None) -> None:
    """Flush the directory of ``path``, which holds a finished file (``done``: what was done
    to it, "written", "sealed"); a failure is :class:`NotDurableError` naming ``shown`` (the
    name asked for: a link's, when ``path`` is the file it names). The fsync is looked up by
    its public name, so a test replacing ``log.fsync_dir`` sees every call."""
    try:
        fsync_dir(path)
    except OSError as exc:
        raise NotDurableError(done, exc.strerror or str(exc), path=shown or path) from None


# The old private name, kept: the writer, seal and repair call it through this module's
# globals, so a test (or a caller) that replaces ``log._fsync_dir`` still sees every call.
_fsync_dir = fsync_dir


def _lock(fd: int, path: str, timeout: float = 0.0) -> None:
    """Take the exclusive ``flock`` on ``fd``, waiting up to ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LogFormatError(
                    "another writer holds this log", path=path, kind="locked"
                ) from None
        time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
        delay = min(delay * 2, 0.05)


def _stat_named(where: str, path: str) -> os.stat_result:
    """``stat`` of the file a log's ``path`` named when it was opened: ``where``, its absolute
    form (the same file after a chdir), or ``path`` itself if a directory above it may not be
    searched (a process that gave up its privileges in a directory it may still use)."""
    try:
        return os.stat(where)
    except PermissionError:
        return os.stat(path)


def _identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


class LogLock:
    """The writer lock of one log: an exclusive ``flock`` on the file that is at ``path``.

    This is the one lock discipline of every program that changes a log (``Writer``, ``seal``,
    ``repair``, and anything built on them, such as a recorder of many logs)::

        with log.LogLock(path) as lock:      # raises LogFormatError(kind="locked") if held
            ...  # read through lock.fd; append with pwrite; or write a new file beside it
            os.replace(new, path)             # only while the lock is held; then close it

    Opening and locking are two steps, so the file at ``path`` may have been replaced in
    between (by a ``seal`` that held the lock and renamed a new file into place). After the
    lock is taken, the locked descriptor's (device, inode) is compared with ``stat(path)``; if
    they differ, the stale file is closed and the new one locked instead. So a holder always
    has the file that is at ``path``, and since every replacement happens under the lock, it
    stays there until the holder lets go. ``timeout`` is how long to wait for another holder
    (0: refuse at once). A ``LogLock`` is for one process; ``flock`` is per open file, so a
    second ``LogLock`` on the same log in the same process is refused too.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, write: bool = True, timeout: float = 0.0
    ) -> None:
        self.path = os.fspath(path)
        self._where = os.path.abspath(self.path)  # the same file after a chdir
        deadline = time.monotonic() + timeout
        flags = os.O_RDWR if write else os.O_RDONLY
        while True:
            fd = open_log_fd(self.path, flags)
            try:
                _point("lock.opened")
                _lock(fd, self.path, max(0.0, deadline - time.monotonic()))
                st = os.fstat(fd)
                if self._at_path(st):
                    break
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)  # we locked a file that was replaced meanwhile: lock the new one
        self.fd: int | None = fd
        self.identity = _identity(st)

    def _at_path(self, st: os.stat_result) -> bool:
        try:
            return _identity(_stat_named(self._where, self.path)) == _identity(st)
        except FileNotFoundError:
            raise LogFormatError(
                "the log was removed while its lock was being taken", path=self.path, kind="io"
            ) from None

    def current(self) -> bool:
        """True if the locked file is still the one at ``path`` (it always is, unless a
        program that ignores the lock renamed or removed it)."""
        try:
            return _identity(_stat_named(self._where, self.path)) == self.identity
        except FileNotFoundError:
            return False

    def release(self) -> None:
        """Let go of the lock (closing the descriptor releases the ``flock``)."""
        if self.fd is not None:
            fd, self.fd = self.fd, None
            os.close(fd)

    def __enter__(self) -> LogLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __del__(self) -> None:
        # Dropped unreleased, it held the log until its process ended: let go, and say so as
        # an unclosed file does. (A forked child's copy closes only its own descriptor.)
        if getattr(self, "fd", None) is not None:
            self.release()
            warnings.warn(f"unreleased log lock on {self.path!r}", ResourceWarning,
                          stacklevel=1, source=self)


def lock_to_replace(path: str | os.PathLike[str],
                    shown: str | os.PathLike[str] | None = None) -> LogLock | None:
    """The writer lock of the file an ``--overwrite`` is about to replace by a rename, to hold
    until the new file is in place (as :func:`seal` does), or None if ``path`` is no regular
    file this user may read (no writer's log). A writer (a recorder) holds it while it writes:
    replacing the file under it took every event it had acknowledged from the log's name, and
    it learned so only at its next append. Held: refused, kind ``locked``, naming ``shown``."""
    try:
        return LogLock(path, write=False)
    except LogFormatError as exc:
        if exc.kind == "locked":
            raise LogFormatError(
                "a writer holds this log (a recorder writing it now): replacing it would take "
                "from this name every event it acknowledged; nothing was written (replace it "
                "once the writer is done)", path=os.fspath(shown or path), kind="locked"
            ) from None
        return None
    except OSError:
        return None  # unreadable: the rename's own error, if any, says what is wrong


def _changed_behind_lock(fd: int, path: str, before: os.stat_result) -> str | None:
    """What a program that ignores the lock did to the locked log since ``before`` (its
    ``fstat`` when the lock was taken), or None. A rewrite (``seal``, ``repair``) checks this
    right before its rename or truncate: bytes appended behind the lock would be cut off or
    left in the old file, and a file renamed into place would be replaced, all without a word.
    (An in-place write of the same size within one tick of the file system's clock is not
    seen; the lock is the rule, this check only catches those who ignore it.)"""
    st = os.fstat(fd)
    if st.st_size != before.st_size:
        return f"it grew from {before.st_size} to {st.st_size} bytes"
    if st.st_mtime_ns != before.st_mtime_ns:
        return "its bytes were written"
    try:
        now = _identity(os.stat(path))
    except FileNotFoundError:
        return "it was removed"
    if now != _identity(before):
        return "another file was renamed into its place"
    return None


def _refuse_changed(fd: int, path: str, before: os.stat_result, what: str) -> None:
    if (change := _changed_behind_lock(fd, path, before)) is not None:
        raise LogFormatError(
            f"the log changed while {what} ({change}) by a program that does not take the "
            "log's lock; nothing was changed, run it again once that program is done",
            path=path, kind="io")


def _write_all(fd: int, data: bytes | memoryview, offset: int) -> None:
    view = memoryview(data)
    while view:
        n = os.pwrite(fd, view, offset)
        view = view[n:]
        offset += n


PARTIAL_CUT: Final = "; the part of the record written was cut off"
"""What a writer's failed write says once it cut off the part of the record it wrote."""

NOT_ACKED: Final = "; not acknowledged: "
"""What a writer's failed write says before naming the events written before it, unsynced."""

FSYNC_UNSURE: Final = "; not retried, the events from this seq on may not be on disk"
"""What a writer's failed fsync says of its events (of a temporary, removed anyway, nothing)."""

CREATE_FAILED: Final = "creating the log failed: "
MADE_NOT_DURABLE: Final = ("the log was made (its header, no event), but its directory could "
                           "not be made durable (")
"""What a writer that could not make its log says before the system's words."""

NO_HEADER_ADVICE: Final = ("the file holds no whole header, so no event: remove it (`repair` "
                          "keeps nothing), and the log is created afresh")
"""What to do with a file at a log's path that ends before its header (an empty file)."""


STALE_AFTER: Final = 60.0
"""Seconds since its last change after which an unlocked temporary file is a killed run's."""

_TEMP_PARTS: Final = r"(?:\.[0-9a-f]{12}\.(?:new|tmp|converting(?:\.[A-Za-z0-9]+)?))+"
_CONVERTING = re.compile(r"\.(.+)\.[0-9a-f]{12}\.converting(?:\.[A-Za-z0-9]+)?", re.DOTALL)


def sweep_stale(path: str | os.PathLike[str]) -> list[str]:
    """Remove the temporary files that a killed seal or convert writing ``path`` left beside
    it: ``.NAME.HEX.new`` (seal, a new log), ``.NAME.HEX.tmp`` (convert), ``convert
    --overwrite``'s ``.NAME.HEX.converting.SUFFIX`` and the temporaries of these. Only a
    regular file of exactly such a name is removed, that nobody holds locked (each is locked
    while it is written), unchanged for ``STALE_AFTER`` seconds, and empty or beginning as a
    log (binary or JSON Lines); anything else is left alone. Returns the paths removed.

    Every step is taken in the directory opened once (a descriptor), never again by its path:
    another directory put at that path meanwhile (a rename) had its files of such names
    checked and removed."""
    directory = os.path.dirname(os.path.abspath(path))
    name = os.path.basename(path)
    if (m := _CONVERTING.fullmatch(name)) is not None:  # convert --overwrite's own temporary
        name = m.group(1)
    pattern = re.compile(_stem_pattern(name) + _TEMP_PARTS, re.DOTALL)
    removed: list[str] = []
    if (listed := _open_listed(directory, pattern)) is None:
        return removed
    at, entries = listed
    try:
        _point("sweep.listed")
        now = time.time()
        for entry in entries:
            if _sweep_one(at, entry, now):
                removed.append(os.path.join(directory, entry))
    finally:
        os.close(at)
    return removed


def _open_listed(directory: str, pattern: re.Pattern[str]) -> tuple[int, list[str]] | None:
    """``directory`` opened (a descriptor the caller closes) and the names in it that
    ``pattern`` matches; None if it cannot be opened or listed."""
    try:
        at = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        with os.scandir(at) as listing:
            return at, [e.name for e in listing if pattern.fullmatch(e.name)]
    except OSError:
        os.close(at)
        return None


def _sweep_one(at: int, name: str, now: float) -> bool:
    """Remove the stale temporary ``name`` in the directory open at ``at`` (as
    :func:`sweep_stale` says); True if it went."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=at)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or now - st.st_mtime < STALE_AFTER:
            return False
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError: in use
        if os.pread(fd, 8, 0) not in (b"", MAGIC) and os.pread(fd, 6, 0) != b'{"log"':
            return False
        _point("sweep.checked")
        if _identity(os.stat(name, dir_fd=at, follow_symlinks=False)) != _identity(st):
            return False  # another file put at the name since it was opened
        os.unlink(name, dir_fd=at)  # unlinked while locked: no writer can be mid-way
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


TEMP_STEM_MAX: Final = 180
"""The most bytes of a file's name that the name of a temporary file beside it takes. A log's
name may take all of NAME_MAX (255 bytes), and its temporaries add a dot, 12 hex digits and a
suffix, a temporary's own temporary that again: sealing or converting a log named with 238
bytes or more said "File name too long" of a name that was not."""


def _stem_pattern(name: str) -> str:
    """The leading dots and name part of every temporary beside ``name``. A temporary's own
    temporary (``convert --overwrite`` converts into ``.NAME.HEX.converting.SUFFIX``, whose
    temporary is ``..NAME.HEX.tmp``) holds its parent's leading dot within the cut, so of a
    name of :data:`TEMP_STEM_MAX` bytes or more it holds one byte less per dot: the sweep
    looked for all of them and found none of these (a killed run's temporary stayed)."""
    raw = os.fsencode(temp_stem(name))
    if len(raw) < TEMP_STEM_MAX:
        return r"\.+" + re.escape(name)
    return "(?:" + "|".join(r"\." * (dots + 1) + re.escape(os.fsdecode(raw[:TEMP_STEM_MAX - dots]))
                            for dots in range(4)) + ")"


def temp_stem(name: str) -> str:
    """``name`` as the name of a temporary beside it holds it: its first
    :data:`TEMP_STEM_MAX` bytes (a character cut in two stays bytes, as file names may)."""
    raw = os.fsencode(name)
    return name if len(raw) <= TEMP_STEM_MAX else os.fsdecode(raw[:TEMP_STEM_MAX])


def _create_temp(directory: str, name: str, dir_fd: int | None = None) -> tuple[int, str]:
    """A new file beside the log, with the usual permissions (mkstemp's are owner-only). With
    ``dir_fd``, made in the directory it holds, whatever is at ``directory``'s path now; the
    name returned is still ``directory``'s path joined (what a later step by path finds)."""
    while True:
        base = f".{temp_stem(name)}.{os.urandom(6).hex()}.new"
        tmp = os.path.join(directory, base)
        try:
            if dir_fd is not None:
                return os.open(base, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666,
                               dir_fd=dir_fd), tmp
            return os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            continue


def _unlink_creation_names(path: str, identity: tuple[int, int]) -> bool:
    """Remove the other names of the log at ``path`` (of ``identity``, locked by the caller)
    that only a crash leaves: a new log is linked into place from ``.NAME.HEX.new``, then that
    name is removed; killed, or a power loss, in between, both stayed, and `seal` refused the
    log forever as one of two hard links (the other hidden). Nobody is between the two steps
    while the caller holds the lock, which the creator holds throughout. True if any went.
    Each name is looked at and removed in the directory opened once, never again by its path
    (another directory put there meanwhile had its names of the log's removed)."""
    pattern = re.compile(r"\." + re.escape(temp_stem(os.path.basename(path)))
                         + r"\.[0-9a-f]{12}\.new", re.DOTALL)
    removed = False
    if (listed := _open_listed(os.path.dirname(os.path.abspath(path)), pattern)) is None:
        return False
    at, entries = listed
    try:
        _point("creation-names.listed")
        for entry in entries:
            with contextlib.suppress(OSError):
                if _identity(os.stat(entry, dir_fd=at, follow_symlinks=False)) == identity:
                    os.unlink(entry, dir_fd=at)
                    removed = True
        if removed:
            with contextlib.suppress(OSError):  # a name back after a power loss: the same case
                os.fsync(at)
    finally:
        os.close(at)
    return removed


_NO_HARD_LINKS: Final = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV,
                                   errno.ENOSYS, errno.EMLINK})
"""What ``link(2)`` says on a file system that makes no hard links (FAT, exFAT, some network
and FUSE file systems: EPERM or ENOTSUP) or will not make this one."""
_AT_FDCWD: Final = -100
RENAME_NOREPLACE: Final = 1
RENAME_EXCHANGE: Final = 2


def renameat2(src: str | os.PathLike[str], dst: str | os.PathLike[str], flags: int) -> None:
    """Linux's ``renameat2(src, dst, flags)`` (glibc 2.28 on), which Python does not wrap:
    :data:`RENAME_NOREPLACE` fails with ``FileExistsError`` rather than replace ``dst``,
    :data:`RENAME_EXCHANGE` swaps the two names in one step. ``OSError`` ENOSYS where the C
    library has no such call (EINVAL or ENOTSUP where the file system cannot)."""
    import ctypes  # only where it is asked for

    fn = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if fn is None:
        raise OSError(errno.ENOSYS, "no renameat2 in this C library", os.fspath(dst))
    fn.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    if fn(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), os.fspath(src), None, os.fspath(dst))


def _rename_noreplace(src: str, dst: str) -> None:
    """``rename(src, dst)`` that fails with ``FileExistsError`` rather than replace a file."""
    renameat2(src, dst, RENAME_NOREPLACE)


def place_new(tmp: str, path: str, fd: int | None = None) -> bool:
    """Put the finished file ``tmp`` (written and fsynced beside ``path``) at ``path``, never
    replacing a file there (``FileExistsError``, ``tmp`` left as it is). A hard link where the
    file system makes them (``tmp`` then keeps its name: False, the caller removes it);
    elsewhere a rename that never replaces (True: ``tmp``'s name is gone). Both are atomic: a
    crash leaves the file at one name or the other, whole. Where neither can be made, an
    ``OSError`` (ENOTSUP, naming ``path``) says so and nothing is put in place: a plain rename
    would replace a file made at ``path`` meanwhile, and creating ``path`` itself would show
    a log without its header to readers, and leave one after a crash.

    ``fd``: the open descriptor of the file written. Another program may have put a symbolic
    link or another file at ``tmp``'s name meanwhile (the link, or that file, was put at
    ``path``): what is at ``tmp`` is checked to be that file before it is linked or renamed,
    and what was put at ``path`` after (an ``OSError`` EBUSY naming ``path`` if not, and the
    name just made at ``path`` taken back)."""
    if fd is not None:
        _refuse_swapped(tmp, fd, path)
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
        no_link = exc.strerror or str(exc)
    else:
        if fd is not None:
            _refuse_placed_other(tmp, fd, path, linked=True)
        return False
    try:
        _rename_noreplace(tmp, path)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EPERM):
            raise
        raise OSError(errno.ENOTSUP, (
            f"this file system makes no hard link ({no_link}) and no rename that never "
            f"replaces a file ({exc.strerror or exc}), one of which puts a new file in place "
            "whole without replacing one made meanwhile; nothing was written (write it on "
            "another file system)"), path) from None
    if fd is not None:
        _refuse_placed_other(tmp, fd, path, linked=False)
    return True


def _swapped(path: str, fd: int) -> bool:
    """Whether what is at ``path`` (not following a link) is not the file open at ``fd``."""
    try:
        return _identity(os.stat(path, follow_symlinks=False)) != _identity(os.fstat(fd))
    except FileNotFoundError:
        return True


_SWAPPED: Final = ("the new file was replaced at its temporary name by another program, and "
                   "is not put in place; nothing was written")


def _refuse_swapped(tmp: str, fd: int, path: str) -> None:
    if _swapped(tmp, fd):
        raise OSError(errno.EBUSY, _SWAPPED, path)


def _refuse_placed_other(tmp: str, fd: int, path: str, *, linked: bool) -> None:
    """After :func:`place_new` put what was at ``tmp`` at ``path``: refuse if it was not the
    file open at ``fd`` (swapped in after the look before), taking back the name it made."""
    if not _swapped(path, fd):
        return
    with contextlib.suppress(OSError):
        if linked:  # the name made is a second name of what is at tmp: that one only
            if _identity(os.stat(path, follow_symlinks=False)) == _identity(
                    os.stat(tmp, follow_symlinks=False)):
                os.unlink(path)
        else:  # renamed: put back where it came from, if nothing took that name meanwhile
            _rename_noreplace(path, tmp)
    raise OSError(errno.EBUSY, _SWAPPED, path)


def _create_locked(path: str, version: int, sealed: bool) -> int | None:
    """Create ``path`` with its header, locked, or return None if it already exists.

    The file is written and locked under a temporary name, then linked into place: a reader
    or a second writer never sees a file without its header or without its lock. The
    temporary is made, and its name removed, in the directory held open here: another
    directory put at the directory's path meanwhile has no such name (the log is not made,
    and the temporary was left in the directory moved away, for ever).
    """
    directory = os.path.dirname(os.path.abspath(path))
    try:
        at: int | None = os.open(directory, _DIR_FLAGS)
    except OSError:
        at = None  # _create_temp by the path says why
    try:
        return _create_locked_in(path, directory, at, version, sealed)
    finally:
        if at is not None:
            os.close(at)


def _create_locked_in(path: str, directory: str, at: int | None, version: int,
                      sealed: bool) -> int | None:
    try:
        fd, tmp = _create_temp(directory, os.path.basename(path), dir_fd=at)
    except OSError:
        # No file may be made in the directory ("Permission denied"): a log that is there
        # may still be written, and is opened as it is (it failed with that error).
        if os.path.exists(path):
            return None
        raise
    mine = _identity(os.fstat(fd))

    def remove_tmp() -> None:  # ours only: never what another program put at the name
        if at is None:
            os.unlink(tmp)
        elif _identity_at(at, os.path.basename(tmp)) == mine:
            os.unlink(os.path.basename(tmp), dir_fd=at)

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        _write_all(fd, _file_header(version, sealed), 0)
        os.fsync(fd)
        try:
            moved = place_new(tmp, path, fd)  # the file written, whatever is at tmp
        except FileExistsError:
            os.close(fd)
            return None
        if not moved:
            remove_tmp()
        tmp = ""  # no longer ours to remove
        _fsync_dir(path)  # after the unlink too, so no temporary name survives a crash
        return fd
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise
    finally:
        if tmp:
            with contextlib.suppress(OSError):
                remove_tmp()


class HeadSigner(Protocol):
    """What signs chain heads (``buraco_log.signing.keys.Signer``): an id and a sign call."""

    key_id: str

    def sign(self, message: bytes) -> bytes: ...


_Ret = TypeVar("_Ret")
_Params = ParamSpec("_Params")


def _one_thread(method: Callable[Concatenate[Writer, _Params], _Ret]
                ) -> Callable[Concatenate[Writer, _Params], _Ret]:
    """Refuse a call while another thread is inside one of the writer's calls. Two threads
    appending to one writer interleaved their checks, seqs and writes: the log could hold a
    record written twice at one offset. The refusal writes nothing and leaves the writer
    going for the thread that holds it."""
    def guarded(self: Writer, /, *args: _Params.args, **kwargs: _Params.kwargs) -> _Ret:
        busy = self._busy
        if not busy.acquire(False):
            self._refuse_busy()
        try:
            return method(self, *args, **kwargs)
        finally:
            busy.release()
    functools.update_wrapper(guarded, method)  # its name and docstring, for help()
    return guarded


_WRITERS: weakref.WeakSet[Writer] = weakref.WeakSet()
"""Open writers, so that a forked child's copies are told apart (see _forked)."""


def _forked() -> None:
    """In a forked child, every writer's copy takes the checked path, which refuses it (the
    fast path only buffered, and the child's close() dropped what it buffered), with a lock
    of its own (the parent's may have been copied held by a thread the child has not)."""
    for writer in list(_WRITERS):
        writer._fast = False
        writer._child = True
        writer._busy = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


class Writer:
    """The one writer of a log, holding an advisory lock (``flock``) for its whole life.

    ``append`` returns once the event is on disk (write + fsync). With ``batched=True``,
    ``append`` only buffers; events become durable at ``flush``/``close`` or when
    ``batch_events`` have gathered, and a crash loses the buffered ones. By default each event
    is first validated by the rules engine (``buraco_log.reducer.Replayer.step``); pass
    ``validate=False`` to record what happened at a table, illegal moves included.

    A failed write or fsync is reported once and never retried: the writer refuses further
    appends, since the kernel may already have dropped the data it could not write.

    The lock is a :class:`LogLock` (``lock_timeout`` seconds of waiting for another holder,
    0 by default). After each fsync the writer checks that its file is still the one at its
    path, and of the size it wrote, and fails instead of acknowledging if not; before each
    write, that the open file ends where it last wrote (a program that ignores the lock cut it
    or appended to it), and writes nothing if not. A write interrupted by an exception (a
    signal handler's) stops the writer too: what it wrote of the record is cut off.

    With a ``signer`` (``buraco_log.signing.keys.Signer``), the writer signs the chain head
    and appends a signature record, in the same write and fsync as the events: after every
    segment (``sign_at="segment"``; one per ``append`` unless batched) or only after the
    segment holding ``MatchEnded`` (``"end"``); and on ``close`` if the last head is unsigned.
    ``sign_head`` signs now; ``receipt`` hands out a signed head for a player. The match start
    must record the signer's ``key_id``.

    A writer belongs to one thread at a time: it takes no lock of its own between ``append``
    and ``close`` (a close from another thread during an append could write into a reused
    descriptor). Threads that share tables use :class:`buraco_log.recorder.Recorder`, which
    serializes each table's appends and commits them in groups.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        sealed: bool = True,
        validate: bool = True,
        batched: bool = False,
        batch_events: int = BATCH_EVENTS,
        lock_timeout: float = 0.0,
        signer: HeadSigner | None = None,
        sign_at: Literal["segment", "end"] = "segment",
    ) -> None:
        self.path = os.fsdecode(path)
        # its checks of the file at its path look here: a chdir of the process (the path
        # being relative) read as the log removed, and failed the next append
        self._where = os.path.abspath(self.path)
        if is_jsonl_name(self.path):  # every reader would take it as JSON Lines and fail
            raise LogFormatError("a binary log must not be named .jsonl (readers take .jsonl "
                                 "files as JSON Lines): name it .blog, or write JSON Lines "
                                 "with buraco_log.jsonl", path=self.path, kind="usage")
        self._pid = os.getpid()  # a forked child's copy never writes (see __del__)
        self._busy = threading.Lock()  # held by the thread inside a call (_one_thread)
        self._child = False  # a forked child's copy (set in the child by _forked)
        self._signer = signer
        self._sign_at = sign_at
        self._match_id: str | None = None
        self._start_key: str | None = None  # the key id the match start records
        self._signed: sigrec.SignedHead | None = None  # the last signature in the log
        self.batched = batched
        self.batch_events = max(1, batch_events)
        self._buffer: list[ev.AnyEvent] = []
        self._fd: int | None = None
        self._broken: str | None = None
        self._validator: Any = _new_validator(self.path) if validate else None
        self._fast = False  # batched, unvalidated and open: append only buffers
        self._check_range = True  # off only when rewriting events a Reader already checked
        self._expect = FIRST_SEQ  # seq of the next event, buffered ones included
        try:
            fd = _create_locked(self.path, ev.FORMAT_VERSION, sealed)
        except OSError as exc:
            words = None
            if exc.errno in WRITE_FAILURES:  # it said only "No space left on device"
                words = (f"{CREATE_FAILED}{exc.strerror or exc}; nothing was written"
                         if not os.path.lexists(self.path) else
                         f"{MADE_NOT_DURABLE}{exc.strerror or exc}): a new Writer opens it")
            raise write_error(exc, self.path, words) from None
        self._created = fd is not None  # this writer made the file (write_log may remove it)
        if fd is not None:
            self.sealed = sealed
            self.version = ev.FORMAT_VERSION
            self._end = HEADER_SIZE
            self._next_seq = FIRST_SEQ
            self._chain = chain_start()
            self._identity = _identity(os.fstat(fd))
            self._fd = fd
            self._opened()
            return
        lock = LogLock(self.path, timeout=lock_timeout)
        assert lock.fd is not None
        try:
            self._resume(lock.fd)
        except BaseException:
            lock.release()
            raise
        self._identity = lock.identity
        self._fd, lock.fd = lock.fd, None  # the writer owns the locked descriptor from here
        self._opened()

    def _opened(self) -> None:
        _WRITERS.add(self)
        self._expect = self._next_seq
        # where the events not known durable begin (byte, seq): what a failed fsync names
        self._durable = (self._end, self._next_seq)
        self._fast = self.batched and self._validator is None

    def _resume(self, fd: int) -> None:
        with Reader(self.path, allow_torn=True, fd=fd) as reader:
            for _, events in reader.segments():
                if events[0].seq == FIRST_SEQ and isinstance(events[0], ev.MatchStarted):
                    self._match_id = events[0].match_id
                    self._start_key = events[0].key_id
                if self._validator is not None:
                    for event in events:
                        self._step(event)
            info = reader.info
            chain = reader._chain
            self._signed = reader.signatures[-1] if reader.signatures else None
            torn_seq = reader.torn_seq
        if info.torn is not None:
            raise LogFormatError(
                f"cannot append after a torn tail ({info.torn.reason}); "
                + (NO_HEADER_ADVICE if info.torn.offset < HEADER_SIZE
                   else "run `buraco-log repair` first"),
                path=self.path,
                offset=info.torn.offset,
                seq=torn_seq,
                kind="torn",
            )
        if info.version != ev.FORMAT_VERSION:
            raise LogFormatError(
                f"cannot append to a log of event format version {info.version}; convert it first",
                path=self.path,
                kind="version",
            )
        self.sealed = info.sealed
        self.version = info.version
        self._end = info.valid_bytes
        self._next_seq = FIRST_SEQ + info.events
        self._chain = chain
        if self._signer is not None and info.events and self._start_key != self._signer.key_id:
            # refused here, not at the first append (which broke the writer as if interrupted)
            raise LogFormatError(
                f"cannot sign this log with key {self._signer.key_id!r}: its match start "
                f"records key_id {self._start_key!r} (a log is signed by the key its start "
                "records)", path=self.path, kind="sign")

    # -- public API
    @property
    def next_seq(self) -> int:
        """The seq the next appended event must carry."""
        return self._expect

    @property
    def head(self) -> str:
        """Head digest of what is on disk (buffered events not included)."""
        return str(self._chain.hexdigest())

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()  # events accepted before an exception are still written

    def append(self, event: ev.AnyEvent) -> int:
        """Record one event and return its seq; durable on return unless batched."""
        if self._fast and event.seq == self._expect:  # batched, unvalidated: just buffer
            self._expect += 1
            buffer = self._buffer
            buffer.append(event)
            if len(buffer) >= self.batch_events:
                self.flush()
            return event.seq
        busy = self._busy  # _one_thread's, inline: a call less an event
        if not busy.acquire(False):
            self._refuse_busy()
        try:
            self._check(event)
            self._buffer.append(event)
            self._expect += 1
            if not self.batched or len(self._buffer) >= self.batch_events:
                self._write_buffer()
        finally:
            busy.release()
        return event.seq

    def _refuse_busy(self) -> NoReturn:
        raise LogFormatError(
            "this writer is in use by another thread (its append, flush or close has not "
            "returned); nothing was written: a writer belongs to one thread at a time "
            "(threads that share a log use buraco_log.recorder.Recorder)",
            path=self.path, offset=self._end, kind="locked")

    @_one_thread
    def append_many(self, events: Iterable[ev.AnyEvent]) -> int:
        """Record several events with one fsync (one segment per ``batch_events``).

        If one event is refused, the events before it are still recorded.
        """
        try:
            if self._fast:
                self._extend_unchecked(events)
            else:
                for event in events:
                    self._check(event)
                    self._buffer.append(event)
                    self._expect += 1
                    if len(self._buffer) >= self.batch_events:
                        self._write_buffer(sync=False)
        finally:
            if not self.batched and self._broken is None and self._fd is not None:
                self._write_buffer()
        return self._next_seq + len(self._buffer) - 1

    @_one_thread
    def flush(self) -> None:
        """Write and fsync the buffered events."""
        self._write_buffer()

    @_one_thread
    def sign_head(self) -> sigrec.SignedHead:
        """Flush, then sign the head on disk and record the signature (unless the log already
        holds one for this head). Durable on return."""
        return self._sign_head()

    def _sign_head(self) -> sigrec.SignedHead:
        self._write_buffer(sync=False)
        last = self._next_seq - 1
        if self._signed is None or self._signed.seq != last:
            self._write_signature(self._sign(last), self._chain.digest())
        self._write_buffer()  # fsync, and check the file is still the one at our path
        assert self._signed is not None  # written just above, or already for this head
        return self._signed

    @_one_thread
    def put_signature(self, signed: sigrec.SignedHead) -> None:
        """Record a signature made elsewhere (``seal`` and ``convert`` carry a log's own
        signatures over): it must sign exactly the head after the events appended so far."""
        self._write_buffer(sync=False)
        last = self._next_seq - 1
        digest = self._chain.digest()
        if signed.seq != last or signed.head != digest:
            raise LogFormatError(
                f"the signature of seq {signed.seq} does not sign this log's head after seq "
                f"{last}",
                path=self.path,
                seq=signed.seq,
                kind="chain",
            )
        if self._signed == signed:
            return
        self._write_signature(signed, digest)

    def _write_signature(self, signed: sigrec.SignedHead, digest: bytes) -> None:
        """Append ``signed`` as a signature record (a segment of count 0) after the buffered
        events, which the caller has written; not yet fsynced."""
        data = _segment(sigrec.encode(signed), 0, self._next_seq,
                        digest if self.sealed else None)
        assert self._fd is not None  # _write_buffer raised if closed
        try:
            self._refuse_resized()
            try:
                _write_all(self._fd, data, self._end)
            except OSError as exc:
                self._fail(f"write failed: {exc.strerror or exc}{self._cut_partial()}"
                           f"{self._unsynced()}", *self._durable)
            self._end += len(data)
            self._signed = signed
        except BaseException as exc:
            if self._broken is None:
                self._interrupted(exc)
            raise

    @_one_thread
    def receipt(self) -> sigrec.SignedHead:
        """A signed head covering every event appended so far, for a game server to hand to
        the player who just moved (``buraco_log.signing.Receipt.of`` makes its JSON). Flushes
        first: a receipt never covers an event that is not on disk. Reuses the log's own
        signature of this head when there is one; otherwise signs without recording."""
        self._write_buffer()
        last = self._next_seq - 1
        if self._signed is not None and self._signed.seq == last:
            return self._signed
        return self._sign(last)

    @_one_thread
    def close(self) -> None:
        """Flush, release the lock and close. A closed writer accepts no more events."""
        if self._fd is None:
            return
        if self._pid != os.getpid():  # a forked child's copy: the parent's writer goes on
            self._buffer = []
            self._close_quietly()  # closes our descriptor only: the parent keeps the flock
            return
        try:
            if self._buffer and self._broken is None:
                self._write_buffer()
            if (self._signer is not None and self._broken is None and self._next_seq > FIRST_SEQ
                    and (self._signed is None or self._signed.seq != self._next_seq - 1)):
                self._sign_head()  # the lock is close()'s already
        finally:
            self._close_quietly()

    def __del__(self) -> None:
        # Dropped without close(), a writer held its lock until its process ended, and its
        # buffered events were never written. As a file does, it closes itself when collected
        # (writing what it buffered, as close() would) and says so with a ResourceWarning.
        if getattr(self, "_fd", None) is None:
            return
        if self._pid != os.getpid():  # a forked child's copy: close() writes nothing
            self.close()
            return
        pending = len(self._buffer) if self._broken is None else 0
        closed = False
        try:
            self.close()
            closed = True
        finally:
            done = "written" if closed else "not written: its close failed"
            warnings.warn(
                f"unclosed log writer {self.path!r}, closed when collected"
                + (f" (its {pending} buffered events {done})" if pending else ""),
                ResourceWarning, stacklevel=1, source=self)

    def _close_quietly(self) -> None:
        self._fast = False
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the descriptor releases the flock

    # -- internals
    def _extend_unchecked(self, events: Iterable[ev.AnyEvent]) -> None:
        """Buffer many events with one seq check per chunk (no validator to run)."""
        it = iter(events)
        while chunk := list(itertools.islice(it, self.batch_events - len(self._buffer))):
            seqs = list(map(_SEQ, chunk))
            if seqs != list(range(self._expect, self._expect + len(chunk))):
                for event in chunk:  # buffer the good ones, then refuse the first bad one
                    self._check(event)
                    self._buffer.append(event)
                    self._expect += 1
            self._buffer.extend(chunk)
            self._expect += len(chunk)
            if len(self._buffer) >= self.batch_events:
                self._write_buffer(sync=False)

    def _check(self, event: ev.AnyEvent) -> None:
        if self._child:
            self._refuse_forked()  # before buffering: a child's close() drops its buffer
        if not isinstance(event, ev.Event) or type(event.seq) is not int:
            # said before anything else reads it ("appended event has seq 2, expected 2"
            # for "2", AttributeError for a dict)
            what = (f"a {type(event).__name__}" if not isinstance(event, ev.Event) else
                    f"a {type(event).__name__} whose 'seq' is {clip(repr(event.seq), 40)}")
            raise LogFormatError(
                f"append takes an event of buraco_log.events (CardDrawn(seat=0, card=..., "
                f"seq={self._expect})) with an integer seq, not {what}; nothing was written",
                path=self.path, offset=self._end, kind="validate")
        if self._fd is None or self._broken is not None:
            # Said as a refusal of this event, not as the failure again: the earlier error's
            # words alone ("write failed: File too large") read as if this event was tried.
            raise LogFormatError(
                "the writer is closed" if self._broken is None else
                f"the writer takes no more events after an earlier failure ({self._broken}); "
                "a new Writer goes on from what the log holds",
                path=self.path,
                offset=self._end,
                seq=event.seq,
                kind="closed",
            )
        expected = self._expect
        if event.seq != expected:
            raise LogFormatError(
                f"appended event has seq {event.seq}, expected {expected}",
                path=self.path,
                offset=self._end,
                seq=event.seq,
                kind="seq",
            )
        try:
            data = encode_checked(event)
        except LogFormatError as exc:
            raise LogFormatError(
                exc.message, path=self.path, offset=self._end, seq=exc.seq, kind=exc.kind
            ) from None
        if len(data) > MAX_EVENT:
            raise LogFormatError(_too_large(event, len(data)), path=self.path, offset=self._end,
                                 seq=event.seq, kind="range")
        why = unreadable(event, data) if self._check_range else None
        if why is not None:
            raise LogFormatError(why, path=self.path, offset=self._end, seq=event.seq,
                                 kind="validate")
        if self._validator is not None:
            self._step(event)

    def _step(self, event: ev.AnyEvent) -> None:
        """Check ``event`` against the rules; a refusal names this log, as every other
        refusal of the writer does (the rules engine knows no file)."""
        try:
            self._validator.step(event)
        except IllegalMoveError as exc:
            raise located(exc, self.path) from None

    def _sign(self, last: int) -> sigrec.SignedHead:
        """Sign the head after event ``last`` (what is on disk)."""
        if self._signer is None or self._match_id is None or last < FIRST_SEQ:
            raise LogFormatError(
                "nothing to sign: no signer, or no match start written yet",
                path=self.path,
                kind="sign",
            )
        if self._start_key != self._signer.key_id:
            raise LogFormatError(
                f"this log's match start records key_id {self._start_key!r}, not the signer's "
                f"{self._signer.key_id!r}",
                path=self.path,
                kind="sign",
            )
        digest = self._chain.digest()
        signature = self._signer.sign(sigrec.message(self._match_id, last, digest))
        return sigrec.SignedHead(self._match_id, last, digest, self._signer.key_id, signature)

    def _start_signing(self, first: ev.AnyEvent) -> None:
        """The match start of a signed log must record the signer's key id."""
        assert self._signer is not None
        if not isinstance(first, ev.MatchStarted) or first.key_id != self._signer.key_id:
            raise LogFormatError(
                f"a signed log's match start must record key_id {self._signer.key_id!r}",
                path=self.path,
                seq=first.seq,
                kind="sign",
            )
        self._match_id = first.match_id
        self._start_key = first.key_id

    def _write_buffer(self, sync: bool = True) -> None:
        if self._fd is None or self._broken is not None:  # a broken writer signs no head
            if self._broken is None:
                raise LogFormatError("the writer is closed", path=self.path, offset=self._end,
                                     kind="closed")
            # a refusal, named where the events not acknowledged begin: the failure's words
            # alone ("fsync failed: ... from this seq on"), at the end and with no seq, read
            # as a second failed try of a write that was never made
            raise LogFormatError(
                f"the writer writes no more after an earlier failure ({self._broken}); "
                "nothing was written now: a new Writer goes on from what the log holds",
                path=self.path, offset=self._durable[0], seq=self._durable[1], kind="closed")
        if self._pid != os.getpid():
            self._refuse_forked()
        if self._buffer and self._signer is not None and self._next_seq == FIRST_SEQ:
            self._start_signing(self._buffer[0])
        try:
            self._write_now(sync)
        except BaseException as exc:
            if self._broken is None:  # not a refusal of ours: an interruption
                self._interrupted(exc)
            raise

    def _refuse_forked(self) -> NoReturn:
        """A forked child's copy of a writer shares its file and its lock with the parent's:
        what both wrote went to the same bytes, and the parent then refused its log as changed
        behind its lock. The child writes nothing (and its close() only closes its copy)."""
        self._buffer = []
        self._fast = False
        self._broken = (f"this writer was opened by process {self._pid}, and this is a forked "
                        f"child ({os.getpid()}): it writes nothing (the parent's writer goes on)")
        raise LogFormatError(self._broken, path=self.path, offset=self._end, kind="closed")

    def _interrupted(self, exc: BaseException) -> None:
        """An exception raised in the middle of a write (a signal handler's, such as
        KeyboardInterrupt or an alarm's timeout, or a signer's) left this writer's state partly
        updated: the chain had taken events that never reached the file, so its next record
        broke the chain of a log that was acknowledged as whole. It writes no more; what it
        wrote of the record is cut off (nothing of it was acknowledged)."""
        self._fast = False
        self._broken = "a write was interrupted"  # set first: another signal may come
        try:
            cut = self._cut_partial() if self._fd is not None else ""
        except BaseException:
            cut = "; what it wrote of its record may stay, a torn tail"
        self._broken = (f"a write was interrupted ({type(exc).__name__}){cut}; the events from "
                        f"seq {self._durable[1]} on are not acknowledged, and the writer takes "
                        "no more (reopen the log to see what it holds)")

    def _refuse_not_following(self, events: list[ev.AnyEvent]) -> None:
        """The buffered events must hold the seqs from the log's next one on, one each. An
        append interrupted (a signal handler's exception) between counting its event and
        buffering it left a gap or a repeat, which every reader refuses from there on: the
        writer writes no more. Two comparisons a segment."""
        first, last = events[0].seq, events[-1].seq
        if first == self._next_seq and last == first + len(events) - 1:
            return
        self._fast = False
        self._broken = (f"the buffered events do not follow seq {self._next_seq - 1} one by one "
                        f"(seqs {first} to {last} in {len(events)} events: an append was "
                        "interrupted between counting its event and buffering it); nothing "
                        f"was written: the events from seq {self._durable[1]} on are not "
                        "acknowledged, and the writer takes no more (reopen the log to see what "
                        "it holds)")
        raise LogFormatError(self._broken, path=self.path, offset=self._end, seq=first,
                             kind="seq")

    def _write_now(self, sync: bool) -> None:
        """Write the buffered events as a segment (and its signature record), then fsync."""
        fd = self._fd
        assert fd is not None  # the caller refused a closed writer
        if self._buffer:
            self._refuse_not_following(self._buffer)
            events, self._buffer = self._buffer, []
            try:
                blob = ev.encode_many(events)
                if len(blob) > MAX_PAYLOAD:  # a reader refuses a larger segment: split it
                    self._write_split(events, sync)
                    return
                bad = self._check_range and _maybe_huge(blob) and any(
                    _maybe_huge(ev.encode(e)) and out_of_range(e) is not None for e in events
                )
            except OverflowError:
                bad = True
            except _ENCODE_ERRORS:  # only the unchecked fast path gets here: the buffered
                # events were taken out of the buffer above, and must not be lost
                self._refuse_unreadable(events, sync)
            if bad:  # only the unchecked fast path gets here
                self._refuse_out_of_range(events, sync)
            if self._fast and self._check_range:
                try:  # what a reader will decode (0.1 µs an event): the fast path only buffered
                    ev.decode_many(blob)
                except msgspec.ValidationError:
                    self._refuse_unreadable(events, sync)
            skip = len(_array_header(len(events)))
            self._chain.update(memoryview(blob)[skip:])
            digest = self._chain.digest()
            data = _segment(blob, len(events), self._next_seq, digest if self.sealed else None)
            signed = None
            if self._signer is not None and (
                self._sign_at == "segment" or any(isinstance(e, ev.MatchEnded) for e in events)
            ):
                signed = self._sign(self._next_seq + len(events) - 1)
                data += _segment(sigrec.encode(signed), 0, self._next_seq + len(events),
                                 digest if self.sealed else None)
            self._refuse_resized()
            try:
                _write_all(fd, data, self._end)
            except OSError as exc:
                self._fail(f"write failed: {exc.strerror or exc}{self._cut_partial()}"
                           f"{self._unsynced()}", *self._durable)
            self._end += len(data)
            self._next_seq += len(events)
            self._signed = signed or self._signed
        if sync:
            try:
                os.fsync(fd)
            except OSError as exc:
                # named by the first event it may have lost (it named the seq after the last
                # one written, an event never appended, and the end of the file)
                self._fail(
                    f"fsync failed: {exc.strerror or exc}{FSYNC_UNSURE} (reopen the log to "
                    "see what was kept)",
                    *self._durable,
                )
            # Acknowledge only what is in the file at our path: a program that ignores the
            # lock may have renamed or removed it (every rewrite by this package holds it),
            # or cut it since the write (the same stat says its size: no extra call).
            st = self._stat_path()
            if st is None or _identity(st) != self._identity:
                self._fail(
                    "the file at this path was replaced or removed by a program that does not "
                    "take the log's lock; the events from this seq on went to the old file and "
                    "are not acknowledged",
                    *self._durable,
                )
            if st.st_size != self._end:
                self._fail_resized(st.st_size, f" while the events from seq "
                                   f"{self._durable[1]} on were written: they are not "
                                   "acknowledged")
            self._durable = (self._end, self._next_seq)

    def _refuse_out_of_range(self, events: list[ev.AnyEvent], sync: bool) -> None:
        """Write the events before the first one holding an out-of-range integer, then refuse
        it and stop: the events buffered after it were never acknowledged."""
        first = next(i for i, e in enumerate(events) if out_of_range(e) is not None)
        event = events[first]
        message = _range_error(event, str(out_of_range(event)))
        self._buffer = events[:first]
        # synced whatever the call: the writer takes no flush or close after this, and the
        # events before the refused one (written by earlier unsynced chunks too) were never
        # synced at all
        self._write_buffer()
        self._expect = self._next_seq
        self._broken = f"{message}; the events buffered after it were not written"
        self._fast = False
        raise LogFormatError(
            message, path=self.path, offset=self._end, seq=event.seq, kind="range"
        )

    def _write_split(self, events: list[ev.AnyEvent], sync: bool) -> None:
        """Write ``events`` as several segments, each one a reader takes (at most
        ``MAX_PAYLOAD`` bytes); an event larger than that by itself is refused as kind
        ``range`` after the events before it are written, as an out-of-range integer is."""
        chunk: list[ev.AnyEvent] = []
        size = 0
        for i, event in enumerate(events):
            n = len(ev.encode(event))
            if n > MAX_EVENT:
                self._buffer = chunk
                self._write_buffer()  # synced: as in _refuse_out_of_range
                self._expect = self._next_seq
                message = _too_large(event, n)
                self._broken = f"{message}; the events buffered after it were not written"
                self._fast = False
                raise LogFormatError(message, path=self.path, offset=self._end,
                                     seq=events[i].seq, kind="range")
            if chunk and size + n > MAX_EVENT:
                self._buffer = chunk
                self._write_buffer(sync=False)
                chunk, size = [], 0
            chunk.append(event)
            size += n
        self._buffer = chunk
        self._write_buffer(sync)

    def _refuse_unreadable(self, events: list[ev.AnyEvent], sync: bool) -> None:
        """Write the events before the first one a reader could not decode, then refuse it and
        stop, as :meth:`_refuse_out_of_range` does."""
        first, why = next((i, w) for i, e in enumerate(events)
                          if (w := _unrecordable(e)) is not None)
        self._buffer = events[:first]
        self._write_buffer()  # synced: as in _refuse_out_of_range
        self._expect = self._next_seq
        self._broken = f"{why}; the events buffered after it were not written"
        self._fast = False
        raise LogFormatError(why, path=self.path, offset=self._end, seq=events[first].seq,
                             kind="validate")

    def _stat_path(self) -> os.stat_result | None:
        """What is at this writer's path now (None: nothing, or it cannot be stat'ed)."""
        try:
            return _stat_named(self._where, self.path)
        except OSError:
            return None

    def _refuse_resized(self) -> None:
        """The open log must end where this writer last wrote, before it writes again: a
        program that ignores the lock cut it (the record went past the end: a hole of zeros,
        then a record no reader takes, the log refused as damaged from the hole on) or
        appended to it (its bytes overwritten by ours, or left before them). One ``fstat`` per
        write (per segment: each ``append``, or each ``batch_events`` when batched)."""
        assert self._fd is not None
        try:
            size = os.fstat(self._fd).st_size
        except OSError as exc:
            self._fail(f"fstat failed: {exc.strerror or exc}; nothing more was written",
                       *self._durable)
        if size != self._end:
            self._fail_resized(size, f"; nothing more was written: the events from seq "
                               f"{self._durable[1]} on are not acknowledged")

    def _fail_resized(self, size: int, when: str) -> NoReturn:
        """Refuse (kind ``io``, named at the byte where the writer expected the end): the
        file was resized behind the lock. Nothing is cut or written: what the log holds is
        what the program left, for the next writer (or `repair`) to read."""
        how = "cut" if size < self._end else "appended to"
        message = (f"the log was {how} by a program that ignores the writer lock ({size} bytes, "
                   f"where the writer had written {self._end}){when}, and the writer takes "
                   "no more (reopen the log to see what it holds)")
        self._broken = message
        self._fast = False
        raise LogFormatError(message, path=self.path, offset=self._end, seq=self._durable[1],
                             kind="io")

    def _at_path(self) -> bool:
        st = self._stat_path()
        return st is not None and _identity(st) == self._identity

    def _cut_partial(self) -> str:
        """Cut off what a failed write left of its record (a full disk took part of it), so
        the log ends whole and the next writer goes on from it; the note for the error. (A
        torn tail was left: the next writer refused the log until `repair`, which on the full
        disk could not keep its backup.) Nothing of the record was acknowledged."""
        assert self._fd is not None
        try:
            if os.fstat(self._fd).st_size <= self._end:
                return ""  # nothing of it reached the file
            os.ftruncate(self._fd, self._end)
            os.fsync(self._fd)
        except OSError:
            return "; the part of it written stays, a torn tail (`buraco-log repair` cuts it)"
        return f"{PARTIAL_CUT} (the log ends whole at byte {self._end})"

    def _unsynced(self) -> str:
        """What a failed write says of the events written before it in the same fsync (one
        ``append_many``, a batch of several segments): never synced, so not acknowledged. It
        named the seq of the record that failed, as if those before were on disk."""
        end, seq = self._durable
        if (end, seq) == (self._end, self._next_seq):
            return ""
        return (f"{NOT_ACKED}the events from seq {seq} on (from byte {end}), written before "
                "it but never synced (reopen the log to see what was kept)")

    def _fail(self, message: str, offset: int | None = None, seq: int | None = None
              ) -> NoReturn:
        self._broken = message
        self._fast = False
        raise LogWriteError(  # a write, fsync or fstat of the writer's own file failed
            message, path=self.path, offset=self._end if offset is None else offset,
            seq=self._next_seq if seq is None else seq
        )


def _unrecordable(event: ev.AnyEvent) -> str | None:
    """Why ``event`` cannot be encoded, or a reader could not decode it; None if it can."""
    try:
        data = ev.encode(event)
    except OverflowError:
        return None  # an integer out of range: refused by its own check
    except _ENCODE_ERRORS as exc:
        return cannot_encode(event, exc)
    return unreadable(event, data)


def located(exc: IllegalMoveError, path: str, line: int | None = None) -> IllegalMoveError:
    """``exc`` (the rules engine's refusal) naming the log ``path`` (and its JSON Lines
    ``line``) in its one line; rule, seq and explanation unchanged."""
    moved = IllegalMoveError(exc.rule, exc.explanation, seq=exc.seq, tag=exc.tag, seat=exc.seat,
                             cards=exc.cards, path=path, table=exc.table, line=line)
    moved.match_id = exc.match_id
    return moved


def _new_validator(path: str, start: Any = None) -> Any:
    """A ``Replayer`` from the rules engine (from the state ``start``, if given), imported only
    when validation is asked for."""
    try:
        module = importlib.import_module("buraco_log.reducer")
    except ImportError:
        raise LogFormatError(
            "validating appends needs buraco_log.reducer, which is not "
            "installed; pass validate=False to record without validation",
            path=path,
            kind="validate",
        ) from None
    return module.Replayer(start)


def write_log(
    path: str | os.PathLike[str],
    events: Iterable[ev.AnyEvent],
    *,
    sealed: bool = True,
    validate: bool = True,
) -> LogInfo:
    """Create a new log holding ``events`` (refuses an existing path). If an event is
    refused (an illegal move, a wrong seq) or the writing fails, no log is left at ``path``:
    a log of the events before the refused one would pass for the whole match."""
    path = os.fsdecode(path)
    if os.path.exists(path):
        raise LogFormatError("refusing to overwrite an existing log", path=path, kind="exists")
    writer = Writer(path, sealed=sealed, validate=validate, batched=True)
    try:
        if not writer._created:  # made by another program since the check above
            raise LogFormatError("refusing to overwrite an existing log", path=path,
                                 kind="exists")
        writer.append_many(events)
        writer.close()
    except BaseException:
        _remove_created(writer)
        raise
    return verify(path)


def _remove_created(writer: Writer) -> None:
    """Remove the log ``writer`` created, still under its lock (and only if the file at its
    path is still the one it created), then close it without writing its buffer."""
    writer._buffer.clear()
    with contextlib.suppress(OSError):
        if writer._created and _identity(_stat_named(writer._where, writer.path)
                                         ) == writer._identity:
            os.unlink(writer._where)
    writer._close_quietly()


# -- recovery and sealing ----------------------------------------------------------------------


def repair(
    path: str | os.PathLike[str], *, backup: bool = True, lock_timeout: float = 0.0,
    keep_none: bool = True,
) -> RepairReport | None:
    """Cut a torn tail off a log; None if there is nothing to cut.

    ``keep_none=False`` refuses (kind ``torn``, nothing cut) a cut that would leave no event,
    as read under the lock: the command line's look before it may have been at another file
    put at the name since (`repair` without ``--force`` then cut every event of that one).

    Refuses damage in the middle (truncating would throw away good events after it). Unless
    ``backup`` is false, the bytes that are cut off are first copied to ``<path>.bak`` (or
    ``.bak.1``, ...; of a name too long for that, its first bytes and ``.bak``): only those
    bytes (the rest stays in the log, unchanged), and sparsely, so a zero-filled or sparse tail
    of any size costs no disk space (``cat LOG LOG.bak`` gives the original file back). Runs
    under the log's :class:`LogLock` from the read to the truncate.
    """
    path = os.fsdecode(path)
    with LogLock(path, timeout=lock_timeout) as lock:
        assert lock.fd is not None
        fd = lock.fd
        before = os.fstat(fd)
        _point("repair.locked")
        with Reader(path, allow_torn=True, fd=fd) as reader:
            for _ in reader.segments():
                pass
            info = reader.info
        if info.torn is None:
            return None
        if info.torn.offset < HEADER_SIZE:
            raise LogFormatError(
                "the file header itself is incomplete: there are no events to "
                "keep; delete the file",
                path=path,
                offset=0,
                kind="torn",
            )
        if info.events == 0 and not keep_none:
            raise LogFormatError(
                f"repair would cut every event of the log ({info.torn.size} bytes: "
                f"{info.torn.reason}); nothing was changed (--force cuts them)",
                path=path, offset=info.torn.offset, kind="torn")
        if (journaled := _journal_ahead(path, fd, lock.identity)) is not None:
            # zeros where acknowledged records stand (the recorder syncs its journal, not
            # each log): the tail is no unacknowledged write, and cut, it was gone from
            # the log for good once another writer appended
            raise LogFormatError(
                f"the tail from byte {info.torn.offset} ({info.torn.reason}) is not torn: the "
                f"recorder's journal {journaled} holds acknowledged events of this log that "
                "its bytes lack (a crash kept them from the log); open the recorder on its "
                "directory, it writes them back; nothing was cut",
                path=path, offset=info.torn.offset, kind="locked")
        made: list[str] = []  # the backup's name, as soon as it exists
        try:
            if backup:
                try:
                    _backup_tail(fd, info.torn.offset, _backup_base(path), made)
                except _BackupFailed as exc:
                    cls = LogWriteError if exc.errno in WRITE_FAILURES else LogFormatError
                    raise cls(
                        f"cannot keep the {info.torn.size} bytes it would cut in {exc.name}: "
                        f"{exc.reason}; nothing was cut (--no-backup cuts without a backup)",
                        path=path, kind="io") from None
            _point("repair.before-truncate")
            _refuse_changed(fd, path, before, "it was being repaired")
            try:
                os.ftruncate(fd, info.torn.offset)
            except OSError as exc:  # it said only "No space left on device", naming no file
                raise write_error(exc, path, f"cutting the torn tail at byte "
                                  f"{info.torn.offset} failed: {exc.strerror or exc}; "
                                  "nothing was cut") from None
        except BaseException:  # nothing was cut (a failure, a signal): no backup of it either
            for name in made:
                with contextlib.suppress(OSError):
                    os.unlink(name)
            raise
        saved = made[0] if made else None
        try:
            os.fsync(fd)
        except OSError as exc:  # the cut is done (and its backup kept): no taking it back
            kept = f"; the bytes cut are kept in {saved}" if saved else ""
            raise write_error(exc, path, f"cut {info.torn.size} bytes at byte "
                              f"{info.torn.offset}, but the cut could not be made durable "
                              f"(fsync failed: {exc.strerror or exc}): a power loss may undo "
                              f"it{kept}") from None
        durable(path, "repaired")  # the cut is done (and its backup made): no taking it back
        return RepairReport(
            path=path,
            cut_offset=info.torn.offset,
            cut_bytes=info.torn.size,
            backup=saved,
            reason=info.torn.reason,
            events_kept=info.events,
        )


_COPY_BLOCK = 64 * 1024


class _BackupFailed(Exception):
    def __init__(self, name: str, exc: OSError) -> None:
        super().__init__(name, exc)
        self.name, self.reason, self.errno = name, exc.strerror or str(exc), exc.errno


def _backup_tail(fd: int, start: int, base: str, made: list[str] | None = None) -> str:
    """Copy the bytes of ``fd`` from ``start`` to its end into a new file named after ``base``
    (its name goes into ``made`` as soon as the file exists).

    Holes (``SEEK_DATA``) and all-zero blocks are skipped, not written: the copy is sparse and
    takes the disk space of the non-zero bytes only, whatever the size of the tail.
    """
    end = os.fstat(fd).st_size
    while True:
        name = _free_name(base)
        try:
            out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
            break
        except FileExistsError:  # taken between the look and the create: try the next name
            continue
        except OSError as exc:
            raise _BackupFailed(name, exc) from None
    if made is not None:
        made.append(name)
    try:
        pos = start
        while pos < end:
            try:
                data = os.lseek(fd, pos, os.SEEK_DATA)
                hole = os.lseek(fd, data, os.SEEK_HOLE)
            except OSError as exc:
                if exc.errno == errno.ENXIO:  # nothing but a hole up to the end
                    break
                data, hole = pos, end  # no SEEK_DATA here: read everything
            pos = data
            while pos < min(hole, end):
                chunk = os.pread(fd, min(_COPY_BLOCK, min(hole, end) - pos), pos)
                if not chunk:
                    break
                if chunk.count(0) != len(chunk):
                    _write_all(out, chunk, pos - start)
                pos += len(chunk)
        os.ftruncate(out, end - start)
        os.fsync(out)
        # and its name, before the log is cut: a power loss after the cut kept the cut and
        # could lose the backup's name (it was made durable with the cut log's, after it)
        fsync_dir(name)
    except BaseException as exc:
        os.close(out)
        with contextlib.suppress(OSError):
            os.unlink(name)
        if isinstance(exc, OSError):
            raise _BackupFailed(name, exc) from None
        raise
    os.close(out)
    return name


def _backup_base(path: str) -> str:
    """``LOG.bak``; for a name too long to take ``.bak`` and a number (NAME_MAX, 255 bytes),
    its first :data:`TEMP_STEM_MAX` bytes and ``.bak`` (it said "File name too long")."""
    name = os.path.basename(path) + ".bak"
    if len(os.fsencode(name)) <= 255 - 6:  # room for ".99999"
        return path + ".bak"
    return os.path.join(os.path.dirname(path), temp_stem(os.path.basename(path)) + ".bak")


def _free_name(base: str) -> str:
    name, n = base, 0
    while os.path.lexists(name):  # a dangling link exists too: O_EXCL refuses it forever
        n += 1
        name = f"{base}.{n}"
    return name


def seal(
    path: str | os.PathLike[str],
    *,
    batch_events: int = BATCH_EVENTS,
    lock_timeout: float = 0.0,
) -> LogInfo:
    """Rewrite a log with the integrity chain, in large segments; the head digest is unchanged.

    The whole read-rewrite-rename runs under the log's :class:`LogLock`, so no writer can
    append in between: the new file (written beside the log and fsynced) replaces the old one
    by rename while the lock is held. A writer that opened the old file and waited for its
    lock sees afterwards that it is no longer the file at the path, and opens the new one. A
    log with a torn tail or damage is refused: repair it first. A symlink is followed: the
    file it names is sealed and the link stays a link (renaming over the link would leave the
    log itself unsealed and the link a copy of it). A log with more than one hard link is
    refused, unchanged, for the same reason.
    """
    shown = str(path)
    real = os.path.realpath(path)
    try:
        info = _seal(real, shown, batch_events, lock_timeout)
    except LogFormatError as exc:
        if exc.path != real or real == shown:
            raise
        raise exc.named(shown) from None
    if real != shown and (now := os.path.realpath(path)) != real:
        # a link (or a directory on the way) changed while the file it named was sealed:
        # "sealed" of the name would vouch for a file that is not
        raise LogFormatError(
            f"sealed {real!r}, the file this name led to, but it was changed meanwhile and "
            f"now leads to {now!r}, which was not sealed: seal it again if that is the log",
            path=shown, kind="io")
    return info


def _journal_ahead(path: str, fd: int, identity: tuple[int, int]) -> str | None:
    """The recorder journal beside ``path`` (``Recorder(sync="journal")``) holding bytes of
    this very file that the file does not hold: acknowledged events a crash or power loss
    kept from the log, which the recorder writes back when it next opens the directory. A
    rewrite would drop them (the recorder then writes nothing into the new file)."""
    from buraco_log import journal  # it imports this module

    name = os.path.basename(path)
    if not name.endswith(".blog"):  # the recorder's logs are MATCH.blog
        return None
    match, size = name[: -len(".blog")], os.fstat(fd).st_size
    records: list[Any] = []
    last = None  # the newest journal holding a record of the match
    try:
        found = journal.generations(os.path.dirname(path) or ".")
    except OSError:  # a directory that may be searched but not listed: no recorder's
        return None
    for _, journaled in found:
        try:
            ours = [r for r in journal.read(journaled) if r.match == match]
        except OSError:
            continue  # gone meanwhile: a checkpoint retired it
        if ours:
            records += ours
            last = journaled
    # a withdrawn record (its append refused, its write failed) was never acknowledged: the
    # recorder cuts what it left of it, and never writes it back
    for r in journal.withdraw(records):
        if (r.device, r.inode) == identity and (
                r.offset + len(r.data) > size or os.pread(fd, len(r.data), r.offset) != r.data):
            return last
    return None


_DIR_FLAGS: Final = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_CLOEXEC
"""How a directory is held to work in it by descriptor: ``O_PATH`` needs no right to list it,
only to search it (as the same work by its path needs)."""


def _identity_at(dir_fd: int, name: str) -> tuple[int, int] | None:
    """(device, inode) of what is at ``name`` in the directory ``dir_fd`` holds, not
    following a symbolic link; None if nothing is."""
    try:
        return _identity(os.stat(name, dir_fd=dir_fd, follow_symlinks=False))
    except OSError:
        return None


def _refuse_moved(dir_fd: int, name: str, identity: tuple[int, int], path: str,
                  what: str) -> None:
    """Refuse a rewrite of the locked log (of ``identity``) unless it is at ``name`` in the
    directory ``dir_fd`` holds, where its new file is made and renamed: another directory put
    at the log's directory's path since the lock was taken holds another file, or none."""
    if _identity_at(dir_fd, name) != identity:
        raise LogFormatError(
            f"the log was moved while {what} (its directory, or another file at its name, "
            "put there by another program); nothing was changed, run it again",
            path=path, kind="io")


def _name_taken(path: str, what: str) -> LogFormatError:
    """The refusal of a rewrite whose new file beside ``path`` was replaced at its name."""
    return LogFormatError(
        f"the new file written beside the log while {what} was replaced at its name by "
        "another program (a symbolic link or another file there, which is never written); "
        "nothing was changed, run it again", path=path, kind="io")


def _seal(path: str, shown: str, batch_events: int, lock_timeout: float) -> LogInfo:
    with LogLock(path, write=False, timeout=lock_timeout) as lock:
        assert lock.fd is not None
        before = os.fstat(lock.fd)
        _point("seal.locked")
        links = before.st_nlink
        if links > 1 and _unlink_creation_names(path, lock.identity):
            before = os.fstat(lock.fd)
            links = before.st_nlink
        if links > 1:  # the rename would seal this name only; a writer at another name would
            # go on appending to the old file, and what it wrote would never be in the sealed one
            raise LogFormatError(
                f"cannot seal a log with {links} hard links: the sealed file would replace "
                "this name only and the others would keep the old one; seal it under one name",
                path=path, kind="filetype")
        if (journaled := _journal_ahead(path, lock.fd, lock.identity)) is not None:
            raise LogFormatError(
                f"the recorder's journal {journaled} holds acknowledged events of this log "
                "that the log does not hold yet (the recorder stopped before writing them "
                "back): open the recorder on its directory first, it writes them back; the "
                "log is unchanged", path=path, kind="locked")
        with Reader(path, fd=lock.fd, canonical=True) as reader:
            reader.read_header()
            if reader.version != ev.FORMAT_VERSION:
                raise LogFormatError(
                    f"cannot seal a log of event format version {reader.version}; convert it first",
                    path=path,
                    kind="version",
                )
            directory = os.path.dirname(os.path.abspath(path))
            name = os.path.basename(path)
            sweep_stale(path)  # a killed seal's sealed copy
            # The sealed copy is made, written, checked and renamed over the log in the
            # directory held here, through its own descriptor, never by its name: another
            # program may put a symbolic link or another file at that name meanwhile (the
            # events were written into the file it named, its mode and owner set to the log's,
            # and the log replaced by the link), or another directory at the directory's path.
            try:
                at = os.open(directory, _DIR_FLAGS)
            except OSError as exc:
                raise write_error(exc, path, f"cannot open its directory: "
                                  f"{exc.strerror or exc}; the log is unchanged") from None
            tmp, tmp_fd = "", -1
            try:
                _refuse_moved(at, name, lock.identity, path, "it was being sealed")
                try:
                    tmp_fd, tmp = _create_temp(directory, name, dir_fd=at)
                except OSError as exc:
                    raise write_error(exc, path, f"cannot create the sealed copy beside it: "
                                      f"{exc.strerror or exc}; the log is unchanged") from None
                made = _identity(os.fstat(tmp_fd))
                # the header written here, so the writer opens this file as it is: it needs no
                # hard link or rename that never replaces (its way of creating a log) to put
                # it in place, which seal, replacing the log by a rename, does not need either
                # (it was refused on a file system that makes neither)
                _write_all(tmp_fd, _file_header(ev.FORMAT_VERSION, True), 0)
                if _identity_at(at, os.path.basename(tmp)) != made:
                    raise _name_taken(path, "it was being sealed")
                try:
                    writer = Writer(
                        tmp, sealed=True, validate=False, batched=True, batch_events=batch_events
                    )
                except LogFormatError:  # what it opened at the name was no log of ours
                    if _identity_at(at, os.path.basename(tmp)) != made:
                        raise _name_taken(path, "it was being sealed") from None
                    raise
                if writer._identity != made:  # opened by its name: not the file made above
                    _remove_created(writer)
                    raise _name_taken(path, "it was being sealed")
                with writer:
                    writer._check_range = False  # the reader checked every integer
                    carried = 0  # the log's signatures, each after the events it signs
                    for _, events in reader.segments():
                        while carried < len(reader.signatures) and (
                                reader.signatures[carried].seq < events[0].seq):
                            writer.put_signature(reader.signatures[carried])
                            carried += 1
                        writer.append_many(events)
                    for signed in reader.signatures[carried:]:
                        writer.put_signature(signed)
                    writer.flush()
                with Reader(tmp, allow_torn=True, refuse_repeats=True, fd=tmp_fd) as check:
                    for _ in check.segments():
                        pass
                    info = check.info
                if info.torn is not None:  # written whole above: something else wrote to it
                    raise LogFormatError(f"torn tail: {info.torn.reason}", path=tmp,
                                         offset=info.torn.offset, kind="torn")
                st = os.fstat(lock.fd)
                # the log keeps its owner (root sealing a recorder's log left it root's, and the
                # recorder could no longer append); a user not allowed to keeps its own
                with contextlib.suppress(PermissionError):
                    os.fchown(tmp_fd, st.st_uid, st.st_gid)
                os.fchmod(tmp_fd, st.st_mode & 0o7777)
                _point("seal.before-rename")
                _refuse_changed(lock.fd, path, before, "it was being sealed")
                _refuse_moved(at, name, lock.identity, path, "it was being sealed")
                if _identity_at(at, os.path.basename(tmp)) != made:
                    raise _name_taken(path, "it was being sealed")
                os.replace(os.path.basename(tmp), name, src_dir_fd=at, dst_dir_fd=at)
            except (LogFormatError, OSError) as exc:
                mapped = temp_error(exc, tmp, path, "writing the sealed copy beside it failed "
                                    "(the log is unchanged)") if tmp else None
                if mapped is None:
                    raise
                raise mapped from None
            finally:
                if tmp_fd >= 0:
                    os.close(tmp_fd)
                    if _identity_at(at, os.path.basename(tmp)) == made:  # ours, never another's
                        with contextlib.suppress(OSError):
                            os.unlink(os.path.basename(tmp), dir_fd=at)
                os.close(at)
        durable(path, "sealed")  # the rename over the log is done: no taking it back
        _point("seal.renamed")
    return msgspec.structs.replace(info, path=shown)


def encode_log(
    events: Iterable[ev.AnyEvent], *, sealed: bool = True, batch_events: int = BATCH_EVENTS
) -> bytes:
    """The bytes of a log holding ``events``, built in memory: exactly what :func:`write_log`
    writes (no validation, no lock, no fsync). Seqs must run from ``FIRST_SEQ`` by one."""
    parts = [_file_header(ev.FORMAT_VERSION, sealed)]
    chain = chain_start()
    it = iter(events)
    expect = FIRST_SEQ
    while chunk := list(itertools.islice(it, max(1, batch_events))):
        if list(map(_SEQ, chunk)) != list(range(expect, expect + len(chunk))):
            bad = next(e.seq for i, e in enumerate(chunk) if e.seq != expect + i)
            raise LogFormatError(
                f"event has seq {bad}, expected a run from {expect}", seq=bad, kind="seq"
            )
        blob = ev.encode_many(chunk)
        chain.update(memoryview(blob)[len(_array_header(len(chunk))) :])
        parts.append(_segment(blob, len(chunk), expect, chain.digest() if sealed else None))
        expect += len(chunk)
    return b"".join(parts)


def head_digest(events: Iterable[ev.AnyEvent], version: int = ev.FORMAT_VERSION) -> str:
    """The head digest a log holding exactly ``events`` has."""
    chain = chain_start(version)
    for event in events:
        chain.update(ev.encode(event) if version == ev.FORMAT_VERSION
                     else ev.encode_as(event, version))
    return str(chain.hexdigest())


__all__ = [
    "BATCH_EVENTS",
    "FIRST_SEQ",
    "HEADER_SIZE",
    "INT_MAX",
    "INT_MIN",
    "LAYOUT",
    "MAGIC",
    "MAX_DEPTH",
    "MAX_EVENT",
    "MAX_PAYLOAD",
    "NO_HEADER_ADVICE",
    "SIGNED_VERSION",
    "HeadSigner",
    "LogInfo",
    "LogLock",
    "NotDurableError",
    "Reader",
    "RepairReport",
    "Torn",
    "Writer",
    "chain_start",
    "clip",
    "decode_records",
    "describe_bad_record",
    "durable",
    "encode_checked",
    "encode_log",
    "file_type",
    "fsync_dir",
    "head_digest",
    "iter_events",
    "located",
    "lock_to_replace",
    "msgpack_depth",
    "open_log_fd",
    "out_of_range",
    "place_new",
    "read_events",
    "repair",
    "seal",
    "verify",
    "write_log",
]
