"""Issue 13 items 4-6 and 11 (ingest side): one hostile file of each kind beside good logs.

``ingest DIR`` runs as a real process under a timeout (a FIFO or a link to ``/dev/zero`` hung
it forever; a rules bomb took 6.2 GB), archives every good log, and records each bad file in
the errors table with its reason. An ``at`` outside the datetime range was an internal error;
it is a data error with its own rule.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from buraco_log.archive import query
from buraco_log.archive.flatten import AT_MAX, AT_MIN
from buraco_log.events import AnyEvent, MatchStarted
from buraco_log.jsonl import binary_to_jsonl
from tests import brokenlogs as bl

ROOT = Path(__file__).resolve().parents[2]
GOOD = ("a-good.blog", "b-good.jsonl", "c-nameless-good", "e-last-year.blog",
        "f-first-year.blog")
# file name -> (errors-table code, rule (None: any), words the message must hold)
BAD = {
    "pipe.blog": ("integrity", "log.filetype", "FIFO"),
    "notes": ("integrity", "log.filetype", "FIFO"),
    "zero.blog": ("integrity", "log.filetype", "character device"),
    "gone.blog": ("integrity", "log.unreadable", "which does not exist"),
    "sock.blog": ("integrity", "log.filetype", "socket"),
    # the audit's first finding names the knob, whichever check met it first
    "bomb.blog": (None, None, "'jokers': 1000000000 is out of bounds"),
    "bomb.jsonl": (None, None, "'jokers': 1000000000 is out of bounds"),
    "sparse.blog": ("integrity", "log.header", ""),
    "at-future.blog": ("range", "archive.at_range", "MatchStarted at 4611686018427387904 ms"),
    "at-past.blog": ("range", "archive.at_range", "MatchStarted at -4611686018427387904 ms"),
    "at-end.blog": ("range", "archive.at_range", "MatchEnded at 9223372036854775807 ms"),
}


def with_at(events: list[AnyEvent], index: int, at: int) -> list[AnyEvent]:
    out = list(events)
    out[index] = msgspec.structs.replace(out[index], at=at)
    return out


def bomb(events: list[AnyEvent]) -> list[AnyEvent]:
    start = events[0]
    assert isinstance(start, MatchStarted)
    rules = msgspec.structs.replace(start.rules, jokers=10**9)
    return [msgspec.structs.replace(start, rules=rules), *events[1:40]]


@pytest.fixture(scope="module")
def hostile() -> Iterator[Path]:
    # A short path: a Unix socket's name is limited to about 100 bytes.
    with tempfile.TemporaryDirectory(prefix="ah", dir="/tmp") as tmp:
        d = Path(tmp) / "logs"
        d.mkdir()
        one, two, three = (bl.fair_match("thirteen-quick", 2, seed) for seed in (1, 2, 3))
        bl.write(d / "a-good.blog", one)
        bl.write(Path(tmp) / "two.blog", two)
        binary_to_jsonl(Path(tmp) / "two.blog", d / "b-good.jsonl")
        bl.write(d / "c-nameless-good", three)  # a log by its magic bytes, not its name
        (d / "d-link-to-good.blog").symlink_to(d / "a-good.blog")  # the same bytes again
        four = bl.fair_match("thirteen-quick", 2, 4)
        bl.write(d / "e-last-year.blog", with_at(four, 0, AT_MAX))
        five = bl.fair_match("thirteen-quick", 2, 5)
        bl.write(d / "f-first-year.blog", with_at(five, 0, AT_MIN))
        os.mkfifo(d / "pipe.blog")
        os.mkfifo(d / "notes")
        (d / "zero.blog").symlink_to("/dev/zero")
        (d / "gone.blog").symlink_to(d / "nowhere.blog")
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(d / "sock.blog"))
        bl.write(d / "bomb.blog", bomb(one))
        binary_to_jsonl(d / "bomb.blog", d / "bomb.jsonl")
        with open(d / "sparse.blog", "wb") as f:
            f.truncate(1 << 30)  # 1 GiB of holes
        bl.write(d / "at-future.blog", with_at(one, 0, 2**62))
        bl.write(d / "at-past.blog", with_at(two, 0, -(2**62)))
        bl.write(d / "at-end.blog", with_at(three, -1, 2**63 - 1))
        (d / "loop").symlink_to(".")  # a link to a directory: not followed
        (d / "README.txt").write_text("not a log\n")
        try:
            yield d
        finally:
            sock.close()


_PARENT = """
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=120,
                   stdin=subprocess.DEVNULL)
sys.stderr.write(r.stderr)
sys.stdout.write(r.stdout)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
sys.exit(r.returncode)
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ingest_of_a_directory_of_hostile_files_finishes_and_records_each(
        hostile: Path, tmp_path: Path, jobs: str) -> None:
    archive = tmp_path / "archive"
    r = subprocess.run([sys.executable, "-c", _PARENT, sys.executable, "-m", "cli.main",
                        "ingest", str(hostile), "--archive", str(archive), "--jobs", jobs],
                       cwd=ROOT, capture_output=True, text=True, timeout=180, check=False)
    *lines, peak = r.stdout.splitlines()
    assert r.returncode == 1, r.stderr  # findings in the data
    assert int(peak) < 1 << 30  # the bomb took 6.2 GB
    summary = lines[0]
    assert f"{len(GOOD) + 1 + len(BAD)} logs: {len(GOOD)} matches added" in summary, summary
    assert "1 duplicate," in summary  # the link to a-good.blog
    stored = {Path(p).name for p in query(archive, "SELECT source_path FROM matches")
              .column("source_path").to_pylist()}
    assert stored == set(GOOD)
    errors = {Path(row["source_path"]).name: row for row in
              query(archive, "SELECT source_path, code, rule, message FROM errors").to_pylist()}
    assert set(errors) == set(BAD)
    for name, (code, rule, words) in BAD.items():
        row = errors[name]
        if rule is not None:
            assert (row["code"], row["rule"]) == (code, rule), (name, row)
        assert words in row["message"], (name, row)
    for name in BAD:  # the table names each with its reason
        assert any(x.startswith(f"refused: {hostile / name}:") for x in lines), name


def test_times_at_the_ends_of_the_range_are_stored_and_queried(hostile: Path,
                                                               tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    subprocess.run([sys.executable, "-m", "cli.main", "ingest", str(hostile / "e-last-year.blog"),
                    str(hostile / "f-first-year.blog"), "--archive", str(archive)],
                   cwd=ROOT, capture_output=True, timeout=120, check=True)
    rows = query(archive, "SELECT year(started_at) AS y, month FROM matches ORDER BY y"
                 ).to_pylist()
    assert rows == [{"y": 1, "month": "0001-01"}, {"y": 9999, "month": "9999-12"}]

