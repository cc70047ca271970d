"""Fault probes of the log commands, round 34: a program that ignores the log's lock changes the
log while ``seal`` or ``repair`` rewrites it. Nothing it wrote may be lost, and the command says
so in one line instead of reporting success."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "examples" / "format" / "v2-unsealed.blog"

# Runs the CLI with a hook at one of the log's named points that does what a program ignoring
# the lock would: append bytes, or rename another file into the log's place.
BEHIND_THE_LOCK = """
import os, runpy, sys
from buraco_log import log
point, action, target = sys.argv[1:4]
def hook(name):
    if name != point:
        return
    if action == "append":
        with open(target, "ab") as f:
            f.write(b"APPENDED-BEHIND-THE-LOCK")
    elif action == "replace":
        with open(target + ".other", "wb") as f:
            f.write(b"ANOTHER FILE")
        os.replace(target + ".other", target)
log._hook = hook
sys.argv = ["buraco-log", *sys.argv[4:]]
runpy.run_module("cli", run_name="__main__")
"""


def _run(point: str, action: str, log_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BEHIND_THE_LOCK, point, action, str(log_path), *args],
        cwd=ROOT, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def _one_error_line(done: subprocess.CompletedProcess[str], path: Path) -> str:
    assert done.returncode not in (0, None), done.stdout
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert str(path) in lines[0]
    return lines[0]


def _leftovers(directory: Path, log_name: str) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name != log_name)


@pytest.mark.parametrize("action", ["append", "replace"])
def test_seal_refuses_when_the_log_changes_behind_its_lock_and_loses_nothing(
    tmp_path: Path, action: str
) -> None:
    path = tmp_path / "m.blog"
    shutil.copy(GOLDEN, path)
    done = _run("seal.before-rename", action, path, "seal", str(path))
    line = _one_error_line(done, path)
    assert "changed while it was being sealed" in line and "lock" in line
    data = path.read_bytes()
    if action == "append":  # the log as the other program left it: its bytes are all there
        assert data == GOLDEN.read_bytes() + b"APPENDED-BEHIND-THE-LOCK"
    else:  # the file renamed into place was not replaced by a sealed copy of the old one
        assert data == b"ANOTHER FILE"
    assert _leftovers(tmp_path, "m.blog") == []  # no sealed copy left beside it


def test_seal_with_nothing_behind_its_lock_seals_as_before(tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    shutil.copy(GOLDEN, path)
    done = _run("seal.before-rename", "none", path, "seal", str(path))
    assert done.returncode == 0, done.stderr
    verified = subprocess.run([sys.executable, "-m", "cli", "verify", str(path)], cwd=ROOT,
                              capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
    assert verified.returncode == 0 and ", sealed," in verified.stdout
    assert "be4d986879ff9945bbf1df2eabc490ff358a84fc9a2d031a5b3eaa1927adaf36" in verified.stdout


@pytest.mark.parametrize("action", ["append", "replace"])
def test_repair_refuses_when_the_log_changes_behind_its_lock_and_cuts_nothing(
    tmp_path: Path, action: str
) -> None:
    path = tmp_path / "m.blog"
    torn = GOLDEN.read_bytes() + b"\x01\x02\x03"  # a header cut short: a torn tail
    path.write_bytes(torn)
    done = _run("repair.before-truncate", action, path, "repair", str(path))
    line = _one_error_line(done, path)
    assert "changed while it was being repaired" in line
    if action == "append":  # neither cut nor only half kept in a backup
        assert path.read_bytes() == torn + b"APPENDED-BEHIND-THE-LOCK"
    else:
        assert path.read_bytes() == b"ANOTHER FILE"
    assert _leftovers(tmp_path, "m.blog") == []  # the backup of a cut not made is removed


def test_repair_with_nothing_behind_its_lock_cuts_the_tail_as_before(tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    path.write_bytes(GOLDEN.read_bytes() + b"\x01\x02\x03")
    done = _run("repair.before-truncate", "none", path, "repair", str(path))
    assert done.returncode == 0, done.stderr
    assert path.read_bytes() == GOLDEN.read_bytes()
    assert (tmp_path / "m.blog.bak").read_bytes() == b"\x01\x02\x03"
    assert sorted(os.listdir(tmp_path)) == ["m.blog", "m.blog.bak"]
