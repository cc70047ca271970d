"""How far a review's stated intervals are true: its costs checked against the exact mean
over every arrangement of the unseen cards (late in a hand, where they are few) and against a
search of ten times the samples of another seed. Shared by the probes and runnable alone:

    python -m tests.review.calibration [MOST_UNSEEN] [MATCHES] [BUDGET]  # simulated mega
    python -m tests.review.calibration more N [BUDGET] [SEAT]  # every examples/sim log

Not a test module: the slow probes import it.
"""

from __future__ import annotations

import itertools
import random
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from buraco_log.events import AnyEvent
from buraco_log.expert import (
    Budget,
    ExpertView,
    _cache,
    _candidates,
    decide,
    decision_seed,
    determinize,
    move_key,
    parse_budget,
    rollout,
)
from buraco_log.log import read_events
from buraco_log.review import Task, evaluate, interval, is_mistake, tasks

ROOT = Path(__file__).resolve().parents[2]


class _Fixed(random.Random):
    """Deals the unseen cards in one given order (``perm`` of their places), or records them."""

    def __init__(self, perm: Sequence[int] | None = None) -> None:
        super().__init__(0)
        self.perm = perm
        self.seen: list[Any] = []

    def shuffle(self, x: list[Any]) -> None:  # type: ignore[override]
        self.seen = list(x)
        if self.perm is not None:
            x[:] = [self.seen[i] for i in self.perm]


def unseen(view: ExpertView) -> list[int]:
    probe = _Fixed()
    determinize(view, probe)
    return probe.seen


def exact_means(view: ExpertView, cands: Sequence[AnyEvent], budget: Budget) -> list[float]:
    """Each candidate's mean over every arrangement of the unseen cards, each arrangement
    weighted by the shuffles that deal it (the review's sampling, taken whole)."""
    cards = unseen(view)
    arrangements = Counter(tuple(cards[i] for i in p)
                           for p in itertools.permutations(range(len(cards))))
    total = sum(arrangements.values())
    cache = _cache(view.table.rules)  # type: ignore[arg-type]
    side = view.table.sides[view.seat]
    sums = [0.0] * len(cands)
    for arr, weight in arrangements.items():
        places = {c: [i for i, u in enumerate(cards) if u == c] for c in set(cards)}
        perm = [places[c].pop(0) for c in arr]
        world = determinize(view, _Fixed(perm))
        for i, m in enumerate(cands):
            sums[i] += weight * rollout(world, m, side, cache, budget.rounds)
    return [s / total for s in sums]


def late_tasks(path: Path, most_unseen: int, seed: str = "0") -> Iterator[Task]:
    """Every seat's decisions in the log at ``path`` with at most ``most_unseen`` unseen
    cards."""
    events = read_events(path)
    for seat in range(len(events[0].players)):  # type: ignore[union-attr]
        for t in tasks(events, seat, seed)[0]:
            if len(unseen(t.view)) <= most_unseen:
                yield t


class Verdict(NamedTuple):
    """One cost the review states (the move played's, or an alternative's, against the move
    it names best) beside the truth."""

    seq: int
    played: bool  # the move played's cost (else an alternative's)
    cost: float
    low: float
    high: float
    truth: float
    flagged: bool


def against_exact(task: Task, budget: Budget, threshold: float = 25.0,
                  old: bool = False) -> list[Verdict]:
    """The review's stated costs at ``task`` (each candidate against the one it names best)
    beside the exact ones. ``old``: the costs of earlier versions (measured on the samples
    that chose the best, flagged from two standard errors), their interval read as ± two
    standard errors."""
    d = decide(task.view, budget, task.seed, include=task.played) if old else \
        evaluate(task, budget)
    first = determinize(task.view, random.Random(task.seed))
    cands = _candidates(first, budget, task.played, _cache(task.view.table.rules))  # type: ignore[arg-type]
    if len(cands) < 2:
        return []
    exact = dict(zip((move_key(m) for m in cands), exact_means(task.view, cands, budget),
                     strict=True))
    best = move_key(d.evaluations[0].move)
    out = []
    for e in d.evaluations[1:]:
        low, high = (e.cost - 2 * e.se, e.cost + 2 * e.se) if old else \
            interval(e.cost, e.se, d.measured)
        mine = move_key(e.move) == move_key(task.played)
        flag = (e.cost >= threshold and e.cost >= 2 * e.se) if old else \
            is_mistake(e.cost, e.se, threshold, d.measured)
        out.append(Verdict(task.played.seq, mine, e.cost, low, high,
                           exact[best] - exact[move_key(e.move)], mine and flag))
    return out


