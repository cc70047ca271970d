"""The log was edited: a keeper who can write the log file and the receipts, with no signing
key of the site's, against a referee who audits with the site's published keys.

Before: a keeper who stripped every signature record and the match start's key id (or wrote
the match as format version 1, which holds neither) got, from `audit --keys`, an OK with not
one word of signing: no signing line, no note, the same output as an audit without keys; a
batch run with --quiet counted it nowhere. A referee who gave the site's keys read the OK as
the site's signature checked.
"""

from __future__ import annotations

import io
from pathlib import Path

import msgspec
import pytest

pytest.importorskip("cryptography")

from buraco_log import jsonl, log
from buraco_log.audit import SigningOptions, audit_many, settings
from buraco_log.audit.diff import diff_events
from buraco_log.events import AnyEvent, MatchStarted
from buraco_log.safetext import apart, lookalike
from buraco_log.signing.check import HeldReceipt, load_receipts
from buraco_log.signing.keys import Signer, SigningError, load_keyring, load_signer
from buraco_log.signing.record import Receipt, receipt_json
from tests.command_line import run_all
from tests.signing.helpers import audit, held, match, ring, write_signed

SITE = Signer.generate()
NOTE = "signing: the log holds no signature"  # audit.NO_SIGNATURE_NOTE


def _stripped(tmp_path: Path) -> Path:
    """The site's signed match rewritten by its keeper: no signature record, and no key id
    in its start (the chain recomputed, as anyone can)."""
    events = match(key_id=None)
    path = tmp_path / "stripped.blog"
    with log.Writer(path, batched=True) as w:
        for event in events:
            w.append(event)
    return path


def _as_version_1(tmp_path: Path) -> Path:
    """The same match's first events as a JSON Lines log of format version 1 (no key id, no
    signatures): short, so the command's audit is quick."""
    out = io.StringIO()
    jsonl.dump(iter(match(key_id=None)[:30]), out, sealed=False, version=1)
    path = tmp_path / "v1.jsonl"
    path.write_text(out.getvalue())
    return path


def test_a_log_stripped_of_its_signatures_and_key_id_is_noted_when_keys_are_given(
        tmp_path: Path) -> None:
    path = _stripped(tmp_path)
    keyed = audit(path, ring(SITE))
    assert keyed.ok  # a note, as a stripped log whose start keeps its key id is
    said = [n for n in keyed.notes if n.startswith(NOTE)]
    assert len(said) == 1, keyed.notes
    assert "the trusted keys given checked nothing" in said[0]
    assert "--require-signatures" in said[0]
    # without keys, an unsigned log that never meant to be signed says nothing new
    assert not [n for n in audit(path).notes if n.startswith("signing")]
    # required, it stays the finding it was
    assert [f.rule for f in audit(path, ring(SITE), required=True).findings] == [
        "sign.unsigned"]


def test_a_version_1_copy_audited_with_keys_says_its_version_holds_no_signatures(
        tmp_path: Path) -> None:
    v = audit(_as_version_1(tmp_path), ring(SITE))
    assert v.ok
    assert [n for n in v.notes if n.startswith(NOTE)
            and "format version 1, which holds no signatures" in n], v.notes


@pytest.mark.slow
def test_the_referee_reads_the_note_on_the_command_line(tmp_path: Path) -> None:
    path = _as_version_1(tmp_path)
    keys = tmp_path / "site.pub"
    keys.write_bytes(msgspec.json.encode(SITE.public()))
    keys.chmod(0o644)
    signed = tmp_path / "signed.blog"
    write_signed(signed, match(key_id=SITE.key_id)[:30], SITE, batch=300)
    r, quiet = run_all(["audit", path, signed, "--keys", keys],
                       ["audit", path, signed, "--keys", keys, "--quiet"])
    assert r.code == 0, r.err
    notes = [line.strip() for line in r.out.splitlines() if line.strip().startswith("note")]
    assert [n for n in notes if "format version 1, which holds no signatures" in n
            and "the trusted keys given checked nothing" in n], r.out
    # a batch run with --quiet shows no note: its summary counts the log
    assert "1 with events no signature covers" in quiet.out, quiet.out


