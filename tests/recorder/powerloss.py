"""A file layer that remembers what was made durable, to simulate a power loss.

The recorder's writes go to the real files; this layer watches its two durability calls. An
``fsync`` of a file records the file's whole content at that moment (by inode); an ``fsync`` of
the directory records which names point to which inodes. ``image()`` is what a disk that lost
power at that instant could hold, at its worst: only the directory entries synced, each holding
only the bytes synced (optionally followed by part of the unsynced bytes, or zeros, as a
partial writeback leaves). ``restore`` writes such an image back over the directory.
"""

from __future__ import annotations

import itertools
import os
import random
import threading

from buraco_log.recorder import LOCK_NAME, FileOps


class PowerLossOps(FileOps):
    """Sync calls may run at once (a round's fsyncs, a checkpoint's syncfs beside the journal's
    sync): each takes a ticket before it looks at the files, and what it saw is recorded only
    if nothing that looked later was recorded first, so an older view never replaces a newer
    one (by inode for contents, for the whole directory for names)."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._lock = threading.Lock()
        self._tickets = itertools.count(1)
        self.synced: dict[int, bytes] = {}
        self._synced_at: dict[int, int] = {}
        self.names: dict[str, int] = {}
        self._names_at = 0
        for entry in os.scandir(directory):  # what is there at the start is durable
            if entry.is_file() and entry.name != LOCK_NAME:
                with open(entry.path, "rb") as f:
                    self.synced[entry.inode()] = f.read()
                self.names[entry.name] = entry.inode()

    def _ticket(self) -> int:
        with self._lock:
            return next(self._tickets)

    def _keep(self, ticket: int, contents: dict[int, bytes], names: dict[str, int] | None) -> None:
        with self._lock:
            for ino, data in contents.items():
                if self._synced_at.get(ino, 0) < ticket:
                    self.synced[ino] = data
                    self._synced_at[ino] = ticket
            if names is not None and self._names_at < ticket:
                self.names = names
                self._names_at = ticket

    def _names(self) -> dict[str, int]:
        return {
            e.name: e.inode()
            for e in os.scandir(self.directory)
            if e.is_file() and e.name != LOCK_NAME
        }

    def fsync(self, fd: int) -> None:
        ticket = self._ticket()
        st = os.fstat(fd)
        data = os.pread(fd, st.st_size, 0)
        os.fsync(fd)
        self._keep(ticket, {st.st_ino: data}, None)

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
        names = self._names()
        contents = {}
        for name, ino in names.items():
            try:
                with open(os.path.join(self.directory, name), "rb") as f:
                    if os.fstat(f.fileno()).st_ino == ino:
                        contents[ino] = f.read()
            except FileNotFoundError:
                continue  # removed meanwhile: nothing of it to keep
        super().syncfs(fd)
        self._keep(ticket, contents, names)

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
