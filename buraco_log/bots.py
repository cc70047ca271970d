"""Bots that play legal Buraco: a random one and a heuristic one.

Both choose among the engine's legal moves (``buraco_log.moves.quick_moves``), so neither can
play an illegal move. The heuristic bot also has a fast path, :meth:`HeuristicBot.fast_move`,
that builds its move straight from the table without listing every legal move. Every move it
builds is legal (tests/property/test_fault_probes_rules46.py plays every preset to hold it to
that); the simulator still puts the move through the reducer, and uses the full list when the
fast path declines (rare phases: a short vulnerable opening, a must-use-top pile the table
cannot judge, the end of the stock, a last card that may not be thrown).

The heuristic bot reads only what its seat could see: its own hand, the table, the open
discard pile and the stock count.

Core module: stdlib and msgspec only.
"""

from __future__ import annotations

import itertools
import operator
import random
from collections.abc import Callable, Iterable, Sequence
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
    Player,
    WentOut,
)
from buraco_log.melds import MeldError, read_meld
from buraco_log.rules import Rules
from buraco_log.state import Meld, State


class TableView(Protocol):
    """What the bots read: a frozen ``State`` or the reducer's live table both provide it."""

    @property
    def seq(self) -> int: ...
    @property
    def rules(self) -> Rules | None: ...
    @property
    def phase(self) -> str: ...
    @property
    def hand(self) -> int: ...
    @property
    def turn(self) -> int: ...
    @property
    def turns(self) -> int: ...
    @property
    def players(self) -> Sequence[Player]: ...
    @property
    def sides(self) -> Sequence[int]: ...
    @property
    def hands(self) -> Sequence[Sequence[Card]]: ...
    @property
    def melds(self) -> Sequence[Sequence[Meld]]: ...
    @property
    def pile(self) -> Sequence[Card]: ...
    @property
    def stock(self) -> Sequence[Card]: ...
    @property
    def morto_taken(self) -> Sequence[bool]: ...
    @property
    def vulnerable(self) -> Sequence[bool]: ...
    @property
    def opened(self) -> Sequence[bool]: ...
    @property
    def opening_min(self) -> Sequence[int]: ...
    @property
    def opening_points(self) -> int: ...
    @property
    def pile_top(self) -> Card | None: ...
    @property
    def may_reject(self) -> bool: ...
    @property
    def rejected(self) -> bool: ...
    @property
    def drawn(self) -> Card | None: ...
    @property
    def laid_this_turn(self) -> Sequence[Card]: ...
    @property
    def mortos(self) -> Sequence[Sequence[Card]]: ...
    @property
    def emptied_by(self) -> str | None: ...


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


_TWOS = (2, 18, 34, 50)
_WILDS: frozenset[Card] = frozenset((JOKER, *_TWOS))
_ACE_RANKS = (1, 14)
_FORBIDDEN = -5000.0  # a move the bot must not make (it would get stuck or break a plan)
# The best a discard can score: -10 minus a keep value that is at least -(15 points) / 10.
_DISCARD_CEILING = -8.5


def _is_wild(card: Card) -> bool:
    # A 2 may stand as itself in a run of its suit; the heuristic treats every 2 as a wild.
    return card in _WILDS


