"""Fault probes of the log layer: hostile inputs from an outside tester, through the command
line in real subprocesses with a timeout, so a hang fails instead of blocking the run.

The promises (docs/cli.md, Conventions; schema/LOG_FORMAT.md): bad input gets one line on
stderr naming the file and where (byte, line, seq) and why, a non-zero exit, no traceback,
nothing half-written, and an input a command only reads is never modified."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
GOOD_JSONL = EXAMPLES / "golden" / "classic.jsonl"


@dataclass(frozen=True)
class Result:
    code: int | None  # None: it hung and was killed
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.err.splitlines()


def run(*args: object, stdin: bytes = b"", timeout: float = 60, cwd: Path | None = None,
        env: dict[str, str] | None = None) -> Result:
    """``buraco-log ARGS`` (this checkout's code) in a subprocess; a run past ``timeout``
    seconds is killed and returns code None, so a hang fails the test instead of blocking."""
    environ = dict(os.environ, COLUMNS="200", PYTHONPATH=str(REPO), **(env or {}))
    try:
        p = subprocess.run([sys.executable, "-m", "cli.main", *(str(a) for a in args)],
                           input=stdin, capture_output=True, timeout=timeout, cwd=cwd,
                           env=environ)
    except subprocess.TimeoutExpired as exc:
        return Result(None, (exc.stdout or b"").decode("utf-8", "replace"),
                      (exc.stderr or b"").decode("utf-8", "replace"))
    return Result(p.returncode, p.stdout.decode("utf-8", "replace"),
                  p.stderr.decode("utf-8", "replace"))


def assert_error(r: Result, code: int, *needles: str) -> str:
    """Exit ``code``, one stderr line starting ``buraco-log:`` holding every needle, no
    traceback, stdout empty."""
    assert r.code is not None, f"hung: {r.err[-400:]}"
    assert "Traceback" not in r.err + r.out, r.err[-800:]
    assert r.code == code, r
    assert r.out == "", r.out[:300]
    assert len(r.lines) == 1, r.lines[:5]
    line = r.lines[0]
    assert line.startswith("buraco-log: "), line
    for needle in needles:
        assert needle in line, (needle, line)
    return line


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
