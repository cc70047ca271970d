"""Issue 13 items 4 and 6 (audit side): a directory holding one of each hostile file beside good
logs. ``audit DIR`` and ``audit --jobs 2 DIR`` finish in bounded time (a real subprocess under
a timeout), report each bad file with its reason, and check every good one."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from buraco_log import audit
from buraco_log.events import AnyEvent, MatchStarted
from buraco_log.jsonl import binary_to_jsonl
from tests import brokenlogs as bl

ROOT = Path(__file__).resolve().parents[2]
GOOD = ("a-good.blog", "b-good.jsonl", "c-nameless-good", "d-link-to-good.blog")
# file name -> (integrity kind or finding rule, words the reason must hold)
BAD = {
    "pipe.blog": ("log.filetype", "FIFO"),
    "notes": ("log.filetype", "FIFO"),
    "zero.blog": ("log.filetype", "character device"),
    "gone.blog": ("log.unreadable", "which does not exist"),
    "sock.blog": ("log.filetype", "socket"),
    "bomb.blog": ("match.rules", "jokers"),
    "sparse.blog": ("log.header", ""),
}


def bomb(events: list[AnyEvent]) -> list[AnyEvent]:
    start = events[0]
    assert isinstance(start, MatchStarted)
    rules = msgspec.structs.replace(start.rules, jokers=10**9)
    return [msgspec.structs.replace(start, rules=rules), *events[1:40]]


@pytest.fixture(scope="module")
def hostile() -> Iterator[Path]:
    # A short path: a Unix socket's name is limited to about 100 bytes.
    with tempfile.TemporaryDirectory(prefix="hd", dir="/tmp") as tmp:
        d = Path(tmp)
        events = bl.fair_match("thirteen-quick", 2, 1)
        bl.write(d / "a-good.blog", events)
        binary_to_jsonl(d / "a-good.blog", d / "b-good.jsonl")
        bl.write(d / "c-nameless-good", events)  # a log by its magic bytes, not its name
        (d / "d-link-to-good.blog").symlink_to(d / "a-good.blog")
        os.mkfifo(d / "pipe.blog")
        os.mkfifo(d / "notes")
        (d / "zero.blog").symlink_to("/dev/zero")
        (d / "gone.blog").symlink_to(d / "nowhere.blog")
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(d / "sock.blog"))
        bl.write(d / "bomb.blog", bomb(events))
        with open(d / "sparse.blog", "wb") as f:
            f.truncate(1 << 30)  # 1 GiB of holes
        (d / "loop").symlink_to(".")  # a link to a directory: not followed
        (d / "README.txt").write_text("not a log\n")
        try:
            yield d
        finally:
            sock.close()


def run_audit(*args: str) -> tuple[int, str, str]:
    out = subprocess.run([sys.executable, "-m", "cli.main", "audit", *args], cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=False,
                         stdin=subprocess.DEVNULL)
    return out.returncode, out.stdout, out.stderr


def by_name(verdicts: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {Path(v["path"]).name: v for v in verdicts}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_directory_of_hostile_files_is_audited_in_bounded_time(
        hostile: Path, jobs: str) -> None:
    code, out, err = run_audit("--jobs", jobs, "--format", "json", str(hostile))
    assert code == 2, err  # an entry is no log: the batch's worst status
    got = by_name(json.loads(out))
    assert set(got) == set(GOOD) | set(BAD), "README.txt and the loop are no logs"
    for name in GOOD:
        assert got[name]["ok"], (name, got[name]["findings"])
        assert got[name]["legality"]["complete"]
    for name, (rule, words) in BAD.items():
        v = got[name]
        assert not v["ok"]
        rules = [f["rule"] for f in v["findings"]]
        assert rule in rules, (name, v["findings"])
        assert words in " ".join(f["message"] for f in v["findings"]), (name, v["findings"])


def test_the_table_names_each_bad_file_and_its_reason(hostile: Path) -> None:
    code, out, _ = run_audit("--jobs", "2", "--quiet", str(hostile))
    assert code == 2  # an entry is no log: the batch's worst status
    for name in BAD:
        line = next(x for x in out.splitlines() if x.startswith(str(hostile / name) + ":"))
        assert "FINDINGS" in line
    assert "unreadable [log.filetype]: not a regular file (a FIFO): skipped, never opened" in out
    assert f"audited {len(GOOD) + len(BAD)} logs: {len(GOOD)} clean" in out


def test_a_fifo_given_by_name_is_reported_not_opened(hostile: Path) -> None:
    code, out, err = run_audit("--format", "json", str(hostile / "pipe.blog"))
    assert code == 2 and err == ""  # named alone, and no log at all: exit 2 (docs/cli.md)
    v = json.loads(out)
    assert v["integrity"]["kind"] == "filetype"


def test_only_regular_files_are_opened_by_the_walk(hostile: Path) -> None:
    found = {Path(p).name for p in audit.find_logs([hostile])}
    assert found == set(GOOD) | set(BAD)
    assert not audit.is_log_file(hostile / "notes")  # a FIFO: never opened to sniff it
    assert audit.is_log_file(hostile / "c-nameless-good")
    assert not audit.is_log_file(hostile / "README.txt")


def test_a_clean_directory_still_audits_clean(tmp_path: Path) -> None:
    bl.write(tmp_path / "a.blog", bl.match("classic", 2, 1, max_hands=1))
    code, out, _ = run_audit(str(tmp_path))
    assert code == 0, out
