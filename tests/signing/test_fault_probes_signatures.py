"""Fault probes of signed logs as a referee meets them: signature records copied in the file,
receipts past damage, keyrings that trust nothing, the private key given as a public one, and
`keys new` with a passphrase or name that is not plain text. Real subprocesses for the command
line (one line, the right exit code, no traceback)."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import pytest

from buraco_log import log
from buraco_log.audit import read_log_signed
from tests.log.cli_run import assert_error, run
from tests.signing.helpers import audit, held, match, ring, rules_of, write_signed

pytest.importorskip("cryptography")

from buraco_log.signing import keys
from tests.signing.signed_copies import ENV, SIGNER, _record_span, _signed, _with_copy


@pytest.fixture(autouse=True)
def _no_site_config(tmp_path: Path) -> None:
    """No config file of this machine decides what the commands below require."""
    (tmp_path / "none.toml").write_text("")
    ENV["BURACO_LOG_CONFIG"] = str(tmp_path / "none.toml")


@pytest.mark.parametrize("sealed", [True, False], ids=["sealed", "unsealed"])
def test_a_signature_record_copied_after_itself_is_a_finding_naming_its_seq(
        tmp_path: Path, sealed: bool) -> None:
    # every record still signs the head where it stands, so the reader took the copy and
    # the audit said OK with one signature more than the site wrote
    path, pub = _signed(tmp_path, sealed=sealed)
    bad = tmp_path / "dup.blog"
    seq = _with_copy(path, bad, 1)
    assert read_log_signed(bad)[1].status == ("sealed" if sealed else "unsealed")
    for keyring in (ring(SIGNER), None):  # structural: no key needed to see it
        v = audit(bad, keyring)
        assert rules_of(v) == ["sign.duplicate"], v.findings
        assert v.findings[0].seq == seq and f"after seq {seq}" in v.findings[0].message
    r = run("audit", bad, "--keys", pub, env=ENV)
    assert r.code == 1 and "Traceback" not in r.err, r
    lines = [line for line in r.out.splitlines() if "[sign.duplicate]" in line]
    assert len(lines) == 1 and lines[0].strip().startswith(f"seq {seq} [sign.duplicate]")
    assert audit(path, ring(SIGNER)).ok  # the log as written


def test_several_copies_are_one_finding_that_counts_them(tmp_path: Path) -> None:
    path, _ = _signed(tmp_path)
    once = tmp_path / "once.blog"
    first = _with_copy(path, once, 1, times=2)
    twice = tmp_path / "twice.blog"
    _with_copy(once, twice, 5)
    v = audit(twice, ring(SIGNER))
    assert rules_of(v) == ["sign.duplicate"]
    assert v.findings[0].seq == first
    assert v.findings[0].message.startswith(f"3 signature records sign the head after seq "
                                            f"{first}; 3 extra record(s) in all, at 2 heads")


def test_a_json_lines_signature_line_repeated_is_the_same_finding(tmp_path: Path) -> None:
    path, _ = _signed(tmp_path)
    jsonl = tmp_path / "m.jsonl"
    assert run("convert", path, "-o", jsonl, env=ENV).code == 0
    lines = jsonl.read_bytes().splitlines(keepends=True)
    at = [i for i, line in enumerate(lines) if line.startswith(b'{"log": "signature"')][2]
    bad = tmp_path / "dup.jsonl"
    bad.write_bytes(b"".join([*lines[:at + 1], lines[at], *lines[at + 1:]]))
    v = audit(bad, ring(SIGNER))
    assert rules_of(v) == ["sign.duplicate"]
    assert audit(jsonl, ring(SIGNER)).ok


def test_seal_of_a_log_with_a_copied_record_refuses_it_and_changes_nothing(
        tmp_path: Path) -> None:
    # round 41: seal wrote the copy away unsaid, and the sealed log audited OK (the evidence
    # of the edit was gone); it is refused as `verify` refuses it, naming the copy's byte
    path, _ = _signed(tmp_path, sealed=False)
    bad = tmp_path / "dup.blog"
    seq = _with_copy(path, bad, 2)
    before = bad.read_bytes()
    assert rules_of(audit(bad, ring(SIGNER))) == ["sign.duplicate"]
    r = run("seal", bad, env=ENV)
    assert_error(r, 1, f"byte {_record_span(path, 2)[1]}", f"after seq {seq} repeats",
                 "(a duplicated record; the audit's sign.duplicate)")
    assert bad.read_bytes() == before
    assert run("seal", path, env=ENV).code == 0  # the log as written seals
    assert audit(path, ring(SIGNER)).ok


def test_a_receipt_past_damage_does_not_say_the_log_was_cut(tmp_path: Path) -> None:
    # a flipped byte mid-log said "the log was changed after seq 223 ... (it was cut)"
    path = tmp_path / "m.blog"
    receipts = write_signed(path, match(key_id=SIGNER.key_id), SIGNER, batch=32,
                            receipts_at=[200])
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    bad = tmp_path / "bad.blog"
    bad.write_bytes(data)
    v = audit(bad, ring(SIGNER), [held(receipts[200])])
    assert v.integrity.status == "broken"
    (problem,) = [f for f in v.findings if f.rule == "sign.receipt_cut"]
    assert problem.seq == 200 and "it was cut" not in problem.message
    assert "but only seq 0 to " in problem.message
    assert " of the log could be read (it is damaged; see integrity)" in problem.message
    cut = tmp_path / "cut.blog"  # a clean cut still says so
    cut.write_bytes(path.read_bytes()[:len(data) // 2 - 400])
    log_cut = tmp_path / "repaired.blog"
    events, _, signed = read_log_signed(cut)
    with log.Writer(log_cut, validate=False) as w:
        for e in events:
            w.append(e)
            for s in signed.signatures:
                if s.seq == e.seq:
                    w.put_signature(s)
    v = audit(log_cut, ring(SIGNER), [held(receipts[200])])
    assert "(it was cut, or is a copy taken before seq 200 was written" in v.findings[-1].message


def test_a_keyring_that_holds_no_key_is_a_usage_error_not_a_finding(tmp_path: Path) -> None:
    # an empty directory (a wrong path) made every signed log 'sign.untrusted', exit 1
    path, _ = _signed(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_error(run("audit", path, "--keys", empty, env=ENV), 2, str(empty), "no published key")
    only_revoked = tmp_path / "ring.json"
    only_revoked.write_text('{"keys": [], "revoked": []}')
    assert_error(run("audit", path, "--keys", only_revoked, env=ENV), 2, "no published key")


def test_the_private_key_given_as_a_trusted_key_says_so(tmp_path: Path) -> None:
    path, _ = _signed(tmp_path)
    assert run("keys", "new", "site", "-d", tmp_path / "k", env=ENV).code == 0
    private = tmp_path / "k" / "site.key"
    line = assert_error(run("audit", path, "--keys", private, env=ENV), 2, str(private),
                        "a private key, not a published key")
    assert "BEGIN" not in line


def test_keys_new_takes_a_passphrase_that_is_not_utf8_from_the_environment(
        tmp_path: Path) -> None:
    # it was a UnicodeEncodeError traceback
    r = run("keys", "new", "site", "-d", tmp_path, env={
        **ENV, "BURACO_LOG_KEY_PASSPHRASE": os.fsdecode(b"\xff\xfepass")})
    assert r.code == 0 and "encrypted" in r.out and "Traceback" not in r.err, r
    assert keys.load_signer(tmp_path / "site.key", b"\xff\xfepass").key_id
    with pytest.raises(keys.SigningError, match="wrong passphrase"):
        keys.load_signer(tmp_path / "site.key", b"pass")


@pytest.mark.parametrize("name", ["a\nb", "site\x1b[2J", "tab\there"], ids=["nl", "esc", "tab"])
def test_keys_new_refuses_a_name_with_control_characters(tmp_path: Path, name: str) -> None:
    assert_error(run("keys", "new", name, "-d", tmp_path / "k", env=ENV), 2, "plain file name")
    assert not (tmp_path / "k").exists()


def test_a_receipt_of_this_head_from_another_log_is_not_taken(tmp_path: Path) -> None:
    # a signature over a different log's head: the same match id, another history
    path, _ = _signed(tmp_path)
    other_events = match(seed="other", key_id=SIGNER.key_id)
    start = read_log_signed(path)[0][0]
    assert isinstance(start, type(other_events[0]))
    other_events[0] = msgspec.structs.replace(other_events[0], match_id=start.match_id)
    other = tmp_path / "other.blog"
    receipts = write_signed(other, other_events, SIGNER, batch=32, receipts_at=[20])
    v = audit(path, ring(SIGNER), [held(receipts[20])])
    assert rules_of(v) == ["sign.receipt_changed"] and v.findings[0].seq == 20
    # ... and its signature records cannot be spliced into this log: they sign other heads
    other = tmp_path / "other-plain.blog"
    write_signed(other, other_events, SIGNER, batch=32)
    start_at, end_at = _record_span(other, 0)
    m_start, m_end = _record_span(path, 0)
    seqs = [read_log_signed(p)[2].signatures[0].seq for p in (path, other)]
    assert seqs[0] == seqs[1]
    data = path.read_bytes()
    spliced = tmp_path / "spliced.blog"
    spliced.write_bytes(data[:m_start] + other.read_bytes()[start_at:end_at] + data[m_end:])
    assert read_log_signed(spliced)[1].kind == "chain"


@pytest.mark.parametrize("stdin", [b"", b"one\ntwo\n", b"\n\n"], ids=["eof", "differ", "empty"])
def test_keys_new_passphrase_prompt_that_gets_no_passphrase_is_a_usage_error(
        tmp_path: Path, stdin: bytes) -> None:
    # the prompt's Abort at the end of the input was a traceback, exit 1
    r = run("keys", "new", "site", "-d", tmp_path / "k", "--passphrase", stdin=stdin, env=ENV)
    assert r.code == 2 and "Traceback" not in r.err, r
    assert r.lines[-1].startswith("buraco-log: error: --passphrase: no passphrase"), r.lines
    assert r.out == "" and not (tmp_path / "k").exists()
    ok = run("keys", "new", "site", "-d", tmp_path / "k", "--passphrase",
             stdin=b"secret\nsecret\n", env=ENV)
    assert ok.code == 0 and "encrypted" in ok.out, ok
    assert keys.load_signer(tmp_path / "k" / "site.key", b"secret").key_id
