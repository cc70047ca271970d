"""Fault probes, a committed Parquet file whose footer reads but whose pages are damaged: the
query or report that meets them names that file in its one line (DuckDB's own error, such as
"don't know what type" or "Payload value bigger than allowed. Corrupted file?", names none)."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from buraco_log.archive import store
from tests.archive.conftest import Archived

ROOT = Path(__file__).resolve().parents[2]


def damage_pages(path: Path) -> None:
    """Flip bits all over the data pages, leaving the footer (and the magic) intact."""
    data = bytearray(path.read_bytes())
    footer = struct.unpack("<I", data[-8:-4])[0]
    for i in range(4, len(data) - 8 - footer, 97):
        data[i] ^= 0x5A
    os.chmod(path, 0o644)
    path.write_bytes(bytes(data))


@pytest.fixture
def damaged(archived: Archived, tmp_path: Path) -> tuple[Path, Path]:
    arch = tmp_path / "a"
    shutil.copytree(archived.path, arch)
    record = next((arch / store.BATCHES).glob("*.json"))
    part = arch / json.loads(record.read_text())["files"]["hands"][0]
    damage_pages(part)
    return arch, part


@pytest.mark.parametrize("args", [["query", "{a}", "SELECT * FROM hands", "-f", "csv"],
                                  ["report", "{a}"]], ids=["query", "report"])
def test_a_file_with_damaged_pages_is_named(damaged: tuple[Path, Path],
                                            args: list[str]) -> None:
    arch, part = damaged
    r = subprocess.run([sys.executable, "-m", "cli.main", *(a.format(a=arch) for a in args)],
                       cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-800:]
    assert r.stderr.startswith("buraco-log: error: ") and r.stderr.count("\n") == 1, r.stderr
    assert str(part) in r.stderr, r.stderr
