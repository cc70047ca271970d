"""The log tests' way of running the command line: this checkout's buraco-log in a subprocess with
a timeout, and the check of a one-line error."""

from __future__ import annotations

import hashlib
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable
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


def _file_size_limit(size: int) -> Callable[[], None]:
    """A ``preexec_fn`` that makes every file the child writes stop at ``size`` bytes: a full
    disk without a full disk (SIGXFSZ ignored, so a write fails with EFBIG instead)."""
    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    return limit


def run(*args: object, stdin: bytes = b"", timeout: float = 60, cwd: Path | None = None,
        env: dict[str, str] | None = None, fsize: int | None = None) -> Result:
    """``buraco-log ARGS`` (this checkout's code) in a subprocess; a run past ``timeout``
    seconds is killed and returns code None, so a hang fails the test instead of blocking.
    ``fsize``: no file the command writes can grow past this many bytes."""
    environ = dict(os.environ, COLUMNS="200", PYTHONPATH=str(REPO), **(env or {}))
    try:
        p = subprocess.run([sys.executable, "-m", "cli.main", *(str(a) for a in args)],
                           input=stdin, capture_output=True, timeout=timeout, cwd=cwd,
                           env=environ,
                           preexec_fn=None if fsize is None else _file_size_limit(fsize))
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


def _lines() -> list[bytes]:
    return GOOD_JSONL.read_bytes().split(b"\n")


def _with_line(tmp_path: Path, number: int, line: bytes, name: str = "bad.jsonl") -> Path:
    """The golden JSON Lines log with line ``number`` (1-based) replaced by ``line``."""
    lines = _lines()
    lines[number - 1] = line
    path = tmp_path / name
    path.write_bytes(b"\n".join(lines))
    return path


UNSEALED = EXAMPLES / "format" / "v2-unsealed.blog"
UNSEALED_JSONL = EXAMPLES / "format" / "v2-unsealed.jsonl"


def _files(folder: Path) -> dict[str, str]:
    return {p.name: digest(p) for p in folder.iterdir() if p.is_file() and not p.is_symlink()}
