"""Fault probes, archive: a signal as `report` and `query` put their `--output` in place.

The line a signal gives says what it left of the output. A SIGTERM that came just after the
report's file was renamed into place said "nothing was written to FILE", FILE written whole
(18 of 80 runs sent 0-20 ms after the rename); sent into a FIFO, the output was written as it
came, and may be cut short."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.command_line import sigint_default

ROOT = Path(__file__).resolve().parents[2]

# The signal sent from the audit hook of an `open`: of the output's temporary file
# (`.NAME.PID.tmp`: before the output is whole), or of its directory once the output is in
# place (to flush the rename to disk: after it). Its handler's KeyboardInterrupt is raised
# in the hook, and fails that open.
AT = """
import os, sys
signum, when, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
sent = []
def hook(event, args):
    if event != "open" or sent or not isinstance(args[0], str):
        return
    name = os.path.basename(args[0])
    if (name.startswith("." + os.path.basename(out)) if when == "before" else
            args[0] == os.path.dirname(out) and os.path.exists(out)):
        sent.append(1)
        os.kill(os.getpid(), signum)
sys.addaudithook(hook)
sys.argv = ["buraco-log", *sys.argv[4:]]
from cli.entry import run
run()
"""


def _signalled(signum: int, when: str, out: Path, *args: str
               ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", AT, str(int(signum)), when, str(out), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          preexec_fn=sigint_default)


@pytest.mark.parametrize("signum,how,status", [
    (signal.SIGTERM, "terminated (SIGTERM)", 143),
    pytest.param(signal.SIGINT, "interrupted", 130, marks=pytest.mark.slow)])
def test_a_signal_just_after_the_report_is_in_place_says_it_is_whole(
        three: Path, tmp_path: Path, signum: int, how: str, status: int) -> None:
    out = tmp_path / "r.txt"
    r = _signalled(signum, "after", out, "report", str(three), "--output", str(out))
    assert r.returncode == status, r.stderr
    assert r.stderr == f"buraco-log: error: report: {how} after {out} was written whole\n"
    assert "leaderboard" in out.read_text().lower()
    assert [p.name for p in tmp_path.iterdir()] == ["r.txt"]  # no temporary left


def test_a_signal_just_after_a_query_result_is_in_place_says_it_is_whole(
        three: Path, tmp_path: Path) -> None:
    out = tmp_path / "q.csv"
    r = _signalled(signal.SIGTERM, "after", out, "query", str(three),
                       "SELECT count(*) AS n FROM matches", "-f", "csv", "-o", str(out))
    assert r.returncode == 143, r.stderr
    assert r.stderr == f"buraco-log: error: query: terminated (SIGTERM) after {out} was " \
                       "written whole\n"
    assert out.read_text() == "n\n3\n"


def test_a_signal_before_the_rename_still_writes_nothing(three: Path, tmp_path: Path) -> None:
    """The twin: the same signal before the file is whole leaves nothing, and says so."""
    out = tmp_path / "r.txt"
    r = _signalled(signal.SIGTERM, "before", out, "report", str(three), "--output", str(out))
    assert r.returncode == 143, r.stderr
    assert r.stderr == (f"buraco-log: error: report: terminated (SIGTERM); nothing was "
                        f"written to {out}\n")
    assert list(tmp_path.iterdir()) == []


def test_a_signal_between_the_rename_and_its_record_is_said_as_after(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The narrowest moment: the rename done, the interrupt raised before the next line."""
    from cli import archive_cmd

    real = os.replace

    def replace_then_interrupt(src: str, dst: str) -> None:
        real(src, dst)
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", replace_then_interrupt)
    out = tmp_path / "r.txt"
    with pytest.raises(KeyboardInterrupt), archive_cmd._opened(out, "w") as f:
        f.write("whole\n")
    assert out.read_text() == "whole\n"
    assert archive_cmd._left_by_signal(out) == f" after {out} was written whole"
    other = tmp_path / "s.txt"
    assert archive_cmd._left_by_signal(other) == f"; nothing was written to {other}"
