"""Fixity of the archive's committed files: every batch record keeps the SHA-256 and the size
of each file it commits, and :func:`verify_archive` reads every committed file back against
them.

DuckDB reads Parquet without checking page checksums, so a flipped bit in a committed file
gives wrong rows, silently, in every query after it. A site finds that out here, and learns
which batch to restore from a backup. Batches committed before records kept fingerprints
(before layout 0.2.0) are counted as not verifiable, never as damaged.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from buraco_log.audit.files import walk
from buraco_log.errors import ArchiveError

from . import store

_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass
class FileProblem:
    """One committed file that does not hold what its batch committed."""

    path: str  # relative to the archive
    batch: str
    rule: str  # archive.part_missing, .part_changed, .part_unreadable, .record_damaged
    message: str


@dataclass
class FixityReport:
    archive: str
    files: int = 0  # committed files read back
    bytes: int = 0
    verified: int = 0  # files whose record keeps a fingerprint, and that match it
    unrecorded: int = 0  # files of batches committed before records kept fingerprints
    problems: list[FileProblem] = field(default_factory=list)
    # files no reader reads, that an interrupted ingest or compact left (relative paths): not
    # problems, the next ingest or compact removes them (store.recover)
    leftovers: list[str] = field(default_factory=list)
    leftover_bytes: int = 0  # their size: the space the next clean-up gives back
    # the writer at work on the archive as this ran ("ingest (process 41)"), or None: the
    # leftovers are then its files, not yet committed, rather than an interrupted run's
    writer: str | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def check_parts(root: str) -> None:
    """Refuse, in one :class:`ArchiveError` naming it, the first committed file whose bytes no
    longer have the SHA-256 its batch record keeps: a bit flipped in the middle of a part gave
    the report wrong rows without a word (only verify found it). Run before ``report``, not
    before every query: reading the parts back cost 0.8 ms beside a report of 123 ms over 596
    matches (0.6 %, /tmp bench, round 41b). A file missing, cut short or unreadable is left to
    the reader, which names it (:func:`store.committed_files`); so is one a compaction or a
    drop removes meanwhile."""
    for record in store.manifests(root):
        kept = record.get("fingerprints")
        for rel, fp in (kept.items() if isinstance(kept, dict) else ()):
            if not (isinstance(fp, list) and len(fp) == 2 and isinstance(fp[0], str)
                    and _SHA256.fullmatch(fp[0]) and type(fp[1]) is int):
                continue  # verify names a damaged fingerprint; the reader needs none
            path = os.path.join(root, rel)
            try:
                sha, size = store.fingerprint(path)
            except OSError:
                continue
            if size == fp[1] and sha != fp[0]:
                raise ArchiveError(
                    f"{store.shown_path(path)}: damaged archive file: its bytes changed since "
                    f"batch {record['batch']} committed it (SHA-256 {sha[:16]}..., committed "
                    f"{fp[0][:16]}...), so its rows would be wrong: restore it from a backup; "
                    f"`buraco-log verify {store.shown_path(root)}` lists every such file "
                    "[archive.part_changed]")


def verify_archive(root: str, on_progress: Callable[[int, int], None] | None = None
                   ) -> FixityReport:
    """Read every committed file of the archive at ``root`` back against its batch record.

    ``on_progress(bytes_done, bytes_total)`` is called as files are read. Raises
    :class:`buraco_log.errors.ArchiveError` when ``root`` is no archive or a batch record is
    damaged (nothing can be verified then).

    A file whose batch a compaction or drop took out while this ran starts it again, with the
    batches committed now (up to :data:`store.RELISTS` times): it verified none of the
    compacted batch's files ("0 files, ok") and named its record a leftover."""
    root = store.check_archive(root)
    with store.reading(root):  # no file removed under it by a compact or drop
        for again in range(store.RELISTS - 1, -1, -1):
            writer = store.running_writer(root)
            report = _verify(root, on_progress, bool(again))
            if report is not None:
                # before or after the walk: files of a run at work were said to be those of
                # an interrupted one, "which the next ingest or compact removes"
                report.writer = writer or store.running_writer(root)
                return report
    raise AssertionError("unreachable")  # the last run returns a report


