"""Cold start of every command, as a ratio against `python -c pass` in the same run.

    python benchmarks/bench_cli_start.py [--runs 20] [--only NAME]... [--before DIR] [LOG]

A referee runs `buraco-log verify m.blog` once; a web backend runs a command per request: on a
small log the interpreter's start and the imports are most of the time. Each command runs
``--runs`` times, interleaved with the others (the machines are shared and noisy: a ratio
measured side by side holds where seconds do not), on LOG (by default one match of `classic`,
simulated first: a sealed binary log of some 600 events) and on an archive of it made first
in a temporary directory. Printed per command: the median and the
best wall time, the median CPU time (user + system of the process and its children: what a
loaded machine disturbs least) and that CPU time as a multiple of the bare interpreter's.
`ingest` makes a new archive each run (of LOG, one job); `compact` finds nothing to merge.

``--before DIR``: a checkout of an earlier version (``git archive REV | tar -x -C DIR``, with
this tree's compiled modules copied in: ``buraco_log/*.so`` and the ``*__mypyc*.so``), whose
commands run interleaved with this tree's, each started in its own tree; its CPU median, and
this tree's as a ratio to it, are printed too.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _once(argv: list[str], before: Path | None = None, cwd: Path = ROOT
          ) -> tuple[float, float]:
    """Wall and CPU seconds of one run (``before``: what it writes, removed first, untimed)."""
    if before is not None and before.is_dir():
        shutil.rmtree(before)
    elif before is not None:
        before.unlink(missing_ok=True)
    cpu, start = _cpu(), time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   cwd=cwd, stdin=subprocess.DEVNULL)
    return time.perf_counter() - start, _cpu() - cpu


def cases(log: str, work: Path) -> dict[str, tuple[list[str], Path | None]]:
    """Each command line measured, by name, with what to remove before each run."""
    def cli(*args: str) -> list[str]:
        return [sys.executable, "-m", "cli", *args]

    arc, fresh = str(work / "archive"), work / "fresh"
    listed: dict[str, list[str]] = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "--version": cli("--version"),
        "--help": cli("--help"),
        "show --help": cli("show", "--help"),
        "show LOG": cli("show", log),
        "show LOG -f json": cli("show", log, "-f", "json"),
        "verify LOG": cli("verify", log),
        "replay LOG": cli("replay", log),
        "diff LOG LOG": cli("diff", log, log),
        "explain LOG --at 5": cli("explain", log, "--at", "5"),
        "audit LOG": cli("audit", log),
        "moves LOG": cli("moves", log),
        "convert LOG": cli("convert", log, "-o", str(work / "out.jsonl"), "--overwrite"),
        "rules list": cli("rules", "list"),
        "schema": cli("schema"),
        "view LOG": cli("view", log, "-o", str(work / "page.html")),
        "keys new": cli("keys", "new", "site", "--dir", str(fresh)),
        "ingest LOG": cli("ingest", log, "-a", str(fresh), "-j", "1"),
        "query ARCHIVE": cli("query", arc, "SELECT count(*) FROM matches"),
        "report ARCHIVE": cli("report", arc),
        "verify ARCHIVE": cli("verify", arc),
        "compact ARCHIVE": cli("compact", arc),
    }
    anew = {"view LOG": work / "page.html", "keys new": fresh, "ingest LOG": fresh}
    return {name: (argv, anew.get(name)) for name, argv in listed.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--only", action="append", default=None,
                        help="measure only this command (its name as printed); repeatable")
    parser.add_argument("--before", type=Path, default=None,
                        help="an earlier version's checkout, measured alongside")
    parser.add_argument("log", nargs="?", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-cli-start-") as tmp:
        work = Path(tmp)
        if args.log is None:
            subprocess.run([sys.executable, "-m", "cli", "simulate", "--matches", "1", "--seed",
                            "bench-cli-start", "-o", str(work / "sim"), "-j", "1"],
                           check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
            args.log = str(next((work / "sim").iterdir()))
        subprocess.run([sys.executable, "-m", "cli", "ingest", args.log, "-a",
                        str(work / "archive"), "-j", "1"], check=True, cwd=ROOT,
                       stdout=subprocess.DEVNULL)
        todo = cases(args.log, work)
        if args.only:
            todo = {n: c for n, c in todo.items() if n == "python -c pass" or n in args.only}
        wall: dict[str, list[float]] = {name: [] for name in todo}
        cpu: dict[str, list[float]] = {name: [] for name in todo}
        earlier: dict[str, list[float]] = {name: [] for name in todo}
        for argv, before in todo.values():  # once each first: bytecode written, files cached
            _once(argv, before)
            if args.before is not None:
                _once(argv, before, args.before)
        for _ in range(args.runs):
            for name, (argv, before) in todo.items():
                w, c = _once(argv, before)
                wall[name].append(w)
                cpu[name].append(c)
                if args.before is not None:
                    earlier[name].append(_once(argv, before, args.before)[1])
    base = statistics.median(cpu["python -c pass"])
    then = "  before CPU x python   now/before" if args.before is not None else ""
    print(f"{'command':22} {'wall med':>9} {'best':>9} {'CPU med':>9} {'x python':>9}{then}")
    for name in todo:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        line = (f"{name:22} {w * 1000:7.1f}ms {min(wall[name]) * 1000:7.1f}ms "
                f"{c * 1000:7.1f}ms {c / base:8.1f}x")
        if args.before is not None:
            b = statistics.median(earlier[name])
            line += f" {b * 1000:9.1f}ms {b / base:8.1f}x {c / b:11.2f}"
        print(line)

if __name__ == "__main__":
    main()
