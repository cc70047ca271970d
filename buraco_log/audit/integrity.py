"""Integrity: how a log's bytes held up, read without ever raising for bad bytes."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import pairwise
from typing import Any, Literal

import msgspec

from buraco_log import events as ev
from buraco_log import log
from buraco_log.audit.files import NUL_NAME, AnyPath, file_problem, path_text
from buraco_log.audit.findings import Finding
from buraco_log.errors import LogFormatError
from buraco_log.events import (
    FORMAT_VERSION,
    AnyEvent,
)
from buraco_log.signing.record import SignedHead

IntegrityStatus = Literal["sealed", "unsealed", "torn", "broken", "unreadable"]


class Integrity(msgspec.Struct, frozen=True):
    """How the log's bytes held up. ``record`` counts records (segments) from 0."""

    status: IntegrityStatus
    format: Literal["binary", "jsonl"]
    events: int  # events read intact
    records: int  # intact records (segments; lines for JSON Lines)
    head: str  # head digest of the intact events
    offset: int | None = None  # where the damage or torn tail starts
    record: int | None = None  # which record is damaged or torn
    seq: int | None = None  # first seq not read
    kind: str | None = None  # the reader's kind of damage (rule id ``log.<kind>``)
    message: str | None = None
    signatures: int = 0  # signature records read (format version 2; docs/signing.md)


class Signed(msgspec.Struct, frozen=True):
    """The signature records read before any damage, and the log's event format version."""

    signatures: tuple[SignedHead, ...] = ()
    version: int = FORMAT_VERSION


def no_event_received(events: int, torn_at: int | None) -> bool:
    """The one rule of a match not started, for every reader: no event read, and the bytes
    either whole (a header alone) or torn before the header was (``torn_at`` < the header's
    size: a writer stopped while creating the file, so no event can have been lost)."""
    return events == 0 and (torn_at is None or torn_at < log.HEADER_SIZE)


def not_started(events: Sequence[AnyEvent], integrity: Integrity) -> bool:
    """A log of a match that never received an event, from what `audit` read: a whole header
    and no events, or a header cut short by a writer stopped while creating the file."""
    return not_started_count(len(events), integrity)


def not_started_count(events: int, integrity: Integrity) -> bool:
    """:func:`not_started` of a log of which ``events`` events were read."""
    if integrity.status in ("sealed", "unsealed"):
        return no_event_received(events, None)
    return (integrity.status == "torn" and integrity.format == "binary"  # its header's size
            and integrity.offset is not None
            and no_event_received(events, integrity.offset))


def log_not_started(info: log.LogInfo) -> bool:
    """:func:`not_started` from what `verify` read (:func:`buraco_log.log.verify`)."""
    return no_event_received(info.events, None if info.torn is None else info.torn.offset)


def read_log(path: AnyPath) -> tuple[list[AnyEvent], Integrity]:
    """The intact events of a log and its :class:`Integrity`. Never raises for bad bytes."""
    events, integrity, _ = read_log_signed(path)
    return events, integrity


def read_log_signed(path: AnyPath) -> tuple[list[AnyEvent], Integrity, Signed]:
    """:func:`read_log`, and the log's signature records (checked against its chain only)."""
    stream = LogStream(path)
    events: list[AnyEvent] = []  # held by this frame: an interrupt frees nothing one by one
    for chunk in stream.chunks():  # a record's events at once: one step a record, not an event
        events.extend(chunk)
    return events, stream.integrity, stream.signed


