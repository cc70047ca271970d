"""Fault probes of the archive's commands, round 45 (b).

`ingest`, `compact` and `verify` drew no bar on a dumb terminal (TERM=dumb) yet left an empty
line ("\\r\\n") on it, as `audit`, `review` and `simulate` did; `query -o` and `report -o`
with a name of 251-255 bytes failed "File name too long" (their temporary beside it held the
whole name and more).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.cli.terminal import _stderr_on_a_terminal

ROOT = Path(__file__).resolve().parents[2]
SIM = ROOT / "examples" / "sim"


def test_no_progress_bar_or_empty_line_on_a_dumb_terminal(tmp_path: Path) -> None:
    (ingest, out, shown), = _stderr_on_a_terminal(
        [["ingest", SIM, "--archive", "arch", "-j", 1]], tmp_path, "dumb")
    assert ingest == 0 and out, out
    assert shown == b"", shown  # was b"\r\n"
    for status, _out, shown in _stderr_on_a_terminal([["compact", "arch"], ["verify", "arch"]],
                                                     tmp_path, "dumb"):
        assert status == 0 and shown == b"", shown


def test_query_and_report_write_an_output_named_with_up_to_255_bytes(tmp_path: Path) -> None:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "-m", "cli", "ingest", str(SIM), "--archive", "arch",
                    "-j", "1"], cwd=tmp_path, env=env, check=True, capture_output=True)
    query, report = "q" * 251 + ".csv", "r" * 250 + ".json"
    for args, name in ((["query", "arch", "SELECT 1 AS one", "-o", query], query),
                       (["report", "arch", "-f", "json", "-o", report], report)):
        done = subprocess.run([sys.executable, "-m", "cli", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr  # was 2: 'File name too long'
        assert (tmp_path / name).stat().st_size > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["arch", query, report])
