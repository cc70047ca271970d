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
from collections.abc import Iterator
from typing import Literal

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
    # Every record (line) to the end of the file decoded: the failure changed events but
    # lost none, so a seq past them is one the log does not hold. False when the read
    # stopped at a torn tail or a record that does not decode: the rest may hold it.
    read_to_end: bool = True
    # The reader's rule id of the failure ("log.torn", "log.damage", "log.decode",
    # "log.jsonl", ...), as `verify` names it; None when the log passed. Callers read this
    # (or ``kind``), never the wording of ``failure``.
    rule: str | None = None

    @property
    def kind(self) -> Literal["torn", "damage"] | None:
        """What the failure is: "torn" (a tail cut short, as a crash leaves it) or "damage" (a
        record that fails its checksum, chain or seq, or does not decode); None: it passed."""
        if self.rule is None:
            return None
        return "torn" if self.rule == "log.torn" else "damage"

    @property
    def torn(self) -> bool:
        """The log failed at a torn tail (and at nothing before it)."""
        return self.kind == "torn"

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
    # a repeated signature record fails the check, as in `verify` (the reader passed it,
    # so `explain --anyway` said the log was whole where `verify` refuses it)
    with log.Reader(p, allow_torn=True, refuse_repeats=True) as reader:
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
                           offset=torn.offset, read_to_end=False, rule="log.torn")
        version, sealed = reader.version, reader.sealed
    rest, whole = _records_from(p, first.offset or log.HEADER_SIZE, version, sealed,
                                events[-1].seq + 1 if events else log.FIRST_SEQ)
    events.extend(rest)
    return Salvage(p, events, _where(first) + first.message, offset=first.offset, seq=first.seq,
                   read_to_end=whole, rule=f"log.{first.kind}")


def _records_from(path: str, offset: int, version: int, sealed: bool, next_seq: int
                  ) -> tuple[list[ev.AnyEvent], bool]:
    """The events of the records from ``offset`` on, with no checksum, chain or seq checks;
    stops at the first record that does not decode (or the end of the file). The flag: the
    records decoded up to the end of the file, none cut short."""
    head_size = log._SEG_HEAD.size + (32 if sealed else 0) + log._SEG_TAIL.size
    out: list[ev.AnyEvent] = []
    with open(path, "rb") as f:
        offset = max(offset, log.HEADER_SIZE)
        while True:
            f.seek(offset)
            head = f.read(head_size)
            if len(head) < head_size:
                return out, not head
            length, count, first_seq = log._SEG_HEAD.unpack_from(head)
            if length > log.MAX_PAYLOAD or length == 0:  # no record is empty: zero bytes (a
                break  # crash's tail) were passed over 56 at a time, a minute a gigabyte
            payload = f.read(length)
            if len(payload) < length:
                break
            offset += head_size + length
            if count == 0:
                continue  # a signature record: no events
            try:
                out.extend(log.decode_records(payload, version, path=path, first_seq=first_seq))
            except LogFormatError:
                # the events before the damage inside the record: a simulated match is one
                # record, and one changed byte in it left nothing to read
                out.extend(_events_before_damage(payload, version, path, first_seq))
                break
    return out, False


def _events_before_damage(payload: bytes, version: int, path: str, first_seq: int
                          ) -> list[ev.AnyEvent]:
    """The events at the start of a record's payload (a MessagePack array of events) that
    still decode one by one, up to the first that does not."""
    out: list[ev.AnyEvent] = []
    for i, item in enumerate(_iter_array_items(payload)):
        try:
            out.extend(log.decode_records(log._array_header(1) + item, version, path=path,
                                          first_seq=first_seq + i))
        except LogFormatError:
            break
    return out


# MessagePack: bytes after the first byte that hold a length (str, bin, ext) or a count
# (array, map), and fixed sizes, by first byte (the spec's format table).
_LENGTH = {0xC4: 1, 0xC5: 2, 0xC6: 4, 0xD9: 1, 0xDA: 2, 0xDB: 4}
_EXT = {0xC7: 1, 0xC8: 2, 0xC9: 4}
_FIXED = {0xC0: 0, 0xC2: 0, 0xC3: 0, 0xCA: 4, 0xCB: 8, 0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8,
          0xD0: 1, 0xD1: 2, 0xD2: 4, 0xD3: 8, 0xD4: 2, 0xD5: 3, 0xD6: 5, 0xD7: 9, 0xD8: 17}
_COUNT = {0xDC: (2, 1), 0xDD: (4, 1), 0xDE: (2, 2), 0xDF: (4, 2)}  # (size, items per count)


