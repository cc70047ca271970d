"""Fault probes, the note under a broken log's verdict: what the later sections cover.

A broken chain does not say where the change is: the record where it broke or one before it
(binary), any event before the line that failed (JSON Lines, the end line's head included).
The note said "later sections cover the N events read intact" all the same, and a referee took
the events before the break for proven. It says now that they are not, or how far a signature
read before the break proves them. Damage that a checksum catches keeps "read intact": the
records before it passed their checksums and, sealed, the chain.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from buraco_log import jsonl
from buraco_log.events import AnyEvent
from cli.main import app
from tests import brokenlogs as bl

NOT_PROVEN = "not proven intact: the change may be in any of them"


def _note(*args: str | Path) -> str:
    result = CliRunner().invoke(app, ["audit", *map(str, args)])
    assert result.exit_code == 1, result.stdout
    notes = [x for x in result.stdout.splitlines() if x.startswith("  note        later")]
    assert len(notes) == 1, result.stdout
    return notes[0].removeprefix("  note        ")


@pytest.fixture(scope="module")
def clean() -> list[AnyEvent]:
    return bl.fair_match("thirteen-quick", 2, 1)


def test_a_forged_record_leaves_the_events_before_it_unproven(
        tmp_path: Path, clean: list[AnyEvent]) -> None:
    path = bl.write(tmp_path / "forged.log", clean, segment=16)
    bl.tamper(path, 2)  # a card changed in record 2, its checksums fixed, not the chain
    assert _note(path) == (
        f"later sections cover the 32 events read before the chain broke, {NOT_PROVEN}")


def test_a_checksum_failure_keeps_the_events_before_it_intact(
        tmp_path: Path, clean: list[AnyEvent]) -> None:
    path = bl.write(tmp_path / "damaged.log", clean, segment=16)
    off, hsize, length = bl.segment_offsets(path)[2]
    data = bytearray(path.read_bytes())
    data[off + hsize + length // 2] ^= 0x40  # a bit flipped; no checksum fixed
    path.write_bytes(bytes(data))
    assert _note(path) == "later sections cover the 32 events read intact"


def test_json_lines_whose_end_line_does_not_match_prove_none_of_their_events(
        tmp_path: Path, clean: list[AnyEvent]) -> None:
    bl.write(tmp_path / "m.log", clean)
    jsonl.convert(tmp_path / "m.log", tmp_path / "m.jsonl", "jsonl")
    lines = (tmp_path / "m.jsonl").read_text().splitlines()
    i = next(n for n, line in enumerate(lines) if json.loads(line).get("seq") == 50
             and "t" in json.loads(line))
    obj = json.loads(lines[i])
    obj["note"] = "edited"
    lines[i] = json.dumps(obj)
    (tmp_path / "e.jsonl").write_text("\n".join(lines) + "\n")
    assert _note(tmp_path / "e.jsonl") == (
        f"later sections cover the {len(clean)} events read before the chain broke, "
        f"{NOT_PROVEN}")


def test_a_signature_before_the_break_says_how_far_the_events_are_proven(
        tmp_path: Path) -> None:
    pytest.importorskip("cryptography")
    from buraco_log.signing.keys import load_signer, write_key_pair
    from tests.signing.helpers import match, write_signed

    site = load_signer(write_key_pair(tmp_path / "keys", "site").private)
    write_signed(tmp_path / "m.blog", match(key_id=site.key_id), site)
    jsonl.convert(tmp_path / "m.blog", tmp_path / "m.jsonl", "jsonl")
    lines = (tmp_path / "m.jsonl").read_text().splitlines()
    i = next(n for n, line in enumerate(lines)
             if not line.startswith('{"log"') and json.loads(line)["seq"] == 50)
    obj = json.loads(lines[i])
    obj["note"] = "edited"
    lines[i] = json.dumps(obj)
    edited = tmp_path / "e.jsonl"
    edited.write_text("\n".join(lines) + "\n")
    # the signature after seq 49 was read and checked; the one after seq 50 fails
    assert _note(edited, "--keys", tmp_path / "keys") == (
        "later sections cover the 51 events read before the chain broke; the site's verified "
        "signature proves seq 0 to 49: the change is after seq 49")
    assert _note(edited) == (
        "later sections cover the 51 events read before the chain broke; a signature covers "
        "seq 0 to 49 (not verified: no trusted keys), so the change is after it unless the "
        "signatures were replaced too")
