"""Fault probes of the recorder, round 46: an older copy of a log put back while it plays.

``cp backup.blog live.blog`` (or a restore that renames its copy into place) by a program that
ignores the writer lock, while the recorder holds the table. With the log closed (idle, or out
of the handle pool) the recorder refused the next move, then read the older copy again and
went on from it: a server that resent its moves from ``next_seq`` got them acknowledged into a
log forking from what was acknowledged. Now the table refuses every move in one line, and the
recorder keeps what it still has of the acknowledged log: the replaced file, when it still
holds it open (``LOG.acknowledged``), and with ``sync="journal"`` the journals holding the
log's records (``*.unfolded``). A copy landing while a round syncs is not acknowledged.

Also probed, no defect found: a disk that really fills (a tmpfs in a private mount namespace).
"""

from __future__ import annotations

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
from buraco_log.recorder import FileOps, Recorder, journal_notes
from tests.recorder.putback import journal_bytes, put_back
from tests.recorder.smalldisk import small_disk
from tests.recorder.sources import matches

src = matches()[0]


@pytest.mark.parametrize("sync", ["fsync", "journal"])
@pytest.mark.parametrize("how", ["cp", "rename"])
@pytest.mark.parametrize("held", ["open", "closed"])
def test_an_older_copy_put_back_during_play_refuses_the_table_and_keeps_what_was_acknowledged(
        tmp_path: Path, sync: str, how: str, held: str) -> None:
    rec = Recorder(tmp_path, sync=sync, max_open=0, checkpoint_every=600, save_every=0)
    try:
        for event in src[:10]:
            rec.append("a", event)
        path = Path(rec.path_of("a"))
        backup = tmp_path / "backup.copy"
        shutil.copyfile(path, backup)
        for event in src[10:20]:
            rec.append("a", event)
        acknowledged = path.read_bytes()
        if held == "closed":  # out of the handle pool (2 logs for 7 tables)
            for table in "bcdefg":
                rec.append(table, src[0])
            assert rec._tables["a"].fd is None
        put_back(backup, path, how)
        with pytest.raises(LogFormatError) as caught:
            rec.append("a", src[20])
        line = str(caught.value)
        assert "\n" not in line and str(path) in line and caught.value.kind == "io"
        assert "ignores the writer lock" in line
        # it never goes on from the older copy: not the next move, not the copy's next seq,
        # and it names no seq to go on from (test_fault_probes_recorder52.py)
        with pytest.raises(LogFormatError) as asked:
            rec.next_seq("a")
        assert asked.value.kind == "io" and "takes no more" in str(asked.value)
        for seq in (20, 10):
            with pytest.raises(LogFormatError) as again:
                rec.append("a", src[seq])
            assert again.value.kind == "io" and "takes no more" in str(again.value)
        assert rec.append("h", src[0]) == 0  # other tables go on
    finally:
        rec.close()
    assert path.read_bytes() == backup.read_bytes()  # nothing written into the copy
    kept = path.with_name("a.blog.acknowledged")
    if how == "rename" and held == "open":  # the recorder still held the acknowledged file
        assert str(kept) in line
        assert log.read_events(kept) == list(src[:20])
        assert [n for n in journal_notes(tmp_path) if n.startswith(f"{kept}: ")]  # audit's
    else:
        assert not kept.exists()
    if sync == "journal":  # the journal holds every record of the log (no checkpoint since)
        assert ".unfolded" in line
        assert journal_bytes(tmp_path, "a") == acknowledged
        assert log.read_events(tmp_path / "h.blog") == [src[0]]
    # a restart (the operator's choice) goes on from what the log holds
    with Recorder(tmp_path, sync=sync) as rec:
        assert rec.next_seq("a") == 10


@pytest.mark.parametrize("sync", ["fsync", "journal"])
@pytest.mark.parametrize(("held", "how"), [("open", "cp"), ("open", "rename"), ("closed", "cp"),
                                           ("closed", "rename"), ("closed", "seal")])
