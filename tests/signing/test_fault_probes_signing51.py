"""Times in signing: key windows, revocations and the log's own dates against the clock.

A log holds no trusted clock; its times are the writer's word. A key's window is judged by the
match start the log records (``valid_from <= start < valid_until``, docs/signing.md). Before:
a window bound at a leap second (``23:59:60``) or at the day's end (``24:00``), both ISO 8601,
refused the key as "public key or validity is malformed" (and `keys new` as "not an ISO 8601
date or time"); a bound finer than a millisecond was rounded down, so a start one tick before
it was inside; a bound written in another zone was quoted beside the start's UTC time with no
UTC of its own; a revoked line with a date was "not a key id"; a log dated years after the
auditing machine's clock, or signed with a key for months after it retired, audited OK
without a word.
"""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import msgspec
import pytest

pytest.importorskip("cryptography")

from buraco_log import jsonl, log
from buraco_log.events import AnyEvent
from buraco_log.signing import keys
from buraco_log.signing.check import HeldReceipt
from buraco_log.signing.keys import Keyring, Signer, SigningError
from tests.signing.helpers import audit, held, match, ring, rules_of, write_signed

SITE = Signer.generate()


def _ms(text: str) -> int:
    return int(dt.datetime.fromisoformat(text).timestamp() * 1000)


def _dated(start: int, step: int = 60_000) -> list[AnyEvent]:
    """The match, its start recording SITE's key, dated from ``start`` (ms), ``step`` apart."""
    return [msgspec.structs.replace(e, at=start + i * step)
            for i, e in enumerate(match(key_id=SITE.key_id))]


def _verdict_of(tmp_path: Path, start: int, valid_from: str | None = None,
                valid_until: str | None = None, step: int = 60_000) -> tuple[list[str], str]:
    path = tmp_path / f"m{start}-{step}.blog"
    if not path.exists():
        write_signed(path, _dated(start, step), SITE, sign_at="end", batch=1000)  # one fsync
    v = audit(path, Keyring([SITE.public(valid_from, valid_until)]))
    return rules_of(v), " | ".join([f.message for f in v.findings] + list(v.notes))


def test_a_window_ending_at_a_leap_second_is_a_time_and_bounds_the_start(
        tmp_path: Path) -> None:
    leap = "2016-12-31T23:59:60Z"  # as the leap-second bulletin dates it
    assert keys.key_problem(SITE.public(None, leap)) is None  # was "validity is malformed"
    # POSIX time counts 23:59:60 as the next midnight: the last start inside is a tick before
    assert _verdict_of(tmp_path, _ms("2016-12-31T23:59:59.999+00:00"), None, leap)[0] == []
    rules, said = _verdict_of(tmp_path, _ms("2017-01-01T00:00:00+00:00"), None, leap)
    assert rules == ["sign.key_window"], said
    assert "retired at 2016-12-31T23:59:60Z (2017-01-01T00:00:00+00:00)" in said


def test_keys_new_takes_a_leap_second_and_the_end_of_a_day(tmp_path: Path) -> None:
    # `keys new --valid-from ... --valid-until ...` is this call; it said "validity
    # '2027-06-30T23:59:60Z' is not an ISO 8601 date or time"
    keys.write_key_pair(tmp_path, "site", valid_from="2026-12-31T24:00",
                        valid_until="2027-06-30T23:59:60Z")
    ring = keys.load_keyring([tmp_path / "site.pub"])
    (key,) = ring.keys.values()
    assert key.window() == (_ms("2027-01-01T00:00:00+00:00"), _ms("2027-07-01T00:00:00+00:00"))
    with pytest.raises(SigningError) as err:  # what is no time still says so
        keys.write_key_pair(tmp_path, "other", valid_until="2027-06-30T23:59:61Z")
    assert "validity '2027-06-30T23:59:61Z' is not an ISO 8601 date or time" in str(err.value)


def test_a_bound_finer_than_a_millisecond_is_not_rounded_into_the_window(
        tmp_path: Path) -> None:
    start = _ms("2026-03-01T12:00:00+00:00")
    # the start (whole ms) lies half a millisecond before the key's first moment
    rules, said = _verdict_of(tmp_path, start, "2026-03-01T12:00:00.0005Z")
    assert rules == ["sign.key_window"], said
    assert _verdict_of(tmp_path, start + 1, "2026-03-01T12:00:00.0005Z")[0] == []


def test_a_bound_in_another_zone_or_none_is_said_in_utc_beside_the_start(
        tmp_path: Path) -> None:
    start = _ms("2026-12-31T23:00:00+00:00")
    rules, said = _verdict_of(tmp_path, start, "2027-01-01T05:30:00+05:30")
    assert rules == ["sign.key_window"]
    assert ("valid from 2027-01-01T05:30:00+05:30 (2027-01-01T00:00:00+00:00), after the match "
            "started (2026-12-31T23:00:00+00:00, 60 minutes earlier)") in said
    # a bound with no zone is UTC, and said so
    rules, said = _verdict_of(tmp_path, start, None, "2026-12-31T23:00:00")
    assert rules == ["sign.key_window"]
    assert "retired at 2026-12-31T23:00:00 (2026-12-31T23:00:00+00:00)" in said
    # the same instant written in New York's zone: the start is inside
    assert _verdict_of(tmp_path, start, "2026-12-31T18:00:00-05:00")[0] == []


