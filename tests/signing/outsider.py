"""A verifier of signed logs and receipts written from the documents alone.

A club's referee, or another site, must be able to check a signed log and a player's receipt
without buraco_log: this module is such a check, built from schema/LOG_FORMAT.md,
docs/log-format.md and docs/signing.md with only the standard library and ``cryptography``.
It never imports buraco_log (a test makes sure), so where it and ``buraco-log audit`` disagree,
one of them, or the documents, is wrong.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

# --- schema/LOG_FORMAT.md, "File header", "Segments", "The integrity chain" -----------------

MAGIC = b"BURACOLG"
HEADER = 20
SEALED = 1
CHAIN_DOMAIN = b"buraco-log chain\x00"
# --- "Signature records (format version 2)" -----------------------------------------------
SIGNED_DOMAIN = b"buraco-log signed head\x00v1\x00"
KEY_DOMAIN = b"buraco-log key\x00"
MAX_SIGNATURE_PAYLOAD = 1024


def from_hex(text: str) -> bytes:
    """Hex digits alone, either case (Python's ``bytes.fromhex`` takes spaces too)."""
    if not isinstance(text, str) or len(text) % 2 or text.strip("0123456789abcdefABCDEF"):
        raise ValueError(f"{text!r} is not hexadecimal digits")
    return bytes.fromhex(text)


def key_id_of(public_key: bytes) -> str:
    """The first 16 hex digits of sha256(b"buraco-log key\\x00" + public key)."""
    return hashlib.sha256(KEY_DOMAIN + public_key).hexdigest()[:16]


def message(match_id: str, seq: int, head: bytes) -> bytes:
    mid = match_id.encode("utf-8")
    return (SIGNED_DOMAIN + len(mid).to_bytes(2, "little") + mid + seq.to_bytes(8, "little")
            + head)


# --- MessagePack (the msgpack specification; only the types a log holds) ------------------

def unpack(data: bytes, i: int = 0) -> tuple[Any, int]:
    """One MessagePack value at ``data[i:]`` and the offset after it."""
    b = data[i]
    i += 1

    def n(size: int) -> int:
        return int.from_bytes(data[i:i + size], "big")

    if b <= 0x7F:
        return b, i
    if b >= 0xE0:
        return b - 0x100, i
    if 0x80 <= b <= 0x8F:
        return _map(data, i, b & 0x0F)
    if 0x90 <= b <= 0x9F:
        return _array(data, i, b & 0x0F)
    if 0xA0 <= b <= 0xBF:
        size = b & 0x1F
        return data[i:i + size].decode("utf-8"), i + size
    if b == 0xC0:
        return None, i
    if b in (0xC2, 0xC3):
        return b == 0xC3, i
    if b in (0xC4, 0xC5, 0xC6):
        w = {0xC4: 1, 0xC5: 2, 0xC6: 4}[b]
        size = n(w)
        return bytes(data[i + w:i + w + size]), i + w + size
    if 0xCC <= b <= 0xCF:
        w = 1 << (b - 0xCC)
        return n(w), i + w
    if 0xD0 <= b <= 0xD3:
        w = 1 << (b - 0xD0)
        return int.from_bytes(data[i:i + w], "big", signed=True), i + w
    if b in (0xD9, 0xDA, 0xDB):
        w = {0xD9: 1, 0xDA: 2, 0xDB: 4}[b]
        size = n(w)
        return data[i + w:i + w + size].decode("utf-8"), i + w + size
    if b in (0xDC, 0xDD):
        w = 2 if b == 0xDC else 4
        return _array(data, i + w, n(w))
    if b in (0xDE, 0xDF):
        w = 2 if b == 0xDE else 4
        return _map(data, i + w, n(w))
    raise ValueError(f"msgpack type 0x{b:02x} at byte {i - 1} is in no log")


def _array(data: bytes, i: int, count: int) -> tuple[list[Any], int]:
    out = []
    for _ in range(count):
        v, i = unpack(data, i)
        out.append(v)
    return out, i


def _map(data: bytes, i: int, count: int) -> tuple[dict[Any, Any], int]:
    out = {}
    for _ in range(count):
        k, i = unpack(data, i)
        out[k], i = unpack(data, i)
    return out, i


def array_items(data: bytes) -> list[bytes]:
    """The bytes of each item of the MessagePack array ``data`` (the events of a payload)."""
    b = data[0]
    if 0x90 <= b <= 0x9F:
        count, i = b & 0x0F, 1
    elif b == 0xDC:
        count, i = int.from_bytes(data[1:3], "big"), 3
    elif b == 0xDD:
        count, i = int.from_bytes(data[1:5], "big"), 5
    else:
        raise ValueError("the payload is no MessagePack array")
    items = []
    for _ in range(count):
        _, j = unpack(data, i)
        items.append(data[i:j])
        i = j
    if i != len(data):
        raise ValueError("bytes after the payload's array")
    return items


def pack(v: Any) -> bytes:
    """MessagePack in its shortest form (every integer and string), maps in their order."""
    if v is None:
        return b"\xc0"
    if v is True or v is False:
        return b"\xc3" if v else b"\xc2"
    if isinstance(v, int):
        if 0 <= v <= 0x7F:
            return bytes([v])
        if -32 <= v < 0:
            return bytes([v & 0xFF])
        if v >= 0:
            for code, w in ((0xCC, 1), (0xCD, 2), (0xCE, 4), (0xCF, 8)):
                if v < 1 << (8 * w):
                    return bytes([code]) + v.to_bytes(w, "big")
        for code, w in ((0xD0, 1), (0xD1, 2), (0xD2, 4), (0xD3, 8)):
            if v >= -(1 << (8 * w - 1)):
                return bytes([code]) + v.to_bytes(w, "big", signed=True)
        raise ValueError(f"{v} does not fit 64 bits")
    if isinstance(v, str):
        s = v.encode("utf-8")
        if len(s) < 32:
            return bytes([0xA0 | len(s)]) + s
        for code, w in ((0xD9, 1), (0xDA, 2), (0xDB, 4)):
            if len(s) < 1 << (8 * w):
                return bytes([code]) + len(s).to_bytes(w, "big") + s
    if isinstance(v, (list, tuple)):
        head = (bytes([0x90 | len(v)]) if len(v) < 16 else
                b"\xdc" + len(v).to_bytes(2, "big") if len(v) < 1 << 16 else
                b"\xdd" + len(v).to_bytes(4, "big"))
        return head + b"".join(pack(x) for x in v)
    if isinstance(v, dict):
        head = (bytes([0x80 | len(v)]) if len(v) < 16 else
                b"\xde" + len(v).to_bytes(2, "big") if len(v) < 1 << 16 else
                b"\xdf" + len(v).to_bytes(4, "big"))
        return head + b"".join(pack(k) + pack(x) for k, x in v.items())
    raise TypeError(f"{type(v).__name__} is in no event")


# --- docs/log-format.md, "Writing a log by hand": each event's fields in order -------------

_NONE: Any = object()  # a field with no default
FIELDS: dict[str, list[tuple[str, Any]]] = {
    "ms": [("match_id", _NONE), ("rules", _NONE), ("players", _NONE), ("sides", _NONE),
           ("first_dealer", 0), ("version", 2), ("commitment", None), ("player_seeds", []),
           ("metadata", {}), ("key_id", None)],
    "tc": [("totals", _NONE)],
    "hs": [("hand", _NONE), ("dealer", _NONE), ("hands", _NONE), ("mortos", []),
           ("stock", []), ("upcard", None), ("shuffle", None), ("seed", None)],
    "dr": [("seat", _NONE), ("card", _NONE)],
    "rj": [("seat", _NONE), ("card", _NONE)],
    "pt": [("seat", _NONE), ("count", _NONE), ("top", 0)],  # left out or null: 0
    "ml": [("seat", _NONE), ("cards", _NONE), ("meld", None)],
    "lo": [("seat", _NONE), ("meld", _NONE), ("cards", _NONE)],
    "rt": [("seat", _NONE), ("cards", _NONE)],
    "dc": [("seat", _NONE), ("card", _NONE)],
    "mt": [("seat", _NONE), ("direct", _NONE), ("count", None)],
    "wo": [("seat", _NONE)],
    "he": [("reason", _NONE), ("scores", None)],
    "me": [("totals", None), ("winner", None), ("server_seed", None)],
}
# docs/signing.md, "Verifying without buraco_log": the maps' keys in their order
MAP_ORDER: dict[str, tuple[str, ...]] = {
    "rules": ("name", "player_counts", "jokers", "hand_size", "morto", "morto_size",
              "morto_direct", "morto_needs_canastra", "go_out_needs_canastra",
              "initial_upcard", "pile_pickup", "first_turn_redraw", "ace_both_ends",
              "max_sets_per_rank", "canastra_size", "canastra_from_sets", "semi_clean",
              "royal_canastras", "relancinho", "stock_floor", "target_score", "vulnerability",
              "vulnerable_at", "opening_min", "opening_min_after_retract", "points", "bonuses",
              "rendering", "morto_voided_by"),
    "points": ("joker", "two", "ace", "high", "low"),
    "bonuses": ("clean", "semi_clean", "dirty", "royal", "ace_to_ace", "going_out",
                "relancinho", "morto_not_taken"),
    "player": ("name", "id"),
}
SCHEMA = Path(__file__).resolve().parents[2] / "schema" / "events.schema.json"
_DEFS = {"rules": "Rules", "points": "CardPoints", "bonuses": "Bonuses", "player": "Player"}


@functools.cache
def _schema() -> dict[str, Any]:
    return json.loads(SCHEMA.read_text())  # type: ignore[no-any-return]


def _ordered(kind: str, value: dict[str, Any]) -> dict[str, Any]:
    """A struct's map: every key in its order, a left-out one at the JSON Schema's default
    (``morto_voided_by`` left out stays out)."""
    props = _schema()["$defs"][_DEFS[kind]]["properties"]
    out: dict[str, Any] = {}
    for key in MAP_ORDER[kind]:
        if key in value:
            v = value[key]
        elif key == "morto_voided_by":
            continue
        else:
            v = props[key].get("default")
        out[key] = _ordered(key, v) if key in ("points", "bonuses") else v
    return out


CARD_FIELDS = {"hands", "mortos", "stock", "upcard", "card", "top", "cards"}
SUITS = {"c": 0, "d": 1, "h": 2, "s": 3, "♣": 0, "♦": 1, "♥": 2, "♠": 3}
COLOURS = {"y": 0, "b": 1, "r": 2, "k": 3}
RANKS = {"A": 1, "T": 10, "10": 10, "J": 11, "Q": 12, "K": 13,
         **{str(r): r for r in range(2, 10)}}
JOKER = 64


def card_code(text: Any) -> Any:
    """A card's integer code: suit x 16 + rank."""
    if text is None or isinstance(text, int):
        return text
    if text in ("JK", "🃏"):
        return JOKER
    if text[-1] in COLOURS and text[:-1].isdigit():
        return COLOURS[text[-1]] * 16 + int(text[:-1])
    return SUITS[text[-1]] * 16 + RANKS[text[:-1].upper()]


def _cards(v: Any) -> Any:
    return [_cards(x) for x in v] if isinstance(v, list) else card_code(v)


def event_bytes(line: dict[str, Any], seq: int) -> bytes:
    """The bytes the chain hashes for one JSON Lines event: the array of its tag, its fields in
    order (defaults filled in), then ``seq``, ``at`` and ``note``."""
    items: list[Any] = [line["t"]]
    for name, default in FIELDS[line["t"]]:
        value = line.get(name, default)
        if value is _NONE:
            raise ValueError(f"seq {seq}: field {name!r} is missing")
        if name == "top" and value is None:  # a take of an empty pile names no top card
            value = 0
        if name in CARD_FIELDS:
            value = _cards(value)
        elif name == "rules":
            value = _ordered("rules", value)
        elif name == "players":
            value = [_ordered("player", p) for p in value]
        items.append(value)
    items += [seq, line.get("at"), line.get("note")]
    return pack(items)


# --- docs/signing.md: published keys, revocations, windows ----------------------------------

def _time_ms(text: str) -> int:
    """An ISO 8601 bound in ms since the epoch (a date is midnight UTC; no zone is UTC)."""
    when = dt.datetime.fromisoformat(text)
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return int(when.timestamp() * 1000)


@dataclass
class Key:
    key_id: str
    public_key: bytes
    valid_from: int | None
    valid_until: int | None


@dataclass
class Keys:
    keys: dict[str, Key] = field(default_factory=dict)
    revoked: set[str] = field(default_factory=set)

    @classmethod
    def read(cls, *paths: Path) -> Keys:
        """``.pub`` files, directories of them with a ``revoked`` file, or JSON keyrings."""
        out = cls()
        for path in paths:
            files = (sorted(p for p in path.glob("*.pub") if not p.name.startswith("."))
                     if path.is_dir() else [path])
            for f in files:
                doc = json.loads(f.read_text("utf-8"))
                for k in doc.get("keys", [doc]):
                    out.add(k)
                out.revoked |= {r.lower() for r in doc.get("revoked", [])}
            if path.is_dir() and (path / "revoked").exists():
                for raw in (path / "revoked").read_text("utf-8-sig").splitlines():
                    if raw.split("#", 1)[0].strip():
                        out.revoked.add(raw.split("#", 1)[0].strip().lower())
        return out

    def add(self, k: dict[str, Any]) -> None:
        if k["algorithm"] != "ed25519":
            raise ValueError(f"key {k['key_id']}: not ed25519")
        raw = from_hex(k["public_key"])
        if len(raw) != 32 or key_id_of(raw) != k["key_id"].lower():
            raise ValueError(f"key {k['key_id']}: the key id does not match the public key")
        if weak(raw):
            raise ValueError(f"key {k['key_id']}: no safe Ed25519 key")
        self.keys[k["key_id"].lower()] = Key(
            k["key_id"].lower(), raw,
            None if k.get("valid_from") is None else _time_ms(k["valid_from"]),
            None if k.get("valid_until") is None else _time_ms(k["valid_until"]))

    def why_not(self, key_id: str, sig: bytes, msg: bytes, started: int | None,
                window: bool = True) -> str | None:
        kid = key_id.lower()
        if kid in self.revoked:
            return f"key {kid} is revoked"
        key = self.keys.get(kid)
        if key is None:
            return f"key {kid} is not trusted"
        if window and (key.valid_from is not None or key.valid_until is not None):
            if started is None:
                return f"key {kid} has a window and the start has no time"
            if key.valid_from is not None and started < key.valid_from:
                return f"key {kid}: the match started before its window"
            if key.valid_until is not None and started >= key.valid_until:
                return f"key {kid}: the match started after its window"
        try:
            Ed25519PublicKey.from_public_bytes(key.public_key).verify(sig, msg)
        except (InvalidSignature, ValueError):
            return f"the signature does not verify for key {kid}"
        return None


P = 2**255 - 19
D = -121665 * pow(121666, -1, P) % P


def weak(raw: bytes) -> bool:
    """RFC 8032 5.1.3's decoding refuses it, or [8]A is the identity (small order)."""
    y = int.from_bytes(raw, "little") & ((1 << 255) - 1)
    if y >= P:
        return True
    x2 = (y * y - 1) * pow(D * y * y + 1, -1, P) % P
    x = pow(x2, (P + 3) // 8, P)
    if (x * x - x2) % P:
        x = x * pow(2, (P - 1) // 4, P) % P
    if (x * x - x2) % P or (x == 0 and raw[31] >> 7):
        return True
    for _ in range(3):  # doubling on the twisted Edwards curve -x^2 + y^2 = 1 + d x^2 y^2
        t = D * x * x * y * y % P
        x, y = 2 * x * y * pow(1 + t, -1, P) % P, (y * y + x * x) * pow(1 - t, -1, P) % P
    return x == 0 and y == 1


# --- reading a log ---------------------------------------------------------------------------

@dataclass
class Signed:
    match_id: str
    seq: int
    head: bytes
    key_id: str
    signature: bytes


@dataclass
class Verdict:
    problems: list[str] = field(default_factory=list)
    heads: dict[int, bytes] = field(default_factory=dict)  # the chain after each seq
    signatures: list[Signed] = field(default_factory=list)
    start: list[Any] | None = None  # the MatchStarted array
    ended: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def match_id(self) -> str | None:
        return None if self.start is None else self.start[1]


def _crc(b: bytes) -> int:
    return zlib.crc32(b) & 0xFFFFFFFF


def read_binary(data: bytes) -> Verdict:
    """Framing, checksums, seqs, the chain and the signature records' places (no keys)."""
    v = Verdict()
    if len(data) < HEADER or data[:8] != MAGIC:
        v.problems.append("no log header")
        return v
    layout, version = int.from_bytes(data[8:10], "little"), int.from_bytes(data[10:12], "little")
    flags = int.from_bytes(data[12:16], "little")
    if _crc(data[:16]) != int.from_bytes(data[16:20], "little"):
        v.problems.append("header CRC")
        return v
    if layout != 1 or version != 2 or flags & ~SEALED:
        v.problems.append(f"layout {layout}, version {version}, flags {flags}")
        return v
    sealed = bool(flags & SEALED)
    chain = hashlib.sha256(CHAIN_DOMAIN + version.to_bytes(2, "little"))
    size = 56 if sealed else 24
    off, seq = HEADER, 0
    while off < len(data):
        hdr = data[off:off + size]
        if len(hdr) < size:
            v.problems.append(f"byte {off}: a record header cut short")
            return v
        length, count = int.from_bytes(hdr[0:4], "little"), int.from_bytes(hdr[4:8], "little")
        first = int.from_bytes(hdr[8:16], "little")
        if _crc(hdr[:size - 4]) != int.from_bytes(hdr[size - 4:], "little"):
            v.problems.append(f"byte {off}: record header CRC")
            return v
        payload = data[off + size:off + size + length]
        if len(payload) < length:
            v.problems.append(f"byte {off}: a payload cut short")
            return v
        if _crc(payload) != int.from_bytes(hdr[size - 8:size - 4], "little"):
            v.problems.append(f"byte {off}: payload CRC")
            return v
        if first != seq:
            v.problems.append(f"byte {off}: first_seq {first}, expected {seq}")
            return v
        if count == 0:
            problem = _signature_record(v, payload, seq, chain.digest())
            if problem:
                v.problems.append(f"byte {off}: {problem}")
                return v
        else:
            events = array_items(payload)
            if len(events) != count:
                v.problems.append(f"byte {off}: count {count}, {len(events)} events")
                return v
            for raw in events:
                ev, _ = unpack(raw)
                if ev[-3] != seq:
                    v.problems.append(f"byte {off}: an event's seq {ev[-3]}, expected {seq}")
                    return v
                _take(v, ev)
                chain.update(raw)
                v.heads[seq] = chain.digest()
                seq += 1
        if sealed and hdr[16:48] != chain.digest():
            v.problems.append(f"byte {off}: chain")
            return v
        off += size + length
    return v


def _take(v: Verdict, ev: list[Any]) -> None:
    if ev[0] == "ms" and v.start is None:
        v.start = ev
    if ev[0] == "me":
        v.ended = True


def _signature_record(v: Verdict, payload: bytes, next_seq: int, digest: bytes) -> str | None:
    if len(payload) > MAX_SIGNATURE_PAYLOAD:
        return "signature record over 1024 bytes"
    rec, end = unpack(payload)
    if end != len(payload) or not isinstance(rec, list) or len(rec) != 6 or rec[0] != "sh":
        return "no signature record"
    _, match_id, seq, head, key_id, signature = rec
    if next_seq == 0 or seq != next_seq - 1 or head != digest:
        return f"the signature record of seq {seq} signs no head here"
    v.signatures.append(Signed(match_id, seq, head, key_id, signature))
    return None


def read_jsonl(text: str) -> Verdict:
    v = Verdict()
    version, chain, seq = 2, None, 0
    end_head: str | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        obj = json.loads(raw)
        if chain is None:
            if obj.get("log") == "buraco-log":
                version = obj.get("version", 2)
            chain = hashlib.sha256(CHAIN_DOMAIN + version.to_bytes(2, "little"))
            if obj.get("log") == "buraco-log":
                continue
        if obj.get("log") == "signature":
            try:
                s = Signed(obj["match_id"], obj["seq"], from_hex(obj["head"]), obj["key_id"],
                           from_hex(obj["signature"]))
            except ValueError as exc:
                v.problems.append(f"line {number}: {exc}")
                return v
            if seq == 0 or s.seq != seq - 1 or s.head != chain.digest():
                v.problems.append(f"line {number}: a signature line that signs no head here")
                return v
            v.signatures.append(s)
            continue
        if obj.get("log") == "end":
            end_head = obj.get("head")
            if obj.get("events") is not None and obj["events"] != seq:
                v.problems.append(f"line {number}: the end line counts {obj['events']}")
            continue
        seq = obj.get("seq", seq)
        raw_event = event_bytes(obj, seq)
        ev, _ = unpack(raw_event)
        if seq != len(v.heads):
            v.problems.append(f"line {number}: seq {seq}, expected {len(v.heads)}")
            return v
        _take(v, ev)
        chain.update(raw_event)
        v.heads[seq] = chain.digest()
        seq += 1
    if end_head is not None and chain is not None and from_hex(end_head) != chain.digest():
        v.problems.append("the end line's head is not the events' head")
    return v


def read_log(path: Path) -> Verdict:
    data = path.read_bytes()
    return read_binary(data) if not path.name.endswith(".jsonl") else read_jsonl(data.decode())


# --- the referee's judgement (docs/signing.md, "Verifying", "Receipts") ----------------------

def judge(path: Path, keys: Keys, receipts: tuple[dict[str, Any], ...] = ()) -> Verdict:
    """Read ``path`` and check every signature and receipt against ``keys``."""
    v = read_log(path)
    if v.problems:
        return v
    start = v.start
    started = None if start is None else start[-2]
    recorded = None if start is None else start[10]
    seen: set[int] = set()
    for s in v.signatures:
        if recorded is None or s.key_id.lower() != recorded.lower():
            v.problems.append(f"seq {s.seq}: signed by key {s.key_id}, the start records "
                              f"{recorded}")
        if s.match_id != v.match_id:
            v.problems.append(f"seq {s.seq}: a signature of match {s.match_id!r}")
        if s.seq in seen:
            v.problems.append(f"seq {s.seq}: two signature records")
        seen.add(s.seq)
        why = keys.why_not(s.key_id, s.signature, message(s.match_id, s.seq, s.head), started)
        if why:
            v.problems.append(f"seq {s.seq}: {why}")
    for r in receipts:
        v.problems += receipt_problems(r, v, keys)
    return v


def receipt_problems(r: dict[str, Any], v: Verdict, keys: Keys) -> list[str]:
    allowed = {"match_id", "seq", "head", "key_id", "signature", "seat", "receipt"}
    if set(r) - allowed or r.get("receipt", 1) != 1 or not r.get("key_id"):
        return ["not a receipt"]
    try:
        head, sig = from_hex(r["head"]), from_hex(r["signature"])
    except ValueError:
        return ["not a receipt"]
    why = keys.why_not(r["key_id"], sig, message(r["match_id"], r["seq"], head), None,
                       window=False)
    if why:
        return [f"receipt for seq {r['seq']}: {why}"]
    if r["match_id"] != v.match_id:
        return [f"receipt for seq {r['seq']}: another match"]
    if r["seq"] not in v.heads:
        return [f"receipt for seq {r['seq']}: the log ends before it"]
    if v.heads[r["seq"]] != head:
        return [f"receipt for seq {r['seq']}: the log does not extend it"]
    return []


