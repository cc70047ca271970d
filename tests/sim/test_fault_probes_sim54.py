"""Fault probes of `simulate` and `demo` (round 54): Ctrl-C part-way, a full disk.

- Ctrl-C (a real SIGINT) part-way through `simulate` said "interrupted" alone: not which
  directory, nor that the logs finished stay whole. It now names the directory and how many
  finished logs stay; no temporary file is left and each log there is whole and sealed.
- Ctrl-C during `demo` said "interrupted" alone: whether a log was kept was not said.
- A full disk (ENOSPC put into the process's writes) part-way: one line naming the log, exit 1,
  the logs before it whole and sealed, nothing half-written under any name; a `view` page or
  a review written with -o leaves the file there as it was.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from buraco_log.log import verify
from tests.command_line import sigint_default

ROOT = Path(__file__).resolve().parents[2]
INJECT = Path(__file__).with_name("inject.py")
pytestmark = pytest.mark.slow  # each a real subprocess


def _run(fault: str, n: int, *args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(INJECT), fault, str(n), "--", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=120,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
                          preexec_fn=sigint_default)


def _whole_logs(folder: Path) -> list[str]:
    """The names in ``folder``, each checked a whole sealed log (nothing else may be there)."""
    names = sorted(os.listdir(folder))
    for name in names:
        assert name.endswith(".blog"), names  # no LOG.blog.tmp, no temporary folder
        assert verify(folder / name).sealed, name
    return names


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_in_simulate_names_the_directory_and_the_logs_that_stay(
        tmp_path: Path, jobs: str) -> None:
    # -j 1: the SIGINT comes as match 3 is encoded, its LOG.tmp open and empty
    done = _run("sigint-encode", 3, "simulate", "--matches", "400", "-j", jobs, "-o", "out",
                cwd=tmp_path)
    assert done.returncode == 130, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    names = _whole_logs(tmp_path / "out")
    assert names and len(names) < 400
    count = "1 finished log stays" if len(names) == 1 else f"{len(names)} finished logs stay"
    assert lines[0] == (f"buraco-log: error: out: interrupted while simulating 400 matches: "
                        f"{count}, each whole and sealed; unfinished ones were removed"), lines
    if jobs == "1":
        assert names == [f"classic-2p-00000{i}.blog" for i in range(3)]


def test_a_real_ctrl_c_from_outside_leaves_only_whole_sealed_logs(tmp_path: Path) -> None:
    p = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.argv[0] = 'buraco-log'; from cli.entry import "
         "run; run()", "simulate", "--matches", "5000", "-j", "2", "-o", "out"],
        cwd=tmp_path, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(os.listdir(tmp_path / "out")
                                              if (tmp_path / "out").is_dir() else ()) < 4:
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    names = _whole_logs(tmp_path / "out")
    assert err.count("\n") == 1 and f"{len(names)} finished logs stay" in err, err


@pytest.mark.parametrize(("fault", "said", "kept"), [
    ("sigint-simulate", "interrupted before the log was written: no log was kept", False),
    ("sigint-audit", "interrupted after the log was written whole: it is kept; the replay and "
                     "audit did not finish", True)])
def test_ctrl_c_in_demo_says_whether_the_log_was_kept(
        tmp_path: Path, fault: str, said: str, kept: bool) -> None:
    done = _run(fault, 0, "demo", "--rules", "classic", "--players", "2", "-o", "d.blog",
                cwd=tmp_path)
    assert done.returncode == 130, done.stderr
    assert done.stderr == f"buraco-log: error: d.blog: {said}\n", done.stderr
    assert _whole_logs(tmp_path) == (["d.blog"] if kept else [])


@pytest.mark.parametrize("budget", [0, 50, 40_000])
def test_simulate_on_a_full_disk_is_one_line_and_leaves_whole_logs(
        tmp_path: Path, budget: int) -> None:
    done = _run("full", budget, "simulate", "--matches", "20", "-j", "1", "-o", "out",
                cwd=tmp_path)  # one process: its disk fills for the next match
    assert done.returncode == 1, done.stderr
    names = _whole_logs(tmp_path / "out") if (tmp_path / "out").exists() else []
    assert done.stderr == (f"buraco-log: error: out/classic-2p-{len(names):06d}.blog: No space "
                           "left on device\n"), done.stderr
    assert (budget == 40_000) == bool(names)


@pytest.mark.parametrize("name", ["d.blog", "d.jsonl"])
def test_demo_on_a_full_disk_is_one_line_and_leaves_nothing(tmp_path: Path, name: str) -> None:
    done = _run("full", 3000, "demo", "--rules", "classic", "--players", "2", "-o", name,
                cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stderr == (f"buraco-log: error: {name}: writing the new file failed: No space "
                           "left on device\n"), done.stderr
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("command", [("view",), ("review", "--seat", "0", "--budget", "2x2"),
                                     ("review", "--seat", "0", "--budget", "2x2", "--format",
                                      "html")])
def test_a_page_or_review_on_a_full_disk_leaves_the_old_file(
        tmp_path: Path, command: tuple[str, ...]) -> None:
    (tmp_path / "p.html").write_text("old")
    done = _run("full", 1000, *command, ROOT / "examples" / "golden" / "classic.jsonl",
                "-o", "p.html", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stderr == "buraco-log: error: p.html: No space left on device\n", done.stderr
    assert os.listdir(tmp_path) == ["p.html"] and (tmp_path / "p.html").read_text() == "old"


def test_an_output_directory_under_a_file_is_named_so(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    done = _run("none", 0, "simulate", "-o", "afile/sub/logs", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr == ("buraco-log: error: afile/sub/logs: afile is a file, not a "
                           "directory\n"), done.stderr  # it said "afile/sub: Not a directory"
