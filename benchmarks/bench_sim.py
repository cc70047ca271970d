"""Simulation throughput, printed as figures (a script, not a timed test).

    python benchmarks/bench_sim.py [--matches 20] [--scaling-matches 200] [--presets a,b]

Figures, for each bot (every seat played by it):
- events per second and matches per second per core: one process, CPU time, every preset and
  allowed player count, matches played and written as sealed logs (as ``buraco-log simulate``),
  after ``--warmup`` untimed matches (steady state, as in a long archive run);
- peak memory (maximum resident set size) of the process that played them;
- scaling from 1 to 2 worker processes: wall time of ``simulate_many`` with --jobs 1 and 2 on
  the same matches, and the projected time for a 100,000-match archive on 2 processes.
Goal: the heuristic bot generates at least 20,000 events per second per core.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

from buraco_log.rules import PRESETS
from buraco_log.simulate import match_file, simulate_many, simulate_match, write_match


def _one_bot(bot: str, matches: int, presets: list[str], warmup: int) -> dict[str, object]:
    """Run in a fresh process, so that its peak memory is this bot's alone."""
    rows = []
    events = games = 0
    cpu = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for name in presets:
            rules = PRESETS[name]
            for players in rules.player_counts:
                # Untimed matches first: meld readings are cached per process, and an archive
                # run spends nearly all its time with warm caches.
                for i in range(warmup):
                    simulate_match(rules, players, seed="warmup", index=i, bots=[bot])
                n = 0
                t0 = time.process_time()
                for i in range(matches):
                    evs = simulate_match(rules, players, seed="bench", index=i, bots=[bot])
                    write_match(os.path.join(tmp, match_file(rules, players, i)), evs)
                    n += len(evs)
                dt = time.process_time() - t0
                rows.append((name, players, n, matches, dt))
                events += n
                games += matches
                cpu += dt
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "bot": bot,
        "rows": rows,
        "events": events,
        "matches": games,
        "cpu": cpu,
        "peak_mib": peak_kib / 1024,
    }


def _scaling(bot: str, matches: int) -> dict[str, float]:
    """Wall and CPU time of the same matches with 1 and 2 worker processes."""
    rules = PRESETS["burraco"]
    out: dict[str, float] = {}
    for jobs in (1, 2):
        with tempfile.TemporaryDirectory() as tmp:
            before = _cpu(jobs)
            t0 = time.perf_counter()
            summaries = simulate_many(
                rules, 2, matches, seed="scale", out_dir=tmp, bots=[bot], jobs=jobs
            )
            out[f"wall_{jobs}"] = time.perf_counter() - t0
            out[f"cpu_{jobs}"] = _cpu(jobs) - before
            out["events"] = float(sum(s.events for s in summaries))
    return out


def _cpu(jobs: int) -> float:
    """CPU seconds used so far by this process (1 job) or by its finished children (2 jobs)."""
    who = resource.RUSAGE_SELF if jobs == 1 else resource.RUSAGE_CHILDREN
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=20, help="matches per preset and count")
    ap.add_argument("--scaling-matches", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=10, help="untimed matches per row first")
    ap.add_argument("--presets", default=",".join(PRESETS))
    ap.add_argument("--bots", default="heuristic,random")
    ap.add_argument("--child", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    presets = args.presets.split(",")
    if args.child:
        print(json.dumps(_one_bot(args.child, args.matches, presets, args.warmup)))
        return
    print(
        f"simulation benchmark: python {sys.version.split()[0]}, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    for bot in args.bots.split(","):
        # Fewer random matches: that bot lists every legal move at every step.
        m = args.matches if bot == "heuristic" else max(2, args.matches // 4)
        proc = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                bot,
                "--matches",
                str(m),
                "--presets",
                args.presets,
                "--warmup",
                str(args.warmup if bot == "heuristic" else min(args.warmup, 2)),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        r = json.loads(proc.stdout)
        print(
            f"\nbot {bot}: {r['matches']} matches, {r['events']:,} events, "
            f"peak memory {r['peak_mib']:.0f} MiB"
        )
        print(
            f"  {'preset':15s} {'players':>7s} {'events/s/core':>14s} {'matches/s/core':>15s}"
            f" {'events/match':>13s}"
        )
        for name, players, n, games, dt in r["rows"]:
            print(
                f"  {name:15s} {players:7d} {n / dt:14,.0f} {games / dt:15,.2f} {n / games:13,.0f}"
            )
        print(
            f"  {'all':15s} {'':7s} {r['events'] / r['cpu']:14,.0f}"
            f" {r['matches'] / r['cpu']:15,.2f}"
        )
    for bot in args.bots.split(","):
        m = args.scaling_matches if bot == "heuristic" else max(8, args.scaling_matches // 10)
        s = _scaling(bot, m)
        speedup = s["wall_1"] / s["wall_2"]
        print(
            f"\nscaling, bot {bot}, burraco 2 players, {m} matches: "
            f"1 process {s['events'] / s['wall_1']:,.0f} events/s, "
            f"2 processes {s['events'] / s['wall_2']:,.0f} events/s (x{speedup:.2f} wall)"
        )
        print(
            f"  CPU seconds: {s['cpu_1']:.1f} in 1 process, {s['cpu_2']:.1f} in 2 "
            f"(load average now {os.getloadavg()[0]:.2f}; wall scaling needs idle cores)"
        )
        if bot == "heuristic":
            per_match = s["wall_2"] / m
            ideal = s["cpu_1"] / m / 2  # two processes each at the one-process CPU cost
            print(
                f"  100,000-match archive: {per_match * 100_000 / 60:,.0f} minutes at the "
                f"2-process rate measured here, {ideal * 100_000 / 60:,.0f} minutes on 2 idle "
                "cores"
            )


if __name__ == "__main__":
    main()
