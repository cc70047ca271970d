"""JSON Lines interchange: one event per line, cards as text, integrity lines optional.

::

    {"log": "buraco-log", "version": 1, "sealed": true}          optional first line
    {"t": "dr", "seat": 1, "card": "7h", "seq": 12}              one event per line
    {"log": "end", "events": 40, "head": "5f0c..."}               optional last line

A signed log (format version 2) also holds its signature records, each on a line of its own
right after the event it signs::

    {"log": "signature", "match_id": "m1", "seq": 12, "head": "9a1e...", "key_id": "...",
     "signature": "..."}

Cards are written as text (``7h``, ``Th``, ``JK``) and read in any form ``parse_card`` accepts,
or as integer codes. ``seq`` may be left out: it then follows the line before. When the end line
carries ``head``, the events must hash to it. Binary -> JSON Lines -> binary gives the same events
and the same head digest. Blank lines and lines starting with ``#`` are skipped.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import re
from collections.abc import Generator, Iterable, Iterator
from typing import IO, Any, Final, Literal

import msgspec

from buraco_log import events as ev
from buraco_log import log, watch
from buraco_log.cards import format_card, is_card, parse_card
from buraco_log.errors import CardParseError, IllegalMoveError, LogFormatError
from buraco_log.outpaths import no_directory
from buraco_log.signing import record as sigrec

MAX_LINE = 1024 * 1024
"""Longest line read, in bytes (a full deal with rules is about 2 kB)."""
MAX_DEPTH = 10
"""Deepest JSON nesting read (events need 4)."""
MAX_SKIPPED = 100_000
"""Most blank or comment lines in a row read (a match log has a few; 50 million newlines took
a minute to read)."""


def _bounded_json_type(depth: int) -> Any:
    """A msgspec type for JSON values nested at most ``depth`` deep.

    Decoding against it stops at the limit with an error instead of recursing further, so a
    hostile line cannot overflow the C stack.
    """
    scalar: Any = None | bool | int | float | str
    value = scalar
    for _ in range(depth):
        value = scalar | list[value] | dict[str, value]  # type: ignore[valid-type]
    return value


_LINE_DECODERS: list[msgspec.json.Decoder[Any]] = []


def _line_decoder() -> msgspec.json.Decoder[Any]:
    """Built on first use: the bounded type takes seconds to build, and most runs never read
    JSON Lines."""
    if not _LINE_DECODERS:
        _LINE_DECODERS.append(msgspec.json.Decoder(_bounded_json_type(MAX_DEPTH)))
    return _LINE_DECODERS[0]


_BIG_DIGITS = re.compile(rb"\d{19}")
"""19 digits in a row: the only way a line can hold an integer outside the signed 64-bit range
(a cheap test before the field-by-field search)."""


_TOO_DEEP = re.compile(r"Expected `bool \| int \| float \| str \| null`, got `(array|object)`")
"""What msgspec says of a value nested past :data:`MAX_DEPTH` (the bounded type's last level
takes scalars only)."""

_CRASHED = "what a crash leaves where the data never reached the disk"
"""Why a line holds only zero bytes."""

_BOM = b"\xef\xbb\xbf"
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")
_HUGE_FIELD = re.compile(rb'"((?:[^"\\]|\\.){1,64})"\s*:\s*\[?\s*-?\d{19}')


def _range_message(text: bytes) -> str:
    """The range error of a line whose integer is too long even to decode (msgspec refuses
    thousands of digits before any field can be looked at), naming the field when it can."""
    found = _HUGE_FIELD.search(text)
    where = f"field {found.group(1).decode('utf-8', 'replace')!r}" if found else "a field"
    return (f"{where} holds an integer outside the signed 64-bit range ({log.INT_MIN} to "
            f"{log.INT_MAX})")


_LONE_HIGH = re.compile(rb"(?<!\\)(?:\\\\)*\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])")
"""A ``\\uD800``-``\\uDBFF`` escape not followed by a low surrogate's: no Unicode text."""


def _bom_message(number: int) -> str:
    """Why a line starting with a UTF-8 byte order mark is refused. A BOM is refused, not
    skipped: a log is bytes under a chain and signatures, and a reader that dropped bytes would
    vouch for a file other than the one it read. Past line 1 it was "invalid character (byte
    0)"; there it is most often two files joined together, each with its BOM."""
    where = "file" if number == 1 else "line"
    why = "" if number == 1 else " (a file's start: two files joined together?)"
    return (f"the {where} starts with a byte order mark (EF BB BF), which is refused{why}: JSON "
            "Lines are UTF-8 without one (save the file without BOM)")


def _utf16(raw: bytes) -> bool:
    """Does a first line read as UTF-16 (a byte order mark, or "{" next to a NUL byte)?"""
    return raw[:2] in (b"\xff\xfe", b"\xfe\xff") or raw[:2] in (b"{\x00", b"\x00{")


def _why_not_json(text: bytes, exc: Exception) -> str:
    """msgspec's reason a line is not JSON, made precise where it is vague: bytes that are not
    UTF-8 are named by position, and a lone surrogate escape (which msgspec calls "Input data
    was truncated") is named as such."""
    try:
        text.decode("utf-8")
    except UnicodeDecodeError as bad:
        return (f"byte {bad.start} of the line ({text[bad.start]:#04x}) is not UTF-8: "
                "JSON Lines are UTF-8 text")
    bare_cr = text.rstrip(b"\r\n").find(b"\r")
    if bare_cr >= 0 and str(exc).startswith("JSON is malformed: trailing characters"):
        # lines ended by a carriage return alone (old Mac text) read as one line of many objects
        return (f"byte {bare_cr} of the line is a carriage return (CR) alone: JSON Lines end "
                "each line in LF or CR LF (convert the file's line ends)")
    return json_problem(text, exc)


