"""A reader of match logs written from the documentation alone (schema/LOG_FORMAT.md,
docs/log-format.md and schema/events.schema.json), as a site that does not run buraco_log
would write one. It imports nothing of buraco_log: the tests read every log with it and with
buraco_log's reader and ask both to agree, on the events and on where damage is.

Events come out as plain lists in the current version's layout (tag, fields, seq, at, note),
cards as integer codes."""

from __future__ import annotations

import hashlib
import json
import re
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "schema" / "events.schema.json"
GUIDE = ROOT / "docs" / "log-format.md"

MAGIC = b"BURACOLG"
FILE_HEADER = 20
MAX_PAYLOAD = 16 * 1024 * 1024
SECTOR = 512
CURRENT_VERSION = 2
CHAIN_DOMAIN = b"buraco-log chain\x00"


@dataclass
class Problem:
    kind: str  # torn, damage, seq, chain, header, version, limit, decode
    offset: int | None
    seq: int | None
    why: str


@dataclass
class Result:
    events: list[list[Any]] = field(default_factory=list)
    signatures: list[list[Any]] = field(default_factory=list)
    version: int | None = None
    sealed: bool | None = None
    head: str | None = None
    problem: Problem | None = None


def _arity() -> dict[str, tuple[int, int]]:
    """Each tag's (minItems, maxItems) from the JSON Schema: the binary layout of its events."""
    defs = json.loads(SCHEMA.read_text())["$defs"]
    out = {}
    for d in defs.values():
        items = d.get("prefixItems")
        if d.get("type") == "array" and items and "enum" in items[0]:
            out[items[0]["enum"][0]] = (d["minItems"], d["maxItems"])
    return out


ARITY = _arity()
DEFS = json.loads(SCHEMA.read_text())["$defs"]
EVENT_DEFS = {d["prefixItems"][0]["enum"][0]: d for d in DEFS.values()
              if d.get("type") == "array" and d.get("prefixItems")
              and "enum" in d["prefixItems"][0]}
INT64 = range(-(2**63), 2**63)


class Invalid(Exception):
    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind  # unknown (a wrong type or value) or range (an integer past int64)


def check(value: Any, schema: dict[str, Any]) -> None:
    """`value` against the JSON Schema `schema` (the subset events.schema.json uses). Every
    integer is a signed 64-bit one (LOG_FORMAT.md, "Integers")."""
    if "$ref" in schema:
        return check(value, DEFS[schema["$ref"].rsplit("/", 1)[1]])
    if "anyOf" in schema:
        errors = []
        for option in schema["anyOf"]:
            try:
                return check(value, option)
            except Invalid as exc:
                errors.append(exc.kind)
        raise Invalid("range" if "range" in errors else "unknown")
    if "enum" in schema and value not in schema["enum"]:
        raise Invalid("unknown")
    kind = schema.get("type")
    ok = {"integer": isinstance(value, int) and not isinstance(value, bool),
          "string": isinstance(value, str), "boolean": isinstance(value, bool),
          "null": value is None, "array": isinstance(value, list),
          "object": isinstance(value, dict), None: True}[kind]
    if not ok:
        raise Invalid("unknown")
    if kind == "integer" and value not in INT64:
        raise Invalid("range")
    if kind == "array":
        prefix = schema.get("prefixItems", [])
        if not schema.get("minItems", 0) <= len(value) <= schema.get("maxItems", len(value)):
            raise Invalid("unknown")
        for i, item in enumerate(value):
            check(item, prefix[i] if i < len(prefix) else schema.get("items", {}))
    if kind == "object":
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        if [k for k in schema.get("required", []) if k not in value]:
            raise Invalid("unknown")
        for key, item in value.items():
            if key in props:
                check(item, props[key])
            elif extra is False:
                raise Invalid("unknown")
            elif isinstance(extra, dict):
                check(item, extra)
    return None


def _fields() -> dict[str, list[tuple[str, Any]]]:
    """Each tag's field names in order, with defaults, from docs/log-format.md's table
    ("Writing a log by hand"), then the envelope. A field without a default is `REQUIRED`."""
    table: dict[str, list[tuple[str, Any]]] = {}
    row = re.compile(r"^\| `(\w+)` \| \w+ \| (.*) \|$")
    for line in GUIDE.read_text().splitlines():
        m = row.match(line)
        if not m:
            continue
        names = []
        for part in re.findall(r"`(\w+)`(?: = ([^,\s]+))?", m.group(2)):
            name, default = part
            names.append((name, json.loads(default) if default else REQUIRED))
        table[m.group(1)] = [*names, ("seq", REQUIRED), ("at", None), ("note", None)]
    return table


REQUIRED = object()
FIELDS = _fields()
SPEC = ROOT / "schema" / "LOG_FORMAT.md"


