"""Fault probes of the recorder, round 47: an older copy put back before a checkpoint.

With ``sync="journal"``, the checkpoint retires the journal once the logs are synced. A copy
put back (``cp backup.blog live.blog``, or a restore renamed into place) after a table's last
move and before the checkpoint, with no move nor ``close`` to find it, had the checkpoint
sync the copy and delete the journal: the acknowledged moves it held were gone. The
checkpoint now checks each log its journal wrote (one ``stat``) and keeps the journal as
``*.unfolded`` when a log no longer holds what was acknowledged.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from buraco_log import journal, log
from buraco_log.errors import LogFormatError
from buraco_log.recorder import FileOps, Recorder
from tests.recorder.powerloss import PowerLossOps, restore
from tests.recorder.putback import journal_bytes, put_back
from tests.recorder.smalldisk import small_disk
from tests.recorder.sources import matches

src = matches()[0]


def _checkpoint(rec: Recorder, other: str) -> None:
    """Make the next round retire the journal (a move of another table), and wait for it."""
    done = rec.stats().checkpoints + rec.stats().checkpoint_failures
    rec.checkpoint_every = 0.0
    rec.append(other, src[0])
    deadline = time.monotonic() + 10
    while rec.stats().checkpoints + rec.stats().checkpoint_failures == done:
        assert time.monotonic() < deadline, "no checkpoint"
        time.sleep(0.005)
    rec.checkpoint_every = 600.0


@pytest.mark.parametrize(("held", "how"), [("open", "cp"), ("open", "rename"), ("closed", "cp"),
                                           ("closed", "rename"), ("closed", "seal")])
def test_an_older_copy_put_back_before_a_checkpoint_keeps_the_journal(
        tmp_path: Path, held: str, how: str) -> None:
    rec = Recorder(tmp_path, sync="journal", max_open=0, checkpoint_every=600, save_every=0)
    path = Path(rec.path_of("a"))
    backup = tmp_path / "backup.copy"
    try:
        for event in src[:10]:
            rec.append("a", event)
        shutil.copyfile(path, backup)
        for event in src[10:20]:
            rec.append("a", event)
        acknowledged = path.read_bytes()
        if held == "closed":  # out of the handle pool (2 logs for 7 tables)
            for table in "bcdefg":
                rec.append(table, src[0])
            assert rec._tables["a"].fd is None
        if how == "seal":  # the same events rewritten: no loss, nothing kept
            log.seal(path)
        else:
            put_back(backup, path, how)
        _checkpoint(rec, "h")
        unfolded = journal.generations(str(tmp_path), unfolded=True)
        if how == "seal":
            assert not unfolded
        else:  # the journal that held the acknowledged moves was kept, not deleted
            assert unfolded
            assert journal_bytes(tmp_path, "a") == acknowledged
    finally:
        rec.close()
    if how == "seal":
        assert log.read_events(path) == list(src[:20])
        assert not journal.generations(str(tmp_path), unfolded=True)
    else:
        assert journal_bytes(tmp_path, "a") == acknowledged
        assert log.read_events(tmp_path / "h.blog") == [src[0]]


# -- a full disk, then room again: the same recorder goes on --------------------------------

class _FullJournal(FileOps):
    """A journal append that stops halfway with ENOSPC, as on a disk that fills mid-write."""

    full = False

    def append(self, fd: int, data: bytes) -> None:
        if self.full:
            os.write(fd, data[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")
        super().append(fd, data)


def test_a_full_journal_refuses_its_round_and_the_recorder_goes_on_once_there_is_room(
        tmp_path: Path) -> None:
    # The round was undone (the logs and the journal cut back to where they were), yet the
    # recorder stopped for good: every table of the site refused until a restart.
    ops = _FullJournal()
    a, b, c = matches()[0], matches()[1], matches()[2]
    with Recorder(tmp_path, sync="journal", ops=ops, checkpoint_every=600, save_every=0) as rec:
        for k in range(5):
            rec.append("a", a[k])
            rec.append("b", b[k])
        ops.full = True
        futures = [rec.submit("a", a[5]), rec.submit("b", b[5]), rec.submit("c", c[0])]
        for future in futures:
            with pytest.raises(LogFormatError) as info:
                future.result(timeout=30)
            line = str(info.value)
            assert "\n" not in line and "No space left on device" in line
            assert "were not recorded" in line
        assert not (tmp_path / "c.blog").exists()  # the new log went with its round
        ops.full = False
        assert [rec.next_seq(t) for t in "abc"] == [5, 5, 0]  # read again from their logs
        assert rec.append("a", a[5]) == 5
        assert rec.append("b", b[5]) == 5
        assert rec.append("c", c[0]) == 0
    assert log.read_events(tmp_path / "a.blog") == list(a[:6])
    assert log.read_events(tmp_path / "b.blog") == list(b[:6])
    assert log.read_events(tmp_path / "c.blog") == [c[0]]
    assert not journal.generations(str(tmp_path), unfolded=True)  # nothing kept for nothing
    with Recorder(tmp_path) as again:
        assert [again.next_seq(t) for t in "abc"] == [6, 6, 1]


@pytest.mark.parametrize("sync", [pytest.param("fsync", marks=pytest.mark.slow), "journal"])
def test_a_disk_that_really_fills_then_has_room_again_keeps_the_same_recorder_going(
        tmp_path: Path, sync: str) -> None:
    mount = tmp_path / "small"
    mount.mkdir()
    done = small_disk(mount, sys.executable, "-m", "tests.recorder.enospc_same_child",
                       str(mount), sync, "440")
    if done is None:
        pytest.skip("no private mount namespace with a tmpfs here (unshare -m, mount)")
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert any("No space left on device" in r for r in result["refusals"]), result["refusals"]
    assert all("\n" not in r for r in result["refusals"])
    assert result["after"] == []  # every table went on, from exactly what was acknowledged
    assert result["wrong"] == []


def test_a_journal_written_back_is_not_written_back_twice(tmp_path: Path) -> None:
    # A power loss took the logs (never fsynced before a checkpoint); the next recorder writes
    # the journal back. Had its removal not been made durable (a crash right after), the one
    # after finds the same journal again: nothing is written twice, and play goes on.
    ops = PowerLossOps(str(tmp_path))
    names = ["t0", "t1", "t2"]
    plays = {n: matches()[i] for i, n in enumerate(names)}
    rec = Recorder(tmp_path, ops=ops, sync="journal", checkpoint_every=600, save_every=0)
    for k in range(6):
        for future in [rec.submit(n, plays[n][k]) for n in names]:
            future.result()
    image = ops.image()
    rec.close()
    restore(str(tmp_path), image, ops.imaged_names)
    journals = {p.name: p.read_bytes() for p in tmp_path.iterdir()
                if p.name.startswith(journal.PREFIX)}
    assert journals
    with Recorder(tmp_path, sync="journal") as first:
        assert (first.stats().recovered, first.stats().recreated) == (18, 3)
    for name, data in journals.items():  # its removal never reached the disk
        (tmp_path / name).write_bytes(data)
    with Recorder(tmp_path, sync="journal") as second:
        stats = second.stats()
        assert (stats.recovered, stats.journal_conflicts) == (0, 0)
        for n in names:
            assert second.append(n, plays[n][6]) == 6
    for n in names:
        assert log.read_events(tmp_path / f"{n}.blog") == list(plays[n][:7])
    assert not journal.generations(str(tmp_path), unfolded=True)


def test_a_round_undone_on_a_full_journal_leaves_a_log_cut_by_another_program_as_it_is(
        tmp_path: Path) -> None:
    # The same round found "a" cut behind its lock (nothing written into it) and then the
    # journal full: the undo cut every log of the round back to the round's offset, which for
    # "a" meant extending the cut file with zeros (a damaged log, where a whole one was left).
    ops = _FullJournal()
    a, b = matches()[0], matches()[1]
    with Recorder(tmp_path, sync="journal", ops=ops, checkpoint_every=600, save_every=0) as rec:
        for k in range(5):
            rec.append("a", a[k])
            rec.append("b", b[k])
        path = tmp_path / "a.blog"
        subprocess.run(["truncate", "-s", str(path.stat().st_size // 2), str(path)], check=True)
        size = path.stat().st_size
        ops.full = True
        futures = [rec.submit("a", a[5]), rec.submit("b", b[5])]
        for future in futures:
            with pytest.raises(LogFormatError):
                future.result(timeout=30)
        ops.full = False
        assert path.stat().st_size == size  # as the other program left it
    assert b"\0" * 64 not in path.read_bytes()
    assert log.read_events(tmp_path / "b.blog") == list(b[:5])
