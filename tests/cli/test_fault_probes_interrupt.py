"""Fault probes, SIGINT during a long command that runs worker processes: exit 130, one line,
no traceback, no worker left running, nothing half-written. Both a terminal's Ctrl-C (the
signal to the whole process group) and a SIGINT to the main process alone (``kill -INT``)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli.outputs import EXE, GOOD_JSONL

pytestmark = pytest.mark.skipif(EXE is None, reason="buraco-log is not installed")


def _sigint_default() -> None:
    """A terminal's Ctrl-C reaches a command that takes SIGINT. A run of the tests started in
    the background of a shell (``.ci/run &``) ignores SIGINT, and so would the command (a
    Python that inherits SIGINT ignored keeps it ignored): the signal the test sends must not
    depend on how the tests were started."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt(args: list[str], *, group: bool, after: float = 2.0) -> tuple[int | None, str]:
    """Start ``buraco-log ARGS`` in a session of its own, SIGINT it after ``after`` seconds and
    wait at most 15 s for it and every process holding its output pipes to end. Returns the
    exit status (None: it did not end) and stderr; whatever is left is killed."""
    assert EXE is not None
    p = subprocess.Popen([EXE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, start_new_session=True,
                         preexec_fn=_sigint_default)
    try:
        time.sleep(after)
        if group:
            os.killpg(p.pid, signal.SIGINT)
        else:
            p.send_signal(signal.SIGINT)
        try:
            # communicate ends only when every holder of the pipes (workers too) has exited
            _, err = p.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            return None, ""
        return p.returncode, err.decode("utf-8", "replace")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def assert_interrupted(code: int | None, err: str,
                       said: str = "buraco-log: error: interrupted") -> None:
    assert code is not None, "still running (or its workers are) 15 s after SIGINT"
    assert "Traceback" not in err, err[-1000:]
    assert code == 130, (code, err[-400:])
    assert err.splitlines() == [said], err[-400:]


@pytest.mark.parametrize("group", [True, False], ids=["ctrl-c", "kill-int"])
def test_review_with_workers_stops_on_sigint(tmp_path: Path, group: bool) -> None:
    out = tmp_path / "review.json"
    code, err = interrupt(["review", GOOD_JSONL, "--seat", "0", "--budget", "300x30r0",
                           "-j", "2", "-f", "json", "-o", out], group=group)
    assert_interrupted(code, err, f"buraco-log: error: {GOOD_JSONL}: interrupted during the "
                       "search: no review was written")
    assert list(tmp_path.iterdir()) == [], "an output or a temporary file was left"


@pytest.mark.parametrize("group", [True, False], ids=["ctrl-c", "kill-int"])
def test_simulate_with_workers_stops_on_sigint(tmp_path: Path, group: bool) -> None:
    out = tmp_path / "sim"
    code, err = interrupt(["simulate", "--matches", "3000", "--rules", "mega", "--players",
                           "4", "-j", "2", "--no-progress", "-o", out], group=group)
    said = f"buraco-log: error: {out}: interrupted while simulating 3,000 matches: "
    assert_interrupted(code, err, err.splitlines()[0] if err.startswith(said) else said)
    names = [p.name for p in out.iterdir()] if out.exists() else []
    assert all(n.endswith(".blog") and not n.startswith(".") for n in names), names
    assert len(names) < 3000, "the run went on to the end after the interrupt"
    if names:  # the logs that were finished are whole
        assert EXE is not None
        last = sorted(names)[-1]
        r = subprocess.run([EXE, "verify", out / last], capture_output=True, timeout=30)
        assert r.returncode == 0, r.stderr