def _cut_short(raw: bytes, text: bytes, exc: Exception) -> bool:
    """Is ``raw`` (``text`` stripped) the start of a JSON line, cut off at the end of the file
    (no line end)? What a reader sees of a line being appended, or of one a crash cut: msgspec
    calls such a prefix "Input data was truncated" (as it calls a whole line holding a lone
    surrogate escape, which is no prefix), or, cut inside a number (``-``, ``1.``, ``1e-``),
    an invalid number at the text's end. A cut inside a character's UTF-8 bytes is one too."""
    said = str(exc)
    if raw.endswith(b"\n") or not (said.startswith("Input data was truncated") or said == (
            f"JSON is malformed: invalid number (byte {len(text)})")):
        return False
    if _LONE_HIGH.search(raw) is not None:
        return False
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        return bad.end == len(raw) and bad.reason == "unexpected end of data"
    return True


_NOT_NUMBERS = re.compile(rb"-?(?:NaN|Infinity)", re.IGNORECASE)
_AT_BYTE = re.compile(r"invalid character \(byte (\d+)\)$")
_FLOAT = re.compile(rb"-?\d+(?:\.\d+(?:[eE][-+]?\d+)?|[eE][-+]?\d+)")


def json_problem(text: bytes, exc: Exception) -> str:
    """msgspec's reason ``text`` is not JSON, made precise where it is vague: a lone surrogate
    escape (which msgspec calls "Input data was truncated" of a whole text) and NaN or
    Infinity (an "invalid character") are named as such."""
    found = _LONE_HIGH.search(text)
    if found is not None and str(exc).startswith("Input data was truncated"):
        escape = found.group().lstrip(b"\\").decode("ascii")
        return (f"the escape \\{escape} at byte {found.end() - 6} is half of a UTF-16 "
                "surrogate pair (a lone surrogate is not Unicode text)")
    if (at := _AT_BYTE.search(str(exc))) is not None:
        byte = int(at.group(1))
        word = _NOT_NUMBERS.match(text, max(0, byte - 1))
        word = word if word is not None and word.end() > byte else _NOT_NUMBERS.match(text, byte)
        if word is not None:
            return (f"{word.group().decode('ascii')} at byte {word.start()} is not JSON (JSON "
                    "numbers are finite)")
    if str(exc).startswith("Number out of range"):  # msgspec adds "- at `$[...]`": no place
        for number in _FLOAT.finditer(text):
            if abs(float(number.group())) == float("inf"):
                return (f"Number out of range: {log.clip(number.group().decode('ascii'), 40)} "
                        f"at byte {number.start()} is larger than any 64-bit number")
    return str(exc)


_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"?|[{}\[\]:]')
"""A JSON string (its closing quote missing at a line's end) or a bracket or colon."""
_BYTE_AT = re.compile(r"\bbyte (\d+)\b")


def _field_at(text: bytes, byte: int | None = None) -> str | None:
    """The top-level key of the object on ``text`` whose value holds ``byte``, or, with
    ``byte`` None, whose value nests deeper than :data:`MAX_DEPTH`: so an error found by the
    byte (a NaN, a lone surrogate, a byte that is no UTF-8, nesting too deep) names the field
    too, on a line the decoder could not turn into an object. Scans only on an error."""
    depth = 0
    key = candidate = None
    for token in _TOKEN.finditer(text):
        if byte is not None and token.start() >= byte:
            break
        first = token.group()[:1]
        if first == b'"':
            candidate = token.group() if depth == 1 else candidate
        elif first == b":":
            if depth == 1 and candidate is not None:
                key, candidate = candidate, None
        elif first in b"{[":
            depth += 1
            if byte is None and depth > MAX_DEPTH:
                break
        else:
            depth -= 1
            if depth < 1:
                return None  # past the object's end: no field holds it
    else:
        if byte is None:
            return None
    if key is None or depth < 1:
        return None
    try:
        name = json.loads(key)
    except ValueError:  # a lone surrogate, or bytes that are no UTF-8, in the key itself
        return key[1:-1].decode("utf-8", "replace")
    return name if isinstance(name, str) else None


def _in_field(text: bytes, message: str, byte: int | None = None) -> str:
    """``message`` led by the field it is about, when the byte it names (or ``byte``) lies in
    one field's value."""
    if byte is None and (at := _BYTE_AT.search(message)) is not None:
        byte = int(at.group(1))
    field = _field_at(text, byte) if byte is not None else None
    if field is None:
        return message
    return f"field {log.clip(field, 60)!r}: {message}"


def _events_in_comment(raw: bytes) -> int | None:
    """Where a comment line's first carriage return alone is, when a JSON object follows one
    (lines ended by a CR alone: the rest of the log read as part of the comment), else None.
    A comment of other text with a CR in it hides no line: it is still skipped."""
    body = raw.rstrip(b"\r\n")
    first = body.find(b"\r")
    for part in body[first + 1:].split(b"\r") if first >= 0 else ():
        part = part.strip()
        if part.startswith(b"{") and part.endswith(b"}"):
            with contextlib.suppress(msgspec.MsgspecError):
                if isinstance(_line_decoder().decode(part), dict):
                    return first
    return None