class HeuristicBot:
    """Plays like a careful beginner.

    - Lays every meld and lay-off it can, longest and cleanest first, growing the melds closest
      to a canastra, and saves wild cards for melds that reach a canastra or for going out.
      Under vulnerability it lays its opening only when the melds at hand reach the minimum.
    - Takes the pile when its top card can be used at once and the pile fits the hand.
    - Goes out, and takes the morto, whenever the rules allow: emptying the hand beats any move.
    - Discards the card least useful to itself and to the next player: never willingly a card
      that the next player's side can lay off, and a wild only when nothing else is left.
    - Never strands itself with one card it may not discard, and ends a hand whose stock is out
      rather than passing the pile back and forth.
    """

    name = "heuristic"

    def __init__(self, cache: MeldKnowledge | None = None) -> None:
        # Bots of one match may share a cache: they see the same melds.
        self.cache = cache if cache is not None else MeldKnowledge()
        # (hand, turn count) of the last retracted opening: no second try in that turn.
        self._retracted: tuple[int, int] = (-1, -1)
        # Stall guard: with a free pile two players can pass it back and forth forever, so after
        # a few of its turns with the stock unchanged the bot draws from the stock instead.
        self._stock_seen: tuple[int, int] = (-1, -1)
        self._noted: tuple[int, int] = (-1, -1)  # (hand, seq) of the last draw turn counted
        self.stalled = 0

    # --- entry points ------------------------------------------------------------------------

    def choose(self, state: State, moves: Sequence[AnyEvent], rng: random.Random) -> AnyEvent:
        if state.phase == "draw":
            self._note_draw_turn(state)
        if len(moves) == 1:
            best = moves[0]
        else:
            ctx = self._context(state, moves)
            best = moves[0]
            best_score = float("-inf")
            for move in moves:
                s = ctx.score(move)
                if s > best_score:
                    best, best_score = move, s
        if isinstance(best, OpeningRetracted):
            self._retracted = (state.hand, state.turns)
        return best

    def fast_move(
        self,
        table: TableView,
        stock_top: Card | None,
        end_scores: Callable[[], tuple[int, ...]] | None = None,
    ) -> AnyEvent | None:
        """The bot's move built straight from ``table``, or None when the full list of legal
        moves is needed. ``stock_top`` is the top stock card (None when the stock is empty);
        ``end_scores`` gives the hand's scores, for ending the hand when the stock is out.
        The caller must still put the move through the reducer."""
        phase = table.phase
        rules = table.rules
        if rules is None:
            return None
        seat = table.turn
        seq = table.seq + 1
        if phase == "draw":
            self._note_draw_turn(table)
            may_take = bool(table.pile) and not table.rejected
            if may_take and rules.pile_pickup == "must_use_top" and \
                    getattr(table, "can_take_top", None) is None:
                return None  # a frozen State cannot judge the top's use: the full list does
            if len(table.stock) <= rules.stock_floor or stock_top is None:
                if end_scores is None or (may_take and rules.pile_pickup == "must_use_top"):
                    return None  # must the pile be taken (`001`)? The full list says.
                if may_take and self._context(table, ()).pile_value() > 0.0:
                    return PileTaken(seat, len(table.pile), table.pile[-1], seq=seq)
                return HandEnded("stock_out", end_scores(), seq=seq)
            if may_take and self._context(table, ()).pile_value() > 0.0:
                return PileTaken(seat, len(table.pile), table.pile[-1], seq=seq)
            return CardDrawn(seat, stock_top, seq=seq)
        if phase == "emptied":
            side = table.sides[seat]
            if (table.vulnerable[side] and not table.opened[side] and table.laid_this_turn
                    and table.opening_points < table.opening_min[side]):
                return None  # a short opening emptied the hand: the legal move is to take it back
            if rules.morto and not table.morto_taken[side]:
                count = len(table.mortos[side])
                return MortoTaken(seat, table.emptied_by == "meld", count, seq=seq)
            return WentOut(seat, seq=seq)
        if phase != "play":
            return None
        ctx = self._context(table, ())
        best = ctx.best_play(seq)
        drawn = table.drawn
        if table.may_reject and drawn is not None and not table.laid_this_turn:
            # First-turn redraw: weighed against the best play as :meth:`choose` would.
            reject = 1.0 if ctx.keep_value(drawn) < 6 else -1.0
            if best is None or ctx.best_score < reject:
                return FirstDrawRejected(seat, drawn, seq=seq)
        return best

    # --- helpers -----------------------------------------------------------------------------

    def _context(self, table: TableView, moves: Sequence[AnyEvent]) -> _Context:
        rules = table.rules
        assert rules is not None
        self.cache.use(rules)
        return _Context(self, table, rules, moves)

    def _note_draw_turn(self, table: TableView) -> None:
        if self._noted == (table.hand, table.seq):
            # the same decision again: the fast path's move was refused (or it had none) and
            # the full list is asked. Counted twice, the stall guard gave up the pile a turn
            # early.
            return
        self._noted = (table.hand, table.seq)
        seen = (table.hand, len(table.stock))
        self.stalled = self.stalled + 1 if seen == self._stock_seen else 0
        self._stock_seen = seen


