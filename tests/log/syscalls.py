"""The durability order of a command's system calls, read from ``strace -f -y``: every byte a
command wrote under a folder fsynced before it answers (an acknowledgement, its exit), every
temporary fsynced before it is renamed or linked into place, and every directory whose entries
changed (a file created, renamed, linked, a folder made) fsynced after the change and before the
answer. A process kill cannot show a missing fsync (the page cache survives it); the calls can."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

STRACE = shutil.which("strace") or ("/usr/bin/strace" if os.path.exists("/usr/bin/strace")
                                    else None)
CALLS = ("openat,open,creat,write,pwrite64,writev,fsync,fdatasync,rename,renameat,renameat2,"
         "unlink,unlinkat,close,ftruncate,sync_file_range,syncfs,sync,link,linkat,mkdir,mkdirat,rmdir,"
         "exit_group")
ACK = b"ACK"  # what a traced script writes to /dev/null at each acknowledgement


def trace(argv: Sequence[str | os.PathLike[str]], out: Path, *, cwd: Path | None = None,
          timeout: float = 120, env: dict[str, str] | None = None
          ) -> subprocess.CompletedProcess[bytes]:
    """Run ``argv`` under strace, its calls written to ``out``."""
    assert STRACE is not None
    return subprocess.run([STRACE, "-f", "-y", "-s", "200", "-q", "-e", f"trace={CALLS}",
                           "-o", str(out), *map(str, argv)], capture_output=True, cwd=cwd,
                          timeout=timeout, env=env)


@dataclass
class Call:
    pid: int
    name: str
    args: str
    ret: str


_LINE = re.compile(r"^(\d+)\s+(.*)$")
_CALL = re.compile(r"^(\w+)\((.*)\)\s+=\s+(.*)$", re.S)
_RESUMED = re.compile(r"^<\.\.\. (\w+) resumed>(.*)$", re.S)
_ARG = re.compile(r'(?:AT_FDCWD|\d+)<([^>]*)>|"((?:[^"\\]|\\.)*)"')


def calls(text: str) -> list[Call]:
    """The finished calls of a ``strace -f`` output, an interrupted call joined to its end."""
    pending: dict[int, str] = {}
    out = []
    for raw in text.splitlines():
        m = _LINE.match(raw)
        if not m:
            continue
        pid, rest = int(m.group(1)), m.group(2)
        if rest.startswith("+++ exited with"):
            out.append(Call(pid, "+exit", "", rest.split()[3]))
            continue
        if rest.startswith(("+++", "---")):
            continue
        if rest.endswith("<unfinished ...>"):
            pending[pid] = rest[: -len("<unfinished ...>")].rstrip()
            continue
        r = _RESUMED.match(rest)
        if r:
            rest = pending.pop(pid, r.group(1) + "(") + r.group(2)
        c = _CALL.match(rest)
        if c:
            out.append(Call(pid, c.group(1), c.group(2), c.group(3)))
    return out


def _operands(args: str) -> list[tuple[str, str]]:
    """Each fd's path (kind "fd") and each quoted string (kind "s") among ``args``, in order."""
    return [("fd", m.group(1)) if m.group(1) is not None else ("s", m.group(2))
            for m in _ARG.finditer(args)]


def _paths(args: str) -> list[str]:
    """The paths a call names, each relative name joined to the directory fd before it."""
    ops = _operands(args)
    found: list[str] = []
    base: str | None = None
    for kind, value in ops:
        if kind == "fd":
            base = value
        else:
            found.append(value if value.startswith("/") or base is None
                         else os.path.join(base, value))
            base = None
    return found


@dataclass
class Verdict:
    faults: list[str] = field(default_factory=list)
    fsyncs: int = 0
    acks: int = 0

    def __bool__(self) -> bool:
        return not self.faults


