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
    if names_a_directory(value) and os.path.lexists(Path(value)) and not os.path.isdir(value):
        # Path() drops the slash: `show m.blog/` read m.blog, and `seal m.blog/` rewrote it,
        # where open() and every other tool say "Not a directory"
        raise typer.BadParameter(f"{value}: Not a directory (its name ends as a directory's "
                                 "does)")
    return Path(value)


def names_a_directory(name: str) -> bool:
    """``out/``, ``out/.`` or ``..``: the name ends as a directory's does. Path() drops the
    slash, so a file was written as ``out`` (replacing a file of that name) where open() would
    have refused it."""
    return os.path.basename(name) in ("", ".", "..") or (
        os.altsep is not None and name.endswith(os.altsep))


def directory_name(name: str, what: str = "the file") -> str | None:
    """The refusal of an output named as a directory (``-o out/``), or None: ``what`` is the
    file the user must name instead ("the page's file")."""
    if name in ("", "-") or not names_a_directory(name):
        return None
    return f"{name}: is a directory's name (it ends in '/', '.' or '..'); name {what}"


def output_path(value: str) -> Path:
    """A path option that names a file to write (``--html``, ``-o`` of `query` and `report`),
    as given: refused empty (as :func:`named_path`), or ending as a directory's name does
    (``out/``: typer's Path dropped the slash and wrote the file ``out``). A usage error, one
    line, before anything is read or written."""
    refusal = directory_name(value)
    if refusal is not None:
        raise typer.BadParameter(refusal)
    return named_path(value)


def why_missing(path: Path) -> str:
    """Why ``path`` (for which ``exists()`` is false) cannot be opened, as the log reader says
    it: a symbolic link is named with where it leads (it said only "no such file")."""
    try:
        os.stat(path)
    except OSError as exc:
        link = dangling_link(path) if exc.errno == errno.ENOENT else None
        return with_lost_directory(link or exc.strerror or str(exc), path)
    return "no such file"  # it came back between the caller's look and this one


def lost_directory(name: str | os.PathLike[str] | None = None) -> str | None:
    """Why a relative ``name`` (None: one not known, as an error from ``os.path.abspath``)
    cannot be found when the current directory is gone (removed while the shell was in it),
    else None: the log named with an absolute path was blamed, "No such file or directory"."""
    if name is not None and os.path.isabs(name):
        return None
    try:
        os.getcwd()
    except OSError as exc:
        why = ("no longer exists" if exc.errno == errno.ENOENT
               else f"cannot be reached ({exc.strerror or exc})")
        return f"the current directory {why}: cd to one, or give absolute paths"
    return None


def with_lost_directory(message: str, name: str | os.PathLike[str] | None) -> str:
    """``message`` about ``name``, with :func:`lost_directory`'s reason after it, if any."""
    lost = lost_directory(name)
    return message if lost is None or lost in message else f"{message} ({lost})"


def not_a_file(path: Path) -> str:
    """What ``path`` is, or the link there leads to, when it is no regular file ("a FIFO", "a
    directory"), else "" (a dangling link too: it names the file to make): what ``--overwrite``
    must not replace (as root, ``os.replace`` swapped /dev/full for a log; written through a
    link, a FIFO it named became the log)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return ""
    return "" if stat.S_ISREG(mode) else file_type(mode)


def plural(kind: str) -> str:
    """ "a FIFO" -> "FIFOs", "a directory" -> "directories"."""
    word = kind.removeprefix("a ")
    return word[:-1] + "ies" if word.endswith("y") else word + "s"


def special_file(path: Path) -> str | None:
    """Why ``path`` is not read as a log, in the log reader's words, when it exists and is no
    regular file (a directory, a FIFO, a device); else None. Each command said it its own way
    ("skipped, never opened", "is a directory, not a log", "no event could be read (...)")."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # missing, or unreadable: the reader names the reason
    if stat.S_ISREG(mode):
        return None
    return f"not a regular file ({file_type(mode)}): not read as a log [log.filetype]"
