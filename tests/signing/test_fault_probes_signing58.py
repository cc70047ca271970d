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
from buraco_log.audit import SigningOptions, audit_many
from buraco_log.audit.diff import diff_events
from buraco_log.events import MatchStarted
from buraco_log.safetext import apart, lookalike
from buraco_log.signing.check import HeldReceipt
from buraco_log.signing.keys import Signer
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
