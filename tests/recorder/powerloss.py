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

from buraco_log.recorder import LOCK_NAME, FileOps

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
