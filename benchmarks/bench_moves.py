"""The legal-move lists at must-use-top positions: the complete list against the quick one.

    python benchmarks/bench_moves.py [--matches N] [--repeat R]

After a must-use-top pickup, ``legal_moves`` also lists every lay that does not hold the top
card but leaves a way to lay it (each tried on a copy of the table, the reducer's
``check_top_kept``); ``quick_moves`` lists the ways to lay the top card only. Plays N random
``thirteen`` matches per player count (the property tests' random player, one hand), collects
the positions where the top card is pending, and times both lists on them in the same run:
milliseconds a position (best of R) and the ratio of the two (the machine is shared, so the
ratio is the figure to compare).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from buraco_log.moves import legal_moves, quick_moves
from buraco_log.reducer import Replayer
from buraco_log.state import State
from tests.play import random_match
from tests.property.replays import rules_for


def pending_positions(matches: int) -> list[State]:
    found: list[State] = []
    for players in (2, 4):
        for seed in range(matches):
            rep = Replayer()
            for ev in random_match(rules_for("thirteen"), players, seed, max_hands=1,
                                   eager=True):
                s = rep.state()
                if s.pile_top is not None and s.phase == "play":
                    found.append(s)
                rep.step(ev)
    return found


def best_ms(fn: Callable[[State], Sequence[object]], states: list[State], repeat: int
            ) -> tuple[float, int]:
    best, count = float("inf"), 0
    for _ in range(repeat):
        t = time.process_time()
        count = sum(len(fn(s)) for s in states)
        best = min(best, time.process_time() - t)
    return best * 1000 / len(states), count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=15)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    states = pending_positions(args.matches)
    quick, n_quick = best_ms(quick_moves, states, args.repeat)
    full, n_full = best_ms(legal_moves, states, args.repeat)
    print(f"{len(states)} positions with the top card pending")
    print(f"quick_moves  {quick:7.2f} ms a position  {n_quick} moves")
    print(f"legal_moves  {full:7.2f} ms a position  {n_full} moves  ({full / quick:.1f}x quick)")


if __name__ == "__main__":
    main()
