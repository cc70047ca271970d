"""Fault probes, round 42b, of the DuckDB archive: a directory tree deeper than Python's
recursion limit planted inside an archive is walked by verify, query, ingest's clean-up and
its checks (each was 'internal error: RecursionError': os.walk and shutil.rmtree of Python
3.11 recursed once a level); a non-finite or negative ``query --timeout`` is a usage line."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from buraco_log.archive import ingest, store
from buraco_log.archive.fixity import verify_archive
from tests.cli.probes import ROOT, cli, one_error_line

SIM = ROOT / "examples" / "sim"
LOG = sorted(SIM.glob("thirteen-quick-2p-*.blog"))[0]
DEPTH = 1100  # past the recursion limit (1,000); 2,200 bytes of path, within PATH_MAX


@pytest.fixture(scope="module")
def one(tmp_path_factory: pytest.TempPathFactory) -> Path:
    arch = tmp_path_factory.mktemp("one42b") / "arch"
    assert ingest([str(LOG)], arch).added == 1
    return arch


@pytest.fixture
def one_copy(one: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "arch"
    shutil.copytree(one, copy)
    return copy


def _plant(base: Path) -> str:
    """A chain of DEPTH directories under ``base``; returns the deepest. Each is made from
    its parent's descriptor: by its full path, each mkdir walked the whole chain again."""
    os.makedirs(base, exist_ok=True)
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(DEPTH):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
    finally:
        os.close(fd)
    return os.path.join(base, *["d"] * DEPTH)


