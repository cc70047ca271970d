"""Fault probes 39, the referee's commands: `diff` of copies whose signatures differ, and
`moves --at -1`.

Before: `diff` of two copies with the same events said only "the copies hold different signature
records", leaving the referee to find which head and which key; `moves --at -1` was accepted
(every other `--at` starts at 0) and its help did not say what -1 meant.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("cryptography")

from buraco_log import log
from buraco_log.events import AnyEvent
from buraco_log.signing.keys import Signer
from tests.cli.probes import one_error_line
from tests.signing.helpers import match

ROOT = Path(__file__).resolve().parents[2]
A, B = Signer.generate(), Signer.generate()


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL)


def _write(path: Path, events: list[AnyEvent], signer_of: dict[int, Signer]) -> Path:
    with log.Writer(path) as w:
        for event in events:
            w.append(event)
            if (signer := signer_of.get(event.seq)) is not None:
                w.flush()
                w.put_signature(signer.sign_head(events[0].match_id, event.seq,
                                                 bytes.fromhex(w.head)))
    return path


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("copies")
    events = match(key_id=A.key_id)
    every = {e.seq: A for e in events}
    return {
        "site": _write(d / "site.blog", events, every),
        # the same events, the records after seq 100 made by another key
        "spliced": _write(d / "spliced.blog", events,
                          {s: A if s <= 100 else B for s in every}),
        # the same events, the records after seq 40 and on stripped
        "stripped": _write(d / "stripped.blog", events, {s: A for s in every if s < 40}),
    }


def test_diff_names_the_first_head_whose_signature_is_by_another_key(
        copies: dict[str, Path]) -> None:
    r = _cli("diff", copies["site"], copies["spliced"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert (f"the signatures differ: the copies hold different signature records; first after "
            f"seq 101: A holds one by key {A.key_id}, B holds one by key {B.key_id}"
            in r.stdout), r.stdout
    d = json.loads(_cli("diff", copies["site"], copies["spliced"], "-f", "json").stdout)
    assert d["signatures_differ_at"] == 101 and B.key_id in d["signatures_difference"]


def test_diff_names_the_first_head_a_copy_holds_no_signature_for(
        copies: dict[str, Path]) -> None:
    r = _cli("diff", copies["stripped"], copies["site"])
    assert r.returncode == 1
    assert f"; first after seq 40: A holds none, B holds one by key {A.key_id}" in r.stdout


def test_diff_of_copies_with_the_same_signatures_names_no_head(
        copies: dict[str, Path]) -> None:
    d = json.loads(_cli("diff", copies["site"], copies["site"], "-f", "json").stdout)
    assert d["signatures_equal"] and d["signatures_differ_at"] is None


@pytest.mark.parametrize("command", ["moves", "replay", "explain"])
def test_at_minus_one_is_refused_alike_by_every_command(command: str) -> None:
    line = one_error_line(_cli(command, ROOT / "examples/format/v2.blog", "--at", "-1"), 2)
    assert "'--at'" in line and "greater than or equal to 0" in line, line


def test_moves_at_zero_still_answers() -> None:
    r = _cli("moves", ROOT / "examples/format/v2.blog", "--at", "0")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("after seq 0: ")
