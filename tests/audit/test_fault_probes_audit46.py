"""A referee's disputes, round 46: what a damaged log read anyway is, told by a field and not
by its wording; what a batch audit says of receipts, renamed matches, deals and early copies.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import msgspec

from buraco_log import log
from buraco_log.forensic import read_anyway
from cli.dispute_cmd import damage_rule
from tests.signing.helpers import match

ROOT = Path(__file__).resolve().parents[2]


def _written(path: Path, batch: int = 10) -> Path:
    with log.Writer(path, batched=True, batch_events=batch) as w:
        for event in match():
            w.append(event)
    return path


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))


# -- the kind of damage is a field ------------------------------------------------------------


def test_a_torn_tail_and_a_damaged_record_are_told_apart_by_kind_not_by_the_failure_wording(
        tmp_path: Path) -> None:
    torn = _written(tmp_path / "torn.blog")
    os.truncate(torn, torn.stat().st_size - 7)
    damaged = _written(tmp_path / "damaged.blog")
    _flip(damaged, log.HEADER_SIZE + 60)  # inside the first record's payload
    cut, hurt = read_anyway(torn), read_anyway(damaged)
    assert (cut.kind, hurt.kind) == ("torn", "damage")
    assert read_anyway(_written(tmp_path / "whole.blog")).kind is None
    # The failure reworded (as a translation or a clearer message would): the rule stays.
    for salvage, rule in ((cut, "log.torn"), (hurt, "log.damage")):
        assert salvage.failure is not None
        reworded = msgspec.structs.replace(salvage, failure="cut: " + salvage.failure[::-1])
        assert damage_rule(reworded) == rule
        said_torn = msgspec.structs.replace(salvage, failure="torn tail, or so it says")
        assert damage_rule(said_torn) == rule


def test_replay_past_a_torn_tail_names_log_torn(tmp_path: Path) -> None:
    torn = _written(tmp_path / "torn.blog")
    os.truncate(torn, torn.stat().st_size - 7)
    r = subprocess.run([sys.executable, "-m", "cli.main", "replay", str(torn),
                        "--ignore-integrity", "--at", "100000"], cwd=ROOT, capture_output=True,
                       text=True, timeout=120, check=False, stdin=subprocess.DEVNULL)
    assert r.returncode == 1, r.stderr
    assert "[log.torn]" in r.stderr.splitlines()[-1]


