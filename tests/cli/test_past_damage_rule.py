"""A seq past the events read from a damaged log names the damage's rule as `verify` names it:
a JSON Lines log cut mid-line is `[log.torn]` (it was `[log.jsonl]`) in `verify`, `show` and
`audit`, and was `[log.damage]` ("a checksum does not match") past it in `replay`, `moves` and
`explain`."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from buraco_log import jsonl

EXE = shutil.which("buraco-log")
SOURCE = Path(__file__).resolve().parents[2] / "examples" / "disputes" / "fair-thirteen.log"


@pytest.mark.skipif(EXE is None, reason="the buraco-log command is not installed")
def test_past_the_damage_of_a_cut_json_lines_log_is_named_as_verify_names_it(
        tmp_path: Path) -> None:
    assert EXE is not None
    whole = tmp_path / "whole.jsonl"
    jsonl.binary_to_jsonl(SOURCE, whole)
    data = whole.read_bytes()
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(data[:len(data) // 2])  # in the middle of a line

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([EXE, *args], capture_output=True, text=True)

    verify = run("verify", str(cut))
    assert verify.returncode == 1 and verify.stderr.rstrip().endswith("[log.torn]"), verify
    for args in (["replay", str(cut), "--ignore-integrity", "--at", "9999"],
                 ["moves", str(cut), "--ignore-integrity", "--at", "9999"],
                 ["explain", str(cut), "--ignore-integrity", "--at", "9999"]):
        r = run(*args)
        assert r.returncode == 1, (args, r.stderr)
        line = r.stderr.splitlines()[0]
        assert "past the events read from the damaged log" in line, (args, line)
        assert "[log.torn]" in line and "[log.damage]" not in line, (args, line)
    as_json = run("replay", str(cut), "--ignore-integrity", "--at", "9999", "-f", "json")
    assert json.loads(as_json.stdout)["error"]["rule"] == "log.torn", as_json.stdout
