"""Run the command line in a subprocess with a fault put in at a chosen point.

``python tests/sim/inject.py FAULT N -- ARGS``: FAULT is

- ``full``: the disk fills after N bytes written to regular files (os.pwrite, os.write, and files
  opened for writing, by name or descriptor), the write that crosses it cut short, as a full
  disk cuts it;
- ``sigint-encode``: a real SIGINT to the command's process as `simulate` encodes match N (in
  a worker, with ``-j 2``), its temporary file open and empty;
- ``sigint-simulate`` / ``sigint-audit``: a real SIGINT as `demo` plays its match / audits its log;
- ``none``: no fault.
"""

from __future__ import annotations

import builtins
import errno
import io
import os
import signal
import stat
import sys
import time
from typing import Any

MAIN = os.getpid()  # a forked worker sends it to the command's process, as a terminal would


def _interrupt() -> None:
    os.kill(MAIN, signal.SIGINT)
    time.sleep(5)  # the handler runs at once (a worker is stopped by the command meanwhile)


def _full(budget: int) -> None:
    left = [budget]

    def take(n: int) -> int:
        if left[0] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        k = min(n, left[0])
        left[0] -= k
        return k

    real_pwrite, real_write, real_open = os.pwrite, os.write, builtins.open

    def pwrite(fd: int, data: Any, offset: int) -> int:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # pipes and terminals are no disk
            return real_pwrite(fd, data, offset)
        return real_pwrite(fd, bytes(memoryview(data)[:take(len(data))]), offset)

    def write(fd: int, data: Any) -> int:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return real_write(fd, data)
        return real_write(fd, bytes(memoryview(data)[:take(len(data))]))

    class Full(io.RawIOBase):
        def __init__(self, raw: Any) -> None:
            self._raw = raw

        def write(self, b: Any) -> int:
            return int(self._raw.write(bytes(memoryview(b)[:take(len(b))])))

        def writable(self) -> bool:
            return True

        def fileno(self) -> int:
            return int(self._raw.fileno())

        def close(self) -> None:
            if not self.closed:
                super().close()
                self._raw.close()

    def opened(file: Any, mode: str = "r", *a: Any, **k: Any) -> Any:
        if isinstance(file, int) or not any(c in mode for c in "wax+"):
            return real_open(file, mode, *a, **k)
        raw = real_open(file, mode.replace("t", "").replace("b", "") + "b", buffering=0)
        f = io.BufferedWriter(Full(raw))
        return f if "b" in mode else io.TextIOWrapper(f, encoding=k.get("encoding") or "utf-8",
                                                      newline=k.get("newline"))

    real_fdopen = os.fdopen

    def fdopen(fd: int, mode: str = "r", *a: Any, **k: Any) -> Any:
        if not any(c in mode for c in "wax+") or not stat.S_ISREG(os.fstat(fd).st_mode):
            return real_fdopen(fd, mode, *a, **k)
        f = io.BufferedWriter(Full(real_fdopen(fd, "wb", buffering=0)))
        return f if "b" in mode else io.TextIOWrapper(f, encoding=k.get("encoding") or "utf-8")

    os.pwrite, os.write, builtins.open = pwrite, write, opened  # type: ignore[assignment]
    os.fdopen = fdopen


def main() -> None:
    fault, n, _, *args = sys.argv[1:]
    if fault == "full":
        _full(int(n))
    elif fault == "sigint-encode":
        from buraco_log import simulate

        real, calls = simulate.encode_match, [0]

        def encode(events: Any) -> bytes:
            if calls[0] == int(n):
                _interrupt()
            calls[0] += 1
            return real(events)

        simulate.encode_match = encode
    elif fault in ("sigint-simulate", "sigint-audit"):
        from cli import demo_cmd

        name = "simulate_match" if fault == "sigint-simulate" else "audit"
        if name == "audit":
            from buraco_log import audit

            audit.show_log = lambda *a, **k: _interrupt()  # type: ignore[assignment]
        else:
            demo_cmd.simulate_match = lambda *a, **k: _interrupt()  # type: ignore[assignment]
    sys.argv = ["buraco-log", *args]
    from cli.entry import run

    run()


if __name__ == "__main__":
    main()
