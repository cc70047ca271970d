"""Where an output may be replaced by a rename, and where it must be written into as it is.

Outputs are written whole or not at all: a temporary file beside them, renamed over them. That
is wrong for ``/dev/null``, a FIFO or ``/dev/stdout``: renamed over (as root, it would be), the
device or the link itself became a regular file, for every later process. Stdlib only."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

SPECIAL: tuple[str, ...] = ("/dev/", "/proc/", "/sys/")


def through_special(path: str | os.PathLike[str]) -> bool:
    """Whether ``path``, or a link it leads through, lies in /dev, /proc or /sys: a place
    written into as it is, never replaced by a rename."""
    here = os.path.abspath(path)
    for _ in range(40):  # a loop of links: open() says so
        parent, name = os.path.split(here)
        here = os.path.join(os.path.realpath(parent), name)
        if here.startswith(SPECIAL):
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
    an output keeps being a link."""
    target = Path(path)
    return Path(os.path.realpath(target)) if target.is_symlink() else target


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

