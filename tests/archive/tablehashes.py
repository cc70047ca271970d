"""Every table of an archive as sorted row hashes: two archives of the same logs, made in
different ways (night by night, with kills, processes at once), must hold the same rows."""

from __future__ import annotations

from pathlib import Path

from buraco_log.archive import connect

# Commit columns differ between the two ways of ingesting; every other column must not.
EXCLUDED = {"matches": "EXCLUDE (ingested_at, batch)", "errors": "EXCLUDE (ingested_at, batch)"}
TABLES = ("matches", "hands", "events", "melds", "players", "errors")


def rows(archive: Path) -> dict[str, list[int]]:
    """Every table's rows as sorted hashes, read by DuckDB from the committed Parquet files."""
    con = connect(archive)
    try:
        return {t: [h for (h,) in con.sql(f"SELECT hash(x) FROM (SELECT * {EXCLUDED.get(t, '')} "
                                          f"FROM {t}) x ORDER BY 1").fetchall()]
                for t in TABLES}
    finally:
        con.close()
