"""Fault probes 41, the referee's side: the integrity line names the rule as the finding does.

Before: `audit` and `show` said a broken log was `BROKEN at record 0, byte 20, seq 0 [damage]`,
while the JSON finding and `buraco-log rules` call it `log.damage`; a torn tail said neither its
seq nor its rule (`torn tail at byte 20 (record 0): segment payload cut short`). Every
integrity finding now says the seq and the rule id, in one line, as the other sections do.
"""

from __future__ import annotations

import json
from pathlib import Path

from buraco_log import log
from tests.cli.probes import cli
from tests.recorder.sources import matches


def _logs(tmp_path: Path) -> dict[str, Path]:
    """A whole log, one cut short and one with a byte changed (one segment per event)."""
    whole = tmp_path / "whole.blog"
    with log.Writer(whole) as writer:
        for event in matches()[0][:20]:
            writer.append(event)
    data = whole.read_bytes()
    torn, flipped = tmp_path / "torn.blog", tmp_path / "flip.blog"
    torn.write_bytes(data[:-9])
    changed = bytearray(data)
    changed[len(data) // 2] ^= 0x40
    flipped.write_bytes(bytes(changed))
    return {"torn": torn, "damage": flipped}


def test_each_integrity_finding_names_its_seq_and_rule_as_the_json_does(tmp_path: Path) -> None:
    for kind, path in _logs(tmp_path).items():
        done = cli("audit", path)
        assert done.returncode == 1, done.stderr
        heading, *rest = done.stdout.splitlines()
        assert heading.startswith(f"{path}: FINDINGS")
        line = next(x for x in rest if x.startswith("  integrity "))
        finding = json.loads(cli("audit", path, "-f", "json").stdout)["findings"][0]
        assert finding["rule"] == f"log.{kind}"
        assert f"seq {finding['seq']} [log.{kind}]: " in line, line
        assert f"byte {finding['offset']}" in line
        shown = cli("show", path)  # show's log line says it the same way
        assert shown.returncode == 1
        assert f"seq {finding['seq']} [log.{kind}]: " in shown.stdout
