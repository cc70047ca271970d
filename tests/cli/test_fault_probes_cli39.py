"""CLI fault probes, round 39: an output whose directory part is not a directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.probes import one_error_line


def _demo(out: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli", "demo", "-o", str(out)],
                          capture_output=True, text=True, cwd=cwd, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(Path(__file__).parents[2])))


@pytest.mark.parametrize(("make", "says"), [
    (lambda p: p.write_text("x"), "is a file, not a directory"),
    (lambda p: os.mkfifo(p), "is a FIFO, not a directory"),
    (lambda p: os.symlink(p.parent / "gone", p), "is a symbolic link to"),
    (lambda p: None, "no such directory"),
])
def test_demo_names_why_its_output_has_no_directory(tmp_path: Path, make: object,
                                                    says: str) -> None:
    parent = tmp_path / "parent"
    make(parent)  # type: ignore[operator]
    before = sorted(os.listdir(tmp_path))
    line = one_error_line(_demo(parent / "x.blog", tmp_path), 2)
    # it said "no directory parent" of a file that was there, as if it were missing
    assert f"{parent}/x.blog: " in line and says in line, line
    assert sorted(os.listdir(tmp_path)) == before