class _DuplicateKey(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return out


_KEY_END = re.compile(rb'"\s*:')  # how every key ends (and, rarely, some text in a string)


def _keys_in(value: Any) -> int:
    """How many keys the decoded objects of ``value`` hold, nested ones included."""
    items: Iterable[Any]
    if isinstance(value, dict):
        count, items = len(value), value.values()
    elif isinstance(value, list):
        count, items = 0, value
    else:
        return 0
    for item in items:  # a loop, not sum(): this runs on every line read
        if isinstance(item, (dict, list)):
            count += _keys_in(item)
    return count


def may_repeat_a_key(text: bytes, obj: Any) -> bool:
    """False when ``text`` cannot hold a repeated key: every key written ends in a quote and a
    colon, so a line with as many of those as its decoded objects have keys lost none to a
    repeat. A quote and colon inside a string only sends the line to the slow, exact check."""
    return len(_KEY_END.findall(text)) != _keys_in(obj)


def duplicate_key(text: bytes) -> str | None:
    """The first key that appears twice in one object of ``text``, or None.

    msgspec keeps the last value of a repeated key without a word; another parser may keep the
    first, and so read a different event (or key file, or receipt). Call it on JSON that
    msgspec already decoded, so its nesting is bounded; the standard library's parser, with a
    hook that sees every pair, is asked only which key repeats.
    """
    try:
        json.loads(text, object_pairs_hook=_no_duplicates)
    except _DuplicateKey as dup:
        return str(dup.args[0])
    except ValueError:  # msgspec accepted the line; nothing more to learn here
        return None
    return None


_duplicate_key = duplicate_key  # the old private name (tests/property use it)


def _cards_out(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_cards_out(v) for v in value]
    if isinstance(value, int) and is_card(value):
        return format_card(value)
    return value  # None, or a code that is not a card (kept as is: lossless)


@functools.lru_cache(maxsize=4096)
def _card_code(text: str) -> int:
    """:func:`parse_card`, remembered (a refusal raises, and is not): a log spells the same
    few dozen cards over and over, and parsing each anew took 3 s for a 1 MiB line of them."""
    return parse_card(text)


class CardValueError(ValueError):
    """A card-bearing field of a JSON Lines event holding what is no card, or not the list of
    cards it must hold: the reader names it as kind ``jsonl`` (``log.jsonl``)."""


def _card_depth(hint: Any) -> int:
    """How many lists deep a card field's cards lie (``tuple[tuple[int, ...], ...]``: 2)."""
    args = [a for a in getattr(hint, "__args__", ()) if a is not type(None) and a is not ...]
    if getattr(hint, "__origin__", None) is tuple and args:
        return 1 + _card_depth(args[0])
    return 0


def _card_shapes() -> dict[tuple[str, str], tuple[int, bool]]:
    """Each card-bearing field of each event kind: how many lists deep its cards lie, and
    whether it may be null (``upcard``; ``pt``'s ``top`` reads null as no card)."""
    import typing

    shapes = {}
    for cls in typing.get_args(ev.AnyEvent):
        tag = cls.__struct_config__.tag
        hints = typing.get_type_hints(cls)
        for name in ev.CARD_FIELDS.get(tag, ()):
            hint = hints[name]
            nullable = type(None) in getattr(hint, "__args__", ()) or (tag, name) == ("pt", "top")
            shapes[tag, name] = (_card_depth(hint), nullable)
    return shapes


CARD_SHAPES: Final = _card_shapes()
"""``(tag, field) -> (depth, nullable)`` of every card-bearing field (hs's ``hands``: 2)."""

_CARD_FORMS: Final = "a card is text such as 7h, Th, 10h, 7♥ or JK, or its integer code"


def _cards_in(value: Any, field: str, depth: int = 0, nullable: bool = False) -> Any:
    """``value`` with its cards as codes. Text must be a card; an integer is kept as the code
    it is (the rules engine refuses a code that is no card: ``event.invalid``); anything else,
    or a card where a list goes or a list where a card goes, is refused naming the field and
    the position in it (worked out only then: this runs for every card read)."""
    try:
        return _codes(value, depth, nullable)
    except _NoCard as exc:
        at = "".join(f"[{i}]" for i in reversed(exc.path))
        raise CardValueError(f"field {field!r}" + (f" at {at}" if at else "") + exc.tail
                             ) from None


class _NoCard(Exception):
    """Raised by :func:`_codes`: the message's tail, and the position, innermost first."""

    def __init__(self, tail: str) -> None:
        super().__init__(tail)
        self.tail = tail
        self.path: list[int] = []


def _codes(value: Any, depth: int, nullable: bool) -> Any:
    if depth:
        if not isinstance(value, list):
            cards = "a list of lists of cards" if depth > 1 else "a list of cards"
            raise _NoCard(f" must be {cards}, not {_json(value)}")
        i = 0
        try:
            out = []
            for i, v in enumerate(value):  # noqa: B007 (i names the position of a refusal)
                out.append(_codes(v, depth - 1, False))
            return out
        except _NoCard as exc:
            exc.path.append(i)
            raise
    if isinstance(value, str):
        try:
            return _card_code(value)
        except CardParseError as exc:
            raise _NoCard(f": {exc}") from None
    if type(value) is int or (value is None and nullable):
        return value
    raise _NoCard(f": {_json(value)} is not a card ({_CARD_FORMS})")


PILE_TOP_MISSING: Final = 0
"""The ``top`` a JSON Lines ``pt`` without one (or with null) reads as: no card (the engine says
the take names no top card: ``pile.empty`` on an empty pile, else ``event.invalid``)."""


def event_to_json(event: ev.Event) -> dict[str, Any]:
    """The JSON Lines object of one event: :func:`events.to_dict` with cards as text."""
    obj = ev.to_dict(event)
    for name in ev.CARD_FIELDS.get(obj["t"], ()):
        obj[name] = _cards_out(obj[name])
    return obj


def event_from_json(obj: dict[str, Any]) -> ev.AnyEvent:
    """Inverse of :func:`event_to_json`. Raises ``ValueError`` or ``msgspec.ValidationError``."""
    tag = obj.get("t")
    if isinstance(tag, str):
        for name in ev.CARD_FIELDS.get(tag, ()):
            if name in obj:
                obj[name] = _cards_in(obj[name], name, *CARD_SHAPES[tag, name])
    if tag == "pt" and obj.get("top") is None:
        # A take of an empty pile, written by hand, has no top to name (left out, or null):
        # read it as the code that stands for no card, so the rules say what is wrong
        # (`pile.empty`), not the decoder. Written back, the field is there (0).
        obj["top"] = PILE_TOP_MISSING
    return ev.from_dict(obj)


def signature_to_json(signed: sigrec.SignedHead) -> dict[str, Any]:
    """The JSON Lines line of a signature record."""
    return {"log": "signature", "match_id": signed.match_id, "seq": signed.seq,
            "head": signed.head.hex(), "key_id": signed.key_id,
            "signature": signed.signature.hex()}


def dump(events: Iterator[ev.AnyEvent | sigrec.SignedHead], out: IO[str], *,
         sealed: bool, version: int = ev.FORMAT_VERSION) -> tuple[int, str]:
    """Write JSON Lines for ``events`` (and signature records among them) to ``out``; returns
    (event count, head digest). ``version``: the event format version the events were
    written in (a converted log keeps its own, and so its head digest)."""
    out.write(json.dumps({"log": "buraco-log", "version": version, "sealed": sealed}))
    out.write("\n")
    chain = log.chain_start(version)
    count = 0
    for event in events:
        if isinstance(event, sigrec.SignedHead):
            out.write(json.dumps(signature_to_json(event)))
            out.write("\n")
            continue
        obj = event_to_json(event)
        if version != ev.FORMAT_VERSION:
            chain.update(ev.encode_as(event, version))  # refuses what the version cannot hold
            if version < log.SIGNED_VERSION and isinstance(event, ev.MatchStarted):
                del obj["key_id"]  # version 1 has no such field
        else:
            chain.update(ev.encode(event))
        line = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
        if len(line) > MAX_LINE // 4 and len(line.encode("utf-8")) > MAX_LINE:
            # a reader refuses the line (LOG_FORMAT.md): never write a log it cannot read
            raise LogFormatError(
                f"{type(event).__name__} is {len(line.encode('utf-8')):,} bytes as a JSON line; "
                f"a JSON Lines log's line holds at most {MAX_LINE:,} (keep the binary form)",
                seq=event.seq, kind="limit")
        out.write(line)
        out.write("\n")
        count += 1
    head = str(chain.hexdigest())
    out.write(json.dumps({"log": "end", "events": count, "head": head}))
    out.write("\n")
    return count, head


def _lines(f: IO[bytes], path: str) -> Iterator[bytes]:
    """The lines of ``f``, each of at most ``MAX_LINE + 2`` bytes, up to the size the file had
    when reading began: a file that grew as fast as it was read (a program appending comment
    lines) kept the reader going until the disk was full. A file whose size says nothing (a
    kernel file says 0) is read to its end. A read that fails (EIO) names ``path`` and the
    byte: a bare OSError was taken by `convert` for its new file's ("writing the new file
    failed", exit 1), as it names no file."""
    offset = 0
    size = 0
    watched = watch.active()  # a bar on the terminal: a log of millions of lines
    what = f"reading {os.path.basename(path)}"
    try:
        size = os.fstat(f.fileno()).st_size
        left = size or -1
        gap = watch.every(size, 1 << 16)
        mark = gap
        while left:
            raw = f.readline(MAX_LINE + 2 if left < 0 else min(MAX_LINE + 2, left))
            if not raw:
                return
            if left > 0:
                left -= len(raw)
            offset += len(raw)
            if watched and offset >= mark:
                watch.note(what, offset, size, "bytes")
                mark = offset + gap
            yield raw
    except OSError as exc:
        raise log.os_error(exc, path, offset) from None
    finally:
        if watched:
            watch.note(what, size, size, "bytes")  # the step is over, however it ended


def line_start(path: str | os.PathLike[str], line: int) -> int | None:
    """The byte offset at which line ``line`` (from 1) of a JSON Lines file starts, as the
    reader counts lines (one per ``\\n``), None if the file cannot be read. Read in blocks:
    memory stays bounded whatever the lines' length, and nothing past that line's start is
    read (a report named the line of a gigabyte the reader refused from its first megabyte,
    then read the whole line into memory, 2.1 GB, to say where it starts)."""
    if line <= 1:
        return 0
    pos = 0
    seen = 1  # the line that starts at ``pos``'s block
    try:
        with os.fdopen(log.open_log_fd(path), "rb", buffering=0) as f:
            while block := f.read(1 << 20):
                count = block.count(b"\n")
                if seen + count >= line:
                    at = -1
                    for _ in range(line - seen):
                        at = block.index(b"\n", at + 1)
                    return pos + at + 1
                seen += count
                pos += len(block)
    except (OSError, LogFormatError):
        return None
    return pos


class JsonlReader:
    """Streams the events of a JSON Lines log, checking seqs and the optional end line."""

    def __init__(self, path: str | os.PathLike[str], *, refuse_repeats: bool = False) -> None:
        """``refuse_repeats``: refuse a signature line that repeats the one before it, as
        :class:`buraco_log.log.Reader` does (`verify` and `convert`; the audit reads on and
        reports it as ``sign.duplicate``)."""
        self.path = os.fsdecode(path)
        self._refuse_repeats = refuse_repeats
        self.sealed = True
        self.version = ev.FORMAT_VERSION
        self.end: dict[str, Any] | None = None
        self.end_line = 0  # the end line's number: its mismatches are reported there
        self.count = 0
        self.signatures: list[sigrec.SignedHead] = []  # checked against the chain, not keys
        self._digest = b""  # the chain's digest after the last event read
        self._header_line = 0  # the first line's number, once read
        self.line = 0  # the line of the last event handed out
        self.size = 0  # bytes read: the file's size when reading began, once read through

    def _error(self, message: str, line: int, kind: str = "jsonl") -> LogFormatError:
        return LogFormatError(log.clip(message), path=self.path, line=line, seq=self.count,
                              kind=kind)

    def _after_end(self, text: bytes, number: int) -> LogFormatError:
        """A line after the end line: named by the seq it would hold when it is an event, by
        none when it is another first or end line or no JSON (it said the next seq of each)."""
        where = f"after the end line (line {self.end_line}), which must be the last"
        try:
            obj = _line_decoder().decode(text)
        except msgspec.MsgspecError:
            obj = None
        if isinstance(obj, dict) and "log" not in obj:
            return self._error(f"an event {where}", number)
        return self._meta_error(f"text {where}", number)

    def _torn(self, raw: bytes, line: int) -> LogFormatError:
        """The last line cut short: a program appending the log line by line may be writing it
        now (or a crash cut it). A torn tail, as the binary form's, not damage: the events
        before it are whole."""
        intact = ("no event is before it" if self.count == 0 else
                  f"the {self.count} event{'' if self.count == 1 else 's'} before it "
                  f"{'is' if self.count == 1 else 'are'} intact")
        return LogFormatError(
            f"torn tail: the last line is cut short ({len(raw)} bytes, no line end, not whole "
            "JSON): a program may be appending this log now (read again once it is done); if "
            f"none is, a crash cut it (remove that line: {intact})",
            path=self.path, line=line, offset=self.size - len(raw), seq=self.count,
            kind="torn")

    def _meta_error(self, message: str, line: int, kind: str = "jsonl") -> LogFormatError:
        """An error of a line that holds no event (the first, the end or a signature line):
        no seq (the first and end lines said seq 0 of an empty log, or the next event's seq,
        which no line holds; a signature line's is not its own)."""
        return LogFormatError(log.clip(message), path=self.path, line=line, kind=kind)


    def _not_a_log(self, why: str) -> LogFormatError:
        """The file is no JSON Lines log at all: its first line that is not blank or a comment
        is neither a first line nor an event, nor JSON damaged inside an object. Kind
        ``header`` at byte 0, as the binary reader says of a file without its magic (exit 2,
        not a finding in a log: a gzip, a PNG or a JSON array named .jsonl said "damaged").
        Placed at byte 0, by no line, as the binary reader's: a report that places errors by
        line took it for damage at that line."""
        return LogFormatError(log.clip(f"not a JSON Lines log: {why}"), path=self.path,
                              offset=0, kind="header")

    def _refuse_binary(self, first: bytes) -> None:
        """A binary log named .jsonl: say so (it read as "byte 18 of the line is not UTF-8",
        while a JSON Lines log read as binary is told its name is at fault)."""
        if first.startswith(log.MAGIC):
            raise self._not_a_log(
                "the file is a binary buraco-log log (it starts with BURACOLG): a file whose name "
                "ends in .jsonl is read as JSON Lines (rename it, e.g. to .blog)")

    def _foreign(self, raw: bytes, text: bytes, number: int, exc: Exception) -> str | None:
        """Why the first line that is not blank or a comment, which is no JSON, shows the
        file is no JSON Lines log (None: a log's line, damaged). A line that opens an object,
        starts with a byte order mark or is zero bytes (a crash's) is a log's."""
        if number == 1 and (packed := log.compressed(raw)) is not None:
            return f"the file is {packed}: decompress it first"
        if number == 1 and _utf16(raw):
            return "the file is UTF-16 text: JSON Lines are UTF-8 (save the file as UTF-8)"
        if text.startswith((b"{", _BOM)) or not text.strip(b"\0"):
            return None
        if _TOO_DEEP.match(str(exc)):
            why = f"JSON nested more than {MAX_DEPTH} deep"
        elif str(exc).startswith("Integer value out of range"):
            why = "a number too long to read"
        else:
            why = _why_not_json(raw, exc)
        return f"{_which(number)} is no JSON object ({why})"

    def __iter__(self) -> Iterator[ev.AnyEvent]:
        chain = log.chain_start()
        f = os.fdopen(log.open_log_fd(self.path), "rb")  # never blocks; regular files only
        with f:
            number = skipped = 0
            started = False  # a line that is not blank or a comment was read
            # the bound is on the line itself: its end (\n or \r\n) is not counted
            for number, raw in enumerate(_lines(f, self.path), 1):
                self.size += len(raw)
                if number == 1:
                    self._refuse_binary(raw)
                if len(raw.rstrip(b"\r\n")) > MAX_LINE or (
                        len(raw) == MAX_LINE + 2 and not raw.endswith(b"\r\n")):
                    if not started and not raw.lstrip().startswith((b"{", b"#", _BOM)) and (
                            raw.strip(b"\0 \t\r\n")):
                        raise self._not_a_log(f"{_which(number)} is longer than {MAX_LINE} "
                                              "bytes and no JSON object")
                    cr = (" (it holds carriage returns (CR) alone: JSON Lines end each line in "
                          "LF or CR LF)") if b"\r" in raw.rstrip(b"\r\n") else ""
                    if not raw.rstrip(b"\r\n").strip(b"\0"):
                        cr = f" of zero bytes (NUL), no text: {_CRASHED}"
                    raise self._error(f"line longer than {MAX_LINE} bytes{cr}", number, "limit")
                text = raw.strip()
                if text.startswith(b"#") and (lone := _events_in_comment(raw)) is not None:
                    # lines ended by a CR alone after a comment read as one comment: every
                    # event was skipped and the log said "not started"
                    raise self._error(
                        f"a comment line whose byte {lone} is a carriage return (CR) alone: JSON "
                        "Lines end each line in LF or CR LF (convert the file's line ends)",
                        number)
                if not text or text.startswith(b"#"):
                    skipped += 1
                    if skipped > MAX_SKIPPED:  # a gigabyte of newlines took many minutes
                        raise self._error(
                            f"more than {MAX_SKIPPED:,} blank or comment lines in a row: no "
                            "match log holds that many", number, "limit")
                    continue
                skipped = 0
                first, started = not started, True
                if self.end is not None:
                    raise self._after_end(text, number)
                try:
                    obj = _line_decoder().decode(text)
                except msgspec.MsgspecError as exc:
                    if first and (foreign := self._foreign(raw, text, number, exc)) is not None:
                        raise self._not_a_log(foreign) from None
                    if str(exc).startswith("Integer value out of range"):  # thousands of digits
                        raise self._error(_range_message(text), number, "range") from None
                    if _TOO_DEEP.match(str(exc)):  # the bound type's words, not the rule's
                        deep = f"JSON nested more than {MAX_DEPTH} deep (an event nests at " \
                            "most 4 deep): not read"
                        if (field := _field_at(text)) is not None:
                            deep = f"field {log.clip(field, 60)!r}: {deep}"
                        raise self._error(deep, number, "limit") from None
                    if not text.strip(b"\0"):  # msgspec: "invalid character (byte 0)"
                        raise self._error(
                            f"the line is {len(text):,} zero bytes (NUL), no text: {_CRASHED}",
                            number) from None
                    if text.startswith(_BOM):
                        raise self._error(_bom_message(number), number) from None
                    if _cut_short(raw, text, exc):
                        raise self._torn(raw, number) from None
                    why = _why_not_json(raw, exc)
                    raise self._error(f"not a JSON line: {_in_field(raw, why)}",
                                      number) from None
                if not isinstance(obj, dict):
                    if first:
                        raise self._not_a_log(f"{_which(number)} is a JSON {_json_kind(obj)}, "
                                              "not an object")
                    raise self._error("a line must be a JSON object", number)
                if first and obj.keys().isdisjoint(_log_keys()):
                    raise self._not_a_log(
                        f"{_which(number)} is a JSON object holding no key of a log's lines: "
                        "neither a first line ({\"log\": \"buraco-log\", ...}) nor an event "
                        "(no 't')")
                if may_repeat_a_key(text, obj) and (duplicate := duplicate_key(text)) is not None:
                    # a signature line has no seq of its own (the next event's is not its)
                    error = (self._meta_error if obj.get("log") == "signature"
                             else self._error)
                    raise error(f"duplicate key {duplicate!r}: JSON parsers disagree on which "
                                "value counts, so the line is refused", number, "jsonl")
                if obj.get("log") == "signature":
                    self._signature(obj, number)
                    continue
                if "log" in obj:
                    self._meta(obj, number)
                    if self.count == 0:  # an older version's chain is over its own bytes
                        chain = log.chain_start(self.version)
                    continue
                if _BIG_DIGITS.search(text) and (where := log.out_of_range(obj)) is not None:
                    raise self._error(  # before any other check can trip over the value
                        f"field {where!r} holds an integer outside the signed 64-bit range "
                        f"({log.INT_MIN} to {log.INT_MAX})",
                        number,
                        "range",
                    )
                obj.setdefault("seq", log.FIRST_SEQ + self.count)
                try:
                    event = event_from_json(obj)
                except CardValueError as exc:  # a value, not an unknown event or field
                    raise self._error(str(exc), number) from None
                except (ValueError, msgspec.MsgspecError) as exc:
                    raise self._error(str(exc) + log.newer_knob(str(exc)), number,
                                      "unknown") from None
                if event.seq != log.FIRST_SEQ + self.count:
                    raise self._error(
                        f"event has seq {event.seq}, expected {log.FIRST_SEQ + self.count}",
                        number,
                        "seq",
                    )
                try:
                    chain.update(ev.encode(event) if self.version == ev.FORMAT_VERSION
                                 else ev.encode_as(event, self.version))
                except ValueError:  # a field that version does not have (a v1 start's key_id)
                    raise self._error(
                        f"event {obj.get('t')!r} holds what format version {self.version} "
                        "cannot (a match start's key_id needs version 2): the first line's "
                        "version is wrong, or the event is", number, "unknown") from None
                self.count += 1
                self._digest = chain.digest()
                self.line = number
                yield event
        if self.end is not None:
            said = self.end.get("events", self.count)
            if said != self.count:
                first, last = sorted((said, self.count))
                seqs = (f"seq {log.FIRST_SEQ + first}" if last - first == 1 else
                        f"seqs {log.FIRST_SEQ + first} to {log.FIRST_SEQ + last - 1}")
                raise self._meta_error(
                    f"end line says {said} events, found {self.count} ("
                    + (f"{seqs} missing: lines lost or removed before the end line"
                       if said > self.count else f"{seqs} more than it counts") + ")",
                    self.end_line,
                    "seq",
                )
            head = self.end.get("head")
            if head is not None and head.lower() != chain.hexdigest():  # hex in any case
                raise self._meta_error(
                    "events do not hash to the head digest on the end line: changed after the fact",
                    self.end_line,
                    "chain",
                )

    @property
    def head(self) -> str:
        """The head digest of the events read so far (of the whole log once read through)."""
        return self._digest.hex() if self.count else str(
            log.chain_start(self.version).hexdigest())

    @property
    def sealed_by_end(self) -> bool:
        """Whether this JSON Lines log is sealed: its end line carries the head digest (checked
        against the events) and its first line, if any, does not say ``"sealed": false``. The
        first line's flag is the binary form's: a log converted from an unsealed binary log
        (whose end line the converter writes all the same) is as unsealed as that log, and
        converts back to it."""
        return self.sealed and self.end is not None and "head" in self.end

    @property
    def unsealed_because(self) -> str | None:
        """Why the log read is unsealed, in words for a person (None: it is sealed)."""
        if self.sealed_by_end:
            return None
        if not self.sealed:
            return (f"its first line says \"sealed\": false: the binary form has no integrity "
                    f"chain{'' if self.end is not None else ', and there is no end line'}")
        return "no end line with the head digest"

    def _signature(self, obj: dict[str, Any], number: int) -> None:
        """A signature line: it must sign exactly the chain's head after the line before."""
        if self.version < log.SIGNED_VERSION:
            raise self._error(f"a signature line in a log of format version {self.version}",
                              number, "version")
        try:
            if set(obj) != {"log", "match_id", "seq", "head", "key_id", "signature"}:
                raise ValueError("it needs exactly match_id, seq, head, key_id and signature")
            signed = sigrec.Receipt(obj["match_id"], obj["seq"], obj["head"], obj["key_id"],
                                    obj["signature"]).signed_head()
            if not (isinstance(signed.match_id, str) and isinstance(signed.key_id, str)
                    and type(signed.seq) is int):
                raise ValueError("match_id and key_id must be text, seq an integer")
        except (TypeError, ValueError) as exc:
            raise self._meta_error(f"not a signature line: {exc}", number, "decode"
                                        ) from None
        size = len(sigrec.encode(signed))
        if size > sigrec.MAX_RECORD:  # the binary form's bound: the two forms hold the same
            raise self._meta_error(
                f"a signature of {size} bytes as a record, over the limit of "
                f"{sigrec.MAX_RECORD} (a match id that long is not a match's)", number, "damage")
        last = log.FIRST_SEQ + self.count - 1
        if last < log.FIRST_SEQ:
            raise self._meta_error("a signature line before the first event: a signature "
                                        "follows the events it signs", number, "chain")
        if signed.seq != last or signed.head != self._digest:
            moved = self._moved(signed, last)
            raise self._meta_error(moved or (
                f"the signature line after seq {last} signs seq {signed.seq} with a head that "
                f"is not this log's: {sigrec.whose(signed, self.signatures, 'line')}"),
                number, "seq" if moved else "chain")
        if self._refuse_repeats and self.signatures and signed.repeats(self.signatures[-1]):
            raise self._meta_error(
                f"the signature line after seq {last} repeats the one before it (a duplicated "
                "line; the audit's sign.duplicate): a writer records one signature per head, so "
                "this copy was put in the file by something else", number, "seq")
        if self.signatures and signed == self.signatures[-1]:
            signed = self.signatures[-1]  # a copy holds no memory of its own: a file of
            # millions of copies took gigabytes, now 8 bytes each
        self.signatures.append(signed)

    def _moved(self, signed: sigrec.SignedHead, last: int) -> str | None:
        """What a signature line after seq ``last`` is when it signs this log's head at
        another seq (moved or copied from there), else None."""
        what = f"the signature line after seq {last}"
        if signed.seq > last:
            return (f"{what} signs seq {signed.seq}, which comes later (a writer puts "
                    "each signature right after the events it signs): events before it were "
                    f"deleted, or it was moved here from after seq {signed.seq}")
        if signed.seq == last or signed.seq < log.FIRST_SEQ:
            return None
        again = JsonlReader(self.path)  # read again from the start: only on this error's path
        try:
            for event in again:
                if event.seq == signed.seq:
                    break
        except (LogFormatError, OSError):
            return None
        if again.count != signed.seq + 1 or again._digest != signed.head:
            return None
        return (f"{what} signs this log's head at seq {signed.seq}, not the head after seq "
                f"{last}: it was moved or copied here from after seq {signed.seq} (a writer "
                "puts each signature right after the events it signs)")

    def _meta(self, obj: dict[str, Any], number: int) -> None:
        kind = obj["log"]
        allowed = _META_KEYS.get(kind) if isinstance(kind, str) else None
        if allowed is not None and (unknown := sorted(set(obj) - allowed)):
            # as strict as an event line and the binary header: a key no reader knows
            raise self._meta_error(f"unknown key(s) {', '.join(map(repr, unknown))} on the "
                              f"{'first' if kind == 'buraco-log' else 'end'} line", number)
        if kind == "buraco-log" and self._header_line:  # which version would count?
            raise self._meta_error(f"a second first line (the first is line "
                                   f"{self._header_line}): a log has one", number)
        if kind == "buraco-log" and self.count == 0:
            self._header_line = number
            version = obj.get("version", ev.FORMAT_VERSION)
            if type(version) is not int:  # a key given must hold its kind of value (null too)
                raise self._meta_error(f"'version' on the first line must be an integer, not "
                                  f"{_json(version)}", number)
            if not 1 <= version <= ev.FORMAT_VERSION:
                raise self._meta_error(
                    f"JSON Lines of event format version {version}: this buraco_log reads "
                    f"versions 1 to {ev.FORMAT_VERSION}"
                    + (log.NEWER_ADVICE if version > ev.FORMAT_VERSION else ""), number,
                    "version")
            sealed = obj.get("sealed", True)
            if not isinstance(sealed, bool):  # "no" would read as true
                raise self._meta_error(f"'sealed' on the first line must be true or false, not "
                                  f"{_json(sealed)}", number)
            self.version = version
            self.sealed = sealed
        elif kind == "end":
            # a key given must hold its kind of value: "head": null read as no head (the log
            # called unsealed), "events": null as "end line says None events"
            events, head = obj.get("events", 0), obj.get("head", "0" * 64)
            if type(events) is not int or events < 0:
                raise self._meta_error(f"'events' on the end line must be a count, not "
                                  f"{_json(events)}", number)
            if not (isinstance(head, str) and _HEX64.fullmatch(head)):
                raise self._meta_error(f"'head' on the end line must be a head digest (64 hex "
                                  f"digits), not {_json(head)}", number)
            self.end = obj
            self.end_line = number
        else:
            raise self._meta_error(f"unexpected log line {_json(kind)}", number)  # as JSON: null


def _which(number: int) -> str:
    """The first line that is not blank or a comment, named for a person."""
    return "line 1" if number == 1 else (f"line {number} (the first that is not blank or a "
                                         "comment)")


@functools.cache
def _log_keys() -> frozenset[str]:
    """Every key a line of a JSON Lines log may hold: a first line holding none of them (``{}``,
    another program's record) is no log's, where one holding some is a log's, damaged (a first
    line without its ``log``, an event without its ``t``)."""
    import typing

    keys = {"t", *_META_KEYS["buraco-log"], *_META_KEYS["end"], "match_id", "key_id",
            "signature"}
    for cls in typing.get_args(ev.AnyEvent):
        keys.update(cls.__struct_fields__)
    return frozenset(keys)


def _json_kind(value: Any) -> str:
    """What JSON calls the type of a decoded value that is no object."""
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool) or value is None:
        return "literal (true, false or null)"
    return "number"