def _verify(root: str, on_progress: Callable[[int, int], None] | None, again: bool
            ) -> FixityReport | None:
    """One run of :func:`verify_archive`; None when a batch went meanwhile and ``again``."""
    records = store.manifests(root)
    planned: list[tuple[str, str, object]] = []  # rel, batch, [sha, size] or None
    for record in records:
        kept = record.get("fingerprints")
        kept = kept if isinstance(kept, dict) else {}
        for rels in record["files"].values():
            planned += [(rel, record["batch"], kept.get(rel)) for rel in rels]
    total = 0
    for rel, _batch, _kept in planned:
        with contextlib.suppress(OSError):  # a missing file is a problem, found below
            total += os.lstat(os.path.join(root, rel)).st_size
    report = FixityReport(archive=root)
    done = 0
    counted: dict[str, dict[str, int]] = {}  # batch -> table -> rows of its verified files
    for rel, batch, kept in planned:
        path = os.path.join(root, rel)
        try:
            sha, size = store.fingerprint(path)
        except FileNotFoundError:
            if not os.path.exists(os.path.join(root, store.BATCHES, f"{batch}.json")):
                if again:  # its batch was compacted or dropped while this ran: list again
                    return None
                continue  # (the record goes first, then the files)
            report.problems.append(FileProblem(rel, batch, "archive.part_missing",
                                               "missing: its batch committed it"))
            continue
        except OSError as exc:
            why = exc.strerror or str(exc)
            if exc.errno is not None and os.path.islink(path):
                why = "a symbolic link, not the file its batch committed"
            report.problems.append(FileProblem(rel, batch, "archive.part_unreadable",
                                               f"cannot be read: {why}"))
            continue
        report.files += 1
        report.bytes += size
        done += size
        if on_progress is not None:
            on_progress(done, total)
        if kept is None:
            report.unrecorded += 1
            continue
        if not (isinstance(kept, list) and len(kept) == 2 and isinstance(kept[0], str)
                and _SHA256.fullmatch(kept[0]) and type(kept[1]) is int):
            report.problems.append(FileProblem(
                rel, batch, "archive.record_damaged",
                f"its batch record keeps no fingerprint of it but {str(kept)[:80]}"))
            continue
        want_sha, want_size = kept
        if size != want_size:
            report.problems.append(FileProblem(
                rel, batch, "archive.part_changed",
                f"{size:,} bytes, where its batch committed {want_size:,}"))
        elif sha != want_sha:
            report.problems.append(FileProblem(
                rel, batch, "archive.part_changed",
                f"its bytes changed since its batch committed it (SHA-256 {sha[:16]}..., "
                f"committed {str(want_sha)[:16]}...)"))
        else:
            report.verified += 1
            counted.setdefault(batch, {}).setdefault(rel.split("/")[0], 0)
            counted[batch][rel.split("/")[0]] += _rows(path)
    for record in records:  # rows the record says its files hold: compact checks them
        said, got = record.get("rows"), counted.get(record["batch"])
        whole = got is not None and sum(map(len, record["files"].values())) == sum(
            1 for _rel, b, _k in planned if b == record["batch"]) and all(
            p.batch != record["batch"] for p in report.problems)
        if whole and isinstance(said, dict) and got is not None:
            wrong = sorted(t for t in record["files"] if said.get(t, 0) != got.get(t, 0))
            if wrong:
                t = wrong[0]
                report.problems.append(FileProblem(
                    f"{store.BATCHES}/{record['batch']}.json", record["batch"],
                    "archive.record_damaged",
                    f"its record says {t} holds {said.get(t, 0)!r} rows, its files hold "
                    f"{got.get(t, 0):,} (the record was edited)"))
    left, lost = store.orphan_parts(root)
    for rel in lost:  # its record deleted or lost: the clean-up refuses to delete it
        report.problems.append(FileProblem(
            rel, store.batch_of(os.path.basename(rel)) or "", "archive.part_unrecorded",
            "a part file of no batch record and of no interrupted run (its record was "
            "deleted or lost): restore the record from a backup, or move the file out"))
    # the batches committed now: one committed while this ran is no leftover
    _walk(root, {r["batch"] for r in store.manifests(root)}, {rel for rel, _b, _k in planned},
          set(left), report)
    return report


def _walk(root: str, committed: set[str], listed: set[str], left: set[str],
          report: FixityReport) -> None:
    """Look over the whole tree, following no link: each symbolic link is a problem (query
    and report refuse an archive holding one, so a verify that passed it said nothing of
    why they failed), and what an interrupted run left is listed as leftovers."""
    for dirpath, dirs, names in walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        for name in sorted(dirs + names):
            path = os.path.join(dirpath, name)
            rel = os.path.normpath(os.path.join(rel_dir, name))
            if os.path.islink(path) and rel not in listed:  # a listed one: said above
                report.problems.append(FileProblem(
                    rel, "", "archive.link", f"a symbolic link (to {os.readlink(path)!r}); "
                    "query and report refuse an archive holding one: remove it"))
            elif name in names and (rel in left or _left_over(rel, committed)):
                report.leftovers.append(rel)
                with contextlib.suppress(OSError):  # gone meanwhile: a clean-up ran
                    report.leftover_bytes += os.lstat(path).st_size


def _rows(path: str) -> int:
    """The rows a Parquet file's footer says it holds (a file already verified: its footer
    is read again, a few KiB)."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]  # here: verify alone needs it

    try:
        return int(pq.read_metadata(path).num_rows)
    except (OSError, ValueError):
        return 0


def _left_over(rel: str, committed: set[str]) -> bool:
    """A file an interrupted run left, parts aside (:func:`store.orphan_parts` sorts those):
    staged, temporary, an intent record, or the record of a batch a compaction replaced."""
    parts = rel.split(os.sep)
    name = parts[-1]
    if parts[0] == store.STAGING or ".tmp-" in name:
        return True
    if parts[0] == store.BATCHES:
        return name.endswith(store.INTENT) or (name.endswith(".json")
                                               and name[:-5] not in committed)
    return False
