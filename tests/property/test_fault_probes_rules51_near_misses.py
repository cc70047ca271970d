"""``legal_moves`` against the reducer on the moves a referee sees disputed: near misses.

``test_legal_moves_exact`` and ``test_scenarios_probe42_differential`` try random melds,
lay-offs and discards; a dispute is rarely random. It is a listed move with one thing
different: one card swapped for another card the player holds, the move made under another
seat, a lay-off sent to another meld (the partner's, an opponent's, one not laid), a meld
numbered wrong, a pile taken naming another count or top, a draw naming another stock card, the
morto taken the other way. Each near miss the reducer accepts must be listed by ``legal_moves``,
and each it refuses must not be (both directions), in every preset and a few house-rule knob
combinations no preset has together; every move ``quick_moves`` lists is accepted too.

The default run checks one short match of a few of them; the slow run every preset, player
count and combination over several seeds.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator

import msgspec
import pytest

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
)
from buraco_log.moves import legal_moves, quick_moves
from buraco_log.reducer import Replayer, validate
from buraco_log.rules import PRESETS, Rules, derive
from buraco_log.state import State
from tests.play import random_match
from tests.property.legal_check import accepted, key
from tests.property.replays import rules_for

# House rules mixing knobs no preset has together (RULES.md §11: any field may be overridden).
KNOBS: dict[str, Rules] = {
    "biriba+must_use_top": derive(rules_for("biriba"), pile_pickup="must_use_top"),
    "burraco+indirect+one_set": derive("burraco", morto_direct=False, max_sets_per_rank=1),
    "mega+sets+semi_clean+ace_to_ace": derive("mega", canastra_from_sets=True, semi_clean=True,
                                              ace_both_ends=True, royal_canastras=True),
    "thirteen+free+floor2": derive("thirteen", pile_pickup="free", stock_floor=2),
    "classic+morto+needs_canastra": derive(rules_for("classic"), morto=True,
                                           morto_needs_canastra=True,
                                           go_out_needs_canastra=True, player_counts=(2, 3, 4)),
}
CASES = [(name, n) for name, r in PRESETS.items() for n in r.player_counts] + [
    (name, n) for name, r in KNOBS.items() for n in r.player_counts]


def rules_of(name: str) -> Rules:
    return KNOBS[name] if name in KNOBS else rules_for(name)


def _cards_of(move: AnyEvent) -> tuple[int, ...] | None:
    if isinstance(move, (MeldLaid, CardsLaidOff, OpeningRetracted)):
        return tuple(move.cards)
    if isinstance(move, (CardDiscarded, FirstDrawRejected, CardDrawn)):
        return (move.card,)
    return None


def _with_cards(move: AnyEvent, cards: tuple[int, ...]) -> AnyEvent:
    if isinstance(move, (MeldLaid, CardsLaidOff, OpeningRetracted)):
        return msgspec.structs.replace(move, cards=cards)
    return msgspec.structs.replace(move, card=cards[0])  # type: ignore[call-arg]


def near_misses(state: State, move: AnyEvent, rng: random.Random) -> Iterator[AnyEvent]:
    """``move`` with one thing changed: a card, the seat, the meld, the count or top, the kind."""
    seat = state.turn
    hand = state.hands[seat]
    cards = _cards_of(move)
    if cards is not None and not isinstance(move, CardDrawn):
        for i in range(len(cards)):
            for other in sorted(set(hand)):  # one card swapped for another card held
                if other != cards[i]:
                    yield _with_cards(move, (*cards[:i], other, *cards[i + 1:]))
            if rng.random() < 0.3:  # a card the player does not hold
                stranger = next((c for c in state.stock if c not in hand), None)
                if stranger is not None:
                    yield _with_cards(move, (*cards[:i], stranger, *cards[i + 1:]))
    if isinstance(move, CardDrawn):
        for c in set(state.stock[:3] + state.stock[-3:]):
            yield msgspec.structs.replace(move, card=c)
    for other_seat in range(len(state.players)):
        if other_seat != seat and hasattr(move, "seat"):
            yield msgspec.structs.replace(move, seat=other_seat)  # type: ignore[call-arg]
    if isinstance(move, CardsLaidOff):
        ids = {m.id for side in state.melds for m in side} | {move.meld + 1, -1, 99}
        for target in sorted(ids - {move.meld}):
            yield msgspec.structs.replace(move, meld=target)
    if isinstance(move, MeldLaid):
        mine = len(state.melds[state.sides[seat]])
        for target in {mine - 1, mine + 1, None} - {move.meld}:
            yield msgspec.structs.replace(move, meld=target)
    if isinstance(move, PileTaken):
        for count in (move.count - 1, move.count + 1):
            yield msgspec.structs.replace(move, count=count)
        for c in set(state.pile[:-1]):
            if c != move.top:
                yield msgspec.structs.replace(move, top=c)
    if isinstance(move, MortoTaken):
        yield msgspec.structs.replace(move, direct=not move.direct)
        yield WentOut(seat, seq=move.seq)
    if isinstance(move, HandEnded):  # the other end of a hand
        yield msgspec.structs.replace(
            move, reason="went_out" if move.reason == "stock_out" else "stock_out")
    if isinstance(move, WentOut):
        yield MortoTaken(seat, True, None, seq=move.seq)
        yield MortoTaken(seat, False, None, seq=move.seq)


def _key(state: State, move: AnyEvent) -> tuple[object, ...]:
    """``key``, a meld with no number read as the next one (the number is optional)."""
    if isinstance(move, MeldLaid) and move.meld is None:
        move = msgspec.structs.replace(move, meld=len(state.melds[state.sides[move.seat]]))
    return key(move)


def check_near_misses(state: State, rng: random.Random, per_state: int) -> int:
    """Both directions on near misses of up to ``per_state`` listed moves; how many checked."""
    listed = legal_moves(state)
    keys = {key(m) for m in listed}
    for move in quick_moves(state):
        validate(state, move)  # the bots' list: every move accepted
    picked = listed if len(listed) <= per_state else rng.sample(listed, per_state)
    checked = 0
    for move in picked:
        validate(state, move)
        for miss in near_misses(state, move, rng):
            ok = accepted(state, miss)
            assert ok == (_key(state, miss) in keys), (
                f"seq {state.seq} phase {state.phase}: {miss} is "
                + ("accepted by the reducer but not listed" if ok else
                   "listed but refused by the reducer")
                + f" (near miss of {move})")
            checked += 1
    return checked


def play_and_check(name: str, players: int, seed: int, states: int, per_state: int) -> int:
    rules = rules_of(name)
    events = random_match(rules, players, seed, max_hands=1, eager=seed % 2 == 0)
    rng = random.Random(seed)
    interesting = [i for i in range(2, len(events))]
    chosen = set(rng.sample(interesting, min(states, len(interesting))))
    rep = Replayer()
    checked = 0
    for i, ev in enumerate(events):
        s = rep.state()
        taken_top = s.pile_top is not None  # a must-use-top top card still to be laid
        if (i in chosen or taken_top or s.phase in ("emptied", "out")) and s.phase in (
                "draw", "play", "emptied", "out"):
            checked += check_near_misses(s, rng, per_state)
        rep.step(ev)
    return checked


QUICK = [("thirteen", 4), ("biriba", 3), ("burraco+indirect+one_set", 2)]


@pytest.mark.parametrize(("name", "players"), QUICK)
def test_near_misses_of_listed_moves_are_listed_exactly_when_accepted(
        name: str, players: int) -> None:
    assert play_and_check(name, players, seed=51, states=2, per_state=4) > 0


@pytest.mark.slow
@pytest.mark.parametrize(("name", "players"), CASES)
@pytest.mark.parametrize("seed", range(4))
def test_near_misses_of_listed_moves_are_listed_exactly_when_accepted_everywhere(
        name: str, players: int, seed: int) -> None:
    assert play_and_check(name, players, seed, states=12, per_state=25) > 0


def test_the_check_fails_on_a_list_that_misses_a_move(monkeypatch: pytest.MonkeyPatch) -> None:
    """A list without its last discard: that discard is a near miss of the others, accepted
    and not listed."""
    events = random_match(rules_of("biriba"), 2, 7, max_hands=1)
    rep = Replayer()
    for ev in events:
        s = rep.state()
        if s.phase == "play" and len({m for m in legal_moves(s)
                                      if isinstance(m, CardDiscarded)}) > 1:
            break
        rep.step(ev)
    full = legal_moves(s)
    last = max(i for i, m in enumerate(full) if isinstance(m, CardDiscarded))
    monkeypatch.setattr(sys.modules[__name__], "legal_moves",
                        lambda state: full[:last] + full[last + 1:])
    with pytest.raises(AssertionError, match="accepted by the reducer but not listed"):
        check_near_misses(s, random.Random(0), per_state=len(full))
