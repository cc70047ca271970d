"""Fault probes, archive: a site engineer's maintenance. `compact` with nothing to merge and
ratings gone stale (a batch dropped), and `ingest` of a path that now holds another match;
each both ways (what must be said, and what must not)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest

from buraco_log.archive import ingest, query, store
from buraco_log.archive.compact import compact
from buraco_log.archive.report import leaderboard_rows, ratings_of_rows
from buraco_log.log import read_events
from tests.archive.filetree import sized_tree

ROOT = Path(__file__).resolve().parents[2]
LOCKS = (".lock", ".readers", ".staging")  # a writer touches them, and empties staging


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL)


def _ratings_bytes(a: Path) -> bytes:
    got = store.current_ratings(str(a))
    assert got is not None, "no current ratings"
    return Path(got).read_bytes()


def test_compact_with_nothing_to_merge_brings_stale_ratings_up_to_date(arch: Path) -> None:
    """A batch dropped leaves the stored ratings stale, and every report folds every match
    again. Before: `compact` with nothing to merge left them so (current_ratings None)."""
    first = store.manifests(str(arch))[0]["batch"]
    store.drop_batches(str(arch), [first])
    assert store.current_ratings(str(arch)) is None
    rep = compact(str(arch), before=date(2000, 1, 1))
    assert rep.ratings_refreshed and not rep.merges
    assert len(store.manifests(str(arch))) == 2  # nothing merged
    stored = pq.read_table(pa.BufferReader(_ratings_bytes(arch)))
    assert stored.equals(ratings_of_rows(leaderboard_rows(str(arch))))  # of the two left


def test_compact_with_current_ratings_and_nothing_to_merge_writes_nothing(arch: Path) -> None:
    ratings = _ratings_bytes(arch)
    before = [f for f in sized_tree(arch) if f[0] not in LOCKS]
    rep = compact(str(arch), before=date(2000, 1, 1))
    assert not rep.merges and not rep.ratings_refreshed
    assert [f for f in sized_tree(arch) if f[0] not in LOCKS] == before
    assert _ratings_bytes(arch) == ratings


def test_a_path_that_now_holds_another_match_is_named_and_both_are_kept(
        three: Path, tmp_path: Path) -> None:
    """Before: the second ingest stored the other match without a word."""
    logs = sorted((three.parent / "logs").glob("*.blog"))
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(logs[0], site / "match.blog")
    shutil.copy(logs[1], site / "other.blog")
    a = tmp_path / "a"
    assert ingest([str(site)], a).added == 2
    old_id = read_events(str(logs[0]))[0].match_id
    new_id = read_events(str(logs[2]))[0].match_id
    assert old_id != new_id
    os.unlink(site / "match.blog")
    shutil.copy(logs[2], site / "match.blog")  # another match over the same name
    got = ingest([str(site)], a)
    assert (got.added, got.already_stored) == (1, 1)
    assert [(r.path, r.match_id, r.earlier) for r in got.reused_paths] == [
        (str(site / "match.blog"), new_id, [old_id])]
    n = query(a, "SELECT count(*) AS n FROM matches").to_pylist()
    assert n == [{"n": 3}]  # both kept


def test_a_path_ingested_again_or_a_new_path_is_not_named(three: Path, tmp_path: Path) -> None:
    logs = sorted((three.parent / "logs").glob("*.blog"))
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(logs[0], site / "match.blog")
    a = tmp_path / "a"
    ingest([str(site)], a)
    shutil.copy(logs[1], site / "next.blog")  # a new name: no log written over
    again = ingest([str(site)], a)
    assert (again.added, again.already_stored, again.reused_paths) == (1, 1, [])
    os.unlink(site / "next.blog")
    shutil.copy(logs[2], site / "next.blog")  # written over, with the old one read too
    shutil.copy(logs[1], site / "moved.blog")  # the old match under a new name: a copy
    over = ingest([str(site)], a)
    assert [(r.path, r.earlier) for r in over.reused_paths] == [
        (str(site / "next.blog"), [read_events(str(logs[1]))[0].match_id])]


@pytest.mark.slow  # two commands: the library's answers are held above
def test_the_commands_say_stale_ratings_computed_again_and_a_log_written_over(
        arch: Path, three: Path, tmp_path: Path) -> None:
    store.drop_batches(str(arch), [store.manifests(str(arch))[0]["batch"]])
    r = cli("compact", arch, "--before", "2000-01-01")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == (f"{arch}: the stored ratings did not cover the "
                                         "committed batches: computed again"), r.stdout
    logs = sorted((three.parent / "logs").glob("*.blog"))
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(logs[0], site / "match.blog")
    a = tmp_path / "a"
    ingest([str(site)], a)
    os.unlink(site / "match.blog")
    shutil.copy(logs[2], site / "match.blog")
    r = cli("ingest", site, "--archive", a)
    assert r.returncode == 0, r.stderr
    new_id, old_id = (read_events(str(p))[0].match_id for p in (logs[2], logs[0]))
    assert r.stdout.splitlines()[1:] == [
        f"{site / 'match.blog'}: stored match {new_id}, but an earlier ingest stored match "
        f"{old_id} from this path: the log was written over, and the archive keeps both "
        "(docs/archive.md says how to keep only the new one)"], r.stdout
