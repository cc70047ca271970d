"""Fault probes, `ingest`, `query` and `report` with `-f json` refused before they start (a
source or archive that does not exist, no archive named, a bad limit): stdout holds the
error object beside the one line on stderr (docs/cli.md, Conventions)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("args", [
    ["ingest", "no-such-logs", "--archive", "{tmp}/a"],
    ["query", "{tmp}/no-such-archive", "SELECT 1"],
    ["report", "{tmp}/no-such-archive"],
    ["report"],
    ["query", "{tmp}", "SELECT 1", "--memory-limit", "lots"],
], ids=["ingest-source", "query-archive", "report-archive", "report-none", "query-limit"])
def test_a_usage_error_with_json_output_gives_the_error_object(args: list[str],
                                                                tmp_path: Path) -> None:
    """Before: stdout was empty."""
    env = {k: v for k, v in os.environ.items() if k != "BURACO_LOG_ARCHIVE"}
    r = subprocess.run([sys.executable, "-m", "cli.main",
                        *(a.format(tmp=tmp_path) for a in args), "-f", "json"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120, check=False,
                       stdin=subprocess.DEVNULL, env=env)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    error = json.loads(r.stdout)["error"]
    assert (error["code"], error["exit_status"]) == ("usage", 2)
    assert error["message"] in r.stderr
    assert not (tmp_path / "a").exists()
