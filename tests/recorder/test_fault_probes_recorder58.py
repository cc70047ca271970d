"""Fault probes of the recorder, the operator's day: a journal a checkpoint failed to retire.

A site runs its recorder for months. A checkpoint that could not retire its journal (a log it
could not open for want of a descriptor) left the journal in the directory until the next
recorder opened it: every later checkpoint went on without it, so a long-running recorder
kept a growing backlog, and once it stopped, ``audit DIR`` said its logs may lack acknowledged
moves. Now each later checkpoint (or, with none due, a retry once a second) retires it with its
own, once what failed has passed; a journal whose sync failed is still kept for the next
recorder (the kernel may have dropped the bytes it could not write, and a later sync says
nothing of them).
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from buraco_log import journal, log
from buraco_log.recorder import FileOps, Recorder, RecorderStats, journal_notes
from tests.recorder.sources import matches, source_of


class _Armed(FileOps):
    """At an armed checkpoint's syncfs: ``mode`` "descriptors" takes every descriptor of the
    process (the checkpoint cannot open a closed log to check it) until ``release``; "eio"
    fails the syncfs itself."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.armed = False
        self.held: list[int] = []

    def syncfs(self, fd: int) -> None:
        if self.armed:
            self.armed = False
            if self.mode == "eio":
                raise OSError(errno.EIO, os.strerror(errno.EIO))
            super().syncfs(fd)
            with contextlib.suppress(OSError):
                while True:
                    self.held.append(os.open(os.devnull, os.O_RDONLY))
            return
        super().syncfs(fd)

    def release(self) -> None:
        while self.held:
            os.close(self.held.pop())


def _until(rec: Recorder, done: Callable[[RecorderStats], bool]) -> RecorderStats:
    deadline = time.monotonic() + 10
    while not done(stats := rec.stats()):
        assert time.monotonic() < deadline, stats
        time.sleep(0.002)
    return stats


def _journals(directory: Path) -> list[str]:
    return [os.path.basename(p) for _, p in journal.generations(str(directory))]


def _fail_a_checkpoint(tmp_path: Path, mode: str) -> tuple[Recorder, _Armed, list[str]]:
    """A journal recorder of 8 tables (more than its 6 log slots: some logs are closed), two
    moves each, whose next checkpoint fails (``_Armed``); the backlog journal is left."""
    ops = _Armed(mode)
    rec = Recorder(tmp_path, sync="journal", max_open=30, checkpoint_every=3600, ops=ops)
    names = [f"t{i}" for i in range(8)]
    for k in range(2):
        for future in [rec.submit(t, source_of(t, matches())[k]) for t in names]:
            future.result(30)
    ops.armed, rec.checkpoint_every = True, 0.0
    try:
        rec.append("t0", source_of("t0", matches())[2])
        _until(rec, lambda s: s.checkpoint_failures == 1)
    except BaseException:
        ops.release()
        rec.close()
        raise
    ops.release()
    return rec, ops, names


def test_a_journal_a_checkpoint_failed_to_retire_is_retired_by_the_next_one(
        tmp_path: Path) -> None:
    rec, _, names = _fail_a_checkpoint(tmp_path, "descriptors")
    try:
        assert len(_journals(tmp_path)) == 2  # the one kept, and the live one
        rec.checkpoint_every = 3600.0  # no checkpoint due: the retry alone retires it
        rec.append("t1", source_of("t1", matches())[2])
        stats = _until(rec, lambda s: s.checkpoints >= 1)
        assert stats.journal_backlog == 0 and stats.checkpoint_failures == 1, stats
        assert len(_journals(tmp_path)) == 1, _journals(tmp_path)  # the live one alone
        rec.checkpoint_every = 0.0  # and a checkpoint after it retires the live one
        rec.append("t2", source_of("t2", matches())[2])
        _until(rec, lambda s: s.checkpoints >= 2)
    finally:
        rec.close()
    assert not list(tmp_path.glob("*.unfolded")) and journal_notes(tmp_path) == []
    again = Recorder(tmp_path, sync="journal")
    try:
        assert again.stats().recovered == 0  # nothing for a restart to write back
        held = {t: len(log.read_events(tmp_path / f"{t}.blog")) for t in names}
        assert held == {t: 3 if t in ("t0", "t1", "t2") else 2 for t in names}
        assert again.next_seq("t0") == 3
    finally:
        again.close()


@pytest.mark.slow
def test_close_retires_a_journal_a_checkpoint_failed_to_retire(tmp_path: Path) -> None:
    rec, _, names = _fail_a_checkpoint(tmp_path, "descriptors")
    rec.close()
    assert _journals(tmp_path) == [] and journal_notes(tmp_path) == []
    assert {t: len(log.read_events(tmp_path / f"{t}.blog")) for t in names} == {
        t: 3 if t == "t0" else 2 for t in names}


@pytest.mark.slow
def test_a_journal_whose_sync_failed_is_kept_for_the_next_recorder(tmp_path: Path) -> None:
    """A later sync succeeding says nothing of what the failed one could not write: the
    journal stays, through later checkpoints and ``close``, and the next recorder writes it
    back."""
    rec, _, names = _fail_a_checkpoint(tmp_path, "eio")
    try:
        rec.append("t1", source_of("t1", matches())[2])
        stats = _until(rec, lambda s: s.checkpoints >= 1)
        assert stats.journal_backlog == 0, stats
    finally:
        rec.close()
    assert len(_journals(tmp_path)) == 1, _journals(tmp_path)
    assert any("stopped without folding" in n for n in journal_notes(tmp_path))
    Recorder(tmp_path, sync="journal").close()
    assert _journals(tmp_path) == [] and journal_notes(tmp_path) == []
    assert {t: len(log.read_events(tmp_path / f"{t}.blog")) for t in names} == {
        t: 3 if t in ("t0", "t1") else 2 for t in names}
