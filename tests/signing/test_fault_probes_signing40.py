"""Fault probes 40, signing: signature records moved, copied or damaged in the file, published
keys of the wrong size or of small order, and other files given as receipts.

Before: the record signed after seq 10 put after seq 20 was "a head that is not this log's"
(JSON Lines; a binary record re-framed for its new place) or "signature record of 165 bytes at
seq 11 is out of place" (its frame kept); it is this log's head at seq 10, moved. A damaged
signature record after seq 30 was named "seq 31" (the event after it). A published key of 31 or
33 bytes was "the key id does not match the public key"; one of small order (it verifies a
forgery over any message) was trusted. A log, a published key or a JSON Lines signature line
given as `--receipt` was "JSON is malformed" or "unknown field".
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

pytest.importorskip("cryptography")

from cryptography.hazmat.primitives.asymmetric import ed25519

from buraco_log import jsonl, log
from buraco_log.audit import SigningOptions, audit_log
from buraco_log.errors import LogFormatError
from buraco_log.events import MatchStarted
from buraco_log.signing import record as sigrec
from buraco_log.signing.check import HeldReceipt
from buraco_log.signing.keys import Keyring, PublicKey, Signer, SigningError, load_keyring
from tests.cli.probes import cli, one_error_line
from tests.signing.helpers import held, match, ring, write_signed

SITE = Signer.generate()
SMALL_ORDER = bytes.fromhex("01" + "00" * 31)  # the identity point: order 1


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A match signed after every event (one record per event, a signature after each)."""
    path = tmp_path_factory.mktemp("signed40") / "m.blog"
    write_signed(path, match(key_id=SITE.key_id), SITE)
    return path


def _records(data: bytes) -> list[tuple[int, int, int, int]]:
    """``(offset, size, count, first_seq)`` of each record of a sealed log."""
    out, off = [], log.HEADER_SIZE
    size = log._SEG_HEAD.size + 32 + log._SEG_TAIL.size
    while off < len(data):
        length, count, first = log._SEG_HEAD.unpack_from(data, off)
        out.append((off, size + length, count, first))
        off += size + length
    return out


def _signature_after(data: bytes, seq: int) -> tuple[int, int]:
    return next((off, size) for off, size, count, first in _records(data)
                if count == 0 and first == seq + 1)


def _reframed(data: bytes, seq: int, place: int) -> bytes:
    """The record signed after ``seq``, framed as the one after ``place`` (CRCs made good)."""
    off, size = _signature_after(data, seq)
    to, _ = _signature_after(data, place)
    payload = data[off + 56:off + size]  # past the sealed frame's 56 bytes
    return log._segment(payload, 0, place + 1, data[to + 16:to + 48])


def test_a_record_moved_with_its_frame_is_named_as_moved_from_its_seq(
        signed: Path, tmp_path: Path) -> None:
    data = signed.read_bytes()
    o10, s10 = _signature_after(data, 10)
    o20, s20 = _signature_after(data, 20)
    moved = tmp_path / "moved.blog"
    moved.write_bytes(data[:o10] + data[o10 + s10:o20 + s20] + data[o10:o10 + s10]
                      + data[o20 + s20:])
    line = one_error_line(cli("verify", moved), 1)
    at = o20 + s20 - s10  # where the moved record now starts
    assert line == (f"buraco-log: error: {moved}, byte {at}: the signature record after seq 20 "
                    "signs this log's head at seq 10, not the head after seq 20: it was moved "
                    "or copied here from after seq 10 (a writer puts each signature right after "
                    "the events it signs) [log.seq]")
    v = audit_log(moved)
    assert (v.integrity.kind, v.integrity.seq, v.integrity.offset) == ("seq", None, at)


def test_a_copy_framed_for_its_new_place_is_named_as_moved_too(
        signed: Path, tmp_path: Path) -> None:
    data = signed.read_bytes()
    o20, s20 = _signature_after(data, 20)
    copied = tmp_path / "copied.blog"
    copied.write_bytes(data[:o20] + _reframed(data, 10, 20) + data[o20 + s20:])
    with pytest.raises(LogFormatError) as exc:
        log.verify(copied)
    assert exc.value.kind == "seq" and exc.value.offset == o20 and exc.value.seq is None
    assert "signs this log's head at seq 10, not the head after seq 20" in exc.value.message


