"""Fault probes of the referee's commands (round 44), in real subprocesses: `replay`,
`explain` and `moves` tell one story of a voided morto and of mega's stock end; `replay --step`
shows every seq of a match in one process, each table equal to the library's; `show` of a
match carried in names the totals it ran on from.

Seven processes in all (about 5 s)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from buraco_log import audit
from buraco_log.simulate import write_match
from buraco_log.timeline import Timeline
from cli.dispute_cmd import render_table
from tests.cli.probes import ROOT, cli
from tests.scenario import Scenario, carried_in

SIM = ROOT / "examples" / "sim"
VOIDED = SIM / "biriba-3p-000000.blog"  # side 1's indirect morto voided by seat 2 at seq 303
MEGA = SIM / "mega-4p-000000.blog"  # hand 1 ends by the stock at seq 1126, 2 cards left
SETS_11 = "7h 7s 7d 8c 8d 8s 9h 9s 9d Kc Kd"


def _side(text: str, side: int, indent: str = "") -> str:
    return next(line for line in text.splitlines() if line.startswith(f"{indent}side {side} ("))


def test_replay_and_explain_say_voided_of_a_voided_morto_never_taken() -> None:
    table = cli("replay", VOIDED, "--at", 304)
    assert table.returncode == 0, table.stderr
    assert "morto voided" in _side(table.stdout, 1)
    assert "morto taken" not in _side(table.stdout, 1)
    assert "morto taken" in _side(table.stdout, 2)  # a morto that stands is still taken
    explained = cli("explain", VOIDED, "--at", 304)
    assert explained.returncode == 0, explained.stderr
    assert re.search(r"side 1 recomputed score 20: .*morto not taken -100$", explained.stdout,
                     re.M)
    assert "morto voided" in _side(explained.stdout, 1, "  ")
    assert "morto taken" not in _side(explained.stdout, 1, "  ")


def test_replay_json_gains_the_morto_state_and_keeps_morto_taken() -> None:
    done = cli("replay", VOIDED, "--at", 304, "-f", "json")
    assert done.returncode == 0, done.stderr
    sides = json.loads(done.stdout)["sides"]
    assert [(s["morto_taken"], s["morto_state"]) for s in sides] == [
        (False, "waiting"), (True, "voided"), (True, "taken")]


def test_mega_moves_and_replay_name_the_stock_end_alike() -> None:
    words = "the stock is down to its last 2 cards"
    moves = cli("moves", MEGA, "--at", 1125)
    assert moves.returncode == 0, moves.stderr
    assert f"end the hand: {words}" in moves.stdout and "stock is out" not in moves.stdout
    table = cli("replay", MEGA, "--at", 1126, "--recent", 1)
    assert table.returncode == 0, table.stderr
    assert f"seq 1126: hand ended ({words})" in table.stdout
    assert re.search(r"^stock 2 ", table.stdout, re.M)  # what the words say is so


def test_replay_step_shows_every_seq_as_the_library_does_with_a_seat_seeing_only_its_hand(
) -> None:
    """One process steps through the whole match (544 tables) as seat 1 sees it."""
    tl = Timeline(audit.load(VOIDED))
    keys = "n\n" * tl.last_seq + "q\n"
    done = subprocess.run(
        [sys.executable, "-m", "cli", "replay", str(VOIDED), "--step", "--seat", "1"],
        input=keys, capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
        env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr
    want = "".join("\n".join(render_table(tl.view(seq, seat=1))) + "\n"
                   for seq in range(tl.last_seq + 1))
    assert done.stdout == want
    others = re.findall(r"^  seat [02] .*$", done.stdout, re.M)  # seats 0 and 2's hands
    assert len(others) == 2 * (tl.last_seq + 1)
    assert all(line.endswith("hidden)") for line in others)


def test_show_of_a_match_carried_in_says_where_its_running_totals_start(tmp_path: Path
                                                                        ) -> None:
    """`show` listed hand 0 at 255 with a running total of 955 and no word of the 700
    carried in."""
    s = carried_in(Scenario("classic", hands={0: SETS_11}, stock="Ks"), (700, 400))
    s.draw().meld("7h 7s 7d").meld("8c 8d 8s").meld("9h 9s 9d").meld("Kc Kd Ks").go_out()
    s.end_hand("went_out")
    log = tmp_path / "carried.blog"
    write_match(log, s.events)
    done = cli("show", log)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    carried = lines.index("carried   side 0: 700  side 1: 400")
    assert lines[carried + 1] == "hands"
    assert re.search(r"^  0 .* 255 +-105 +955 +295 ", done.stdout, re.M)
