"""Fault probes of the log readers, round 39: a JSON Lines file that grows while it is read,
and null where the first or end line needs a value.

A reader went on until it met the end of the file: a program appending lines (comments) as fast
as they were read kept ``verify`` reading until the disk was full. A reader now reads the bytes
the file held when it began; what is appended after is for the next read.

``"head": null`` on the end line read as no head (the log called unsealed, though
``LOG_FORMAT.md`` says anything but 64 hex digits is refused), ``"events": null`` as "end line
says None events", and a first line's ``"version": null`` as "version None: this buraco_log
reads version 2" (it reads 1 and 2)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from buraco_log import log
from buraco_log.errors import LogFormatError
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


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=60)


def _with_lines(tmp_path: Path, first: str, end: str) -> Path:
    lines = GOLDEN.read_text().splitlines()
    path = tmp_path / "edited.jsonl"
    path.write_text("\n".join([first, *lines[1:6], end]) + "\n")
    return path


_FIRST = '{"log": "buraco-log", "version": 2, "sealed": true}'
_END = '{"log": "end", "events": 5}'


@pytest.mark.parametrize(("first", "end", "line", "words"), [
    (_FIRST, '{"log": "end", "events": 5, "head": null}', 7,
     "'head' on the end line must be a head digest (64 hex digits), not null"),
    (_FIRST, '{"log": "end", "events": null}', 7,
     "'events' on the end line must be a count, not null"),
    ('{"log": "buraco-log", "version": null}', _END, 1,
     "'version' on the first line must be an integer, not null"),
    ('{"log": "buraco-log", "version": "2"}', _END, 1,
     "'version' on the first line must be an integer, not \"2\""),
    ('{"log": "buraco-log", "sealed": null}', _END, 1,
     "'sealed' on the first line must be true or false, not null"),
])
def test_null_or_text_on_a_first_or_end_line_is_refused_on_its_line(
        tmp_path: Path, first: str, end: str, line: int, words: str) -> None:
    path = _with_lines(tmp_path, first, end)
    with pytest.raises(LogFormatError) as caught:
        list(JsonlReader(path))
    assert caught.value.line == line and caught.value.message == words


def test_verify_refuses_an_end_lines_null_head_in_one_line(tmp_path: Path) -> None:
    path = _with_lines(tmp_path, _FIRST, '{"log": "end", "events": 5, "head": null}')
    done = _cli("verify", path)  # it said "5 events in 5 records, unsealed", exit 0
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"buraco-log: error: {path}, line 7: 'head' on the end " \
        "line must be a head digest (64 hex digits), not null [log.jsonl]\n"


def test_a_version_out_of_range_says_which_versions_are_read(tmp_path: Path) -> None:
    path = _with_lines(tmp_path, '{"log": "buraco-log", "version": 3}', _END)
    with pytest.raises(LogFormatError) as caught:
        list(JsonlReader(path))
    assert (caught.value.line, caught.value.kind) == (1, "version")  # exit status 2
    assert caught.value.message == ("JSON Lines of event format version 3: this buraco_log "
                                    "reads versions 1 to 2" + log.NEWER_ADVICE)


def test_the_same_lines_with_their_values_read(tmp_path: Path) -> None:
    path = _with_lines(tmp_path, _FIRST, _END)  # the edits above are all that is wrong
    assert [e.seq for e in JsonlReader(path)] == [0, 1, 2, 3, 4]


def test_a_line_of_many_cards_parses_each_spelling_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: every card of a line was parsed anew (about 17 us each): a 1 MiB line naming
    170,000 cards took 3 s, a log of such lines minutes."""
    from buraco_log import jsonl

    calls = 0
    real = jsonl.parse_card

    def counting(text: str) -> int:
        nonlocal calls
        calls += 1
        return real(text)

    monkeypatch.setattr(jsonl, "parse_card", counting)
    jsonl._card_code.cache_clear()
    cards = ", ".join(['"7h"', '"Th"', '"JK"', '"2c"'] * 5000)
    path = tmp_path / "cards.jsonl"
    path.write_text('{"t": "hs", "seq": 0, "hand": 0, "dealer": 0, "hands": [[' + cards
                    + ']], "stock": ["x9"]}\n')
    with pytest.raises(LogFormatError) as caught:  # a card no one spells: still refused
        list(JsonlReader(path))
    assert "'x9' is not a card" in caught.value.message
    assert calls == 5  # the four spellings of the 20,000 cards, and the one refused
    with pytest.raises(LogFormatError):  # a refusal is not remembered as a card
        list(JsonlReader(path))
    assert calls == 6


def test_verify_of_json_lines_describes_the_one_read_it_checked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: `verify` checked the lines with one read, then took the head digest, record
    count and sealing from a second read: a log that grew in between was described by events
    it had never checked."""
    from cli import log_cmd

    path = _start(tmp_path, 5)
    more = GOLDEN.read_text().splitlines()[6:9]

    class GrowsAfterReading(JsonlReader):
        def __iter__(self):  # type: ignore[no-untyped-def]
            yield from super().__iter__()
            with open(path, "a") as f:  # a writer appends as the reading ends
                f.write("\n".join(more) + "\n")

    monkeypatch.setattr(log_cmd.jsonl, "JsonlReader", GrowsAfterReading)
    info, _ = log_cmd._verify_jsonl(path)
    (tmp_path / "copy").mkdir()
    first_five = JsonlReader(_start(tmp_path / "copy", 5))
    assert [e.seq for e in first_five] == [0, 1, 2, 3, 4]
    assert (info.events, info.segments, info.head) == (5, 5, first_five.head)
    assert info.valid_bytes < path.stat().st_size
