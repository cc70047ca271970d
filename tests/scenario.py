"""Given/when/then for the reducer: build a deal by hand and play it move by move.

    s = Scenario("classic", hands={0: "7h 7s 7d 4c", 1: "..."}, stock="Kh 3c")
    s.draw().meld("7h 7s 7d").discard("4c")
    with s.illegal("turn.not_your_turn"):
        s.discard("Kh", seat=0)

Cards not named are filled in from what is left of the material, so a test names only the
cards its rule is about.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from buraco_log.cards import Style, deck, format_cards, parse_cards
from buraco_log.errors import IllegalMoveError
from buraco_log.events import (
    AnyEvent,
    CardDiscarded,
    CardDrawn,
    CardsLaidOff,
    FirstDrawRejected,
    HandEnded,
    HandStarted,
    MatchEnded,
    MeldLaid,
    MortoTaken,
    OpeningRetracted,
    PileTaken,
    WentOut,
)
from buraco_log.reducer import Replayer
from buraco_log.rules import Rules, derive, preset
from buraco_log.state import State
from tests.play import start

# Filler cards come from the far end of the material (kings and queens of clubs last), in an
# order that rarely forms melds with the cards tests name.
_FILLER_ORDER = sorted(deck(4), key=lambda c: ((c * 7) % 61, c))


def build_deal(
    rules: Rules,
    players: int,
    hands: dict[int, str],
    stock: str,
    mortos: dict[int, str],
    upcard: str | None,
    hand_no: int = 0,
    dealer: int | None = None,
) -> HandStarted:
    left = Counter(deck(rules.jokers))
    named: dict[str, Any] = {}

    def take(text: str) -> list[int]:
        cards = list(parse_cards(text))
        for c in cards:
            if left[c] <= 0:
                raise ValueError(f"scenario names more copies of {c} than the material has")
            left[c] -= 1
        return cards

    hand_lists = {s: take(hands.get(s, "")) for s in range(players)}
    morto_lists = {
        i: take(mortos.get(i, "")) for i in range(rules.sides(players) if rules.morto else 0)
    }
    up = take(upcard)[0] if upcard else None
    stock_top = take(stock)
    pool: list[int] = []
    order = list(dict.fromkeys(_FILLER_ORDER))
    while any(left[c] > 0 for c in order):
        for c in order:  # one copy of each card per pass: no accidental pairs up front
            if left[c] > 0:
                pool.append(c)
                left[c] -= 1
    for s in range(players):
        while len(hand_lists[s]) < rules.hand_size:
            hand_lists[s].append(pool.pop())
    for i in morto_lists:
        while len(morto_lists[i]) < rules.morto_size:
            morto_lists[i].append(pool.pop())
    if rules.initial_upcard and up is None:
        up = pool.pop()
    named["stock"] = tuple(stock_top) + tuple(reversed(pool))
    d = dealer if dealer is not None else (players - 1 + hand_no) % players
    return HandStarted(
        hand_no,
        d,
        tuple(tuple(hand_lists[s]) for s in range(players)),
        tuple(tuple(morto_lists[i]) for i in sorted(morto_lists)),
        named["stock"],
        up,
        seq=1,
    )


class Scenario:
    """One hand of one match, built by hand. Seat 0 plays first (the dealer is the last seat)."""

    def __init__(
        self,
        rules: Rules | str,
        players: int = 2,
        *,
        hands: dict[int, str] | None = None,
        stock: str = "",
        mortos: dict[int, str] | None = None,
        upcard: str | None = None,
        match_id: str = "t",
        **overrides: Any,
    ) -> None:
        r = preset(rules) if isinstance(rules, str) else rules
        if overrides:
            r = derive(r, **overrides)
        self.rules = r
        self.players = players
        ms = start(r, players, match_id)
        from msgspec.structs import replace

        ms = replace(ms, first_dealer=players - 1)
        self.events: list[AnyEvent] = [ms]
        self.rep = Replayer()
        self.rep.step(ms)
        hs = build_deal(r, players, hands or {}, stock, mortos or {}, upcard)
        self.events.append(hs)
        self.rep.step(hs)

    # --------------------------------------------------------------- state
    @property
    def state(self) -> State:
        return self.rep.state()

    @property
    def turn(self) -> int:
        return self.rep._t.turn

    def hand(self, seat: int) -> tuple[int, ...]:
        return self.state.hands[seat]

    def text(self, cards: str) -> str:
        """``cards`` as the engine's messages name them: Burako's tiles (``13r``), else cards."""
        style: Style = "tiles" if self.rules.rendering == "tiles" else "ascii"
        return format_cards(parse_cards(cards), style)

    # --------------------------------------------------------------- moves
    def push(self, ev: AnyEvent) -> Scenario:
        self.rep.step(ev)
        self.events.append(ev)
        return self

    def _seq(self) -> int:
        return self.rep.seq + 1

    def _seat(self, seat: int | None) -> int:
        return self.turn if seat is None else seat

    def draw(self, card: str | None = None, seat: int | None = None) -> Scenario:
        c = parse_cards(card)[0] if card else self.rep._t.stock[-1]
        return self.push(CardDrawn(self._seat(seat), c, seq=self._seq()))

    def reject(self, card: str | None = None, seat: int | None = None) -> Scenario:
        c = parse_cards(card)[0] if card else self.rep._t.drawn
        assert c is not None
        return self.push(FirstDrawRejected(self._seat(seat), c, seq=self._seq()))

    def take_pile(
        self, count: int | None = None, top: str | None = None, seat: int | None = None
    ) -> Scenario:
        pile = self.rep._t.pile
        n = len(pile) if count is None else count
        t = parse_cards(top)[0] if top else (pile[-1] if pile else 0)
        return self.push(PileTaken(self._seat(seat), n, t, seq=self._seq()))

    def meld(self, cards: str, seat: int | None = None, meld: int | None = None) -> Scenario:
        return self.push(MeldLaid(self._seat(seat), parse_cards(cards), meld, seq=self._seq()))

    def layoff(self, meld: int, cards: str, seat: int | None = None) -> Scenario:
        return self.push(CardsLaidOff(self._seat(seat), meld, parse_cards(cards), seq=self._seq()))

    def retract(self, cards: str | None = None, seat: int | None = None) -> Scenario:
        cs = parse_cards(cards) if cards else tuple(self.rep._t.laid_this_turn)
        return self.push(OpeningRetracted(self._seat(seat), cs, seq=self._seq()))

    def discard(self, card: str, seat: int | None = None) -> Scenario:
        return self.push(CardDiscarded(self._seat(seat), parse_cards(card)[0], seq=self._seq()))

    def morto(self, direct: bool, seat: int | None = None) -> Scenario:
        return self.push(MortoTaken(self._seat(seat), direct, seq=self._seq()))

    def go_out(self, seat: int | None = None) -> Scenario:
        return self.push(WentOut(self._seat(seat), seq=self._seq()))

    def end_hand(self, reason: str = "went_out", scores: tuple[int, ...] | None = None) -> Scenario:
        return self.push(HandEnded(reason, scores, seq=self._seq()))  # type: ignore[arg-type]

    def end_match(self, **kw: Any) -> Scenario:
        return self.push(MatchEnded(seq=self._seq(), **kw))

    def pass_turn(self, discard: str | None = None) -> Scenario:
        """Draw and discard the drawn card (or ``discard``): a turn that changes nothing else."""
        self.draw()
        card = discard if discard else None
        if card is None:
            drawn = self.rep._t.drawn
            assert drawn is not None
            return self.push(CardDiscarded(self.turn, drawn, seq=self._seq()))
        return self.discard(card)

    @contextmanager
    def illegal(self, rule: str) -> Iterator[None]:
        """The move inside must be refused with ``rule``, and leave the state unchanged."""
        before = self.rep.state()
        with pytest.raises(IllegalMoveError) as info:
            yield
        assert info.value.rule == rule, f"expected {rule}, got {info.value.rule}: {info.value}"
        self.last_error = info.value
        assert self.rep.state() == before, "a refused move changed the state"


def refused(s: Scenario, rule: str, words: tuple[str, ...], move: str, *args: object,
            **kw: object) -> None:
    """``move`` is refused with ``rule`` at the next seq, its message saying ``words`` (in any
    case)."""
    seq = s.rep.seq + 1
    with s.illegal(rule):
        getattr(s, move)(*args, **kw)
    assert s.last_error.seq == seq, (s.last_error.seq, seq)
    text = str(s.last_error).lower()
    for w in words:
        assert w.lower() in text, f"{w!r} not in {text!r}"


def carried_in(s: Scenario, totals: tuple[int, ...]) -> Scenario:
    """The scenario's hand in a match carried in at ``totals`` (``TotalsCarried`` first)."""
    import msgspec

    from buraco_log.events import TotalsCarried

    rep = Replayer()
    start, deal = s.events[0], msgspec.structs.replace(s.events[1], seq=2)
    carried = TotalsCarried(totals, seq=1)
    for ev in (start, carried, deal):
        rep.step(ev)
    s.rep, s.events = rep, [start, carried, deal]
    return s
