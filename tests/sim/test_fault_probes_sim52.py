"""Fault probes of simulation (round 52): a hand that never ends.

- Nothing in the rules ends a hand whose players pass a free pile back and forth: two experts
  (``expert:2x2r1`` at both seats of ``bossa-nova``, seed ``f0``; ``burako``, seed ``f1``)
  took one card and discarded it back, the stock at 12 cards, for 10,000 turns, until the
  hand's 20,000-event limit (25 s at that budget; hours at the default one, where
  ``simulate --bot expert`` and whole matches of house rules did not end). The expert now
  leaves the pile after three of its draws with the stock unchanged, as the heuristic bot
  does; and any hand where the pile is taken ``MAX_STALL_TURNS`` (100) turns in a row with no
  card drawn or laid is stopped with one line that says so, naming the match, hand and seq.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from buraco_log import expert, simulate
from buraco_log.events import AnyEvent, CardDrawn, CardsLaidOff, MeldLaid, MortoTaken, PileTaken
from buraco_log.reducer import Replayer
from buraco_log.rules import PRESETS, derive

ROOT = Path(__file__).parents[2]
TINY = "expert:2x2r1"
LOOPED = [("bossa-nova", "f0"), ("burako", "f1")]  # 2 players: they went round for ever


def _longest_stall(events: list[AnyEvent]) -> int:
    """The most pile takes in a row with no card drawn from the stock or laid between them."""
    run = most = 0
    for ev in events:
        if isinstance(ev, PileTaken):
            run += 1
            most = max(most, run)
        elif isinstance(ev, (CardDrawn, MeldLaid, CardsLaidOff, MortoTaken)):
            run = 0
    return most


def test_two_experts_leave_a_pile_they_would_pass_back_and_forth(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # each leaves it on its fourth draw with the stock unchanged: at most 3 takes a seat.
    # Hand 0 (where they went round) is played through; the match stops after it.
    monkeypatch.setattr(simulate, "MAX_STALL_TURNS", 3 * 2 + 1)
    with pytest.raises(simulate.SimulationError, match="still undecided after 1 hands"):
        simulate.simulate_match(PRESETS["bossa-nova"], 2, seed="f0", bots=(TINY,),
                                max_hands=1)


def test_a_hand_the_bots_would_play_for_ever_is_stopped_in_one_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(expert, "STALL_DRAWS", 10**9)  # the expert as it was
    began = time.process_time()  # the work it did, not how long a loaded host took
    with pytest.raises(simulate.SimulationError) as caught:
        simulate.simulate_match(PRESETS["bossa-nova"], 2, seed="f0", bots=(TINY,))
    assert time.process_time() - began < 10  # 25 s to the 20,000-event limit before
    said = str(caught.value)
    assert "\n" not in said
    assert said.startswith("sim-bossa-nova-2p-") and ": hand 0: the pile was taken 100 turns " \
        "in a row (to seq " in said and "never end" in said, said


@pytest.mark.slow  # whole matches of experts: 2-10 s each
@pytest.mark.parametrize(("preset", "seed"), LOOPED)
def test_the_seeds_that_went_round_for_ever_end_their_matches(preset: str, seed: str) -> None:
    began = time.monotonic()
    events = simulate.simulate_match(PRESETS[preset], 2, seed=seed, bots=(TINY,))
    assert time.monotonic() - began < 60
    assert _longest_stall(events) <= 6
    final = Replayer()
    for ev in events:
        final.step(ev)
    assert final.state().phase == "over"


@pytest.mark.slow  # every preset and the probes' house rules, 3 seeds, experts: 1-2 minutes
@pytest.mark.parametrize("rules", [
    *PRESETS.values(),
    derive("biriba", morto_direct=False, morto_needs_canastra=True, go_out_needs_canastra=True),
    derive("burraco", canastra_from_sets=False, pile_pickup="must_use_top", hand_size=9),
    derive("burako", first_turn_redraw=True, max_sets_per_rank=2,
           morto_voided_by="opponent_out"),
], ids=lambda r: r.name)
def test_experts_end_every_match_with_no_pile_passed_round(rules: simulate.Rules) -> None:
    for seed in ("f0", "f1", "f2"):
        events = simulate.simulate_match(rules, 2, seed=seed, bots=(TINY,))
        assert _longest_stall(events) <= 6, (rules.name, seed)


@pytest.mark.slow  # a real process: about 3 s
def test_simulate_plays_the_seed_that_went_round_for_ever_to_its_end(tmp_path: Path) -> None:
    p = subprocess.run(
        [sys.executable, "-m", "cli.main", "simulate", "--rules", "bossa-nova", "--players", "2",
         "--seed", "f0", "--bot", TINY, "-o", str(tmp_path / "out"), "--no-progress"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert p.returncode == 0, p.stderr
    assert [f.name for f in (tmp_path / "out").iterdir()] == ["bossa-nova-2p-000000.blog"]
