"""Probe 42, `buraco_log.moves` against the reducer on reachable states of every preset and
player count (RULES.md §2: 2, 3, 4 and 6 players where the preset seats them).

`tests/property/test_legal_moves_exact.py` checks the two both ways on eager play (hands that
end by going out), one player count per preset in the default run. Here the play is uniform
over the legal moves, so the hands run long and reach the stock floor (RULES.md §8), the
pile grows large, and mortos are taken late; every player count is played. At a few states of
each match: every move `legal_moves` lists is accepted by `validate`, and a sample of moves it
does not list (melds and lay-offs of random cards, every discard, pickups, ends of the hand,
the morto, going out) is refused. States at the floor are always checked.
"""

from __future__ import annotations

import random

import pytest

from buraco_log.reducer import Replayer
from buraco_log.rules import PRESETS
from tests.play import random_match
from tests.property.legal_check import check_state
from tests.property.replays import rules_for

CASES = [(name, n) for name, r in PRESETS.items() for n in r.player_counts]


def play_and_check(name: str, players: int, seed: int, sample: int) -> int:
    """Check ``sample`` random states of one random match, and every state at the floor;
    the number of states checked."""
    rules = rules_for(name)
    events = random_match(rules, players, seed, max_hands=1, eager=False)
    rng = random.Random(seed)
    chosen = set(rng.sample(range(2, len(events)), min(sample, len(events) - 2)))
    r = Replayer()
    checked = 0
    for i, ev in enumerate(events):
        s = r.state()
        at_floor = s.phase == "draw" and len(s.stock) <= rules.stock_floor
        if i in chosen or at_floor:
            check_state(s, rng)
            checked += 1
        r.step(ev)
    return checked


@pytest.mark.parametrize(("name", "players"), CASES)
def test_listed_moves_are_exactly_the_accepted_ones(name: str, players: int) -> None:
    assert play_and_check(name, players, seed=4200 + players, sample=3) >= 3


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize(("name", "players"), CASES)
def test_listed_moves_are_exactly_the_accepted_ones_many(name: str, players: int,
                                                          seed: int) -> None:
    assert play_and_check(name, players, seed=seed, sample=25) >= 25
