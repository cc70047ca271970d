"""`buraco-log moves` and `--ignore-integrity` (issue 14 items 4 and 7), in real subprocesses
on the golden logs: a clean match and the same match with one record tampered with."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from buraco_log import log
from buraco_log.moves import legal_moves
from buraco_log.reducer import state_at

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
CLEAN = HERE / "fair-thirteen.log"
TAMPERED = HERE / "tampered.log"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


@pytest.mark.parametrize("seq", [40, 41])
def test_moves_lists_every_legal_move_grouped_with_cards_as_text(seq: int) -> None:
    out = run("moves", str(CLEAN), "--at", str(seq), "--format", "json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    want = legal_moves(state_at(log.read_events(CLEAN), seq))
    assert result["count"] == len(want) == sum(len(g["moves"]) for g in result["groups"])
    for group in result["groups"]:
        for move in group["moves"]:
            for field in ("card", "cards", "top"):
                value = move["event"].get(field)
                assert value is None or all(isinstance(c, str) for c in (
                    value if isinstance(value, list) else [value]))
    table = run("moves", str(CLEAN), "--at", str(seq))
    assert table.returncode == 0 and table.stdout.startswith(f"after seq {seq}: ")
    assert not re.search(r"\b(6[0-4]|[1-5]\d)\b,", table.stdout)  # no card codes


def test_moves_says_whether_the_pile_may_be_taken_and_how_its_top_is_used() -> None:
    out = run("moves", str(CLEAN), "--at", "40")
    assert "may take the pile" in out.stdout and "lay off 8d on meld #1" in out.stdout


def test_moves_past_the_end_is_a_usage_error_with_nothing_on_stdout() -> None:
    out = run("moves", str(CLEAN), "--at", "99999")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "no seq 99999" in out.stderr


@pytest.mark.parametrize("command", [["moves", "--at", "45"], ["replay", "--at", "45"],
                                     ["explain", "--at", "49"]])
def test_a_tampered_log_is_refused_strictly(command: list[str]) -> None:
    out = run(command[0], str(TAMPERED), *command[1:])
    assert out.returncode == 1 and out.stdout == ""  # damaged data: exit 1
    assert "tampered.log" in out.stderr and "byte 1511" in out.stderr


@pytest.mark.parametrize("command", [["moves", "--at", "45"], ["replay", "--at", "45"],
                                     ["explain", "--at", "49"]])
def test_ignore_integrity_reads_it_and_says_so_in_the_first_line(command: list[str]) -> None:
    out = run(command[0], str(TAMPERED), *command[1:], "--ignore-integrity")
    # shown; a finding all the same (1), but for explain, which answered (0)
    assert out.returncode == (0 if command[0] == "explain" else 1), out.stderr
    first = out.stdout.splitlines()[0]
    assert first.startswith("WARNING: ") and "failed its integrity check" in first
    assert "byte 1511" in first and "seq 48" in first
    as_json = run(command[0], str(TAMPERED), *command[1:], "--ignore-integrity", "-f", "json")
    data = json.loads(as_json.stdout)
    assert list(data) == ["integrity_warning", "result"]
    assert as_json.stdout.splitlines()[1].lstrip().startswith('"integrity_warning": "WARNING')


def test_explain_reaches_the_tampered_event_itself() -> None:
    out = run("explain", str(TAMPERED), "--at", "49", "--ignore-integrity")
    assert "ILLEGAL [discard.card_not_in_hand]" in out.stdout


def test_ignore_integrity_on_a_sound_log_adds_no_warning() -> None:
    plain = run("replay", str(CLEAN), "--at", "45")
    anyway = run("replay", str(CLEAN), "--at", "45", "--ignore-integrity")
    assert anyway.returncode == 0 and anyway.stdout == plain.stdout
    assert "WARNING" not in anyway.stdout + anyway.stderr


def test_show_lists_the_last_melds_naming_where_each_wild_stands() -> None:
    out = run("show", str(CLEAN))
    assert out.returncode == 0
    assert "melds     hand 1" in out.stdout
    assert "(2d as an 8)" in out.stdout and "(JK as an A)" in out.stdout


def test_state_at_reads_a_tampered_log_only_when_asked_and_then_warns() -> None:
    import pytest as _pytest

    from buraco_log import forensic
    from buraco_log.errors import LogFormatError

    with _pytest.raises(LogFormatError):
        forensic.state_at(TAMPERED, 45)
    state, warning = forensic.state_at(TAMPERED, 45, ignore_integrity=True)
    assert state.seq == 45 and warning is not None and "byte 1511" in warning
    clean, none = forensic.state_at(CLEAN, 45, ignore_integrity=True)
    assert none is None and clean == forensic.state_at(CLEAN, 45)[0]
    assert state == clean  # the tampered record comes later: the table at 45 is the same
