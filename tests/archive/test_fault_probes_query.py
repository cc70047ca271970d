"""Fault probes of `query` and `report` as real processes: a time limit too small to meet the
query's start, one too large for a timer, and outputs that would land inside the archive."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from buraco_log.archive import query
from buraco_log.errors import ArchiveError
from tests.archive.conftest import Archived
from tests.archive.filetree import sized_tree

REPO = Path(__file__).resolve().parents[2]
ENDLESS = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"


def _run(*args: object, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=REPO,
                          env={**os.environ, "COLUMNS": "200"})


@pytest.mark.parametrize("limit", ["1e-9", "0.000001"])
def test_a_time_limit_shorter_than_the_query_start_still_stops_it(archived: Archived,
                                                                  limit: str) -> None:
    # the one interrupt came before the query started and was dropped: it ran with no limit
    started = time.monotonic()
    r = _run("query", archived.path, ENDLESS, "--timeout", limit, timeout=45)
    assert r.returncode == 1 and r.stdout == "", r
    assert r.stderr == f"buraco-log: error: query: stopped after the {float(limit)} s time limit\n"
    assert time.monotonic() - started < 30


def test_the_library_time_limit_holds_however_small(archived: Archived) -> None:
    slow = "SELECT sum(hash(range)) AS s FROM range(4000000000)"  # some 15 s: it finished
    for limit in (1e-9, 1e-3):
        started = time.monotonic()
        with pytest.raises(ArchiveError, match="time limit"):
            query(archived.path, slow, timeout=limit)
        assert time.monotonic() - started < 5
    assert query(archived.path, "SELECT 1 AS x", timeout=30).to_pylist() == [{"x": 1}]


@pytest.mark.parametrize("limit", ["1e308", "1e300"])  # inf: a usage line (archive42b)
def test_a_time_limit_too_large_for_a_timer_is_no_limit_not_a_traceback(
        archived: Archived, limit: str) -> None:
    # the timer thread died with 'OverflowError: timestamp out of range' on stderr
    r = _run("query", archived.path, "SELECT count(*) AS n FROM matches", "--timeout", limit,
             "-f", "csv")
    assert (r.returncode, r.stderr) == (0, ""), r
    assert r.stdout.startswith("n\n")


OUTPUTS = {"query csv": ["query", "{arch}", "SELECT 1 AS x", "-f", "csv", "-o", "{out}"],
           "report html": ["report", "{arch}", "-f", "html", "-o", "{out}"],
           "query parquet": ["query", "{arch}", "SELECT 1 AS x", "-f", "parquet", "-o", "{out}"]}
# (target, writer) of the default run: each target and each writer once (every pair in the
# slow run: 15 processes took 12 s)
QUICK = {("archive.json", "query csv"), ("report.html", "report html"),
         ("matches/r.csv", "query parquet"), ("_batches/evil.json", "report html"),
         (".", "query parquet")}


@pytest.mark.parametrize(("target", "writer"), [
    pytest.param(target, writer, marks=() if (target, writer) in QUICK else pytest.mark.slow)
    for target in ("archive.json", "_batches/evil.json", "matches/r.csv", "report.html", ".")
    for writer in OUTPUTS])
def test_an_output_inside_the_archive_is_refused_and_the_archive_unchanged(
        archived: Archived, tmp_path: Path, target: str, writer: str) -> None:
    # query -o ARCHIVE/archive.json replaced the marker (no command opened the archive again)
    # and report -f html -o ARCHIVE/r.html wrote its match pages into ARCHIVE/matches
    arch = tmp_path / "a"
    shutil.copytree(archived.path, arch)
    before = sized_tree(arch)
    out = arch / target
    r = _run(*(a.format(arch=arch, out=out) for a in OUTPUTS[writer]))
    assert r.returncode == 2 and r.stdout == "", r
    assert r.stderr.count("\n") == 1 and "inside the archive" in r.stderr, r.stderr
    assert r.stderr.startswith(f"buraco-log: error: {out}")
    assert sized_tree(arch) == before


def test_an_output_through_a_link_into_the_archive_is_refused_and_one_beside_it_written(
        archived: Archived, tmp_path: Path) -> None:
    # once, not for each target above: neither depends on it (8 runs of the CLI fewer)
    arch = tmp_path / "a"
    shutil.copytree(archived.path, arch)
    before = sized_tree(arch)
    link = tmp_path / "link"  # through a link to a directory of the archive
    link.symlink_to(arch / "_batches")
    r = _run("query", arch, "SELECT 1 AS x", "-o", link / "x.json")
    assert r.returncode == 2 and "inside the archive" in r.stderr
    assert sized_tree(arch) == before
    ok = _run("query", arch, "SELECT 1 AS x", "-f", "csv", "-o", tmp_path / "x.csv")
    assert ok.returncode == 0 and (tmp_path / "x.csv").read_text() == "x\n1\n"


NAMES = ("\x1b[31mRED\x1b[0m\nforged row\r", "bidi \u202eevil")
MATCH_ID = "m\x1b[2J\x07id"


@pytest.fixture(scope="module")
def hostile_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An archive of one match whose names and match id hold control characters, and a
    damaged log whose file name does."""
    import msgspec

    from buraco_log import log
    from buraco_log.archive import ingest
    from buraco_log.rules import preset
    from buraco_log.simulate import simulate_match

    root = tmp_path_factory.mktemp("hostile-names")
    logs = root / "logs"
    logs.mkdir()
    events = simulate_match(preset("thirteen-quick"), 2, seed="names")
    start = events[0]
    players = tuple(msgspec.structs.replace(p, name=n)
                    for p, n in zip(start.players, NAMES, strict=True))
    events[0] = msgspec.structs.replace(start, players=players, match_id=MATCH_ID)
    log.write_log(logs / "m.blog", events)
    ingest([str(logs)], root / "a")
    return root


