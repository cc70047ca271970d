"""Fault probes of the recorder, round 49: another file copied in place before a checkpoint.

With ``sync="journal"``, a checkpoint checks each log its journal wrote before it deletes the
journal. It compared the file's identity and size alone: another file copied over the log in
place (``cp``: the same inode) of the same or a larger size passed, the checkpoint synced it
and deleted the journal, the only record of the moves the recorder had acknowledged. It now
also reads back the last segment it wrote, just before where it wrote it (one ``pread``).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from buraco_log import journal, log
from buraco_log.errors import LogFormatError
from buraco_log.recorder import Recorder
from tests.recorder.putback import journal_bytes, put_back
from tests.recorder.sources import matches

src, other = matches()[0], matches()[1]


def _checkpoint(rec: Recorder, table: str) -> None:
    """Make the next round retire the journal (a move of another table), and wait for it."""
    done = rec.stats().checkpoints + rec.stats().checkpoint_failures
    rec.checkpoint_every = 0.0
    rec.append(table, src[0])
    deadline = time.monotonic() + 10
    while rec.stats().checkpoints + rec.stats().checkpoint_failures == done:
        assert time.monotonic() < deadline, "no checkpoint"
        time.sleep(0.005)
    rec.checkpoint_every = 600.0


@pytest.mark.parametrize(("size", "held"), [("larger", "open"), ("same", "open"),
                                             ("larger", "closed")])
def test_another_file_as_long_copied_in_place_before_a_checkpoint_keeps_the_journal(
        tmp_path: Path, size: str, held: str) -> None:
    rec = Recorder(tmp_path / "logs", sync="journal", checkpoint_every=600, save_every=0,
                   max_open=0 if held == "closed" else None)
    path = Path(rec.path_of("a"))
    stranger = tmp_path / "stranger.blog"  # another table's log, longer than this one
    try:
        for event in src[:12]:
            rec.append("a", event)
        for event in other[:16]:
            rec.append("b", event)
        shutil.copyfile(rec.path_of("b"), stranger)
        if held == "closed":  # out of the handle pool (2 logs for 7 tables)
            for table in "cdefg":
                rec.append(table, src[0])
        assert (rec._tables["a"].fd is None) == (held == "closed")
        acknowledged = path.read_bytes()
        assert stranger.stat().st_size > len(acknowledged)
        if size == "same":  # cut to the table's size: a torn copy, exactly as long
            with open(stranger, "r+b") as f:
                f.truncate(len(acknowledged))
        put_back(stranger, path, "cp")  # the same inode, as long or longer
        ino = path.stat().st_ino
        _checkpoint(rec, "h")
        assert path.stat().st_ino == ino
        # the journal that held the acknowledged moves was kept, not deleted
        assert journal.generations(str(tmp_path / "logs"), unfolded=True)
        assert journal_bytes(tmp_path / "logs", "a") == acknowledged
    finally:
        rec.close()
    assert journal_bytes(tmp_path / "logs", "a") == acknowledged
    assert log.read_events(tmp_path / "logs" / "h.blog") == [src[0]]


@pytest.mark.parametrize("sync", ["journal", "fsync"])
def test_a_move_after_another_file_as_long_was_copied_in_place(tmp_path: Path, sync: str) -> None:
    """The next move is refused, not written after the copy (the round compared the size
    alone, and acknowledged it into a log no reader takes): the round reads back the last
    segment it wrote. With the journal, the journal that holds every acknowledged move is
    kept; with ``fsync`` the copy overwrote them, nothing is left to keep, and the log is the
    copy, untouched."""
    rec = Recorder(tmp_path / "logs", sync=sync, checkpoint_every=600, save_every=0)
    path = Path(rec.path_of("a"))
    try:
        for event in src[:12]:
            rec.append("a", event)
        for event in other[:16]:
            rec.append("b", event)
        acknowledged = path.read_bytes()
        stranger = tmp_path / "stranger.blog"  # another table's log, cut to this one's size
        stranger.write_bytes(Path(rec.path_of("b")).read_bytes()[:len(acknowledged)])
        put_back(stranger, path, "cp")
        with pytest.raises(LogFormatError, match="rewritten in place") as refused:
            rec.append("a", src[12])
        assert refused.value.path == str(path)
        assert "12 events the recorder acknowledged" in refused.value.message
        with pytest.raises(LogFormatError):  # and every later move of the table
            rec.append("a", src[12])
        assert path.read_bytes() == stranger.read_bytes()  # nothing written after the copy
        assert rec.stats().events == 28
        if sync == "journal":
            _checkpoint(rec, "h")
            assert journal.generations(str(tmp_path / "logs"), unfolded=True)
            assert journal_bytes(tmp_path / "logs", "a") == acknowledged
    finally:
        rec.close()
    assert path.read_bytes() == stranger.read_bytes()
    if sync == "journal":
        assert journal_bytes(tmp_path / "logs", "a") == acknowledged


def test_a_log_appended_to_by_another_program_before_a_checkpoint_is_no_loss(
        tmp_path: Path) -> None:
    """The acknowledged events and more (another writer appended while the log was
    closed) hold every acknowledged move: the journal is deleted, as before."""
    rec = Recorder(tmp_path, sync="journal", checkpoint_every=600, save_every=0, max_open=0)
    path = Path(rec.path_of("a"))
    try:
        for event in src[:12]:
            rec.append("a", event)
        for table in "bcdefg":  # out of the handle pool: its lock is let go
            rec.append(table, src[0])
        assert rec._tables["a"].fd is None
        with log.Writer(path) as writer:
            for event in src[12:15]:
                writer.append(event)
        _checkpoint(rec, "h")
        assert not journal.generations(str(tmp_path), unfolded=True)
        assert rec.stats().checkpoints >= 1
    finally:
        rec.close()
    assert log.read_events(path) == list(src[:15])
