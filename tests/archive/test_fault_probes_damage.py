"""Fault probes, a damaged archive: batch records that are garbage, lack their keys, list
files outside their batch or are FIFOs; committed files that are missing, FIFOs, truncated
or another table's; a marker whose version is 2.0 or true. `query`, `report` and `ingest`
must each say one line naming the damaged file, never hang, never show a traceback, and never
delete the files of a batch whose record they could not read. Real processes, real Parquet."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from buraco_log.archive import query, store
from buraco_log.errors import ArchiveError
from tests.archive.conftest import Archived

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False,
                          stdin=subprocess.DEVNULL)


def one_line(r: subprocess.CompletedProcess[str], *words: str) -> str:
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-800:]
    assert r.stderr.startswith("buraco-log: error: ") and r.stderr.count("\n") == 1, r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
    return r.stderr


@pytest.fixture
def victim(archived: Archived, tmp_path: Path) -> Path:
    a = tmp_path / "a"
    shutil.copytree(archived.path, a)
    for dirpath, _dirs, names in os.walk(a):
        for n in names:
            os.chmod(os.path.join(dirpath, n), 0o644)
    return a


def record(a: Path) -> Path:
    return next((a / store.BATCHES).glob("*.json"))


def a_part(a: Path, table: str = "matches") -> Path:
    rel = json.loads(record(a).read_text())["files"][table][0]
    return a / rel


def edit_record(change: Callable[[dict[str, object]], None]) -> Callable[[Path], Path]:
    def damage(a: Path) -> Path:
        r = record(a)
        data = json.loads(r.read_text())
        change(data)
        r.write_text(json.dumps(data))
        return r
    return damage


def garbage(a: Path) -> Path:
    r = record(a)
    r.write_text("{garbage")
    return r


def fifo(which: Callable[[Path], Path]) -> Callable[[Path], Path]:
    def damage(a: Path) -> Path:
        p = which(a)
        p.unlink()
        os.mkfifo(p)
        return p
    return damage


def escape(data: dict[str, object]) -> None:
    files = data["files"]
    assert isinstance(files, dict)
    files["matches"].append("matches/../../../../../../../etc/passwd")


def twice(data: dict[str, object]) -> None:
    files = data["files"]
    assert isinstance(files, dict)
    files["matches"].append(files["matches"][0])


DAMAGE: dict[str, tuple[Callable[[Path], Path], str]] = {
    "record-twice": (edit_record(twice), "is listed twice"),
    "record-garbage": (garbage, "unreadable batch record"),
    "record-no-keys": (edit_record(lambda d: d.clear()), "damaged batch record"),
    "record-list": (edit_record(lambda d: d.update(files=[])), "damaged batch record"),
    "record-escapes": (edit_record(escape), "damaged batch record"),
    "record-fifo": (fifo(record), "not a regular file"),
    "part-fifo": (fifo(a_part), "not a regular file"),
}


QUICK = {"record-garbage", "record-escapes", "record-fifo", "part-fifo"}


@pytest.mark.parametrize("kind", [pytest.param(k, marks=() if k in QUICK else pytest.mark.slow)
                                  for k in sorted(DAMAGE)])
def test_a_damaged_record_or_part_is_one_line_for_every_command_and_nothing_is_deleted(
        victim: Path, kind: str, archived: Archived) -> None:
    """Before: a traceback (JSONDecodeError, KeyError, TypeError), or a hang for ever on a
    FIFO; a record listing ../../etc/passwd put it on the sandbox's allowed paths."""
    damage, words = DAMAGE[kind]
    named = damage(victim)
    before = sorted(str(p.relative_to(victim)) for p in victim.rglob("*"))
    for args in (("query", victim, "SELECT count(*) FROM matches"), ("report", victim),
                 ("ingest", archived.corpus.root, "--archive", victim, "-j", "1")):
        one_line(cli(*args), str(named), words)
    assert sorted(str(p.relative_to(victim)) for p in victim.rglob("*")) == before


def test_a_missing_committed_file_is_named(victim: Path) -> None:
    part = a_part(victim, "players")
    part.unlink()
    with pytest.raises(ArchiveError, match="cannot be read: No such file"):
        query(victim, "SELECT 1")
    one_line(cli("query", victim, "SELECT 1", "-f", "json"), str(part))


@pytest.mark.parametrize("how", ["truncated", "garbage", "players"])
def test_ingest_names_a_damaged_matches_file(victim: Path, archived: Archived, how: str) -> None:
    """Before: a traceback (ArrowInvalid) from reading what the archive holds."""
    part = a_part(victim)
    if how == "truncated":
        os.truncate(part, 100)
    elif how == "garbage":
        part.write_bytes(os.urandom(4000))
    else:  # another table's file in its place
        shutil.copy(a_part(victim, "players"), part)
    one_line(cli("ingest", archived.corpus.root, "--archive", victim, "-j", "1"), str(part),
             "damaged archive file")


