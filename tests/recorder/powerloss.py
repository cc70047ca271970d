"""A file layer that remembers what was made durable, to simulate a power loss.

The recorder's writes go to the real files; this layer watches its two durability calls. An
``fsync`` of a file records the file's whole content at that moment (by inode); an ``fsync`` of
the directory records which names point to which inodes. ``image()`` is what a disk that lost
power at that instant could hold, at its worst: only the directory entries synced, each holding
only the bytes synced (optionally followed by part of the unsynced bytes, or zeros, as a
partial writeback leaves). ``restore`` writes such an image back over the directory.

A file is known by its inode number and the inode's generation: a file system gives a removed
file's number to the next file created (ext4 at once), and a disk never shows the new file
with the removed one's bytes. Known by its number alone, a log created under the number of a
retired journal read, in the image, as that journal (``bad magic`` at byte 0), where a real
disk leaves it empty or zero-filled.
"""

from __future__ import annotations

import errno
import fcntl
import itertools
import os
import random
import struct
import threading
from pathlib import Path
from typing import Any

from buraco_log import log
from buraco_log.errors import LogFormatError
from buraco_log.recorder import LOCK_NAME, FileOps
from tests.recorder.sources import on_disk

_FS_IOC_GETVERSION = 0x80087601  # _IOR('v', 1, long): the inode's generation

Key = tuple[int, int | None]  # (inode number, generation; None where the file system has none)


def key_of(fd: int) -> Key:
    """The identity of the open file ``fd``: its inode number and generation."""
    ino = os.fstat(fd).st_ino
    try:
        raw = fcntl.ioctl(fd, _FS_IOC_GETVERSION, bytes(8))
    except OSError as exc:  # tmpfs, overlayfs: no generation, the number alone
        if exc.errno not in (errno.ENOTTY, errno.EOPNOTSUPP, errno.EINVAL):
            raise
        return ino, None
    return ino, struct.unpack("l", raw)[0]


