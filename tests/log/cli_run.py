"""The log tests' way of running the command line: this checkout's buraco-log in a subprocess with
a timeout, and the check of a one-line error (tests/command_line.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests import command_line
from tests.command_line import Result as Result
from tests.command_line import assert_error as assert_error

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
GOOD_JSONL = EXAMPLES / "golden" / "classic.jsonl"


def run(*args: object, stdin: bytes = b"", timeout: float = 60, cwd: Path | None = None,
        env: dict[str, str] | None = None, fsize: int | None = None) -> Result:
    """``buraco-log ARGS`` (this checkout's code) in a subprocess; a run past ``timeout``
    seconds is killed and returns code None, so a hang fails the test instead of blocking.
    ``fsize``: no file the command writes can grow past this many bytes."""
    return command_line.run(*args, stdin=stdin, timeout=timeout, cwd=cwd, env=env, fsize=fsize,
                            checkout=True)


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
