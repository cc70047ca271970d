"""Test helpers: deal and play random legal matches without the dealer module."""

from __future__ import annotations

import random

from buraco_log.cards import deck
from buraco_log.events import (
    AnyEvent,
    CardDrawn,
    CardsLaidOff,
    HandStarted,
    MatchStarted,
    MeldLaid,
    MortoTaken,
    OpeningRetracted,
    Player,
    WentOut,
)
from buraco_log.moves import legal_moves
from buraco_log.reducer import Replayer
from buraco_log.rules import Rules, preset, side_of


def start(rules: Rules | str, players: int, match_id: str = "t") -> MatchStarted:
    r = preset(rules) if isinstance(rules, str) else rules
    return MatchStarted(
        match_id,
        r,
        tuple(Player(f"p{i}") for i in range(players)),
        tuple(side_of(s, players) for s in range(players)),
        seq=0,
    )


def deal(
    rules: Rules, players: int, hand: int, dealer: int, rng: random.Random, seq: int
) -> HandStarted:
    cards = deck(rules.jokers)
    rng.shuffle(cards)
    hands = []
    for _ in range(players):
        hands.append(tuple(cards[: rules.hand_size]))
        del cards[: rules.hand_size]
    mortos = []
    if rules.morto:
        for _ in range(rules.sides(players)):
            mortos.append(tuple(cards[: rules.morto_size]))
            del cards[: rules.morto_size]
    upcard = cards.pop(0) if rules.initial_upcard else None
    return HandStarted(hand, dealer, tuple(hands), tuple(mortos), tuple(cards), upcard, seq=seq)


def _pick(moves: list[AnyEvent], rng: random.Random, eager: bool, no_lay: bool) -> AnyEvent:
    """Uniform over legal moves, or (``eager``) laying cards down whenever possible, so that
    hands end by going out and matches reach their target."""
    if eager:
        retract = [m for m in moves if isinstance(m, OpeningRetracted)]
        if retract:
            return retract[0]
        # After taking an opening back, stop laying this turn, or meld-retract loops forever.
        # (Unless laying is all there is: a must-use-top top card still to be laid.)
        if no_lay:
            quiet = [m for m in moves if not isinstance(m, (MeldLaid, CardsLaidOff))]
            return rng.choice(quiet or moves)
        laying = [m for m in moves if isinstance(m, (MeldLaid, CardsLaidOff, MortoTaken, WentOut))]
        if laying:
            return rng.choice(laying)
        draws = [m for m in moves if isinstance(m, CardDrawn)]
        if draws and rng.random() < 0.7:
            return draws[0]
    return rng.choice(moves)


def random_match(
    rules: Rules | str,
    players: int,
    seed: int,
    *,
    max_hands: int = 3,
    max_turn_events: int = 4000,
    eager: bool = False,
    listed: dict[int, list[AnyEvent]] | None = None,
) -> list[AnyEvent]:
    """A random legal match. Stops after ``max_hands`` hands even if the match is not over.
    ``listed``: filled with the legal moves of each state a move was chosen in, by its seq
    (a test that checks them need not list them again)."""
    r = preset(rules) if isinstance(rules, str) else rules
    rng = random.Random(seed)
    events: list[AnyEvent] = [start(r, players)]
    rep = Replayer()
    rep.step(events[0])
    hands = 0
    no_lay = False
    while True:
        state = rep.state()
        if state.phase == "over":
            break
        if state.phase == "between":
            if hands >= max_hands:
                break
            ev: AnyEvent = deal(
                r,
                players,
                state.hand + 1,
                (state.first_dealer + state.hand + 1) % players,
                rng,
                state.seq + 1,
            )
            hands += 1
        else:
            moves = legal_moves(state)
            assert moves, f"no legal move in phase {state.phase} at seq {state.seq}"
            if listed is not None:
                listed[state.seq] = list(moves)
            ev = _pick(moves, rng, eager, no_lay)
            no_lay = isinstance(ev, OpeningRetracted) or (no_lay and state.turn == turn_of(ev))
        rep.step(ev)
        events.append(ev)
        if len(events) > max_turn_events * max_hands:
            break
    return events


def turn_of(ev: AnyEvent) -> int | None:
    return getattr(ev, "seat", None)
