"""Signed logs, round 44 (helper log44): a signing writer killed at random moments (a real
process, SIGKILL), then verified, repaired, audited with the site's key and carried on.

Every acknowledged event is in the log and covered by a signature that verifies; what a
kill leaves after it (a torn tail, events whose signature record was cut with them) costs
nothing signed: after ``repair`` the log audits OK with the key, and a new signing writer
takes the match to its end, signed throughout.
"""

from __future__ import annotations

import hashlib
import os
import random
import signal
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from buraco_log import log
from buraco_log.audit import SigningOptions, audit_log
from buraco_log.signing.keys import Signer
from tests.signing.helpers import (
    audit,
    held,
    match,
    ring,
    rules_of,
    write_signed,
    write_signed_by,
)

ROOT = Path(__file__).resolve().parents[2]
SITE = Signer.generate()


def _key(tmp: Path) -> Path:
    key = tmp / "site.key"
    if not key.exists():
        key.write_bytes(SITE.private_pem())
        key.chmod(0o600)
    return key


def _killed_writer(tmp: Path, run: int, mode: str, after: float) -> tuple[Path, int]:
    """A signing writer killed ``after`` seconds into its appends: (its log, last acked seq)."""
    path = tmp / f"kill{run}.blog"
    lines: list[str] = []
    with subprocess.Popen(
        [sys.executable, "-m", "tests.signing.killsigner", str(path), str(_key(tmp)),
         f"kill{run}", mode], cwd=ROOT, stdout=subprocess.PIPE, text=True,
    ) as proc:
        out = proc.stdout
        assert out is not None
        assert out.readline() == "open\n", "the writer did not start"
        reader = threading.Thread(target=lambda: lines.extend(out), daemon=True)
        reader.start()
        time.sleep(after)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        reader.join()
    acked = max((int(line.split()[1]) for line in lines if line.startswith("ack ")), default=-1)
    return path, acked


def _check_and_finish(path: Path, run: int, acked: int) -> None:
    events = match(f"kill{run}", key_id=SITE.key_id)
    got = log.read_events(path, allow_torn=True)
    assert got == events[:len(got)], "the recovered log is not a prefix of what was appended"
    assert len(got) >= acked + 1, f"lost acknowledged events: {acked + 1} acked, {len(got)} kept"
    if log.verify(path).torn is not None:
        report = log.repair(path, backup=False)
        assert report is not None and report.events_kept == len(got)
    with log.Reader(path) as reader:
        list(reader)
        signed = reader.signatures
    if acked >= 0:  # every acknowledged event is signed, by a signature kept in the file
        assert signed and signed[-1].seq >= acked
    verdict = audit(path, ring(SITE))
    assert verdict.ok, [(f.rule, f.message) for f in verdict.findings]
    with log.Writer(path, signer=SITE) as w:  # the match goes on, signed
        w.append_many(events[len(got):])
    verdict = audit(path, ring(SITE), required=True)
    assert verdict.ok and rules_of(verdict) == [], [(f.rule, f.message) for f in verdict.findings]
    assert log.read_events(path) == events


def _runs(tmp: Path, n: int, seed: int) -> None:
    rng = random.Random(seed)
    for run in range(n):
        mode = "batched" if run % 2 else "durable"
        path, acked = _killed_writer(tmp, run, mode, rng.uniform(0, 0.25))
        _check_and_finish(path, run, acked)


def test_a_signing_writer_killed_at_random_loses_no_signed_event(tmp_path: Path) -> None:
    _runs(tmp_path, 4, seed=44)


@pytest.mark.slow
def test_a_signing_writer_killed_sixty_times_loses_no_signed_event(tmp_path: Path) -> None:
    _runs(tmp_path, 60, seed=4400)


# -- a signature record cut short ---------------------------------------------------------------


