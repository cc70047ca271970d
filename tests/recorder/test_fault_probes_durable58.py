"""Fault probes of the recorder's write-back: a failed fsync is not a later successful one.

When an fsync (or ``syncfs``) fails with EIO, Linux marks the pages it could not write clean:
they read back right from the page cache until evicted, and the next fsync succeeds without
writing them. A checkpoint whose sync failed kept its journal for the next recorder, whose
write-back compared the journal's bytes with the logs' through the page cache, found them
"already there", synced nothing new and deleted the journal, the only durable copy: a power
loss then lost acknowledged moves. Now a failed sync leaves a marker
(``journal.UNSYNCED``), and write-back writes every record again (the pages dirty again)
and syncs before it deletes a journal; a write-back whose own sync fails keeps the journal
and the marker, and says so in one line.

``FailedSyncOps`` is the power-loss layer with that behaviour of the kernel: a failed sync
records nothing durable and marks each file's unsynced bytes as lost-but-clean; a later sync
makes durable only the lost bytes written again since (``log._write_all``).
"""

from __future__ import annotations

import errno
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from buraco_log import journal, log
from buraco_log.errors import LogFormatError
from buraco_log.recorder import Recorder
from tests.recorder.powerloss import Key, PowerLossOps, key_of, restore
from tests.recorder.sources import matches, on_disk, source_of

_NAMES = ("a", "b", "c")
_MOVES = 5


class FailedSyncOps(PowerLossOps):
    """``PowerLossOps`` whose next ``fail`` syncs (fsync or syncfs) fail with EIO, as Linux
    fails them: the bytes not written are clean in the page cache, and later syncs skip them
    unless they are written again."""

    def __init__(self, directory: str) -> None:
        super().__init__(directory)
        self.fail = 0
        self.fail_on = "syncfs"  # or "fsync"
        self.failed = 0
        self.lost: dict[Key, tuple[int, int]] = {}  # inode -> the range not written (clean)
        self.dirty: dict[Key, list[tuple[int, int]]] = {}  # written again since
        self._guard = threading.Lock()

    def wrote(self, fd: int, offset: int, size: int) -> None:
        key = key_of(fd)
        with self._guard:
            if key in self.lost:
                self.dirty.setdefault(key, []).append((offset, offset + size))

    def _failing(self, call: str) -> bool:
        with self._guard:
            if self.fail <= 0 or call != self.fail_on:
                return False
            self.fail -= 1
            self.failed += 1
            return True

    def _lose(self, key: Key, now: bytes) -> None:
        """A failed sync of ``key``: what it had not made durable is clean, not written."""
        old = self.synced.get(key, b"")
        start = next((i for i, (a, b) in enumerate(zip(old, now, strict=False)) if a != b),
                     min(len(old), len(now)))
        with self._guard:
            if start < len(now):
                was = self.lost.get(key, (start, len(now)))
                self.lost[key] = (min(was[0], start), max(was[1], len(now)))
            self.dirty.pop(key, None)  # written again, then failed again: clean again

    def _durable(self, key: Key, now: bytes) -> bytes:
        """What a successful sync of ``key`` makes durable: its bytes, but the lost ones not
        written again since are what the disk held (zeros past its end)."""
        with self._guard:
            lost = self.lost.pop(key, None)
            dirty = self.dirty.pop(key, [])
        if lost is None:
            return now
        old = self.synced.get(key, b"")
        out = bytearray(now)
        for at in range(lost[0], min(lost[1], len(now))):
            if not any(a <= at < b for a, b in dirty):
                out[at] = old[at] if at < len(old) else 0
        still = [at for at in range(lost[0], min(lost[1], len(now))) if out[at] != now[at]]
        if still:  # a later sync writes them no more than this one did
            with self._guard:
                self.lost[key] = (still[0], still[-1] + 1)
        return bytes(out)

    def fsync(self, fd: int) -> None:
        now = os.pread(fd, os.fstat(fd).st_size, 0)
        key = key_of(fd)
        if self._failing("fsync"):
            self._lose(key, now)
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        ticket = self._ticket()
        data = self._durable(key, now)
        os.fsync(fd)
        self._keep(ticket, {key: data}, None)

    def syncfs(self, fd: int) -> None:
        files = self._files()
        if self._failing("syncfs"):
            for _, key, data in files:
                self._lose(key, data)
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        ticket = self._ticket()
        os.sync()
        self._keep(ticket, {key: self._durable(key, data) for _, key, data in files},
                   {name: key for name, key, _ in files})


@pytest.fixture
def ops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FailedSyncOps]:
    layer = FailedSyncOps(str(tmp_path))
    real = log._write_all

    def write_all(fd: int, data: bytes | memoryview, offset: int) -> None:
        real(fd, data, offset)
        layer.wrote(fd, offset, len(data))

    monkeypatch.setattr(log, "_write_all", write_all)
    yield layer


