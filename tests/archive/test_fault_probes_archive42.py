"""Fault probes, round 42, of the DuckDB archive: query and report refuse ``-o out/`` in
the words view and convert use; a run killed while staging is named by the kind its staging
directory records; a file larger than any match log is refused unread (a 1 TB sparse file
held ingest for an hour, hashed and read as zeros); two ingests creating one archive at once
no longer take each other's marker for a leftover; a source tree deeper than Python's
recursion limit is walked (it was an internal error).

Probed and held (no new test): the SQL sandbox against this round's list (getenv,
current_setting, duckdb_settings/secrets/extensions/logs, read_* and globs of the archive's own
files by relative path, parquet_kv_metadata, CALL); an endless recursive CTE under --timeout 0
ends in one line on SIGINT (130) and SIGTERM (143) within 0.1 s; a source tree with link
loops, a FIFO, a socket, a dangling link; 36 SIGKILLs at random moments of 12 ingests of 204
files, each re-run to the end: every table equal to a clean ingest's, verify clean."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from buraco_log.archive import ingest, store
from buraco_log.archive.ingest import MAX_LOG_BYTES
from buraco_log.audit.files import find_logs
from buraco_log.errors import ArchiveError
from tests.archive.killed_at import killed
from tests.cli.probes import ROOT, cli, one_error_line

SIM = ROOT / "examples" / "sim"
LOGS = sorted(SIM.glob("classic-2p-*.blog"))[:1] + sorted(SIM.glob("burako-*.blog"))[:2]


# ``arch``: conftest's copy of an archive of three batches (this module defined its own, of
# LOGS, until round 44: a second ``three`` that shadowed the shared one).


def tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


# -- 1. -o out/: one error line, as view and convert say it ---------------------------------

@pytest.mark.parametrize(("command", "name"), [("query", "out/"), ("report", "out/."),
                                             ("query", "..")])
def test_an_output_named_as_a_directory_is_the_error_line_view_and_convert_give(
        arch: Path, tmp_path: Path, command: str, name: str) -> None:
    """Before: typer's usage wording, "buraco-log: usage: Invalid value for '--output' /
    '-o': out/: ...; name the file (see `buraco-log query --help`)"."""
    args = [arch, "SELECT 1 AS one"] if command == "query" else [arch]
    before = tree(arch), sorted(os.listdir(tmp_path))
    line = one_error_line(cli(command, *args, "-o", name, cwd=tmp_path), 2)
    assert line == (f"buraco-log: error: {name}: is a directory's name (it ends in '/', '.' "
                    "or '..'); name the file"), line
    assert (tree(arch), sorted(os.listdir(tmp_path))) == before


def test_view_and_convert_say_it_in_the_same_words(tmp_path: Path) -> None:
    """What the line above is held to: the commands that already said it so."""
    said = [one_error_line(cli(*c, "-o", "out/", cwd=tmp_path), 2) for c in
            (("view", LOGS[0]), ("convert", LOGS[0]))]
    assert [s.rsplit("; name ", 1)[0] for s in said] == [
        "buraco-log: error: out/: is a directory's name (it ends in '/', '.' or '..')"] * 2


def test_an_output_named_as_a_directory_is_a_json_error_with_format_json(
        arch: Path, tmp_path: Path) -> None:
    done = cli("report", arch, "-f", "json", "-o", "out/", cwd=tmp_path)
    one_error_line(done, 2)
    assert json.loads(done.stdout)["error"]["code"] == "usage"
    assert not (tmp_path / "out").exists()


# -- 2. a run killed while staging is named ---------------------------------------------------

def _cleaned(arch: Path) -> list[str]:
    r = cli("ingest", LOGS[0], "--archive", arch)
    assert r.returncode == 0, r.stderr
    return [x for x in r.stdout.splitlines() if x.startswith("cleaned up after")]


def _staged(arch: Path) -> list[str]:
    """The files under .staging, kind file aside, and that no intent was written yet."""
    assert not list((arch / "_batches").glob("*.intent"))  # killed before its commit
    return [p for p in tree(arch / store.STAGING) if not p.endswith(store.RUN_KIND)
            and (arch / store.STAGING / p).is_file()]


def test_an_ingest_killed_while_staging_is_named_an_ingest(arch: Path) -> None:
    """Before: "cleaned up after an interrupted ingest or compact" (only intents said)."""
    killed("chmod", 1, "ingest", SIM / "biriba-2p-000000.blog", "--archive", arch)
    staged = _staged(arch)
    assert staged, tree(arch)
    assert _cleaned(arch) == [
        f"cleaned up after an interrupted ingest: {len(staged)} uncommitted file(s)"]
    assert not tree(arch / store.STAGING)  # the ingest's own run removed its directory


def test_a_compact_killed_while_staging_is_named_a_compact(arch: Path) -> None:
    killed("chmod", 1, "compact", arch)
    staged = _staged(arch)
    assert staged, tree(arch)
    assert _cleaned(arch) == [
        f"cleaned up after an interrupted compact: {len(staged)} uncommitted file(s)"]


def test_a_staging_directory_of_an_older_version_keeps_the_old_words(arch: Path) -> None:
    staged = arch / store.STAGING / "20261205T073023Z-b6296bc5" / "errors"
    staged.mkdir(parents=True)
    (staged / "part-20261205T073023Z-b6296bc5.parquet").write_bytes(b"PAR1")
    assert _cleaned(arch) == [
        "cleaned up after an interrupted ingest or compact: 1 uncommitted file(s)"]


