"""The archive's key index: what ingest must know of every stored match and refused file,
in three small files, so that a night's ingest reads only what changed since the last one.

Ingest knows a file by its bytes and a match by its head digest (:func:`store.known`), and it
folds the ratings over every match (:func:`buraco_log.archive.report.leaderboard_rows`). Both
read a few columns of every batch's ``matches``, ``players`` and ``errors`` files: an archive
ingested nightly for years holds thousands of small batches, and each night opened every one
of their files (3,650 batches: 11,000 files, more than a night's own work many times over).

Layout (derived, like ``_ratings/``; nothing reads it but ingest and compact)::

    _index/current.json           {"format": FORMAT, "version": 1, "batches": {BATCH: MARK},
                                   "files": {"matches": NAME, "players": NAME, "errors": NAME},
                                   "odd": [batches whose matches files hold other columns]}
    _index/<kind>-<tag>.parquet   the columns of :data:`COLUMNS`, a ``batch`` column in each

The index covers the batches listed in ``current.json``; each row names its batch. A batch's
rows never change while it is committed (committed files are never rewritten: a compaction
or a replacement commits a new batch), so the index of the committed batches is the index's
rows of the batches still committed, plus the rows of the committed batches it does not
cover, read from their files (:func:`load`): a batch dropped, compacted or committed by a
version that keeps no index is found by its id alone. An index missing, unreadable, of
another version or another format is read again from every file, never trusted: it is
derived, and rewritten whole (temporary files, fsync, rename, then ``current.json``) after
a writer's commits, so a crash leaves the old index or the new one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
from typing import Any, Final

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from buraco_log.errors import ArchiveError

from . import store

INDEX: Final = store.KEY_INDEX
FORMAT: Final = "buraco_log archive key index"
VERSION: Final = 1
"""The index's own version: an index of another version is read again from the files."""

COLUMNS: Final[dict[str, tuple[str, ...]]] = {
    "matches": ("game_id", "digest", "file_sha256", "log_format", "match_id", "source_path",
                "started_at", "winner_side"),
    "players": ("game_id", "seat", "side", "player"),
    "errors": ("file_sha256", "source_path", "rule", "message"),
}
_NAMES: Final = tuple(COLUMNS)


def _schema(kind: str) -> pa.Schema:
    fields = {f.name: f for f in store.stored_schema(kind)}
    return pa.schema([pa.field("batch", pa.string(), False)]
                     + [fields[c].with_nullable(True) for c in COLUMNS[kind]])


def _empty(kind: str) -> pa.Table:
    return _schema(kind).empty_table()


