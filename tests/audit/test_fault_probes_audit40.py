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

pytest.importorskip("cryptography")

from buraco_log import log
from buraco_log.audit import audit_log, diff_logs
from buraco_log.errors import IllegalMoveError
from buraco_log.reducer import replay
from buraco_log.signing.keys import Signer
from tests.cli.probes import ROOT, cli, one_error_line
from tests.signing.helpers import match, write_signed_by

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
    # a seq the log holds past its illegal event is a finding (1); one it does not hold is the
    # caller's (2), for every command alike (probe 44c: replay and moves said 1 for 9999)
    (["replay", "--at", "100"], 1, "seq 100 is past the first illegal event, seq 49"),
    (["replay", "--hand", "9"], 2, "the log has no hand 9"),
    (["explain", "--at", "9999"], 2, "the log has no seq 9999 (seqs 0 to 312)"),
    (["moves", "--at", "9999"], 2, "the log has no seq 9999 (seqs 0 to 312)"),
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
    assert "seq 49 is illegal; " in line and "; WARNING: " in line
    assert line.endswith(" [discard.card_not_in_hand]"), line


def test_a_note_holds_the_warning_too_and_success_says_it_alone() -> None:
    noted = cli("moves", TAMPERED, "--at", "-1", "--ignore-integrity")
    assert noted.returncode == 1  # a changed log read anyway is a finding, at any seq
    lines = noted.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"buraco-log: note: {TAMPERED}: seq 49 is "
                                                   "illegal"), lines
    assert "; WARNING: " in lines[0]
    # the illegal event itself, explained: nothing later to note (a seq before it notes it,
    # as moves does above: probe 44c)
    quiet = cli("explain", "--at", "49", TAMPERED, "--ignore-integrity")
    assert quiet.returncode == 0 and "ILLEGAL [discard.card_not_in_hand]" in quiet.stdout
    assert quiet.stderr.splitlines() == [f"buraco-log: WARNING: {TAMPERED} failed its integrity "
                                         "check (at byte 1511, seq 48: integrity chain broken at "
                                         "seq 48: this record or one before it was changed); "
                                         "read anyway as far as its records decode: 313 events"]


# -- diff: where copies diverge, and copies whose signatures differ in bytes only ------------------


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("diff40")
    events = match()
    at_start = [msgspec.structs.replace(events[0], match_id="another"), *events[1:]]
    at_end = [*events[:-1], msgspec.structs.replace(events[-1], winner=1)]
    out = {"site": events, "start": at_start, "end": at_end, "prefix": events[:100]}
    for name, evs in out.items():
        log.write_log(d / f"{name}.blog", evs, validate=False)
    return {name: d / f"{name}.blog" for name in out}


@pytest.mark.parametrize(("other", "seq", "prefix"), [
    ("start", 0, None), ("end", 262, None), ("prefix", 100, "b")])
def test_diff_names_a_divergence_at_the_start_the_end_or_a_prefix(
        copies: dict[str, Path], other: str, seq: int, prefix: str | None) -> None:
    d = diff_logs(copies["site"], copies[other])
    assert (d.diverge_seq, d.prefix, d.identical) == (seq, prefix, False)
    flipped = diff_logs(copies[other], copies["site"])
    assert flipped.diverge_seq == seq
    assert flipped.prefix == ("a" if prefix == "b" else None)


def test_diff_of_copies_signed_alike_but_for_one_signatures_bytes(tmp_path: Path) -> None:
    signer = Signer.generate()
    events = match(key_id=signer.key_id)
    site = write_signed_by(tmp_path / "site.blog", events, {e.seq: signer for e in events})
    data = bytearray(site.read_bytes())
    o30 = _signature_offset(site, 30)
    forged = tmp_path / "forged.blog"
    # the signature's last byte changed, both checksums made good again: a forged record
    payload_at = o30 + 56
    length = int.from_bytes(data[o30:o30 + 4], "little")
    data[payload_at + length - 1] ^= 1
    frame = log._segment(bytes(data[payload_at:payload_at + length]), 0, 31,
                         bytes(data[o30 + 16:o30 + 48]))
    forged.write_bytes(bytes(data[:o30]) + frame + bytes(data[o30 + len(frame):]))
    r = cli("diff", site, forged)
    assert r.returncode == 1 and r.stderr == "", r.stderr
    line = r.stdout.splitlines()[-1]
    assert line == ("same events, same head digest; the signatures differ: the copies hold "
                    "different signature records; first after seq 30: both hold one by key "
                    f"{signer.key_id}, with different signature bytes: a key signs a head one way "
                    "only, so at most one is the key's (`audit --keys` says which)"), line


def _signature_offset(path: Path, seq: int) -> int:
    """Where the signature record after ``seq`` starts (a sealed log signed after each event)."""
    data, off = path.read_bytes(), log.HEADER_SIZE
    while True:
        length, count, first = log._SEG_HEAD.unpack_from(data, off)
        if count == 0 and first == seq + 1:
            return off
        off += 56 + length


def test_diff_of_two_damaged_copies_says_where_each_is_damaged(tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    with log.Writer(path, validate=False) as w:  # a record per event
        for event in match()[:40]:
            w.append(event)
    with log.Reader(path) as reader:
        last = [off for off, _ in reader.segments()][-1]
    data = bytearray(path.read_bytes())
    data[-5] ^= 0xFF  # inside the last record's payload
    a, b = tmp_path / "a.blog", tmp_path / "b.blog"
    a.write_bytes(bytes(data))
    b.write_bytes(bytes(data[:-2]))  # and cut: torn, not broken
    r = cli("diff", a, b)
    assert r.returncode == 1, r.stderr
    assert (f"the copies agree on all 39 events read intact, but A is broken at byte {last} and "
            f"B is torn at byte {last}: `buraco-log verify` says what is damaged") in r.stdout


# -- moves at every seq bound ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("moves40") / "m.blog"
    log.write_log(path, match())
    return path


@pytest.mark.parametrize(("at", "status", "said"), [
    ("-1", 0, "after seq -1: phase new; nobody to move; 0 legal move(s)"),
    ("0", 0, "after seq 0: phase between; nobody to move; 0 legal move(s)"),
    ("262", 0, "after seq 262: phase over; nobody to move; 0 legal move(s)"),
    ("263", 2, "the log has no seq 263 (seqs 0 to 262)"),
    ("-2", 2, "Invalid value for '--at'"),
])
def test_moves_at_each_bound(played: Path, at: str, status: int, said: str) -> None:
    r = cli("moves", played, f"--at={at}")
    if status:
        assert said in one_error_line(r, status) and r.stdout == ""
    else:
        assert r.returncode == 0 and r.stderr == "" and r.stdout.startswith(said), r.stdout


def test_moves_before_the_start_of_a_match_not_started_is_answered(tmp_path: Path) -> None:
    empty = tmp_path / "empty.blog"
    log.write_log(empty, [])
    r = cli("moves", empty, "--at", "-1")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.splitlines() == [
        "after seq -1: phase new; nobody to move; 0 legal move(s)",
        "no move: the next event starts the match (its rules and players: no player's choice)"]
    line = one_error_line(cli("moves", empty), 2)  # any later seq: there is no table
    assert line.endswith("(a match not started): no table to show [log.empty]"), line