def _cut_in_last_signature(tmp: Path) -> tuple[Path, int, int]:
    """A signed log whose last record, a signature record, is cut 5 bytes short: (path,
    the seq it follows, its byte)."""
    path = tmp / "m.blog"
    events = match(key_id=SITE.key_id)[:40]
    with log.Writer(path, signer=SITE, sign_at="end", batched=True) as w:
        w.append_many(events[:20])
        w.sign_head()
        w.append_many(events[20:])
        w.flush()
        start = os.path.getsize(path)
        w.sign_head()
    os.truncate(path, os.path.getsize(path) - 5)
    return path, 39, start


def test_a_torn_signature_record_is_named_by_the_seq_it_follows_not_the_next(
        tmp_path: Path) -> None:
    """Every error of a signature record names it "after seq N", never as seq N+1 (the event
    after it, which it does not hold): a torn one said "seq 40: torn tail: signature record cut
    short ... after seq 39", and the audit's finding had seq 40 and "record 2"."""
    path, after, start = _cut_in_last_signature(tmp_path)
    with pytest.raises(log.LogFormatError) as refused:
        log.read_events(path)
    exc = refused.value
    assert (exc.kind, exc.offset, exc.seq) == ("torn", start, None)
    assert str(exc).startswith(f"{path}, byte {start}: torn tail: signature record cut short")
    assert f"after seq {after}" in str(exc)
    with pytest.raises(log.LogFormatError) as resumed:
        log.Writer(path, signer=SITE)
    assert (resumed.value.kind, resumed.value.seq) == ("torn", None)
    verdict = audit(path, ring(SITE))
    assert (verdict.integrity.status, verdict.integrity.seq, verdict.integrity.record) == (
        "torn", None, None)
    [finding] = [f for f in verdict.findings if f.rule == "log.torn"]
    assert finding.seq is None
    assert finding.message.startswith(f"torn tail at byte {start}: signature record cut short")


