"""The presets a review is checked under, and the check that every move a review suggests is legal
where it is suggested."""

from __future__ import annotations

import math
from typing import Any

from buraco_log.events import AnyEvent, CardDrawn
from buraco_log.expert import Budget
from buraco_log.jsonl import event_from_json
from buraco_log.moves import legal_moves
from buraco_log.reducer import Replayer, validate
from buraco_log.review import Review, is_mistake, review_events
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


def costs_are_sound(review: Review) -> None:
    """Every cost the review gives is what its own evaluation says: the best alternative
    first, each cost the best's mean minus the move's on the measuring samples (below 0 when
    they found the move better than the best, which the other half chose), inside its
    interval, the move played costing what its own line among the alternatives costs and
    nothing when it is the best, a flag only on a cost of at least the threshold with its
    interval above 0, the sums per hand and in all."""
    eps = 2e-3  # means and costs are given to 3 decimals, each rounded on its own
    for m in review.moves:
        where = (m.seq, m.played, m.cost, m.se)
        assert m.se >= 0.0 and m.samples >= 1 and m.low <= m.cost <= m.high, where
        assert m.measured == (m.samples // 2 if m.samples >= 2 else m.samples), where
        assert math.isfinite(m.cost) and math.isfinite(m.se), where
        alts = m.alternatives
        assert alts and alts[0].cost == 0.0 and alts[0].event == m.best_event, where
        top = alts[0].mean
        for a in alts:
            assert a.se >= 0.0 and abs(top - a.mean - a.cost) <= eps, (where, a)
        mine = [a for a in alts if a.event == m.played_event]
        if mine:  # listed: the move played costs what its line says
            assert abs(mine[0].cost - m.cost) <= eps, (where, mine[0])
        if m.best_event == m.played_event:
            assert m.best == m.played and m.cost == 0.0 and m.se == 0.0, where
        assert m.flagged == is_mistake(m.cost, m.se, review.threshold, m.measured), where
        assert not m.flagged or (m.cost >= review.threshold and m.low > 0.0), where
    flagged = [m for m in review.moves if m.flagged]
    assert review.mistakes == len(flagged) and review.decisions == len(review.moves)
    assert abs(review.lost - sum(m.cost for m in flagged)) <= 1e-2
    for h in review.hands:
        ms = [m for m in review.moves if m.hand == h.hand]
        assert h.decisions == len(ms) and h.mistakes == sum(m.flagged for m in ms)
        assert h.lost >= 0.0 and abs(h.cost - sum(m.cost for m in ms)) <= 1e-2, h


def review_is_sound(events: list[AnyEvent], seat: int, budget: Budget = TINY,
                    seed: str = "51") -> int:
    """Review ``seat``: it runs, every move it names is legal where it is named, and every
    cost is sound (:func:`costs_are_sound`). The count of moves checked."""
    review = review_events(events, seat, budget=budget, seed=seed)
    assert review.note is None and review.decisions == len(review.moves) > 0
    costs_are_sound(review)
    states = states_by_seq(events)
    checked = 0
    for m in review.moves:
        before = states[m.seq - 1]
        assert before.turn == seat, (m.seq, before.turn)
        for event in (m.played_event, m.best_event, *(a.event for a in m.alternatives)):
            check_legal(before, event)
            checked += 1
    return checked
