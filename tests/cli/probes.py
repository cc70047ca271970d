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
