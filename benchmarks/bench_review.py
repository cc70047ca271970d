"""What a review costs, and how steady its verdicts are.

    python benchmarks/bench_review.py                      # the two example matches, seat 0
    python benchmarks/bench_review.py --stability          # and the flags at budget B vs 4B
    python benchmarks/bench_review.py --own 2 --no-logs    # how often the expert's own moves
                                                           # are flagged

For each log: the decisions of the seat, decisions per second (CPU time of this one process:
one core, whatever else the machine runs) and the minutes a whole-seat review takes at the
budget. ``--stability`` reviews again at four times the samples and reports, of the moves
flagged at either budget, the share flagged at both, and the share of all verdicts (flagged or
not) that agree. ``--own N`` simulates N matches of the expert against the heuristic bot
(2-player classic; the expert at ``--own-budget``) and reviews the expert's seat: the share of
its moves flagged, beside the same share for the heuristic's seat.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import msgspec

from buraco_log.audit import read_log
from buraco_log.events import AnyEvent
from buraco_log.expert import DEFAULT_BUDGET, Budget, parse_budget
from buraco_log.review import Review, review_events
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match

ROOT = Path(__file__).resolve().parents[1]
LOGS = [ROOT / "examples" / "sim" / "classic-2p-000000.blog",
        ROOT / "examples" / "sim" / "biriba-4p-000000.blog"]


def timed(events: list[AnyEvent], seat: int, budget: Budget, seed: str) -> tuple[Review, float]:
    cpu = time.process_time()
    r = review_events(events, seat, budget=budget, seed=seed)
    return r, time.process_time() - cpu


def stability(a: Review, b: Review) -> str:
    fa = {m.seq for m in a.moves if m.flagged}
    fb = {m.seq for m in b.moves if m.flagged}
    either = fa | fb
    both = fa & fb
    agree = sum((m.seq in fa) == (m.seq in fb) for m in a.moves)
    share = len(both) / len(either) if either else 1.0
    return (f"flags at B {len(fa)}, at 4B {len(fb)}, at both {len(both)}: {share:.0%} of the "
            f"flags stay; {agree}/{len(a.moves)} = {agree / max(1, len(a.moves)):.1%} of the "
            f"verdicts agree")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logs", nargs="*", type=Path)
    ap.add_argument("--no-logs", action="store_true", help="skip the example logs")
    ap.add_argument("--seat", type=int, default=0)
    ap.add_argument("--budget", default=DEFAULT_BUDGET.text())
    ap.add_argument("--seed", default="bench")
    ap.add_argument("--stability", action="store_true")
    ap.add_argument("--own", type=int, default=0, help="expert-vs-heuristic matches to review")
    ap.add_argument("--own-budget", default="16x4")
    ap.add_argument("--own-target", type=int, default=0,
                    help="target score of those matches (0: the preset's)")
    args = ap.parse_args()
    budget = parse_budget(args.budget)
    print(f"# budget {budget.describe()} ({budget.text()}), seed {args.seed!r}", flush=True)
    logs = [] if args.no_logs else (args.logs or LOGS)
    for path in logs:
        events, _ = read_log(path)
        r, cpu = timed(events, args.seat, budget, args.seed)
        rate = r.decisions / cpu if cpu else 0.0
        print(f"{path.name}: seat {args.seat}, {len(events)} events, {r.decisions} decisions, "
              f"{r.mistakes} flagged; {cpu:.1f} s CPU = {cpu / 60:.2f} min on one core, "
              f"{rate:.2f} decisions/s", flush=True)
        if args.stability:
            big = msgspec.structs.replace(budget, samples=budget.samples * 4)
            r4, cpu4 = timed(events, args.seat, big, args.seed)
            print(f"  4B ({big.text()}, {cpu4:.0f} s CPU): {stability(r, r4)}", flush=True)
    if args.own:
        rules = PRESETS["classic"]
        if args.own_target:
            rules = msgspec.structs.replace(rules, target_score=args.own_target)
        bot = f"expert:{args.own_budget}"
        flagged = [0, 0]
        total = [0, 0]
        for i in range(args.own):
            seating = (bot, "heuristic") if i % 2 == 0 else ("heuristic", bot)
            cpu = time.process_time()
            events = simulate_match(rules, 2, seed="own", index=i, bots=seating)
            sim = time.process_time() - cpu
            for seat in (0, 1):
                r, _ = timed(events, seat, budget, args.seed)
                k = 0 if seating[seat] == bot else 1
                flagged[k] += r.mistakes
                total[k] += r.decisions
            print(f"match {i}: {len(events)} events, simulated in {sim:.0f} s CPU; flagged so "
                  f"far: expert {flagged[0]}/{total[0]}, heuristic {flagged[1]}/{total[1]}",
                  flush=True)
        for k, name in enumerate((bot, "heuristic")):
            share = flagged[k] / total[k] if total[k] else 0.0
            print(f"{name}: {flagged[k]}/{total[k]} = {share:.1%} of its moves flagged")


if __name__ == "__main__":
    main()
