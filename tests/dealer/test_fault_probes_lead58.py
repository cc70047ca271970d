"""Lead probes of round 58: a deal stamped before its commitment, read by a referee."""

from __future__ import annotations

import msgspec

from buraco_log.dealer import check_deals
from buraco_log.events import HandStarted
from tests import brokenlogs as bl


def test_a_deal_stamped_before_its_commitment_names_both_times_and_a_clock_gone_back() -> None:
    """A writer whose clock stepped back an hour after the match start stamps the first deal
    before the commitment; the stream still puts the commitment first. The finding stays (the
    stamps are all a log says of time), but it names both times readably and both causes, not
    raw milliseconds that read as a cheat alone."""
    events = bl.fair_match("thirteen-quick", 2, 1)
    start_at = 1_765_000_000_000
    events[0] = msgspec.structs.replace(events[0], at=start_at)
    i = next(i for i, e in enumerate(events) if isinstance(e, HandStarted))
    events[i] = msgspec.structs.replace(events[i], at=start_at - 3_600_000)
    (late,) = [f for f in check_deals(events) if f.rule == "deal.commitment_late"]
    assert "2025-12-06 05:46:40.000 UTC (1765000000000)" in late.message
    assert "2025-12-06 04:46:40.000 UTC (1764996400000)" in late.message
    assert f"deal at seq {events[i].seq}" in late.message
    assert "clock went back" in late.message and "written after that deal" in late.message
