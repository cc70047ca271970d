"""Compaction's checks: row counts and order-free hashes of every view, and a command line that
kills itself at the k-th call of one os function."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from buraco_log.archive import query

# Row count and an order-free hash of every row of every view; only `batch` may change.
SUMS = {t: f"SELECT count(*) AS n, bit_xor(hash(x)) AS h FROM (SELECT * {ex} FROM {t}) x"
        for t, ex in (("matches", "EXCLUDE (batch)"), ("hands", ""), ("events", ""),
                      ("melds", ""), ("players", ""), ("errors", "EXCLUDE (batch)"))}


def checksums(archive: Path) -> dict[str, Any]:
    return {t: query(archive, sql).to_pylist()[0] for t, sql in SUMS.items()}


# Run `compact` with one os call wrapped: its k-th call kills the process with SIGKILL.
# os.replace: each file renamed into place, then the commit record, then the ratings;
# os.unlink: the replaced batches' records, then their files.
KILLER = """
import os, signal, sys
name, k, n = sys.argv[1], int(sys.argv[2]), [0]
real = getattr(os, name)
def killing(*a, **kw):
    n[0] += 1
    if n[0] == k:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(*a, **kw)
setattr(os, name, killing)
if k == 0:
    import atexit
    atexit.register(lambda: sys.stderr.write(f"calls {n[0]}\\n"))
sys.argv = ["buraco-log", *sys.argv[3:]]
from cli.main import run
run()
"""