class PowerLossOps(FileOps):
    """Sync calls may run at once (a round's fsyncs, a checkpoint's syncfs beside the journal's
    sync): each takes a ticket before it looks at the files, and what it saw is recorded only
    if nothing that looked later was recorded first, so an older view never replaces a newer
    one (by inode for contents, for the whole directory for names)."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._lock = threading.Lock()
        self._tickets = itertools.count(1)
        self.synced: dict[Key, bytes] = {}
        self._synced_at: dict[Key, int] = {}
        self.names: dict[str, Key] = {}
        self._names_at = 0
        for name, key, data in self._files():  # what is there at the start is durable
            self.synced[key] = data
            self.names[name] = key

    def _files(self) -> list[tuple[str, Key, bytes]]:
        """Each file of the directory now: its name, identity and bytes."""
        out = []
        for entry in os.scandir(self.directory):
            if not entry.is_file() or entry.name == LOCK_NAME:
                continue
            try:
                with open(entry.path, "rb") as f:
                    out.append((entry.name, key_of(f.fileno()), f.read()))
            except FileNotFoundError:
                continue  # removed meanwhile
        return out

    def record(self, path: str | os.PathLike[str]) -> None:
        """Count the file at ``path`` durable as it is now (a test's own fsynced write)."""
        with open(path, "rb") as f:
            self.synced[key_of(f.fileno())] = f.read()

    def _ticket(self) -> int:
        with self._lock:
            return next(self._tickets)

    def _keep(self, ticket: int, contents: dict[Key, bytes], names: dict[str, Key] | None) -> None:
        with self._lock:
            for ino, data in contents.items():
                if self._synced_at.get(ino, 0) < ticket:
                    self.synced[ino] = data
                    self._synced_at[ino] = ticket
            if names is not None and self._names_at < ticket:
                self.names = names
                self._names_at = ticket

    def _names(self) -> dict[str, Key]:
        out = {}
        for entry in os.scandir(self.directory):
            if not entry.is_file() or entry.name == LOCK_NAME:
                continue
            try:
                fd = os.open(entry.path, os.O_RDONLY)
            except FileNotFoundError:
                continue  # removed meanwhile: not in the directory
            try:
                out[entry.name] = key_of(fd)
            finally:
                os.close(fd)
        return out

    def fsync(self, fd: int) -> None:
        ticket = self._ticket()
        key = key_of(fd)
        data = os.pread(fd, os.fstat(fd).st_size, 0)
        os.fsync(fd)
        self._keep(ticket, {key: data}, None)

    def datasync(self, fd: int) -> None:
        self.fsync(fd)

    def fsync_dir(self, fd: int) -> None:
        ticket = self._ticket()
        names = self._names()
        os.fsync(fd)
        self._keep(ticket, {}, names)

    def syncfs(self, fd: int) -> None:
        """Everything in the directory is durable: contents and names."""
        ticket = self._ticket()
        files = self._files()
        super().syncfs(fd)
        self._keep(ticket, {key: data for _, key, data in files},
                   {name: key for name, key, _ in files})

    def image(self, rng: random.Random | None = None) -> dict[str, bytes]:
        """The files a power loss now could leave (with ``rng``: torn partial writebacks)."""
        with self._lock:
            names = dict(self.names)
            synced = dict(self.synced)
        self.imaged_names = {name: key[0] for name, key in names.items()}
        out = {}
        for name, key in names.items():
            data = synced.get(key, b"")
            if rng is not None and rng.random() < 0.5:
                try:
                    with open(os.path.join(self.directory, name), "rb") as f:
                        now = f.read()
                except FileNotFoundError:
                    now = data
                extra = now[len(data) :] if now.startswith(data) else b""
                if extra:
                    cut = rng.randrange(len(extra) + 1)
                    data += extra[:cut] if rng.random() < 0.7 else bytes(cut)
            out[name] = data
        return out


def restore(directory: str, image: dict[str, bytes], inodes: dict[str, int] | None = None) -> None:
    """Make ``directory`` hold exactly ``image`` (the lock file aside). With ``inodes`` (the
    names the image was taken with, ``PowerLossOps.imaged_names``), a file whose name still
    points to the same inode is rewritten in place, as a power loss keeps a file's identity."""
    inodes = inodes or {}
    kept = set()
    for entry in os.scandir(directory):
        if entry.name == LOCK_NAME:
            continue
        if entry.name in image and inodes.get(entry.name) == entry.inode():
            with open(entry.path, "r+b") as f:
                f.truncate(0)
                f.write(image[entry.name])
            kept.add(entry.name)
        else:
            os.unlink(entry.path)
    for name, data in image.items():
        if name not in kept:
            with open(os.path.join(directory, name), "wb") as f:
                f.write(data)


class Imaging(PowerLossOps):
    """Takes the image at the ``at``-th durability call (a random moment of the run), with torn
    partial writebacks, and notes what was acknowledged by then."""

    def __init__(self, directory: str, at: int, rng: random.Random,
                 acked: dict[str, int]) -> None:
        super().__init__(directory)
        self.at, self.rng, self.acked = at, rng, acked
        self.calls = 0
        self.snap: tuple[dict[str, bytes], dict[str, int], dict[str, int]] | None = None
        self._snap_lock = threading.Lock()

    def _tick(self) -> None:
        with self._snap_lock:
            self.calls += 1
            if self.calls == self.at and self.snap is None:
                acked = dict(self.acked)  # before the image: every ack of it must survive
                image = self.image(self.rng)
                self.snap = image, dict(self.imaged_names), acked

    def fsync(self, fd: int) -> None:
        self._tick()
        super().fsync(fd)

    def datasync(self, fd: int) -> None:
        self._tick()
        super().datasync(fd)

    def fsync_dir(self, fd: int) -> None:
        self._tick()
        super().fsync_dir(fd)

    def syncfs(self, fd: int) -> None:
        self._tick()
        super().syncfs(fd)


def seal_now(directory: Path, name: str, ops: Imaging) -> None:
    """Seal a closed log, as another program would. Its own fsyncs (the sealed file, then the
    directory) are not seen by the layer: they are recorded with it, no image taken between
    (an image there showed the name at the file the seal had replaced: under restore's new
    inode number, no journal record named it, where a disk keeps the sealed file)."""
    path = directory / f"{name}.blog"
    with ops._snap_lock:
        if ops.snap is not None:  # the power went already: restore can only give a file
            return  # the seal replaced since a new inode number, where a disk keeps the old
        try:
            log.seal(path)
        except LogFormatError:
            return  # held by the recorder (open) or already sealed: nothing rewritten
        ops.record(path)
        fd = os.open(directory, os.O_RDONLY)
        try:
            PowerLossOps.fsync_dir(ops, fd)
        finally:
            os.close(fd)


def check_image(directory: Path, acked: dict[str, int],
                sources: dict[str, tuple[Any, ...]]) -> None:
    """Every acknowledged event is in its log, once; no journal is kept aside (each log is
    right). (Before the recorder journaled a closed log's segment only once it knew the file,
    about 1 run in 30 kept one aside: the power gone after a round's journal sync and before
    the record of a log it found sealed was synced.)"""
    for name, seq in acked.items():
        path = directory / f"{name}.blog"
        kept = on_disk(str(path)) if path.exists() else []
        assert len(kept) > seq, (name, seq, len(kept))
        assert kept == list(sources[name][:len(kept)]), name  # once each, in order
    assert [p.name for p in directory.iterdir() if p.name.endswith(".unfolded")] == []
