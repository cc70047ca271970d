"""Fault probes of the log readers, round 39: a JSON Lines file that grows while it is read.

A reader went on until it met the end of the file: a program appending lines (comments) as fast
as they were read kept ``verify`` reading until the disk was full. A reader now reads the bytes
the file held when it began; what is appended after is for the next read."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from buraco_log.jsonl import JsonlReader

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "examples" / "golden" / "classic.jsonl"


def _start(tmp_path: Path, events: int) -> Path:
    """A JSON Lines log of the golden match's first ``events`` events and no end line."""
    lines = GOLDEN.read_text().splitlines()
    path = tmp_path / "grows.jsonl"
    path.write_text("\n".join(lines[: events + 1]) + "\n")
    return path


def test_lines_appended_while_a_log_is_read_are_not_read(tmp_path: Path) -> None:
    path = _start(tmp_path, 5)
    read = []
    for event in JsonlReader(path):
        read.append(event)
        if len(read) == 1:  # appended after the reading began: not this read's
            with open(path, "a") as f:
                f.write("this line is no JSON\n" * 10000)
    assert [e.seq for e in read] == [0, 1, 2, 3, 4]


_COMMENTS = b"# a comment line, skipped by every reader\n" * 4096


def _positions(pid: int, path: Path) -> list[int] | None:
    """Where each descriptor process ``pid`` holds on ``path`` stands; None once it ended."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except FileNotFoundError:
        return None
    at = []
    for fd in fds:
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/{pid}/fd/{fd}") == str(path):
                with open(f"/proc/{pid}/fdinfo/{fd}") as info:
                    at.append(int(info.readline().split()[1]))  # "pos:\t1234"
    return at


@pytest.mark.slow  # seconds of reading while this test keeps the log growing ahead of it
def test_verify_of_a_log_that_keeps_growing_ahead_of_it_ends(tmp_path: Path) -> None:
    path = _start(tmp_path, 5)
    with open(path, "ab") as f:  # enough to read that verify is caught reading it
        f.write(_COMMENTS * 20)
    verify = subprocess.Popen([sys.executable, "-m", "cli", "verify", str(path)], cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    try:
        with open(path, "ab", buffering=0) as f:
            while verify.poll() is None and time.monotonic() < deadline:
                at = _positions(verify.pid, path) or []
                if at and os.fstat(f.fileno()).st_size - min(at) < 4 << 20:
                    f.write(_COMMENTS)  # a megabyte or so ahead of the reader, always
                else:
                    time.sleep(0.001)
        ended = verify.poll() is not None
    finally:
        if verify.poll() is None:
            verify.kill()
        out, err = verify.communicate()
        path.unlink()
    assert ended, "verify read on while the log grew ahead of it"
    assert (verify.returncode, err) == (0, "")
    assert "5 events" in out
