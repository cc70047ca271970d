"""Start-up time of the command line, as a ratio against `python -c pass` in the same run.

    python benchmarks/bench_cli_start.py [--runs 20] [LOG]

Runs each command ``--runs`` times, interleaved (the machines are shared and noisy: a ratio
measured side by side holds where seconds do not), and prints the median and the best wall
time of each, its median CPU time (user + system: what a loaded machine disturbs least), and
the CPU ratio to the bare interpreter's start.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "examples" / "golden" / "classic.jsonl"


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _once(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run."""
    cpu, start = _cpu(), time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   cwd=ROOT)
    return time.perf_counter() - start, _cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("log", nargs="?", default=str(LOG))
    args = parser.parse_args()
    cases = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "buraco-log --version": [sys.executable, "-m", "cli", "--version"],
        "buraco-log show LOG": [sys.executable, "-m", "cli", "show", args.log],
        "buraco-log verify LOG": [sys.executable, "-m", "cli", "verify", args.log],
        "buraco-log show -f json": [sys.executable, "-m", "cli", "show", args.log, "-f", "json"],
        "buraco-log show --help": [sys.executable, "-m", "cli", "show", "--help"],
    }
    wall: dict[str, list[float]] = {name: [] for name in cases}
    cpu: dict[str, list[float]] = {name: [] for name in cases}
    for argv in cases.values():  # once each first: bytecode written, files cached
        _once(argv)
    for _ in range(args.runs):
        for name, argv in cases.items():
            w, c = _once(argv)
            wall[name].append(w)
            cpu[name].append(c)
    base = statistics.median(cpu["python -c pass"])
    print(f"{'command':24} {'wall med':>9} {'best':>9} {'CPU med':>9} {'x python':>9}")
    for name in cases:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        print(f"{name:24} {w * 1000:7.1f}ms {min(wall[name]) * 1000:7.1f}ms "
              f"{c * 1000:7.1f}ms {c / base:8.1f}x")


if __name__ == "__main__":
    main()