class LogStream:
    """The intact events of a log one at a time, as :func:`read_log_signed` reads them, for a
    command that needs no more than one event at a time (`show`, `replay`): a list of 20
    million events was 3 GB. :attr:`integrity` and :attr:`signed` are known once the stream
    is read through; it is read once. Never raises for bad bytes."""

    def __init__(self, path: AnyPath) -> None:
        self.path = path_text(path)
        self.count = 0  # events handed out so far
        self._signed: list[SignedHead] = []
        self._version = [FORMAT_VERSION]
        self._result: list[Integrity] = []

    def __iter__(self) -> Iterator[AnyEvent]:
        for chunk in self.chunks():
            yield from chunk

    def chunks(self) -> Iterator[Sequence[AnyEvent]]:
        """The events a record at a time (a JSON Lines line: one), as the log holds them."""
        for chunk in _read(self.path, self._signed, self._version, self._result):
            self.count += len(chunk)
            yield chunk

    @property
    def integrity(self) -> Integrity:
        if not self._result:
            raise RuntimeError("the log's integrity is known once its stream is read through")
        integrity = self._result[0]
        if self._signed:
            integrity = msgspec.structs.replace(integrity, signatures=len(self._signed))
        return integrity

    @property
    def signed(self) -> Signed:
        return Signed(tuple(self._signed), self._version[0])


def _read(p: str, signed: list[SignedHead], version: list[int], out: list[Integrity]
          ) -> Iterator[Sequence[AnyEvent]]:
    """The intact events of ``p``, a record at a time; its :class:`Integrity` appended to
    ``out`` once they are all given."""
    problem = file_problem(p)
    if problem is not None:  # a FIFO, a device...: never opened (it could block or never end)
        out.append(Integrity(status="unreadable", format="jsonl" if p.endswith(".jsonl")
                             else "binary", events=0, records=0, head=log.head_digest(()),
                             kind="unreadable" if problem == NUL_NAME else "filetype",
                             message=problem))
        return
    if p.endswith(".jsonl"):
        yield from _read_jsonl(p, signed, version, out)
        return
    count = 0
    try:
        reader = log.Reader(p, allow_torn=True)
    except (OSError, LogFormatError) as exc:  # the reader reports OS failures as kind "io"
        out.append(_unreadable(exc, "binary"))
        return
    with reader:
        try:
            for _, evs in reader.segments():
                count += len(evs)
                yield evs
        except LogFormatError as exc:
            signed += reader.signatures
            version[0] = getattr(reader, "version", FORMAT_VERSION)
            if exc.kind == "io":
                out.append(_unreadable(exc, "binary"))
                return
            info = reader.info
            out.append(Integrity(
                status="broken", format="binary", events=count, records=info.segments,
                head=info.head, offset=exc.offset,
                # The file header is no record: its damage names none. Nor does a signature
                # record's (the reader's one error past the header with no seq): records count
                # events' records, and its message names it by the seq it follows.
                record=None if exc.kind == "header" or exc.seq is None or (
                    exc.offset is not None and exc.offset < log.HEADER_SIZE)
                else info.segments, seq=exc.seq, kind=exc.kind, message=exc.message,
            ))
            return
        except OSError as exc:
            out.append(_unreadable(exc, "binary"))
            return
        info = reader.info
        signed += reader.signatures
        version[0] = info.version
        torn_seq = reader.torn_seq
    if info.torn is not None:
        # a signature record cut short is no event record and holds no seq, as for damage
        out.append(Integrity(
            status="torn", format="binary", events=info.events, records=info.segments,
            head=info.head, offset=info.torn.offset,
            record=None if torn_seq is None else info.segments,
            seq=torn_seq, kind="torn", message=info.torn.reason,
        ))
        return
    out.append(Integrity(
        status="sealed" if info.sealed else "unsealed", format="binary", events=info.events,
        records=info.segments, head=info.head,
    ))


def _read_jsonl(path: str, signed: list[SignedHead], version: list[int],
                out: list[Integrity]) -> Iterator[Sequence[AnyEvent]]:
    from buraco_log.jsonl import JsonlReader

    reader = JsonlReader(path)
    count = 0
    chain = None  # the head digest of the events given, as log.head_digest computes it
    try:
        for e in reader:
            if chain is None:
                chain = log.chain_start(reader.version)
            chain.update(ev.encode(e) if reader.version == FORMAT_VERSION
                         else ev.encode_as(e, reader.version))
            count += 1
            yield (e,)
    except LogFormatError as exc:
        signed += reader.signatures
        version[0] = reader.version
        if exc.kind == "io":
            out.append(_unreadable(exc, "jsonl"))
            return
        out.append(Integrity(  # a last line cut short is torn (it may be being written)
            status="torn" if exc.kind == "torn" else "broken", format="jsonl",
            events=count, records=count, head=_head(chain, reader.version), record=exc.line,
            seq=exc.seq, offset=exc.offset if exc.kind in ("torn", "header") else None,
            kind=exc.kind,
            message=exc.message.removeprefix("torn tail: "),  # said where it is shown
        ))
        return
    except OSError as exc:
        out.append(_unreadable(exc, "jsonl"))
        return
    signed += reader.signatures
    version[0] = reader.version
    sealed = reader.sealed_by_end  # the first line's "sealed": false counts, as in verify
    out.append(Integrity(
        status="sealed" if sealed else "unsealed", format="jsonl", events=count,
        records=count, head=_head(chain, reader.version),
    ))


