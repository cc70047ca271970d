"""An archive of a layout version this buraco_log does not read, older or newer, exits 2 in
every command, as a log of a newer format version does: it cannot be read at all, which is
not a finding about it (it exited 1, the status of a finding, where `report` of a folder that
is no archive exited 2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.command_line import assert_error, run_all

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "examples" / "sim" / "classic-2p-000000.blog"


@pytest.mark.parametrize("version", [pytest.param(1, marks=pytest.mark.slow), 3])
def test_an_archive_of_another_layout_version_exits_2_in_every_command(
        version: int, tmp_path: Path) -> None:
    arch = tmp_path / "arch"
    arch.mkdir()
    (arch / "archive.json").write_text(json.dumps({"format": "buraco_log archive",
                                                   "version": version}))
    log = tmp_path / "m.blog"
    shutil.copyfile(GOLDEN, log)
    results = run_all(["query", arch, "SELECT 1"], ["report", arch], ["verify", arch],
                      ["compact", arch], ["ingest", log, "--archive", arch], timeout=120)
    for r in results:
        assert_error(r, 2, f"archive layout version {version}, this buraco_log reads version 2",
                     "[archive.layout]")
    assert sorted(p.name for p in arch.iterdir()) == ["archive.json"]  # nothing changed
