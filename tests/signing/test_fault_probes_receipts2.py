"""A player's receipt against a log whose keeper also changed the key its start records.

A receipt is the site's signature of (match, seq, head). A keeper who rewrites a match can
also rewrite ``MatchStarted.key_id``: to its other trusted key (a site that rotates keys holds
two), or to none (a re-chained log with every signature stripped). The receipt must still be
judged by its own key and then against the log's chain: a head the site's key signed that the
log no longer has is proof of a change, never "not a valid signature of the site".
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

pytest.importorskip("cryptography")

from buraco_log import log
from buraco_log.events import AnyEvent
from buraco_log.signing.keys import Keyring, Signer
from buraco_log.signing.record import SignedHead
from tests.signing.helpers import audit, held, match, rules_of, write_signed

SITE = Signer.generate()
SITE_NEXT = Signer.generate()  # the site's second trusted key (rotation)
STRANGER = Signer.generate()
T2026 = 1_767_225_600_000  # 2026-01-01T00:00:00Z in ms
T2027 = 1_798_761_600_000  # 2027-01-01T00:00:00Z


def _events(key_id: str | None, at: int = T2026 + 1, note_at: int | None = None
            ) -> list[AnyEvent]:
    events = match(key_id=key_id)
    events[0] = msgspec.structs.replace(events[0], at=at)
    if note_at is not None:  # a change that moves no card: only the chain shows it
        events[note_at] = msgspec.structs.replace(events[note_at], note="edited")
    return events


def _original(tmp_path: Path) -> dict[int, SignedHead]:
    return write_signed(tmp_path / "orig.blog", _events(SITE.key_id), SITE,
                        receipts_at=[100, 200])


def _both() -> Keyring:
    return Keyring([SITE.public(valid_until="2027-01-01"), SITE_NEXT.public()])


def test_a_rewrite_signed_with_the_sites_other_key_is_proved_by_the_receipt(
        tmp_path: Path) -> None:
    receipts = _original(tmp_path)
    forged = tmp_path / "forged.blog"
    write_signed(forged, _events(SITE_NEXT.key_id, note_at=50), SITE_NEXT)
    v = audit(forged, _both(), [held(receipts[100])])
    # the log's own signatures are by a trusted key and verify: only the receipt shows it
    assert v.signing.verified is True
    assert rules_of(v) == ["sign.receipt_changed"]
    f = v.findings[0]
    assert f.seq == 100
    assert f.message.startswith("the receipt for seq 100 that seat 1 holds (seat1.json) does "
                                "not match the log: an event in seq 0 to 100 was changed")
    assert (f"the receipt is by trusted key {SITE.key_id}, the log's match start records key "
            f"{SITE_NEXT.key_id}") in f.message


def test_a_rewrite_cut_short_and_signed_with_the_other_key_is_a_cut(tmp_path: Path) -> None:
    receipts = _original(tmp_path)
    forged = tmp_path / "cut.blog"
    write_signed(forged, _events(SITE_NEXT.key_id)[:150], SITE_NEXT)
    v = audit(forged, _both(), [held(receipts[100]), held(receipts[200], seat=0)])
    # the start changed (its key id), so the head at 100 differs, and seq 200 is gone
    assert sorted(rules_of(v)) == ["sign.receipt_changed", "sign.receipt_cut"]
    cut = next(f for f in v.findings if f.rule == "sign.receipt_cut")
    assert cut.seq == 200 and "the log ends at seq 149 (it was cut, or is a copy" in cut.message


def test_a_rechained_log_with_its_key_id_and_signatures_stripped_is_proved_by_the_receipt(
        tmp_path: Path) -> None:
    receipts = _original(tmp_path)
    forged = tmp_path / "stripped.blog"
    log.write_log(forged, _events(None, note_at=50))  # anyone can write this: no key needed
    v = audit(forged, _both(), [held(receipts[100])])
    assert rules_of(v) == ["sign.receipt_changed"]
    assert "the log's match start records no key" in v.findings[0].message
    assert "not a valid signature" not in v.findings[0].message


def test_a_start_moved_past_the_receipts_key_retirement_does_not_discredit_it(
        tmp_path: Path) -> None:
    receipts = _original(tmp_path)  # started in 2026, signed with the key retiring in 2027
    forged = tmp_path / "moved.blog"
    write_signed(forged, _events(SITE_NEXT.key_id, at=T2027 + 5), SITE_NEXT)
    v = audit(forged, _both(), [held(receipts[100])])
    assert rules_of(v) == ["sign.receipt_changed"]
    assert (f"key {SITE.key_id} was retired at 2027-01-01, before the match started "
            "(2027-01-01T00:00:00+00:00, 5 ms later) (as this log records its start)"
            ) in v.findings[0].message


def test_the_untouched_log_extends_the_receipt_whatever_other_keys_are_trusted(
        tmp_path: Path) -> None:
    receipts = _original(tmp_path)
    v = audit(tmp_path / "orig.blog", _both(), [held(receipts[100]), held(receipts[200])])
    assert v.ok and v.signing.verified is True and v.signing.receipts == 2


def test_a_receipt_no_trusted_key_made_is_still_no_proof(tmp_path: Path) -> None:
    receipts = _original(tmp_path)
    forged = tmp_path / "forged.blog"
    write_signed(forged, _events(SITE_NEXT.key_id, note_at=50), SITE_NEXT)
    fake = STRANGER.sign_head(receipts[100].match_id, 100, receipts[100].head)
    v = audit(forged, _both(), [held(fake)])
    assert rules_of(v) == ["sign.receipt_invalid"]
    assert f"key {STRANGER.key_id} is not among the trusted keys" in v.findings[0].message
    # a receipt under the site's key id whose signature is not the site's
    bad = msgspec.structs.replace(receipts[100], signature=bytes(64))
    v = audit(forged, _both(), [held(bad)])
    assert rules_of(v) == ["sign.receipt_invalid"]
    assert "does not verify" in v.findings[0].message
    # a revoked key's receipt proves nothing, whatever the log holds
    revoked = Keyring([SITE.public(), SITE_NEXT.public()], revoked=[SITE.key_id])
    v = audit(forged, revoked, [held(receipts[100])])
    assert rules_of(v) == ["sign.receipt_invalid"]
    assert f"key {SITE.key_id} is revoked" in v.findings[0].message


def test_the_trust_rule_comes_from_the_keyring_not_from_the_key_ids_words(
        tmp_path: Path) -> None:
    """A log chooses the key id its records name: one spelled 'is revoked' was classed
    sign.revoked (the reason's words were searched), though no such key is known at all."""
    liar = Signer(STRANGER._key)
    liar.key_id = "is revoked"
    path = tmp_path / "liar.blog"
    write_signed(path, _events(liar.key_id), liar)
    v = audit(path, _both())
    assert rules_of(v) == ["sign.untrusted"]
    assert v.findings[0].message.startswith(
        "the signature after seq 0 (the log's first): key is revoked is not among the trusted "
        "keys: it shows nothing of what the site signed")
    # and a key that is revoked is still named so
    revoked = Keyring([SITE.public(), SITE_NEXT.public()], revoked=[SITE.key_id])
    write_signed(tmp_path / "site.blog", _events(SITE.key_id), SITE)
    assert rules_of(audit(tmp_path / "site.blog", revoked)) == ["sign.revoked"]


def test_signatures_in_a_log_whose_start_records_no_key_are_one_finding(
        tmp_path: Path) -> None:
    """The missing key id was reported twice: once for the log, once more for its first
    signature ('the match start records key None')."""
    events = _events(None)
    path = tmp_path / "nokey.blog"
    with log.Writer(path) as w:
        for e in events:
            w.append(e)
        w.put_signature(SITE.sign_head(receipts_match(events), events[-1].seq,
                                       bytes.fromhex(w.head)))
    v = audit(path, _both())
    assert rules_of(v) == ["sign.key_mismatch"]
    assert v.findings[0].message.startswith("the log holds 1 signature record(s) but its "
                                            "match start names no signing key (key_id)")
    assert v.findings[0].seq == 0


def receipts_match(events: list[AnyEvent]) -> str:
    start = events[0]
    assert hasattr(start, "match_id")
    return str(start.match_id)


def test_a_log_cut_and_given_a_new_end_says_its_end_was_rewritten(tmp_path: Path) -> None:
    """A keeper who cuts the match and writes a match end after the cut (signing it with its
    own key) leaves a complete-looking log: 'it was cut' understated it."""
    from buraco_log.events import MatchEnded

    receipts = _original(tmp_path)
    events = _events(SITE.key_id)
    end = events[-1]
    assert isinstance(end, MatchEnded)
    short = [*events[:150], msgspec.structs.replace(end, seq=150, totals=None, winner=None)]
    forged = tmp_path / "short.blog"
    with log.Writer(forged, signer=SITE, validate=False) as w:  # the end is illegal there
        for e in short:
            w.append(e)
    v = audit(forged, _both(), [held(receipts[200])])
    cut = [f for f in v.findings if f.rule == "sign.receipt_cut"]
    assert len(cut) == 1 and cut[0].seq == 200
    assert cut[0].message.endswith(
        "the log ends at seq 150 (it was cut and its end rewritten: it ends with MatchEnded)")


def test_two_genuine_receipts_for_one_seq_with_different_heads_name_each_other(
        tmp_path: Path) -> None:
    """The site showed one player a version of the match and another player another one: both
    receipts are its signatures. The one the log does not extend says the other does."""
    receipts = _original(tmp_path)
    other = tmp_path / "other.blog"
    other_receipts = write_signed(other, _events(SITE.key_id, note_at=50), SITE,
                                  receipts_at=[100])
    v = audit(tmp_path / "orig.blog", _both(),
              [held(receipts[100], seat=0), held(other_receipts[100], seat=1)])
    assert rules_of(v) == ["sign.receipt_changed"]
    assert ("does not match the log, and the receipt for seq 100 that seat 0 holds "
            "(seat0.json) signs the log's head there: the site's writer signed two different "
            "histories of match ") in v.findings[0].message
    assert "(two different heads at seq 100)" in v.findings[0].message
    assert "was changed after the site signed it" not in v.findings[0].message
    # alone, the odd receipt is a change, and names no other
    v = audit(tmp_path / "orig.blog", _both(), [held(other_receipts[100], seat=1)])
    assert rules_of(v) == ["sign.receipt_changed"] and "two different" not in v.findings[0].message
