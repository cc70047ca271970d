"""Several independent command lines started at once (each in its own environment), so a
test of many runs waits for the slowest, not for their sum."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from subprocess import CompletedProcess

ROOT = Path(__file__).resolve().parents[2]


def start_all(runs: list[tuple[dict[str, str], list[object]]]) -> list[CompletedProcess[str]]:
    """``buraco-log ARGS`` for each (environment, ARGS), all started at once."""
    base = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-m", "cli", *map(str, args)], cwd=ROOT,
                              env={**base, **env}, stdin=subprocess.DEVNULL, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for env, args in runs]
    done = []
    for (_, args), proc in zip(runs, procs, strict=True):
        out, err = proc.communicate(timeout=120)
        done.append(CompletedProcess([str(a) for a in args], proc.returncode, out, err))
    return done
