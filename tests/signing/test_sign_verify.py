"""Sign, then verify: the writer's signature records, their JSON Lines form, seal and convert
keeping them, the key files, and the checks that accept and refuse."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import msgspec
import pytest

pytest.importorskip("cryptography")

from buraco_log import jsonl, log
from buraco_log.errors import LogFormatError
from buraco_log.events import MatchEnded
from buraco_log.signing import keys
from buraco_log.signing.record import DOMAIN, message
from tests.signing.helpers import audit, match, ring, rules_of, write_signed

SIGNER = keys.Signer.generate()


def test_a_log_signed_at_every_segment_verifies_against_the_trusted_key(tmp_path: Path) -> None:
    events = match(key_id=SIGNER.key_id)
    path = tmp_path / "m.blog"
    write_signed(path, events, SIGNER)
    info = log.verify(path)
    assert info.events == len(events) and info.signatures == len(events)  # one per append
    v = audit(path, ring(SIGNER), required=True)
    assert v.ok, v.findings
    assert v.signing.verified is True and v.signing.last_signed_seq == events[-1].seq
    assert log.read_events(path) == events  # signature records are no events


def test_signing_only_at_the_end_writes_one_record_after_match_ended(tmp_path: Path) -> None:
    events = match(key_id=SIGNER.key_id)
    path = tmp_path / "m.blog"
    write_signed(path, events, SIGNER, sign_at="end", batch=64)
    with log.Reader(path) as r:
        read = list(r)
        sigs = r.signatures
    assert [s.seq for s in sigs] == [events[-1].seq] and isinstance(read[-1], MatchEnded)
    assert audit(path, ring(SIGNER), required=True).ok


def test_an_unsealed_signed_log_verifies_and_seal_keeps_its_signatures(tmp_path: Path) -> None:
    events = match(key_id=SIGNER.key_id)
    path = tmp_path / "m.blog"
    write_signed(path, events, SIGNER, batch=50, sealed=False)
    before = log.verify(path)
    assert not before.sealed and before.signatures > 1
    assert audit(path, ring(SIGNER), required=True).ok
    after = log.seal(path)
    assert after.sealed and after.head == before.head and after.signatures == before.signatures
    assert audit(path, ring(SIGNER), required=True).ok


def test_convert_to_json_lines_and_back_keeps_every_signature(tmp_path: Path) -> None:
    events = match(key_id=SIGNER.key_id)
    path = tmp_path / "m.blog"
    write_signed(path, events, SIGNER, batch=40)
    want = log.verify(path)
    jsonl.convert(path, tmp_path / "m.jsonl", "jsonl")
    text = (tmp_path / "m.jsonl").read_text()
    assert text.count('"log": "signature"') == want.signatures
    assert audit(tmp_path / "m.jsonl", ring(SIGNER), required=True).ok
    back = jsonl.convert(tmp_path / "m.jsonl", tmp_path / "back.blog", "binary")
    assert (back.head, back.signatures) == (want.head, want.signatures)
    assert audit(tmp_path / "back.blog", ring(SIGNER), required=True).ok


def test_a_json_lines_signature_line_moved_or_edited_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    write_signed(path, match(key_id=SIGNER.key_id), SIGNER, batch=40)
    jsonl.convert(path, tmp_path / "m.jsonl", "jsonl")
    lines = (tmp_path / "m.jsonl").read_text().splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if '"log": "signature"' in line)
    moved = [*lines[:first - 1], lines[first], lines[first - 1], *lines[first + 1:]]
    (tmp_path / "moved.jsonl").write_text("".join(moved))
    with pytest.raises(LogFormatError) as exc:
        jsonl.read_jsonl(tmp_path / "moved.jsonl")
    # it signs the next event's head: named as moved from there (rule log.seq), no seq of its own
    assert exc.value.kind == "seq" and exc.value.seq is None
    signed_seq = json.loads(lines[first])["seq"]
    assert (f"the signature line after seq {signed_seq - 1} signs seq {signed_seq}, which comes "
            "later") in exc.value.message
    assert f"moved here from after seq {signed_seq}" in exc.value.message
    edited = [*lines[:first], lines[first].replace('"seq": ', '"seq": 1'), *lines[first + 1:]]
    (tmp_path / "edited.jsonl").write_text("".join(edited))
    with pytest.raises(LogFormatError):
        jsonl.read_jsonl(tmp_path / "edited.jsonl")


def test_a_signing_writer_refuses_a_start_without_its_key_id(tmp_path: Path) -> None:
    with pytest.raises(LogFormatError) as exc, log.Writer(tmp_path / "m.blog",
                                                          signer=SIGNER) as w:
        w.append(match(key_id=None)[0])
    assert exc.value.kind == "sign" and SIGNER.key_id in str(exc.value)
    other = keys.Signer.generate()
    with pytest.raises(LogFormatError), log.Writer(tmp_path / "n.blog", signer=other) as w:
        w.append(match(key_id=SIGNER.key_id)[0])


def test_a_resumed_writer_signs_on_and_refuses_another_key(tmp_path: Path) -> None:
    events = match(key_id=SIGNER.key_id)
    path = tmp_path / "m.blog"
    write_signed(path, events[:30], SIGNER)
    with pytest.raises(LogFormatError) as exc, log.Writer(
            path, signer=keys.Signer.generate()) as w:
        w.append(events[30])
    assert exc.value.kind == "sign"
    write_signed(path, events[30:], SIGNER)
    assert audit(path, ring(SIGNER), required=True).ok


def test_the_signed_message_binds_domain_match_seq_and_head() -> None:
    head = bytes(32)
    m = message("m1", 7, head)
    assert m.startswith(DOMAIN)
    assert len({m, message("m2", 7, head), message("m1", 8, head),
                message("m1", 7, b"\x01" * 32), message("m17", 7, head)}) == 5
    with pytest.raises(ValueError):
        message("m1", -1, head)
    with pytest.raises(ValueError):
        message("m1", 1, b"short")


def test_the_key_pair_files_private_0600_and_a_passphrase(tmp_path: Path) -> None:
    files = keys.write_key_pair(tmp_path, "site", passphrase=b"pw")
    assert stat.S_IMODE(os.stat(files.private).st_mode) == 0o600
    assert keys.load_signer(files.private, b"pw").key_id == files.key_id
    with pytest.raises(keys.SigningError, match="passphrase"):
        keys.load_signer(files.private, b"wrong")
    with pytest.raises(keys.SigningError, match="encrypted"):
        keys.load_signer(files.private)
    with pytest.raises(keys.SigningError, match="already exists"):
        keys.write_key_pair(tmp_path, "site")
    plain = keys.write_key_pair(tmp_path, "plain")
    assert "ENCRYPTED" not in Path(plain.private).read_text()
    assert keys.load_keyring([tmp_path]).keys.keys() == {files.key_id, plain.key_id}


def test_the_private_key_is_0600_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        files = keys.write_key_pair(tmp_path, "site")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(files.private).st_mode) == 0o600


def test_a_public_key_file_whose_id_does_not_match_its_key_is_refused(tmp_path: Path) -> None:
    pub = SIGNER.public()
    bad = msgspec.structs.replace(pub, key_id="0" * 16)
    (tmp_path / "bad.pub").write_bytes(msgspec.json.encode(bad))
    with pytest.raises(keys.SigningError, match="does not match"):
        keys.load_keyring([tmp_path / "bad.pub"])
    (tmp_path / "junk.pub").write_text("{")
    with pytest.raises(keys.SigningError, match=r"junk\.pub"):
        keys.load_keyring([tmp_path / "junk.pub"])


def test_signatures_without_trusted_keys_are_noted_not_verified(tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    write_signed(path, match(key_id=SIGNER.key_id), SIGNER, batch=64)
    v = audit(path)
    assert v.ok and v.signing.verified is None
    assert any("not verified" in n for n in v.notes)


def test_an_unsigned_log_is_a_finding_only_when_signatures_are_required(tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    log.write_log(path, match())
    assert audit(path, ring(SIGNER)).ok
    v = audit(path, ring(SIGNER), required=True)
    assert rules_of(v) == ["sign.unsigned"]


def _append_record(path: Path, payload: bytes, first_seq: int, chain: bytes | None) -> None:
    with open(path, "ab") as f:
        f.write(log._segment(payload, 0, first_seq, chain))


def test_signature_records_out_of_place_oversized_or_in_a_v1_log_are_refused(
        tmp_path: Path) -> None:
    from buraco_log.signing import record

    events = match(key_id=SIGNER.key_id)[:5]
    path = tmp_path / "m.blog"
    write_signed(path, events, SIGNER, sealed=False)
    good = log.verify(path)
    signed = SIGNER.sign_head(events[0].match_id, 4, bytes.fromhex(good.head))
    cases = {
        "stale": (record.encode(SIGNER.sign_head(events[0].match_id, 3, bytes(32))), 5),
        "first_seq": (record.encode(signed), 4),
        "oversized": (b"\x90" * (record.MAX_RECORD + 1), 5),
        "not a record": (b"\x93\x01\x02\x03", 5),
    }
    for name, (payload, first_seq) in cases.items():
        bad = tmp_path / f"{name}.blog"
        bad.write_bytes(path.read_bytes())
        _append_record(bad, payload, first_seq, None)
        with pytest.raises(LogFormatError) as exc:
            log.verify(bad)
        assert exc.value.kind in ("chain", "damage", "decode"), name
        assert exc.value.seq is None and "the signature record after seq 4" in str(exc.value)
    fine = tmp_path / "fine.blog"
    fine.write_bytes(path.read_bytes())
    _append_record(fine, record.encode(signed), 5, None)  # a well-placed extra one reads
    with log.Reader(fine) as reader:
        assert sum(1 for _ in reader) == 5 and reader.info.signatures == good.signatures + 1
    with pytest.raises(LogFormatError) as exc:  # but it repeats the close()'s: verify says so
        log.verify(fine)
    assert "sign.duplicate" in exc.value.message and exc.value.kind == "seq"
    # The same bytes under a version 1 header: a count of 0 is damage there, as it always was.
    v1 = bytearray(fine.read_bytes())
    v1[10:12] = (1).to_bytes(2, "little")
    v1[16:20] = __import__("zlib").crc32(bytes(v1[:16])).to_bytes(4, "little")
    (tmp_path / "v1.blog").write_bytes(bytes(v1))
    with pytest.raises(LogFormatError):
        log.verify(tmp_path / "v1.blog")
