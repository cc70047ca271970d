"""buraco-log in a subprocess with a timeout, and the check of a one-line error: the one runner of
the command-line probes. tests/cli/outputs.py starts the installed script (cli.entry), and
tests/log/cli_run.py this checkout's ``python -m cli.main``."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXE = shutil.which("buraco-log")


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


def sigint_default() -> None:
    """A ``preexec_fn`` for a command a test stops with SIGINT, as a terminal's Ctrl-C would.
    A run of the tests started in the background of a shell (``pytest ... &``) ignores SIGINT,
    and a Python that inherits it ignored keeps it ignored (as it should: that is how a shell
    keeps Ctrl-C from its background jobs), so the command ran on, or ended 0, without a
    word: the signal the test sends must not depend on how the tests were started."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _command(args: Sequence[object], checkout: bool) -> list[str]:
    if checkout:
        return [sys.executable, "-m", "cli.main", *(str(a) for a in args)]
    assert EXE is not None
    return [EXE, *(str(a) for a in args)]


def _environ(env: dict[str, str] | None, checkout: bool) -> dict[str, str]:
    if checkout:
        return dict(os.environ, COLUMNS="200", PYTHONPATH=str(REPO), **(env or {}))
    return dict(os.environ, COLUMNS="200", **(env or {}))


def run(*args: object, stdin: bytes = b"", timeout: float = 60, cwd: Path | None = None,
        env: dict[str, str] | None = None, fsize: int | None = None,
        checkout: bool = False) -> Result:
    """``buraco-log ARGS`` in a subprocess (``checkout``: this checkout's cli.main, not the
    installed script); a run past ``timeout`` seconds is killed and returns code None, so a
    hang fails the test instead of blocking the run. ``fsize``: no file the command writes can
    grow past this many bytes."""
    try:
        p = subprocess.run(_command(args, checkout), input=stdin, capture_output=True,
                           timeout=timeout, cwd=cwd, env=_environ(env, checkout),
                           preexec_fn=None if fsize is None else _file_size_limit(fsize))
    except subprocess.TimeoutExpired as exc:
        return Result(None, (exc.stdout or b"").decode("utf-8", "replace"),
                      (exc.stderr or b"").decode("utf-8", "replace"))
    return Result(p.returncode, p.stdout.decode("utf-8", "replace"),
                  p.stderr.decode("utf-8", "replace"))


def run_all(*argvs: Sequence[object], timeout: float = 60, cwd: Path | None = None,
            checkout: bool = False) -> list[Result]:
    """:func:`run` of each ``buraco-log ARGS``, all started at once (one after another, a
    test of several independent runs waited out each start)."""
    environ = _environ(None, checkout)
    procs = [subprocess.Popen(_command(args, checkout), stdin=subprocess.PIPE,
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
