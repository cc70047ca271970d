"""What one flipped bit in a committed Parquet part does to a query (docs/archive.md).

    python benchmarks/archive_bit_flips.py [--trials 40] [--seed 1]

Ingests `examples/sim` into a temporary archive, then, ``--trials`` times for each of four
tables, copies the archive, flips one bit at a random byte of a random part between its magic
and its footer, and runs the table's `SELECT *` through `query`: the rows the same, an error
(one line naming the file), or wrong rows without a word. `query` does not hash the parts it
reads; `verify` is the check.
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
from pathlib import Path

from buraco_log.archive import ingest, query
from buraco_log.errors import ArchiveError

ROOT = Path(__file__).resolve().parents[1]
SQL = {"matches": "SELECT * FROM matches ORDER BY game_id",
       "hands": "SELECT * FROM hands ORDER BY ALL",
       "events": "SELECT game_id, seq, kind, seat, card, cards FROM events ORDER BY game_id, seq",
       "players": "SELECT * FROM players ORDER BY ALL"}


def _flip(part: Path, rng: random.Random) -> None:
    data = bytearray(part.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little")  # the footer's length, before "PAR1"
    at = rng.randrange(4, len(data) - 8 - footer)
    data[at] ^= 1 << rng.randrange(8)
    part.write_bytes(bytes(data))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=40, help="flips a table (default 40)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        ingest([str(ROOT / "examples" / "sim")], str(base), jobs=2)
        want = {t: query(str(base), sql).to_pylist() for t, sql in SQL.items()}
        totals = {"same": 0, "error": 0, "wrong": 0}
        for table, sql in SQL.items():
            counts = dict.fromkeys(totals, 0)
            for _ in range(args.trials):
                work = Path(tmp) / "work"
                shutil.rmtree(work, ignore_errors=True)
                shutil.copytree(base, work)
                _flip(rng.choice(sorted((work / table).rglob("*.parquet"))), rng)
                try:
                    got = query(str(work), sql).to_pylist()
                    counts["same" if got == want[table] else "wrong"] += 1
                except ArchiveError:
                    counts["error"] += 1
            print(f"{table:8} " + ", ".join(f"{k} {v}" for k, v in counts.items()))
            for k, v in counts.items():
                totals[k] += v
        print("all      " + ", ".join(f"{k} {v}" for k, v in totals.items()))


if __name__ == "__main__":
    main()
