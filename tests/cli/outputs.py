"""The installed buraco-log in a subprocess with a timeout, the example logs it reads, and the
check of a one-line error: the output and input probes' shared runner (tests/command_line.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.command_line import EXE as EXE
from tests.command_line import Result as Result
from tests.command_line import assert_error as assert_error
from tests.command_line import run as run
from tests.command_line import run_all as run_all

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GOOD = EXAMPLES / "sim" / "classic-2p-000000.blog"
GOOD_JSONL = EXAMPLES / "golden" / "classic.jsonl"


def copy(src: Path, folder: Path, name: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(src, folder / (name or src.name)))
