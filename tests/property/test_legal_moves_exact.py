"""``legal_moves`` is exactly what the reducer accepts, for every preset and player count.

Both ways: every listed move is accepted, and every plausible move the reducer accepts is
listed. Plausible moves are drawn at random from the hand (melds and lay-offs of any cards,
discards, pickups, ends of the hand, the morto) and, for short hands, every sub-multiset of the
hand is tried as a meld and as a lay-off on every meld of the side.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from buraco_log.errors import IllegalMoveError
from buraco_log.events import (
    AnyEvent,
    CardDiscarded,
    CardDrawn,
    CardsLaidOff,
    FirstDrawRejected,
    HandEnded,
    MeldLaid,
    MortoTaken,
    OpeningRetracted,
    PileTaken,
    WentOut,
    to_dict,
)
from buraco_log.moves import legal_moves, pile_options, quick_moves
from buraco_log.reducer import Replayer, _Table, validate
from buraco_log.rules import PRESETS
from buraco_log.state import State
from tests.play import random_match
from tests.property.test_replay_properties import rules_for

CASES = [(name, n) for name, r in PRESETS.items() for n in r.player_counts]
SETTINGS = settings(max_examples=1, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def key(move: AnyEvent) -> tuple[object, ...]:
    """A move without its seq and recorded scores; cards as a multiset."""
    d = to_dict(move)
    d.pop("seq", None)
    d.pop("scores", None)
    d.pop("totals", None)
    d.pop("winner", None)
    if d["t"] == "mt":
        d.pop("count", None)  # an optional cross-check: None is accepted too
    if "cards" in d:
        d["cards"] = tuple(sorted(d["cards"]))
    return tuple(sorted((k, str(v)) for k, v in d.items()))


def accepted(state: State, move: AnyEvent) -> bool:
    try:
        validate(state, move)
    except IllegalMoveError:
        return False
    return True


def sub_multisets(cards: tuple[int, ...], most: int) -> Iterator[tuple[int, ...]]:
    for k in range(1, min(most, len(cards)) + 1):
        yield from set(itertools.combinations(sorted(cards), k))


def plausible(state: State, rng: random.Random) -> Iterator[AnyEvent]:
    if state.phase not in ("draw", "play", "emptied") or state.rules is None:
        return
    seq = state.seq + 1
    seat = state.turn
    side = state.sides[seat]
    hand = state.hands[seat]
    melds = state.melds[side]
    yield HandEnded("stock_out", None, seq=seq)
    if state.stock:
        yield CardDrawn(seat, state.stock[0], seq=seq)
    if state.pile:
        yield PileTaken(seat, len(state.pile), state.pile[-1], seq=seq)
    yield MortoTaken(seat, True, None, seq=seq)
    yield MortoTaken(seat, False, None, seq=seq)
    yield WentOut(seat, seq=seq)
    yield OpeningRetracted(seat, state.laid_this_turn, seq=seq)
    for c in set(hand):
        yield CardDiscarded(seat, c, seq=seq)
        yield FirstDrawRejected(seat, c, seq=seq)
    if not hand:
        return
    exhaustive = len(hand) <= 7
    groups: list[tuple[int, ...]] = (
        list(sub_multisets(hand, 7)) if exhaustive
        else [tuple(rng.sample(hand, rng.randint(1, min(6, len(hand))))) for _ in range(60)]
    )
    for cards in groups:
        if len(cards) >= 3:
            yield MeldLaid(seat, cards, len(melds), seq=seq)
        for m in melds:
            yield CardsLaidOff(seat, m.id, cards, seq=seq)


def check_state(state: State, rng: random.Random) -> int:
    listed = legal_moves(state)
    keys = {key(m) for m in listed}
    assert len(keys) == len(listed), "a move is listed twice"
    for move in listed:
        validate(state, move)  # every listed move is accepted
    for move in quick_moves(state):
        assert key(move) in keys, f"quick_moves lists {move}, which legal_moves does not"
    missing = [m for m in plausible(state, rng) if key(m) not in keys and accepted(state, m)]
    assert not missing, f"accepted but not listed at seq {state.seq}: {missing[:3]}"
    if state.phase == "draw":
        options = pile_options(state)
        assert options.may_take == any(isinstance(m, PileTaken) for m in listed)
        if state.pile and state.rules and state.rules.pile_pickup == "must_use_top":
            assert options.may_take == _Table(state).can_take_top(state.turn)
    return len(listed)


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
