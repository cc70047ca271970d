"""``legal_moves`` is exactly what the reducer accepts, for every preset and player count.

Both ways: every listed move is accepted, and every plausible move the reducer accepts is
listed. Plausible moves are drawn at random from the hand (melds and lay-offs of any cards,
discards, pickups, ends of the hand, the morto) and, for short hands, every sub-multiset of the
hand is tried as a meld and as a lay-off on every meld of the side.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from buraco_log.reducer import Replayer
from buraco_log.rules import PRESETS
from tests.play import random_match
from tests.property.legal_check import check_state
from tests.property.replays import rules_for

CASES = [(name, n) for name, r in PRESETS.items() for n in r.player_counts]
SETTINGS = settings(max_examples=1, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def play_and_check(name: str, players: int, seed: int, every: int) -> None:
    events = random_match(rules_for(name), players, seed, max_hands=1, eager=True)
    rng = random.Random(seed)
    r = Replayer()
    listed = 0
    for i, ev in enumerate(events):
        s = r.state()
        if i % every == 0 or s.pile_top is not None or len(s.stock) <= 2:
            listed += check_state(s, rng)
        r.step(ev)
    assert listed > 0


# The default run: one case per preset, its most common player count, a few positions a hand.
QUICK = [(name, r.player_counts[-1] if name != "classic" else 4) for name, r in PRESETS.items()]


@pytest.mark.parametrize(("name", "players"), QUICK)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_legal_moves_is_exactly_what_the_reducer_accepts(
    name: str, players: int, seed: int
) -> None:
    play_and_check(name, players, seed, every=7)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "players"), CASES)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_legal_moves_is_exactly_what_the_reducer_accepts_everywhere(
    name: str, players: int, seed: int
) -> None:
    play_and_check(name, players, seed, every=2)