def _json(value: Any) -> str:
    """``value`` as JSON spells it (``null``, ``true``, ``"2"``), shortened if long."""
    return log.clip(json.dumps(value, ensure_ascii=False), 80)


_META_KEYS: dict[str, frozenset[str]] = {
    "buraco-log": frozenset({"log", "version", "sealed"}),
    "end": frozenset({"log", "events", "head"}),
}


def read_jsonl(path: str | os.PathLike[str]) -> list[ev.AnyEvent]:
    """Every event of a JSON Lines log, checked as :class:`JsonlReader` does."""
    return log.gathered(JsonlReader(path))  # an interrupt frees nothing event by event


def _temp_beside(dst: str) -> str:
    return os.path.join(
        os.path.dirname(os.path.abspath(dst)),
        f".{log.temp_stem(os.path.basename(dst))}.{os.urandom(6).hex()}.tmp",
    )


def _publish(tmp: str, dst: str, fd: int) -> None:
    """Move a finished file (open at ``fd``) into place without ever replacing an existing
    one: the file written, whatever another program put at its temporary name meanwhile."""
    try:
        # a rename that never replaces where there are no hard links
        log.place_new(tmp, dst, fd)
    except FileExistsError:
        raise LogFormatError(
            "refusing to overwrite an existing file", path=dst, kind="exists"
        ) from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    # the new name survives a power loss (and no temporary name does); if that fails, the
    # file is whole and stays: NotDurableError says so (an unlink would need the same fsync)
    log.durable(dst, "written")


