"""Win rate of the heuristic bot against the random bot, per preset and player count.

    python benchmarks/bot_winrate.py [--matches 40] [--jobs 2] [--presets burraco,mega]

Each configuration plays ``--matches`` matches with the heuristic bot in the first seat (and its
partner seat) and as many with the seats swapped, so neither bot always sits first; with three
players, one heuristic bot faces two random bots (a third of the wins by chance). Prints one
line per configuration and the overall rate. Matches are deterministic (seeded).
"""

from __future__ import annotations

import argparse
import tempfile
import time

from buraco_log.rules import PRESETS
from buraco_log.simulate import seat_bots, simulate_many


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=40, help="matches per seating")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--presets", default=",".join(PRESETS))
    ap.add_argument("--players", default="", help="only these player counts, e.g. 2,4")
    args = ap.parse_args()
    only = {int(p) for p in args.players.split(",") if p}
    total_h = total = 0
    for name in args.presets.split(","):
        rules = PRESETS[name]
        for players in rules.player_counts:
            if only and players not in only:
                continue
            h = n = 0
            start = time.perf_counter()
            seatings: tuple[tuple[str, ...], ...] = (
                (("heuristic", "random", "random"),)  # three sides: one heuristic, 1/3 by chance
                if players == 3
                else (("heuristic", "random"), ("random", "heuristic"))
            )
            for seating in seatings:
                with tempfile.TemporaryDirectory() as tmp:
                    for s in simulate_many(
                        rules,
                        players,
                        args.matches,
                        seed="winrate",
                        out_dir=tmp,
                        bots=seating,
                        jobs=args.jobs,
                    ):
                        n += 1
                        # Side i's first seat is seat i (partners sit on alternate seats).
                        h += seat_bots(seating, players)[s.winner] == "heuristic"
            total_h += h
            total += n
            print(
                f"{name:15s} {players}p  heuristic won {h:4d}/{n:<4d} = {h / n:6.1%}"
                f"   ({time.perf_counter() - start:.1f}s)",
                flush=True,
            )
    print(f"{'overall':15s}     heuristic won {total_h:4d}/{total:<4d} = {total_h / total:6.1%}")


if __name__ == "__main__":
    main()
