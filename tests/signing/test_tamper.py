"""What a site that holds the file can try, and what catches it: single-bit changes, a
re-chained forgery, a stripped signature, commitment or end, a cut log, another key."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

pytest.importorskip("cryptography")

from buraco_log import log
from buraco_log.audit import read_log_signed
from buraco_log.events import MatchEnded
from buraco_log.signing import check, keys
from buraco_log.signing import record as sigrec
from buraco_log.signing.record import Receipt, receipt_json
from tests.signing.helpers import (
    audit,
    held,
    match,
    ring,
    rules_of,
    write_signed,
)

SIGNER = keys.Signer.generate()
FORGER = keys.Signer.generate()
REPO = Path(__file__).resolve().parents[2]


def _caught(path: Path, keyring: keys.Keyring) -> bool:
    """The reader refuses the bytes, or the signatures do not hold for the recorded key."""
    events, integrity, signed = read_log_signed(path)
    if integrity.status not in ("sealed", "unsealed"):
        return True
    _, problems = check.check(events, signed.signatures, version=signed.version,
                              keyring=keyring, required=True)
    return bool(problems)


def _signature_bytes(data: bytes, path: Path) -> set[int]:
    """Offsets of the bytes of the last signature record (with its frame header)."""
    out: set[int] = set()
    for s in read_log_signed(path)[2].signatures[-1:]:
        payload = sigrec.encode(s)
        at = data.find(payload)
        out.update(range(max(0, at - 64), at + len(payload)))
    return out


@pytest.mark.parametrize("sealed", [True, False], ids=["sealed", "unsealed"])
def test_single_bit_changes_of_a_signed_log_are_caught(tmp_path: Path, sealed: bool) -> None:
    """Every bit of the last signature record and of every 8th byte elsewhere (the slow
    test below flips every bit of every byte)."""
    _sweep(tmp_path, sealed, stride=8)


@pytest.mark.slow
@pytest.mark.parametrize("sealed", [True, False], ids=["sealed", "unsealed"])
def test_every_single_bit_change_of_a_signed_log_is_caught(tmp_path: Path, sealed: bool) -> None:
    _sweep(tmp_path, sealed, stride=1)


def _sweep(tmp_path: Path, sealed: bool, stride: int) -> None:
    events = [*match(key_id=SIGNER.key_id)[:6], match(key_id=SIGNER.key_id)[-1]]
    events[-1] = msgspec.structs.replace(events[-1], seq=6)  # a short log that still ends
    src = tmp_path / "src.blog"
    with log.Writer(src, signer=SIGNER, sealed=sealed, validate=False) as w:
        w.append(events[0])  # a segment and its signature, then the rest and theirs
        w.append_many(events[1:])
    data = src.read_bytes()
    trusted = ring(SIGNER)
    assert not _caught(src, trusted)
    bad = tmp_path / "bad.blog"
    missed = []
    offsets = sorted(set(range(0, len(data), stride)) | _signature_bytes(data, src))
    for i in offsets:
        for bit in range(8):
            flipped = bytearray(data)
            flipped[i] ^= 1 << bit
            bad.write_bytes(flipped)
            if not _caught(bad, trusted):
                missed.append((i, bit))
    assert not missed, f"{len(missed)} bit flips not caught, first at byte {missed[0][0]}"


def test_a_rechained_forgery_is_caught_by_the_signature_and_by_a_receipt(tmp_path: Path) -> None:
    events = match(key_id=SIGNER.key_id)
    path = tmp_path / "m.blog"
    receipts = write_signed(path, events, SIGNER, batch=16, receipts_at=[40])
    # The keeper edits an event (a note changes nothing in play) and recomputes the chain:
    forged_events = list(events)
    forged_events[20] = msgspec.structs.replace(events[20], note="edited")
    forged = tmp_path / "forged.blog"
    log.write_log(forged, forged_events)  # a new chain, no key: no signatures
    v = audit(forged, ring(SIGNER), [held(receipts[40])], required=True)
    assert "sign.unsigned" in rules_of(v) and "sign.receipt_changed" in rules_of(v)
    # ... and copying the old signature records over cannot help: they sign the old heads.
    with log.Writer(tmp_path / "copied.blog", validate=False) as w:
        for e in forged_events:
            w.append(e)
        with pytest.raises(log.LogFormatError) as exc:
            w.put_signature(read_log_signed(path)[2].signatures[-1])
    assert exc.value.kind == "chain"


def test_a_forgery_signed_with_another_key_is_caught(tmp_path: Path) -> None:
    events = match(key_id=FORGER.key_id)
    path = tmp_path / "m.blog"
    write_signed(path, events, FORGER, batch=64)
    assert rules_of(audit(path, ring(SIGNER), required=True)) == ["sign.untrusted"]
    # The forger's signatures under the site's key id do not verify.
    events = match(key_id=SIGNER.key_id)
    fake = keys.Signer(FORGER._key)
    fake.key_id = SIGNER.key_id
    write_signed(tmp_path / "fake.blog", events, fake, batch=64)
    assert rules_of(audit(tmp_path / "fake.blog", ring(SIGNER), required=True)) == [
        "sign.invalid"]


def _rewrite(path: Path, dst: Path, keep: int, *, signatures: bool) -> None:
    """Keep the first ``keep`` events of ``path``, with its own signature records up to there
    when ``signatures`` (what the keeper can do without the key)."""
    events, _, signed = read_log_signed(path)
    with log.Writer(dst, validate=False) as w:
        for e in events[:keep]:
            w.append(e)
            for s in signed.signatures if signatures else ():
                if s.seq == e.seq:
                    w.put_signature(s)


def test_a_log_cut_at_a_signed_head_is_a_finding_when_signatures_are_required(
        tmp_path: Path) -> None:
    events = match(key_id=SIGNER.key_id)
    path = tmp_path / "m.blog"
    receipts = write_signed(path, events, SIGNER, receipts_at=[100])
    cut = tmp_path / "cut.blog"
    _rewrite(path, cut, 80, signatures=True)  # every signature there is genuine
    assert audit(cut, ring(SIGNER)).ok  # nothing required: a match in progress reads fine
    v = audit(cut, ring(SIGNER), required=True)
    assert "sign.end_missing" in rules_of(v)
    assert any(f.rule == "deal.reveal_missing" or f.section == "provenance"
               for f in v.findings)
    v = audit(cut, ring(SIGNER), [held(receipts[100], seat=1)])
    assert rules_of(v) == ["sign.receipt_cut"]
    assert v.findings[0].message.startswith(
        "the receipt for seq 100 that seat 1 holds (seat1.json) shows the site signed match ")


def test_a_stripped_end_signature_leaves_an_unsigned_tail(tmp_path: Path) -> None:
    events = match(key_id=SIGNER.key_id)
    path = tmp_path / "m.blog"
    write_signed(path, events, SIGNER, batch=32)
    stripped = tmp_path / "stripped.blog"
    events_read, _, signed = read_log_signed(path)
    with log.Writer(stripped, validate=False) as w:
        for e in events_read:
            w.append(e)
            for s in signed.signatures[:-1]:
                if s.seq == e.seq:
                    w.put_signature(s)
    v = audit(stripped, ring(SIGNER), required=True)
    assert rules_of(v) == ["sign.tail_unsigned"]
    assert isinstance(events_read[-1], MatchEnded)


def test_a_stripped_commitment_is_a_finding_when_signatures_are_required(
        tmp_path: Path) -> None:
    events = match(key_id=SIGNER.key_id)
    events[0] = msgspec.structs.replace(events[0], commitment=None)
    events[-1] = msgspec.structs.replace(events[-1], server_seed=None)
    path = tmp_path / "m.blog"
    write_signed(path, events, SIGNER, batch=64)  # the site signed a match it never committed
    v = audit(path, ring(SIGNER), required=True)
    assert not v.ok and {f.section for f in v.findings} == {"provenance"}
    assert audit(path, ring(SIGNER)).ok


def test_the_cli_names_the_receipted_seq_in_one_line(tmp_path: Path) -> None:
    events = match(key_id=SIGNER.key_id, rules="classic")
    path = tmp_path / "m.blog"
    receipts = write_signed(path, events, SIGNER, batch=20, receipts_at=[212])
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "site.pub").write_bytes(msgspec.json.encode(SIGNER.public()))
    (tmp_path / "r.json").write_bytes(receipt_json(Receipt.of(receipts[212], seat=1)))
    cut = tmp_path / "cut.blog"
    _rewrite(path, cut, 150, signatures=True)
    env = {**os.environ, "BURACO_LOG_CONFIG": str(tmp_path / "none.toml")}
    env.pop("BURACO_LOG_KEYS", None)
    (tmp_path / "none.toml").write_text("")
    base = [sys.executable, "-m", "cli.main", "audit"]
    ok = subprocess.run([*base, str(path), "--keys", str(tmp_path / "keys"), "--receipt",
                         str(tmp_path / "r.json")], capture_output=True, text=True, env=env,
                        cwd=REPO)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = subprocess.run([*base, str(cut), "--keys", str(tmp_path / "keys"), "--receipt",
                          str(tmp_path / "r.json")], capture_output=True, text=True, env=env,
                         cwd=REPO)
    assert bad.returncode == 1
    lines = [line for line in bad.stdout.splitlines() if "sign.receipt_cut" in line]
    assert len(lines) == 1 and ("the receipt for seq 212 that seat 1 holds (" in lines[0]
                                and " up to seq 212, but the log ends at seq " in lines[0])
    usage = subprocess.run([*base, str(cut), "--receipt", str(tmp_path / "r.json")],
                           capture_output=True, text=True, env=env, cwd=REPO)
    assert usage.returncode == 2 and usage.stdout == ""
    assert len(usage.stderr.splitlines()) == 1 and "--keys" in usage.stderr


def test_receipts_go_to_the_log_of_their_match_in_a_directory(tmp_path: Path) -> None:
    events = match(key_id=SIGNER.key_id)
    logs = tmp_path / "logs"
    logs.mkdir()
    receipts = write_signed(logs / "m.blog", events, SIGNER, batch=32, receipts_at=[30])
    (tmp_path / "site.pub").write_bytes(msgspec.json.encode(SIGNER.public()))
    good = Receipt.of(receipts[30], seat=0)
    (tmp_path / "good.json").write_bytes(receipt_json(good))
    other = msgspec.structs.replace(good, match_id="another-match")
    (tmp_path / "other.json").write_bytes(receipt_json(other))
    env = {**os.environ, "BURACO_LOG_CONFIG": str(tmp_path / "none.toml")}
    (tmp_path / "none.toml").write_text("")
    base = [sys.executable, "-m", "cli.main", "audit", "--keys", str(tmp_path / "site.pub")]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*base, *args], capture_output=True, text=True, env=env,
                              cwd=REPO, timeout=120)

    assert run(str(logs), "--receipt", str(tmp_path / "good.json")).returncode == 0
    stray = run(str(logs), "--receipt", str(tmp_path / "other.json"))
    assert stray.returncode == 1 and "none of the logs audited" in stray.stderr
    alone = run(str(logs / "m.blog"), "--receipt", str(tmp_path / "other.json"))
    assert alone.returncode == 1 and "sign.receipt_other_match" in alone.stdout
