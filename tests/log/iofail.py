"""The process of the write-failure probes (tests/log/test_fault_probes_log51.py).

    python -m tests.log.iofail CALL K ERRNO cli ARGS...   buraco-log ARGS
    python -m tests.log.iofail CALL K ERRNO writer LOG N  a Writer appending sample_events(N)

with the K-th (from 0) call of CALL failing with ERRNO (a name: ENOSPC, EDQUOT, EIO). CALL is
``write`` (``os.write``, ``os.pwrite``, ``os.ftruncate`` and the writes of files opened with
``os.fdopen`` for writing) or ``fsync`` (``os.fsync``, ``os.fdatasync``). The process prints
``calls N`` on stderr as it ends, how many calls of CALL it made, so that a loop over K knows
when it has passed the last one; the writer prints ``ack SEQ`` after each acknowledged append
and, refused, the error's line on stderr and exit status 1.
"""

from __future__ import annotations

import atexit
import errno
import io
import os
import runpy
import sys
from typing import Any

CALLS = {"write": ("write", "pwrite", "ftruncate"), "fsync": ("fsync", "fdatasync")}


def _install(kind: str, fail_at: int, code: int) -> list[int]:
    made = [0]

    def count() -> None:
        n = made[0]
        made[0] += 1
        if n == fail_at:
            raise OSError(code, os.strerror(code))

    for name in CALLS[kind]:
        real = getattr(os, name)

        def call(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
            count()
            return _real(*args, **kwargs)

        setattr(os, name, call)
    if kind == "write":
        real_fdopen = os.fdopen

        class Raw(io.FileIO):
            def write(self, data: Any) -> int:
                count()
                return super().write(data)

        def fdopen(fd: int, mode: str = "r", buffering: int = -1, encoding: str | None = None,
                   **kwargs: Any) -> Any:
            if not any(c in mode for c in "wax+"):
                return real_fdopen(fd, mode, buffering, encoding, **kwargs)
            raw = Raw(fd, "w", closefd=True)
            buffered = io.BufferedWriter(raw)
            if "b" in mode:
                return buffered
            return io.TextIOWrapper(buffered, encoding=encoding, **kwargs)

        os.fdopen = fdopen  # type: ignore[assignment]
    atexit.register(lambda: print(f"calls {made[0]}", file=sys.stderr, flush=True))
    return made


def _writer(path: str, n: int) -> int:
    from buraco_log import log
    from buraco_log.errors import LogFormatError
    from tests.log.samples import sample_events

    events = sample_events(n)
    try:
        with log.Writer(path, validate=False) as w:
            for event in events:
                w.append(event)
                print(f"ack {event.seq}", flush=True)
    except LogFormatError as exc:
        print(str(exc), file=sys.stderr, flush=True)
        return 1
    return 0


def main() -> None:
    kind, fail_at, name, what, *rest = sys.argv[1:]
    _install(kind, int(fail_at), getattr(errno, name))
    if what == "writer":
        code = _writer(rest[0], int(rest[1]))
        sys.stdout.flush()
        sys.exit(code)
    sys.argv = ["buraco-log", *rest]
    runpy.run_module("cli.main", run_name="__main__")


if __name__ == "__main__":
    main()
