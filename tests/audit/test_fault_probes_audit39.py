"""Fault probes 39, the referee's commands: `diff` of copies whose signatures differ,
`moves --at -1`, and the audit of a log holding two match starts.

Before: `diff` of two copies with the same events said only "the copies hold different signature
records", leaving the referee to find which head and which key; `moves --at -1` was accepted
(every other `--at` starts at 0) and its help did not say what -1 meant; a log holding a second
match start had the second match's deals checked against the first start's commitment:
`deal.mismatch` at each of its deals and `deal.seed_mismatch` at its reveal, findings blaming the
site's dealing for what is one illegal event (named by legality).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

pytest.importorskip("cryptography")

from buraco_log import log
from buraco_log.audit import audit_log
from buraco_log.events import AnyEvent, HandStarted
from buraco_log.signing.keys import Signer
from tests.cli.probes import cli, one_error_line
from tests.signing.helpers import match, write_signed_by

ROOT = Path(__file__).resolve().parents[2]
A, B = Signer.generate(), Signer.generate()


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("copies")
    events = match(key_id=A.key_id)
    every = {e.seq: A for e in events}
    return {
        "site": write_signed_by(d / "site.blog", events, every),
        # the same events, the records after seq 100 made by another key
        "spliced": write_signed_by(d / "spliced.blog", events,
                          {s: A if s <= 100 else B for s in every}),
        # the same events, the records after seq 40 and on stripped
        "stripped": write_signed_by(d / "stripped.blog", events, {s: A for s in every if s < 40}),
    }


def test_diff_names_the_first_head_whose_signature_is_by_another_key(
        copies: dict[str, Path]) -> None:
    r = cli("diff", copies["site"], copies["spliced"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert (f"the signatures differ: the copies hold different signature records; first after "
            f"seq 101: A holds one by key {A.key_id}, B holds one by key {B.key_id}"
            in r.stdout), r.stdout
    d = json.loads(cli("diff", copies["site"], copies["spliced"], "-f", "json").stdout)
    assert d["signatures_differ_at"] == 101 and B.key_id in d["signatures_difference"]


def test_diff_names_the_first_head_a_copy_holds_no_signature_for(
        copies: dict[str, Path]) -> None:
    r = cli("diff", copies["stripped"], copies["site"])
    assert r.returncode == 1
    assert f"; first after seq 40: A holds none, B holds one by key {A.key_id}" in r.stdout


def test_diff_of_copies_with_the_same_signatures_names_no_head(
        copies: dict[str, Path]) -> None:
    d = json.loads(cli("diff", copies["site"], copies["site"], "-f", "json").stdout)
    assert d["signatures_equal"] and d["signatures_differ_at"] is None


@pytest.mark.parametrize("command", ["replay", "explain"])
def test_at_minus_one_is_refused_where_there_is_no_table_before_the_start(command: str) -> None:
    line = one_error_line(cli(command, ROOT / "examples/format/v2.blog", "--at", "-1"), 2)
    assert "'--at'" in line and "greater than or equal to 0" in line, line


def test_moves_at_minus_one_is_documented_in_its_help() -> None:
    wide = subprocess.run([sys.executable, "-m", "cli.main", "moves", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, "COLUMNS": "400"})
    help_text = " ".join(wide.stdout.split())
    assert "-1: before the match start, where nobody moves yet" in help_text, help_text
    r = cli("moves", ROOT / "examples/format/v2.blog", "--at", "-1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("after seq -1: phase new; nobody to move")


def _restarted(path: Path) -> tuple[Path, int]:
    """A match whose seq 30 is a second match start: legal up to seq 29, 200 events more."""
    return _two_matches(path, 29), 30


def test_moves_of_a_log_whose_end_follows_an_illegal_event_says_so(tmp_path: Path) -> None:
    path, bad = _restarted(tmp_path / "restart.blog")
    r = cli("moves", path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.startswith(f"after seq {bad - 1}: "), r.stdout
    line = one_error_line(r, 1)
    assert line == (f"buraco-log: error: {path}: seq {bad} is illegal; the table is known up to "
                    f"seq {bad - 1}: the moves shown are after it, not after the log's last "
                    "event [match.already_started]")
    json_run = cli("moves", path, "-f", "json")
    assert json_run.returncode == 1 and json.loads(json_run.stdout)["seq"] == bad - 1


def test_moves_asked_for_a_seq_before_an_illegal_event_notes_it(tmp_path: Path) -> None:
    path, bad = _restarted(tmp_path / "restart.blog")
    r = cli("moves", path, "--at", str(bad - 1))
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip() == (f"buraco-log: note: {path}: seq {bad} is illegal; the table "
                                f"is known up to seq {bad - 1} [match.already_started]")


def _deals(events: list[AnyEvent]) -> int:
    return sum(1 for e in events if isinstance(e, HandStarted))


def _two_matches(path: Path, cut: int | None) -> Path:
    """A fair match, then (after its seq ``cut``, or after its end) a second fair match's
    events renumbered to follow: the log holds two match starts."""
    first, second = match(seed="one"), match(seed="two")
    head = first if cut is None else first[:cut + 1]
    tail = [msgspec.structs.replace(e, seq=e.seq + len(head)) for e in second]
    with log.Writer(path, validate=False) as w:
        for event in head + tail:
            w.append(event)
    return path


@pytest.mark.parametrize("cut", [None, 29], ids=["after-the-end", "mid-match"])
def test_a_second_match_start_is_one_legality_finding_not_a_dealing_one(
        tmp_path: Path, cut: int | None) -> None:
    path = _two_matches(tmp_path / "two.blog", cut)
    second = len(match(seed="one")) if cut is None else cut + 1
    k = _deals(match(seed="two"))
    v = audit_log(path)
    assert not v.ok
    assert [(f.section, f.seq) for f in v.findings] == [("legality", second)], v.findings
    assert v.provenance.second_start == second and v.provenance.after_second == k
    deals = f"the {k} deal{'s' if k != 1 else ''} after it"
    assert any(n.startswith(f"provenance: a second match start, of another match id, at seq "
                            f"{second} (see legality): {deals}") for n in v.notes), v.notes
    r = cli("audit", path)
    assert r.returncode == 1 and "deal.seed_mismatch" not in r.stdout, r.stdout


def test_the_first_match_of_a_two_start_log_is_still_checked(tmp_path: Path) -> None:
    path = _two_matches(tmp_path / "two.blog", None)
    v = audit_log(path)
    assert v.provenance.status == "committed" and v.provenance.revealed
    assert v.provenance.deals == _deals(match(seed="one"))
    assert v.provenance.unchecked == 0


def test_a_reveal_missing_from_a_cut_log_is_named_where_the_log_ends(tmp_path: Path) -> None:
    events = match(seed="one")[:120]
    path = tmp_path / "cut.blog"
    log.write_log(path, events)
    r = cli("audit", path, "--require-commitment")
    assert r.returncode == 1
    assert (f"    seq {events[-1].seq} [deal.not_revealed] the log ends without MatchEnded"
            in r.stdout), r.stdout
    assert "seq - [deal.not_revealed]" not in r.stdout
