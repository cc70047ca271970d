"""Fault probes 41, signing: a signature record repeated in the file, and a signature record
whose frame header is damaged.

Before: a log "edited" by copying a signature record after itself, any number of times, passed
`verify` (exit 0), and `seal` or `convert` to binary dropped the copies unsaid (the result
audited OK, the trace of the edit gone); only `audit` reported it (``sign.duplicate``). A
damaged header of the signature record after seq 10 was named "seq 11" (the next event's seq),
whichever byte of the header was hit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("cryptography")

from buraco_log import log
from buraco_log.errors import LogFormatError
from buraco_log.signing.keys import Signer
from tests.cli.probes import cli, one_error_line
from tests.signing.copied import _copied, _span_after
from tests.signing.helpers import audit, match, ring, rules_of, write_signed

SITE = Signer.generate()


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 30 events of a match, signed after each (sealed)."""
    path = tmp_path_factory.mktemp("signed41") / "m.blog"
    write_signed(path, match(key_id=SITE.key_id)[:30], SITE)
    return path


@pytest.mark.parametrize("times", [1, 3])
def test_verify_refuses_a_signature_record_repeated_naming_its_byte_and_rule(
        signed: Path, tmp_path: Path, times: int) -> None:
    bad, at = _copied(signed, tmp_path / "dup.blog", 10, times)
    with pytest.raises(LogFormatError) as caught:
        log.verify(bad)
    assert (caught.value.offset, caught.value.seq, caught.value.kind) == (at, None, "seq")
    line = one_error_line(cli("verify", bad), 1)
    assert line.startswith(f"buraco-log: error: {bad}, byte {at}: the signature record after "
                           "seq 10 repeats the one before it (a duplicated record; the audit's "
                           "sign.duplicate)"), line
    assert log.verify(signed).signatures == 30  # the log as written passes


def test_the_audit_still_reads_on_and_reports_the_copies(signed: Path, tmp_path: Path
                                                         ) -> None:
    bad, _ = _copied(signed, tmp_path / "dup.blog", 10, 2)
    v = audit(bad, ring(SITE))
    assert rules_of(v) == ["sign.duplicate"] and v.findings[0].seq == 10


def test_seal_and_convert_refuse_the_copy_and_write_nothing(signed: Path, tmp_path: Path
                                                            ) -> None:
    bad, at = _copied(signed, tmp_path / "dup.blog", 20, 1)
    before = bad.read_bytes()
    line = one_error_line(cli("seal", bad), 1)
    assert f"{bad}, byte {at}: the signature record after seq 20 repeats" in line, line
    assert bad.read_bytes() == before
    out = tmp_path / "out.jsonl"
    line = one_error_line(cli("convert", bad, "-o", out), 1)
    assert f"byte {at}:" in line and "sign.duplicate" in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dup.blog"]  # no output, no temporary


def test_a_json_lines_signature_line_repeated_is_refused_by_verify_and_convert(
        signed: Path, tmp_path: Path) -> None:
    good = tmp_path / "m.jsonl"
    assert cli("convert", signed, "-o", good).returncode == 0
    lines = good.read_bytes().splitlines(keepends=True)
    at = [i for i, line in enumerate(lines) if line.startswith(b'{"log": "signature"')][5]
    bad = tmp_path / "dup.jsonl"
    bad.write_bytes(b"".join([*lines[:at + 1], lines[at], *lines[at + 1:]]))
    line = one_error_line(cli("verify", bad), 1)
    assert line.startswith(f"buraco-log: error: {bad}, line {at + 2}: the signature line after "
                           "seq 5 repeats the one before it (a duplicated line; the audit's "
                           "sign.duplicate)"), line
    back = tmp_path / "back.blog"
    assert "sign.duplicate" in one_error_line(cli("convert", bad, "-o", back), 1)
    assert not back.exists()
    assert rules_of(audit(bad, ring(SITE))) == ["sign.duplicate"]  # the audit reads on


def test_two_signatures_of_one_head_by_different_keys_stay_an_audit_finding(
        tmp_path: Path) -> None:
    # not a copy: another key's record at the same head is the audit's to judge
    # (sign.duplicate, sign.key_mismatch); the reader takes both, as before
    other = Signer.generate()
    path = tmp_path / "two.blog"
    events = match(key_id=SITE.key_id)[:12]
    with log.Writer(path, signer=SITE) as w:
        for event in events:
            w.append(event)
            if event.seq == 5:
                w.put_signature(other.sign_head(events[0].match_id, 5, bytes.fromhex(w.head)))
    assert log.verify(path).signatures == 13
    assert "sign.duplicate" in rules_of(audit(path, ring(SITE, other)))