def test_a_record_from_further_on_says_so_without_claiming_a_head(
        signed: Path, tmp_path: Path) -> None:
    data = signed.read_bytes()
    o20, s20 = _signature_after(data, 20)
    early = tmp_path / "early.blog"
    early.write_bytes(data[:o20] + _reframed(data, 30, 20) + data[o20 + s20:])
    with pytest.raises(LogFormatError) as exc:
        log.verify(early)
    assert exc.value.kind == "seq"
    assert exc.value.message.startswith("the signature record after seq 20 signs seq 30, which "
                                        "comes later")


def test_a_record_whose_head_is_no_head_of_this_log_stays_a_chain_break(
        signed: Path, tmp_path: Path) -> None:
    data = signed.read_bytes()
    o20, s20 = _signature_after(data, 20)
    start = match(key_id=SITE.key_id)[0]
    assert isinstance(start, MatchStarted)
    alien = SITE.sign_head(start.match_id, 10, bytes(32))  # seq 10, a head the log never had
    frame = log._segment(sigrec.encode(alien), 0, 21, data[o20 + 16:o20 + 48])
    bad = tmp_path / "alien.blog"
    bad.write_bytes(data[:o20] + frame + data[o20 + s20:])
    with pytest.raises(LogFormatError) as exc:
        log.verify(bad)
    assert exc.value.kind == "chain" and exc.value.seq is None
    assert exc.value.message.startswith("the signature record after seq 20 signs seq 10 with a "
                                        "head that is not this log's")


def test_a_damaged_record_is_named_after_the_seq_it_follows_not_the_next(
        signed: Path, tmp_path: Path) -> None:
    data = bytearray(signed.read_bytes())
    o30, s30 = _signature_after(bytes(data), 30)
    data[o30 + s30 - 3] ^= 0xFF  # in its payload: the payload checksum fails
    bad = tmp_path / "damaged.blog"
    bad.write_bytes(bytes(data))
    line = one_error_line(cli("verify", bad), 1)
    assert line == (f"buraco-log: error: {bad}, byte {o30}: the signature record after seq 30: "
                    "checksum mismatch (damaged record) [log.damage]")
    assert "seq 31" not in line
    # nor does audit count it among the events' records ("BROKEN at record 31", seq 31's)
    v = audit_log(bad)
    assert (v.integrity.record, v.integrity.seq, v.integrity.offset) == (None, None, o30)
    assert v.findings[0].message == (f"broken at byte {o30}: the signature record after seq 30: "
                                     "checksum mismatch (damaged record)")


def test_a_json_lines_signature_line_moved_is_named_as_moved(
        signed: Path, tmp_path: Path) -> None:
    jsonl.convert(signed, tmp_path / "m.jsonl", "jsonl")
    lines = (tmp_path / "m.jsonl").read_text().splitlines(keepends=True)

    def at(seq: int) -> int:
        return next(i for i, line in enumerate(lines)
                    if line.startswith('{"log": "signature"') and json.loads(line)["seq"] == seq)

    i10, i20 = at(10), at(20)
    moved = tmp_path / "moved.jsonl"
    moved.write_text("".join([*lines[:i10], *lines[i10 + 1:i20 + 1], lines[i10],
                              *lines[i20 + 1:]]))
    line = one_error_line(cli("verify", moved), 1)
    assert line == (f"buraco-log: error: {moved}, line {i20 + 1}: the signature line after seq 20 "
                    "signs this log's head at seq 10, not the head after seq 20: it was moved or "
                    "copied here from after seq 10 (a writer puts each signature right after the "
                    "events it signs) [log.seq]")


# -- published keys -------------------------------------------------------------------------------


def _pub(raw: bytes, key_id: str | None = None) -> PublicKey:
    return PublicKey(key_id or sigrec.key_id_of(raw), raw.hex())


