"""Fault probes of a referee's commands (round 48): `explain` of a log torn at its first event's
record said "the events before it are intact (`buraco-log repair` cuts it off)", where none is
and `repair` refuses without --force (and, read anyway, "a match not started", exit 2, where
`audit` finds the tear); `audit -q` of a batch whose worker died on a log found
OK then hid that verdict while the last line said "see its verdict". Real files, real worker
processes killed for real."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from buraco_log import log

ROOT = Path(__file__).resolve().parents[2]
SIM = ROOT / "examples" / "sim"


def cli(*args: object) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="200", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "cli", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)


def _three_segments(path: Path) -> list[int]:
    """A log of a simulated match's first three events, one segment each (fsynced); the
    file's size after each."""
    events = log.read_events(sorted(SIM.glob("*.blog"))[0])[:3]
    sizes = []
    with log.Writer(path, sealed=False) as w:
        for event in events:
            w.append(event)
            sizes.append(path.stat().st_size)
    return sizes


def test_explain_of_a_log_torn_at_its_first_event_says_no_event_is_intact(
        tmp_path: Path) -> None:
    first = tmp_path / "first.blog"
    sizes = _three_segments(first)
    later = tmp_path / "later.blog"
    shutil.copyfile(first, later)
    with open(first, "r+b") as f:  # the first event's segment cut short
        f.truncate(sizes[0] - 5)
    with open(later, "r+b") as f:  # the third's: two events are intact
        f.truncate(sizes[2] - 5)

    run = cli("explain", first, "--at", "0")
    assert run.returncode == 1 and run.stdout == "", run
    (line,) = run.stderr.splitlines()
    assert "seq 0: torn tail" in line and "[log.torn]" in line, line
    assert "the events before it are intact" not in line, line
    assert ("no event before it is intact (`buraco-log repair --force` cuts it off, leaving a "
            "log of no events)") in line, line

    # read anyway: no match not started (`audit` finds the tear), so a finding (1), not the
    # usage error of a log with no events yet (2)
    for argv in (["explain", first, "--at", "0"], ["replay", first]):
        run = cli(*argv, "--ignore-integrity")
        assert run.returncode == 1 and "[log.torn]" in run.stderr, (argv, run)
        assert "[log.empty]" not in run.stderr and "not started" not in run.stderr, run.stderr

    run = cli("explain", later, "--at", "0")  # events before the tear: said as before
    assert run.returncode == 1, run
    assert ("seq 2: torn tail" in run.stderr and "the events before it are intact (`buraco-log "
            "repair` cuts it off)" in run.stderr), run.stderr


KILL_ONCE = """
import importlib, os, signal, sys
mod = importlib.import_module("buraco_log.audit")
main, real, once = os.getpid(), mod.audit_log, sys.argv.pop(1)
def audit_log(path, **kw):
    if "killer" in os.path.basename(path) and os.getpid() != main and os.path.exists(once):
        os.unlink(once)
        os.kill(os.getpid(), signal.SIGKILL)
    return real(path, **kw)
mod.audit_log = audit_log
sys.argv = ["buraco-log", *sys.argv[1:]]
from cli.main import run
run()
"""


@pytest.mark.skipif(multiprocessing.get_start_method() != "fork",
                    reason="the patched checker reaches the workers by fork")
def test_audit_quiet_says_a_log_audited_again_was_found_ok_not_see_its_verdict(
        tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    src = sorted(SIM.glob("*.blog"))[:7]
    for i, p in enumerate(src):
        shutil.copyfile(p, folder / f"{i:02d}-{p.name}")
    killer = folder / "03-killer.blog"
    shutil.copyfile(src[0], killer)
    once = tmp_path / "once"

    def audit(*args: str) -> subprocess.CompletedProcess[str]:
        once.touch()
        run = subprocess.run([sys.executable, "-c", KILL_ONCE, once, "audit", folder,
                              "-j", "2", *args], cwd=ROOT, capture_output=True, text=True,
                             timeout=120)
        assert not once.exists(), run  # the worker was killed on it, once
        assert run.returncode == 1, run
        return run

    quiet = audit("-q")
    (line,) = quiet.stderr.splitlines()
    assert f"{killer}: OK" not in quiet.stdout  # -q leaves it out: the line must not send there
    assert "see its verdict" not in line and "every log has its verdict above" not in line, line
    assert line.endswith("; the batch went on: every log has its verdict, counted in the "
                         "summary above (--quiet shows only those with findings); each log a "
                         "worker died on was audited again alone, and found OK"), line
    loud = audit()
    (line,) = loud.stderr.splitlines()
    assert f"{killer}: OK" in loud.stdout and "audited again, alone" in loud.stdout
    assert line.endswith("every log has its verdict above (each log a worker died on was "
                         "audited again alone: see its verdict)"), line


def test_audit_quiet_names_which_logs_audited_again_show_a_verdict_and_which_were_ok() -> None:
    """Two logs a worker died on, one found OK (left out by -q), one with findings (shown)."""
    from cli.dispute_cmd import _deaths_line

    line = _deaths_line([("a.blog", -9), ("b.blog", -9)], {"a.blog": "OK", "c.blog": "OK"})
    assert line.endswith("; each log a worker died on was audited again alone: see the verdict "
                         "of b.blog; a.blog was found OK"), line
    assert "see its verdict" not in line
