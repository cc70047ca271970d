"""Constructed positions for the review's sanity checks: small legal logs of classic, 2 players."""

from __future__ import annotations

from collections import Counter

from buraco_log.cards import deck, parse_card
from buraco_log.events import (
    AnyEvent,
    CardDiscarded,
    CardDrawn,
    HandStarted,
    MatchStarted,
    MeldLaid,
    Player,
)
from buraco_log.reducer import replay
from buraco_log.rules import PRESETS


def cards(text: str) -> tuple[int, ...]:
    return tuple(parse_card(c) for c in text.split())


def deal(h0: str, h1: str, top: str) -> HandStarted:
    """Hand 0 dealt by seat 1 (so seat 0 plays first): the two hands, then the stock with
    ``top`` on top and the rest of the material below it in a fixed order."""
    hands = (cards(h0), cards(h1))
    first = cards(top)
    rest = Counter(deck(0))
    rest.subtract(Counter([*hands[0], *hands[1], *first]))
    assert all(v >= 0 for v in rest.values()), rest
    stock = (*first, *sorted(rest.elements()))
    return HandStarted(hand=0, dealer=1, hands=hands, stock=stock, seq=1)


def start(name: str) -> MatchStarted:
    return MatchStarted(match_id=name, rules=PRESETS["classic"],
                        players=(Player("ana"), Player("bia")), sides=(0, 1), first_dealer=1,
                        seq=0)


def bad_discard() -> tuple[list[AnyEvent], int]:
    """Seat 1 has a six-card heart run (3h-8h) on the table; seat 0 then discards the 9h, which
    seat 1 takes with the pile to make a clean canastra. Returns the events and that seq."""
    hs = deal("9h Kc Qd 4c 7s Js 3d Tc 5d As 8c", "3h 4h 5h 6h 7h 8h Kd 5s 9d Jc Qs",
              "Jd 3s 4s")
    evs: list[AnyEvent] = [
        start("bad-discard"), hs,
        CardDrawn(0, parse_card("Jd"), seq=2), CardDiscarded(0, parse_card("7s"), seq=3),
        CardDrawn(1, parse_card("3s"), seq=4), MeldLaid(1, cards("3h 4h 5h 6h 7h 8h"), 0, seq=5),
        CardDiscarded(1, parse_card("Jc"), seq=6),
        CardDrawn(0, parse_card("4s"), seq=7), CardDiscarded(0, parse_card("9h"), seq=8),
    ]
    replay(evs)  # legal
    return evs, 8


def refused_pile() -> tuple[list[AnyEvent], int]:
    """Seat 1 discards Kh, Qh and 9s while seat 0 holds Kc Kd, Qc Qd and 7s 8s; seat 0 then
    draws from the stock instead of taking the six-card pile (three melds at once). Returns the
    events and the seq of that draw."""
    hs = deal("7s 8s Qc Qd Kc Kd 4h 5h 3c 9d Jd", "Kh Qh 9s Ad Ah 6h 7c 8d Tc 3s 5s",
              "Ac 3d 6d 4d Ts 5d 4c")
    d, dc = CardDrawn, CardDiscarded
    p = parse_card
    evs: list[AnyEvent] = [
        start("refused-pile"), hs,
        d(0, p("Ac"), seq=2), dc(0, p("3c"), seq=3),
        d(1, p("3d"), seq=4), dc(1, p("Kh"), seq=5),
        d(0, p("6d"), seq=6), dc(0, p("9d"), seq=7),
        d(1, p("4d"), seq=8), dc(1, p("Qh"), seq=9),
        d(0, p("Ts"), seq=10), dc(0, p("Jd"), seq=11),
        d(1, p("5d"), seq=12), dc(1, p("9s"), seq=13),
        d(0, p("4c"), seq=14), dc(0, p("6d"), seq=15),
    ]
    replay(evs)
    return evs, 14
