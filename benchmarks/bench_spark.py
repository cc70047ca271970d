"""Benchmark of the archive on Apache Spark against the local engine, on one corpus, one run.

    python benchmarks/bench_spark.py                   # 600 simulated matches
    python benchmarks/bench_spark.py --matches 200     # quicker

Every measurement runs in a fresh Python process (its JVM and Python workers with it), one
after another, on the same corpus of simulated matches (tests/archive/corpus.py, cached in
--corpus):

1. The local engine: ``buraco_log.archive.ingest`` with 1 job and with 2.
2. Spark in local mode with 1 and with 2 executor cores (``local[1]``, ``local[2]``): the
   session start (JVM and SparkContext), the first job (``spark.range(1).count()``, the
   scheduler and a Python-free task), then two ingests of the whole corpus into two fresh
   archives: the first (cold: the JIT, the Python workers' imports and the rules engine's memos
   start empty) and the second (warm: the steady state of a long-running cluster job).

Throughput is in events per CPU-second: the CPU time of the whole process tree (the driver,
the JVM, Spark's Python workers; read from /proc) over the ingest, which a machine shared with
other work disturbs far less than wall-clock time. Wall-clock events/s are printed beside it.
The archive's bytes per event and its file count come from the Spark-made archive.
Figures go to stdout (and to --json FILE).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.archive.corpus import make_corpus

TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu(pid: int | None = None) -> float:
    """CPU seconds of a process and all its descendants, living (their own time) and reaped
    (the time the kernel added to their parents): no process is counted twice."""
    pid = pid or os.getpid()
    children: dict[int, list[int]] = {}
    stats: dict[int, list[str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat_file:
                fields = stat_file.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        stats[int(entry)] = fields
        children.setdefault(int(fields[1]), []).append(int(entry))
    total = 0.0
    todo = [pid]
    while todo:
        p = todo.pop()
        got = stats.get(p)
        if got is not None:  # utime stime cutime cstime are fields 14-17 (11-14 after the name)
            total += sum(int(x) for x in got[11:15]) / TICK
        todo += children.get(p, [])
    return total


def du(path: Path, sub: str = "") -> int:
    return sum(p.stat().st_size for p in (path / sub).rglob("*") if p.is_file())


def child_local(paths: list[str], work: Path, jobs: int) -> dict[str, Any]:
    from buraco_log.archive import ingest

    arch = work / f"local-{jobs}"
    shutil.rmtree(arch, ignore_errors=True)
    c, t = tree_cpu(), time.perf_counter()
    rep = ingest(paths, arch, jobs=jobs)
    wall, cpu = time.perf_counter() - t, tree_cpu() - c
    assert not rep.errors, rep.errors[:3]
    return {"engine": "local", "cores": jobs, "events": rep.events, "matches": rep.added,
            "seconds": wall, "cpu_seconds": cpu, "events_per_cpu_s": rep.events / cpu,
            "events_per_s": rep.events / wall}


def child_spark(corpus: str, work: Path, cores: int) -> dict[str, Any]:
    from buraco_log.archive import spark as engine

    out: dict[str, Any] = {"engine": "spark", "cores": cores}
    t = time.perf_counter()
    spark = engine.session(f"local[{cores}]")
    out["session_start_s"] = time.perf_counter() - t
    t = time.perf_counter()
    spark.range(1).count()
    out["first_job_s"] = time.perf_counter() - t
    for run in ("cold", "warm"):
        arch = work / f"spark-{cores}-{run}"
        shutil.rmtree(arch, ignore_errors=True)
        c, t = tree_cpu(), time.perf_counter()
        rep = engine.ingest([corpus], arch, spark=spark)
        wall, cpu = time.perf_counter() - t, tree_cpu() - c
        assert not rep.errors, rep.errors[:3]
        files = [p for p in (arch / "events").rglob("*.parquet")]
        out[run] = {"events": rep.events, "matches": rep.added, "seconds": wall,
                    "cpu_seconds": cpu, "events_per_cpu_s": rep.events / cpu,
                    "events_per_s": rep.events / wall,
                    "events_bytes_per_event": du(arch, "events") / rep.events,
                    "archive_bytes_per_event": du(arch) / rep.events,
                    "events_files": len(files)}
    # A re-run over the same logs: every file is known by its hash, nothing is checked. Its
    # cost is the run's fixed part (listing, hashing, the jobs and their tasks); the warm run
    # less this is what the events themselves cost, the rate a large run approaches.
    c, t = tree_cpu(), time.perf_counter()
    rep = engine.ingest([corpus], work / f"spark-{cores}-warm", spark=spark)
    out["rerun_s"], out["rerun_cpu_s"] = time.perf_counter() - t, tree_cpu() - c
    assert rep.added == 0
    warm = out["warm"]
    out["marginal_events_per_cpu_s"] = warm["events"] / max(1e-9, warm["cpu_seconds"]
                                                             - out["rerun_cpu_s"])
    spark.stop()
    return out


def run_child(args: list[str]) -> dict[str, Any]:
    cmd = [sys.executable, __file__, *args]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode:
        sys.stderr.write(done.stderr[-3000:])
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--matches", type=int, default=600, help="simulated matches to ingest")
    ap.add_argument("--corpus", default="/tmp/buraco-bench-spark-corpus")
    ap.add_argument("--work", default="/tmp/buraco-bench-spark")
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument("--child", choices=["local", "spark"], help=argparse.SUPPRESS)
    ap.add_argument("--cores", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--local-cores", type=int, nargs="*", default=[1, 2],
                    help="jobs of the local engine's runs (the first is the baseline)")
    a = ap.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    paths = make_corpus(a.corpus, a.matches)
    if a.child == "local":
        print(json.dumps(child_local(paths, work, a.cores)))
        return
    if a.child == "spark":
        print(json.dumps(child_spark(a.corpus, work, a.cores)))
        return
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start; "
          f"corpus: {len(paths)} simulated matches in {a.corpus}")
    base = ["--matches", str(a.matches), "--corpus", a.corpus, "--work", a.work]
    fig: dict[str, Any] = {"cpus": os.cpu_count(), "load_at_start": os.getloadavg()[0]}
    for cores in a.local_cores:
        r = run_child([*base, "--child", "local", "--cores", str(cores)])
        fig[f"local_{cores}"] = r
        print(f"local engine, {cores} job(s): {r['events']:,} events in {r['seconds']:.1f} s "
              f"wall, {r['cpu_seconds']:.1f} CPU-s: {r['events_per_cpu_s']:,.0f} events per "
              f"CPU-second ({r['events_per_s']:,.0f} events/s wall)")
    for cores in (1, 2):
        r = run_child([*base, "--child", "spark", "--cores", str(cores)])
        fig[f"spark_{cores}"] = r
        print(f"spark local[{cores}]: session start {r['session_start_s']:.1f} s, first job "
              f"{r['first_job_s']:.2f} s, re-run of known logs {r['rerun_s']:.1f} s "
              f"({r['rerun_cpu_s']:.1f} CPU-s: the fixed cost of a run)")
        for run in ("cold", "warm"):
            x = r[run]
            print(f"  ingest {run}: {x['events']:,} events in {x['seconds']:.1f} s wall, "
                  f"{x['cpu_seconds']:.1f} CPU-s: {x['events_per_cpu_s']:,.0f} events per "
                  f"CPU-second ({x['events_per_s']:,.0f} events/s wall); "
                  f"{x['events_bytes_per_event']:.2f} bytes/event in events "
                  f"({x['archive_bytes_per_event']:.2f} the whole archive), "
                  f"{x['events_files']} events files")
    loc = fig[f"local_{a.local_cores[0]}"]["events_per_cpu_s"]
    for cores in (1, 2):
        r = fig[f"spark_{cores}"]
        s, m = r["warm"]["events_per_cpu_s"], r["marginal_events_per_cpu_s"]
        print(f"spark local[{cores}] warm / local engine 1 job, per CPU-second: {s / loc:.2f}; "
              f"without the fixed cost (warm less the re-run): {m:,.0f} events per CPU-second, "
              f"{m / loc:.2f} of the local engine")
    fig["load_at_end"] = os.getloadavg()[0]
    print(f"load average {fig['load_at_end']:.1f} at the end")
    if a.json:
        Path(a.json).write_text(json.dumps(fig, indent=2) + "\n")


if __name__ == "__main__":
    main()