def _head(chain: Any, version: int) -> str:
    """The head digest of the events hashed into ``chain`` (None: of no event)."""
    return str((chain or log.chain_start(version)).hexdigest())


def _unreadable(exc: OSError | LogFormatError, fmt: Literal["binary", "jsonl"]) -> Integrity:
    message = exc.message if isinstance(exc, LogFormatError) else exc.strerror or str(exc)
    return Integrity(status="unreadable", format=fmt, events=0, records=0,
                     head=log.head_digest(()), message=message,
                     # the reader's refusal of a FIFO or device swapped in after the walk
                     kind="filetype" if getattr(exc, "kind", None) == "filetype"
                     else "unreadable")


def repeated_signature(path: AnyPath, signatures: Sequence[SignedHead]
                       ) -> tuple[int, LogFormatError] | None:
    """The first signature record that repeats the one before it, as the seq it signs and
    the error `verify` gives for it (its byte or line), or None when none does: the audit's
    reader reads on past such a copy, so `show` and `view` ask here. The log is read again
    strictly only when it holds one."""
    seq = next((b.seq for a, b in pairwise(signatures) if b.repeats(a)), None)
    if seq is None:
        return None
    try:
        load(path)
    except LogFormatError as exc:
        return seq, exc
    return seq, LogFormatError(f"the signature record after seq {seq} repeats the one before "
                               "it [sign.duplicate]", path=path_text(path), kind="seq")


def load(path: AnyPath) -> list[AnyEvent]:
    """Every event of a log, strictly: damage raises :class:`LogFormatError` naming the file
    and offset (for the commands that show a match rather than judge it). A repeated
    signature record (or line) is damage here, as `verify` says: `explain`, `replay` and
    `moves` showed such a log as whole, where `verify`, `seal` and `convert` refuse it."""
    p = _strict_path(path)
    if p.endswith(".jsonl"):
        from buraco_log.jsonl import JsonlReader

        return log.gathered(JsonlReader(p, refuse_repeats=True))
    # the reader's own iterator gathered (an interrupt frees nothing event by event), not
    # load_iter's: one generator step more an event was 15 % more instructions a read
    try:
        with log.Reader(p, refuse_repeats=True) as reader:
            return log.gathered(reader)
    except LogFormatError as exc:
        if _never_started(exc):
            return []
        raise


def load_iter(path: AnyPath) -> Iterator[AnyEvent]:
    """:func:`load`, one event at a time (damage raises where the stream meets it), for a
    command that holds no more than the table (`replay`)."""
    p = _strict_path(path)
    if p.endswith(".jsonl"):
        from buraco_log.jsonl import JsonlReader

        yield from JsonlReader(p, refuse_repeats=True)
        return
    try:
        with log.Reader(p, refuse_repeats=True) as reader:
            yield from reader
    except LogFormatError as exc:
        if not _never_started(exc):
            raise


def _strict_path(path: AnyPath) -> str:
    p = path_text(path)
    if "\0" in p:  # refused here, not a ValueError from the first system call
        raise LogFormatError(NUL_NAME, path=p, kind="unreadable")
    return p


def _never_started(exc: LogFormatError) -> bool:
    """A header cut short (an empty file): a match that never received an event, as `audit`
    says (NOT STARTED), not damage to events that were once there."""
    return exc.kind == "torn" and (exc.offset or 0) < log.HEADER_SIZE


