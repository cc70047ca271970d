"""The installed buraco-log in a subprocess with a timeout, the example logs it reads, and the
check of a one-line error: the output and input probes' shared runner."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

EXE = shutil.which("buraco-log")


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GOOD = EXAMPLES / "sim" / "classic-2p-000000.blog"
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
    """``buraco-log ARGS`` in a subprocess; a run past ``timeout`` seconds is killed and
    returns code None, so a hang fails the test instead of blocking the run."""
    assert EXE is not None
    environ = dict(os.environ, COLUMNS="200", **(env or {}))
    try:
        p = subprocess.run([EXE, *(str(a) for a in args)], input=stdin, capture_output=True,
                           timeout=timeout, cwd=cwd, env=environ)
    except subprocess.TimeoutExpired as exc:
        return Result(None, (exc.stdout or b"").decode("utf-8", "replace"),
                      (exc.stderr or b"").decode("utf-8", "replace"))
    return Result(p.returncode, p.stdout.decode("utf-8", "replace"),
                  p.stderr.decode("utf-8", "replace"))


def run_all(*argvs: Sequence[object], timeout: float = 60, cwd: Path | None = None) -> list[Result]:
    """:func:`run` of each ``buraco-log ARGS``, all started at once (one after another, a
    test of several independent runs waited out each start)."""
    assert EXE is not None
    environ = dict(os.environ, COLUMNS="200")
    procs = [subprocess.Popen([EXE, *(str(a) for a in args)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
                              env=environ) for args in argvs]
    done = []
    for p in procs:
        try:
            out, err = p.communicate(b"", timeout=timeout)  # stdin as run() gives it
            code: int | None = p.returncode
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            code = None
        done.append(Result(code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")))
    return done


def assert_error(r: Result, code: int, *needles: str, json_out: bool = False) -> str:
    """Exit ``code``, one stderr line starting ``buraco-log:`` holding every needle, no
    traceback, and stdout empty (or one JSON error object with ``json_out``)."""
    assert r.code is not None, f"hung: {r.err[-400:]}"
    assert "Traceback" not in r.err + r.out, r.err[-800:]
    assert r.code == code, r
    if json_out:
        assert r.out.lstrip().startswith('{\n  "error"'), r.out[:300]
    else:
        assert r.out == "", r.out[:300]
    assert len(r.lines) == 1, r.lines[:5]
    line = r.lines[0]
    assert line.startswith("buraco-log: "), line
    for needle in needles:
        assert needle in line, (needle, line)
    return line


def copy(src: Path, folder: Path, name: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(src, folder / (name or src.name)))