def test_an_older_copy_put_back_just_before_close_is_kept_all_the_same(
        tmp_path: Path, sync: str, how: str, held: str) -> None:
    # No move came after the copy to find it: close retired the journal holding the
    # acknowledged moves (and let go of the replaced file that held them all). A seal (the
    # same events, rewritten) of a closed log is no loss: nothing is kept for it.
    rec = Recorder(tmp_path, sync=sync, max_open=0, checkpoint_every=600, save_every=0)
    path = Path(rec.path_of("a"))
    backup = tmp_path / "backup.copy"
    try:
        for event in src[:10]:
            rec.append("a", event)
        shutil.copyfile(path, backup)
        for event in src[10:20]:
            rec.append("a", event)
        acknowledged = path.read_bytes()
        if held == "closed":
            for table in "bcdefg":
                rec.append(table, src[0])
            assert rec._tables["a"].fd is None
        if how == "seal":  # (of a closed log: the recorder holds an open one locked)
            log.seal(path)
        else:
            put_back(backup, path, how)
    finally:
        rec.close()
    kept = path.with_name("a.blog.acknowledged")
    unfolded = journal.generations(str(tmp_path), unfolded=True)
    if how == "seal":
        assert not kept.exists() and not unfolded
        assert log.read_events(path) == list(src[:20])
        return
    if how == "rename" and held == "open":
        assert log.read_events(kept) == list(src[:20])
    else:
        assert not kept.exists()
    if sync == "journal":
        assert journal_bytes(tmp_path, "a") == acknowledged
    else:
        assert not unfolded
    assert path.read_bytes() == backup.read_bytes()


@pytest.mark.parametrize("sealed", [False, True])
def test_a_log_another_writer_continued_then_sealed_while_closed_is_read_again(
        tmp_path: Path, sealed: bool) -> None:
    # The file holds every acknowledged event and more, the last acknowledged one in the
    # middle of a segment (the seal made one of all six): not an older copy, so the move is
    # refused once and the match read again, as before (not refused for good).
    path = tmp_path / "a.blog"
    with Recorder(tmp_path, sealed=sealed, idle_timeout=0.01, save_every=0) as rec:
        for event in src[:5]:
            rec.append("a", event)
        deadline = time.monotonic() + 10
        while rec.stats().open_handles and time.monotonic() < deadline:
            time.sleep(0.01)
        with log.Writer(path) as writer:  # takes the lock the recorder let go of
            writer.append(src[5])
        log.seal(path)
        with log.Reader(path) as reader:
            assert [len(events) for _, events in reader.segments()] == [6]
        with pytest.raises(LogFormatError, match="changed while the recorder had it closed"):
            rec.append("a", src[5])
        assert rec.next_seq("a") == 6
        assert rec.append("a", src[6]) == 6
    assert log.read_events(path) == list(src[:7])


class _CopyDuringSync(FileOps):
    """Puts the older copy back (``cp``, a real process) just before the log's next fsync."""

    def __init__(self, backup: Path, path: Path) -> None:
        self.backup, self.path, self.armed = backup, path, False

    def fsync(self, fd: int) -> None:
        if self.armed and os.fstat(fd).st_ino == self.path.stat().st_ino:
            self.armed = False
            subprocess.run(["cp", str(self.backup), str(self.path)], check=True)
        super().fsync(fd)


def test_an_older_copy_put_back_while_the_round_syncs_is_not_acknowledged(
        tmp_path: Path) -> None:
    # The round checked the log's size before its write; the copy came after it, during the
    # fsync, and the move was acknowledged though the log no longer held it (nor the moves
    # before it that the copy lacks).
    path, backup = tmp_path / "a.blog", tmp_path / "backup.copy"
    ops = _CopyDuringSync(backup, path)
    with Recorder(tmp_path, ops=ops, save_every=0) as rec:
        for event in src[:10]:
            rec.append("a", event)
        shutil.copyfile(path, backup)
        for event in src[10:15]:
            rec.append("a", event)
        ops.armed = True
        with pytest.raises(LogFormatError) as caught:
            rec.append("a", src[15])
        assert not ops.armed  # the copy came during that round's sync
        line = str(caught.value)
        assert "\n" not in line and "while the recorder wrote it" in line
        assert "not acknowledged" in line
        with pytest.raises(LogFormatError):
            rec.append("a", src[16])
    assert log.read_events(path) == list(src[:10])


# -- a disk that really fills ------------------------------------------------------------------

@pytest.mark.parametrize("sync", [pytest.param("fsync", marks=pytest.mark.slow),
                                  pytest.param("syncfs", marks=pytest.mark.slow), "journal"])
def test_a_disk_that_really_fills_keeps_exactly_the_acknowledged_moves(
        tmp_path: Path, sync: str) -> None:
    # ENOSPC from the kernel, wherever it lands: a log's write, a new log's creation, the
    # journal, a checkpoint, a state save (each every 50 ms). Then room again: a new recorder
    # goes on with every table.
    mount = tmp_path / "small"
    mount.mkdir()
    done = small_disk(mount, sys.executable, "-m", "tests.recorder.enospc_child",
                       str(mount), sync, "440")
    if done is None:
        pytest.skip("no private mount namespace with a tmpfs here (unshare -m, mount)")
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["wrong"] == []
    refusals = result["refusals"]
    assert refusals, "the disk never filled"
    assert all("\n" not in r for r in refusals)
    assert any("No space left on device" in r for r in refusals), refusals[:3]
    assert min(result["acked"].values()) >= 3  # every table went on after the restart
