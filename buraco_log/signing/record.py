"""What a signature covers and how it is stored: pure data, no cryptography.

A signed head says "the site's key ``key_id`` vouches that match ``match_id``, up to and
including the event of seq ``seq``, has the head digest ``head``". The log's reader, the
writer's hook and the auditor all need this without the ``signing`` extra, so it lives apart
from the Ed25519 code (``buraco_log.signing.keys``).
"""

from __future__ import annotations

import hashlib
import re
from typing import Final

import msgspec

from buraco_log.safetext import quoted

DOMAIN: Final = b"buraco-log signed head\x00v1\x00"
"""Domain tag at the start of every signed message: a signature over a match log's head can
never be taken for a signature over anything else the same key signs."""

SIGNATURE_SIZE: Final = 64  # Ed25519
DIGEST_SIZE: Final = 32  # SHA-256, the chain's hash
RECEIPT_FORMAT: Final = 1
"""The receipt JSON's format version (its ``receipt`` field)."""
MAX_RECORD: Final = 1024
"""Largest signature record payload a reader accepts (a real one is about 130 bytes)."""


class SignedHead(msgspec.Struct, frozen=True, array_like=True, forbid_unknown_fields=True,
                 tag="sh", tag_field="t"):
    """A signature record, as stored in a log (format version 2) and as a receipt's core."""

    match_id: str
    seq: int  # the last event covered
    head: bytes  # the chain's digest after event ``seq`` (32 bytes)
    key_id: str
    signature: bytes  # Ed25519 over ``message(match_id, seq, head)`` (64 bytes)

    def message(self) -> bytes:
        """The exact bytes the signature covers (:func:`message`)."""
        return message(self.match_id, self.seq, self.head)

    def repeats(self, other: SignedHead) -> bool:
        """Whether this record is a copy of ``other``: the same signature of the same head by
        the same key (a key id's capitals are the same id, as in a `revoked` file)."""
        return (self.match_id, self.seq, self.head, self.key_id.lower(), self.signature) == (
            other.match_id, other.seq, other.head, other.key_id.lower(), other.signature)


class Receipt(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What a game server hands a player after their move: a signed head, as JSON.

    ``seat`` says who was given it (not signed: it only names the holder in audit messages).
    """

    match_id: str
    seq: int
    head: str  # hex
    key_id: str
    signature: str  # hex
    seat: int | None = None
    receipt: int = RECEIPT_FORMAT  # the receipt format's version

    @classmethod
    def of(cls, signed: SignedHead, seat: int | None = None) -> Receipt:
        """The receipt of ``signed`` (``Writer.receipt()``) for the player at ``seat``."""
        return cls(signed.match_id, signed.seq, signed.head.hex(), signed.key_id,
                   signed.signature.hex(), seat)

    def signed_head(self) -> SignedHead:
        """The signed head inside; ``ValueError`` if a hex field is not hex of the right size."""
        if not (all(isinstance(x, str) for x in (self.match_id, self.head, self.key_id,
                                                  self.signature)) and type(self.seq) is int):
            # built from a JSON Lines signature line, untyped: say what is wrong, not
            # "'<=' not supported between instances of 'int' and 'str'"
            raise ValueError("match_id, head, key_id and signature must be text and seq an "
                             "integer")
        if self.receipt != RECEIPT_FORMAT:  # a newer format may mean something else
            raise ValueError(f"receipt format {self.receipt}: this buraco_log reads receipt "
                             f"format {RECEIPT_FORMAT}")
        try:
            head, sig = from_hex(self.head), from_hex(self.signature)
        except ValueError:  # "non-hexadecimal number found in fromhex() arg at position 3"
            raise ValueError("head and signature must be hexadecimal") from None
        if len(head) != DIGEST_SIZE or len(sig) != SIGNATURE_SIZE:
            raise ValueError("head or signature has the wrong length")
        if not 0 <= self.seq < 1 << 63:
            raise ValueError(f"seq {self.seq} is out of range")
        if self.seat is not None and not 0 <= self.seat < 64:  # it names the holder in findings
            raise ValueError(f"seat {self.seat} is no seat (seats count from 0)")
        return SignedHead(self.match_id, self.seq, head, self.key_id, sig)


_HEX: Final = re.compile(r"(?:[0-9a-fA-F]{2})*")


def from_hex(text: str) -> bytes:
    """The bytes of hex digits alone (``bytes.fromhex`` also takes spaces between them, which
    the format does not: a verifier that reads the format as written refuses them)."""
    if _HEX.fullmatch(text) is None:
        raise ValueError("not hexadecimal digits alone")
    return bytes.fromhex(text)


def message(match_id: str, seq: int, head: bytes) -> bytes:
    """The exact bytes a site signs: domain tag, match id (length-prefixed), seq, head digest.

    Every part has a fixed size or a length prefix, so no two different (match, seq, head)
    triples give the same message.
    """
    mid = match_id.encode("utf-8")
    if len(mid) > 0xFFFF or len(head) != DIGEST_SIZE or not 0 <= seq < 1 << 64:
        raise ValueError("match id longer than 65535 bytes, seq out of range, or bad digest")
    return DOMAIN + len(mid).to_bytes(2, "little") + mid + seq.to_bytes(8, "little") + head


def whose(signed: SignedHead, before: list[SignedHead], unit: str) -> str:
    """Why a signature ``unit`` ("record", "line") signs no head of its log, as far as the
    signatures read ``before`` it tell: one of another match (replayed from another log), or
    the events or the record changed."""
    if before and signed.match_id != before[0].match_id:
        theirs, ours = quoted(signed.match_id, before[0].match_id)
        return (f"it signs match {theirs}, the signatures before it match {ours}: replayed "
                "from another match's log")
    return f"the events or the {unit} were changed"


def key_id_of(public_key: bytes) -> str:
    """A key's id: 16 hex digits of SHA-256 over a domain tag and the raw 32-byte public key."""
    return hashlib.sha256(b"buraco-log key\x00" + public_key).hexdigest()[:16]


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(SignedHead)


def encode(record: SignedHead) -> bytes:
    """A signature record's payload, as the log stores it (MessagePack)."""
    return _encoder.encode(record)


def decode(payload: bytes) -> SignedHead:
    """Typed decode of a record payload (``msgspec.MsgspecError`` if it is not one)."""
    return _decoder.decode(payload)


def receipt_json(receipt: Receipt) -> bytes:
    """The receipt as the JSON file a player keeps (indented, one object, a final newline)."""
    return msgspec.json.format(msgspec.json.encode(receipt), indent=2) + b"\n"


__all__ = ["DOMAIN", "Receipt", "SignedHead", "decode", "encode", "from_hex", "key_id_of",
           "message", "receipt_json", "whose"]