def _no_controls(text: str) -> None:
    for bad in ("\x1b", "\r", "\x07", "\u202e", "forged row\n"):
        assert bad not in text, (bad, text[:500])


def test_table_output_escapes_control_characters_from_the_logs(hostile_archive: Path) -> None:
    # an ESC sequence in a player's name cleared the screen; a newline forged a row
    arch = hostile_archive / "a"
    r = _run("query", arch, "SELECT match_id, players FROM matches")
    assert r.returncode == 0, r
    _no_controls(r.stdout)
    assert "m\\x1b[2J\\x07id" in r.stdout and len(r.stdout.splitlines()) == 3
    r = _run("query", arch, "SELECT p AS player FROM matches, unnest(players) AS t(p)")
    _no_controls(r.stdout)
    assert "\\x1b[31mRED\\x1b[0m\\x0aforged row\\x0d" in r.stdout
    assert "bidi \\u202eevil" in r.stdout
    rep = _run("report", arch)
    assert rep.returncode == 0, rep
    _no_controls(rep.stdout)
    assert "\\x1b[31mRED" in rep.stdout
    csv_out = _run("query", arch, "SELECT match_id FROM matches", "-f", "csv")
    assert MATCH_ID in csv_out.stdout  # for programs: the value exactly


def test_a_refused_log_whose_name_holds_control_characters_is_one_escaped_line(
        hostile_archive: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    bad = logs / "bad\nname\x1b[2J.blog"
    bad.write_bytes(b"BURACOLG" + b"\x00" * 100)
    r = _run("ingest", logs, "--archive", tmp_path / "a")
    assert r.returncode == 1, r
    refused = [line for line in r.stdout.splitlines() if line.startswith("refused:")]
    assert len(refused) == 1 and "bad\\x0aname\\x1b[2J.blog" in refused[0], r.stdout
    _no_controls(r.stdout)