class MeldKnowledge:
    """What the heuristic bot learns about melds under one rules value, shareable by bots."""

    def __init__(self) -> None:
        self.rules: Rules | None = None
        self.points: list[int] = []
        self._accepts: dict[tuple[Card, ...], frozenset[Card]] = {}
        self._valid: dict[tuple[Card, ...], bool] = {}
        self._by_meld: dict[int, tuple[Meld, frozenset[Card]]] = {}
        # Cards each side's melds accept, with those melds (see _Context._side_acc).
        self.side_acc: dict[int, tuple[tuple[Meld, ...], set[Card]]] = {}

    def use(self, rules: Rules) -> None:
        if rules is not self.rules:
            if rules != self.rules:
                self.clear()  # what a meld accepts depends on the rules
            self.rules = rules
            self.points = rules.point_table()
        # The memos are bounded as they grow (see the methods below): meld card tuples recur
        # across matches, meld objects do not.

    def clear(self) -> None:
        self._accepts.clear()
        self._valid.clear()
        self._by_meld.clear()
        self.side_acc.clear()

    def accepts(self, cards: tuple[Card, ...], rules: Rules) -> frozenset[Card]:
        """Card codes that can be laid off alone onto a meld of ``cards``. The answer does not
        depend on the order of the cards (a meld's reading does not), so the sorted cards are
        the key: the same melds come back in other orders across matches."""
        key = tuple(sorted(cards))
        got = self._accepts.get(key)
        if got is None:
            got = _accepted_cards(key, rules)
            if len(self._accepts) > 65536:
                self.clear()
            self._accepts[key] = got
        return got

    def meld_accepts(self, meld: Meld, rules: Rules) -> frozenset[Card]:
        """:meth:`accepts` by meld object: the engine makes a new Meld whenever one changes, so
        identity is a cheaper key than the cards (the entry keeps the meld alive, so its id is
        never reused while cached)."""
        entry = self._by_meld.get(id(meld))
        if entry is not None and entry[0] is meld:
            return entry[1]
        got = self.accepts(meld.cards, rules)
        if len(self._by_meld) > 4096:
            self._by_meld.clear()
            self.side_acc.clear()
        self._by_meld[id(meld)] = (meld, got)
        return got

    def valid(self, cards: tuple[Card, ...], rules: Rules) -> bool:
        got = self._valid.get(cards)
        if got is None:
            try:
                read_meld(cards, rules)
                got = True
            except MeldError:
                got = False
            if len(self._valid) > 65536:
                self.clear()
            self._valid[cards] = got
        return got


def _accepted_cards(cards: tuple[Card, ...], rules: Rules) -> frozenset[Card]:
    try:
        reading = read_meld(cards, rules)
    except MeldError:
        return frozenset()
    if reading.kind == "set":
        # Any natural of the rank fits (only 8 copies exist), and a wild while there is none.
        out = {s * 16 + reading.rank for s in range(4)}
        if reading.wild is None:
            out.update(_WILDS)
            if not rules.jokers:  # no card of the classic family's material
                out.discard(JOKER)
        return frozenset(out)
    s = reading.suit
    found: set[Card] = set()
    candidates: set[Card] = {JOKER, s * 16 + 2}
    if reading.wild is None and not any(RANK[c] == 2 for c in cards):
        # A clean run without 2s: naturals at either end and the wild by arithmetic (the
        # common case, kept cheap); the suit's own 2 through the meld reader.
        if reading.size < rules.max_run():
            for p, other_end in ((reading.lo - 1, reading.hi), (reading.hi + 1, reading.lo)):
                if p == 2 or not 1 <= p <= 14:
                    continue
                if (p, other_end) in ((1, 14), (14, 1)) and not rules.ace_both_ends:
                    continue
                found.add(s * 16 + (1 if p == 14 else p))
            if reading.lo >= 3 or reading.hi <= 13:
                found.add(JOKER)  # room for the wild below the lowest or above the highest
        candidates.discard(JOKER)
    else:
        # A wild (or a 2) may move to make room: try every natural near the ends and the gap.
        for pos in (*range(reading.lo - 2, reading.lo), *range(reading.hi + 1, reading.hi + 3)):
            if 1 <= pos <= 14:
                candidates.add(s * 16 + (1 if pos == 14 else pos))
        if reading.gap is not None:
            candidates.add(s * 16 + reading.gap)
    # The joker stands for "a wild fits"; where the material has none (the classic family),
    # the reader refuses it as no card, so another suit's 2, wild in any run, is read instead.
    off_suit_two = (s + 1) % 4 * 16 + 2
    for c in candidates:
        try:
            read_meld((*cards, off_suit_two if c == JOKER and not rules.jokers else c), rules)
        except MeldError:
            continue
        found.add(c)
    if JOKER in found:
        found.update(t for t in _TWOS if t != s * 16 + 2)  # another suit's 2 is a plain wild
        if not rules.jokers:
            found.discard(JOKER)
    return frozenset(found)


