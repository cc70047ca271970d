"""Probe 51 of `buraco-log review`: every preset, every player count it allows.

A review of a simulated match runs to its end, every move it names (played, best, each
alternative) is accepted by the engine where it is named, and every cost is the search's own
figure: the best first, no cost below 0, each the best's mean minus the move's, a flag only
on a cost of at least the threshold and two standard errors, the sums per hand and in all.
The slow loop reviews whole matches of every preset and count over several seeds, and holds
each flagged move's cost to a second search of the same decision.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from buraco_log.events import MatchStarted, Player
from buraco_log.expert import Budget, decide
from buraco_log.review import review_events, tasks
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match, write_match
from tests.review.legality import CONFIGS, costs_are_sound, review_is_sound

ROOT = Path(__file__).resolve().parents[2]
# one preset of each family, at a table size of its own (the slow loop has every one)
FAMILIES = [("biriba", 3), ("thirteen-quick", 4), ("burraco", 2), ("mega", 4), ("burako", 2)]
SMALL = Budget(samples=2, candidates=2, rounds=1)


@pytest.mark.parametrize(("name", "players"), FAMILIES)
def test_a_review_in_each_preset_family_names_legal_moves_at_sound_costs(
        name: str, players: int) -> None:
    events = simulate_match(PRESETS[name], players, seed="r51")[:120]
    assert review_is_sound(events, players - 1, budget=SMALL) > 0


@pytest.mark.slow  # every preset and player count, 3 seeds, whole matches: 1-2 minutes
@pytest.mark.parametrize("seed", range(3))
def test_a_review_of_every_preset_and_table_size_names_legal_moves_at_sound_costs(
        seed: int) -> None:
    checked = 0
    for name, players in CONFIGS:
        seat = random.Random(f"{seed}/{name}/{players}").randrange(players)
        events = simulate_match(PRESETS[name], players, seed=f"r51-{seed}")
        checked += review_is_sound(events, seat, seed=str(seed))
    assert len(CONFIGS) == 20 and checked > 5000


@pytest.mark.slow  # a review at a larger budget, its flagged moves searched again: 20-40 s
@pytest.mark.parametrize(("name", "players"), [("classic", 6), ("bossa-nova", 3),
                                               ("mega", 2), ("burako", 4)])
def test_a_flagged_moves_cost_is_what_the_search_says_again(name: str, players: int) -> None:
    events = simulate_match(PRESETS[name], players, seed="r51-flag")[:500]
    budget = Budget(samples=8, candidates=4, rounds=1)
    review = review_events(events, 0, budget=budget, seed="flag")
    costs_are_sound(review)
    by_seq = {t.played.seq: t for t in tasks(events, 0, "flag")[0]}
    flagged = [m for m in review.moves if m.flagged]
    assert flagged, review.decisions
    for m in flagged[:5]:
        t = by_seq[m.seq]
        again = decide(t.view, budget, t.seed, include=t.played).find(t.played)
        assert again is not None and again.cost == m.cost >= review.threshold, (m.seq, again)


@pytest.mark.slow  # a real subprocess: 1-4 s
def test_review_on_the_command_line_names_a_seat_with_no_name_by_its_seat(
        tmp_path: Path) -> None:
    # a name of blanks (a tab) was shown escaped, "review of seat 0 (\x09, side 0) in match
    # (classic)", where the page and the library say "seat 0 (side 0)"
    events = simulate_match(PRESETS["classic"], 2, seed="r51-cli")[:40]
    start = events[0]
    assert isinstance(start, MatchStarted)
    log = tmp_path / "nameless.blog"
    write_match(log, [msgspec.structs.replace(start, match_id=" ", players=(
        Player(name="\t"), Player(name=""))), *events[1:]])
    done = subprocess.run([sys.executable, "-m", "cli.main", "review", str(log), "--seat", "0",
                           "--budget", "2x2r1", "--no-progress"], capture_output=True,
                          text=True, timeout=120, env={"PYTHONPATH": str(ROOT),
                                                       "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    head = done.stdout.splitlines()[0]
    assert head == "review of seat 0 (side 0) in match with no id (classic)", head
