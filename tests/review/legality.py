"""The presets a review is checked under, and the check that every move a review suggests is legal
where it is suggested."""

from __future__ import annotations

from typing import Any

from buraco_log.events import AnyEvent, CardDrawn
from buraco_log.expert import Budget
from buraco_log.jsonl import event_from_json
from buraco_log.moves import legal_moves
from buraco_log.reducer import Replayer, validate
from buraco_log.review import review_events
from buraco_log.rules import PRESETS
from buraco_log.state import State

TINY = Budget(samples=2, candidates=3, rounds=1)
NAMES = sorted(PRESETS)


def states_by_seq(events: list[AnyEvent]) -> dict[int, State]:
    rep = Replayer()
    out = {-1: rep.state()}
    for ev in events:
        rep.step(ev)
        out[ev.seq] = rep.state()
    return out


def check_legal(before: State, event: dict[str, Any]) -> None:
    """``event`` (a review's JSON form of a move) is accepted in ``before``."""
    if event["t"] == "dr":  # a draw names no card: the stock's top is what it would take
        assert any(isinstance(m, CardDrawn) and m.seat == event["seat"]
                   for m in legal_moves(before)), (before.seq, event)
        return
    validate(before, event_from_json(event))  # raises IllegalMoveError if refused


def review_is_legal(events: list[AnyEvent], seat: int) -> int:
    """Review ``seat``; every move named is legal. The count of moves checked."""
    review = review_events(events, seat, budget=TINY, seed="43")
    assert review.note is None and review.decisions == len(review.moves) > 0
    states = states_by_seq(events)
    checked = 0
    for m in review.moves:
        before = states[m.seq - 1]
        for event in (m.played_event, m.best_event, *(a.event for a in m.alternatives)):
            check_legal(before, event)
            checked += 1
    return checked


CONFIGS = [(name, n) for name in NAMES for n in PRESETS[name].player_counts]
