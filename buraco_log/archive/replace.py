"""A stronger copy of a stored match put in the place of the archive's copy.

A live log is often ingested before its recorder closed it: a JSON Lines log with its
``MatchEnded`` but not yet its end line is stored ``unsealed``, and the finished log, sealed,
is met the next night as a copy of the same match (one head digest). Ingest stores the
stronger copy in place of the stored one, as a compaction of the one batch that holds it
(:mod:`.compact`): that batch's rows, less the old copy's, and the new copy's rows are
committed as a new batch whose record names the old batch under ``"compacted"``. The record
is the commit point, so a reader sees the old copy or the new one, never both or neither,
and a run cut at any point leaves what the next ingest or compact cleans up.

Only the copy's own columns differ (``integrity``, ``signed``, ``key_id``, ``file_sha256``,
``file_bytes``, ``source_path``, ``log_format``): the events are the same. The other
matches of the rewritten batch keep every column but ``batch``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec
import pyarrow as pa  # type: ignore[import-untyped]

from buraco_log.errors import ArchiveError

from . import store
from .compact import _concat, _gather
from .flatten import Tail


class _Chosen(msgspec.Struct):
    path: str
    digest: str
    tail: Tail
    parts: dict[tuple[str, str], dict[str, pa.Table]]


def replace_stored(root: str, copies: list[Any], require_commitment: bool) -> list[str]:
    """Store each match's strongest of ``copies`` (:class:`.ingest.StrongerCopy`, copies of
    committed matches) in place of the archive's copy; mark them ``replaced``, and leave out
    of ``copies`` those no stronger than the copy now stored. Each file is checked again (a
    file changed since, or no longer that match, is left as it was named). Returns the new
    batches. Called under the ingest lock."""
    from .ingest import _hash, _sha256, check_chunk

    chosen: dict[str, _Chosen] = {}
    by_path = {c.path: c for c in copies}
    of: dict[str, tuple[str, Tail]] = {}  # path -> digest and tail, as checked again
    for c in copies:  # sorted by path: of equals, the first by path is kept
        item = _hash(c.path)
        if isinstance(item, dict):
            continue
        out = check_chunk([item], require_commitment)
        if len(out.ok) != 1 or _sha256(c.path) != item[1]:
            continue
        _p, digest, _gid, _n, _fresh, got = out.ok[0]
        tail = Tail(*got)
        if (tail.match_id, tail.sealed, tail.signatures) != (
                c.match_id, c.integrity == "sealed", c.signatures):
            continue  # not the copy ingest named (changed since)
        of[c.path] = digest, tail
        had = chosen.get(digest)
        if had is None or tail.rank() > had.tail.rank():
            chosen[digest] = _Chosen(c.path, digest, tail, out.parts)
    if not chosen:
        return []
    files = store.committed_files(root)["matches"]
    t = store.read_columns(files, ["digest", "game_id", "batch"])
    held = {d: (g, b) for d, g, b in zip(*(t.column(n).to_pylist() for n in t.column_names),
                                         strict=True) if d in chosen}
    by_batch: dict[str, list[tuple[int, _Chosen]]] = {}
    for digest, ch in chosen.items():
        if digest in held:
            gid, batch = held[digest]
            by_batch.setdefault(batch, []).append((gid, ch))
    records = {r["batch"]: r for r in store.manifests(root)}
    made: list[str] = []
    for batch, games in sorted(by_batch.items()):
        try:
            new = _rewrite(root, records[batch], games)
        except ArchiveError:  # a part of it damaged (`verify` names it): left as it is, and
            continue  # the copy named as one the archive keeps, not an ingest that fails
        made.append(new)
        for _gid, ch in games:
            by_path[ch.path].replaced = new
        store.recover(root)  # the replaced batch's record, then its files
    # a copy no stronger than the one now stored in its place is a plain duplicate
    done = {ch.digest: ch.tail for games in by_batch.values() for _g, ch in games
            if by_path[ch.path].replaced}
    copies[:] = [c for c in copies if c.replaced or c.path not in of or
                 of[c.path][0] not in done or of[c.path][1].rank() > done[of[c.path][0]].rank()]
    return made


def _rewrite(root: str, record: dict[str, Any], games: list[tuple[int, _Chosen]]) -> str:
    parts, errors, _counts = _gather(root, [record])  # checked against its fingerprints
    drop = {gid for gid, _ch in games}
    pieces: dict[tuple[str, str], dict[str, list[pa.Table]]] = {}
    for key, tables in parts.items():
        for name, table in tables.items():
            pieces.setdefault(key, {}).setdefault(name, []).append(store.drop_games(table,
                                                                                  drop))
    now = pa.scalar(datetime.now(UTC), pa.timestamp("ms", tz="UTC")).value
    for _gid, ch in games:
        for key, tables in ch.parts.items():
            for name, table in tables.items():
                if name == "matches":  # a compaction keeps each row's time: this one's is now
                    table = table.set_column(
                        table.schema.get_field_index("ingested_at"), "ingested_at",
                        pa.array([now] * table.num_rows, pa.timestamp("ms", tz="UTC")))
                pieces.setdefault(key, {}).setdefault(name, []).append(table)
    merged = {key: {name: _concat(ts)
                    for name, ts in tables.items()}
              for key, tables in pieces.items()}
    out = store.commit(root, store.new_batch_id(), merged, errors,
                       compacted=[record["batch"]])
    return str(out["batch"])