# -- a match renamed to shake a receipt off ---------------------------------------------------


def _renamed(tmp_path: Path, match_id: str) -> tuple[Path, HeldReceipt]:
    """The site's signed match and a player's receipt at seq 20; then its keeper's copy, the
    start's match id changed to ``match_id`` and, as the site's signatures no longer verify,
    stripped of them and of the start's key id (the chain recomputed)."""
    events = match(key_id=SITE.key_id)[:30]
    events[0] = msgspec.structs.replace(events[0], match_id="caf\u00e9")  # NFC
    receipts = write_signed(tmp_path / "site.blog", events, SITE, batch=300, receipts_at=[20])
    events[0] = msgspec.structs.replace(events[0], match_id=match_id, key_id=None)
    path = tmp_path / "kept.blog"
    with log.Writer(path, batched=True) as w:
        for event in events:
            w.append(event)
    return path, held(receipts[20], seat=0)


def test_a_match_renamed_and_stripped_of_its_key_is_the_receipt_changed_not_another_match(
        tmp_path: Path) -> None:
    path, receipt = _renamed(tmp_path, "m-2")
    v = audit(path, ring(SITE), [receipt])
    found = [f for f in v.findings if f.section == "signing"]
    # it was sign.receipt_other_match, "audit it with its match's log": the keeper's own log
    assert [f.rule for f in found] == ["sign.receipt_changed"], found
    assert "match id and key id set back" in found[0].message
    assert f"to key {SITE.key_id}, the receipt's" in found[0].message
    # audited with other logs, the receipt goes to it too (it was no log's: an error)
    other = tmp_path / "other.blog"
    write_signed(other, match("other", key_id=SITE.key_id)[:30], SITE, batch=300)
    many = audit_many([other, path],
                      signing=SigningOptions(ring(SITE), (receipt,)))
    assert not many.unmatched
    assert [f.rule for f in many[1].findings if f.section == "signing"] == [
        "sign.receipt_changed"]
    assert many[0].ok


def test_match_ids_that_look_alike_are_told_apart(tmp_path: Path) -> None:
    path, receipt = _renamed(tmp_path, "cafe\u0301")  # NFD: the same to the eye
    found = [f for f in audit(path, ring(SITE), [receipt]).findings
             if f.section == "signing"]
    assert len(found) == 1
    # it said "is for match 'café', and the log is that match renamed 'café'"
    assert "for match 'caf\\xe9'" in found[0].message, found[0].message
    assert "renamed 'cafe\\u0301'" in found[0].message
    # ids that do not look alike are quoted as they are
    assert lookalike("m-a", "m-b") is False
    assert apart("m-a", "m-b") == ("m-a", "m-b")


def test_diff_tells_a_player_name_changed_to_a_lookalike(tmp_path: Path) -> None:
    events = match()[:3]
    names = {"cyrillic e": "h\u0435uristic-0", "zero-width space": "heuristic-0\u200b"}
    for why, name in names.items():
        start = events[0]
        assert isinstance(start, MatchStarted)
        players = (msgspec.structs.replace(start.players[0], name=name), *start.players[1:])
        changed = [msgspec.structs.replace(start, players=players), *events[1:]]
        seq, said, _ = diff_events(events, changed)
        assert seq == 0
        # it said "players[0].name: heuristic-0 vs heuristic-0" (with the lookalike in it)
        assert said == (f"players[0].name: {start.players[0].name} vs "
                        f"{name.encode('ascii', 'backslashreplace').decode()}",), why


# -- files saved by another tool: UTF-16, cut short -------------------------------------------


