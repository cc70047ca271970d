"""The table text before the first deal: no "hand -1", and no dealer the state never dealt."""

from __future__ import annotations

from pathlib import Path

from buraco_log.jsonl import read_jsonl
from buraco_log.reducer import state_at
from buraco_log.timeline import table_view
from cli.dispute_cmd import render_table

GOLDEN = Path(__file__).resolve().parents[2] / "examples" / "golden" / "classic.jsonl"


def test_the_table_before_the_first_deal_says_no_hand_is_dealt_and_names_no_dealer() -> None:
    events = list(read_jsonl(GOLDEN))
    first = events[0].first_dealer  # type: ignore[union-attr]
    assert first != 0  # the state's dealer before any deal is 0: it would read as a seat
    before = next(render_table(table_view(state_at(events, 0))))
    assert "hand -1" not in before and "no hand dealt yet" in before
    assert "dealer" not in before
    dealt = next(render_table(table_view(state_at(events, 1))))
    assert "hand 0  phase draw" in dealt and f"dealer: seat {first}" in dealt
