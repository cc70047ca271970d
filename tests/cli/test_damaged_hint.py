"""`replay`, `explain` and `moves` of a damaged log name the damage and the way to read what
is left (--ignore-integrity); a file that is no log gets no such hint."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests import brokenlogs as bl

ROOT = Path(__file__).resolve().parents[2]
HINT = "(--ignore-integrity reads it as far as its records decode)"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def tampered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    clean = bl.fair_match("thirteen-quick", 2, 1)
    path = bl.write(tmp_path_factory.mktemp("logs") / "tampered.log", clean, segment=16)
    bl.tamper(path, 2)
    return path


@pytest.mark.parametrize("command", [("replay",), ("explain", "--at", "3"),
                                     ("moves", "--at", "3")])
def test_a_damaged_log_names_the_damage_and_the_way_to_read_the_rest(
        tampered: Path, command: tuple[str, ...]) -> None:
    done = _cli(command[0], str(tampered), *command[1:])
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"buraco-log: error: {tampered}, byte 1322, seq 32: integrity chain broken at seq 32: "
        f"this record or one before it was changed {HINT} [log.chain]"]
    # the hint holds: the option reads on past the damage (the tampered record then replays as
    # an illegal discard at seq 34, a finding of its own)
    anyway = _cli(command[0], str(tampered), *command[1:], "--ignore-integrity")
    assert anyway.returncode in (0, 1) and "Traceback" not in anyway.stderr
    assert "failed its integrity check" in anyway.stderr
    assert "read anyway as far as its records decode: 284 events" in anyway.stderr


def test_a_broken_json_line_gets_the_hint_too(tmp_path: Path) -> None:
    lines = (ROOT / "examples" / "golden" / "classic.jsonl").read_text().splitlines(True)
    lines[6] = '{"t": "dr", garbage\n'
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(lines))
    done = _cli("replay", str(path))
    assert done.returncode == 1
    assert done.stderr.splitlines()[0].endswith(f"{HINT} [log.jsonl]"), done.stderr


def test_a_file_that_is_no_log_gets_no_hint(tmp_path: Path) -> None:
    path = tmp_path / "notes.blog"
    path.write_bytes(b"shopping list\n")
    done = _cli("replay", str(path))
    assert done.returncode == 2
    assert "--ignore-integrity" not in done.stderr and len(done.stderr.splitlines()) == 1
