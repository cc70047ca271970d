"""What the CLI fault probes check of every refusal: its exit status and one line on stderr."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: object, cwd: Path = ROOT, timeout: float = 120,
        **popen: object) -> subprocess.CompletedProcess[str]:
    """``buraco-log ARGS`` in a subprocess of this tree, text output captured."""
    done: subprocess.CompletedProcess[str] = subprocess.run(  # type: ignore[call-overload]
        [sys.executable, "-m", "cli", *map(str, args)], capture_output=True, text=True,
        cwd=cwd, timeout=timeout, check=False, stdin=subprocess.DEVNULL,
        env=dict(os.environ, PYTHONPATH=str(ROOT)), **popen)
    return done


def one_error_line(done: subprocess.CompletedProcess[str], status: int) -> str:
    """The single stderr line of a refusal that exited ``status``, with no traceback."""
    assert done.returncode == status, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def cli_batch(runs: list[list[object]], cwd: Path = ROOT, timeout: float = 120,
              env: dict[str, str] | None = None) -> list[subprocess.CompletedProcess[str]]:
    """``buraco-log ARGS`` for each of ``runs``, all started at once (a process start is most
    of a probe's time), text output captured, in the order given."""
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    procs = [subprocess.Popen([sys.executable, "-m", "cli", *map(str, args)], cwd=cwd,
                              env=environ, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for args in runs]
    done = []
    for args, proc in zip(runs, procs, strict=True):
        out, err = proc.communicate(timeout=timeout)
        done.append(subprocess.CompletedProcess([str(a) for a in args], proc.returncode, out,
                                                err))
    return done


def stdout_on_a_terminal(args: list[object], cwd: Path = ROOT, env: dict[str, str] | None = None,
                         timeout: float = 120) -> tuple[int, str, str]:
    """``buraco-log ARGS`` with standard output a pty, stderr a pipe: (status, what the
    terminal showed, stderr)."""
    import pty
    import select

    leader, follower = pty.openpty()
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    proc = subprocess.Popen([sys.executable, "-m", "cli", *map(str, args)], cwd=cwd,
                            env=environ, stdin=subprocess.DEVNULL, stdout=follower,
                            stderr=subprocess.PIPE)
    os.close(follower)
    shown = b""
    while select.select([leader], [], [], timeout)[0]:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the program closed the terminal: Linux says EIO
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert proc.stderr is not None
    err = proc.stderr.read()
    proc.stderr.close()
    status = proc.wait(timeout=timeout)
    return status, shown.decode().replace("\r\n", "\n"), err.decode()