def _array_items(data: bytes) -> list[bytes]:
    """The encoded items of the MessagePack array ``data``, as far as they are whole and well
    formed (no recursion: a nesting bomb only costs its length)."""
    return list(_iter_array_items(data))


def _iter_array_items(data: bytes) -> Iterator[bytes]:
    """:func:`_array_items` one at a time: a reader that stops at the first item that is no
    event never scans (or holds) the millions of tiny items a hostile record may have after
    it."""
    end = len(data)

    def header(at: int) -> tuple[int, int]:
        """(where the next value starts, how many values this one contains)."""
        if at >= end:
            raise ValueError("cut short")
        b = data[at]
        if b <= 0x7F or b >= 0xE0:
            return at + 1, 0
        if 0x80 <= b <= 0x8F:
            return at + 1, 2 * (b & 0x0F)
        if 0x90 <= b <= 0x9F:
            return at + 1, b & 0x0F
        if 0xA0 <= b <= 0xBF:
            return at + 1 + (b & 0x1F), 0
        if b in _FIXED:
            return at + 1 + _FIXED[b], 0
        if b in _LENGTH or b in _EXT:
            size = _LENGTH.get(b) or _EXT[b]
            n = int.from_bytes(data[at + 1:at + 1 + size], "big")
            return at + 1 + size + (b in _EXT) + n, 0
        if b in _COUNT:
            size, per = _COUNT[b]
            return at + 1 + size, per * int.from_bytes(data[at + 1:at + 1 + size], "big")
        raise ValueError(f"byte 0x{b:02x}")  # 0xc1: never used

    if not data or not (0x90 <= data[0] <= 0x9F or data[0] in (0xDC, 0xDD)):
        return  # not an array
    try:
        pos, count = header(0)
        for _ in range(count):
            start, need = pos, 1
            while need:
                pos, inner = header(pos)
                need += inner - 1
                if pos > end:
                    return
            yield data[start:pos]
    except ValueError:
        return


def _jsonl_anyway(path: str) -> Salvage:
    from buraco_log.jsonl import JsonlReader

    events: list[ev.AnyEvent] = []
    try:
        for e in JsonlReader(path, refuse_repeats=True):  # a copy fails, as in `verify`
            events.append(e)
    except LogFormatError as exc:
        if exc.kind in ("io", "version", "filetype"):
            raise
        whole = False
        if exc.line is not None:  # read on past it, as past a binary record that fails
            rest, whole = _lines_from(path, exc.line,
                                      events[-1].seq + 1 if events else log.FIRST_SEQ)
            events.extend(rest)
        return Salvage(path, events, _where(exc) + exc.message, line=exc.line, seq=exc.seq,
                       read_to_end=whole, rule=f"log.{exc.kind}")
    return Salvage(path, events)


def _lines_from(path: str, first_line: int, next_seq: int) -> tuple[list[ev.AnyEvent], bool]:
    """The events of the JSON Lines from line ``first_line`` on, with no seq, chain or
    signature checks (signature and other ``log`` lines are passed over); stops at the first
    line that is no event (or the end line, or the end of the file). The flag: it stopped at
    the end line or the end of the file, every line before it read.

    A signed log edited by hand fails at the first signature line after the edit: the strict
    reader stops there, and a referee reading it anyway must still see the rest, as in the
    binary form of the same log."""
    from buraco_log.jsonl import MAX_LINE, MAX_SKIPPED, _line_decoder, event_from_json

    out: list[ev.AnyEvent] = []
    skipped = 0
    with open(path, "rb") as f:
        for number, raw in enumerate(iter(lambda: f.readline(MAX_LINE + 2), b""), 1):
            if number < first_line:
                continue
            text = raw.strip()
            if len(text) > MAX_LINE:
                return out, False
            if not text or text.startswith(b"#"):
                skipped += 1
                if skipped > MAX_SKIPPED:  # the strict reader's bound: a gigabyte of blank
                    return out, False      # lines took a quarter of an hour to pass over
                continue
            skipped = 0
            try:
                obj = _line_decoder().decode(text)
            except msgspec.MsgspecError:
                return out, False
            if not isinstance(obj, dict):
                return out, False
            if "log" in obj:
                if obj.get("log") == "end":
                    return out, True
                continue  # a signature or another metadata line: no event
            obj.setdefault("seq", next_seq)
            try:
                event = event_from_json(obj)
            except (ValueError, TypeError, msgspec.MsgspecError):
                return out, False
            out.append(event)
            next_seq = event.seq + 1
    return out, True


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
