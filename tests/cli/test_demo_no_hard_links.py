"""`demo` on a file system without hard links (FAT, exFAT, some network ones) puts its log in
place by a rename that never replaces a file, as `convert` does (it failed "Operation not
permitted"); where neither is made, one line and nothing written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from buraco_log import log
from tests.log.power_lost import _NO_LINKS_CLI

ROOT = Path(__file__).resolve().parents[2]


def test_demo_without_hard_links(tmp_path: Path) -> None:
    def run(mode: str, out: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", _NO_LINKS_CLI, mode, "demo", "--rules",
                               "classic", "--players", "2", "-o", str(out)], cwd=ROOT,
                              capture_output=True, text=True, timeout=120, check=False,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))

    done = run("rename", tmp_path / "a.blog")
    assert done.returncode == 0, done.stderr
    assert len(log.read_events(tmp_path / "a.blog")) > 10
    done = run("none", tmp_path / "b.blog")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and str(tmp_path / "b.blog") in lines[0], lines
    assert "makes no hard link" in lines[0], lines
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.blog"]  # nothing else left