def _utf16_files(tmp_path: Path) -> dict[str, Path]:
    """The site's key files and a player's receipt, each saved as Windows tools save text."""
    receipt = tmp_path / "receipt.json"
    signed = SITE.sign_head("m-1", 3, bytes(32))
    receipt.write_bytes(receipt_json(Receipt.of(signed, seat=0)).decode().encode("utf-16"))
    keys = tmp_path / "keys"
    keys.mkdir(mode=0o700)
    pub = keys / "site.pub"
    pub.write_bytes(msgspec.json.encode(SITE.public()).decode().encode("utf-16-le"))  # no BOM
    pub.chmod(0o644)
    revoked_dir = tmp_path / "revoking"
    revoked_dir.mkdir(mode=0o700)
    (revoked_dir / "site.pub").write_bytes(msgspec.json.encode(SITE.public()))
    (revoked_dir / "revoked").write_bytes(f"{SITE.key_id}\n".encode("utf-32"))
    private = tmp_path / "site.key"
    private.write_bytes(SITE.private_pem().decode().encode("utf-16"))
    private.chmod(0o600)
    return {"receipt": receipt, "pub": keys, "revoked": revoked_dir, "key": private}


def test_a_key_or_receipt_file_in_utf16_says_so(tmp_path: Path) -> None:
    files = _utf16_files(tmp_path)
    said = {}
    for what, path in files.items():
        with pytest.raises(SigningError) as caught:
            if what == "receipt":
                load_receipts([str(path)])
            elif what == "key":
                load_signer(path)
            else:
                load_keyring([path])
        said[what] = str(caught.value)
    # it said "not a buraco-log receipt: JSON is malformed: invalid character (byte 0)",
    # "not JSON: ... object keys must be strings (byte 1)", Python's codec error, and "no
    # '-----BEGIN' line: not a PEM file" of a private key whose armour is there
    assert "the file is UTF-16 text (it starts with the byte order mark FF FE)" in said["receipt"]
    assert "the file is UTF-16 text (a NUL byte beside its first character)" in said["pub"]
    assert "the file is UTF-32 text (it starts with the byte order mark FF FE 00 00)" in said[
        "revoked"]
    assert "the file is UTF-16 text" in said["key"] and "PEM" not in said["key"]
    assert all("it must be UTF-8" in s for s in said.values()), said


def test_a_receipt_cut_short_says_so(tmp_path: Path) -> None:
    whole = receipt_json(Receipt.of(SITE.sign_head("m-1", 3, bytes(32)), seat=0))
    cut = tmp_path / "receipt.json"
    cut.write_bytes(whole[:150])
    with pytest.raises(SigningError) as caught:
        load_receipts([str(cut)])
    # it said "Input data was truncated"
    assert "the file ends inside its JSON, after byte 150: it was cut short" in str(caught.value)


# -- the audit's own settings --------------------------------------------------------------


def test_a_config_file_others_may_write_is_refused(tmp_path: Path) -> None:
    """The config file names the keys an audit trusts and whether it requires signatures:
    anyone who may write it could put a key of their own there (or take the requirement
    out), as anyone who may write a trusted `.pub` could, and that one is refused."""
    config = tmp_path / "config.toml"
    config.write_text('[audit]\nrequire_signatures = true\nkeys = "keys"\n')
    environ = {settings.CONFIG_ENV: str(config)}
    config.chmod(0o644)
    assert settings.require_signatures(environ=environ).value is True
    config.chmod(0o666)
    for read in (settings.require_signatures, settings.keys):
        with pytest.raises(settings.SettingsError) as caught:
            read(environ=environ)
        # it was read, and its keys trusted
        assert "a config file that others may write (mode 0666)" in str(caught.value)
        assert f"chmod o-w {config}" in str(caught.value)


# -- where the change lies, by the log's own signatures ---------------------------------------


def _noted(events: list[AnyEvent], seq: int) -> list[AnyEvent]:
    return [msgspec.structs.replace(e, note="edited") if e.seq == seq else e for e in events]


