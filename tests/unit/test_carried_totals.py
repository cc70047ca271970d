"""A match that goes on from carried-over side totals (``TotalsCarried``, issue 14 item 5)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from msgspec.structs import replace

from buraco_log import jsonl, log
from buraco_log.errors import IllegalMoveError
from buraco_log.events import AnyEvent, TotalsCarried, decode, encode
from buraco_log.reducer import Replayer, replay
from buraco_log.rules import derive
from tests.play import deal, random_match, start


def _given(*events: AnyEvent) -> Replayer:
    r = Replayer()
    for e in events:
        r.step(e)
    return r


def test_a_match_goes_on_from_carried_totals_and_vulnerability_follows_from_them() -> None:
    rules = derive("biriba")  # vulnerable at 750
    r = _given(start(rules, 2), TotalsCarried((800, 200), seq=1))
    assert r.state().totals == (800, 200)
    r.step(deal(rules, 2, 0, 0, random.Random(1), seq=2))
    assert r.state().vulnerable == (True, False)


def test_without_carried_totals_a_match_starts_from_zero() -> None:
    rules = derive("biriba")
    r = _given(start(rules, 2), deal(rules, 2, 0, 0, random.Random(1), seq=1))
    assert r.state().totals == (0, 0) and r.state().vulnerable == (False, False)


def test_the_match_ends_when_the_carried_totals_plus_a_hand_reach_the_target() -> None:
    rules = derive("classic", target_score=300, vulnerability=False)
    events = random_match(rules, 2, 7, max_hands=1, eager=True)
    hand = replay(events).results[0]
    best = max(range(2), key=lambda side: hand.scores[side].total)
    gained = hand.scores[best].total
    assert 0 < gained < 300  # the seed gives a hand that alone does not decide the match
    carried = [0, 0]
    carried[best] = 300 - gained  # this hand takes the side exactly to the target
    resumed = [events[0], TotalsCarried(tuple(carried), seq=1)] + [
        replace(e, seq=e.seq + 1) for e in events[1:] if e.seq <= hand.end_seq
    ]
    state = _given(*resumed).state()
    assert state.totals[best] == 300 and state.phase == "decided" and state.winner == best
    without = _given(*events[: hand.end_seq + 1]).state()
    assert without.phase == "between"  # the same hand from zero leaves the match open


@pytest.mark.parametrize(
    ("totals", "why"),
    [((100,), "1 totals for 2 sides"), ((1, 2, 3), "3 totals for 2 sides"),
     ((1600, 200), "already decide the match")],
)
def test_carried_totals_must_fit_the_sides_and_leave_the_match_open(
    totals: tuple[int, ...], why: str
) -> None:
    rules = derive("biriba")
    r = _given(start(rules, 2))
    with pytest.raises(IllegalMoveError) as exc:
        r.step(TotalsCarried(totals, seq=1))
    assert exc.value.rule == "match.carried_totals" and why in str(exc.value)
    assert r.state().totals == (0, 0)


def test_carried_totals_come_only_before_the_first_hand() -> None:
    rules = derive("biriba")
    r = _given(start(rules, 2), TotalsCarried((10, 20), seq=1))
    with pytest.raises(IllegalMoveError) as exc:
        r.step(TotalsCarried((10, 20), seq=2))
    assert exc.value.rule == "match.carried_totals"
    r.step(deal(rules, 2, 0, 0, random.Random(1), seq=2))
    with pytest.raises(IllegalMoveError) as exc:
        r.step(TotalsCarried((10, 20), seq=3))
    assert exc.value.rule in ("match.carried_totals", "turn.wrong_phase")


def test_carried_totals_survive_both_log_forms(tmp_path: Path) -> None:
    ev = TotalsCarried((120, -35), seq=1)
    assert decode(encode(ev)) == ev
    rules = derive("biriba")
    events: list[AnyEvent] = [start(rules, 2), ev]
    log.write_log(tmp_path / "m.blog", events)
    assert log.read_events(tmp_path / "m.blog") == events
    jsonl.binary_to_jsonl(tmp_path / "m.blog", tmp_path / "m.jsonl")
    assert jsonl.read_jsonl(tmp_path / "m.jsonl") == events
