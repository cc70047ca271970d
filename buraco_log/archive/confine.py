"""Confine a query's process with Linux Landlock: no file written but the ones named, none
read outside the places named, no TCP.

DuckDB's sandbox lets a query open the archive's committed files, and DuckDB has no
read-only form of ``allowed_paths``: a ``COPY ... TO`` a committed file's path (with
``USE_TMP_FILE false``) overwrites it where the process may write it, and root may write any
file, whatever its mode. The statement check refuses every form of it known, but it is a
list of what is refused. Here the kernel holds the line instead, for the whole process and
every thread it starts later: it may write, create, remove or rename nothing in the file
system (what is open already stays writable: standard output, the readers' lock), but for
the places given (the command's output), read nothing but beneath the places given (the
archive, Python's and the system's libraries), and open no TCP connection, nor listen.

Linux 5.13 and later with Landlock enabled; elsewhere :func:`confine` does nothing and says
so (the statement check and DuckDB's settings remain). Call it while the process has one
thread (the query's forked child): a thread that exists already stays unconfined.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import sys
from collections.abc import Iterable

# linux/landlock.h
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_RULE_NET_PORT = 2
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE = 1 << 13, 1 << 14  # ABI 2, ABI 3
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
_PR_SET_NO_NEW_PRIVS = 38
# x86_64, arm64 and every other architecture of the generic syscall table share these
_SYS_CREATE, _SYS_ADD_RULE, _SYS_RESTRICT = 444, 445, 446

WRITES_ABI1 = (WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG
               | MAKE_SOCK | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM)
"""Every change to the file system Landlock's first version can refuse."""
FILE_WRITES = WRITE_FILE | TRUNCATE
"""What a rule on one file (not a directory) may grant of them."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # __attribute__((packed)) in linux/landlock.h
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def abi() -> int:
    """Landlock's ABI version this kernel offers; 0 where it has none (or this is not
    Linux on a known architecture)."""
    if not sys.platform.startswith("linux"):
        return 0
    libc = _libc()
    if libc is None:
        return 0
    version = libc.syscall(_SYS_CREATE, None, ctypes.c_size_t(0),
                           ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(int(version), 0)


def _libc() -> ctypes.CDLL | None:
    """The C library as this process already holds it (``dlopen(NULL)``). Not
    ``ctypes.util.find_library``, which runs ``ldconfig -p`` in a child process: a signal
    meanwhile left that child unreaped in the command's process group after the command
    had ended."""
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def confine(writable_dirs: Iterable[tuple[str, int]] = (),
            writable_files: Iterable[str] = (), readable: Iterable[str] | None = None) -> bool:
    """Forbid this process (and the threads and processes it starts from now on) every
    change to the file system and every TCP connect or bind, but, beneath each directory of
    ``writable_dirs``, the changes its access bits grant (:data:`MAKE_REG`, ...), and writing
    each file of ``writable_files``; with ``readable``, every read of a file or listing of a
    directory too, but of those paths (each file, or beneath each directory). Irreversible.
    Returns whether the kernel took it (False: no Landlock here; nothing changed). A path that
    does not exist is skipped. Raises OSError where Landlock is there but refused the
    ruleset."""
    version = abi()
    if version < 1:
        return False
    libc = _libc()
    assert libc is not None
    writes = WRITES_ABI1 | (REFER if version >= 2 else 0) | (TRUNCATE if version >= 3 else 0)
    reads = 0 if readable is None else READ_FILE | READ_DIR
    net = NET_BIND_TCP | NET_CONNECT_TCP if version >= 4 else 0
    attr = _RulesetAttr(writes | reads, net)
    size = ctypes.sizeof(_RulesetAttr) if version >= 4 else 8  # ABI 1-3 know only the first
    ruleset = libc.syscall(_SYS_CREATE, ctypes.byref(attr), ctypes.c_size_t(size),
                           ctypes.c_uint32(0))
    if ruleset < 0:
        raise _error(f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
    try:
        rules = [(d, bits & writes) for d, bits in writable_dirs]
        rules += [(f, FILE_WRITES & writes) for f in writable_files]
        rules += [(r, reads if os.path.isdir(r) else READ_FILE) for r in readable or ()]
        for path, bits in rules:
            _allow(libc, ruleset, path, bits)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise _error(f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(ctypes.get_errno())}")
        if libc.syscall(_SYS_RESTRICT, ruleset, ctypes.c_uint32(0)) != 0:
            raise _error(f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(ruleset)
    return True


def _allow(libc: ctypes.CDLL, ruleset: int, path: str, bits: int) -> None:
    if not bits:
        return
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:  # gone, or never there: nothing to allow
        return
    try:
        rule = _PathBeneathAttr(bits, fd)
        if libc.syscall(_SYS_ADD_RULE, ruleset, ctypes.c_int(_RULE_PATH_BENEATH),
                        ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
            if ctypes.get_errno() == errno.EBADFD:  # a pipe or socket (/dev/stdout): no
                return  # file of the file system, which Landlock does not govern
            raise _error(f"landlock_add_rule {path}: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)


def _error(text: str) -> OSError:
    return OSError(ctypes.get_errno(), text)