class _Context:
    """What the heuristic needs about one decision, computed once per decision."""

    def __init__(
        self, bot: HeuristicBot, table: TableView, rules: Rules, moves: Sequence[AnyEvent]
    ) -> None:
        self.bot = bot
        self.table = table
        self.rules = rules
        self.moves = moves
        self.seat = seat = table.turn
        n = len(table.players)
        self.side = side = table.sides[seat]
        self.hand = hand = table.hands[seat]
        self.my_melds: Sequence[Meld] = table.melds[side] if table.melds else ()
        nxt = table.sides[(seat + 1) % n]
        self.next_melds: Sequence[Meld] = table.melds[nxt] if nxt != side and table.melds else ()
        self.points = bot.cache.points
        self.morto_left = rules.morto and not table.morto_taken[side]
        # The hand by rank (in hand order) and the ranks of each suit, wilds left out.
        by_rank: dict[int, list[Card]] = {}
        suit_ranks: dict[int, set[int]] = {0: set(), 1: set(), 2: set(), 3: set()}
        wilds = _WILDS
        for c in hand:
            if c in wilds:
                continue
            r = RANK[c]
            if r in by_rank:
                by_rank[r].append(c)
            else:
                by_rank[r] = [c]
            if r == 1:
                suit_ranks[SUIT[c]].update(_ACE_RANKS)  # the ace also sits above the king
            else:
                suit_ranks[SUIT[c]].add(r)
        self.rank_count = {r: len(group) for r, group in by_rank.items()}
        self.by_rank = by_rank
        self.suit_ranks = suit_ranks
        self._my_acc: set[Card] | None = None
        self._has_canastra: bool | None = None
        self._next_acc: set[Card] | None = None
        self._reach: int | None = None
        self.best_score = float("-inf")  # score of the last best_play

    @property
    def my_acc(self) -> set[Card]:
        """Cards the player's own side can lay off (computed on first use)."""
        if self._my_acc is None:
            self._my_acc = self._side_acc(self.side, self.my_melds)
        return self._my_acc

    @property
    def has_canastra(self) -> bool:
        if self._has_canastra is None:
            self._has_canastra = any(m.canastra is not None for m in self.my_melds)
        return self._has_canastra

    def _union(self, melds: Sequence[Meld]) -> set[Card]:
        """Cards that some meld of ``melds`` accepts."""
        out: set[Card] = set()
        cache = self.bot.cache
        by_meld = cache._by_meld
        for m in melds:
            entry = by_meld.get(id(m))
            out |= (
                entry[1]
                if entry is not None and entry[0] is m
                else cache.meld_accepts(m, self.rules)
            )
        return out

    @property
    def next_acc(self) -> set[Card]:
        """Cards the next player's side can lay off (computed on first use)."""
        if self._next_acc is None:
            nxt = self.table.sides[(self.seat + 1) % len(self.table.players)]
            self._next_acc = self._side_acc(nxt, self.next_melds) if self.next_melds else set()
        return self._next_acc

    def _side_acc(self, side: int, melds: Sequence[Meld]) -> set[Card]:
        """:meth:`_union` for a side's melds, kept while they stay the same meld objects (the
        engine makes a new Meld whenever one changes). Shared by the bots of one rules value:
        the kept melds are compared one by one, so another match's melds never match."""
        memo = self.bot.cache.side_acc
        entry = memo.get(side)
        if entry is not None:
            kept = entry[0]
            if len(kept) == len(melds) and all(map(operator.is_, kept, melds)):
                return entry[1]
        acc = self._union(melds)
        memo[side] = (tuple(melds), acc)
        return acc

    def may_empty(self, by: str) -> bool:
        """May the hand become empty now, by melding or by discarding (the reducer's rule)?"""
        rules = self.rules
        if self.morto_left:
            if rules.morto_needs_canastra and not self.has_canastra:
                return False
            return by != "meld" or rules.morto_direct
        return not rules.go_out_needs_canastra or self.has_canastra

    # --- scoring of each kind of move ----------------------------------------------------

    def score(self, move: AnyEvent) -> float:
        if isinstance(move, (WentOut, MortoTaken)):
            return 1000.0
        if isinstance(move, (CardDrawn, HandEnded)):
            return 0.0  # when the stock is out: end the hand unless the pile pays
        if isinstance(move, PileTaken):
            return self.pile_value()
        if isinstance(move, MeldLaid):
            return self.meld_value(move.cards)
        if isinstance(move, CardsLaidOff):
            return self.layoff_value(self._meld(move.meld), move.cards)
        if isinstance(move, CardDiscarded):
            return self.discard_value(move.card)
        if isinstance(move, FirstDrawRejected):
            return 1.0 if self.keep_value(move.card) < 6 else -1.0
        if isinstance(move, OpeningRetracted):
            return -500.0
        return -1000.0

    def _meld(self, meld_id: int) -> Meld | None:
        for m in self.my_melds:
            if m.id == meld_id:
                return m
        return None

    def stranded(self, meld: tuple[Card, ...]) -> bool:
        """Would laying down, so that ``meld`` is on the table, leave the one card kept unfit to
        throw? (Unless that meld is a canastra, the side then has one: RULES.md §7.)"""
        if self.may_empty("discard"):
            return False
        try:
            return read_meld(meld, self.rules).canastra is None
        except MeldError:
            return True

    def after_size_penalty(self, used: int) -> float:
        left = len(self.hand) - used
        if left == 1 and not self.may_empty("discard"):
            return 200.0  # one card left that may not be discarded: the bot would be stuck
        return 0.0

    def meld_value(self, cards: Sequence[Card]) -> float:
        t, side = self.table, self.side
        if t.vulnerable and t.vulnerable[side] and not t.opened[side]:
            if self.bot._retracted == (t.hand, t.turns):
                return _FORBIDDEN  # retracted this turn already: wait for a better hand
            if not t.opening_points and self.opening_reach() < t.opening_min[side]:
                return _FORBIDDEN
        n = len(cards)
        wilds = sum(1 for c in cards if c in _WILDS)
        value = 20.0 + 4.0 * n + 0.2 * sum(self.points[c] for c in cards)
        if n >= self.rules.canastra_size:
            value += 150.0 if not wilds else 80.0
        elif wilds:
            value -= 14.0
        if not self.rules.canastra_from_sets and _is_set(cards):
            value -= 10.0  # sets never grow into canastras here
        return value - self.after_size_penalty(n)

    def opening_reach(self) -> int:
        """Points of disjoint offered melds, longest first: enough for a vulnerable opening?"""
        if self._reach is None:
            self._reach = self._opening_reach()
        return self._reach

    def _opening_reach(self) -> int:
        left = list(self.hand)
        total = 0
        offered = [m.cards for m in self.moves if isinstance(m, MeldLaid)]
        if not self.moves:
            offered = list(self.candidate_melds(sorted(set(self.hand))))
        melds = sorted(offered, key=len, reverse=True)
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

    def layoff_value(self, meld: Meld | None, cards: Sequence[Card]) -> float:
        n = len(cards)
        wilds = sum(1 for c in cards if c in _WILDS)
        value = 25.0 + 5.0 * n
        if meld is not None:
            size = len(meld.cards)
            k = self.rules.canastra_size
            if size < k <= size + n:
                value += 150.0 if not wilds and meld.canastra is None else 90.0
            elif size < k:
                value += 6.0 * size  # grow the melds closest to a canastra first
            if wilds:
                if meld.canastra in ("clean", "royal", "ace_to_ace", "semi_clean"):
                    value -= 220.0  # never spoil a clean canastra
                elif size + n < k and len(self.hand) > 3:
                    value -= 40.0  # keep wilds for completing canastras
        return value - self.after_size_penalty(n)

    def keep_value(self, card: Card, in_hand: bool = True) -> float:
        if card in _WILDS:
            return 60.0
        r = RANK[card]
        same = self.rank_count.get(r, 0) - (1 if in_hand else 0)
        value = 9.0 * same
        sr = self.suit_ranks[SUIT[card]]
        best = 0.0
        for p in (1, 14) if r == 1 else (r,):
            near = 7.0 * ((p - 1 in sr) + (p + 1 in sr)) + 3.0 * ((p - 2 in sr) + (p + 2 in sr))
            best = max(best, near)
        value += best
        if card in self.my_acc:
            value += 30.0
        return value - self.points[card] / 10.0

    def danger(self, card: Card) -> float:
        """How much the next player gains from this discard."""
        d = 0.0
        if card in self.next_acc:
            d += 40.0 + 2.0 * len(self.table.pile)
        pile = self.table.pile
        if pile and RANK[pile[-1]] == RANK[card]:
            d += 4.0
        return d

    def discard_value(self, card: Card) -> float:
        return -10.0 - self.keep_value(card) - self.danger(card)

    def pile_value(self) -> float:
        pile = self.table.pile
        if not pile or self.bot.stalled >= 3:
            return -1.0
        # A short hand that may not go out yet needs material for a canastra.
        starved = 10.0 if len(self.hand) <= 4 and not self.may_empty("discard") else 0.0
        top = pile[-1]
        if top in _WILDS:
            top_used = any(k >= 2 for k in self.rank_count.values())
        else:
            top_used = top in self.my_acc
            if not top_used and self.rank_count.get(RANK[top], 0) >= 2:
                top_used = self.rules.canastra_from_sets or len(pile) > 3
            if not top_used:
                top_used = _run_with(top, self.suit_ranks[SUIT[top]])
        if self.rules.pile_pickup == "must_use_top":
            # Whether the pickup is legal is the engine's question, not the heuristic's: the
            # top may go onto a meld only with cards of the hand (6♥ 7♥ onto 3♥-4♥-5♥), and a
            # use that leaves one card that cannot be thrown is no use (RULES.md §4, §7). The
            # engine's list, or the live table, knows.
            if self.moves:
                top_used = any(isinstance(m, PileTaken) for m in self.moves)
            else:
                can_take = getattr(self.table, "can_take_top", None)
                top_used = bool(can_take is not None and can_take(self.seat))
            if not top_used:
                return -1.0
        useful = 0
        rank_count, suit_ranks, points, my_acc = (
            self.rank_count,
            self.suit_ranks,
            self.points,
            self.my_acc,
        )
        for c in pile:  # keep_value(c, in_hand=False) >= 7, inlined: piles get long
            if c in _WILDS:
                useful += 1
                continue
            r = RANK[c]
            value = 9.0 * rank_count.get(r, 0)
            sr = suit_ranks[SUIT[c]]
            if r == 1:  # the ace, low or high: the better of the two
                near = max(
                    0.0,
                    7.0 * ((0 in sr) + (2 in sr)) + 3.0 * ((-1 in sr) + (3 in sr)),
                    7.0 * ((13 in sr) + (15 in sr)) + 3.0 * ((12 in sr) + (16 in sr)),
                )
            else:
                near = 7.0 * ((r - 1 in sr) + (r + 1 in sr)) + 3.0 * ((r - 2 in sr) + (r + 2 in sr))
            value += near
            if c in my_acc:
                value += 30.0
            if value - points[c] / 10.0 >= 7.0:
                useful += 1
        value = (8.0 if top_used else -6.0) + 3.0 * useful + 0.5 * (len(pile) - useful)
        return value + starved

    # --- the fast path ---------------------------------------------------------------------

    def best_play(self, seq: int) -> AnyEvent | None:
        """The best meld, lay-off or discard in the play phase, chosen as :meth:`score` would
        among the candidates found here; None when no discard is possible."""
        seat, hand, rules = self.seat, self.hand, self.rules
        n = len(hand)
        self.best_score = float("-inf")
        if n == 1 and not self.may_empty("discard"):
            return None  # one card that may not be discarded: let the full list decide
        held = set(hand)
        distinct = sorted(held)
        meld_may_empty = self.may_empty("meld")
        best: AnyEvent | None = None
        best_score = float("-inf")
        top = self.table.pile_top  # must_use_top: the taken top card, until it is used
        if n > 1 or meld_may_empty:
            cache = self.bot.cache
            by_meld = cache._by_meld
            for m in self.my_melds:
                entry = by_meld.get(id(m))  # cache.meld_accepts, inlined
                acc = entry[1] if entry is not None and entry[0] is m else None
                if acc is None:
                    acc = cache.meld_accepts(m, rules)
                fits = acc & held
                if not fits:
                    continue
                if top is not None:
                    fits &= {top}
                for c in sorted(fits):
                    if n == 2 and self.stranded((*m.cards, c)):
                        continue
                    s = self.layoff_value(m, (c,))
                    if s > best_score:
                        best, best_score = CardsLaidOff(seat, m.id, (c,), seq=seq), s
        set_ranks = (
            {_set_rank(m.cards) for m in self.my_melds if m.kind == "set"}
            if rules.max_sets_per_rank
            else set()
        )
        for cards in self.candidate_melds(distinct):
            if len(cards) == n and not meld_may_empty:
                continue
            if set_ranks and _is_set(cards) and _set_rank(cards) in set_ranks:
                continue
            if top is not None and top not in cards:
                continue
            if len(cards) == n - 1 and self.stranded(cards):
                continue
            s = self.meld_value(cards)
            if s > best_score:
                best, best_score = MeldLaid(seat, cards, len(self.my_melds), seq=seq), s
        self.best_score = best_score
        if top is not None:
            return best  # the pile's top card must be used before any discard
        t, side = self.table, self.side
        if t.laid_this_turn and t.vulnerable[side] and not t.opened[side] and \
                t.opening_points < t.opening_min[side]:
            # A short opening: no discard before it is made up or taken back (the list has
            # the retraction, which scores -500).
            return best if best_score > -500.0 else None
        if best_score > _DISCARD_CEILING:
            return best  # no discard can score this high: skip weighing them
        # discard_value for every card, inlined: this loop runs on most turns.
        rank_count, suit_ranks, points = self.rank_count, self.suit_ranks, self.points
        my_acc, next_acc = self.my_acc, self.next_acc
        pile = self.table.pile
        feed = 40.0 + 2.0 * len(pile)
        top_rank = RANK[pile[-1]] if pile else -1
        best_card = -1
        for c in distinct:
            if c in _WILDS:
                keep = 60.0
            else:
                r = RANK[c]
                value = 9.0 * (rank_count[r] - 1)
                sr = suit_ranks[SUIT[c]]
                if r == 1:  # the ace, low or high: the better of the two
                    near = max(
                        0.0,
                        7.0 * ((0 in sr) + (2 in sr)) + 3.0 * ((-1 in sr) + (3 in sr)),
                        7.0 * ((13 in sr) + (15 in sr)) + 3.0 * ((12 in sr) + (16 in sr)),
                    )
                else:
                    near = 7.0 * ((r - 1 in sr) + (r + 1 in sr)) + 3.0 * (
                        (r - 2 in sr) + (r + 2 in sr)
                    )
                value += near
                if c in my_acc:
                    value += 30.0
                keep = value - points[c] / 10.0
            d = 0.0
            if c in next_acc:
                d += feed
            if top_rank == RANK[c]:
                d += 4.0
            s = -10.0 - keep - d
            if s > best_score:
                best_card, best_score = c, s
        if best_card >= 0:
            best = CardDiscarded(seat, best_card, seq=seq)
        self.best_score = best_score
        return best

    def candidate_melds(self, distinct: Sequence[Card]) -> Iterable[tuple[Card, ...]]:
        """Natural sets and runs of the hand, and pairs or near-runs completed by one wild."""
        rules = self.rules
        wilds = [c for c in distinct if c in _WILDS]
        wild = wilds[0] if wilds else None
        for group in self.by_rank.values():
            size = len(group)
            if size >= 3:
                yield tuple(group)
            elif size == 2 and wild is not None:
                yield (*group, wild)
        max_run = rules.max_run()
        valid = self.bot.cache.valid
        for suit, ranks in self.suit_ranks.items():
            k = len(ranks)
            if k < 2:
                continue
            order = sorted(ranks)
            base = suit * 16
            start = 0  # order[start:i] is a stretch of consecutive ranks
            for i in range(1, k + 1):
                if i < k and order[i] == order[i - 1] + 1:
                    continue
                length = i - start
                if length >= 3:
                    yield from self._runs(suit, order[start:i], max_run)
                elif length == 2 and wild is not None:
                    a, b = order[start], order[start + 1]
                    cards = (base + a, base + (1 if b == 14 else b), wild)
                    if valid(cards, rules):
                        yield cards
                start = i
            if wild is not None:
                # Two naturals with one gap between them, filled by the wild.
                for a, b in itertools.pairwise(order):
                    if b == a + 2:
                        cards = (base + a, base + (1 if b == 14 else b), wild)
                        if valid(cards, rules):
                            yield cards

    def _runs(self, suit: int, stretch: list[int], max_run: int) -> Iterable[tuple[Card, ...]]:
        if stretch[0] == 1 and stretch[-1] == 14 and not self.rules.ace_both_ends:
            stretch = stretch[:-1]  # one ace per run, low here
        if len(stretch) > max_run:
            stretch = stretch[:max_run]
        if len(stretch) >= 3:
            yield tuple(suit * 16 + (1 if q == 14 else q) for q in stretch)


