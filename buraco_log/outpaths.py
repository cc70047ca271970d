"""Where an output may be replaced by a rename, and where it must be written into as it is.

Outputs are written whole or not at all: a temporary file beside them, renamed over them. That
is wrong for ``/dev/null``, a FIFO or ``/dev/stdout``: renamed over (as root, it would be), the
device or the link itself became a regular file, for every later process. Stdlib only.

Written into, such a place is opened as ``open(path, "wb")`` would, with two exceptions. A
name of a file this process already writes to (``/dev/stdout``, ``/dev/stderr``,
``/dev/fd/N``, or any name of the file standard output or error is open on) is written
through that descriptor, where it stands: opened again, it was truncated, and written from
byte 0, over what the shell had already put there (``{ echo title; buraco-log query ... -o
/dev/stdout; } > out``). And a FIFO no program opens for reading is waited for a while, then
refused, never waited for for ever."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import sys
import time
from pathlib import Path

FIFO_WAIT: float = 10.0
"""Seconds an output FIFO is waited for, for a program to open it for reading."""

_FD_NAME = re.compile(r"/(?:dev/fd|proc/self/fd|proc/(\d+)/fd)/(\d+)")

SPECIAL: tuple[str, ...] = ("/dev/", "/proc/", "/sys/")

PLAIN: tuple[str, ...] = ("/dev/shm/",)
"""Directories under /dev that hold plain files (POSIX shared memory, a tmpfs, often the
place for files kept in memory): written by a rename there as anywhere. Written in place, a
page or table sent there was truncated first, and lost, old and new, if the writing failed."""


def through_special(path: str | os.PathLike[str]) -> bool:
    """Whether ``path``, or a link it leads through, lies in /dev, /proc or /sys: a place
    written into as it is, never replaced by a rename."""
    here = os.path.abspath(path)
    for _ in range(40):  # a loop of links: open() says so
        parent, name = os.path.split(here)
        here = os.path.join(os.path.realpath(parent), name)
        if here.startswith(SPECIAL) and not here.startswith(PLAIN):
            return True
        if not os.path.islink(here):
            return False
        here = os.path.normpath(os.path.join(os.path.dirname(here), os.readlink(here)))
    return False


def written_in_place(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` must be opened and written into rather than renamed over: it is not a
    regular file nor a directory (``/dev/null``, a FIFO), or it leads into /dev, /proc, /sys
    (``/dev/stdout`` with stdout redirected to a file is a regular file through a link)."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        return True
    return through_special(path)


def rename_target(path: str | os.PathLike[str]) -> Path:
    """The file a rename should replace for ``path``: the file a link names, so that a link to
    an output keeps being a link. A loop of links is refused (OSError ELOOP)."""
    target = Path(path)
    if not target.is_symlink():
        return target
    real = os.path.realpath(target)
    if os.path.islink(real):  # realpath stops at the link it met again: a loop, which names
        # no file (`demo --overwrite` replaced the link itself, exit 0)
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), os.fspath(path))
    return Path(real)


_KINDS = ((stat.S_ISREG, "a file"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def dangling_link(path: str | os.PathLike[str]) -> str | None:
    """ "a symbolic link to 'X', which does not exist" when ``path`` is one, else None."""
    if os.path.islink(path):
        with contextlib.suppress(OSError):
            return f"a symbolic link to {os.readlink(path)!r}, which does not exist"
    return None


def no_directory(parent: str | os.PathLike[str]) -> str:
    """Why an output cannot be made in ``parent``, which is no directory: missing, a dangling
    link, or something else there (a file named as a directory read "no such directory")."""
    try:
        mode = os.stat(parent).st_mode
    except OSError:
        link = dangling_link(parent)
        return f"{parent} is {link}" if link else f"no such directory: {parent}"
    kind = next((name for test, name in _KINDS if test(mode)), "not a directory")
    return f"{parent} is {kind}, not a directory"



def own_descriptor(path: str | os.PathLike[str]) -> int | None:
    """The descriptor of this process that ``path`` names when it is a file the process
    already has open for its output: standard output or error (under any name: /dev/stdout,
    /proc/self/fd/1, the tty's own name), or the N of ``/dev/fd/N`` or ``/proc/self/fd/N``."""
    wanted = [1, 2]
    named = _FD_NAME.fullmatch(os.path.abspath(path))
    if named and named.group(1) in (None, str(os.getpid())):
        wanted.insert(0, int(named.group(2)))
    try:
        here = os.stat(path)
    except OSError:
        return None
    for fd in wanted:
        with contextlib.suppress(OSError):
            there = os.fstat(fd)
            if (there.st_dev, there.st_ino) == (here.st_dev, here.st_ino):
                return fd
    return None


def open_in_place(path: str | os.PathLike[str], wait: float | None = None) -> int:
    """A descriptor to write ``path`` (/dev/null, a FIFO, /dev/stdout) in place, as
    ``open(path, "wb")`` would, but: a file this process already writes to is written through
    a copy of its own descriptor (:func:`own_descriptor`), after Python's buffered standard
    streams are flushed, so what they hold comes first; and a FIFO no program reads is waited
    for ``wait`` seconds (default :data:`FIFO_WAIT`), then refused (OSError ENXIO, naming
    ``path``).

    What is at ``path`` is looked at again once it is open, on the descriptor: a regular file
    there (not one reached through /dev, /proc or /sys) is refused (OSError EEXIST, naming
    ``path``), untouched. The caller chose to write in place on an earlier look (a FIFO,
    /dev/null); another program that put a file, or a symbolic link to one, at the name since
    had it truncated and written here (``open(path, "wb")`` truncates as it opens). A name
    through /dev is created if missing, as ``open`` would; any other is not (a FIFO removed
    meanwhile left a regular file in its place)."""
    own = own_descriptor(path)
    if own is not None:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        return os.dup(own)
    wait = FIFO_WAIT if wait is None else wait
    deadline = time.monotonic() + wait
    # no O_TRUNC: a regular file is truncated only once it is known to be the one asked for
    flags = os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC
    if through_special(path):
        flags |= os.O_CREAT
    while True:
        try:
            fd = os.open(path, flags, 0o666)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: a FIFO with no reader (yet)
                raise
            kind = _kind_of(path)  # a socket, or a device with no driver, says ENXIO too
            if kind == "a socket":  # and never opens: no wait
                raise OSError(errno.ENXIO, "a socket, which cannot be opened as a file; "
                              "nothing was written", os.fspath(path)) from None
            if kind not in ("a FIFO", None):
                raise
            if time.monotonic() >= deadline:
                raise OSError(errno.ENXIO, f"a FIFO that no program opened for reading within "
                              f"{wait:g} s; nothing was written", os.fspath(path)) from None
            time.sleep(0.05)
            continue
        try:
            _truncate_if_named(fd, path)
        except BaseException:
            os.close(fd)
            raise
        os.set_blocking(fd, True)  # a full pipe waits for its reader, as a plain open would
        return fd


def _truncate_if_named(fd: int, path: str | os.PathLike[str]) -> None:
    """Truncate ``fd``, opened at ``path`` to be written in place, as ``open(path, "wb")``
    would, if it is a regular file, which it may be only through /dev, /proc or /sys
    (``/dev/fd/N`` of a file), and only the file ``path`` names still; else refuse it."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        return  # a FIFO, a device, a terminal: nothing to truncate
    try:
        named = os.stat(path)
    except OSError:
        named = None
    if (not through_special(path) or named is None
            or (named.st_dev, named.st_ino) != (st.st_dev, st.st_ino)):
        raise OSError(errno.EEXIST, "a regular file (or a symbolic link to one) put at this "
                      "name by another program since it was looked at, which is never written "
                      "in place; nothing was written", os.fspath(path))
    os.ftruncate(fd, 0)



def _kind_of(path: str | os.PathLike[str]) -> str | None:
    """What is at ``path`` in :data:`_KINDS`' words; None if nothing is (gone meanwhile: it is
    looked for again, as a FIFO is, until the wait is over)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return next((name for test, name in _KINDS if test(mode)), "something else")