@pytest.mark.parametrize("size", [31, 33])
def test_a_key_of_the_wrong_size_says_its_size(size: int) -> None:
    raw = (SITE.public_key * 2)[:size]
    with pytest.raises(SigningError) as exc:
        Keyring([_pub(raw, SITE.key_id)])
    assert f"the public key is {size} bytes; an Ed25519 public key is 32" in str(exc.value)


def test_a_small_order_key_is_refused_for_it_verifies_forgeries(tmp_path: Path) -> None:
    # the premise: such a key verifies a signature nobody made (R the identity, S zero)
    forged = SMALL_ORDER + bytes(32)
    ed25519.Ed25519PublicKey.from_public_bytes(SMALL_ORDER).verify(forged, b"any head at all")
    with pytest.raises(SigningError) as exc:
        Keyring([_pub(SMALL_ORDER)])
    assert "a point of small order (a weak key)" in str(exc.value)
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / "weak.pub").write_bytes(msgspec.json.encode(_pub(SMALL_ORDER)))
    line = one_error_line(cli("audit", tmp_path, "--keys", keys), 2)
    assert line.startswith(f"buraco-log: error: {keys / 'weak.pub'}: key "
                           f"{sigrec.key_id_of(SMALL_ORDER)}: the public key is a point of small "
                           "order"), line


def test_keys_made_by_keys_new_are_never_refused_as_weak() -> None:
    assert Keyring([Signer.generate().public() for _ in range(50)]).keys


def test_an_openssh_public_key_is_named_as_such(tmp_path: Path) -> None:
    (tmp_path / "id.pub").write_text("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA== me@host\n")
    with pytest.raises(SigningError) as exc:
        load_keyring([tmp_path / "id.pub"])
    assert "an OpenSSH public key, not a buraco-log published key" in str(exc.value)


# -- receipts -------------------------------------------------------------------------------------


def test_a_receipt_of_another_match_that_does_not_verify_says_both(signed: Path) -> None:
    other = msgspec.structs.replace(SITE.sign_head("m-other", 5, bytes(32)),
                                    signature=bytes(64))
    v = audit_log(signed, signing=_opts([held(other)]))
    f = next(f for f in v.findings if f.rule == "sign.receipt_other_match")
    assert "is for match 'm-other', not this log's" in f.message
    assert "; nor is it a valid signature of the site: " in f.message
    genuine = SITE.sign_head("m-other", 5, bytes(32))
    g = next(f for f in audit_log(signed, signing=_opts([held(genuine)])).findings
             if f.rule == "sign.receipt_other_match")
    assert "nor is it" not in g.message


def _opts(receipts: list[HeldReceipt]) -> SigningOptions:
    # one log audited: every receipt applies to it, as `audit LOG --receipt R` does
    return SigningOptions(ring(SITE), tuple(receipts), False, by_match=False)


@pytest.mark.parametrize(("what", "said"), [
    ("log", "a binary match log, not a receipt"),
    ("jsonl", "a JSON Lines match log, not a receipt"),
    ("line", "a signature line of a JSON Lines log (a receipt once its \"log\" field is "
             "removed), not a receipt"),
    ("key", "a published key (NAME.pub), not a receipt"),
    ("seat", "not a buraco-log receipt: seat -5 is no seat (seats count from 0)"),
])
def test_another_file_given_as_a_receipt_is_named(signed: Path, tmp_path: Path, what: str,
                                                  said: str) -> None:
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / "site.pub").write_bytes(msgspec.json.encode(SITE.public()))
    jsonl.convert(signed, tmp_path / "m.jsonl", "jsonl")
    given = {
        "log": signed, "jsonl": tmp_path / "m.jsonl", "key": keys / "site.pub",
        "line": tmp_path / "line.json", "seat": tmp_path / "seat.json",
    }[what]
    sig_line = (tmp_path / "m.jsonl").read_text().splitlines()[2]
    (tmp_path / "line.json").write_text(sig_line)
    receipt = {k: v for k, v in json.loads(sig_line).items() if k != "log"}
    (tmp_path / "seat.json").write_text(json.dumps({**receipt, "seat": -5}))
    line = one_error_line(cli("audit", signed, "--keys", keys, "--receipt", given), 2)
    assert line.startswith(f"buraco-log: error: {given}: {said}"), line


