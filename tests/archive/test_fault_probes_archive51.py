"""Fault probes, archive: a site engineer's maintenance. `compact` with nothing to merge and
ratings gone stale (a batch dropped), and `ingest` of a path that now holds another match;
each both ways (what must be said, and what must not)."""

from __future__ import annotations

import json
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
from buraco_log.errors import ArchiveError
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


# -- damaged parts: one line naming the file and the rule, from every command ----------------

def _record(a: Path) -> Path:
    return sorted((a / store.BATCHES).glob("*.json"))[0]


def _part(a: Path) -> Path:
    return a / json.loads(_record(a).read_text())["files"]["events"][0]


def _writable(p: Path) -> Path:
    os.chmod(p, 0o644)
    return p


def _cut(a: Path) -> Path:
    p = _writable(_part(a))
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])
    return p


def _flip(a: Path) -> Path:
    """A byte in the pages, not the footer: DuckDB still decodes many such (wrong rows)."""
    p = _writable(_part(a))
    data = bytearray(p.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little")
    data[(len(data) - 8 - footer) // 2] ^= 0x01
    p.write_bytes(bytes(data))
    return p


def _delete(a: Path) -> Path:
    p = _part(a)
    p.unlink()
    return p


def _stray(a: Path) -> Path:
    p = _part(a).parent / "notes.parquet"
    shutil.copy(_part(a), p)  # a glob reads it: its rows twice
    return p


def _unlisted(a: Path) -> Path:
    """The record edited to leave a file out: its rows went missing without a word."""
    r = _writable(_record(a))
    data = json.loads(r.read_text())
    part = data["files"]["events"].pop(0)
    r.write_text(json.dumps(data))
    return a / part


def _record_cut(a: Path) -> Path:
    r = _writable(_record(a))
    r.write_bytes(r.read_bytes()[:200])
    return r


def _rows_edited(a: Path) -> Path:
    r = _writable(_record(a))
    data = json.loads(r.read_text())
    data["rows"]["events"] += 1
    r.write_text(json.dumps(data))
    return r


# damage -> (rule, the commands that refuse it; query and report read the committed files
# alone and say the others in a note, exit 0: their rows are the committed ones)
DAMAGE = {
    "cut": (_cut, "part_changed", ("query", "report", "verify", "compact", "ingest")),
    "flipped": (_flip, "part_changed", ("query", "report", "verify", "compact", "ingest")),
    "deleted": (_delete, "part_missing", ("query", "report", "verify", "compact", "ingest")),
    "stray": (_stray, "part_unrecorded", ("verify", "compact", "ingest")),
    "unlisted": (_unlisted, "part_unrecorded", ("verify", "compact", "ingest")),
    "record-cut": (_record_cut, "record_damaged",
                   ("query", "report", "verify", "compact", "ingest")),
    "rows-edited": (_rows_edited, "record_damaged", ("verify", "compact")),
}
COMMANDS = {
    "query": ["query", "{a}", "SELECT count(*) FROM events"], "report": ["report", "{a}"],
    "verify": ["verify", "{a}"], "compact": ["compact", "{a}"],
    "ingest": ["ingest", "{logs}", "--archive", "{a}"],
}


def _refused_by_all(arch: Path, three: Path, kind: str, commands: tuple[str, ...]) -> None:
    damage, rule, refusing = DAMAGE[kind]
    named = damage(arch)
    before = [f for f in sized_tree(arch) if f[0] not in LOCKS]
    for command in commands:
        args = [x.format(a=arch, logs=three.parent / "logs") for x in COMMANDS[command]]
        r = cli(*args)
        assert [f for f in sized_tree(arch) if f[0] not in LOCKS] == before, (kind, command)
        assert "Traceback" not in r.stderr, r.stderr
        if command not in refusing:
            assert r.returncode == 0, (kind, command, r.stderr)
            continue
        lines = r.stderr.splitlines()  # verify says every problem, one line each
        assert r.returncode == 1 and (len(lines) == 1 or command == "verify"), (
            kind, command, r.stderr)
        what = str(named) if rule != "part_unrecorded" or command == "verify" else \
            str(named.relative_to(arch))
        assert any(what in line and line.endswith(f"[archive.{rule}]") for line in lines), (
            kind, command, lines)


@pytest.mark.parametrize("kind", ["flipped", "unlisted"])
def test_a_damaged_part_is_one_line_naming_it_and_its_rule_from_compact(
        arch: Path, three: Path, kind: str) -> None:
    """The default run's twin of the sweep below, compact alone (it merges these batches).
    Before: a byte flipped in a part's pages, or a file left out of its record, gave `query`
    and `ingest` exit 0 (wrong rows, or rows missing, without a word), and `compact` with
    nothing to merge did not look at the files at all."""
    damage, rule, _refusing = DAMAGE[kind]
    named = damage(arch)
    before = [f for f in sized_tree(arch) if f[0] not in LOCKS]
    with pytest.raises(ArchiveError) as got:
        compact(str(arch))
    what = str(named) if kind == "flipped" else str(named.relative_to(arch))
    assert what in str(got.value) and str(got.value).endswith(f"[archive.{rule}]"), got.value
    assert [f for f in sized_tree(arch) if f[0] not in LOCKS] == before


@pytest.mark.slow  # 35 commands, each a process
@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_a_damaged_archive_is_one_line_naming_the_file_and_the_rule_from_every_command(
        arch: Path, three: Path, kind: str) -> None:
    _refused_by_all(arch, three, kind, tuple(COMMANDS))
