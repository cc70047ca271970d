"""Invariants of the reducer under random legal play (Hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from buraco_log.events import AnyEvent, decode_many, encode_many
from buraco_log.moves import legal_moves
from buraco_log.reducer import Replayer, apply, replay, state_at, step, validate
from buraco_log.rules import PRESETS, derive
from buraco_log.state import State
from tests.play import random_match
from tests.property.replays import replay_conserving, rules_for

CASES = [(name, n) for name, r in PRESETS.items() for n in r.player_counts]
SETTINGS = settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])


VULNERABLE_CASES = [(n, p) for n, p in CASES if PRESETS[n].vulnerability]


@pytest.mark.parametrize(("name", "players"), VULNERABLE_CASES)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_random_play_while_vulnerable_always_has_a_move_and_conserves_every_card(
    name: str, players: int, seed: int
) -> None:
    """Every side vulnerable from the first deal: openings short of 75 are laid and taken
    back (even one that empties the hand), and play never gets stuck."""
    rules = derive(PRESETS[name], vulnerable_at=0)
    events = random_match(rules, players, seed, max_hands=2, eager=True)  # asserts a move
    end = replay_conserving(events, rules)
    # Both hands played out (not cut off by the event cap), or the match ended first.
    assert end.phase == "over" or (end.phase == "between" and len(end.results) == 2)


@pytest.mark.parametrize(("name", "players"), CASES)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_random_legal_play_reaches_the_end_and_conserves_every_card(
    name: str, players: int, seed: int
) -> None:
    rules = rules_for(name)
    events = random_match(rules, players, seed, max_hands=60, eager=True)
    assert replay_conserving(events, rules).phase == "over"


@pytest.mark.parametrize(("name", "players"), CASES)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_every_listed_legal_move_is_accepted(name: str, players: int, seed: int) -> None:
    # the moves the random play listed, not listed again: half the work of a heavy seed
    listed: dict[int, list[AnyEvent]] = {}
    events = random_match(rules_for(name), players, seed, max_hands=1, eager=True,
                          listed=listed)
    r = Replayer()
    checked = 0
    for ev in events:
        s = r.state()
        for move in listed[s.seq] if s.seq in listed else legal_moves(s):
            validate(s, move)
            checked += 1
        r.step(ev)
    assert checked > len(events) // 2


@pytest.mark.parametrize(("name", "players"), CASES[::3])
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_replay_is_deterministic_and_stepping_matches_jumping(
    name: str, players: int, seed: int
) -> None:
    events: list[AnyEvent] = random_match(rules_for(name), players, seed, max_hands=2, eager=True)
    blob = encode_many(events)
    assert replay(decode_many(blob)) == replay(events)
    r = Replayer(snapshot_every=16)
    prev = State()
    for ev in events:
        nxt = step(prev, ev)
        assert nxt == apply(prev, ev)
        r.step(ev)
        assert r.state() == nxt
        prev = nxt
    for seq in (0, len(events) // 3, len(events) - 1):
        assert state_at(events, seq) == replay(events[: seq + 1])


@pytest.mark.parametrize(("name", "players"), CASES)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_the_archive_columns_of_random_play_equal_a_plain_reading(
    name: str, players: int, seed: int
) -> None:
    """Random legal play (rejected first draws, lay-offs, every meld kind, the morto) to a low
    target, so that the match ends: the columns collected in the compiled replay loop equal the
    ones read event by event (tests/unit/test_columns.py; retractions come from the examples
    there, as random play never opens short while vulnerable)."""
    from buraco_log.events import MatchEnded
    from tests.unit.columns import check_match

    events = random_match(rules_for(name, target=300), players, seed, max_hands=12)
    if not isinstance(events[-1], MatchEnded):
        return  # the hands ran out before the target: nothing finished to collect
    check_match(events)