def _record_with_failed_checkpoint(directory: Path, ops: FailedSyncOps) -> list[str]:
    """A recorder records ``_MOVES`` moves of each table; its last checkpoint's sync fails."""
    rec = Recorder(directory, sync="journal", ops=ops, checkpoint_every=3600, save_every=0)
    try:
        for k in range(_MOVES):
            for name in _NAMES:
                rec.append(name, source_of(name, matches())[k])
    finally:
        ops.fail = 1  # the checkpoint at close: its syncfs fails with EIO
        rec.close()
    assert ops.failed == 1
    kept = [path for _, path in journal.generations(str(directory))]
    assert kept  # kept for the next recorder
    return kept


def _after_power_loss(directory: Path, ops: FailedSyncOps) -> dict[str, int]:
    """The moves each log holds once the power fails now (what was made durable alone)."""
    image = ops.image()
    with tempfile.TemporaryDirectory(dir=directory.parent) as after:
        restore(after, image)
        return {name: _moves(os.path.join(after, f"{name}.blog")) for name in _NAMES}


def _moves(path: str) -> int:
    try:
        return len(on_disk(path))
    except LogFormatError:  # nothing of it reached the disk (a zero-filled header)
        return 0


def test_a_write_back_after_a_failed_sync_writes_the_records_again(
        tmp_path: Path, ops: FailedSyncOps) -> None:
    kept = _record_with_failed_checkpoint(tmp_path, ops)
    assert os.path.exists(tmp_path / journal.UNSYNCED)
    with Recorder(tmp_path, sync="journal", ops=ops, save_every=0) as rec:
        assert rec.stats().recovered == 0  # the logs "hold" every record (the page cache)
        assert not any(os.path.exists(path) for path in kept)  # written back and deleted
    assert not os.path.exists(tmp_path / journal.UNSYNCED)
    assert _after_power_loss(tmp_path, ops) == dict.fromkeys(_NAMES, _MOVES)


@pytest.mark.slow
def test_a_write_back_whose_own_sync_fails_keeps_the_journal(
        tmp_path: Path, ops: FailedSyncOps) -> None:
    kept = _record_with_failed_checkpoint(tmp_path, ops)
    ops.fail, ops.fail_on = 1, "fsync"  # the next write-back: its first log's fsync fails
    with pytest.raises(LogFormatError) as info:
        Recorder(tmp_path, sync="journal", ops=ops, save_every=0)
    line = str(info.value)
    assert "\n" not in line and "Input/output error" in line and "kept" in line, line
    assert [path for _, path in journal.generations(str(tmp_path))] == kept
    assert os.path.exists(tmp_path / journal.UNSYNCED)
    with Recorder(tmp_path, sync="journal", ops=ops, save_every=0):  # the third: fsyncs pass
        assert not any(os.path.exists(path) for path in kept)
    assert _after_power_loss(tmp_path, ops) == dict.fromkeys(_NAMES, _MOVES)


@pytest.mark.parametrize("sync", ["fsync", "syncfs"])
def test_a_round_whose_sync_failed_is_cut_off_so_a_restart_leaves_no_hole(
        tmp_path: Path, ops: FailedSyncOps, sync: str) -> None:
    src = source_of("a", matches())
    with Recorder(tmp_path, sync=sync, ops=ops, save_every=0) as rec:
        for k in range(3):
            assert rec.append("a", src[k]) == k
        ops.fail, ops.fail_on = 1, sync
        with pytest.raises(LogFormatError) as info:
            rec.append("a", src[3])
        assert "fsync failed: Input/output error" in str(info.value)
        assert "not recorded" in str(info.value)
    with Recorder(tmp_path, sync=sync, ops=ops, save_every=0) as rec:  # the same boot
        at = rec.next_seq("a")
        assert at == 3  # the refused move is not in the log (it read back from the cache)
        for k in range(at, 6):
            assert rec.append("a", src[k]) == k
    assert _after_power_loss(tmp_path, ops)["a"] == 6  # every acknowledged move, no hole


def test_fold_after_a_failed_sync_writes_the_logs_again(
        tmp_path: Path, ops: FailedSyncOps, monkeypatch: pytest.MonkeyPatch) -> None:
    from buraco_log import fold

    kept = _record_with_failed_checkpoint(tmp_path, ops)
    for path in kept:  # kept aside, as a write-back that met a conflict keeps it
        os.replace(path, path + ".unfolded")
    monkeypatch.setattr(fold, "_OPS", ops)
    report = fold.fold(tmp_path)
    assert {entry.action for entry in report.logs} == {"held"}, report.logs
    assert report.removed and not report.kept
    assert not os.path.exists(tmp_path / journal.UNSYNCED)
    assert _after_power_loss(tmp_path, ops) == dict.fromkeys(_NAMES, _MOVES)