def _key_order() -> dict[str, list[str]]:
    """The key order of the maps inside events (LOG_FORMAT.md): the head digest depends on it."""
    text = SPEC.read_text()
    part = text[text.index("Three fields hold MessagePack maps"):]
    part = part[:part.index("`metadata` (`ms`) keeps")]
    order = {}
    for item in re.split(r"\n- ", part)[1:]:
        name, keys = item.split(":", 1)
        order[re.findall(r"`(\w+)`", name)[0]] = re.findall(r"`(\w+)`", keys)
    return order


KEY_ORDER = _key_order()


def _rules_defaults() -> dict[str, Any]:
    defs = json.loads(SCHEMA.read_text())["$defs"]
    return {name: {k: v.get("default") for k, v in defs[name]["properties"].items()}
            for name in ("Rules", "CardPoints", "Bonuses")}


DEFAULTS = _rules_defaults()


def _ordered(value: dict[str, Any], keys: list[str], defaults: dict[str, Any]) -> dict[str, Any]:
    """`value`'s keys in `keys`' order; one left out takes its default (the schema's), or is
    left out when it has none."""
    return {k: value.get(k, defaults.get(k)) for k in keys
            if k in value or defaults.get(k) is not None or k not in defaults}


def _canonical_start(record: list[Any]) -> list[Any]:
    """A match start as the binary form holds it: its maps in the doc's key order."""
    record = list(record)
    rules = dict(record[2])
    rules["points"] = _ordered(rules.get("points", {}), KEY_ORDER["points"],
                               DEFAULTS["CardPoints"])
    rules["bonuses"] = _ordered(rules.get("bonuses", {}), KEY_ORDER["bonuses"],
                                DEFAULTS["Bonuses"])
    record[2] = _ordered(rules, KEY_ORDER["rules"], DEFAULTS["Rules"])
    record[3] = [_ordered(p, KEY_ORDER["players"], {}) for p in record[3]]
    return record

# Cards (docs/log-format.md): a rank A 2 .. K and a suit c d h s, code suit * 16 + rank.
RANKS = {r: i for i, r in enumerate("A23456789TJQK", start=1)} | {"10": 10}
SUITS = {s: i for i, s in enumerate("cdhs")} | {s: i for i, s in enumerate("♣♦♥♠")}
COLOURS = {s: i for i, s in enumerate("ybrk")}
JOKER = 64
CARD_FIELDS = {"hands", "mortos", "stock", "upcard", "card", "top", "cards"}


def card_code(text: Any) -> int:
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    if text in ("JK", "🃏"):
        return JOKER
    if text[-1] in COLOURS:  # a Burako tile: 1..13 and a colour
        return COLOURS[text[-1]] * 16 + int(text[:-1])
    return SUITS[text[-1]] * 16 + RANKS[text[:-1].upper()]


def _cards(value: Any) -> Any:
    if isinstance(value, list):
        return [_cards(v) for v in value]
    return None if value is None else card_code(value)


V1_KEY_ID = 10  # MatchStarted.key_id: after the tag and the 9 fields version 1 has


def upcast(record: list[Any], version: int) -> list[Any]:
    """Version 1 -> 2 (LOG_FORMAT.md): MatchStarted gains key_id (null) before the envelope."""
    if version == 1 and record[0] == "ms":
        return [*record[:V1_KEY_ID], None, *record[V1_KEY_ID:]]
    return record


def whole(record: list[Any]) -> list[Any]:
    """An event with any trailing `at`, `note` left out written as null."""
    return [*record, *[None] * (len(FIELDS[record[0]]) + 1 - len(record))]


def seq_of(record: list[Any]) -> Any:
    return record[len(FIELDS[record[0]]) - 2]  # tag, fields, then seq, at, note


def _u(data: bytes, fmt: str, at: int) -> tuple[Any, ...]:
    return struct.unpack_from("<" + fmt, data, at)


def _array_header(count: int) -> bytes:
    if count < 16:
        return bytes([0x90 | count])
    if count < 1 << 16:
        return b"\xdc" + struct.pack(">H", count)
    return b"\xdd" + struct.pack(">I", count)


