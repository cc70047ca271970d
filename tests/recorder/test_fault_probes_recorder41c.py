"""Fault probes of the recorder, round 41c: exceptions in the middle of an append or a round.

An append interrupted (a signal handler's KeyboardInterrupt, an alarm's timeout) after its event
was buffered but before its waiter was, or before ``expect`` counted it, left the table out of
step: sent again, the event was buffered twice, and the round wrote a repeated seq and
acknowledged it into a log no reader takes ("event 1 of the record has seq 5, expected 6"). The
append now undoes what it did and the table refuses in one line until it is read again.

A log descriptor closed by other code of the process (EBADF) made the committer's cleanup raise
after it had taken the round's appends: the caller waited forever. Its number, reused by another
file, took the segment meant for the log. The recorder now checks the descriptor's file (the
fstat it made anyway), writes nothing, and reads the match again from its log.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from buraco_log import log, recorder
from buraco_log.errors import LogFormatError
from buraco_log.recorder import Recorder
from tests.recorder.sources import matches

src = matches()[0]
ROOT = Path(__file__).resolve().parents[2]


class _Interrupt(BaseException):
    """Stands for a signal handler's exception (KeyboardInterrupt, a timeout)."""


def _kept(path: Path) -> list[object]:
    with log.Reader(path, allow_torn=True) as reader:
        return [e for _, seg in reader.segments() for e in seg]


# the rules engine's step is interrupted only where the recorder validates
@pytest.mark.parametrize(("validate", "where"), [(True, "waiter"), (False, "waiter"),
                                                 (True, "step")])
def test_an_interrupted_append_never_writes_a_repeated_seq(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, validate: bool, where: str) -> None:
    with Recorder(tmp_path, sync="fsync", validate=validate) as rec:
        for event in src[:5]:
            rec.append("a", event)
        window, rec.window = rec.window, 0.5  # the next round waits: a move stays pending
        pending = rec.submit("a", src[5]) if where == "waiter" else None

        def boom(*args: object, **kwargs: object) -> object:
            raise _Interrupt

        if where == "waiter":  # between buffering the event and its waiter
            monkeypatch.setattr(recorder, "_Waiter", boom)
            event = src[6]
        else:  # inside the rules engine: it may hold half the move
            table = rec._tables["a"]
            monkeypatch.setattr(table, "validator", type("V", (), {"step": boom})())
            event = src[5]
        with pytest.raises(_Interrupt):
            rec.append("a", event)
        monkeypatch.undo()
        rec.window = window
        for _ in range(2):  # refused, in one line, however often it is sent again
            with pytest.raises(LogFormatError) as caught:
                rec.append("a", event)
            message = str(caught.value)
            assert "an append was interrupted (_Interrupt)" in message and "\n" not in message
        if pending is not None:  # accepted before it: failed, never left waiting
            with pytest.raises(LogFormatError):
                pending.result(timeout=10)
        assert rec.flush(timeout=10)
        assert rec.append("b", src[0]) == 0  # other tables go on
        rec.forget("a")  # read again from its log: it goes on from what it holds
        deadline = time.monotonic() + 10
        while "a" in rec._tables and time.monotonic() < deadline:  # the committer drops it
            time.sleep(0.01)
        seq = rec.next_seq("a")
        assert seq == 5
        assert rec.append("a", src[5]) == 5
    path = tmp_path / "a.blog"
    assert log.read_events(path) == list(src[:6])  # whole: no repeated seq


@pytest.mark.parametrize("sync", ["fsync", "journal"])
@pytest.mark.parametrize("reused", [False, True])
def test_a_log_descriptor_closed_by_other_code_fails_the_append_and_no_one_waits(
        tmp_path: Path, sync: str, reused: bool) -> None:
    other = tmp_path / "other.bin"
    with Recorder(tmp_path / "logs", sync=sync) as rec:
        for event in src[:5]:
            rec.append("a", event)
        fd = rec._tables["a"].fd
        assert fd is not None
        os.close(fd)
        if reused:  # the number now names another file of the process
            assert os.open(other, os.O_RDWR | os.O_CREAT, 0o644) == fd
        future = rec.submit("a", src[5])
        with pytest.raises(LogFormatError) as caught:
            future.result(timeout=10)  # it waited forever
        message = str(caught.value)
        assert "descriptor was closed by other code" in message and "\n" not in message
        assert rec.next_seq("a") == 5  # read again from its log
        assert rec.append("a", src[5]) == 5
        assert rec.append("b", src[0]) == 0
        if reused:
            os.fstat(fd)  # still open: the recorder did not close another file's descriptor
            assert other.stat().st_size == 0  # and wrote nothing into it
            os.close(fd)
    path = tmp_path / "logs" / "a.blog"
    assert log.read_events(path) == list(src[:6])
    with Recorder(tmp_path / "logs", sync=sync) as rec:
        assert rec.append("a", src[6]) == 6


@pytest.mark.parametrize("where", ["_write_all", "_place_all"])
def test_an_error_in_a_sync_thread_fails_the_round_and_a_restart_recovers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    with Recorder(tmp_path, sync="fsync") as rec:
        for event in src[:5]:
            rec.append("a", event)

        def boom(*args: object, **kwargs: object) -> None:
            raise MemoryError

        monkeypatch.setattr(log if where == "_write_all" else Recorder, where, boom)
        with pytest.raises(LogFormatError) as caught:
            rec.append("a", src[5])
        monkeypatch.undo()
        assert "MemoryError" in str(caught.value)
        with pytest.raises(LogFormatError):  # the table takes no more moves
            rec.append("a", src[5])
        assert rec.append("b", src[0]) == 0
    kept = _kept(tmp_path / "a.blog")
    assert kept[:5] == list(src[:5])  # every acknowledged event
    with Recorder(tmp_path, sync="fsync") as rec:
        seq = rec.next_seq("a")
        assert seq == len(kept)
        assert rec.append("a", src[seq]) == seq
    assert log.read_events(tmp_path / "a.blog") == list(src[:seq + 1])


_EFBIG = textwrap.dedent("""
    import os, resource, sys
    from buraco_log.errors import LogFormatError
    from buraco_log.recorder import Recorder
    from tests.recorder.sources import matches
    src = matches()[0]
    directory, sync = sys.argv[1], sys.argv[2]
    rec = Recorder(directory, sync=sync)
    for event in src[:5]:
        rec.append("a", event)
    top = max(os.path.getsize(os.path.join(directory, n)) for n in os.listdir(directory))
    resource.setrlimit(resource.RLIMIT_FSIZE, (top + 40, resource.RLIM_INFINITY))
    try:
        rec.append("a", src[5])
    except LogFormatError as exc:
        print(exc)
    resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY,) * 2)
    rec.close()
""")


@pytest.mark.skipif(not hasattr(resource, "RLIMIT_FSIZE"), reason="no RLIMIT_FSIZE")
@pytest.mark.parametrize("sync", ["fsync", "journal"])
def test_a_file_size_limit_fails_the_append_and_a_restart_goes_on(
        tmp_path: Path, sync: str) -> None:
    done = subprocess.run([sys.executable, "-c", _EFBIG, str(tmp_path), sync], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "File too large" in done.stdout and done.stdout.count("\n") == 1
    assert log.read_events(tmp_path / "a.blog") == list(src[:5])  # whole, nothing torn
    with Recorder(tmp_path, sync=sync) as rec:
        assert rec.next_seq("a") == 5
        assert rec.append("a", src[5]) == 5
