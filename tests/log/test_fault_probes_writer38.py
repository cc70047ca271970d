"""Fault probes of the single writer (``log.Writer``): a failed fsync, and a file replaced under
it, name the first event that may be lost (its seq and byte), not the seq after the last one
written (an event never appended) and the end of the file."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from buraco_log import log
from buraco_log.errors import LogFormatError
from tests.recorder.sources import matches

src = matches()[0]


def _failing_fsync(monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    def fsync(fd: int) -> None:
        raise OSError(code, os.strerror(code))
    monkeypatch.setattr(os, "fsync", fsync)  # the module log.py calls


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO])
def test_a_failed_fsync_names_the_seq_and_byte_of_the_first_event_it_may_have_lost(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    path = tmp_path / "w.blog"
    with log.Writer(path) as w:
        w.append(src[0])
        w.append(src[1])
        start = path.stat().st_size  # where seq 2 goes
        _failing_fsync(monkeypatch, code)
        with pytest.raises(LogFormatError) as caught:
            w.append(src[2])
        monkeypatch.undo()
        err = caught.value
        assert (err.kind, err.seq, err.offset) == ("io", 2, start), str(err)
        assert str(path) in str(err) and os.strerror(code) in str(err)
        assert "seq 2" in str(err) and "seq 3" not in str(err)
        with pytest.raises(LogFormatError) as again:  # refused from then on, never retried
            w.append(src[3])
        assert again.value.kind == "closed" or "fsync failed" in str(again.value)
    # what was acknowledged is there; the event in doubt is there or not, nothing else
    kept = log.read_events(path, allow_torn=True)
    assert kept in (list(src[:2]), list(src[:3]))


def test_a_failed_fsync_after_unsynced_segments_names_the_first_of_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "w.blog"
    with log.Writer(path, batched=True, batch_events=2) as w:
        w.append(src[0])
        w.flush()
        start = path.stat().st_size
        _failing_fsync(monkeypatch, errno.EIO)
        with pytest.raises(LogFormatError) as caught:
            w.append_many(src[1:6])  # segments written unsynced, then one fsync for them all
            w.flush()
        monkeypatch.undo()
        assert (caught.value.seq, caught.value.offset) == (1, start), str(caught.value)


def test_a_file_replaced_under_the_writer_names_the_first_event_not_acknowledged(
        tmp_path: Path) -> None:
    path = tmp_path / "w.blog"
    w = log.Writer(path)
    try:
        w.append(src[0])
        start = path.stat().st_size
        os.rename(path, tmp_path / "moved.blog")  # a program that ignores the lock
        path.write_bytes(b"")
        with pytest.raises(LogFormatError) as caught:
            w.append(src[1])
        assert (caught.value.kind, caught.value.seq, caught.value.offset) == ("io", 1, start)
        assert "replaced or removed" in str(caught.value)
    finally:
        w.close()