def test_a_window_past_2038_bounds_the_start_to_the_millisecond(tmp_path: Path) -> None:
    y2038 = 2**31 * 1000  # 2038-01-19T03:14:08Z, where a 32-bit time_t ends
    assert _verdict_of(tmp_path, y2038, "2038-01-19T03:14:08Z", "2106-02-07T06:28:16Z")[0] == []
    rules, said = _verdict_of(tmp_path, y2038 - 1, "2038-01-19T03:14:08Z")
    assert rules == ["sign.key_window"] and "(2038-01-19T03:14:07+00:00, 1 ms earlier)" in said


def test_a_malformed_window_names_its_field_and_value() -> None:
    with pytest.raises(SigningError) as err:
        Keyring([SITE.public("2027-13-01")])
    assert "valid_from is malformed: '2027-13-01' is not an ISO 8601 date" in str(err.value)
    with pytest.raises(SigningError) as err:
        Keyring([SITE.public(None, "tomorrow")])
    assert "valid_until is malformed: 'tomorrow' is not an ISO 8601" in str(err.value)


def test_a_revoked_line_with_a_date_says_a_revocation_has_none(tmp_path: Path) -> None:
    ring = tmp_path / "keys"
    ring.mkdir()
    (ring / "site.pub").write_bytes(msgspec.json.encode(SITE.public()))
    (ring / "revoked").write_text(f"{SITE.key_id} 2026-03-01\n")
    with pytest.raises(SigningError) as err:
        keys.load_keyring([ring])
    said = str(err.value)
    assert f"revoked, line 1: '{SITE.key_id} 2026-03-01' is not a key id alone" in said
    assert "a revocation has no date" in said


def test_a_dated_revocation_in_a_json_keyring_says_a_revocation_has_none(tmp_path: Path
                                                                        ) -> None:
    """It said "not a buraco-log key file: Expected `str`, got `object`" of an object, and
    of a key id with a date told the user to put a note after # (JSON has no comments)."""
    public = msgspec.json.decode(msgspec.json.encode(SITE.public()))
    ring = tmp_path / "ring.json"
    for revoked in ({"key_id": SITE.key_id, "at": "2026-03-01"}, f"{SITE.key_id} 2026-03-01"):
        ring.write_bytes(msgspec.json.encode({"keys": [public], "revoked": [revoked]}))
        with pytest.raises(SigningError) as err:
            keys.load_keyring([ring])
        said = str(err.value)
        assert said.startswith(f"{ring}") and "a revocation has no date" in said, said
        assert "#" not in said, said


def test_a_key_revoked_is_revoked_even_for_a_match_dated_before_its_window(
        tmp_path: Path) -> None:
    """The revocation "dated" before the key's start: revocations carry no date, so the
    verdict is the revocation, not the window."""
    path = tmp_path / "early.blog"
    write_signed(path, _dated(_ms("2025-01-01T00:00:00+00:00")), SITE, sign_at="end",
                 batch=1000)
    v = audit(path, Keyring([SITE.public("2026-01-01", None)], [SITE.key_id]))
    assert rules_of(v) == ["sign.revoked"], v.findings


def test_one_key_with_two_overlapping_windows_is_refused_naming_both_files(
        tmp_path: Path) -> None:
    ring = tmp_path / "keys"
    ring.mkdir()
    (ring / "a.pub").write_bytes(msgspec.json.encode(SITE.public("2026-01-01", "2027-01-01")))
    (ring / "b.pub").write_bytes(msgspec.json.encode(SITE.public("2026-06-01", "2027-06-01")))
    with pytest.raises(SigningError) as err:
        keys.load_keyring([ring])
    said = str(err.value)
    assert said.startswith(f"{ring / 'b.pub'}: key {SITE.key_id} is published twice"), said
    assert f"(also in {ring / 'a.pub'})" in said


def test_a_log_dated_in_the_future_is_noted_with_how_far(tmp_path: Path) -> None:
    now = time.time_ns() // 1_000_000
    rules, said = _verdict_of(tmp_path, now + 3 * 365 * 86400_000)
    assert rules == []  # a note: the referee's clock may be the one that is wrong
    assert "time: the log dates seq " in said
    assert " years after this machine's clock (" in said
    # a clock a minute fast is within the slack (five minutes), and says nothing
    _, said = _verdict_of(tmp_path, now + 60_000, step=0)
    assert "time:" not in said