def test_ratings_that_are_a_fifo_are_computed_again(victim: Path) -> None:
    current = victim / store.RATINGS / "current.json"
    current.unlink()
    os.mkfifo(current)
    r = cli("report", victim, "-f", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["sections"][-1]["rows"]
    assert stat.S_ISFIFO(current.stat().st_mode)


@pytest.mark.parametrize("version", [2.0, True, "2"])
def test_a_layout_version_that_only_looks_like_2_is_refused(victim: Path, version: object) -> None:
    marker = victim / store.MARKER
    marker.write_text(json.dumps({"format": "buraco_log archive", "version": version}))
    with pytest.raises(ArchiveError, match=f"layout version {json.dumps(version)}|'2'"):
        store.check_archive(str(victim))


def test_another_tables_file_in_place_of_a_matches_file_is_named(victim: Path) -> None:
    """Before: the matches view (read by column name) showed the players' rows as matches.
    (Records without fingerprints, as before they were kept: with them, the size is off.)"""
    part = a_part(victim)
    shutil.copy(a_part(victim, "players"), part)
    edit_record(lambda d: d.pop("fingerprints"))(victim)
    with pytest.raises(ArchiveError, match=r"damaged archive file: column \w+ is no column "
                                           r"of matches"):
        query(victim, "SELECT count(*) FROM matches")
    one_line(cli("report", victim), str(part))


def test_a_ratings_record_naming_a_file_outside_the_archive_opens_nothing(victim: Path) -> None:
    """Before: the file it named was put on the sandbox's allowed paths, so a query read
    /etc/passwd with read_text."""
    record = victim / store.RATINGS / "current.json"
    record.write_text(json.dumps({"batches": store.batch_set_digest(str(victim)),
                                  "file": "../../../../../../../../../etc/passwd"}))
    with pytest.raises(ArchiveError, match="Permission Error"):
        query(victim, "SELECT content FROM read_text('/etc/passwd')")
    assert store.current_ratings(str(victim)) is None


def test_batch_records_that_are_a_file_stop_ingest_before_it_deletes_anything(
        victim: Path, archived: Archived) -> None:
    """Before: read as "no batch committed", so recovery deleted every part file."""
    parts = sorted(victim.rglob("part-*.parquet"))
    shutil.rmtree(victim / store.BATCHES)
    (victim / store.BATCHES).write_text("not a directory")
    one_line(cli("ingest", archived.corpus.root, "--archive", victim, "-j", "1"),
             f"{victim / store.BATCHES}: the directory of the batch records is not a directory")
    assert sorted(victim.rglob("part-*.parquet")) == parts


def test_a_table_directory_that_is_a_link_is_refused_and_nothing_where_it_leads_is_deleted(
        victim: Path, archived: Archived, tmp_path: Path) -> None:
    """Before: recovery walked through the link and deleted the files there whose names
    look like parts of an uncommitted batch."""
    elsewhere = tmp_path / "elsewhere"
    shutil.move(victim / "errors", elsewhere)
    (elsewhere / "part-not-in-any-batch.parquet").write_bytes(b"someone else's file")
    (victim / "errors").symlink_to(elsewhere)
    r = cli("ingest", archived.corpus.root, "--archive", victim, "-j", "1")
    assert r.returncode == 1 and "symbolic links are not allowed" in r.stderr, r.stderr
    assert (elsewhere / "part-not-in-any-batch.parquet").exists()


def test_a_staging_directory_that_is_a_link_is_named(victim: Path, archived: Archived,
                                                     tmp_path: Path) -> None:
    """Before: 'buraco-log: error: Cannot call rmtree on a symbolic link', naming nothing."""
    (victim / store.STAGING).rmdir()
    (tmp_path / "elsewhere").mkdir()
    (victim / store.STAGING).symlink_to(tmp_path / "elsewhere")
    one_line(cli("ingest", archived.corpus.root, "--archive", victim, "-j", "1"),
             f"{victim / store.STAGING}: symbolic links are not allowed inside an archive")


def test_ratings_that_are_a_link_delete_nothing_where_it_leads(victim: Path, archived: Archived,
                                                               tmp_path: Path) -> None:
    """Before: storing the new ratings deleted every other file of the directory the link
    led to (as 'earlier ratings')."""
    elsewhere = tmp_path / "home"
    elsewhere.mkdir()
    (elsewhere / "thesis.tex").write_text("years of work")
    shutil.rmtree(victim / store.RATINGS)
    (victim / store.RATINGS).symlink_to(elsewhere)
    r = cli("ingest", archived.corpus.root, "--archive", victim, "-j", "1")
    assert r.returncode == 1 and "symbolic links are not allowed" in r.stderr, r.stderr
    assert (elsewhere / "thesis.tex").read_text() == "years of work"