def binary_to_jsonl(src: str | os.PathLike[str], dst: str | os.PathLike[str], *,
                    validate: bool = False) -> log.LogInfo:
    """Write the JSON Lines form of a binary log (verified while read; with ``validate``,
    every event checked against the rules too, as :func:`jsonl_to_binary` checks them: an
    illegal one is refused, naming the log and its seq, and nothing is written)."""
    dst = str(dst)
    if os.path.exists(dst):
        raise LogFormatError("refusing to overwrite an existing file", path=dst, kind="exists")
    tmp = _temp_beside(dst)
    held = -1
    try:
        with log.Reader(src, canonical=True) as reader:  # the same head in both forms
            reader.read_header()
            try:
                made = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
                held = os.dup(made)  # put in place through it, never by the name
                with os.fdopen(made, "w", encoding="utf-8") as out:
                    fcntl.flock(out.fileno(), fcntl.LOCK_EX)  # in use: never swept as stale
                    records = _with_signatures(reader)
                    dump(_validated(records, str(src)) if validate else records, out,
                         sealed=reader.sealed, version=reader.version)
                    out.flush()
                    os.fsync(out.fileno())
            except OSError as exc:  # the output's; the reader's own are LogFormatErrors
                raise log.write_error(exc, dst, f"writing the new file failed: "
                                      f"{exc.strerror or exc}") from None
            except LogFormatError as exc:
                if exc.path is not None:
                    raise
                # an event the JSON form cannot hold: name the log and the event
                raise LogFormatError(exc.message, path=str(src), seq=exc.seq,
                                     kind=exc.kind) from None
            info = reader.info
        _publish(tmp, dst, held)
    finally:
        if held >= 0:
            os.close(held)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return info


