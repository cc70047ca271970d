"""Fault probes 40, the referee's commands: a second match start after the match ended, and
`--ignore-integrity` refusals in one line.

Before: a `MatchStarted` after `MatchEnded` was `match.over` ("the match has ended"), read as a
late move of the match rather than a second match written into its file (a second start
anywhere else was `match.already_started`). `replay`, `moves` and `explain` with
`--ignore-integrity` printed the integrity warning on stderr, then the refusal on a second line.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from buraco_log import log
from buraco_log.audit import audit_log
from buraco_log.errors import IllegalMoveError
from buraco_log.reducer import replay
from tests.cli.probes import ROOT, cli, one_error_line
from tests.signing.helpers import match

TAMPERED = ROOT / "examples" / "disputes" / "tampered.log"


def _restarted(path: Path) -> tuple[Path, int]:
    """A complete match, then its own start again right after its MatchEnded."""
    events = match()
    with log.Writer(path, validate=False) as w:
        for event in [*events, msgspec.structs.replace(events[0], seq=len(events))]:
            w.append(event)
    return path, len(events)


def test_a_start_after_the_match_ended_is_a_second_start_that_says_the_match_ended() -> None:
    events = match()
    again = msgspec.structs.replace(events[0], seq=len(events))
    with pytest.raises(IllegalMoveError) as exc:
        replay([*events, again])
    assert exc.value.rule == "match.already_started"
    assert exc.value.seq == len(events)
    assert (f"a second match start: this log's match has already started and ended (MatchEnded "
            f"at seq {len(events) - 1})") in str(exc.value)


def test_any_other_event_after_the_end_stays_match_over() -> None:
    events = match()
    draw = next(e for e in events if type(e).__name__ == "CardDrawn")
    with pytest.raises(IllegalMoveError) as exc:
        replay([*events, msgspec.structs.replace(draw, seq=len(events))])
    assert exc.value.rule == "match.over"


def test_audit_names_the_second_start_after_the_end(tmp_path: Path) -> None:
    path, bad = _restarted(tmp_path / "restart.blog")
    v = audit_log(path)
    assert [(f.section, f.rule, f.seq) for f in v.findings] == [
        ("legality", "match.already_started", bad)], v.findings
    r = cli("audit", path)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"first illegal event at seq {bad} [match.already_started]" in r.stdout, r.stdout
    assert "and ended (MatchEnded at seq" in r.stdout


# -- --ignore-integrity: a refusal is one line, the warning inside it -----------------------------


@pytest.mark.parametrize(("args", "status", "start"), [
    (["replay", "--at", "9999"], 1, "seq 9999 is past the first illegal event, seq 49"),
    (["replay", "--hand", "9"], 2, "the log has no hand 9"),
    (["explain", "--at", "9999"], 2, "the log has no seq 9999 (seqs 0 to 312)"),
    (["moves", "--at", "9999"], 1, "seq 9999 is past the first illegal event, seq 49"),
], ids=["replay-at", "replay-hand", "explain", "moves"])
def test_a_refusal_with_ignore_integrity_is_one_line_holding_the_warning(
        args: list[str], status: int, start: str) -> None:
    r = cli(*args, TAMPERED, "--ignore-integrity")
    line = one_error_line(r, status)
    assert r.stdout == ""
    assert line.startswith(f"buraco-log: error: {TAMPERED}: {start}"), line
    assert (f"; WARNING: {TAMPERED} failed its integrity check (at byte 1511, seq 48: "
            "integrity chain broken at seq 48") in line, line


def test_a_json_refusal_carries_the_warning_beside_the_error() -> None:
    r = cli("explain", "--at", "9999", TAMPERED, "--ignore-integrity", "-f", "json")
    one_error_line(r, 2)
    got = json.loads(r.stdout)
    assert got["error"]["message"] == f"{TAMPERED}: the log has no seq 9999 (seqs 0 to 312)"
    assert got["integrity_warning"].startswith(f"WARNING: {TAMPERED} failed its integrity")


def test_output_then_a_finding_is_the_table_and_one_stderr_line() -> None:
    r = cli("moves", TAMPERED, "--ignore-integrity")
    assert r.stdout.startswith(f"WARNING: {TAMPERED} failed its integrity check")
    line = one_error_line(r, 1)
    assert "seq 49 is illegal [discard.card_not_in_hand]" in line and "; WARNING: " in line


def test_a_note_holds_the_warning_too_and_success_says_it_alone() -> None:
    noted = cli("moves", TAMPERED, "--at", "-1", "--ignore-integrity")
    assert noted.returncode == 0
    lines = noted.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"buraco-log: note: {TAMPERED}: seq 49 is "
                                                   "illegal"), lines
    assert "; WARNING: " in lines[0]
    quiet = cli("explain", "--at", "5", TAMPERED, "--ignore-integrity")
    assert quiet.returncode == 0
    assert quiet.stderr.splitlines() == [f"buraco-log: WARNING: {TAMPERED} failed its integrity "
                                         "check (at byte 1511, seq 48: integrity chain broken at "
                                         "seq 48: this record or one before it was changed); "
                                         "read anyway as far as its records decode: 313 events"]
