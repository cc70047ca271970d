"""Columns added within a layout version: files written before them read as NULL.

`matches` gained `signed` and `key_id` (signed logs) without a new layout version, so an
archive may hold `matches` files with and without them; every query and report must read both.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq  # type: ignore[import-untyped]

from buraco_log.archive import ingest, query, report, store

SIM = Path(__file__).resolve().parents[2] / "examples" / "sim"


def _strip_new_columns(root: Path) -> int:
    """Rewrite every matches file as an ingest before the columns existed would have."""
    done = 0
    for f in root.rglob("*.parquet"):
        if "matches" not in f.relative_to(root).parts[0]:
            continue
        table = pq.read_table(f)
        if "signed" in table.column_names:
            f.chmod(0o644)
            pq.write_table(table.drop(["signed", "key_id"]), f, compression="zstd")
            f.chmod(0o444)
            _refingerprint(root, f)
            done += 1
    return done


def _refingerprint(root: Path, f: Path) -> None:
    """The batch record keeps the rewritten file's fingerprint, as that ingest's would."""
    rel = str(f.relative_to(root))
    for record in (root / store.BATCHES).glob("*.json"):
        data = json.loads(record.read_text())
        if rel in data.get("fingerprints", {}):
            data["fingerprints"][rel] = list(store.fingerprint(str(f)))
            record.write_text(json.dumps(data))


def test_an_archive_mixing_older_matches_files_reads_them_as_null(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    first = sorted(SIM.glob("classic-2p-*.blog"))[0]
    second = sorted(SIM.glob("biriba-*.blog"))[0]
    shutil.copy(first, logs / first.name)
    root = tmp_path / "archive"
    ingest([str(logs)], str(root), jobs=1)
    assert _strip_new_columns(root) >= 1
    # no file has the columns yet: the view still has them, as NULL
    only_old = query(str(root), "SELECT signed, key_id FROM matches").to_pylist()
    assert only_old == [{"signed": None, "key_id": None}]
    assert report(str(root)).matches == 1
    shutil.copy(second, logs / second.name)
    ingest([str(logs)], str(root), jobs=1)
    rows = query(str(root), "SELECT match_id, signed FROM matches ORDER BY match_id").to_pylist()
    assert len(rows) == 2 and sorted(r["signed"] is None for r in rows) == [False, True], rows
    unsigned = next(s for s in report(str(root)).sections if s.name == "unsigned_matches")
    assert len(unsigned.rows) == 2  # an older file says nothing of signatures: listed
