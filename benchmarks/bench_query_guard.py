"""What the query guards cost (issue 13, items 2 and 3), as ratios to a baseline in the same run.

    python benchmarks/bench_query_guard.py [--repeat 20]

Baseline: a sandboxed connection with its views, one statement run to an Arrow table (what
``query`` did before). Measured against it: the statement check (``check_sql``, which for an
``EXPLAIN`` tokenizes and parses the wrapped statement again), the memory bound
(``bounded_process``: two ``setrlimit`` calls and a read of ``/proc/self/status``), and the
whole of ``query`` (check, bound, streamed batches gathered into a table).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable

from buraco_log.archive import connect, ingest, query
from buraco_log.archive.views import bounded_process, check_sql

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SQL = "SELECT kind, count(*) AS n FROM events GROUP BY kind ORDER BY kind"
EXPLAIN = f"EXPLAIN ANALYZE {SQL}"


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        arch = os.path.join(tmp, "a")
        ingest([os.path.join(ROOT, "examples", "sim")], arch)

        def baseline() -> None:
            con = connect(arch)
            try:
                con.sql(SQL).to_arrow_table()
            finally:
                con.close()

        def bound() -> None:
            with bounded_process("1GB"):
                pass

        base = best(baseline, args.repeat)
        rows = [
            ("baseline: connect + run", base),
            ("check_sql(SELECT)", best(lambda: check_sql(SQL), args.repeat * 10)),
            ("check_sql(EXPLAIN ANALYZE SELECT)", best(lambda: check_sql(EXPLAIN),
                                                       args.repeat * 10)),
            ("bounded_process enter+exit", best(bound, args.repeat * 10)),
            ("query() with bound", best(lambda: query(arch, SQL), args.repeat)),
            ("query() without bound", best(lambda: query(arch, SQL, bound=False),
                                           args.repeat)),
        ]
        for name, secs in rows:
            print(f"{name:36s} {secs * 1000:9.3f} ms  {secs / base:7.3f} x baseline")


if __name__ == "__main__":
    main()
