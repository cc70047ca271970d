"""Forensics on a damaged or tampered log: read it anyway, as far as its records decode.

The strict readers stop at the first record whose checksum or integrity chain fails, which is
right for judging a log and wrong for a referee who needs to see what the flagged record says.
:func:`read_anyway` reads every record that still decodes, past checksum, chain and seq
failures, and says where the log first failed its integrity check. Whatever is shown from such
events must carry that warning first (:attr:`Salvage.warning`).

The record framing read here is the one of ``schema/LOG_FORMAT.md`` (``buraco_log.log``'s
constants, no checks of its own). Core module: stdlib and msgspec only.
"""

from __future__ import annotations

import os

import msgspec

from buraco_log import events as ev
from buraco_log import log
from buraco_log.errors import LogFormatError
from buraco_log.state import State


class Salvage(msgspec.Struct, frozen=True):
    """The events read from ``path``; ``failure`` is None when the log passed its integrity
    check, else the first failure, in words, with where it is."""

    path: str
    events: list[ev.AnyEvent]
    failure: str | None = None
    offset: int | None = None  # byte (binary) of the first failure
    line: int | None = None  # line (JSON Lines) of the first failure
    seq: int | None = None

    @property
    def warning(self) -> str | None:
        """The line every output made from these events starts with, when the log failed."""
        if self.failure is None:
            return None
        return (f"WARNING: {self.path} failed its integrity check ({self.failure}); read anyway "
                f"as far as its records decode: {len(self.events)} events")


def _where(exc: LogFormatError) -> str:
    parts = []
    if exc.line is not None:
        parts.append(f"line {exc.line}")
    if exc.offset is not None:
        parts.append(f"byte {exc.offset}")
    if exc.seq is not None:
        parts.append(f"seq {exc.seq}")
    return f"at {', '.join(parts)}: " if parts else ""


def read_anyway(path: str | os.PathLike[str]) -> Salvage:
    """Every event of the log that still decodes, and where its integrity check first failed.

    A log that cannot be opened, is no log at all, or whose format version is unknown still
    raises :class:`LogFormatError`: there is nothing to salvage then."""
    p = str(path)
    if p.endswith(".jsonl"):
        return _jsonl_anyway(p)
    events: list[ev.AnyEvent] = []
    with log.Reader(p, allow_torn=True) as reader:
        try:
            for _, evs in reader.segments():
                events.extend(evs)
        except LogFormatError as exc:
            if exc.kind in ("io", "version", "header", "filetype") or exc.offset is None:
                raise
            first = exc
        else:
            torn = reader.info.torn
            if torn is None:
                return Salvage(p, events)
            return Salvage(p, events, f"torn tail at byte {torn.offset}: {torn.reason}",
                           offset=torn.offset)
        version, sealed = reader.version, reader.sealed
    events.extend(_records_from(p, first.offset or log.HEADER_SIZE, version, sealed,
                                events[-1].seq + 1 if events else log.FIRST_SEQ))
    return Salvage(p, events, _where(first) + first.message, offset=first.offset, seq=first.seq)


def _records_from(path: str, offset: int, version: int, sealed: bool, next_seq: int
                  ) -> list[ev.AnyEvent]:
    """The events of the records from ``offset`` on, with no checksum, chain or seq checks;
    stops at the first record that does not decode (or the end of the file)."""
    head_size = log._SEG_HEAD.size + (32 if sealed else 0) + log._SEG_TAIL.size
    out: list[ev.AnyEvent] = []
    with open(path, "rb") as f:
        offset = max(offset, log.HEADER_SIZE)
        while True:
            f.seek(offset)
            head = f.read(head_size)
            if len(head) < head_size:
                break
            length, count, first_seq = log._SEG_HEAD.unpack_from(head)
            if length > log.MAX_PAYLOAD:
                break
            payload = f.read(length)
            if len(payload) < length:
                break
            offset += head_size + length
            if count == 0:
                continue  # a signature record: no events
            try:
                out.extend(log.decode_records(payload, version, path=path, first_seq=first_seq))
            except LogFormatError:
                break
    return out


def _jsonl_anyway(path: str) -> Salvage:
    from buraco_log.jsonl import JsonlReader

    events: list[ev.AnyEvent] = []
    try:
        for e in JsonlReader(path):
            events.append(e)
    except LogFormatError as exc:
        if exc.kind in ("io", "version", "filetype"):
            raise
        return Salvage(path, events, _where(exc) + exc.message, line=exc.line, seq=exc.seq)
    return Salvage(path, events)


def state_at(path: str | os.PathLike[str], seq: int, *, ignore_integrity: bool = False
             ) -> tuple[State, str | None]:
    """:func:`buraco_log.reducer.state_at` for a log file, and the warning to print first when
    ``ignore_integrity`` read a log that failed its integrity check (None otherwise). Strictly
    (the default), damage raises :class:`LogFormatError` as the readers do."""
    from buraco_log.reducer import state_at as replay_to

    if ignore_integrity:
        salvage = read_anyway(path)
        return replay_to(salvage.events, seq), salvage.warning
    p = str(path)
    if p.endswith(".jsonl"):
        from buraco_log.jsonl import read_jsonl

        return replay_to(read_jsonl(p), seq), None
    return replay_to(log.read_events(p), seq), None
