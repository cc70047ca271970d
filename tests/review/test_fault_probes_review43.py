"""Probe 43: the review and the searching bot never put forward a move the rules refuse.

- A review of a whole hand, in every preset, finishes, and every move it names (the best
  found and each alternative) is one the reducer accepts at that point of the real match (a
  draw: the seat could draw from the stock there). The slow variant reviews whole simulated
  matches.
- The searching bot (``expert``), dropped into random positions of random games of every
  preset, plays only moves the reducer accepts, for several decisions in a row.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from buraco_log.expert import ExpertBot
from buraco_log.moves import legal_moves
from buraco_log.reducer import Replayer, validate
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match
from tests.play import random_match
from tests.review.legality import CONFIGS, NAMES, TINY, review_is_legal


@pytest.mark.parametrize("name", NAMES)
def test_a_review_of_a_whole_hand_names_only_legal_moves(name: str) -> None:
    events = random_match(name, 2, 43, max_hands=1, eager=True)
    assert review_is_legal(events, 0) > 0


@pytest.mark.parametrize(("name", "players"), [("classic", 3), ("classic", 6), ("biriba", 4),
                                               ("thirteen", 4), ("burako", 4)])
def test_a_review_at_a_larger_table_names_only_legal_moves(name: str, players: int) -> None:
    events = random_match(name, players, 43, max_hands=1, eager=True)
    assert review_is_legal(events, players - 1) > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_a_review_of_a_whole_simulated_match_names_only_legal_moves(name: str) -> None:
    events = simulate_match(PRESETS[name], 2, seed="r43")
    assert review_is_legal(events, 1) > 0


# ------------------------------------------------------------------ the searching bot


def expert_plays_legally(name: str, players: int, seed: int, decisions: int) -> int:
    """Random play up to a random point, then the expert moves for every seat: each move it
    picks is on the complete legal list and accepted by the reducer. Decisions checked."""
    events = random_match(name, players, seed, max_hands=1)
    cut = random.Random(seed).randrange(2, len(events) - 1)
    rep = Replayer()
    bot = ExpertBot(TINY)
    for ev in events[:cut]:
        rep.step(ev)
        bot.observe(ev)
    rng = random.Random(seed)
    done = 0
    while done < decisions:
        state = rep.state()
        if state.phase not in ("draw", "play", "emptied"):
            break
        moves = legal_moves(state)
        move = bot.choose(state, moves, rng)
        assert move in moves, (state.seq, move)
        validate(state, move)
        rep.step(move)
        bot.observe(move)
        done += 1
    return done


# One body, two runs that differ only in size: the default run and the slow soak.
RUNS = [pytest.param(8, 6, id="default"),
        pytest.param(80, 40, id="soak", marks=pytest.mark.slow)]


@pytest.mark.parametrize(("examples", "decisions"), RUNS)
def test_the_searching_bot_plays_only_legal_moves(examples: int, decisions: int) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(st.sampled_from(CONFIGS), st.integers(0, 10_000))
    def run(config: tuple[str, int], seed: int) -> None:
        expert_plays_legally(*config, seed, decisions=decisions)

    run()