def mark(record: dict[str, Any]) -> str:
    """What the index keeps of a batch's record: a digest of its ``matches`` files'
    fingerprints. A record written again (by hand, or a file restored with it) no longer
    matches, and its batch is read again from its files."""
    kept = record.get("fingerprints")
    kept = kept if isinstance(kept, dict) else {}
    rels = sorted(record["files"].get("matches", []))
    text = json.dumps([[rel, kept.get(rel)] for rel in rels], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _current(root: str) -> dict[str, Any] | None:
    """``current.json`` when it is one of this version that names files of its own."""
    try:
        meta = store.read_json(os.path.join(root, INDEX, "current.json"), "key index record")
    except ArchiveError:
        return None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT \
            or meta.get("version") != VERSION:
        return None
    batches, files, odd = meta.get("batches"), meta.get("files"), meta.get("odd")
    if not isinstance(odd, list) or not all(isinstance(b, str) for b in odd):
        return None
    if not isinstance(batches, dict) or not all(isinstance(m, str) for m in batches.values()) \
            or not isinstance(files, dict) or sorted(files) != sorted(_NAMES):
        return None
    for name in files.values():
        if not isinstance(name, str) or os.path.basename(name) != name \
                or not name.endswith(".parquet") or name.startswith("."):
            return None
    return meta


_READ: dict[str, tuple[object, dict[str, pa.Table]]] = {}
"""Per archive, the index files this process last read or wrote (their names, inodes, sizes
and times), and their tables: ingest loads the index for what is stored, then again after
its commits for the ratings."""


def _seen(root: str, files: dict[str, str]) -> object:
    out = []
    for kind in _NAMES:
        try:
            st = os.lstat(os.path.join(root, INDEX, files[kind]))
        except OSError:
            return None
        out.append((files[kind], st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(out)


def _read_index(root: str, meta: dict[str, Any]) -> dict[str, pa.Table] | None:
    seen = _READ.get(root)
    key = _seen(root, meta["files"])
    if seen is not None and key is not None and seen[0] == key:
        return seen[1]
    out = {}
    for kind in _NAMES:
        path = os.path.join(root, INDEX, meta["files"][kind])
        try:
            if os.path.islink(path):
                return None
            t = pq.ParquetFile(path).read()
        except (OSError, pa.ArrowException, ValueError):
            return None
        if t.schema != _schema(kind):  # another column set: read again, never guessed
            return None
        out[kind] = t
    _READ.clear()  # one archive's: a process holds one at a time
    _READ[root] = key, out
    return out


def _read_batches(root: str, records: list[dict[str, Any]]) -> dict[str, pa.Table]:
    """The index's rows of ``records``' batches, read from their committed files, each kind
    in one read: the ``batch`` of ``matches`` and ``errors`` rows is a column of theirs, and a
    ``players`` row's is its match's (a game id is one match's among the committed batches)."""
    files = {k: [os.path.join(root, rel) for r in records for rel in r["files"].get(k, [])]
             for k in _NAMES}
    out: dict[str, pa.Table] = {}
    for kind in ("matches", "errors"):
        out[kind] = (store.read_columns(files[kind], ["batch", *COLUMNS[kind]])
                     .cast(_schema(kind)) if files[kind] else _empty(kind))
    if files["players"]:
        players = store.read_columns(files["players"], list(COLUMNS["players"]))
        players = players.join(out["matches"].select(["game_id", "batch"]), "game_id",
                               join_type="inner")
        out["players"] = players.select(_schema("players").names).cast(_schema("players"))
    else:
        out["players"] = _empty("players")
    return out


def _odd(root: str, records: list[dict[str, Any]]) -> set[str]:
    """The batches among ``records`` whose ``matches`` files hold other columns than this
    version writes (written before ``signed`` was added, say): a reader reads the ``matches``
    files by column name only while some committed batch is such (:func:`uniform`)."""
    want = [f.name for f in store.stored_schema("matches")]
    odd = set()
    for r in records:
        for rel in r["files"].get("matches", []):
            if pq.read_schema(os.path.join(root, rel)).names != want:
                odd.add(r["batch"])
                break
    return odd


class Index:
    """The key index of a set of committed batches (``batches``): :data:`COLUMNS` of their
    rows (``tables``), the batches whose ``matches`` files hold other columns (``odd``), and
    whether it differs from the one stored (``changed``: :func:`save` it)."""

    def __init__(self, tables: dict[str, pa.Table], batches: dict[str, str], odd: set[str],
                 changed: bool) -> None:
        self.tables, self.batches, self.odd, self.changed = tables, batches, odd, changed

    def __getitem__(self, kind: str) -> pa.Table:
        return self.tables[kind]


def load(root: str, records: list[dict[str, Any]] | None = None) -> Index:
    """The index of the committed batches (``records``: :func:`store.manifests`, read here
    when not given). Reads the files of the committed batches the stored index does not
    cover, and only those."""
    import pyarrow.compute as pc  # type: ignore[import-untyped]  # here: a query never needs it
    records = store.manifests(root) if records is None else records
    committed = [r["batch"] for r in records]
    meta = _current(root)
    tables = _read_index(root, meta) if meta is not None else None
    if tables is None or meta is None:
        meta, tables = {"batches": {}, "odd": []}, {k: _empty(k) for k in _NAMES}
    marks = {r["batch"]: mark(r) for r in records}
    # a batch is covered while its record is the one indexed (an edited record: read again)
    covered = {b for b, m in meta["batches"].items() if marks.get(b, m) == m}
    keep = covered.intersection(committed)
    odd = keep.intersection(meta["odd"])
    stale = keep != set(meta["batches"])
    if stale:  # batches dropped or compacted away since: their rows go
        value_set = pa.array(sorted(keep), pa.string())
        tables = {k: t.filter(pc.is_in(t.column("batch"), value_set=value_set))
                  for k, t in tables.items()}
    missing = [r for r in records if r["batch"] not in covered]
    if missing:
        new = _read_batches(root, missing)
        tables = {k: pa.concat_tables([tables[k], new[k]]) for k in _NAMES}
        odd |= _odd(root, missing)
    return Index(tables, {b: marks[b] for b in keep | {r["batch"] for r in missing}}, odd,
                 stale or bool(missing))


def uniform(root: str, records: list[dict[str, Any]]) -> bool:
    """Whether the stored index covers every one of ``batches`` and holds that each one's
    ``matches`` files hold the columns this version writes, no other: then a reader need not
    read every file's footer to line their columns up by name (a query of an archive of
    1,000 nightly batches spent 3 s there before its first row)."""
    meta = _current(root)
    if meta is None:
        return False
    covered, odd = meta["batches"], set(meta["odd"])
    return all(covered.get(r["batch"]) == mark(r) and r["batch"] not in odd for r in records)


def save(root: str, index: Index) -> None:
    """Store ``tables`` (from :func:`load`) as the index: temporary files, fsynced, renamed,
    then ``current.json``; the files of earlier indexes removed. A failure (a full disk)
    leaves the old index, which the next :func:`load` extends: never an error of the run."""
    d = os.path.join(root, INDEX)
    if os.path.islink(d):  # its old files are deleted below: never where a link leads
        raise ArchiveError(f"{d}: symbolic links are not allowed inside an archive")
    tag = secrets.token_hex(8)
    names = {k: f"{k}-{tag}.parquet" for k in _NAMES}
    tables, batches = index.tables, index.batches
    made: list[str] = []
    try:
        os.makedirs(d, exist_ok=True)
        for kind, t in tables.items():
            tmp = os.path.join(d, f".tmp-{tag}-{kind}.parquet")
            made.append(tmp)
            pq.write_table(t, tmp, compression="zstd")
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
            os.chmod(tmp, store.READ_ONLY)
        for kind, tmp in zip(_NAMES, made, strict=True):
            os.replace(tmp, os.path.join(d, names[kind]))
        store._fsync_dir(d)
        store._atomic_json(os.path.join(d, "current.json"),
                                {"format": FORMAT, "version": VERSION, "batches": batches,
                                 "files": names, "odd": sorted(index.odd)})
        _READ.clear()
        _READ[root] = _seen(root, names), dict(tables)
    except (OSError, pa.ArrowException):
        for tmp in made:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return
    for old in os.listdir(d):  # earlier indexes and leftovers of an interrupted write
        if old not in names.values() and old != "current.json" and (
                old.startswith(".tmp-") or old.startswith("current.json.tmp-")
                or (old.endswith(".parquet") and old.split("-", 1)[0] in _NAMES)):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(d, old))


def refresh(root: str, records: list[dict[str, Any]] | None = None) -> Index:
    """:func:`load`, saved when it changed: what a writer calls after its commits."""
    index = load(root, records)
    if index.changed:
        save(root, index)
    return index