def _with_signatures(reader: log.Reader) -> Iterator[ev.AnyEvent | sigrec.SignedHead]:
    """A binary log's events, with each signature record after the event it signs."""
    carried = 0
    for _, events in reader.segments():
        while carried < len(reader.signatures) and reader.signatures[carried].seq < events[0].seq:
            yield reader.signatures[carried]
            carried += 1
        yield from events
    yield from reader.signatures[carried:]


def _validated(records: Iterable[ev.AnyEvent | sigrec.SignedHead], path: str
               ) -> Iterator[ev.AnyEvent | sigrec.SignedHead]:
    """``records``, each event first stepped by the rules engine (signatures pass as they
    are); an illegal move names the log ``path``."""
    replayer = log._new_validator(path)
    for record in records:
        if not isinstance(record, sigrec.SignedHead):
            try:
                replayer.step(record)
            except IllegalMoveError as exc:
                raise log.located(exc, path) from None
        yield record


def jsonl_to_binary(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    sealed: bool | None = None,
    validate: bool = False,
) -> log.LogInfo:
    """Write a binary log from JSON Lines. ``sealed`` defaults to what the header line says."""
    dst = str(dst)
    if os.path.exists(dst):
        raise LogFormatError("refusing to overwrite an existing file", path=dst, kind="exists")
    reader = JsonlReader(src, refuse_repeats=True)  # a copy is refused, not dropped unsaid
    events = iter(reader)
    first = next(events, None)  # reads the header line, if any
    keep_sealed = reader.sealed if sealed is None else sealed
    tmp = _temp_beside(dst)
    held = -1
    try:
        with _named(tmp, dst), log.Writer(tmp, sealed=keep_sealed, validate=validate,
                                          batched=True) as writer:
            if first is not None:
                try:
                    writer.append(first)
                    carried = 0  # signature lines, each after the event it signs
                    for event in events:
                        while carried < len(reader.signatures):
                            writer.put_signature(reader.signatures[carried])
                            carried += 1
                        writer.append(event)
                except IllegalMoveError as exc:  # validate: an illegal move, at its line
                    # of the file read (the writer named its temporary copy)
                    raise log.located(exc, str(src), reader.line) from None
                for signed in reader.signatures[carried:]:
                    writer.put_signature(signed)
            # the file written, held (its lock too: never swept as stale), checked and put in
            # place through this descriptor, never again by its name
            assert writer._fd is not None
            held = os.dup(writer._fd)
        with _named(tmp, dst), log.Reader(tmp, allow_torn=True, refuse_repeats=True,
                                          fd=held) as check:
            for _ in check.segments():
                pass
            info = check.info
        _publish(tmp, dst, held)
    finally:
        if isinstance(events, Generator):  # a failed write left the source open until
            events.close()                  # the generator was collected
        if held >= 0:
            os.close(held)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return msgspec.structs.replace(info, path=dst)


