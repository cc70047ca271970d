"""Properties over random simulated matches: however a log is signed and batched, it verifies
against every receipt handed out mid-match, and a log cut before a receipt's seq, or changed at
or before it, is caught by that receipt."""

from __future__ import annotations

import tempfile
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("cryptography")

from buraco_log import log
from buraco_log.signing import keys
from tests.signing.helpers import audit, held, match, ring, rules_of, write_signed

SIGNER = keys.Signer.generate()
TRUSTED = ring(SIGNER)
PRESETS = ("thirteen-quick", "classic", "burako")


@st.composite
def plans(draw: st.DrawFn) -> tuple[str, str, str, int, list[int], int]:
    seed = f"prop-{draw(st.integers(0, 10_000))}"
    rules = draw(st.sampled_from(PRESETS))
    sign_at = draw(st.sampled_from(["segment", "end"]))
    batch = draw(st.sampled_from([0, 1, 7, 64]))
    n = len(match(seed, rules))
    receipts = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=5, unique=True))
    cut = draw(st.integers(1, n - 1))
    return seed, rules, sign_at, batch, sorted(receipts), cut


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(plans())
def test_a_signed_match_extends_its_receipts_and_a_cut_or_edit_before_one_is_caught(
        plan: tuple[str, str, str, int, list[int], int]) -> None:
    seed, rules, sign_at, batch, at, cut = plan
    events = match(seed, rules, key_id=SIGNER.key_id)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.blog"
        receipts = write_signed(path, events, SIGNER, sign_at=sign_at,  # type: ignore[arg-type]
                                batch=batch, receipts_at=at)
        held_receipts = [held(receipts[s], seat=s % 2) for s in at]
        v = audit(path, TRUSTED, held_receipts, required=True)
        assert v.ok, v.findings
        assert v.signing.verified and v.signing.last_signed_seq == events[-1].seq
        # Cut after `cut` events (a prefix, rewritten with a new chain and no key).
        short = Path(tmp) / "short.blog"
        log.write_log(short, events[:cut], validate=False)
        found = audit(short, TRUSTED, held_receipts)
        cut_rules = [f.seq for f in found.findings if f.rule == "sign.receipt_cut"]
        assert cut_rules == [s for s in at if s >= cut]
        assert "sign.receipt_changed" not in rules_of(found)  # a prefix extends them all
        # Change one event at or before the last receipt: that receipt, and every later one,
        # catches it.
        k = min(cut, at[-1])
        edited = list(events)
        edited[k] = msgspec.structs.replace(events[k], note="changed")
        forged = Path(tmp) / "forged.blog"
        log.write_log(forged, edited, validate=False)
        changed = audit(forged, TRUSTED, held_receipts)
        assert [f.seq for f in changed.findings if f.rule == "sign.receipt_changed"] == [
            s for s in at if s >= k]