def _lost_sectors(data: bytes, start: int, end: int, room: int) -> bool:
    """The payload data[start:end] that fails its CRC lost sectors in the crash's last write:
    it is followed by at most `room` bytes (a signed log's signature record, written with it)
    or by zero bytes only to the end of the file (records after it lost whole), and a whole
    512-byte sector (aligned in the file) starting in it is zero, or everything from its last
    sector boundary to the end of what was written is (at least 8 bytes)."""
    if len(data) - end > room:
        if any(data[end:]):
            return False
        written = end + SECTOR  # the records after it: as if one zero sector
    else:
        written = len(data)
    view = data[:end] + bytes(written - end) if written > len(data) else data
    first = -(-start // SECTOR) * SECTOR
    if any(not any(view[s:s + SECTOR]) for s in range(first, min(end, written - SECTOR + 1),
                                                          SECTOR)):
        return True
    last = first + max(0, written - first) // SECTOR * SECTOR
    return first <= last < end and last <= written - 8 and not any(view[last:written])


def read_binary(data: bytes) -> Result:
    out = Result()
    short = len(data) < FILE_HEADER and data[:8] == MAGIC[:len(data)]
    if short or (len(data) <= FILE_HEADER and not any(data)):
        out.problem = Problem("torn", 0, 0, "file header cut short, or zero bytes only")
        return out
    if len(data) < FILE_HEADER or data[:8] != MAGIC:
        out.problem = Problem("header", 0, None, "no magic")
        return out
    layout, version, flags, crc = _u(data, "HHII", 8)
    if zlib.crc32(data[:16]) != crc:
        out.problem = Problem("damage", 0, None, "header CRC")
        return out
    if layout != 1 or not 1 <= version <= CURRENT_VERSION or flags & ~1:
        out.problem = Problem("version", 0, None, "newer layout, version or flag")
        return out
    out.version, out.sealed = version, bool(flags & 1)
    hlen = 24 + (32 if out.sealed else 0)
    chain = hashlib.sha256(CHAIN_DOMAIN + struct.pack("<H", version))
    seq, off, size = 0, FILE_HEADER, len(data)
    last_head: bytes | None = None  # chain digest after the last event

    def stop(kind: str, why: str, signature: bool = False) -> Result:
        # An error of a signature record, or of a record that may be one, names no seq.
        out.problem = Problem(kind, off, None if signature else seq, why)
        out.head = chain.hexdigest()
        return out

    def is_signature(payload: bytes) -> bool:
        try:
            sig = msgspec.msgpack.decode(payload)
        except msgspec.DecodeError:
            return False
        return isinstance(sig, list) and len(sig) == 6 and sig[0] == "sh"

    while off < size:
        # A signed log (a signature record read, or a start naming its key) may hold a
        # signature record after any event.
        signed = bool(out.signatures or (out.events and out.events[0][0] == "ms"
                                         and out.events[0][-4] is not None)) and seq > 0
        if not any(data[off:]):
            return stop("torn", "zero to the end")
        if size - off < hlen:
            return stop("torn", "header cut short")
        length, count, first_seq = _u(data, "IIQ", off)
        stored_chain = data[off + 16:off + 16 + 32] if out.sealed else None
        pcrc, hcrc = _u(data, "II", off + hlen - 8)
        if zlib.crc32(data[off:off + hlen - 4]) != hcrc:
            if not any(data[off:off + hlen]):
                return stop("damage", "zero bytes, then data again", signed)
            boundary = -(-off // SECTOR) * SECTOR
            if off < boundary <= off + hlen - 8 and not any(data[boundary:]):
                return stop("torn", "header zero from a sector boundary to the end")
            if not signed:
                return stop("damage", "segment header CRC")
            # what the record is comes from its payload, when whole and of the header's CRC
            body = data[off + hlen:off + hlen + length]
            if length <= MAX_PAYLOAD and len(body) == length and zlib.crc32(body) == pcrc:
                return stop("damage", "segment header CRC", is_signature(body))
            return stop("damage", "segment header CRC", not (first_seq == seq and count))
        signature = count == 0 and version >= 2
        if length > MAX_PAYLOAD:
            return stop("limit", "payload over 16 MiB", signature)
        if signature and not out.events:
            return stop("damage", "a signature record before the first event", True)
        if signature and length > 1024:
            return stop("damage", "signature over 1024 bytes", True)
        if not signature and not 1 <= count <= length:
            return stop("damage", "count")
        if first_seq != seq:
            return stop("seq", f"first_seq {first_seq}", signature)
        start, end = off + hlen, off + hlen + length
        if end > size:
            return stop("torn", "payload cut short", signature)
        payload = data[start:end]
        if zlib.crc32(payload) != pcrc:
            room = hlen + 1024 if version >= 2 and not signature else 0
            if _lost_sectors(data, start, end, room):
                return stop("torn", "last record partly zeroed", signature)
            return stop("damage", "payload CRC", signature)
        if signature:
            try:
                sig = msgspec.msgpack.decode(payload)
            except msgspec.DecodeError:
                return stop("damage", "signature does not decode", True)
            ok = (isinstance(sig, list) and len(sig) == 6 and sig[0] == "sh"
                  and sig[2] == seq - 1 and sig[3] == last_head
                  and (stored_chain is None or stored_chain == last_head))
            if not ok:
                return stop("chain", "signature record out of place", True)
            out.signatures.append(sig)
            off = end
            continue
        if not payload.startswith(_array_header(count)):
            return stop("decode", "array header")
        try:
            raws = msgspec.msgpack.decode(payload, type=list[msgspec.Raw])
        except msgspec.DecodeError:
            return stop("decode", "not MessagePack")
        if len(raws) != count:
            return stop("decode", "count")
        records = []
        for raw in raws:
            chain.update(bytes(raw))
            records.append(upcast(msgspec.msgpack.decode(raw), version))
        if stored_chain is not None and stored_chain != chain.digest():
            return stop("chain", "chain")
        for i, rec in enumerate(records):
            # an event that fails is named by its own place's seq, not its record's first
            if not (isinstance(rec, list) and rec and rec[0] in EVENT_DEFS):
                seq += i
                return stop("unknown", f"record {rec!r:.40}")
            try:
                check(rec, EVENT_DEFS[rec[0]])
            except Invalid as exc:
                seq += i
                return stop(exc.kind, f"event {rec[0]}")
        for i, rec in enumerate(records):
            if seq_of(rec) != seq + i:
                seq += i
                return stop("seq", "event seq")
        out.events.extend(whole(rec) for rec in records)
        last_head = chain.digest()
        seq += count
        off = end
    out.head = chain.hexdigest()
    return out


def encode(record: list[Any], version: int) -> bytes:
    """An event's bytes in a log of `version`, what the chain of a JSON Lines log is over."""
    if record[0] == "ms":
        record = _canonical_start(record)
        if version == 1:
            del record[V1_KEY_ID]
    return msgspec.msgpack.encode(record)


def read_jsonl(text: str) -> Result:
    """JSON Lines (docs/log-format.md, LOG_FORMAT.md "JSON Lines"): events by name, cards as
    text; the head digest is over each event's MessagePack bytes in its binary layout. A
    problem's `offset` is its line number here."""
    out = Result(version=CURRENT_VERSION)
    first: dict[str, Any] | None = None
    end: dict[str, Any] | None = None
    end_line = 0
    seq = 0
    lines = text.split("\n")
    for number, line in enumerate(lines, start=1):
        line = line.removesuffix("\r")
        if not line.strip() or line.startswith("#"):
            continue

        def stop(kind: str, why: str, at: int | None = seq, line: int = number) -> Result:
            out.problem = Problem(kind, line, at, why)
            return out

        try:
            obj = json.loads(line)
        except ValueError:
            if number == len(lines) and line.startswith("{"):  # no line end: cut short
                return stop("torn", "the last line is cut short")
            return stop("jsonl", "not a JSON line")
        if obj.get("log") == "buraco-log":
            first = obj
            out.version = obj.get("version", CURRENT_VERSION)
            continue
        if obj.get("log") == "end":
            end, end_line = obj, number
            continue
        if obj.get("log") == "signature":
            out.signatures.append(obj)
            continue
        names = FIELDS[obj["t"]]
        record: list[Any] = [obj["t"]]
        for name, default in names:
            if name == "seq":
                value = obj.get("seq", seq)
            elif name in obj:
                value = obj[name]
            elif default is REQUIRED:
                return stop("jsonl", f"no {name}")
            else:
                value = default
            if name in CARD_FIELDS:
                value = _cards(value)
            record.append(value)
        if record[0] == "ms" and out.version == 1:
            record[-4] = None  # the key_id a version 1 start does not hold
        if seq_of(record) != seq:
            return stop("seq", "event seq")
        out.events.append(record)
        seq = seq_of(record) + 1
    version = out.version or CURRENT_VERSION
    chain = hashlib.sha256(CHAIN_DOMAIN + struct.pack("<H", version))
    for record in out.events:
        chain.update(encode(record, version))
    out.head = chain.hexdigest()
    out.sealed = bool(end and "head" in end) and (first or {}).get("sealed", True) is not False
    if end and "head" in end and end["head"].lower() != out.head:
        out.problem = Problem("chain", end_line, None, "end line head")
    return out


def records(data: bytes) -> list[tuple[int, int, int, int]]:
    """(offset, header size, payload length, count) of each whole record of an intact log."""
    sealed = _u(data, "I", 12)[0] & 1
    hlen = 24 + (32 if sealed else 0)
    out, off = [], FILE_HEADER
    while off + hlen <= len(data):
        length, count, _ = _u(data, "IIQ", off)
        out.append((off, hlen, length, count))
        off += hlen + length
    return out


def reframe(data: bytearray, off: int) -> None:
    """Recompute the CRCs of the record at `off` after its payload was edited in place."""
    hlen = 24 + (32 if _u(data, "I", 12)[0] & 1 else 0)
    length = _u(data, "I", off)[0]
    payload = bytes(data[off + hlen:off + hlen + length])
    struct.pack_into("<I", data, off + hlen - 8, zlib.crc32(payload))
    struct.pack_into("<I", data, off + hlen - 4, zlib.crc32(bytes(data[off:off + hlen - 4])))
