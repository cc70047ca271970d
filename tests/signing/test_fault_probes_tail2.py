"""A signed log whose last events no signature covers, audited without requiring signatures.

Anyone holding the file can strip the signature records after some seq (or cut the log at a
signed head) and write events after it with the chain recomputed: no key is needed. The audit
said OK, "verified", with only the last signed seq in the signing line to tell. An OK verdict
says what it does not prove, in a note: here that the events after the last signature are
signed by nothing. Requiring signatures makes it the finding ``sign.tail_unsigned`` instead.
"""

from __future__ import annotations

import struct
from pathlib import Path

import msgspec
import pytest

pytest.importorskip("cryptography")

from buraco_log.signing.keys import Signer
from tests.signing.helpers import audit, match, ring, rules_of, write_signed

SITE = Signer.generate()
HEADER = 20  # file header (schema/LOG_FORMAT.md)
SEG_HEAD = struct.Struct("<IIQ")  # payload length, event count (0: a signature), first seq


def _strip_signatures_after(src: Path, dst: Path, seq: int) -> None:
    """Copy ``src`` without the signature records that sign heads after ``seq``: what a keeper
    without the key can do (records are whole; the chain is untouched)."""
    data = src.read_bytes()
    head = 16 + 32 + 8  # a sealed log's record header: lengths, chain digest, two CRCs
    out, off = [data[:HEADER]], HEADER
    while off < len(data):
        length, count, first = SEG_HEAD.unpack_from(data, off)
        end = off + head + length
        if count or first - 1 <= seq:  # a signature record names the seq after the one it signs
            out.append(data[off:end])
        off = end
    dst.write_bytes(b"".join(out))


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tail") / "m.blog"
    write_signed(path, match(key_id=SITE.key_id), SITE)
    return path


def _tail_notes(notes: tuple[str, ...]) -> list[str]:
    return [n for n in notes if "signed by no signature" in n or "holds no signature" in n]


def test_a_log_signed_to_its_end_has_no_such_note(signed: Path, tmp_path: Path) -> None:
    v = audit(signed, ring(SITE))
    assert v.ok and not _tail_notes(v.notes)
    end_only = tmp_path / "end.blog"
    write_signed(end_only, match(key_id=SITE.key_id), SITE, sign_at="end")
    v = audit(end_only, ring(SITE))
    assert v.ok and v.signing.signatures == 1 and not _tail_notes(v.notes)


def test_stripped_signatures_leave_a_note_naming_the_unsigned_events(
        signed: Path, tmp_path: Path) -> None:
    stripped = tmp_path / "stripped.blog"
    _strip_signatures_after(signed, stripped, 199)
    last = match()[-1].seq
    v = audit(stripped, ring(SITE))
    assert v.ok and v.signing.verified is True and v.signing.last_signed_seq == 199
    assert _tail_notes(v.notes) == [
        f"signing: events 200 to {last} are signed by no signature (the last signs seq 199): "
        "nothing shows the site wrote them (requiring signatures makes this a finding: "
        "--require-signatures, or BURACO_LOG_REQUIRE_SIGNATURES=1)"]
    # without keys too: the signatures are not verified, and the tail is not even signed
    assert _tail_notes(audit(stripped).notes)
    required = audit(stripped, ring(SITE), required=True)
    assert rules_of(required) == ["sign.tail_unsigned"] and not _tail_notes(required.notes)
    assert required.findings[0].seq == 200


def test_one_unsigned_event_is_named_alone(signed: Path, tmp_path: Path) -> None:
    last = match()[-1].seq
    stripped = tmp_path / "one.blog"
    _strip_signatures_after(signed, stripped, last - 1)
    notes = _tail_notes(audit(stripped, ring(SITE)).notes)
    assert len(notes) == 1 and notes[0].startswith(
        f"signing: event {last} is signed by no signature (the last signs seq {last - 1}): "
        "nothing shows the site wrote it")


def test_an_unsigned_log_gets_no_tail_note(tmp_path: Path) -> None:
    from buraco_log import log

    plain = tmp_path / "plain.blog"
    log.write_log(plain, match())
    assert audit(plain).ok and not _tail_notes(audit(plain).notes)
    # audited with keys, no tail note, but the one that the keys checked nothing (a keeper
    # can strip the start's key id with the signatures: test_fault_probes_signing58.py)
    v = audit(plain, ring(SITE))
    assert v.ok and [n.split(":")[1] for n in _tail_notes(v.notes)] == [
        " the log holds no signature and its match start records no signing key (a signed "
        "log's start names its key)"]


def test_a_log_whose_start_records_a_key_but_holds_no_signature_says_so(
        signed: Path, tmp_path: Path) -> None:
    stripped = tmp_path / "none.blog"
    _strip_signatures_after(signed, stripped, -1)  # every signature record gone
    v = audit(stripped, ring(SITE))
    assert v.ok and v.signing.signatures == 0
    assert _tail_notes(v.notes) == [
        f"signing: the match start records key {SITE.key_id} but the log holds no signature: "
        "nothing shows the site wrote any of it (requiring signatures makes this a finding: "
        "--require-signatures, or BURACO_LOG_REQUIRE_SIGNATURES=1)"]
    required = audit(stripped, ring(SITE), required=True)
    assert rules_of(required) == ["sign.unsigned"] and not _tail_notes(required.notes)


def test_a_batch_summary_counts_the_logs_with_unsigned_events(
        signed: Path, tmp_path: Path) -> None:
    """`audit DIR -q` shows only logs with findings: a log whose signatures were stripped is
    OK, so its note was never seen; the summary line counts such logs."""
    from typer.testing import CliRunner

    from cli.main import app

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "whole.blog").write_bytes(signed.read_bytes())
    _strip_signatures_after(signed, logs / "tail.blog", 199)
    _strip_signatures_after(signed, logs / "none.blog", -1)
    keys = tmp_path / "site.pub"
    keys.write_bytes(msgspec.json.encode(SITE.public()))
    result = CliRunner().invoke(app, ["audit", str(logs), "-q", "--keys", str(keys)])
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "audited 3 logs: 3 clean (2 with events no signature covers: see their notes), "
        "0 with findings; 2 logs of a match an earlier log holds too (see their notes)"]
    # (the three are copies of one match: probe 43 counts the later two)
