"""A seat that plays, at each decision, the move the review would call best (shared by the
probes; not a test module)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import ClassVar

from buraco_log.events import AnyEvent, PileTaken
from buraco_log.expert import (
    STALL_DRAWS,
    Budget,
    ExpertBot,
    decision_seed,
    judge,
    move_key,
    seat_view,
)
from buraco_log.state import State


class ReviewBest(ExpertBot):
    """Plays the move the review, with ``seed`` and the bot's budget, would call best, but
    for the expert's stall guard: after a pile passed back and forth it draws from the stock,
    whatever the review says. ``forced`` collects the seqs of those draws (no choice of the
    review's, so the review may well find them costly)."""

    forced: ClassVar[set[int]] = set()

    def __init__(self, budget: Budget, seed: str) -> None:
        super().__init__(budget)
        self.seed = seed

    def _choose(self, state: State, moves: Sequence[AnyEvent], rng: random.Random) -> AnyEvent:
        if len(moves) == 1:
            return moves[0]
        if state.phase == "draw":  # the expert's stall guard: a pile passed back and forth
            seen = (state.hand, len(state.stock))
            self.stalled = self.stalled + 1 if seen == self._stock_seen else 0
            self._stock_seen = seen
            if self.stalled >= STALL_DRAWS:
                self.forced.add(state.seq + 1)
                return next(m for m in moves if not isinstance(m, PileTaken))
        view = seat_view(state, state.turn, self.tracker.known)
        best = judge(view, self.budget, decision_seed(self.seed, state.seq + 1), None).best
        return next(m for m in moves if move_key(m) == move_key(best))
