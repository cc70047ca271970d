"""Compaction's checks: row counts and order-free hashes of every view (the command line that kills
itself at the k-th call of one os function is tests/archive/killed_at.py)."""

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