@pytest.mark.parametrize(("at", "field"), [(2, "length"), (5, "count"), (9, "first seq"),
                                           (20, "chain"), (49, "payload CRC"),
                                           (53, "header CRC")])
def test_a_damaged_signature_record_header_is_named_as_that_record(
        signed: Path, tmp_path: Path, at: int, field: str) -> None:
    data = bytearray(signed.read_bytes())
    off, _ = _span_after(bytes(data), 10)
    data[off + at] ^= 0x10
    bad = tmp_path / "bad.blog"
    bad.write_bytes(data)
    with pytest.raises(LogFormatError) as caught:
        log.verify(bad)
    assert (caught.value.offset, caught.value.seq) == (off, None), field
    assert caught.value.message.startswith("the signature record after seq 10: segment header "
                                           "checksum mismatch"), (field, caught.value.message)


def test_a_damaged_event_header_after_a_signature_still_names_its_seq(
        signed: Path, tmp_path: Path) -> None:
    data = bytearray(signed.read_bytes())
    _, end = _span_after(bytes(data), 10)  # seq 11's record starts here
    data[end + 2] ^= 0x10
    bad = tmp_path / "bad.blog"
    bad.write_bytes(data)
    with pytest.raises(LogFormatError) as caught:
        log.verify(bad)
    assert (caught.value.offset, caught.value.seq) == (end, 11)
    assert caught.value.message == "segment header checksum mismatch (damaged record)"


def test_a_header_too_damaged_to_tell_says_so_and_names_no_seq(
        signed: Path, tmp_path: Path) -> None:
    # the payload CRC and the first seq both hit: neither the payload nor the header says
    # what the record is
    data = bytearray(signed.read_bytes())
    off, _ = _span_after(bytes(data), 10)
    data[off + 9] ^= 0x10
    data[off + 49] ^= 0x10
    bad = tmp_path / "bad.blog"
    bad.write_bytes(data)
    with pytest.raises(LogFormatError) as caught:
        log.verify(bad)
    assert (caught.value.offset, caught.value.seq) == (off, None)
    assert caught.value.message.startswith("the record after seq 10: segment header checksum "
                                           "mismatch") and "seq 11 on or a signature" in (
        caught.value.message)


def test_zero_bytes_inside_a_signed_log_name_the_record_after_the_last_seq(
        signed: Path, tmp_path: Path) -> None:
    # the place after seq 10 may hold seq 11 or a signature record: neither is claimed
    data = bytearray(signed.read_bytes())
    off, end = _span_after(bytes(data), 10)
    data[off:end] = bytes(end - off)
    bad = tmp_path / "gap.blog"
    bad.write_bytes(data)
    with pytest.raises(LogFormatError) as caught:
        log.verify(bad)
    assert (caught.value.offset, caught.value.seq, caught.value.kind) == (off, None, "damage")
    assert caught.value.message.startswith(
        f"zero bytes (NUL) where the record after seq 10 should start, and data again at byte "
        f"{end}:"), caught.value.message


def test_a_copy_whose_key_id_is_in_capitals_is_still_a_copy(signed: Path, tmp_path: Path
                                                             ) -> None:
    # capitals are the same key id (docs/signing.md): the copy was let through as another
    # record, and `convert` to binary wrote it
    good = tmp_path / "m.jsonl"
    assert cli("convert", signed, "-o", good).returncode == 0
    lines = good.read_bytes().splitlines(keepends=True)
    at = [i for i, line in enumerate(lines) if line.startswith(b'{"log": "signature"')][3]
    shouted = lines[at].replace(SITE.key_id.encode(), SITE.key_id.upper().encode())
    assert shouted != lines[at]
    bad = tmp_path / "dup.jsonl"
    bad.write_bytes(b"".join([*lines[:at + 1], shouted, *lines[at + 1:]]))
    line = one_error_line(cli("verify", bad), 1)
    assert f"{bad}, line {at + 2}: the signature line after seq 3 repeats" in line, line
