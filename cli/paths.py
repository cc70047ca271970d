"""The paths a user names on the command line."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import typer

from buraco_log.log import file_type
from buraco_log.outpaths import dangling_link


def named_path(value: str) -> Path:
    """A path argument as given, refusing an empty one: an unset variable (`audit "$LOGS"`)
    was Path(""), that is ".", so `audit ""` audited every log under the current directory
    and the other commands said ".: a directory"."""
    if value == "":
        raise typer.BadParameter("an empty name (an unset variable?)")
    return Path(value)


def why_missing(path: Path) -> str:
    """Why ``path`` (for which ``exists()`` is false) cannot be opened, as the log reader says
    it: a symbolic link is named with where it leads (it said only "no such file")."""
    try:
        os.stat(path)
    except OSError as exc:
        link = dangling_link(path) if exc.errno == errno.ENOENT else None
        return link or exc.strerror or str(exc)
    return "no such file"  # it came back between the caller's look and this one


def not_a_file(path: Path) -> str:
    """What ``path`` is when it exists and is neither a regular file nor a link ("a FIFO", "a
    directory"), else "": what ``--overwrite`` must not replace (as root, ``os.replace``
    swapped /dev/full for a log)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return ""
    return "" if stat.S_ISREG(mode) or stat.S_ISLNK(mode) else file_type(mode)


def plural(kind: str) -> str:
    """ "a FIFO" -> "FIFOs", "a directory" -> "directories"."""
    word = kind.removeprefix("a ")
    return word[:-1] + "ies" if word.endswith("y") else word + "s"
