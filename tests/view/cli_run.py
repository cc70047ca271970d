"""The view command line in a subprocess of this checkout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "cli.main", *map(str, args)],
                          capture_output=True, cwd=cwd, timeout=120,
                          env={"PYTHONPATH": str(Path(__file__).parents[2]),
                               "PATH": "/usr/bin:/bin"})
