"""Audit throughput over a directory of simulated matches, against bare decoding.

    python benchmarks/bench_audit.py                     # 200 matches, classic family presets
    python benchmarks/bench_audit.py --matches 500 --dir /tmp/sim-logs

Writes the matches once (kept in ``--dir`` for reuse), then times, over the same files:

- bare decode: read and verify every log (``log.read_events``), no replay;
- audit with 1 process and with 2 processes (``audit.audit_many``): integrity, deal
  provenance, full legality replay and scoring.

Prints matches per second for each and the audit rates as a ratio to bare decode. Each figure
is the best of ``--repeat`` runs (the machine's noise only ever slows a run down).
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from buraco_log import audit, log
from buraco_log.rules import preset

PRESETS = (("classic", 2), ("biriba", 4), ("thirteen-quick", 2), ("burako", 2))


def make_matches(directory: Path, count: int) -> list[str]:
    """Simulated complete matches, one log each (reused when already there)."""
    from buraco_log.simulate import simulate_match

    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        name, players = PRESETS[i % len(PRESETS)]
        path = directory / f"{i:05d}-{name}.log"
        if not path.exists():
            events = simulate_match(preset(name), players, seed="bench-audit", index=i)
            log.write_log(path, events, validate=False)
        paths.append(str(path))
    return paths


def best(repeat: int, run: Callable[[], object]) -> tuple[float, float]:
    """Best wall time and best CPU time of this process (the CPU time of a run that uses
    worker processes is not counted: only its wall time means anything)."""
    walls, cpus = [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        run()
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return min(walls), min(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    directory = args.dir or Path(tempfile.gettempdir()) / f"buraco-bench-audit-{args.matches}"
    t = time.perf_counter()
    paths = make_matches(directory, args.matches)
    made = time.perf_counter() - t
    events = sum(log.verify(p).events for p in paths)
    print(f"{len(paths)} matches, {events} events ({events / len(paths):.0f} per match) in "
          f"{directory} (ready in {made:.1f} s); {os.cpu_count()} CPUs")

    def decode() -> None:
        for p in paths:
            log.read_events(p)

    def audit_with(workers: int) -> Callable[[], object]:
        def run() -> None:
            verdicts = audit.audit_many(paths, workers=workers)
            bad = [v.path for v in verdicts if not v.ok]
            assert not bad, f"simulated matches with findings: {bad[:3]}"
        return run

    t_decode, c_decode = best(args.repeat, decode)
    t_one, c_one = best(args.repeat, audit_with(1))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t_two, _ = best(args.repeat, audit_with(2))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    c_two = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) / args.repeat
    n = len(paths)
    print(f"load average before the runs: {LOAD}; after: {os.getloadavg()[0]:.1f}")
    rate = {"decode": n / t_decode, "audit 1 process": n / t_one, "audit 2 processes": n / t_two}
    for name, r in rate.items():
        ratio = r / rate["decode"]
        print(f"{name:<18} {r:9.1f} matches/s   {r * events / n:11.0f} events/s   "
              f"{ratio:6.3f} x bare decode   (wall clock)")
    print(f"speed-up with 2 processes: {t_one / t_two:.2f}x")
    print(f"CPU time, free of other load: decode {n / c_decode:.1f} matches/s, audit "
          f"{n / c_one:.1f} matches/s per process ({c_decode / c_one:.3f} x bare decode)")
    print(f"CPU time of the 2 worker processes per run: {c_two:.2f} s, against {c_one:.2f} s in "
          "one process (what parallelism costs; the wall-clock gain needs idle CPUs)")


LOAD = f"{os.getloadavg()[0]:.1f}"


if __name__ == "__main__":
    main()
