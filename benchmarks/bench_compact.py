"""Benchmark of `compact`: queries over an archive fed in many small batches, before and after.

    python benchmarks/bench_compact.py                    # 240 matches, one ingest per match
    python benchmarks/bench_compact.py --matches 120 --per-batch 2

A corpus of simulated matches (tests/archive/corpus.py; cached in --corpus) is ingested three
ways in this run: once in one batch (the baseline), and in batches of --per-batch logs, as an
hourly ingest job leaves an archive. The fragmented archive is then copied and compacted.
For each archive: its part files, and the median wall-clock time (5 runs after a warm-up) of

- `open + count`: a fresh sandboxed connection (the views list every committed file) and one
  count over `events`, as one `buraco-log query` does it;
- `report`: every canned analysis on one connection (`buraco_log.archive.report`).

Ratios are against the one-batch archive of the same run (this machine is shared and noisy).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from buraco_log.archive import connect, ingest, report, store
from buraco_log.archive.compact import compact
from tests.archive.corpus import make_corpus


def median_ms(fn: Callable[[], object], runs: int = 5) -> float:
    fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def open_and_count(arch: Path) -> None:
    con = connect(arch)
    con.execute("SELECT count(*) FROM events").fetchall()
    con.close()


def measure(arch: Path) -> dict[str, float]:
    files = sum(len(v) for v in store.committed_files(str(arch)).values())
    return {"batches": len(store.manifests(str(arch))), "files": files,
            "open_count_ms": median_ms(lambda: open_and_count(arch)),
            "report_ms": median_ms(lambda: report(arch), runs=3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--matches", type=int, default=240)
    ap.add_argument("--per-batch", type=int, default=1, help="logs per ingest run")
    ap.add_argument("--corpus", default="/tmp/buraco-bench-compact-corpus")
    args = ap.parse_args()
    corpus = Path(args.corpus)
    paths = sorted(str(p) for p in corpus.glob("*.blog"))
    if len(paths) < args.matches:
        shutil.rmtree(corpus, ignore_errors=True)
        paths = make_corpus(str(corpus), args.matches, seed="compact", jobs=2)
    paths = sorted(paths)[: args.matches]
    work = Path(tempfile.mkdtemp(prefix="bench-compact-"))
    try:
        one = work / "one"
        ingest(paths, one, jobs=1)
        frag = work / "fragmented"
        t = time.perf_counter()
        for i in range(0, len(paths), args.per_batch):
            ingest(paths[i:i + args.per_batch], frag, jobs=1)
        print(f"{len(paths)} matches; fragmented by {len(range(0, len(paths), args.per_batch))}"
              f" ingests in {time.perf_counter() - t:.1f} s")
        done = work / "compacted"
        shutil.copytree(frag, done)
        t = time.perf_counter()
        rep = compact(str(done))
        print(f"compact: {rep.batches_before} batches ({rep.files_before} files) into "
              f"{rep.batches_after} ({rep.files_after} files) in {time.perf_counter() - t:.2f} s")
        base = measure(one)
        rows = {"one batch": base, "fragmented": measure(frag), "compacted": measure(done)}
        print(f"{'archive':<12}{'batches':>9}{'files':>8}{'open+count ms':>15}{'ratio':>7}"
              f"{'report ms':>11}{'ratio':>7}")
        for name, m in rows.items():
            print(f"{name:<12}{m['batches']:>9.0f}{m['files']:>8.0f}"
                  f"{m['open_count_ms']:>15.1f}{m['open_count_ms'] / base['open_count_ms']:>7.2f}"
                  f"{m['report_ms']:>11.1f}{m['report_ms'] / base['report_ms']:>7.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
