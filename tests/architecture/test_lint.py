"""The house style holds: ruff over the tree, mypy --strict over the library, the CLI, the
benchmarks and the examples."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, check=False)


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed")
def test_ruff_finds_nothing() -> None:
    out = _run("ruff", "check", ".")
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_strict_passes_on_the_library_and_the_cli() -> None:
    pytest.importorskip("mypy")
    out = _run("mypy", "buraco_log", "cli", "benchmarks", "examples")
    assert out.returncode == 0, out.stdout + out.stderr
