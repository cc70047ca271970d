"""What the CLI fault probes check of every refusal: its exit status and one line on stderr."""

from __future__ import annotations

import subprocess


def one_error_line(done: subprocess.CompletedProcess[str], status: int) -> str:
    """The single stderr line of a refusal that exited ``status``, with no traceback."""
    assert done.returncode == status, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, lines
    return lines[0]