def check(text: str, root: Path, *, existed: set[str] | None = None,
          in_place: bool = True, cwd: Path | None = None, ignore: str | None = None,
          ack_unlink: str | None = None) -> Verdict:
    """The durability faults of a traced run, over the files under ``root``. ``existed``: the
    paths there before the run (a file opened with O_CREAT that is not among them is new; with
    ``in_place`` False, writing one of them, rather than a new file renamed over it, is a fault).
    Acknowledgements: a write of ``ACK`` to /dev/null, a write to stdout, the first process's
    exit with 0. ``ignore``: a pattern of paths whose durability does not matter (a lock file's
    holder note, a cache remade on demand). ``ack_unlink``: a pattern of files whose unlink or
    truncation is an acknowledgement too (a journal, removed once the logs hold its events)."""
    top = os.path.realpath(root)
    base = os.path.realpath(cwd) if cwd else None
    existed = {os.path.realpath(p) for p in existed or ()}
    before = set(existed)
    dirty: dict[str, tuple[str, int]] = {}  # file -> what wrote it and when, not yet fsynced
    entries: dict[str, dict[str, tuple[str, int]]] = {}  # directory -> name -> change, when
    gone: set[str] = set()
    v = Verdict()
    first: int | None = None

    def mine(path: str) -> bool:
        if base and not path.startswith("/"):
            path = os.path.join(base, path)
        if ignore and re.search(ignore, path):
            return False
        return path == top or path.startswith(top + os.sep)

    def entry(path: str, what: str) -> None:
        entries.setdefault(os.path.dirname(path), {})[os.path.basename(path)] = (what, now)

    def forget(path: str) -> None:  # a name gone again: its creation needs no fsync
        entries.get(os.path.dirname(path), {}).pop(os.path.basename(path), None)
        for d in [d for d in entries if d == path or d.startswith(path + os.sep)]:
            del entries[d]

    def answer(where: str, since: int | None = None) -> None:
        """``since``: only what was done before this call is held to it (a journal removed
        answers for the rounds it holds, not those of the next journal, made at ``since``)."""
        v.acks += 1
        cut = now if since is None else since
        for path, (what, when) in sorted(dirty.items()):
            if when < cut:
                v.faults.append(f"{where}: {path} not fsynced after {what}")
                del dirty[path]
        for d, names in sorted(entries.items()):
            late = {n: wn for n, wn in names.items() if wn[1] >= cut}
            for what in sorted({w for n, (w, _) in names.items() if n not in late})[:1]:
                v.faults.append(f"{where}: directory {d} not fsynced after {what}")
            if late:
                entries[d] = late
            else:
                del entries[d]

    newest = 0  # when the newest file matching ack_unlink was made
    for now, c in enumerate(calls(text)):
        if first is None:
            first = c.pid
        failed = c.ret.startswith("-1")
        if c.name == "+exit":
            if c.pid == first and c.ret == "0":
                answer("exit")
            continue
        if failed:
            continue
        if c.name in ("write", "pwrite64", "writev"):
            ops = _operands(c.args)
            path = ops[0][1] if ops and ops[0][0] == "fd" else ""
            if path == "/dev/null" and f'"{ACK.decode()}' in c.args:
                answer(c.args.split('"')[1])
            elif c.args.startswith("1<") and mine(path) is False:
                answer("stdout")
            elif mine(path) and not path.endswith(" (deleted)"):
                dirty.setdefault(path, (c.name, now))  # the first write not synced
                if not in_place and path in before:
                    v.faults.append(f"{path} written in place ({c.name})")
        elif c.name == "ftruncate":
            ops = _operands(c.args)
            if ops and ack_unlink and re.search(ack_unlink, ops[0][1]):
                answer(f"ftruncate {os.path.basename(ops[0][1])}", newest)
            if ops and mine(ops[0][1]):
                dirty.setdefault(ops[0][1], ("ftruncate", now))
        elif c.name in ("fsync", "fdatasync"):
            ops = _operands(c.args)
            if ops and (mine(ops[0][1]) or ops[0][1] == top):
                v.fsyncs += 1
                path = ops[0][1]
                dirty.pop(path, None)
                entries.pop(path, None)
        elif c.name in ("openat", "open", "creat"):
            m = re.search(r"= \d+<([^>]*)>", " = " + c.ret)
            path = m.group(1) if m else ""
            if ack_unlink and "O_CREAT" in c.args and re.search(ack_unlink, path):
                newest = now
            if mine(path) and ("O_CREAT" in c.args or c.name == "creat") \
                    and path not in existed and path not in gone:
                existed.add(path)
                entry(path, f"creating {os.path.basename(path)}")
            if mine(path) and "O_TRUNC" in c.args:
                dirty.setdefault(path, ("O_TRUNC", now))
                if not in_place and path in before:
                    v.faults.append(f"{path} truncated in place (O_TRUNC)")
        elif c.name in ("rename", "renameat", "renameat2", "link", "linkat"):
            paths = _paths(c.args)
            if len(paths) < 2 or not mine(paths[1]):
                continue
            src, dst = paths[0], paths[1]
            if src in dirty:
                v.faults.append(f"{c.name} {os.path.basename(src)} -> {os.path.basename(dst)} "
                                f"before fsync of {os.path.basename(src)}")
            if c.name.startswith("rename"):
                if src in dirty:
                    dirty[dst] = dirty.pop(src)
                gone.add(src)
                if entries.get(os.path.dirname(src), {}).get(os.path.basename(src)):
                    forget(src)  # made and moved on before a sync: only where it went counts
            existed.add(dst)
            entry(dst, f"{c.name} to {os.path.basename(dst)}")
        elif c.name in ("mkdir", "mkdirat"):
            paths = _paths(c.args)
            if paths and mine(paths[0]):
                entry(paths[0], f"mkdir {os.path.basename(paths[0])}")
        elif c.name in ("unlink", "unlinkat", "rmdir"):
            paths = _paths(c.args)
            if paths and ack_unlink and re.search(ack_unlink, paths[0]):
                answer(f"{c.name} {os.path.basename(paths[0])}", newest)
            if paths and mine(paths[0]):
                dirty.pop(paths[0], None)
                gone.add(paths[0])
                forget(paths[0])
        elif c.name in ("syncfs", "sync"):
            v.fsyncs += 1
            dirty.clear()
            entries.clear()
    return v


def snapshot(root: Path) -> set[str]:
    """Every path under ``root`` now (what ``check`` calls ``existed``)."""
    return {os.path.realpath(os.path.join(d, n)) for d, ds, fs in os.walk(root)
            for n in (*ds, *fs)} | {os.path.realpath(root)}
