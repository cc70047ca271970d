"""Which files of the paths given are logs: directories walked in name order.

A walk never opens anything but a regular file, and opens that without blocking: a FIFO, a
device (``zero.blog -> /dev/zero``), a socket or a dangling link in a directory is not passed
over silently either, it is listed so that the audit reports it with its reason
(:func:`file_problem`) without ever opening it.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator

from buraco_log import log
from buraco_log.errors import LogFormatError

AnyPath = str | bytes | os.PathLike[str] | os.PathLike[bytes]
"""A path as a caller may hold it: text, bytes (``os.listdir(b".")``) or a ``pathlib.Path``."""


def path_text(path: AnyPath) -> str:
    """``path`` as the text every report names it by: a bytes path decoded as the file system
    does (``str()`` of a bytes path named a file "b'...'", which does not exist)."""
    return os.fsdecode(path)


NUL_NAME = "a file name cannot hold a NUL byte: no file has this name"


def file_problem(path: AnyPath) -> str | None:
    """Why ``path`` is no file to read as a log (a FIFO, a device, ...), found without opening
    it; None for a regular file (a symlink to one included) or one that ``stat`` cannot reach,
    which the reader then reports with the system's reason."""
    try:
        mode = os.stat(path).st_mode  # follows links: a link to a log is a log
    except ValueError:  # a NUL in the name: no system call can take it
        return NUL_NAME
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        try:
            os.listdir(path)
        except OSError as exc:
            return f"a directory that cannot be listed: {exc.strerror or exc}"
        return "a directory, not a log"
    return f"not a regular file ({log.file_type(mode)}): skipped, never opened"


_PACKED_LOGS = tuple(f"{log_suffix}{packed}" for log_suffix in (".jsonl", ".blog")
                     for packed in (".gz", ".zst", ".xz", ".bz2", ".lz4", ".zip"))
"""Names of compressed logs: a directory's are audited (and refused by name: "it is
gzip-compressed: decompress it first"), so that they are never skipped unsaid."""


def is_log_file(path: AnyPath) -> bool:
    """A binary log (by its magic bytes or its ``.blog`` name), a JSON Lines log (by its
    ``.jsonl`` name), or either compressed (``.blog.gz``, ``.jsonl.zst``, ...). A ``.blog``
    file whose header is damaged is still a log, so that checking a directory reports it
    instead of passing over it. Only a regular file is opened to read its magic, and never in
    a way that blocks."""
    p = path_text(path)
    if "\0" in p:
        return False
    if p.endswith((".jsonl", ".blog")) or p.endswith(_PACKED_LOGS):
        return True  # a compressed one is reported as such, not passed over
    try:
        fd = log.open_log_fd(p)  # O_NONBLOCK, and refused unless a regular file
    except (OSError, LogFormatError):
        return False
    try:
        return os.pread(fd, len(log.MAGIC), 0) == log.MAGIC
    except OSError:
        return False
    finally:
        os.close(fd)


_BACKUP = re.compile(r"\.bak(\.\d+)?$")  # copies `log.repair` keeps of the damaged bytes


def find_logs(paths: Iterable[AnyPath], *, links: list[str] | None = None,
              passed: list[str] | None = None) -> list[str]:
    """Files as given; directories searched recursively for logs, in name order (hidden
    files and the ``.bak`` copies that repair leaves are skipped); each file once, under the
    first name it is given by.

    Entries of a directory that are not regular files (FIFOs, devices, sockets, links to
    them, dangling links) and subdirectories that cannot be listed are listed too, unopened,
    so that the audit reports each with its reason instead of hanging on it or passing over
    it. Links to directories are not followed (no loops): each is added to ``links`` when
    it is given, so that the caller can name them (their logs were passed over unsaid). A
    directory found named like a log (``.blog``, ``.jsonl``) that holds no log is listed too.

    ``passed``: each file of a directory passed over as no log (by its name and header; not
    the hidden files and ``.bak`` copies) is added to it when it is given, so that the caller
    can count every file it was given: a season's folder of 100,000 files said "audited
    99,998 logs" and nothing of the other two."""
    out: list[str] = []
    for given in paths:
        p = path_text(given)
        if os.path.isdir(p):
            found: list[str] = []

            def unlisted(exc: OSError, found: list[str] = found) -> None:
                if exc.filename is not None:
                    found.append(os.fsdecode(exc.filename))

            log_named: list[tuple[int, str]] = []  # directories named like a log, where
            for root, dirs, files in walk(p, unlisted):
                if root != p and root.endswith((".blog", ".jsonl")):  # given: "no logs found"
                    log_named.append((len(found), root))
                dirs.sort()
                if links is not None:
                    links += [d for d in (os.path.join(root, d) for d in dirs)
                              if os.path.islink(d)]
                for f in sorted(files):
                    if f.startswith(".") or _BACKUP.search(f):
                        continue
                    full = os.path.join(root, f)
                    if _not_regular(full) or is_log_file(full):
                        found.append(full)
                    elif passed is not None:
                        passed.append(full)
            # One holding no log is listed itself (the audit says "a directory, not a log"):
            # a batch passed over `m12.blog/`, made by a mistaken mkdir or an unzip, unsaid.
            for at, named in reversed(log_named):
                if not any(f.startswith(named + os.sep) for f in found[at:]):
                    found.insert(at, named)
            out += found
        else:
            out.append(p)
    # a file named twice (``a.blog a.blog``, or itself and its directory) is audited once:
    # its first name, in order
    first: dict[str, str] = {}
    for p in out:
        first.setdefault(os.path.abspath(p), p)
    return list(first.values())


def walk(top: str, onerror: Callable[[OSError], None] | None = None
         ) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(top, onerror=onerror)``, top-down, links to directories not followed, with a
    stack of its own: Python 3.11's walk recursed once a level, and a tree some 1,000
    directories deep was an internal error (RecursionError) of audit and ingest (and of the
    archive's commands, which walk with this too)."""
    stack = [top]
    while stack:
        root = stack.pop()
        try:
            with os.scandir(root) as entries:
                listed = list(entries)
        except OSError as exc:
            if onerror is not None:
                onerror(exc)
            continue
        dirs: list[str] = []
        files: list[str] = []
        for entry in listed:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            (dirs if is_dir else files).append(entry.name)
        yield root, dirs, files  # the caller may sort or prune dirs, as with os.walk
        below = [os.path.join(root, d) for d in dirs]
        stack += reversed([d for d in below if not os.path.islink(d)])


def _not_regular(path: str) -> bool:
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return os.path.islink(path)  # a dangling link: report it, it may have been a log


def same_files(files: Iterable[str]) -> dict[str, str]:
    """Each name of ``files`` that is the same file as an earlier one (a hard link, a symbolic
    link, by device and inode), mapped to that earlier name. Both are audited (each name is
    reported), but they are one match, which their verdicts then say."""
    first: dict[tuple[int, int], str] = {}
    out: dict[str, str] = {}
    for p in files:
        try:
            st = os.stat(p)
        except (OSError, ValueError):  # ValueError: a NUL in the name, no file at all
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        seen = first.setdefault((st.st_dev, st.st_ino), p)
        if seen != p:
            out[p] = seen
    return out