def _edited_at_33(signed: Path, edited: Path) -> Path:
    """``signed`` as JSON Lines with seq 33 edited and the signature lines left in place."""
    copy = edited.with_suffix(".copy.jsonl")
    jsonl.binary_to_jsonl(signed, copy)
    lines = copy.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '"seq":33}' in line)
    lines[at] = lines[at].replace('"seq":33}', '"seq":33,"note":"edited"}')
    edited.write_text("\n".join(line for line in lines if '"log": "end"' not in line) + "\n")
    return edited


def test_a_receipt_says_the_change_lies_after_the_sites_last_signature_that_verifies(
        tmp_path: Path) -> None:
    events = match(key_id=SITE.key_id)[:45]
    site = tmp_path / "site.blog"
    receipts = write_signed(site, events, SITE, batch=10, receipts_at=[19, 40])  # signs 9, 19
    edited = _edited_at_33(site, tmp_path / "edited.jsonl")
    found = [f for f in audit(edited, ring(SITE), [held(receipts[40])]).findings
             if f.rule == "sign.receipt_changed"]
    assert len(found) == 1, found
    # it said "an event in seq 0 to 40", where the integrity note said "after seq 29"
    assert "an event in seq 30 to 40 was changed after the site signed it; the site's own " \
           "signature after seq 29 in the log verifies" in found[0].message, found[0].message
    # Not so of a log whose chain holds: a keeper who holds the key can sign the edit anew,
    # and its last signature (seq 29) verifies with the change (seq 10) before it.
    edit = _noted(events, 10)
    kept = tmp_path / "kept.blog"
    write_signed(kept, edit[:30], SITE, batch=10)  # signs 9, 19, 29
    with log.Writer(kept, batched=True) as w:  # and events 30 to 44 unsigned
        for event in edit[30:]:
            w.append(event)
    found = [f for f in audit(kept, ring(SITE), [held(receipts[40])]).findings
             if f.rule == "sign.receipt_changed"]
    assert len(found) == 1 and "an event in seq 0 to 40 was changed" in found[0].message, found
    # Nor when a receipt those signatures cover disagrees: the keeper signed seq 10's edit
    # anew, then broke the chain after seq 29 to point past it.
    resigned = tmp_path / "resigned.blog"
    write_signed(resigned, _noted(events, 10), SITE, batch=10)
    edited = _edited_at_33(resigned, tmp_path / "resigned.jsonl")
    found = [f for f in audit(edited, ring(SITE), [held(receipts[19]), held(receipts[40])]
                              ).findings if f.rule == "sign.receipt_changed"]
    assert [f.seq for f in found] == [19, 40], found
    assert "an event in seq 0 to 40 was changed" in found[1].message, found


@pytest.mark.slow
def test_a_receipt_no_log_holds_names_a_log_whose_match_id_looks_the_same(
        tmp_path: Path) -> None:
    path, receipt = _renamed(tmp_path, "cafe\u0301")
    events = [msgspec.structs.replace(e, note="x") if e.seq == 5 else e
              for e in log.read_events(path)]
    changed = tmp_path / "logs" / "changed.blog"  # not the receipt's match renamed: changed too
    changed.parent.mkdir()
    with log.Writer(changed, batched=True) as w:
        for event in events:
            w.append(event)
    other = tmp_path / "logs" / "other.blog"
    write_signed(other, match("other", key_id=SITE.key_id)[:30], SITE, batch=300)
    keys = tmp_path / "site.pub"
    keys.write_bytes(msgspec.json.encode(SITE.public()))
    keys.chmod(0o644)
    receipt_file = tmp_path / "r20.json"
    receipt_file.write_bytes(receipt_json(receipt.receipt))
    r, = run_all(["audit", changed, other, "--keys", keys, "--receipt", receipt_file])
    assert r.code == 1
    # it said "the receipt is for match 'café', which none of the logs audited holds"
    assert r.err.strip().endswith(
        f"the receipt is for match 'caf\\xe9', which none of the logs audited holds ({changed} "
        "holds match 'cafe\\u0301', another id that looks the same)"), r.err
