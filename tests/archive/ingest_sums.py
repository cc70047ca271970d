"""Row count and an order-free hash of every row of every view (commit times aside): what an ingest
killed and redone must leave as a clean one did."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from buraco_log.archive import query

SUMS = {t: f"SELECT count(*) AS n, bit_xor(hash(x)) AS h FROM (SELECT * EXCLUDE ({ex}) FROM {t}) x"
        for t, ex in (("matches", "ingested_at, batch"), ("hands", "preset"),
                      ("events", "preset"), ("melds", "preset"), ("players", "preset"),
                      ("errors", "ingested_at, batch"))}


def checksums(archive: Path) -> dict[str, Any]:
    """Row count and an order-free hash of every row of every view (commit times aside)."""
    return {t: query(archive, sql).to_pylist()[0] for t, sql in SUMS.items()}
