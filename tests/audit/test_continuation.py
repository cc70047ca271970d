"""A resumed match checked against the log it goes on from (``audit.continuation``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from msgspec.structs import replace

from buraco_log import jsonl, log
from buraco_log.audit.continuation import check_continuation, continuation
from buraco_log.events import AnyEvent, MatchStarted, Player, TotalsCarried
from buraco_log.reducer import replay
from buraco_log.rules import derive
from tests.play import random_match

RULES = derive("classic", target_score=5000)  # two hands never decide it


def _earlier(hands: int = 2) -> list[AnyEvent]:
    """A match stopped between hands after ``hands`` hands (no MatchEnded)."""
    events = random_match(RULES, 2, 11, max_hands=hands + 1, eager=True)
    end = replay(events).results[hands - 1].end_seq
    return events[: end + 1]


def _later(earlier: list[AnyEvent], totals: tuple[int, ...] | None, **start: object
           ) -> list[AnyEvent]:
    first = earlier[0]
    assert isinstance(first, MatchStarted)
    resumed = replace(first, **start) if start else first
    out: list[AnyEvent] = [resumed]
    if totals is not None:
        out.append(TotalsCarried(totals, seq=1))
    return out


def _stopped_at(events: list[AnyEvent]) -> tuple[int, ...]:
    totals = replay(events).totals
    assert any(totals), totals  # the seed gives hands that scored: a zero total proves nothing
    return tuple(totals)


def test_the_totals_the_earlier_log_reached_are_accepted() -> None:
    before = _earlier()
    assert check_continuation(before, _later(before, _stopped_at(before))) == []


@pytest.mark.parametrize("delta", [1, -1, 100])
def test_other_totals_are_a_finding_naming_both(delta: int) -> None:
    before = _earlier()
    reached = _stopped_at(before)
    wrong = (reached[0] + delta, *reached[1:])
    [f] = check_continuation(before, _later(before, wrong))
    assert f.rule == "continuation.totals" and f.seq == 1, f
    assert ", ".join(map(str, wrong)) in f.message
    assert ", ".join(map(str, reached)) in f.message and "after 2 hands" in f.message


def test_a_later_log_without_carried_totals_starts_from_zero_and_says_so() -> None:
    before = _earlier()
    [f] = check_continuation(before, _later(before, None))
    assert f.rule == "continuation.totals" and "carries no totals" in f.message, f


def test_an_earlier_log_stopped_mid_hand_is_a_finding() -> None:
    before = _earlier()
    cut = before[:-3]  # the second hand's end and two moves before it
    found = check_continuation(cut, _later(cut, _stopped_at(before)))
    assert [f.rule for f in found] == ["continuation.mid_hand"], found
    assert "hand 1" in found[0].message


def test_an_earlier_match_that_was_decided_cannot_be_resumed() -> None:
    rules = derive("classic", target_score=50, vulnerability=False)
    events = random_match(rules, 2, 3, max_hands=5, eager=True)
    state = replay(events)
    assert state.phase in ("decided", "over")
    found = check_continuation(events, _later(events, tuple(state.totals)))
    assert [f.rule for f in found] == ["continuation.ended"], found


def test_other_rules_or_seats_are_findings() -> None:
    before = _earlier()
    reached = _stopped_at(before)
    first = before[0]
    assert isinstance(first, MatchStarted)
    found = check_continuation(before, _later(before, reached,
                                              rules=replace(RULES, target_score=4000)))
    assert [f.rule for f in found] == ["continuation.rules"] and "other knobs" in found[0].message
    swapped = tuple(reversed(first.players))
    found = check_continuation(before, _later(before, reached, players=swapped))
    assert [f.rule for f in found] == ["continuation.players"], found
    assert "p1 (side 0)" in found[0].message
    other = (Player("p0"), Player("intruder"))
    assert [f.rule for f in check_continuation(before, _later(before, reached,
                                                              players=other))] == [
        "continuation.players"]


def test_the_deal_passes_on_from_the_earlier_logs_last_dealer() -> None:
    before = _earlier()  # two hands from seat 0: the third deal is seat 0's again
    first = before[0]
    assert isinstance(first, MatchStarted) and first.first_dealer == 0
    reached = _stopped_at(before)
    [f] = check_continuation(before, _later(before, reached, first_dealer=1))
    assert f.rule == "continuation.dealer" and "seat 0" in f.message, f
    once = _earlier(hands=1)
    assert check_continuation(once, _later(once, _stopped_at(once), first_dealer=1)) == []
    [f] = check_continuation(once, _later(once, _stopped_at(once)))
    assert f.rule == "continuation.dealer" and "passes to seat 1" in f.message, f


def test_an_illegal_earlier_log_is_named_with_its_seq() -> None:
    before = _earlier()
    bad = [*before[:5], replace(before[5], seq=before[5].seq + 7)]
    [f] = check_continuation(bad, _later(before, _stopped_at(before)))
    assert f.rule == "continuation.earlier_log" and "illegal at seq" in f.message, f


def test_logs_without_a_start_are_named() -> None:
    before = _earlier()
    assert check_continuation([], before)[0].rule == "continuation.earlier_log"
    assert "later log" in check_continuation(before, [])[0].message


def test_from_files_a_damaged_earlier_log_is_a_finding(tmp_path: Path) -> None:
    before = _earlier()
    a, b = tmp_path / "a.blog", tmp_path / "b.jsonl"
    log.write_log(a, before)
    log.write_log(tmp_path / "b.blog", _later(before, _stopped_at(before)))
    jsonl.binary_to_jsonl(tmp_path / "b.blog", b)  # the later log in the other form
    assert continuation(a, b) == []
    data = bytearray(a.read_bytes())
    data[-10] ^= 0xFF  # the last record's bytes: the intact prefix stops mid-hand
    a.write_bytes(bytes(data))
    rules = [f.rule for f in continuation(a, b)]
    assert rules[0] == "continuation.earlier_log", rules