def against_more(task: Task, budget: Budget, times: int = 10,
                 threshold: float = 25.0, old: bool = False) -> Verdict | None:
    """The move played's stated cost beside the same two moves (the best named, the move
    played) searched on ``times`` the samples of another seed; None when the move played is
    the best named. ``old``: as :func:`against_exact`."""
    d = decide(task.view, budget, task.seed, include=task.played) if old else \
        evaluate(task, budget)
    best, played = d.evaluations[0], d.find(task.played)
    assert played is not None
    if move_key(best.move) == move_key(played.move):
        return None
    rng = random.Random(decision_seed("more", task.played.seq))
    view = task.view
    side = view.table.sides[view.seat]
    cache = _cache(view.table.rules)  # type: ignore[arg-type]
    n = budget.samples * times
    gain = 0.0
    for _ in range(n):
        world = determinize(view, rng)
        move = best.move
        if move_key(move) != move_key(task.played):
            move = next(m for m in _candidates(world, budget, task.played, cache)
                        if move_key(m) == move_key(best.move))
        played_move = next(m for m in _candidates(world, budget, task.played, cache)
                           if move_key(m) == move_key(task.played))
        gain += (rollout(world, move, side, cache, budget.rounds)
                 - rollout(world, played_move, side, cache, budget.rounds))
    if old:
        low, high = played.cost - 2 * played.se, played.cost + 2 * played.se
        flag = played.cost >= threshold and played.cost >= 2 * played.se
    else:
        low, high = interval(played.cost, played.se, d.measured)
        flag = is_mistake(played.cost, played.se, threshold, d.measured)
    return Verdict(task.played.seq, True, played.cost, low, high, gain / n, flag)


def summary(got: Sequence[Verdict]) -> str:
    inside = sum(v.low - 1e-6 <= v.truth <= v.high + 1e-6 for v in got)
    mine = [v for v in got if v.played]
    flags = [v for v in mine if v.flagged]
    bias = sum(v.cost - v.truth for v in got) / len(got) if got else 0.0
    return (f"{len(got)} stated costs ({len(mine)} of moves played): the truth inside the "
            f"interval in {inside} ({inside / max(1, len(got)):.1%}); mean cost minus truth "
            f"{bias:+.2f}; {len(flags)} flags, truly worse in "
            f"{sum(v.truth > 0 for v in flags)}, by 25 points or more in "
            f"{sum(v.truth >= 25 for v in flags)}")


def simulated(preset: str, index: int) -> list[AnyEvent]:
    """A 2-player match of the heuristic bot (``mega`` ends many hands with few cards
    unseen: the late positions the exact check needs)."""
    from buraco_log.rules import PRESETS
    from buraco_log.simulate import simulate_match

    return simulate_match(PRESETS[preset], 2, seed="calibrate", index=index,
                          bots=("heuristic", "heuristic"))


def late_in(events: Sequence[AnyEvent], most_unseen: int, seed: str = "0") -> Iterator[Task]:
    for seat in range(len(events[0].players)):  # type: ignore[union-attr]
        for t in tasks(events, seat, seed)[0]:
            if len(unseen(t.view)) <= most_unseen:
                yield t


def main() -> None:
    """``MOST_UNSEEN MATCHES BUDGET``: the late positions of that many simulated ``mega``
    matches against the exact means; ``more N BUDGET [SEAT]``: every Nth decision of seat 0
    (or SEAT) of the examples/sim logs against ten times the samples."""
    if sys.argv[1:2] == ["more"]:
        budget = parse_budget(sys.argv[3]) if len(sys.argv) > 3 else Budget()
        seat = int(sys.argv[4]) if len(sys.argv) > 4 else 0  # a check of decisions not tuned on
        got: list[Verdict] = []
        was: list[Verdict] = []
        for path in sorted((ROOT / "examples" / "sim").glob("*-2p-000000.blog")):
            todo = tasks(read_events(path), seat, "0")[0][::int(sys.argv[2])]
            got.extend(v for t in todo if (v := against_more(t, budget)) is not None)
            was.extend(v for t in todo if (v := against_more(t, budget, old=True)) is not None)
            print(f"{path.name}: {summary(got)}\n  earlier versions: {summary(was)}",
                  flush=True)
        return
    most = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    matches = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    budget = parse_budget(sys.argv[3]) if len(sys.argv) > 3 else Budget()
    got, old = [], []
    for i in range(matches):
        for t in late_in(simulated("mega", i), most):
            got.extend(against_exact(t, budget))
            old.extend(against_exact(t, budget, old=True))
        print(f"mega match {i}: {summary(got)}\n  earlier versions: {summary(old)}",
              flush=True)


if __name__ == "__main__":
    main()


def own_play(preset: str, budget: Budget, seed: str = "self96") -> list[AnyEvent]:
    """A 2-player match in which seat 0 plays, at each decision, the move the review (seed
    ``"0"``, ``budget``) names best, against the heuristic bot."""
    from buraco_log import simulate
    from buraco_log.rules import PRESETS

    from .review_best import ReviewBest

    real_make, real_check = simulate.make_bot, simulate.check_bots  # type: ignore[attr-defined]
    setattr(simulate, "make_bot",  # noqa: B010 (a module's function, swapped for the match)
            lambda n: ReviewBest(budget, "0") if n == "expert" else real_make(n))
    setattr(simulate, "check_bots", lambda names: None)  # noqa: B010
    try:
        return simulate.simulate_match(PRESETS[preset], 2, seed=seed,
                                       bots=("expert", "heuristic"))
    finally:
        setattr(simulate, "make_bot", real_make)  # noqa: B010
        setattr(simulate, "check_bots", real_check)  # noqa: B010
