"""A command line run with its stderr on a pseudo-terminal, as a person at a shell sees it."""

from __future__ import annotations

from pathlib import Path

from tests.cli.probes import ROOT


def _stderr_on_a_terminal(runs: list[list[object]], cwd: Path, term: str
                          ) -> list[tuple[int, bytes, bytes]]:
    """``buraco-log ARGS`` for each of ``runs`` at once, stderr a pty (TERM=``term``), stdout a
    pipe: (status, stdout, what the terminal showed)."""
    import os
    import pty
    import select
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": term, "COLUMNS": "80"}
    env.pop("NO_COLOR", None)
    started = []
    for args in runs:
        leader, follower = pty.openpty()
        proc = subprocess.Popen([sys.executable, "-m", "cli", *map(str, args)], cwd=cwd,
                                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=follower)
        os.close(follower)
        started.append((proc, leader))
    done = []
    for proc, leader in started:
        shown = b""
        while select.select([leader], [], [], 120)[0]:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the program closed the terminal: Linux says EIO
                break
            if not chunk:
                break
            shown += chunk
        os.close(leader)
        assert proc.stdout is not None
        out = proc.stdout.read()
        proc.stdout.close()
        done.append((proc.wait(timeout=120), out, shown))
    return done