def _is_set(cards: Sequence[Card]) -> bool:
    """Do the natural cards share one rank (a set, since a run holds each rank once)?"""
    return len({RANK[c] for c in cards if c not in _WILDS}) == 1


def _set_rank(cards: Sequence[Card]) -> int:
    for c in cards:
        if c not in _WILDS:
            return RANK[c]
    return 0


def _run_with(top: Card, have: set[int]) -> bool:
    """Two cards of the hand (ranks ``have`` of the top's suit) make a run of three with it."""
    r = RANK[top]
    for p in (1, 14) if r == 1 else (r,):
        if {p - 2, p - 1} <= have or {p - 1, p + 1} <= have or {p + 1, p + 2} <= have:
            return True
    return False


BOTS: dict[str, type[RandomBot] | type[HeuristicBot]] = {
    "random": RandomBot,
    "heuristic": HeuristicBot,
}


def make_bot(name: str) -> Bot:
    """A fresh bot by name: ``random``, ``heuristic``, or ``expert`` (the searching player of
    :mod:`buraco_log.expert`), optionally with its budget, ``expert:SAMPLES[xCANDIDATES]``."""
    kind, colon, budget = name.partition(":")
    if kind == "expert":
        from buraco_log.expert import DEFAULT_BUDGET, ExpertBot, parse_budget

        try:  # "expert:" with no budget is refused, not read as the default (it was)
            return ExpertBot(parse_budget(budget) if colon else DEFAULT_BUDGET)
        except ValueError as exc:
            raise ValueError(f"bot {name!r}: {exc}") from None
    try:
        if budget:
            raise KeyError(name)
        return BOTS[name]()
    except KeyError:
        known = ", ".join((*BOTS, "expert[:SAMPLES]"))
        raise ValueError(f"unknown bot {name!r} (known: {known})") from None
