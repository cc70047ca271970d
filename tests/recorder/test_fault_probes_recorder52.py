"""Fault probes of the recorder, round 52: what ``next_seq`` says of a table that refuses every
move, and what a restart makes of each misuse a recorder refused.

``next_seq`` of a table that takes no more moves (a failed fsync: its log may or may not hold
the refused move) returned a number counting the refused move (11 when 10 were acknowledged):
a site resuming from it skipped a seq, and nothing said the table was refused. It now raises
what an append raises, one line naming the log and the rule (``forget`` the match, or restart
the recorder, to read it again from its log); after ``forget`` it says what the log holds.

A restart after each misuse the recorder refused (the site restarts it on its directory):

- its directory renamed and another put in its place: the recorder's ``close`` saved the
  tables' states into the other directory (outside its lock; a restart there found states of
  logs it did not hold); it now saves nothing there. A restart there starts afresh, as the
  refusal said; one on the directory where it went reads every acknowledged move.
- a log removed while the recorder had it closed: the restart starts the match afresh, as the
  refusal said; with ``sync="journal"`` the acknowledged moves stay in the journal kept aside,
  through the restart, the new match's rounds and checkpoints (no defect found).
- another log of the same size copied over it in place: the restart reads what the log now
  holds (the saved state, whose chain head no longer matches, is not used), and with
  ``sync="journal"`` the acknowledged moves stay in the journal kept aside (no defect found).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import msgspec
import pytest

from buraco_log import journal, log
from buraco_log.errors import LogFormatError
from buraco_log.recorder import LOCK_NAME, SAVED_NAME, FileOps, Recorder
from tests.recorder.sources import matches, source_of


class _FailingSync(FileOps):
    """An fsync of a log that fails once armed (EIO: the kernel may have dropped the bytes)."""

    def __init__(self) -> None:
        self.armed = False

    def fsync(self, fd: int) -> None:
        if self.armed:
            self.armed = False
            raise OSError(5, "Input/output error")
        super().fsync(fd)


def test_next_seq_of_a_table_that_refuses_every_move_says_so(tmp_path: Path) -> None:
    a, b = source_of("a", matches()), source_of("b", matches())
    ops = _FailingSync()
    with Recorder(tmp_path, sync="fsync", save_every=0, ops=ops) as rec:
        for event in a[:10]:
            rec.append("a", event)
        rec.append("b", b[0])
        ops.armed = True
        with pytest.raises(LogFormatError) as failed:
            rec.append("a", a[10])
        assert failed.value.kind == "io"
        with pytest.raises(LogFormatError) as refused:  # as an append is (it said 11)
            rec.next_seq("a")
        line = str(refused.value)
        assert refused.value.kind == "io" and "\n" not in line
        assert line.startswith(f"{tmp_path / 'a.blog'}: ") and "Input/output error" in line
        with pytest.raises(LogFormatError) as again:
            rec.append("a", a[10])
        assert str(again.value) == line  # the same line, whichever is asked
        assert rec.next_seq("b") == 1  # the other tables go on
        rec.forget("a")  # read again from its log: the refused move is there or not
        held = rec.next_seq("a")
        assert held in (10, 11) and held == len(log.read_events(tmp_path / "a.blog"))
        assert rec.append("a", a[held]) == held
    assert log.read_events(tmp_path / "a.blog") == list(a[: held + 1])


# -- a restart after each misuse the recorder refused -----------------------------------------

def _kept_aside(directory: Path, match: str, scratch: Path) -> list[object]:
    """The events of ``match`` the journals kept aside (``*.unfolded``) hold: their records
    (less those withdrawn: refused moves) put back at their offsets, read as a log."""
    records = [record for _, path in journal.generations(str(directory), unfolded=True)
               if path.endswith(".unfolded") for record in journal.read(path)
               if record.match == match]
    data = bytearray()
    for record in journal.withdraw(records):
        data[record.offset: record.offset + len(record.data)] = record.data
    scratch.write_bytes(bytes(data))
    return list(log.read_events(scratch)) if data else []


@pytest.mark.parametrize("sync", ["fsync", "journal"])
def test_a_restart_after_the_directory_was_replaced_keeps_every_acknowledged_move(
        tmp_path: Path, sync: str) -> None:
    a, b = source_of("a", matches()), source_of("b", matches())
    live, moved = tmp_path / "live", tmp_path / "moved"
    rec = Recorder(live, sync=sync, save_every=0, checkpoint_every=0.0)
    try:
        for event in a[:10]:
            assert rec.append("a", event) == event.seq
        for event in b[:3]:
            assert rec.append("b", event) == event.seq
        os.rename(live, moved)
        live.mkdir()  # mv logs logs.old; mkdir logs
        with pytest.raises(LogFormatError) as refused:
            rec.append("a", a[10])
        assert f"the directory it opened is now {moved}" in str(refused.value)
        with pytest.raises(LogFormatError):  # a round after it, its checkpoint due
            rec.append("b", b[3])
    finally:
        rec.close()
    # it saved its states there, and with the journal, a new journal, kept aside at close
    assert sorted(p.name for p in live.iterdir()) == []
    with Recorder(live, sync=sync) as there:  # nothing of the match here: afresh, as said
        assert there.next_seq("a") == 0
    with Recorder(moved, sync=sync) as where:  # where the refusal said: every move acked
        held = where.next_seq("a")
        assert where.stats().resumed == 0
        assert where.next_seq("b") in (3, 4)
    assert journal.generations(str(moved), unfolded=True) == []  # written back there, gone
    for table, src, acked in (("a", a, 10), ("b", b, 3)):
        events = log.read_events(moved / f"{table}.blog")
        assert events == list(src[: len(events)]) and len(events) in (acked, acked + 1)
        assert log.verify(moved / f"{table}.blog").torn is None
    assert held == len(log.read_events(moved / "a.blog"))


@pytest.mark.parametrize("sync", ["fsync", "journal"])
def test_a_restart_after_a_log_was_removed_while_closed_keeps_the_journal_aside(
        tmp_path: Path, sync: str) -> None:
    a = source_of("a", matches())
    directory = tmp_path / "rec"
    with Recorder(directory, sync=sync, save_every=0, idle_timeout=0.01,
                  checkpoint_every=600) as rec:
        for event in a[:4]:
            rec.append("a", event)
        deadline = time.monotonic() + 5
        while rec.stats().open_handles and time.monotonic() < deadline:
            time.sleep(0.01)
        os.unlink(directory / "a.blog")
        with pytest.raises(LogFormatError) as refused:
            rec.append("a", a[4])
        line = str(refused.value)
        assert "removed while the recorder had it closed, with the 4 events" in line
        assert "restart the recorder, to start it afresh" in line
    kept = _kept_aside(directory, "a", tmp_path / "kept.blog")
    assert kept == (list(a[:4]) if sync == "journal" else [])  # said in the line too
    assert ("journal-*.unfolded) " in line + " ") == (sync == "journal")
    with Recorder(directory, sync=sync, checkpoint_every=0.0) as rec:  # as the line said
        assert rec.next_seq("a") == 0
        for event in a[:3]:  # the match afresh, its rounds checkpointed
            rec.append("a", event)
    assert log.read_events(directory / "a.blog") == list(a[:3])
    # the acknowledged moves are still kept aside, through the restart and its checkpoints
    assert _kept_aside(directory, "a", tmp_path / "kept2.blog") == kept
    with Recorder(directory, sync=sync) as rec:
        assert rec.next_seq("a") == 3
    assert log.read_events(directory / "a.blog") == list(a[:3])


@pytest.mark.parametrize("sync", ["fsync", "journal"])
def test_a_restart_after_a_same_size_copy_reads_what_the_log_holds(
        tmp_path: Path, sync: str) -> None:
    src = matches()[0]
    twin = (msgspec.structs.replace(src[0], match_id=src[0].match_id[:-1] + "#"), *src[1:])
    directory = tmp_path / "rec"
    with Recorder(directory, sync=sync, save_every=0, checkpoint_every=600) as rec:
        for mine, theirs in zip(src[:12], twin[:12], strict=True):
            rec.append("a", mine)
            rec.append("b", theirs)
        subprocess.run(["cp", str(directory / "b.blog"), str(directory / "a.blog")],
                       check=True)
        with pytest.raises(LogFormatError) as refused:
            rec.append("a", src[12])
        assert "restart the recorder to read what the log holds" in str(refused.value)
    copied = (directory / "a.blog").read_bytes()
    kept = _kept_aside(directory, "a", tmp_path / "kept.blog")
    assert kept == (list(src[:12]) if sync == "journal" else [])
    with Recorder(directory, sync=sync) as rec:
        assert rec.next_seq("a") == 12
        assert rec.stats().resumed == 0  # the saved state names other bytes: not used
        assert rec.next_seq("b") == 12 and rec.stats().resumed == 1
    assert (directory / "a.blog").read_bytes() == copied  # the copy, as the line said
    assert log.read_events(directory / "a.blog") == list(twin[:12])
    assert _kept_aside(directory, "a", tmp_path / "kept2.blog") == kept
    assert sorted(p.name for p in directory.iterdir() if not p.name.endswith(
        (".blog", ".unfolded"))) == sorted([LOCK_NAME, SAVED_NAME])
