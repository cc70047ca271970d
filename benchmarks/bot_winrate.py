"""Win rate of one bot against another, per preset and player count, with a 95% interval.

    python benchmarks/bot_winrate.py [--matches 40] [--jobs 2] [--presets burraco,mega]
    python benchmarks/bot_winrate.py --bots expert,heuristic --budget 8 --players 2 --matches 10

Each configuration plays ``--matches`` matches with the first bot in the first seat (and its
partner seat) and as many with the seats swapped, so neither bot always sits first; with three
players, one first bot faces two of the other (a third of the wins by chance). Prints one line
per configuration: wins, the win rate with its 95% Wilson interval, the mean point margin (the
first bot's side total minus the other side's, with its 95% interval) and the cost per match;
then one line per preset family and overall. ``--duplicate`` adds the paired gain: each
margin minus the margin of the same match index (the same deals) with the second bot in every
seat, as duplicate bridge compares tables. Matches are deterministic (seeded); runs with
different ``--seed`` values play different matches, so they can be split and added up.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
from concurrent.futures import ProcessPoolExecutor

from buraco_log.rules import PRESETS, Rules
from buraco_log.simulate import (
    MatchSummary,
    SimulationError,
    seat_bots,
    simulate_match,
    summarize,
)

FAMILIES = {
    "classic": "classic",
    "biriba": "classic",
    "bossa-nova": "classic",
    "thirteen": "thirteen",
    "thirteen-quick": "thirteen",
    "burraco": "burraco",
    "mega": "mega",
    "burako": "burako",
}


def cpu_seconds() -> float:
    """CPU time of this process and of its finished worker processes."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion k/n."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return c - h, c + h


def _play(args: tuple[Rules, int, str, int, tuple[str, ...]]) -> MatchSummary | None:
    """One match, or None if the simulator gave up on it (a hand that never ends)."""
    rules, players, seed, index, bots = args
    try:
        return summarize(simulate_match(rules, players, seed=seed, index=index, bots=bots),
                         index)
    except SimulationError:
        return None


def play_all(rules: Rules, players: int, matches: int, seed: str, bots: tuple[str, ...],
             jobs: int) -> list[MatchSummary | None]:
    """Matches 0..matches-1 (the same as ``simulate_many`` plays, unwritten), in order."""
    work = [(rules, players, seed, i, bots) for i in range(matches)]
    if jobs <= 1:
        return [_play(w) for w in work]
    with ProcessPoolExecutor(jobs) as pool:
        return list(pool.map(_play, work, chunksize=max(1, min(16, matches // (jobs * 8)))))


class Tally:
    def __init__(self) -> None:
        self.wins = 0
        self.n = 0
        self.margins: list[int] = []
        self.paired: list[int] = []  # margin minus the margin of the same deals, B everywhere
        self.seconds = 0.0
        self.stalled = 0  # matches the simulator gave up on (not counted in n)

    def add(self, other: Tally) -> None:
        self.wins += other.wins
        self.n += other.n
        self.stalled += other.stalled
        self.margins += other.margins
        self.paired += other.paired
        self.seconds += other.seconds

    def line(self, label: str, bot: str) -> str:
        lo, hi = wilson(self.wins, self.n)
        m = statistics.fmean(self.margins) if self.margins else 0.0
        e = (1.96 * statistics.stdev(self.margins) / math.sqrt(len(self.margins))
             if len(self.margins) > 1 else float("nan"))
        rate = self.wins / self.n if self.n else 0.0
        per = self.seconds / self.n if self.n else 0.0
        dup = ""
        if len(self.paired) > 1:
            pm = statistics.fmean(self.paired)
            pe = 1.96 * statistics.stdev(self.paired) / math.sqrt(len(self.paired))
            dup = f"  duplicate gain {pm:+7.1f} ± {pe:5.1f}"
        stalled = f", {self.stalled} stalled" if self.stalled else ""
        return (f"{label:22s} {bot} won {self.wins:4d}/{self.n:<4d} = {rate:6.1%} "
                f"[{lo:5.1%}, {hi:5.1%}]  margin {m:+7.1f} ± {e:5.1f}{dup}  "
                f"({per:.1f} CPU s/match{stalled})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=40, help="matches per seating")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--presets", default=",".join(PRESETS))
    ap.add_argument("--players", default="", help="only these player counts, e.g. 2,4")
    ap.add_argument("--bots", default="heuristic,random",
                    help="the bot measured and its opponent (expert takes --budget)")
    ap.add_argument("--budget", default="",
                    help="the expert's budget per decision, e.g. 8 or 8x4 (samples x candidates)")
    ap.add_argument("--seed", default="winrate")
    ap.add_argument("--duplicate", action="store_true",
                    help="also play the same deals with the second bot in every seat, and report "
                    "the first bot's gain in margin over it (a paired, lower-variance measure)")
    args = ap.parse_args()
    only = {int(p) for p in args.players.split(",") if p}
    a, b = args.bots.split(",")
    if args.budget:
        a = f"{a}:{args.budget}" if a == "expert" else a
        b = f"{b}:{args.budget}" if b == "expert" else b
    print(f"# {a} against {b}, {args.matches} matches per seating, seed {args.seed!r}",
          flush=True)
    families: dict[str, Tally] = {}
    overall = Tally()
    for name in args.presets.split(","):
        rules = PRESETS[name]
        for players in rules.player_counts:
            if only and players not in only:
                continue
            tally = Tally()
            seatings: tuple[tuple[str, ...], ...] = (
                ((a, b, b),)  # three sides: one bot of the first kind, 1/3 by chance
                if players == 3
                else ((a, b), (b, a))
            )
            for seating in seatings:
                seats = seat_bots(seating, players)
                sides = 2 if players >= 4 else players
                mine = next(i for i in range(sides) if seats[i] == a)
                start = cpu_seconds()
                got = play_all(rules, players, args.matches, args.seed, seating, args.jobs)
                tally.seconds += cpu_seconds() - start
                base: list[MatchSummary | None] = []
                if args.duplicate:  # the same deals with the second bot in every seat
                    base = play_all(rules, players, args.matches, args.seed, (b,), args.jobs)
                for k, s in enumerate(got):
                    if s is None or (base and base[k] is None):
                        tally.stalled += 1
                        continue
                    tally.n += 1
                    # Side i's first seat is seat i (partners sit on alternate seats).
                    tally.wins += seats[s.winner] == a
                    others = [t for i, t in enumerate(s.totals) if i != mine]
                    tally.margins.append(s.totals[mine] - max(others))
                    if base:
                        t0 = base[k].totals  # type: ignore[union-attr]
                        tally.paired.append(tally.margins[-1]
                                            - (t0[mine] - max(t for i, t in enumerate(t0)
                                                              if i != mine)))
            print(tally.line(f"{name} {players}p", a), flush=True)
            families.setdefault(FAMILIES.get(name, name), Tally()).add(tally)
            overall.add(tally)
    for fam, t in families.items():
        print(t.line(f"family {fam}", a))
    print(overall.line("overall", a))


if __name__ == "__main__":
    main()
