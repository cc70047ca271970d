"""A disk that fills as a move is written: the refusal tells the client what to do. The part
written is cut off and the move is not recorded, so the client must send it again; the line
said only that the match "is read again from it on its next move", which a client's author
read as "recorded, go on"."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from buraco_log import log
from buraco_log.errors import LogFormatError
from buraco_log.log import read_events
from buraco_log.recorder import Recorder
from tests.recorder.sources import matches, source_of


def test_a_move_cut_off_by_a_full_disk_is_refused_with_send_it_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = source_of("a", matches())
    live = tmp_path / "live"
    rec = Recorder(live, sync="fsync", save_every=0)
    try:
        for event in a[:4]:
            assert rec.append("a", event) == event.seq
        write = log._write_all

        def full(fd: int, data: bytes | memoryview, offset: int) -> None:
            write(fd, bytes(data[:len(data) // 2]), offset)  # half of it, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(log, "_write_all", full)
        with pytest.raises(LogFormatError) as refused:
            rec.append("a", a[4])
        monkeypatch.undo()
        line = str(refused.value)
        assert "No space left on device" in line and "cut off" in line, line
        assert "nothing of this move was recorded: send it again" in line, line
        assert rec.append("a", a[4]) == a[4].seq  # sent again: recorded, the log whole
    finally:
        monkeypatch.undo()
        rec.close()
    assert [e.seq for e in read_events(live / "a.blog")] == [e.seq for e in a[:5]]
