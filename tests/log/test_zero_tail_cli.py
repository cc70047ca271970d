"""A recorder's log whose tail its journal acknowledged, through the real CLI: `verify`,
`repair --dry-run` and `repair` agree that nothing is to be cut (the dry run said "would cut"
while the repair refused; `verify` advised `repair`)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.log.power_lost import _recorded_then_power_lost

EXE = shutil.which("buraco-log")


@pytest.mark.skipif(EXE is None, reason="the buraco-log command is not installed")
def test_verify_and_repair_agree_nothing_is_cut_from_an_acknowledged_zero_tail(
        tmp_path: Path) -> None:
    assert EXE is not None
    path, zeros, _ = _recorded_then_power_lost(tmp_path)
    before = path.read_bytes()
    runs = {name: subprocess.run([EXE, *args, str(path)], capture_output=True, text=True)
            for name, args in [("verify", ["verify"]), ("dry", ["repair", "--dry-run"]),
                               ("repair", ["repair"]),
                               ("json", ["repair", "--dry-run", "-f", "json"])]}
    for name, r in runs.items():
        assert r.returncode == 1, (name, r.stderr)
        lines = r.stderr.splitlines()
        assert len(lines) == 1 and f"byte {zeros}" in lines[0], (name, lines)
        assert "recorder's journal" in lines[0] and "would cut" not in lines[0], (name, lines)
        assert "`buraco-log repair` cuts it off" not in lines[0], (name, lines)
    assert "nothing was cut" in runs["dry"].stderr
    error = json.loads(runs["json"].stdout)["error"]
    assert (error["kind"], error["exit_status"]) == ("locked", 1), error
    assert path.read_bytes() == before and not list(tmp_path.glob("a.blog.bak*"))