def test_the_audit_line_of_a_torn_signature_record_names_no_record_or_seq(
        tmp_path: Path) -> None:
    path, after, start = _cut_in_last_signature(tmp_path)
    done = subprocess.run([sys.executable, "-m", "cli", "audit", str(path)], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stderr
    [line] = [x for x in done.stdout.splitlines() if x.lstrip().startswith("integrity")]
    assert line.endswith(f"torn tail at byte {start} [log.torn]: signature record cut short "
                         f"(160 of 165 bytes) after seq {after}"), line


def test_a_torn_event_record_still_names_the_seq_it_would_begin(tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    with log.Writer(path, signer=SITE) as w:
        w.append_many(match(key_id=SITE.key_id)[:10])
    size = os.path.getsize(path)
    with open(path, "ab") as f:
        f.write(b"\x05\x00\x00\x00")  # the next record's header, cut short
    with pytest.raises(log.LogFormatError) as refused:
        log.read_events(path)
    assert (refused.value.offset, refused.value.seq) == (size, 10)
    verdict = audit(path)
    assert (verdict.integrity.seq, verdict.integrity.record) == (10, 1)  # one record read


# -- a key rotated mid-match ----------------------------------------------------------------------


@pytest.mark.parametrize("recorded", ["other key", "no key"])
def test_a_writer_resuming_a_log_with_another_signer_is_refused_at_once(
        tmp_path: Path, recorded: str) -> None:
    """docs/signing.md: the writer "refuses to resume a log with another key". It opened it,
    and the first append was refused at signing time, leaving the writer broken as if a
    write had been interrupted."""
    other = Signer.generate()
    path = tmp_path / "m.blog"
    events = match(key_id=SITE.key_id if recorded == "other key" else None)
    with log.Writer(path, signer=SITE if recorded == "other key" else None) as w:
        w.append_many(events[:30])
    before = path.read_bytes()
    with pytest.raises(log.LogFormatError) as refused:
        log.Writer(path, signer=other)
    exc = refused.value
    assert (exc.kind, exc.path) == ("sign", str(path))
    assert str(exc).startswith(f"{path}: cannot sign this log with key {other.key_id!r}: its "
                               "match start records key_id ")
    assert path.read_bytes() == before
    with log.Writer(path) as w:  # the refusal let the lock go
        w.append(events[30])
    assert log.verify(path).events == 31


def test_a_match_re_signed_by_a_rotated_key_half_way_is_a_key_mismatch_at_the_seq(
        tmp_path: Path) -> None:
    """A site cannot hand a match over to its next key half way (one key signs a log): the
    records by the second are sign.key_mismatch from the first of them, even with both keys
    trusted, and the count of each key's records is said."""
    nxt = Signer.generate()
    events = match(key_id=SITE.key_id)
    path = write_signed_by(tmp_path / "m.blog", events,
                           {e.seq: SITE if e.seq < 50 else nxt for e in events})
    verdict = audit(path, ring(SITE, nxt))
    assert rules_of(verdict) == ["sign.key_mismatch"]
    assert verdict.findings[0].seq == 50
    assert verdict.signing.signers == {SITE.key_id: 50, nxt.key_id: len(events) - 50}


# -- receipts and signature records moved about ---------------------------------------------------


def test_receipts_for_another_match_or_past_the_end_say_so(tmp_path: Path) -> None:
    events = match(key_id=SITE.key_id)
    path = tmp_path / "m.blog"
    write_signed(path, events[:100], SITE)
    other = tmp_path / "o.blog"
    theirs = write_signed(other, match("other", key_id=SITE.key_id)[:20], SITE,
                          receipts_at=[10])[10]
    one = SigningOptions(ring(SITE), (held(theirs),), by_match=False)  # one log audited
    [finding] = audit_log(path, signing=one).findings
    assert (finding.rule, finding.seq) == ("sign.receipt_other_match", 10)
    # a genuine signature of a head at a seq the log does not reach: it was cut
    past = SITE.sign_head(events[0].match_id, 150, hashlib.sha256(b"later").digest())
    [finding] = audit(path, ring(SITE), [held(past)]).findings
    assert (finding.rule, finding.seq) == ("sign.receipt_cut", 150)
    assert finding.message.endswith(
        "the log ends at seq 99 (it was cut, or is a copy taken before seq 150 was written: "
        "the site's log must reach seq 150)")


def _records(data: bytes) -> list[tuple[int, int, int]]:
    """(start, end, event count) of each record of a sealed log's bytes."""
    out, off = [], log.HEADER_SIZE
    while off < len(data):
        length, count = struct.unpack_from("<II", data, off)
        out.append((off, off + 56 + length, count))
        off += 56 + length
    return out


@pytest.mark.parametrize("edit", ["copied", "swapped", "moved", "cut-after", "cut-before"])
def test_signature_records_moved_about_are_refused_or_read_as_a_shorter_log(
        tmp_path: Path, edit: str) -> None:
    events = match(key_id=SITE.key_id)[:60]
    path = tmp_path / "m.blog"
    write_signed(path, events, SITE, batch=20)
    data = path.read_bytes()
    s0, s1 = [data[a:b] for a, b, count in _records(data) if count == 0][:2]
    i0, i1 = data.index(s0), data.index(s1)
    edited = {
        "copied": data[:i0] + s0 + data[i0:],
        "swapped": data[:i0] + s1 + data[i0 + len(s0):i1] + s0 + data[i1 + len(s1):],
        "moved": data[:i0] + data[i0 + len(s0):i1 + len(s1)] + s0 + data[i1 + len(s1):],
        "cut-after": data[:i1 + len(s1)],
        "cut-before": data[:i1],
    }[edit]
    path.write_bytes(edited)
    if edit.startswith("cut"):  # a shorter log, valid on its own: its tail's note, no finding
        info = log.verify(path)
        assert (info.events, info.signatures, info.torn) == (40, 2 if edit == "cut-after" else 1,
                                                            None)
        assert audit(path, ring(SITE)).ok
        return
    with pytest.raises(log.LogFormatError) as refused:
        log.verify(path)
    exc = refused.value
    assert exc.seq is None and exc.offset == (i0 + len(s0) if edit == "copied" else
                                               i0 if edit == "swapped" else i1 + len(s1) - len(s0))
    assert str(exc).count("\n") == 0 and "the signature record after seq" in str(exc)
    rules = {f.rule for f in audit(path, ring(SITE)).findings}
    assert rules == ({"sign.duplicate"} if edit == "copied" else {"log.seq"})