@pytest.mark.parametrize("said", ["", "drop\n", "ingest\x00", "?" * 40])
def test_a_kind_that_is_not_one_keeps_the_old_words(arch: Path, said: str) -> None:
    staged = arch / store.STAGING / "20261205T073023Z-b6296bc5"
    (staged / "errors").mkdir(parents=True)
    (staged / store.RUN_KIND).write_text(said)
    (staged / "errors" / "part-20261205T073023Z-b6296bc5.parquet").write_bytes(b"PAR1")
    removed, cut_short = store.clean_up(str(arch))
    assert (removed, cut_short) == (
        [os.path.join(store.STAGING, "20261205T073023Z-b6296bc5", "errors",
                      "part-20261205T073023Z-b6296bc5.parquet")], ["ingest or compact"])


def test_a_run_killed_before_it_staged_a_part_leaves_nothing_to_say(arch: Path) -> None:
    """Its staging directory holds the kind alone: removed, and no file counted."""
    store.mark_stage(str(arch), "20261205T073023Z-b6296bc5", "ingest")
    assert _cleaned(arch) == []
    assert not tree(arch / store.STAGING)  # the ingest's own run removed its directory


# -- 3. a file larger than any match log: refused unread --------------------------------------

def test_a_sparse_file_larger_than_any_log_is_refused_unread_and_once(tmp_path: Path) -> None:
    """Before: hashed whole, then read by the check (a file of zeros is read to its end to
    say so), then hashed again: a 1 TB sparse file held the run for an hour, saying nothing.
    Here one byte over the bound, which took some 10 s."""
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(LOGS[0], src / "good.blog")
    with open(src / "huge.blog", "wb") as f:
        f.truncate(MAX_LOG_BYTES + 1)
    arch = tmp_path / "arch"
    t0 = time.monotonic()
    r = cli("ingest", src, "--archive", arch, "--jobs", "1", timeout=60)
    took = time.monotonic() - t0
    assert r.returncode == 1, r
    assert r.stdout.splitlines()[1:] == [
        f"refused: {src / 'huge.blog'}: [log.limit] not read: {MAX_LOG_BYTES + 1:,} bytes, "
        f"more than a match log holds (at most {MAX_LOG_BYTES:,}, a billion events)"], r.stdout
    assert "1 match added" in r.stdout and took < 30, (took, r.stdout)
    again = cli("ingest", src, "--archive", arch)
    assert again.returncode == 0 and "1 already stored" in again.stdout, again
    assert "1 refused before, 0 refused now" in again.stdout, again.stdout


# -- 4. two ingests into one new archive at once ----------------------------------------------

def test_a_clean_up_never_takes_the_marker_another_ingest_is_creating(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: one ingest, finding the marker already placed, took the lock and deleted the
    other's temporary marker as a creation's leftover ("cleaned up after an interrupted
    ingest or compact: 1 uncommitted file(s)"); the other failed with "archive.json.tmp-...:
    No such file or directory" (2 runs in 4 of two ingests started together)."""
    root = tmp_path / "arch"
    real_link = os.link
    other: list[object] = []

    def racing(tmp: str, final: str) -> None:  # between this creator's write and its link
        monkeypatch.setattr(os, "link", real_link)
        shutil.copyfile(tmp, final)  # another creator's marker, placed first
        try:
            other.append(ingest([str(LOGS[0])], root))
        except ArchiveError as exc:
            other.append(str(exc))
        real_link(tmp, final)

    monkeypatch.setattr(os, "link", racing)
    assert store.create_archive(str(root)) == os.path.realpath(root)
    assert other == [f"{os.path.realpath(root)}: another ingest or compact is running on "
                     f"this archive (process {os.getpid()}), holding its lock file .lock: one "
                     "writer at a time, run it again once that one ends [archive.locked]"], other
    assert not [n for n in os.listdir(root) if ".tmp-" in n]
    assert ingest([str(LOGS[0])], root).added == 1


# -- 5. a source tree deeper than Python's recursion limit ------------------------------------

def test_a_source_tree_1100_directories_deep_is_walked(tmp_path: Path) -> None:
    """Before: "internal error: RecursionError: maximum recursion depth exceeded" (the walk of
    Python 3.11 recursed once a level), audit's and ingest's alike."""
    src = tmp_path / "deep"
    where = str(src)
    os.mkdir(where)
    for _ in range(1100):  # 2,200 bytes of path: within PATH_MAX
        where = os.path.join(where, "d")
        os.mkdir(where)
    shutil.copy(LOGS[0], os.path.join(where, "m.blog"))
    try:
        assert find_logs([str(src)]) == [os.path.join(where, "m.blog")]  # ingest's walk
    finally:  # pytest's clean-up recurses too
        os.unlink(os.path.join(where, "m.blog"))
        while where != str(tmp_path):
            os.rmdir(where)
            where = os.path.dirname(where)


# -- 6. a memory limit past what DuckDB counts ------------------------------------------------

@pytest.mark.parametrize("limit", ["99999999TB", "18446744073709551.615KB"])
def test_a_memory_limit_duckdb_cannot_count_is_a_usage_line(arch: Path, limit: str) -> None:
    """Before: "cannot open DuckDB: Parser Error: Memory value out of range: value is too
    large", exit 1, as if the archive were at fault."""
    line = one_error_line(cli("query", arch, "SELECT 1", "--memory-limit", limit), 2)
    assert line == (f"buraco-log: error: --memory-limit {limit}: more than DuckDB can take "
                    "(less than 8 EiB; a limit past the machine's memory is no limit)"), line
