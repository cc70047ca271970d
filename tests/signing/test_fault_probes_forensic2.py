"""Reading a tampered JSON Lines log anyway (`--ignore-integrity`, forensic.read_anyway).

An event edited by hand in a signed JSON Lines log fails at the next signature line, which no
longer signs the chain. The binary form of the same log is read on past the failure, record by
record; the JSON Lines form stopped there, so a referee could not see the rest of the match
(`replay --ignore-integrity --at` a later seq: "the log has no seq"). It reads on now, passing
over signature lines, and stops at the first line that is no event, as the binary form stops
at the first record that does not decode.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

pytest.importorskip("cryptography")

from buraco_log import jsonl
from buraco_log.forensic import read_anyway
from buraco_log.signing.keys import Signer
from cli.main import app
from tests.signing.helpers import match, write_signed

SITE = Signer.generate()


@pytest.fixture(scope="module")
def signed_lines(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    d = tmp_path_factory.mktemp("forensic")
    write_signed(d / "m.blog", match(key_id=SITE.key_id), SITE)
    jsonl.convert(d / "m.blog", d / "m.jsonl", "jsonl")
    return (d / "m.jsonl").read_text().splitlines()


def _edited(lines: list[str], seq: int) -> tuple[list[str], int]:
    """The lines with the event of ``seq`` given a note, and the number of the signature line
    after it (where the strict reader fails)."""
    out = list(lines)
    i = next(i for i, line in enumerate(out)
             if not line.startswith('{"log"') and json.loads(line).get("seq") == seq)
    obj = json.loads(out[i])
    obj["note"] = "edited"
    out[i] = json.dumps(obj)
    return out, i + 2  # the signature line follows the event's line


def test_an_edited_signed_log_is_read_past_the_signature_that_fails(
        signed_lines: list[str], tmp_path: Path) -> None:
    lines, failing = _edited(signed_lines, 50)
    path = tmp_path / "edited.jsonl"
    path.write_text("\n".join(lines) + "\n")
    salvage = read_anyway(path)
    want = match(key_id=SITE.key_id)
    want[50] = msgspec.structs.replace(want[50], note="edited")
    assert salvage.events == want
    # the signature line after seq 50 fails: it is named so, not as seq 51 (an event it is not)
    assert salvage.line == failing and salvage.seq is None
    assert salvage.failure is not None and "the signature line after seq 50 " in salvage.failure
    assert salvage.warning is not None and salvage.warning.endswith(f"{len(want)} events")


def test_replay_ignoring_integrity_shows_a_seq_after_the_edit(
        signed_lines: list[str], tmp_path: Path) -> None:
    lines, failing = _edited(signed_lines, 50)
    path = tmp_path / "edited.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(app, ["replay", str(path), "--ignore-integrity", "--at", "100"])
    assert result.exit_code == 1, result.stderr  # shown, and a finding: the log was changed
    assert result.stdout.startswith(f"WARNING: {path} failed its integrity check (at line "
                                    f"{failing}: the signature line after seq 50 ")
    assert "seq 100 " in result.stdout
    strict = CliRunner().invoke(app, ["replay", str(path), "--at", "100"])
    assert strict.exit_code == 1 and "line" in strict.stderr  # strictly, still refused


def test_reading_stops_at_the_first_line_that_is_no_event(
        signed_lines: list[str], tmp_path: Path) -> None:
    lines, _ = _edited(signed_lines, 50)
    at = next(n for n, line in enumerate(lines)
              if not line.startswith('{"log"') and json.loads(line)["seq"] == 80)
    lines[at] = lines[at][:-3]  # seq 80's line cut: not JSON
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join(lines) + "\n")
    salvage = read_anyway(path)
    assert [e.seq for e in salvage.events] == list(range(80))


def test_an_intact_log_reads_whole_with_no_warning(
        signed_lines: list[str], tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(signed_lines) + "\n")
    salvage = read_anyway(path)
    assert salvage.warning is None and salvage.events == match(key_id=SITE.key_id)
