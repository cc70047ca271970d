"""Inputs that hang: a JSON Lines line of a gigabyte. The reader refuses it from its first
megabyte; `review` then read the whole line into memory (2.1 GB, more than 10 s) to say at
which byte it starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _gigabyte_second_line(tmp_path: Path) -> tuple[Path, int]:
    """A JSON Lines log whose second line is a gigabyte long (a sparse file: no disk used)."""
    first = b'{"log": "buraco-log", "version": 2, "sealed": true}\n'
    path = tmp_path / "long.jsonl"
    with open(path, "wb") as f:
        f.write(first + b'{"t": "dr", "seat": ')
        f.truncate(1 << 30)
    return path, len(first)


def test_the_start_of_a_line_is_found_in_bounded_memory(tmp_path: Path) -> None:
    import tracemalloc

    from buraco_log.jsonl import line_start

    path, first = _gigabyte_second_line(tmp_path)
    tracemalloc.start()
    try:
        assert line_start(path, 2) == first
        assert line_start(path, 1) == 0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20
    small = tmp_path / "s.jsonl"
    small.write_bytes(b"a\nbb\n\nccc\r\nd")
    assert [line_start(small, n) for n in range(1, 7)] == [0, 2, 5, 6, 11, 12]


def _address_space(limit: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.slow
def test_review_of_a_log_with_a_gigabyte_line_names_it_in_bounded_memory(
        tmp_path: Path) -> None:
    """`review` refused the line from its first megabyte, then read all of it into memory
    (2.1 GB, more than 10 s) to say at which byte it starts; in 500 MB of address space it
    failed with an internal error."""
    path, first = _gigabyte_second_line(tmp_path)
    p = subprocess.run([sys.executable, "-m", "cli.main", "review", str(path), "--seat", "0"],
                       capture_output=True, timeout=30, cwd=REPO,
                       env=dict(os.environ, PYTHONPATH=str(REPO)),
                       preexec_fn=lambda: _address_space(500 << 20))
    err = p.stderr.decode()
    assert p.returncode == 1, err
    assert err.splitlines() == [
        f"buraco-log: error: {path}, byte {first}, line 2, seq 0: the log is damaged before its "
        "first event (limit: line longer than 1048576 bytes): no event is intact, nothing to "
        "review [log.limit]"]


def _endless(first: bytes, block: bytes) -> tuple[int, str, int]:
    """`verify -` fed ``first`` then ``block`` again and again (up to 4 GiB, more than any
    copy takes): its exit status, its standard error and how many bytes it was sent."""
    import threading

    proc = subprocess.Popen([sys.executable, "-m", "cli.main", "verify", "-"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, cwd=REPO,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    sent = [0]

    def feed() -> None:
        assert proc.stdin is not None
        try:
            proc.stdin.write(first)
            while sent[0] < 4 << 30:
                proc.stdin.write(block)
                sent[0] += len(block)
        except (BrokenPipeError, ValueError):
            pass

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        assert proc.stderr is not None
        err = proc.stderr.read()  # to its end: the process has exited
        proc.wait(timeout=30)
    finally:
        proc.kill()
        proc.wait()
    feeder.join(5)
    for pipe in (proc.stdin, proc.stderr):
        if pipe is not None:
            pipe.close()
    return proc.returncode, err.decode(), sent[0]


@pytest.mark.slow
def test_a_json_line_of_no_end_on_standard_input_is_refused_from_its_first_megabytes() -> None:
    """`verify -` fed `{` then an endless stream: the line is refused as the reader refuses
    it in a file, once its first MAX_LINE + 2 bytes are in; it was copied on to a gigabyte
    (7 s, a gigabyte of /tmp: of memory where /tmp is tmpfs), then refused as too much input,
    exit 2, never naming the line."""
    code, err, sent = _endless(
        b'{"log": "buraco-log", "version": 2}\n{"t": "ms", "match_id": "', b"a" * (1 << 20))
    assert code == 1, err
    assert err.splitlines() == [
        "buraco-log: error: <stdin>, line 2, seq 0: line longer than 1048576 bytes [log.limit]"]
    assert sent < 64 << 20


@pytest.mark.slow
def test_endless_comment_lines_on_standard_input_are_refused_past_the_readers_limit() -> None:
    """`verify -` fed comment lines without end: refused at the line the reader refuses, its
    100,001st blank or comment line in a row (copied on to a gigabyte, 4 s, then refused as
    too much input, exit 2)."""
    code, err, sent = _endless(b'{"log": "buraco-log", "version": 2}\n', b"# c\n" * (1 << 18))
    assert code == 1, err
    assert err.splitlines() == [
        "buraco-log: error: <stdin>, line 100002, seq 0: more than 100,000 blank or comment "
        "lines in a row: no match log holds that many [log.limit]"]
    assert sent < 64 << 20
