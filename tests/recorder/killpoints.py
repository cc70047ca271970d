"""A recorder process killed after a chosen system call, and the checks after its restart.

``python -m tests.recorder.killpoints DIR SRCDIR SYNC KILL [recover]`` opens a recorder on DIR
(writing back what a crash left) and, unless ``recover``, plays a few rounds of moves of the
tables ``TABLES`` (some continue logs the test prepared, some start new logs, one ends its
match), saving its state and checkpointing its journal every round. Every call that changes a
file or a name (``write``, ``pwrite``, ``fsync``, ``fdatasync``, ``ftruncate``, ``rename``,
``replace``, ``renameat2``, ``link``, ``unlink``, ``syncfs``, an ``open`` that creates) is
counted and printed as ``@ NAME``; after the one ``KILL`` names (``N``: the Nth of any kind,
``NAME:N``: the Nth of that kind; ``0``: none) the process sends itself SIGKILL. Each move
acknowledged is printed as ``match seq`` first, with one ``write``, so the test knows exactly
what was acknowledged when the process died.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from buraco_log import events as ev
from buraco_log import journal, log
from buraco_log.recorder import LOCK_NAME, SAVED_NAME, Recorder

SOURCES = 4
TABLES: dict[str, tuple[int, int]] = {  # table: (source match, events its log holds at first)
    "p0": (0, 5), "p1": (1, 5), "p2": (2, 9),  # mid-match logs, continued
    "n0": (1, 0), "n1": (3, 0),  # new logs
    "e0": (3, -3),  # three moves from its end: MatchEnded, then forgotten
}
ROUNDS = 4
MUTATING = ("write", "pwrite", "fsync", "fdatasync", "ftruncate", "rename", "replace", "link",
            "unlink")


def source(srcdir: str | os.PathLike[str], table: str) -> list[ev.AnyEvent]:
    return log.read_events(Path(srcdir) / f"src{TABLES[table][0]}.blog")


def prepare(directory: Path, srcdir: Path) -> None:
    """The logs the tables hold before the recorder starts (as a referee's tool wrote them)."""
    directory.mkdir()
    for table, (_, held) in TABLES.items():
        if held:
            log.write_log(directory / f"{table}.blog", source(srcdir, table)[:held],
                          validate=False)


def _hook(kill: str) -> Callable[[str], None]:
    """Count the calls and kill after the one ``kill`` names; returns the ack printer."""
    write = os.write
    counts: dict[str, int] = {}
    lock = threading.Lock()
    name, _, nth = kill.rpartition(":")
    at = int(nth)

    def done(op: str) -> None:
        with lock:
            counts[op] = counts.get(op, 0) + 1
            counts[""] = counts.get("", 0) + 1
            write(1, f"@ {op}\n".encode())
            if at and counts.get(name) == at:
                os.kill(os.getpid(), signal.SIGKILL)

    def wrap(module: Any, attr: str, op: str, when: Callable[..., bool] | None = None) -> None:
        real = getattr(module, attr)

        def call(*args: Any, **kwargs: Any) -> Any:
            out = real(*args, **kwargs)
            if when is None or when(*args, **kwargs):
                done(op)
            return out

        setattr(module, attr, call)

    for op in MUTATING:
        wrap(os, op, op)
    wrap(os, "open", "create", lambda path, flags, *a, **k: bool(flags & os.O_CREAT))
    wrap(log, "renameat2", "renameat2")
    from buraco_log import recorder

    wrap(recorder.FileOps, "syncfs", "syncfs")

    def say(line: str) -> None:
        write(1, line.encode())  # one write: whole, whenever the kill comes

    return say


def main() -> None:
    directory, srcdir, sync, kill = sys.argv[1:5]
    recover_only = sys.argv[5:] == ["recover"]
    sources = {table: source(srcdir, table) for table in TABLES}
    say = _hook(kill)
    rec = Recorder(directory, sync=sync, window=0.002, max_open=0, save_every=0.0,
                   checkpoint_every=0.0)
    if recover_only:
        for table in TABLES:
            rec.next_seq(table)  # loaded: a torn tail is cut
        rec.close()
        say("done\n")
        return
    for _ in range(ROUNDS):
        futures = []
        for table, src in sources.items():
            seq = rec.next_seq(table)
            if seq < len(src):
                futures.append((table, rec.submit(table, src[seq])))
        for table, future in futures:
            say(f"{table} {future.result()}\n")
    rec.close()
    say("done\n")


def stray(directory: Path) -> list[str]:
    """Names in the directory other than logs, the lock and the saved states."""
    return sorted(p.name for p in directory.iterdir()
                  if p.suffix != ".blog" and p.name not in (LOCK_NAME, SAVED_NAME))


def journals(directory: Path) -> list[str]:
    return [Path(p).name for _, p in journal.generations(str(directory), unfolded=True)]


if __name__ == "__main__":
    main()