def _unplant(base: Path) -> None:
    """pytest's clean-up recurses too: take a planted chain down from its bottom (from
    descriptors, as it was planted)."""
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    depth = 0
    try:
        while True:
            try:
                child = os.open("d", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                break
            os.close(fd)
            fd, depth = child, depth + 1
        for name in os.listdir(fd):
            os.unlink(name, dir_fd=fd)
        for _ in range(depth):
            parent = os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = parent
            os.rmdir("d", dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(base)


@pytest.fixture(scope="module")
def deep(one: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """An archive holding a tree DEPTH levels deep in a table's directory and at its top; its
    tests only read it, so one is planted for all of them."""
    copy = tmp_path_factory.mktemp("deep42b") / "arch"
    shutil.copytree(one, copy)
    planted = [copy / "events" / "deep", copy / "junk"]
    for base in planted:
        _plant(base)
    yield copy
    for base in planted:
        if base.exists():
            _unplant(base)


def test_verify_walks_a_deep_tree(deep: Path) -> None:
    report = verify_archive(str(deep))
    assert report.ok and report.verified == report.files > 0, report


def test_orphan_parts_walks_a_deep_tree(deep: Path) -> None:
    assert store.orphan_parts(str(deep)) == ([], [])


def test_check_writable_walks_a_deep_tree(deep: Path) -> None:
    store.check_writable(str(deep))  # raised RecursionError


@pytest.mark.parametrize("args", [("verify", "{a}"), ("query", "{a}", "SELECT count(*) AS n "
                                                      "FROM matches")])
def test_the_reading_commands_walk_a_deep_tree(deep: Path, args: tuple[str, ...]) -> None:
    """Before: "buraco-log: error: internal error: RecursionError: maximum recursion depth
    exceeded (a defect of buraco-log; ...)", status 1."""
    done = cli(*(a.format(a=deep) for a in args))
    assert done.returncode == 0 and "Error" not in done.stderr, (done.returncode, done.stderr)


def test_ingest_cleans_up_a_deep_tree_under_staging(one_copy: Path) -> None:
    """A tree left under .staging is removed whole by the next ingest (shutil.rmtree recursed),
    following no link, and its one file is counted."""
    bottom = _plant(one_copy / store.STAGING / "b1")
    Path(bottom, "x.parquet").write_bytes(b"x")
    outside = one_copy.parent / "outside"
    outside.mkdir()
    (outside / "keep").write_text("kept")
    os.symlink(outside, one_copy / store.STAGING / "b1" / "link")
    try:
        report = ingest([str(SIM / "burako-2p-000000.blog")], one_copy)
    finally:
        if (one_copy / store.STAGING / "b1").exists():
            _unplant(one_copy / store.STAGING / "b1")
    assert report.added == 1 and not (one_copy / store.STAGING / "b1").exists()
    assert report.recovered == [os.path.relpath(os.path.join(bottom, "x.parquet"), one_copy)]
    assert (outside / "keep").read_text() == "kept"


@pytest.mark.parametrize("command", ["query", "report"])
@pytest.mark.parametrize("limit", ["inf", "1e309", "-Infinity"])
def test_a_timeout_that_is_no_number_of_seconds_is_a_usage_line(
        one: Path, command: str, limit: str) -> None:
    """Before: inf and 1e309 (read as inf) ran the query with no limit at all."""
    args = [one, "SELECT 1 AS one"] if command == "query" else [one]
    line = one_error_line(cli(command, *args, f"--timeout={limit}"), 2)
    assert line.startswith("buraco-log: ") and "--timeout" in line, line


def test_a_negative_or_nan_timeout_stays_a_usage_line(one: Path) -> None:
    for limit in ("-1", "nan"):
        one_error_line(cli("query", one, "SELECT 1 AS one", f"--timeout={limit}"), 2)


# -- a cut copy of a match: what ingest does with it, the full match stored or not ----------

FORMAT = ROOT / "examples" / "format"


def _cuts(tmp: Path) -> dict[str, tuple[Path, str]]:
    """Cut copies of two logs, each with the rule ingest refuses it by: mid-record (the brief's
    first 3,000 bytes), at a record boundary before MatchEnded."""
    jsonl = (FORMAT / "v1.jsonl").read_bytes()
    binary = (FORMAT / "v1.blog").read_bytes()
    lines = jsonl.splitlines(keepends=True)
    made = {"mid-line.jsonl": (jsonl[:3000], "log.torn"),  # a last line cut short
            "mid-record.blog": (binary[:3000], "log.torn"),
            "before-end.jsonl": (b"".join(lines[:len(lines) // 2]), "archive.incomplete")}
    out = {}
    for name, (data, rule) in made.items():
        (tmp / name).write_bytes(data)
        out[name] = (tmp / name, rule)
    return out


@pytest.mark.parametrize("stored", [False, True], ids=["empty archive", "full match stored"])
def test_a_damaged_or_unfinished_copy_is_an_error_row_whatever_the_archive_holds(
        tmp_path: Path, stored: bool) -> None:
    """A cut copy is never "1 duplicate": mid-record it is damaged (log.torn), cut
    at a record boundary before MatchEnded it is unfinished (archive.incomplete), with the
    full match stored or not (probed: every cut of the format examples, byte by byte)."""
    arch = tmp_path / "arch"
    if stored:
        assert ingest([str(FORMAT / "v1.jsonl"), str(FORMAT / "v1.blog")], arch).added == 1
    for path, rule in _cuts(tmp_path).values():
        report = ingest([str(path)], arch)
        assert (report.added, report.duplicates) == (0, 0), (path, report)
        assert [(e.path, e.rule) for e in report.errors] == [(str(path), rule)], report.errors


def test_a_copy_cut_after_match_ended_is_the_same_match(tmp_path: Path) -> None:
    """What docs/archive.md says of it: a JSON Lines copy without its end line holds every
    event, so it is the same match (same head digest), unsealed: a duplicate of the stored
    one, or stored as an unsealed match when the archive holds none."""
    lines = (FORMAT / "v1.jsonl").read_bytes().splitlines(keepends=True)
    assert lines[-1].startswith(b'{"log": "end"')
    cut = tmp_path / "no-end.jsonl"
    cut.write_bytes(b"".join(lines[:-1]))
    alone = ingest([str(cut)], tmp_path / "alone")
    assert (alone.added, alone.duplicates, alone.errors) == (1, 0, [])
    both = ingest([str(FORMAT / "v1.jsonl"), str(cut)], tmp_path / "both")
    assert (both.added, both.duplicates, both.errors) == (1, 1, [])
