"""A file layer that remembers what was made durable, to simulate a power loss.

The recorder's writes go to the real files; this layer watches its two durability calls. An
``fsync`` of a file records the file's whole content at that moment (by inode); an ``fsync`` of
the directory records which names point to which inodes. ``image()`` is what a disk that lost
power at that instant could hold, at its worst: only the directory entries synced, each holding
only the bytes synced (optionally followed by part of the unsynced bytes, or zeros, as a
partial writeback leaves). ``restore`` writes such an image back over the directory.
"""

from __future__ import annotations

import os
import random
import threading

from buraco_log.recorder import LOCK_NAME, FileOps


class PowerLossOps(FileOps):
    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._lock = threading.Lock()
        self.synced: dict[int, bytes] = {}
        self.names: dict[str, int] = {}
        for entry in os.scandir(directory):  # what is there at the start is durable
            if entry.is_file() and entry.name != LOCK_NAME:
                with open(entry.path, "rb") as f:
                    self.synced[entry.inode()] = f.read()
                self.names[entry.name] = entry.inode()

    def fsync(self, fd: int) -> None:
        st = os.fstat(fd)
        data = os.pread(fd, st.st_size, 0)
        os.fsync(fd)
        with self._lock:
            self.synced[st.st_ino] = data

    def datasync(self, fd: int) -> None:
        self.fsync(fd)

    def fsync_dir(self, fd: int) -> None:
        names = {
            e.name: e.inode()
            for e in os.scandir(self.directory)
            if e.is_file() and e.name != LOCK_NAME
        }
        os.fsync(fd)
        with self._lock:
            self.names = names

    def syncfs(self, fd: int) -> None:
        """Everything in the directory is durable: contents and names."""
        contents = {}
        for entry in os.scandir(self.directory):
            if entry.is_file() and entry.name != LOCK_NAME:
                with open(entry.path, "rb") as f:
                    contents[entry.inode()] = f.read()
        names = {
            e.name: e.inode()
            for e in os.scandir(self.directory)
            if e.is_file() and e.name != LOCK_NAME
        }
        super().syncfs(fd)
        with self._lock:
            self.synced.update(contents)
            self.names = names

    def image(self, rng: random.Random | None = None) -> dict[str, bytes]:
        """The files a power loss now could leave (with ``rng``: torn partial writebacks)."""
        with self._lock:
            names = dict(self.names)
            synced = dict(self.synced)
        self.imaged_names = names
        out = {}
        for name, ino in names.items():
            data = synced.get(ino, b"")
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
