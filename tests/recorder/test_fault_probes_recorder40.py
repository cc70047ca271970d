"""Fault probes of the recorder, round 40: a log rewritten in its own inode while closed, and a
write that a full disk cut short.

Two seals in a row can give the sealed file the inode number of the log the recorder closed
(the first seal freed it). The recorder adopts that file (it holds the same events) and writes
the next segment at its own end. With ``sync="journal"`` the round's journal record was made
while the log was being reopened, for the file as it was: its old end and its unsealed bytes;
and the earlier records of that inode held the unsealed bytes too. After a power loss the
write-back found the sealed bytes where the records said otherwise, called the log a conflict
(the journal kept ``.unfolded``), and the acknowledged event was gone. The records of an
adopted file are now withdrawn and its segment journaled again as written.

A log write that failed part way (a full disk took part of the segment) left the part in the
log, a torn tail every reader reported, and the table refused every later move until the
recorder was restarted (a 64 KiB tmpfs: "write failed: No space left on device" for ever). The
part is cut off now, and the table is read again from its whole log on its next move.
"""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

import pytest

from buraco_log import journal, log
from buraco_log.errors import LogFormatError
from buraco_log.recorder import Recorder
from tests.recorder.powerloss import PowerLossOps, restore
from tests.recorder.sources import matches, on_disk

src = matches()[0]


def _wait_closed(rec: Recorder) -> None:
    deadline = time.monotonic() + 10
    while rec.stats().open_handles:
        assert time.monotonic() < deadline, "the idle log was not closed"
        time.sleep(0.005)


def _seal_in_place(tmp_path: Path, path: Path, ops: PowerLossOps | None) -> None:
    """Seal the log into its own inode (what a second seal given the freed number does),
    durably, as seal leaves it."""
    copy = tmp_path / "copy.blog"
    copy.write_bytes(path.read_bytes())
    log.seal(copy)
    inode = path.stat().st_ino
    with open(path, "r+b") as f:
        f.write(copy.read_bytes())
        f.truncate()
        os.fsync(f.fileno())
    assert path.stat().st_ino == inode
    if ops is not None:
        ops.record(path)


def test_an_ack_into_a_log_sealed_in_its_own_inode_survives_a_power_loss(
        tmp_path: Path) -> None:
    directory = tmp_path / "logs"
    directory.mkdir()
    ops = PowerLossOps(str(directory))
    path = directory / "t.blog"
    rec = Recorder(directory, sync="journal", ops=ops, sealed=False, idle_timeout=0.01,
                   save_every=0, checkpoint_every=600)
    for seq in range(8):
        rec.append("t", src[seq])
    _wait_closed(rec)
    _seal_in_place(tmp_path, path, ops)
    ops.fsync_dir(os.open(directory, os.O_RDONLY))
    assert rec.append("t", src[8]) == 8  # acknowledged: in the journal, durably
    image = ops.image()  # the power goes now: the log's new segment was never fsynced
    assert len(image["t.blog"]) < path.stat().st_size, "the probe needs the tail lost"
    rec.close()
    restore(str(directory), image, ops.imaged_names)
    with Recorder(directory, sync="journal", save_every=0) as again:
        stats = again.stats()
        assert (stats.journal_conflicts, again.next_seq("t")) == (0, 9)
    assert not [n for n in os.listdir(directory) if n.endswith(".unfolded")]
    info = log.verify(path)
    assert info.sealed and info.torn is None
    assert on_disk(str(path)) == list(src[:9])


def test_the_journal_of_an_adopted_log_names_the_bytes_written_there(tmp_path: Path) -> None:
    # what the write-back will meet: every standing record of the log is the file's own bytes
    directory = tmp_path / "logs"
    path = directory / "t.blog"
    with Recorder(directory, sync="journal", sealed=False, idle_timeout=0.01, save_every=0,
                  checkpoint_every=600) as rec:
        for seq in range(6):
            rec.append("t", src[seq])
        _wait_closed(rec)
        _seal_in_place(tmp_path, path, None)
        assert rec.append("t", src[6]) == 6
        assert rec.append("t", src[7]) == 7
        data = path.read_bytes()
        records = [r for _, j in journal.generations(str(directory)) for r in journal.read(j)]
        standing = journal.withdraw([r for r in records if r.match == "t"])
        assert standing, "the new segments must be journaled"
        for r in standing:
            assert data[r.offset:r.offset + len(r.data)] == r.data, r.offset
    assert on_disk(str(path)) == list(src[:8])


@pytest.mark.parametrize("sync", ["fsync", "syncfs"])
def test_other_syncs_write_an_adopted_log_whole(tmp_path: Path, sync: str) -> None:
    directory = tmp_path / "logs"
    path = directory / "t.blog"
    with Recorder(directory, sync=sync, sealed=False, idle_timeout=0.01, save_every=0) as rec:
        for seq in range(5):
            rec.append("t", src[seq])
        _wait_closed(rec)
        _seal_in_place(tmp_path, path, None)
        assert rec.append("t", src[5]) == 5
    assert log.verify(path).sealed and on_disk(str(path)) == list(src[:6])


def _fail_log_writes_once(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The next pwrite to a .blog file writes half its bytes, then fails as a full disk does."""
    real = os.pwrite
    failed: list[int] = []

    def pwrite(fd: int, data: bytes | memoryview, offset: int) -> int:
        # (a log's descriptor may show the temporary name it was created under)
        if not failed and ".blog" in os.readlink(f"/proc/self/fd/{fd}") and len(data) > 1:
            failed.append(offset)
            real(fd, bytes(data)[: len(data) // 2], offset)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data, offset)
    monkeypatch.setattr(os, "pwrite", pwrite)
    return failed


@pytest.mark.parametrize("sync", ["fsync", "syncfs", "journal"])
def test_a_write_cut_short_by_a_full_disk_leaves_the_log_whole_and_the_table_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sync: str) -> None:
    directory = tmp_path / "logs"
    path = directory / "t.blog"
    with Recorder(directory, sync=sync, save_every=0) as rec:
        for seq in range(5):
            rec.append("t", src[seq])
        end = path.stat().st_size
        failed = _fail_log_writes_once(monkeypatch)
        with pytest.raises(LogFormatError) as caught:
            rec.append("t", src[5])
        assert failed == [end], "the probe must have failed the log's write"
        assert "No space left on device" in str(caught.value) and "cut off" in str(caught.value)
        assert path.stat().st_size == end  # no torn tail for readers meanwhile
        info = log.verify(path)
        assert (info.torn, info.events) == (None, 5)
        assert rec.append("t", src[5]) == 5  # sent again once there is room: recorded
        assert rec.append("t", src[6]) == 6
    assert on_disk(str(path)) == list(src[:7])
