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

REPO = Path(__file__).resolve().parents[2]
ENDLESS = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"


def _run(*args: object, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=REPO,
                          env={**os.environ, "COLUMNS": "200"})


def _tree(root: Path) -> list[tuple[str, int, int]]:
    out = []
    for dirpath, dirs, names in os.walk(root):
        for name in dirs + names:
            st = os.lstat(os.path.join(dirpath, name))
            out.append((os.path.relpath(os.path.join(dirpath, name), root), st.st_size,
                        st.st_mtime_ns))
    return sorted(out)


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


@pytest.mark.parametrize("limit", ["inf", "1e308"])
def test_a_time_limit_too_large_for_a_timer_is_no_limit_not_a_traceback(
        archived: Archived, limit: str) -> None:
    # the timer thread died with 'OverflowError: timestamp out of range' on stderr
    r = _run("query", archived.path, "SELECT count(*) AS n FROM matches", "--timeout", limit,
             "-f", "csv")
    assert (r.returncode, r.stderr) == (0, ""), r
    assert r.stdout.startswith("n\n")


@pytest.mark.parametrize("target", ["archive.json", "_batches/evil.json", "matches/r.csv",
                                    "report.html", "."])
def test_an_output_inside_the_archive_is_refused_and_the_archive_unchanged(
        archived: Archived, tmp_path: Path, target: str) -> None:
    # query -o ARCHIVE/archive.json replaced the marker (no command opened the archive again)
    # and report -f html -o ARCHIVE/r.html wrote its match pages into ARCHIVE/matches
    arch = tmp_path / "a"
    shutil.copytree(archived.path, arch)
    before = _tree(arch)
    out = arch / target
    for args in (["query", arch, "SELECT 1 AS x", "-f", "csv", "-o", out],
                 ["report", arch, "-f", "html", "-o", out],
                 ["query", arch, "SELECT 1 AS x", "-f", "parquet", "-o", out]):
        r = _run(*args)
        assert r.returncode == 2 and r.stdout == "", r
        assert r.stderr.count("\n") == 1 and "inside the archive" in r.stderr, r.stderr
        assert r.stderr.startswith(f"buraco-log: error: {out}")
        assert _tree(arch) == before
    link = tmp_path / "link"  # through a link to a directory of the archive
    link.symlink_to(arch / "_batches")
    r = _run("query", arch, "SELECT 1 AS x", "-o", link / "x.json")
    assert r.returncode == 2 and "inside the archive" in r.stderr
    assert _tree(arch) == before
    ok = _run("query", arch, "SELECT 1 AS x", "-f", "csv", "-o", tmp_path / "x.csv")
    assert ok.returncode == 0 and (tmp_path / "x.csv").read_text() == "x\n1\n"