@contextlib.contextmanager
def _named(tmp: str, dst: str) -> Iterator[None]:
    """Errors on the temporary file ``tmp`` name ``dst``, the file the user asked for."""
    try:
        yield
    except (LogFormatError, OSError) as exc:
        mapped = log.temp_error(exc, tmp, dst, "writing the new file failed")
        if mapped is None:
            raise
        raise mapped from None


Target = Literal["jsonl", "binary"]


def convert(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    to: Target,
    *,
    validate: bool = False,
) -> log.LogInfo:
    """Convert a log between the binary and JSON Lines forms, losslessly."""
    parent = os.path.dirname(os.path.abspath(dst))
    if not os.path.isdir(parent):  # name the file asked for, not the temporary beside it
        raise LogFormatError(no_directory(os.path.dirname(dst) or "."), path=str(dst),
                             kind="io")
    log.sweep_stale(dst)  # what a killed conversion to the same file left beside it
    try:
        if to == "jsonl":
            return binary_to_jsonl(src, dst, validate=validate)
        return jsonl_to_binary(src, dst, validate=validate)
    except OSError as exc:
        if exc.filename is not None and str(exc.filename) != str(src):
            # the new file's (linking it into place, flushing its directory), never the log's
            raise log.write_error(exc, str(dst), f"writing the new file failed: "
                                  f"{exc.strerror or exc}") from None
        raise log.os_error(exc, str(exc.filename or src)) from None
