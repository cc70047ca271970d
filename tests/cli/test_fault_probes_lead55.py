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


# --- audit --head: the head digest published for a match -----------------------------------

def _golden() -> list:  # type: ignore[type-arg]
    return list(read_jsonl(GOLDEN))


def test_a_published_head_is_found_as_the_logs_head_a_prefix_of_it_or_an_earlier_head() -> None:
    from buraco_log import log
    from buraco_log.audit.heads import check_published_head
    from buraco_log.events import FORMAT_VERSION

    events = _golden()
    head = log.head_digest(events)
    assert check_published_head(events, FORMAT_VERSION, head) == (None, None)
    assert check_published_head(events, FORMAT_VERSION, head[:16].upper()) == (None, None)
    earlier = log.head_digest(events[:11])  # published after seq 10: the log went on
    finding, note = check_published_head(events, FORMAT_VERSION, earlier)
    assert finding is None and note is not None
    assert "after seq 10" in note and f"{len(events) - 11} more events" in note


def test_a_published_head_the_log_holds_nowhere_is_log_head_changed() -> None:
    import msgspec

    from buraco_log import log
    from buraco_log.audit.heads import check_published_head
    from buraco_log.events import FORMAT_VERSION, Player

    events = _golden()
    published = log.head_digest(events)
    start = events[0]
    renamed = (Player("mallory"), *start.players[1:])  # type: ignore[union-attr]
    edited = [msgspec.structs.replace(start, players=renamed), *events[1:]]  # type: ignore[type-var]
    finding, note = check_published_head(edited, FORMAT_VERSION, published)
    assert note is None and finding is not None
    assert finding.rule == "log.head_changed" and finding.section == "integrity"
    assert published[:16] in finding.message


def test_audit_head_catches_a_sealed_log_edited_with_its_chain_recomputed(tmp_path: Path) -> None:
    """Without --head such a log audits OK (every byte consistent); with the head published
    for the match it is a finding, exit 1."""
    import subprocess
    import sys

    import msgspec

    from buraco_log import log
    from buraco_log.events import Player

    events = _golden()
    published = log.head_digest(events)
    start = events[0]
    renamed = (Player("mallory"), *start.players[1:])  # type: ignore[union-attr]
    edited = tmp_path / "edited.blog"
    with log.Writer(edited) as w:
        for e in [msgspec.structs.replace(start, players=renamed), *events[1:]]:
            w.append(e)
    from buraco_log import audit

    assert audit.audit_log(edited).ok  # the gap --head closes: every byte is consistent
    cli = [sys.executable, "-m", "cli"]
    checked = subprocess.run([*cli, "audit", str(edited), "--head", published],
                             capture_output=True, text=True, timeout=120)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "[log.head_changed]" in checked.stdout and published[:16] in checked.stdout