def test_a_signature_before_the_first_event_names_no_seq(signed: Path, tmp_path: Path) -> None:
    data = signed.read_bytes()
    o0, s0 = _signature_after(data, 0)
    first = tmp_path / "first.blog"  # the header, then the record signed after seq 0
    first.write_bytes(data[:log.HEADER_SIZE] + data[o0:o0 + s0])
    with pytest.raises(LogFormatError) as exc:
        log.verify(first)
    assert exc.value.seq is None and exc.value.offset == log.HEADER_SIZE
    assert "before the first event" in str(exc.value) and "seq 0" not in str(exc.value)
    jsonl.convert(signed, tmp_path / "m.jsonl", "jsonl")
    lines = (tmp_path / "m.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "first.jsonl").write_text("".join([lines[0], lines[2], *lines[1:2]]))
    with pytest.raises(LogFormatError) as exc:
        jsonl.read_jsonl(tmp_path / "first.jsonl")
    assert exc.value.seq is None and exc.value.line == 2


def test_a_record_replayed_from_another_matchs_log_names_that_match(
        signed: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.blog"  # the same site's key, another match
    write_signed(other, match(seed="other", key_id=SITE.key_id), SITE)
    data, theirs = signed.read_bytes(), other.read_bytes()
    o20, s20 = _signature_after(data, 20)
    t20, u20 = _signature_after(theirs, 20)
    frame = log._segment(theirs[t20 + 56:t20 + u20], 0, 21, data[o20 + 16:o20 + 48])
    bad = tmp_path / "replayed.blog"
    bad.write_bytes(data[:o20] + frame + data[o20 + s20:])
    with pytest.raises(LogFormatError) as exc:
        log.verify(bad)
    start = match(seed="other", key_id=SITE.key_id)[0]
    assert isinstance(start, MatchStarted)
    assert exc.value.kind == "chain"
    assert (f"it signs match {start.match_id!r}, the signatures before it match ") in str(
        exc.value)
    assert str(exc.value).endswith("replayed from another match's log")


def test_a_receipt_holds_against_its_log_extended_and_not_against_it_cut(
        tmp_path: Path) -> None:
    events = match(key_id=SITE.key_id)
    early = tmp_path / "early.blog"  # the log as it stood when seat 1 was handed the receipt
    receipt = write_signed(early, events[:60], SITE, receipts_at=[50])[50]
    extended = tmp_path / "extended.blog"
    write_signed(extended, events, SITE)
    opts = _opts([held(receipt)])
    assert audit_log(extended, signing=opts).ok
    cut = tmp_path / "cut.blog"
    write_signed(cut, events[:31], SITE)
    v = audit_log(cut, signing=opts)
    f = next(f for f in v.findings if f.rule == "sign.receipt_cut")
    assert f.seq == 50 and "the log ends at seq 30 (it was cut, or is a copy" in f.message


def test_a_receipt_or_a_key_given_as_the_log_is_named(signed: Path, tmp_path: Path) -> None:
    receipt = tmp_path / "seat1.json"
    receipt.write_bytes(sigrec.receipt_json(sigrec.Receipt.of(
        sigrec.decode(_payload_after(signed.read_bytes(), 5)), 1)))
    key = tmp_path / "site.pub"
    key.write_bytes(msgspec.json.encode(SITE.public()))
    line = one_error_line(cli("verify", receipt), 2)
    assert line.endswith("not a buraco-log file (bad magic); it looks like a player's receipt, "
                         "which `audit LOG --receipt` takes [log.header]"), line
    with pytest.raises(LogFormatError) as exc:
        log.verify(key)
    assert str(exc.value).endswith("it looks like a published key (NAME.pub), which `audit "
                                   "--keys` takes")


def _payload_after(data: bytes, seq: int) -> bytes:
    off, size = _signature_after(data, seq)
    return data[off + 56:off + size]
