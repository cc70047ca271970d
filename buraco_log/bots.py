"""Bots that choose among the engine's legal moves: a random one and a heuristic one.

A bot sees the full ``State`` (that is what ``legal_moves`` takes), but the heuristic bot reads
only what its seat could see: its own hand, the table, the open discard pile and the counts.
Every choice is one of the moves it was offered, so a bot can never play an illegal move.

Core module: stdlib and msgspec only.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol

from buraco_log.cards import JOKER, RANK, SUIT, Card
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
from buraco_log.melds import MeldError, read_meld
from buraco_log.rules import Rules
from buraco_log.state import Meld, State


class Bot(Protocol):
    """Chooses one of ``moves`` (never empty) for the player to move in ``state``."""

    name: str

    def choose(self, state: State, moves: Sequence[AnyEvent], rng: random.Random) -> AnyEvent: ...


class RandomBot:
    """Random legal moves, with one bias so that all-random tables still finish matches: when it
    can lay cards it does so three times in four (uniform among melds and lay-offs); otherwise
    it picks uniformly among the other moves."""

    name = "random"

    def choose(self, state: State, moves: Sequence[AnyEvent], rng: random.Random) -> AnyEvent:
        if len(moves) == 1:
            return moves[0]
        laying = [m for m in moves if isinstance(m, (MeldLaid, CardsLaidOff))]
        if laying and (len(laying) == len(moves) or rng.random() < 0.75):
            return laying[rng.randrange(len(laying))]
        rest = [m for m in moves if not isinstance(m, (MeldLaid, CardsLaidOff))]
        return rest[rng.randrange(len(rest))]


def _is_wild(card: Card) -> bool:
    # A 2 may stand as itself in a run of its suit; the heuristic treats every 2 as a wild.
    return card == JOKER or RANK[card] == 2


class HeuristicBot:
    """Plays like a careful beginner.

    - Lays every meld and lay-off it can, longest and cleanest first, and saves wild cards for
      melds that reach a canastra or for going out. Under vulnerability it lays its opening only
      when the melds at hand reach the minimum.
    - Takes the pile when its top card can be used at once, or when the pile is large and fits
      the hand.
    - Goes out (and takes the morto) whenever the rules allow: emptying the hand is preferred to
      any other move.
    - Discards the card least useful to it and least useful to the next player: never a card
      that the next player's side can lay off, and a wild only when nothing else is left.
    """

    name = "heuristic"

    def __init__(self) -> None:
        # Cards a meld accepts one at a time, by the meld's cards: melds change rarely.
        self._accepts: dict[tuple[Card, ...], frozenset[Card]] = {}
        self._rules: Rules | None = None
        # (hand, turn count) of the last retracted opening: no second try in that turn.
        self._retracted: tuple[int, int] = (-1, -1)
        # Stall guard: with a free pile two players can pass it back and forth forever, so after
        # a few of its turns with the stock unchanged the bot draws from the stock instead.
        self._stock_seen: tuple[int, int] = (-1, -1)
        self.stalled = 0

    def choose(self, state: State, moves: Sequence[AnyEvent], rng: random.Random) -> AnyEvent:
        if len(moves) == 1:
            if isinstance(moves[0], OpeningRetracted):
                self._retracted = (state.hand, state.turns)
            return moves[0]
        rules = state.rules
        assert rules is not None
        if rules is not self._rules:
            self._rules = rules
            self._accepts.clear()
        elif len(self._accepts) > 4096:
            self._accepts.clear()
        if state.phase == "draw":
            seen = (state.hand, len(state.stock))
            self.stalled = self.stalled + 1 if seen == self._stock_seen else 0
            self._stock_seen = seen
        ctx = _Context(self, state, rules, moves)
        best = moves[0]
        best_score = float("-inf")
        for move in moves:
            s = ctx.score(move)
            if s > best_score:
                best, best_score = move, s
        if isinstance(best, OpeningRetracted):
            self._retracted = (state.hand, state.turns)
        return best

    def accepts(self, cards: tuple[Card, ...], rules: Rules) -> frozenset[Card]:
        """Card codes that can be laid off alone onto a meld of ``cards``."""
        got = self._accepts.get(cards)
        if got is None:
            got = _accepted_cards(cards, rules)
            self._accepts[cards] = got
        return got


def _accepted_cards(cards: tuple[Card, ...], rules: Rules) -> frozenset[Card]:
    try:
        reading = read_meld(cards, rules)
    except MeldError:
        return frozenset()
    candidates: set[Card] = set()
    wilds: list[Card] = [] if reading.wild is not None else [JOKER, 2, 18, 34, 50]
    if reading.kind == "set":
        candidates.update(s * 16 + reading.rank for s in range(4))
    else:
        s = reading.suit
        for pos in (reading.lo - 1, reading.hi + 1, reading.gap):
            if pos is not None and 1 <= pos <= 14:
                candidates.add(s * 16 + (1 if pos == 14 else pos))
        # A same-suit 2 can be natural next to the ace or the 3.
        candidates.add(s * 16 + 2)
    candidates.update(wilds)
    out = set()
    for c in candidates:
        try:
            read_meld((*cards, c), rules)
        except MeldError:
            continue
        out.add(c)
    return frozenset(out)


class _Context:
    """What the heuristic needs about one decision, computed once per decision."""

    def __init__(
        self, bot: HeuristicBot, state: State, rules: Rules, moves: Sequence[AnyEvent]
    ) -> None:
        self.bot = bot
        self.moves = moves
        self.state = state
        self.rules = rules
        self.seat = seat = state.turn
        self.players = n = len(state.players)
        self.side = side = state.sides[seat]
        self.hand = state.hands[seat]
        self.my_melds: tuple[Meld, ...] = state.melds[side] if state.melds else ()
        nxt = state.sides[(seat + 1) % n]
        self.next_melds: tuple[Meld, ...] = state.melds[nxt] if nxt != side else ()
        self.points = rules.point_table()
        self.can_go_out = self._can_go_out()

    def _can_go_out(self) -> bool:
        st, rules, side = self.state, self.rules, self.side
        morto_left = rules.morto and not st.morto_taken[side]
        has_canastra = any(m.canastra is not None for m in self.my_melds)
        if morto_left:
            return not rules.morto_needs_canastra or has_canastra
        return not rules.go_out_needs_canastra or has_canastra

    # --- scoring of each kind of move ----------------------------------------------------

    def score(self, move: AnyEvent) -> float:
        if isinstance(move, (WentOut, MortoTaken)):
            return 1000.0
        if isinstance(move, (CardDrawn, HandEnded)):
            return 0.0  # the stock is out: end the hand unless the pile pays
        if isinstance(move, PileTaken):
            return self.pile_value()
        if isinstance(move, MeldLaid):
            return self.meld_value(move.cards)
        if isinstance(move, CardsLaidOff):
            return self.layoff_value(move.meld, move.cards)
        if isinstance(move, CardDiscarded):
            return self.discard_value(move.card)
        if isinstance(move, FirstDrawRejected):
            return 1.0 if self.keep_value(move.card, self.hand) < 6 else -1.0
        if isinstance(move, OpeningRetracted):
            return -500.0
        return -1000.0

    def after_size_penalty(self, used: int) -> float:
        left = len(self.hand) - used
        if left == 1 and not self.can_go_out:
            return 200.0  # one card left that cannot be discarded: do not get stuck
        return 0.0

    def meld_value(self, cards: tuple[Card, ...]) -> float:
        st, side = self.state, self.side
        if st.vulnerable and st.vulnerable[side] and not st.opened[side]:
            if self.bot._retracted == (st.hand, st.turns):
                return -5000.0  # retracted this turn already: wait for a better hand
            if not st.opening_points and self.opening_reach() < st.opening_min[side]:
                return -5000.0
        n = len(cards)
        wilds = sum(1 for c in cards if _is_wild(c))
        value = 20.0 + 4.0 * n + 0.2 * sum(self.points[c] for c in cards)
        if n >= self.rules.canastra_size:
            value += 150.0 if not wilds else 80.0
        elif wilds:
            value -= 14.0
        if RANK[cards[0]] == RANK[cards[1]] and not self.rules.canastra_from_sets:
            value -= 10.0  # sets never grow into canastras here
        return value - self.after_size_penalty(n)

    def opening_reach(self) -> int:
        """Points of disjoint offered melds, longest first: enough for a vulnerable opening?"""
        left = list(self.hand)
        total = 0
        melds = sorted(
            (m.cards for m in self.moves if isinstance(m, MeldLaid)), key=len, reverse=True
        )
        for cards in melds:
            rest = left.copy()
            try:
                for c in cards:
                    rest.remove(c)
            except ValueError:
                continue
            left = rest
            total += sum(self.points[c] for c in cards)
        return total

    def layoff_value(self, meld_index: int, cards: tuple[Card, ...]) -> float:
        meld = next((m for m in self.my_melds if m.id == meld_index), None)
        if meld is None and 0 <= meld_index < len(self.my_melds):
            meld = self.my_melds[meld_index]
        n = len(cards)
        wilds = sum(1 for c in cards if _is_wild(c))
        value = 25.0 + 5.0 * n
        if meld is not None:
            size = len(meld.cards)
            k = self.rules.canastra_size
            if size < k <= size + n:
                value += 150.0 if not wilds and meld.canastra is None else 90.0
            elif size < k:
                value += 6.0 * size  # grow the melds closest to a canastra first
            if wilds:
                if meld.canastra == "clean" or meld.canastra in ("royal", "ace_to_ace"):
                    value -= 220.0  # never spoil a clean canastra
                elif size + n < k and len(self.hand) > 3:
                    value -= 40.0  # keep wilds for completing canastras
        return value - self.after_size_penalty(n)

    def keep_value(self, card: Card, hand: Sequence[Card]) -> float:
        if _is_wild(card):
            return 60.0
        value = 0.0
        r, s = RANK[card], SUIT[card]
        same_rank = 0
        for c in hand:
            if c == JOKER or RANK[c] == 2:
                continue
            if RANK[c] == r:
                same_rank += 1
            elif SUIT[c] == s:
                d = abs(RANK[c] - r)
                if r == 1 or RANK[c] == 1:  # the ace also sits above the king
                    d = min(d, abs((14 if r == 1 else r) - (14 if RANK[c] == 1 else RANK[c])))
                if d == 1:
                    value += 7.0
                elif d == 2:
                    value += 3.0
        if card in hand:
            same_rank -= 1  # the card itself
        value += 9.0 * same_rank
        for m in self.my_melds:
            if card in self.bot.accepts(m.cards, self.rules):
                value += 30.0
                break
        return value - self.points[card] / 10.0

    def danger(self, card: Card) -> float:
        """How much the next player gains from this discard."""
        d = 0.0
        for m in self.next_melds:
            if card in self.bot.accepts(m.cards, self.rules):
                d += 40.0 + 2.0 * len(self.state.pile)
                break
        if self.state.pile and RANK[self.state.pile[-1]] == RANK[card]:
            d += 4.0
        return d

    def discard_value(self, card: Card) -> float:
        return -10.0 - self.keep_value(card, self.hand) - self.danger(card)

    def pile_value(self) -> float:
        pile = self.state.pile
        if not pile or self.bot.stalled >= 3:
            return -1.0
        if len(self.hand) + len(pile) < 5 and not self.can_go_out:
            return -1.0  # melding the top would leave too few cards to discard
        top = pile[-1]
        hand = self.hand
        top_used = any(top in self.bot.accepts(m.cards, self.rules) for m in self.my_melds)
        if not top_used and not _is_wild(top):
            pairs = [c for c in hand if not _is_wild(c) and RANK[c] == RANK[top]]
            if len(pairs) >= 2 and (self.rules.canastra_from_sets or len(pile) > 3):
                top_used = True
            elif self.keep_value(top, hand) >= 10.0:
                top_used = _run_with(top, hand)
        if self.rules.pile_pickup == "must_use_top" and not top_used:
            return -1.0
        useful = sum(1 for c in pile if _is_wild(c) or self.keep_value(c, hand) >= 7.0)
        value = (8.0 if top_used else -6.0) + 3.0 * useful - 1.0 * (len(pile) - useful)
        return value


def _run_with(top: Card, hand: Sequence[Card]) -> bool:
    """Two cards of the hand make a natural run of three with ``top``."""
    s, r = SUIT[top], RANK[top]
    have = {RANK[c] for c in hand if c != JOKER and SUIT[c] == s and RANK[c] != 2}
    if 1 in have:
        have.add(14)  # the ace also sits above the king
    for p in (r, 14) if r == 1 else (r,):
        if {p - 2, p - 1} <= have or {p - 1, p + 1} <= have or {p + 1, p + 2} <= have:
            return True
    return False


BOTS: dict[str, type[RandomBot] | type[HeuristicBot]] = {
    "random": RandomBot,
    "heuristic": HeuristicBot,
}


def make_bot(name: str) -> Bot:
    """A fresh bot by name (``random`` or ``heuristic``)."""
    try:
        return BOTS[name]()
    except KeyError:
        raise ValueError(f"unknown bot {name!r} (known: {', '.join(BOTS)})") from None