def _integrity_findings(integ: Integrity) -> list[Finding]:
    if integ.status in ("sealed", "unsealed"):
        return []
    if integ.status == "torn":
        unit = "line" if integ.format == "jsonl" else "record"
        record = "" if integ.record is None else f" ({unit} {integ.record})"
        msg = f"torn tail at byte {integ.offset}{record}: {integ.message}"
    elif integ.status == "unreadable":
        msg = f"cannot read the log: {integ.message}"
    else:
        unit = "line" if integ.format == "jsonl" else "record"
        where = f"{unit} {integ.record}" if integ.record is not None else ""
        if integ.offset is not None:
            where += f", byte {integ.offset}" if where else f"byte {integ.offset}"
        msg = f"broken at {where}: {integ.message}" if where else f"broken: {integ.message}"
    return [Finding("integrity", f"log.{integ.kind}", msg, seq=integ.seq, offset=integ.offset)]


_MAX_REORDERED = 6
"""Most metadata keys whose orders are tried (720 orders): a match start holds a handful."""


def reordered_metadata(path: str, events: Sequence[AnyEvent], integrity: Integrity,
                       version: int = FORMAT_VERSION) -> str | None:
    """The note of a JSON Lines log whose chain fails only because its match start's
    ``metadata`` keys were put in another order, or None.

    A JSON tool that sorts keys (``jq -S``, ``sort_keys``) rewrites every line; the event
    lines read back the same, but ``metadata`` is a free-form map whose keys' order is part of
    the encoding the chain and signatures cover, so the copy reads as changed ("the events or
    the line were changed"). The signed head (a signature line's, or the end line's) is tried
    against the other orders of those keys; one that matches shows no event's content
    differs up to that line."""
    import itertools

    from buraco_log.events import MatchStarted, encode, encode_as

    if (integrity.format != "jsonl" or integrity.kind != "chain" or integrity.record is None
            or not events or not isinstance(events[0], MatchStarted)):
        return None
    start = events[0]
    keys = list(start.metadata)
    if not 2 <= len(keys) <= _MAX_REORDERED:
        return None
    target = _jsonl_line(path, integrity.record)
    if target is None or target.get("log") not in ("signature", "end"):
        return None
    head = target.get("head")
    seq = target.get("seq") if target.get("log") == "signature" else events[-1].seq
    if not isinstance(head, str) or type(seq) is not int or not 0 <= seq <= events[-1].seq:
        return None

    def coded(e: AnyEvent) -> bytes:
        return encode(e) if version == FORMAT_VERSION else encode_as(e, version)

    rest = b"".join(coded(e) for e in events[1:] if e.seq <= seq)
    for order in itertools.permutations(keys):
        if list(order) == keys:
            continue
        moved = msgspec.structs.replace(start, metadata={k: start.metadata[k] for k in order})
        chain = log.chain_start(version)
        chain.update(coded(moved))
        chain.update(rest)
        if chain.hexdigest() == head.lower():
            what = (f"its signature line after seq {seq}" if target.get("log") == "signature"
                    else "the head digest on its end line")
            return (f"integrity: the log matches {what} once the match start's metadata keys "
                    f"are put back in the order {', '.join(order)}: the file was rewritten "
                    "by a JSON tool that reorders keys (jq -S, sort_keys), and that order is "
                    f"part of what the chain covers; up to seq {seq} no event's content "
                    "differs. `buraco-log convert` of the site's binary log gives a copy that "
                    "verifies")
    return None


def _jsonl_line(path: str, number: int) -> dict[str, object] | None:
    """Line ``number`` (from 1) of a JSON Lines file as a JSON object, or None."""
    from buraco_log.jsonl import MAX_LINE

    try:
        with open(path, "rb") as f:
            for i, raw in enumerate(iter(lambda: f.readline(MAX_LINE + 2), b""), 1):
                if i == number:
                    obj = msgspec.json.decode(raw.strip())
                    return obj if isinstance(obj, dict) else None
    except (OSError, msgspec.MsgspecError):
        return None
    return None
