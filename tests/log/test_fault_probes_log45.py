"""Fault probes of the log, round 45.

- A ``Writer`` (or a ``LogLock``) dropped without ``close()`` kept its lock until its process
  ended: a second writer of the same log in the same process was refused ("another writer
  holds this log"), and a batched writer's buffered events were never written. As a file does,
  it now closes itself when collected, writing what it buffered, with a ``ResourceWarning``.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

from buraco_log import log
from tests.log.samples import sample_events

EVENTS = sample_events(12)


def _append_and_drop(path: Path, *, batched: bool = False) -> None:
    w = log.Writer(path, validate=False, batched=batched)
    w.append_many(EVENTS[:5])  # and returns without close(): the writer is dropped here


def test_a_writer_dropped_in_a_function_lets_a_second_writer_open_after(tmp_path: Path) -> None:
    path = tmp_path / "a.blog"
    with pytest.warns(ResourceWarning, match="unclosed log writer .*a.blog"):
        _append_and_drop(path)
        gc.collect()
    with log.Writer(path, validate=False) as w:  # was: "another writer holds this log"
        assert w.next_seq == 5
        w.append_many(EVENTS[5:])
    assert log.read_events(path) == EVENTS


def test_a_dropped_batched_writer_writes_what_it_buffered(tmp_path: Path) -> None:
    path = tmp_path / "a.blog"
    with pytest.warns(ResourceWarning, match="its 5 buffered events written"):
        _append_and_drop(path, batched=True)
        gc.collect()
    assert log.read_events(path) == EVENTS[:5]  # was: a header only, and the log locked


def test_a_closed_writer_dropped_gives_no_warning(tmp_path: Path) -> None:
    path = tmp_path / "a.blog"
    w = log.Writer(path, validate=False)
    w.append(EVENTS[0])
    w.close()
    del w
    gc.collect()  # the suite turns warnings into errors: any ResourceWarning fails this test


def test_a_dropped_log_lock_lets_the_log_be_locked_again(tmp_path: Path) -> None:
    path = tmp_path / "a.blog"
    log.write_log(path, EVENTS[:3], validate=False)
    lock = log.LogLock(path)
    with pytest.warns(ResourceWarning, match="unreleased log lock"):
        del lock
        gc.collect()
    with log.LogLock(path):  # was: "another writer holds this log"
        pass


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_childs_copy_of_a_writer_writes_nothing_when_dropped(tmp_path: Path) -> None:
    path = tmp_path / "a.blog"
    w = log.Writer(path, validate=False, batched=True)
    w.append_many(EVENTS[:4])
    size = path.stat().st_size
    pid = os.fork()
    if pid == 0:  # the child drops its copy: it must neither write nor let go of the lock
        code = 1
        try:
            del w
            gc.collect()
            code = 0 if path.stat().st_size == size else 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    with pytest.raises(log.LogFormatError, match="another writer holds"):
        log.Writer(path, validate=False)  # the parent still holds the lock
    w.append_many(EVENTS[4:])
    w.close()  # would fail "appended to by a program that ignores the writer lock"
    assert log.read_events(path) == EVENTS
