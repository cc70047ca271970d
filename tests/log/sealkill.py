"""The process of the seal kill-point probes (tests/log/test_fault_probes_log49.py).

    python -m tests.log.sealkill LOG call N     SIGKILL just before seal's N-th system call
    python -m tests.log.sealkill LOG point NAME SIGKILL at a named point of buraco_log.log
    python -m tests.log.sealkill LOG halfway N  a writer appending sample_events(N), killed
                                                in the middle of writing its last record

Prints ``sealed EVENTS CALLS`` when seal finished without being killed (CALLS: how many of
the wrapped calls it made), so a loop over N knows when it has passed the last one; the
writer prints ``ack SEQ`` after each acknowledged append.
"""

from __future__ import annotations

import fcntl
import os
import signal
import sys
from typing import Any

from buraco_log import log
from tests.log.samples import sample_events

SYSCALLS = ("open", "close", "write", "pwrite", "read", "pread", "fsync", "ftruncate", "fstat",
            "stat", "lstat", "replace", "rename", "link", "unlink", "chmod", "chown", "scandir")
"""The calls of ``os`` (and ``fcntl.flock``) between which seal is killed."""


def _die() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def _count_calls(kill_at: int) -> list[int]:
    made = [0]

    def wrap(module: Any, name: str) -> None:
        real = getattr(module, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            if made[0] == kill_at:
                _die()
            made[0] += 1
            return real(*args, **kwargs)

        setattr(module, name, call)

    for name in SYSCALLS:
        wrap(os, name)
    wrap(fcntl, "flock")
    return made


def _kill_at_point(point: str) -> None:
    def hook(name: str) -> None:
        if name == point:
            _die()

    log._hook = hook


def _halfway(path: str, count: int) -> None:
    events = sample_events(count)
    with log.Writer(path, validate=False) as w:
        for event in events[:-1]:
            w.append(event)
            print(f"ack {event.seq}", flush=True)
        real = os.pwrite

        def pwrite(fd: int, data: Any, offset: int) -> int:
            real(fd, bytes(data)[: len(data) // 2], offset)
            _die()
            return 0

        os.pwrite = pwrite  # the writer writes its records with pwrite
        w.append(events[-1])
        print("ack never", flush=True)


def main() -> None:
    path, mode, arg = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "halfway":
        _halfway(path, int(arg))
        return
    made = [0]
    if mode == "call":
        made = _count_calls(int(arg))
    else:
        _kill_at_point(arg)
    info = log.seal(path, batch_events=7)
    print(f"sealed {info.events} {made[0]}", flush=True)


if __name__ == "__main__":
    main()
