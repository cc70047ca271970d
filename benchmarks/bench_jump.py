"""Jumping to any point of a long match: the cost of ``replay --at`` once the log is loaded.

    python benchmarks/bench_jump.py [--target 8000] [--jumps 500]

Simulates one long match (classic rules with a raised target score), loads it into a
``Timeline`` (one validated replay, snapshots every 64 events) and times table views at
random seqs: each starts from the nearest snapshot and applies at most 63 events.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from buraco_log.rules import derive
from buraco_log.simulate import simulate_match
from buraco_log.timeline import Timeline


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=int, default=8000)
    parser.add_argument("--jumps", type=int, default=500)
    args = parser.parse_args()
    events = simulate_match(derive("classic", target_score=args.target), 2, seed="bench-jump")
    t = time.perf_counter()
    tl = Timeline(events)
    load = time.perf_counter() - t
    rng = random.Random(1)
    times = []
    for _ in range(args.jumps):
        seq = rng.randrange(len(events))
        t = time.perf_counter()
        tl.view(seq)
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    print(f"{len(events)} events; timeline built (validated replay + snapshots) in "
          f"{load * 1000:.0f} ms")
    print(f"jump + table view over {args.jumps} random seqs: median {statistics.median(times):.2f}"
          f" ms, p99 {times[int(len(times) * 0.99)]:.2f} ms, max {times[-1]:.2f} ms")


if __name__ == "__main__":
    main()