def test_a_key_used_for_months_after_it_retired_is_noted(tmp_path: Path) -> None:
    """The match started inside the window, then its events (signed) run on for months."""
    start = _ms("2026-12-31T23:00:00+00:00")
    rules, said = _verdict_of(tmp_path, start, None, "2027-01-01", step=86400_000)
    assert rules == []
    assert "signing: key " in said and "retired at 2027-01-01; the match started inside" in said
    assert "days later)" in said
    # a match that ends inside the window says nothing of it
    _, said = _verdict_of(tmp_path, start, None, "2027-12-01")
    assert "retired" not in said


# -- conversions: what survives convert, seal and repair (docs/signing.md) -----------------

MODES: dict[str, dict[str, object]] = {
    "per append": {}, "batched": {"batch": 7}, "signed at the end": {"sign_at": "end"},
    "unsealed": {"sealed": False}, "unsealed, batched": {"sealed": False, "batch": 5}}
SLOW = pytest.mark.slow  # an fsync per event: the batched forms stand for them by default


def _signed_with_receipts(tmp_path: Path, mode: str, name: str = "site.blog"
                          ) -> tuple[Path, list[HeldReceipt]]:
    path = tmp_path / name
    got = write_signed(path, match(key_id=SITE.key_id), SITE, receipts_at=(40, 100, 200),
                       **MODES[mode])  # type: ignore[arg-type]
    return path, [held(signed, seat=seq % 2) for seq, signed in got.items()]


@pytest.mark.parametrize("mode", [pytest.param(m, marks=SLOW if m in (
    "per append", "unsealed", "signed at the end") else ()) for m in MODES])
def test_a_signed_log_converted_both_ways_keeps_every_signature_and_receipt(
        tmp_path: Path, mode: str) -> None:
    """Signatures and receipts sign (match id, seq, chain head): neither the form nor how the
    events are grouped in segments. A conversion that keeps the events keeps them valid."""
    site, receipts = _signed_with_receipts(tmp_path, mode)
    original = audit(site, ring(SITE), receipts, required=True)
    assert original.ok and original.signing is not None, original.findings
    as_jsonl = tmp_path / "site.jsonl"
    jsonl.convert(site, as_jsonl, "jsonl")
    back = tmp_path / "back.blog"
    jsonl.convert(as_jsonl, back, "binary")
    for copy in (as_jsonl, back):
        v = audit(copy, ring(SITE), receipts, required=True)
        assert v.ok, (copy.name, v.findings)
        assert v.signing == original.signing  # every signature, verified, 3 receipts checked
        assert v.integrity.head == original.integrity.head


def test_sealing_a_signed_log_keeps_its_signatures_and_receipts(tmp_path: Path) -> None:
    site, receipts = _signed_with_receipts(tmp_path, "unsealed, batched")
    before = audit(site, ring(SITE), receipts, required=True)
    log.seal(site)
    after = audit(site, ring(SITE), receipts, required=True)
    assert after.ok and after.integrity.status == "sealed", after.findings
    assert after.signing == before.signing


def test_a_repaired_signed_log_keeps_the_signatures_before_the_cut(tmp_path: Path) -> None:
    """A crash tore the log after seq 150: repair cuts the torn record off. The receipts
    before the cut still verify; the one for seq 200 shows the site signed more than the log
    kept (with the repair's .bak named), and the unsigned event past the last signature is a
    finding when signatures are required, said in the singular."""
    site, receipts = _signed_with_receipts(tmp_path, "unsealed")
    data = site.read_bytes()
    site.write_bytes(data[:int(len(data) * 0.6) + 3])  # inside the record after seq 156
    assert log.repair(site) is not None
    v = audit(site, ring(SITE), receipts, required=True)
    assert v.signing is not None and v.signing.verified and v.signing.last_signed_seq == 155
    by_rule = {f.rule: f.message for f in v.findings if f.section == "signing"}
    assert sorted(by_rule) == ["sign.end_missing", "sign.receipt_cut", "sign.tail_unsigned"]
    assert "the receipt for seq 200 " in by_rule["sign.receipt_cut"]
    assert by_rule["sign.tail_unsigned"].startswith(
        "event 156 is signed by no signature (the last signs seq 155)")  # was "events 156 to 156"
    assert any("repaired after a crash" in n for n in v.notes), v.notes


def test_a_receipt_given_a_time_is_refused_as_a_field_its_signature_does_not_cover(
        tmp_path: Path) -> None:
    """A receipt carries no time (so none can be dated in the future): a time a player or a
    server added is no part of what the site signed."""
    from buraco_log.signing.check import load_receipts
    from buraco_log.signing.record import Receipt

    signed = SITE.sign_head("m-1", 40, bytes(32))
    path = tmp_path / "dated.json"
    path.write_bytes(msgspec.json.encode(dict(msgspec.structs.asdict(Receipt.of(signed, 1)),
                                              at="2099-01-01T00:00:00Z")))
    with pytest.raises(SigningError) as err:
        load_receipts([str(path)])
    said = str(err.value)
    assert "unknown field `at`" in said and "which its signature does not cover" in said
