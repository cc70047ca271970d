"""The exact check of a state's legal moves: every listed move is accepted, every other move
refused."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

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
from buraco_log.reducer import _Table, validate
from buraco_log.state import State


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
