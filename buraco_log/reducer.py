"""The reducer: validate and apply events, replay a match, jump to any seq.

``validate(state, event)`` raises :class:`IllegalMoveError`; ``apply`` trusts; ``step`` does
both. They take and return frozen :class:`State` values. Replaying a whole log goes through a
:class:`Replayer`, which works on a private mutable table for speed (as python-chess's Board
does) and hands out frozen snapshots. The reducer is pure: no I/O, clock, randomness or logging.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any, SupportsIndex

from buraco_log import rules as rules_mod
from buraco_log.cards import JOKER, RANK, SUIT, Card, Style, deck, format_card, is_card
from buraco_log.combos import layoff_options, meld_options
from buraco_log.errors import IllegalMoveError, PositionError, RulesError, position
from buraco_log.events import (
    AnyEvent,
    CardDiscarded,
    CardDrawn,
    CardsLaidOff,
    Event,
    FirstDrawRejected,
    HandEnded,
    HandStarted,
    MatchEnded,
    MatchStarted,
    MeldLaid,
    MortoTaken,
    OpeningRetracted,
    PileTaken,
    TotalsCarried,
    WentOut,
    tag_of,
)
from buraco_log.melds import MeldCache, MeldError, Reading, cache_for, meld_words
from buraco_log.rules import Rules
from buraco_log.scoring import match_decided, score_hand
from buraco_log.state import HandResult, Meld, SideScore, Snapshots, State

SNAPSHOT_EVERY = 64
_NO_RULES = Rules(name="none")


class _Table:
    """The private mutable twin of :class:`State`. Field names match State's."""

    __slots__ = (
        "card",
        "dealer",
        "drawn",
        "emptied_by",
        "first_dealer",
        "hand",
        "hands",
        "laid_before",
        "laid_this_turn",
        "match_id",
        "may_reject",
        "meld_readings",
        "melds",
        "morto_pending",
        "morto_taken",
        "morto_taken_at",
        "mortos",
        "must_use_top",
        "n_seats",
        "n_sides",
        "opened",
        "opening_min",
        "opening_points",
        "phase",
        "pile",
        "pile_top",
        "players",
        "points",
        "readings",
        "rejected",
        "relancinho",
        "relancinho_done",
        "results",
        "rules",
        "seq",
        "sides",
        "stock",
        "stock_floor",
        "style",
        "taken_top",
        "totals",
        "turn",
        "turns",
        "vulnerable",
        "went_out",
        "winner",
    )

    def __init__(self, s: State) -> None:
        self.seq = s.seq
        self.phase = s.phase
        self.match_id = s.match_id
        self.rules: Rules | None = s.rules
        self.players = s.players
        self.sides = s.sides
        self.n_sides = s.n_sides
        self.first_dealer = s.first_dealer
        self.hand = s.hand
        self.dealer = s.dealer
        self.turn = s.turn
        self.turns = s.turns
        self.hands = [list(h) for h in s.hands]
        self.stock = list(reversed(s.stock))  # top at the end: pop() is O(1)
        self.pile = list(s.pile)
        self.mortos = [tuple(m) for m in s.mortos]
        self.morto_taken = list(s.morto_taken)
        self.morto_taken_at = list(s.morto_taken_at)
        self.morto_pending = list(s.morto_pending)
        self.melds = [list(side) for side in s.melds]
        self.totals = list(s.totals)
        self.results = list(s.results)
        self.drawn = s.drawn
        self.may_reject = s.may_reject
        self.rejected = s.rejected
        self.pile_top = s.pile_top
        self.taken_top = s.taken_top
        self.emptied_by = s.emptied_by
        self.laid_this_turn = list(s.laid_this_turn)
        self.vulnerable = list(s.vulnerable)
        self.opened = list(s.opened)
        self.opening_min = list(s.opening_min)
        self.opening_points = s.opening_points
        self.relancinho = list(s.relancinho)
        self.laid_before = list(s.laid_before)
        self.relancinho_done = list(s.relancinho_done)
        self.went_out = s.went_out
        self.winner = s.winner
        self.n_seats = len(s.players)
        # Readings of the melds on the table, in step with ``melds``; None until needed.
        self.meld_readings: list[list[Reading | None]] = [[None] * len(m) for m in s.melds]
        self.use_rules(s.rules or _NO_RULES)
        self.rules = s.rules

    def use_rules(self, rules: Rules) -> None:
        """Copy what the hot paths need from the rules into flat attributes."""
        self.rules = rules
        self.points: list[int] = rules.point_table()
        self.readings = cache_for(rules)
        self.stock_floor = rules.stock_floor
        self.must_use_top = rules.pile_pickup == "must_use_top"
        # Messages name cards as the material is drawn: Burako's tiles are 13k, not Ks
        # (RULES.md §1: only the rendering differs).
        self.style: Style = "tiles" if rules.rendering == "tiles" else "ascii"
        # ... and a refusal's words too: "3 tiles", "the pile's top tile" (messages only).
        self.card: str = "tile" if rules.rendering == "tiles" else "card"

    def freeze(self, results: bool = True) -> State:
        """The table as a frozen state; without the ended hands' results when ``results`` is
        False (a snapshot, which keeps them once for all: see :class:`Snapshots`)."""
        return State(
            seq=self.seq,
            phase=self.phase,
            match_id=self.match_id,
            rules=self.rules,
            players=self.players,
            sides=self.sides,
            n_sides=self.n_sides,
            first_dealer=self.first_dealer,
            hand=self.hand,
            dealer=self.dealer,
            turn=self.turn,
            turns=self.turns,
            hands=tuple(tuple(h) for h in self.hands),
            stock=tuple(reversed(self.stock)),
            pile=tuple(self.pile),
            mortos=tuple(self.mortos),
            morto_taken=tuple(self.morto_taken),
            morto_taken_at=tuple(self.morto_taken_at),
            morto_pending=tuple(self.morto_pending),
            melds=tuple(tuple(side) for side in self.melds),
            totals=tuple(self.totals),
            results=tuple(self.results) if results else (),
            drawn=self.drawn,
            may_reject=self.may_reject,
            rejected=self.rejected,
            pile_top=self.pile_top,
            taken_top=self.taken_top,
            emptied_by=self.emptied_by,
            laid_this_turn=tuple(self.laid_this_turn),
            vulnerable=tuple(self.vulnerable),
            opened=tuple(self.opened),
            opening_min=tuple(self.opening_min),
            opening_points=self.opening_points,
            relancinho=tuple(self.relancinho),
            laid_before=tuple(self.laid_before),
            relancinho_done=tuple(self.relancinho_done),
            went_out=self.went_out,
            winner=self.winner,
        )

    # ----------------------------------------------------------------- helpers

    def fail(
        self,
        ev: Event,
        rule: str,
        message: str,
        seat: int | None = None,
        cards: tuple[int, ...] = (),
    ) -> IllegalMoveError:
        # A code that is no card of the preset is what is wrong, whatever check met it first:
        # "does not hold #0" would send a referee looking for card #0 in the hand. Looked for
        # here, on the way out, so accepted events pay nothing for it.
        # (An empty pile has no top to name: the code standing in for it is no fault of its own.)
        bad = () if type(ev) is PileTaken and not self.pile else _no_cards(ev, self.rules)
        if bad:
            rule = "event.invalid"
            r = self.rules
            codes = ", ".join(f"#{c!r}" for c in bad)
            preset = f"the {r.name} preset" if r is not None else "any preset"
            what = f"is no {self.card}" if len(bad) == 1 else f"are no {self.card}s"
            why = " (it has no jokers)" if JOKER in bad and r is not None else ""
            message = f"{codes} {what} of {preset}{why}"
            if type(ev) is PileTaken and ev.top == 0:
                # 0 is what a take written without its top reads as: no card the user wrote.
                top = self.fmt((self.pile[-1],))
                message = f"the take names no top {self.card} (the pile's top is {top})"
            cards = ()
        # The explanation names the seat that moved (docs STYLE: "naming seat and cards"): a
        # referee reading "took 2 cards; the whole pile is 3" alone could not say whose move.
        if seat is not None and f"seat {seat}" not in message:
            mover = self.who(seat) if 0 <= seat < len(self.players) else f"seat {seat}"
            message = f"{mover}: {message}"
        return IllegalMoveError(rule, message, seq=ev.seq, tag=tag_of(ev), seat=seat, cards=cards)

    def fmt(self, cards: tuple[Card | None, ...]) -> str:
        """Cards as text for a message, as the rules draw them (cards, or Burako's tiles)."""
        return _fmt(cards, self.style)

    def many(self, n: int) -> str:
        """``1 card``, ``3 tiles``: a count in a message (it said "holds 1 cards")."""
        return f"{n} {self.card}{'' if n == 1 else 's'}"

    def meld_text(self, exc: MeldError) -> str:
        """A meld refusal's text with its cards drawn as the rules draw them."""
        return f"{self.fmt(exc.cards)}: {exc.detail}" if exc.cards else exc.detail

    def who(self, seat: int) -> str:
        return f"seat {seat} ({self.players[seat].name})"

    def expect_turn(self, ev: Event, seat: int, phase: str) -> None:
        if not 0 <= seat < len(self.players):
            raise self.fail(ev, "turn.no_such_seat", f"there is no seat {seat}", seat)
        if seat != self.turn:
            raise self.fail(
                ev,
                "turn.not_your_turn",
                f"{self.who(seat)} moved, but it is {self.who(self.turn)}'s turn",
                seat,
            )
        if self.phase != phase:
            gone = self.morto_gone(ev, seat)
            if self.phase == "draw":
                raise self.fail(
                    ev,
                    "turn.must_draw_first",
                    f"{self.who(seat)} must draw or take the pile first"
                    + (f"; {gone}" if gone else ""),
                    seat,
                )
            if self.phase == "play" and phase == "draw":
                raise self.fail(
                    ev, "turn.already_drew", f"{self.who(seat)} already drew this turn", seat
                )
            if self.phase == "emptied":
                r = self.rules
                side = self.sides[self.turn]
                morto_next = r is not None and r.morto and not self.morto_taken[side]
                raise self.fail(
                    ev,
                    "turn.hand_emptied",
                    f"the hand of {self.who(self.turn)} is empty: "
                    f"{'taking the morto' if morto_next else 'going out'} comes next",
                    seat,
                )
            if phase == "emptied" and self.phase == "play":
                what = "taking the morto" if tag_of(ev) == "mt" else "going out"
                raise self.fail(
                    ev,
                    "turn.wrong_phase",
                    f"{self.who(seat)} still holds {self.many(len(self.hands[seat]))}"
                    + (f", and {gone}" if gone else
                       f": {what} comes only once the hand is empty"),
                    seat,
                )
            raise self.fail(
                ev,
                "turn.wrong_phase",
                f"{tag_of(ev)} is not possible in phase {self.phase!r}",
                seat,
            )

    def morto_gone(self, ev: Event, seat: int) -> str:
        """For a morto taken out of phase by a side that already took it, say so: the phase's
        refusal alone read as if the morto were still to come."""
        if tag_of(ev) != "mt" or not 0 <= seat < len(self.sides):
            return ""
        side = self.sides[seat]
        if side >= len(self.morto_taken) or not self.morto_taken[side]:
            return ""
        return (f"side {side} already took its morto (seq {self.morto_taken_at[side]}): "
                "emptying the hand again is going out, not a second morto")

    def take_from_hand(self, ev: Event, seat: int, cards: tuple[int, ...], rule: str) -> None:
        """Check ``cards`` are all in the seat's hand (as a multiset), without changing it."""
        hand = self.hands[seat]
        if len(cards) == 1:
            if cards[0] not in hand:
                raise self.fail(
                    ev, rule, f"{self.who(seat)} does not hold {self.fmt(cards)}", seat, cards
                )
            return
        need = Counter(cards)
        have = Counter(hand)
        if any(have[c] < k for c, k in need.items()):
            missing = tuple((need - have).elements())
            raise self.fail(
                ev, rule, f"{self.who(seat)} does not hold {self.fmt(missing)}", seat, missing
            )

    def hand_without(self, ev: Event, seat: int, cards: tuple[int, ...]) -> list[int]:
        """The seat's hand less ``cards``, as a new list; refused when it lacks one of them."""
        rest = self.hands[seat].copy()
        try:
            for c in cards:
                rest.remove(c)
        except ValueError:
            self.take_from_hand(ev, seat, cards, "meld.cards_not_in_hand")  # raises
            raise
        return rest

    def has_canastra(self, side: int) -> bool:
        return any(m.canastra is not None for m in self.melds[side])

    def emptying_problem(self, side: int, by: str, new_canastra: bool = False
                         ) -> tuple[str, str] | None:
        """Why the hand may not become empty now (rule id, reason), or None when it may.
        ``new_canastra``: the move that empties (or leaves the last card) makes a canastra
        itself, which counts as on the table (RULES.md §7: the side has one then)."""
        r = self.rules
        assert r is not None
        if r.morto and not self.morto_taken[side]:
            # RULES.md §7 order: the indirect-only statement comes before morto_needs_canastra
            # (house rules may hold both).
            if by == "meld" and not r.morto_direct:
                return (
                    "morto.indirect_only",
                    f"the morto is taken only by discarding the last {self.card} (indirect)",
                )
            if r.morto_needs_canastra and not new_canastra and not self.has_canastra(side):
                return "morto.needs_canastra", "the side needs a canastra to take its morto"
            if (by == "meld" and len(self.mortos[side]) == 1 and r.go_out_needs_canastra
                    and not new_canastra and not self.has_canastra(side)):
                # House rules with a morto of one card: taken directly, its card is the whole
                # hand, and throwing it would be going out without a canastra. Nobody is left
                # without a discard (RULES.md §7, `001`).
                return (
                    "go_out.needs_canastra",
                    f"the morto's one {self.card} could not be discarded: going out needs a "
                    "canastra on the side's table",
                )
            return None
        if r.go_out_needs_canastra and not new_canastra and not self.has_canastra(side):
            return "go_out.needs_canastra", "going out needs a canastra on the side's table"
        return None

    def turn_end_problem(self, seat: int) -> tuple[str, str] | None:
        """Obligations that must be met before the turn ends (discard or going out)."""
        if self.pile_top is not None:
            return (
                "pile.must_use_top",
                f"the pile's top {self.card} {self.fmt((self.pile_top,))} was not used this turn",
            )
        if self.opening_short(seat):
            side = self.sides[seat]
            return (
                "vulnerable.opening_too_low",
                f"the side is vulnerable: its opening must total {self.opening_min[side]} "
                f"points, this one totals {self.opening_points}",
            )
        return None

    def opening_short(self, seat: int) -> bool:
        """Did the seat's vulnerable side lay its opening this turn, short of its minimum?"""
        side = self.sides[seat]
        return bool(
            self.vulnerable[side]
            and not self.opened[side]
            and self.laid_this_turn
            and self.opening_points < self.opening_min[side]
        )

    def end_turn(self) -> None:
        seat = self.turn
        if self.laid_this_turn:
            self.laid_before[seat] = True
            self.opened[self.sides[seat]] = True
            self.laid_this_turn = []
            self.opening_points = 0
        self.drawn = None
        self.may_reject = self.rejected = False
        if self.taken_top is not None:  # pile_top is only ever set with taken_top
            self.pile_top = self.taken_top = None
        nxt = seat + 1
        if nxt == self.n_seats:
            nxt = 0
        self.turn = nxt
        self.turns += 1
        self.phase = "draw"
        # The taker of an indirect morto has now had the chance to play it. (A pending
        # taker is a seat of the side whose entry it is, so membership is enough.)
        if nxt in self.morto_pending:
            self.morto_pending[self.sides[nxt]] = None

    def after_laying(self, seat: int, side: int, cards: tuple[int, ...]) -> None:
        # The first-turn redraw is "right after drawing": laying cards ends it for good, even
        # if a short opening is then taken back (which empties laid_this_turn again).
        self.may_reject = False
        self.laid_this_turn.extend(cards)
        if not self.opened[side]:
            self.opening_points += sum(map(self.points.__getitem__, cards))
        if self.pile_top is not None and self.pile_top in cards:
            self.pile_top = None
        if not self.hands[seat]:
            self.phase = "emptied"
            self.emptied_by = "meld"

    def note_relancinho(self, seat: int) -> None:
        r = self.rules
        assert r is not None
        if r.relancinho and not self.laid_before[seat] and not self.relancinho_done[seat]:
            self.relancinho_done[seat] = True
            self.relancinho[self.sides[seat]] += 1

    def leaves_ok(self, seat: int, rest: int, new_canastra: bool = False) -> bool:
        """May the seat hold ``rest`` cards after laying down (see ``check_remaining``)?"""
        if rest >= 2:
            return True
        by = "discard" if rest == 1 else "meld"
        return self.emptying_problem(self.sides[seat], by, new_canastra) is None

    def can_take_top(self, seat: int) -> bool:
        """must_use_top: the top card can be used, with cards of the hand as it is before the
        pickup, without leaving the player unable to discard (RULES.md §4): laid off on one
        of the side's melds alone or together with cards of the hand (6♥ 7♥ onto 3♥-4♥-5♥,
        7♥ the top), or in a new meld with two or more cards of the hand. The common cases are
        tried first; :meth:`top_uses` is the complete search."""
        top = self.pile[-1]
        hand = self.hands[seat]
        total = len(hand) + len(self.pile)
        side = self.sides[seat]
        if self.leaves_ok(seat, total - 1):
            known = self.meld_readings[side]
            for i, m in enumerate(self.melds[side]):
                reading = known[i]
                if reading is None:
                    if self.readings.fits((*m.cards, top)):
                        return True
                elif self.readings.extends(reading, (top,), m.cards):
                    return True
        r = self.rules
        no_set_limit = r is None or not r.max_sets_per_rank
        if no_set_limit and self.leaves_ok(seat, total - 3) and meld_with_top(
            self.readings, top, hand
        ):
            return True
        return bool(self.top_uses(seat, first=True))

    def top_blocked(self, seat: int) -> str | None:
        """For a refused must-use-top pickup's message: when the top card would fit a meld of
        the side or a new meld with two cards of the hand, the pickup was refused only because
        using it would leave the player without a card to throw; why that is not allowed."""
        top = self.pile[-1]
        side = self.sides[seat]
        hand = self.hands[seat]
        # Every lay of the top with cards of the hand, the cards it would leave not minded
        # (7♥ 8♥ onto 3♥..6♥ fits, though it would keep a 9♥ that cannot be thrown).
        if not self.ways_to_lay(seat, top, [*hand, top], [*hand, *self.pile], True, False):
            return None
        problem = self.emptying_problem(side, "meld") or self.emptying_problem(side, "discard")
        return problem[1] if problem else None

    def top_set_limited(self, seat: int) -> tuple[int, ...] | None:
        """For a refused must-use-top pickup's message: a new set of the top card and cards of
        the hand that ``max_sets_per_rank`` alone refuses (the side has its sets of that rank),
        or None. A referee told only "cannot use the top" looks at the pair in the hand."""
        r = self.rules
        if r is None or not r.max_sets_per_rank:
            return None
        top = self.pile[-1]
        side = self.sides[seat]
        for cards in meld_options([*self.hands[seat], top], r, self.readings, top):
            if top in cards and self.set_limit_reached(side, cards):
                return cards
        return None

    def top_uses(self, seat: int, first: bool = False) -> list[tuple[int | None, tuple[int, ...]]]:
        """Every way the seat could use the pile's top card right after taking the pile:
        ``(meld id, cards)`` for a lay-off, ``(None, cards)`` for a new meld; the cards hold
        the top card once and the rest from the hand as it is before the pickup. ``first``:
        stop at the first way found."""
        top = self.pile[-1]
        hand = self.hands[seat]
        return self.ways_to_lay(seat, top, [*hand, top], [*hand, *self.pile], first)

    def ways_to_lay(self, seat: int, top: int, held: list[int], full: list[int], first: bool,
                    mind_rest: bool = True) -> list[tuple[int | None, tuple[int, ...]]]:
        """The ways to lay ``top`` together with cards of ``held`` (which holds it), in a
        lay-off or a new meld the reducer accepts, the seat holding the cards ``full`` before
        laying: ``(meld id, cards)`` or ``(None, cards)``. ``first``: stop at the first.
        ``mind_rest`` False: whatever the lay would leave in hand (for messages only)."""
        side = self.sides[seat]
        total = len(full)
        # Only cards that can share a meld with the top card matter (its rank or suit, and
        # the wilds): the search stays small however long the hand.
        natural_top = top != JOKER and RANK[top] != 2
        out: list[tuple[int | None, tuple[int, ...]]] = []
        for i, m in enumerate(self.melds[side]):
            reading = self.meld_readings[side][i] or self.readings.read(m.cards)
            is_set = reading.kind == "set"
            if natural_top and (RANK[top] != reading.rank if is_set else SUIT[top] != reading.suit):
                continue
            pool = [c for c in held if c == JOKER or RANK[c] == 2 or (
                RANK[c] == reading.rank if is_set else SUIT[c] == reading.suit)]
            for add in layoff_options(m.cards, reading, pool, self.readings, top):
                if top in add and (not mind_rest or self.leaves_ok_after(
                    seat, total - len(add), (*m.cards, *add), full, add, m.id
                )):
                    out.append((m.id, add))
                    if first:
                        return out
        pool = [c for c in held if not natural_top or c == JOKER or RANK[c] == 2
                or RANK[c] == RANK[top] or SUIT[c] == SUIT[top]]
        for cards in meld_options(pool, self.rules or _NO_RULES, self.readings, top):
            if top not in cards or self.set_limit_reached(side, cards):
                continue
            if not mind_rest or self.leaves_ok_after(seat, total - len(cards), cards, full,
                                                     cards):
                out.append((None, cards))
                if first:
                    return out
        return out

    def leaves_ok_after(self, seat: int, rest: int, meld: tuple[int, ...],
                        full: list[int] | None = None, laid: tuple[int, ...] = (),
                        target: int | None = None) -> bool:
        """May the seat keep ``rest`` cards after laying down so that ``meld`` is on the
        table? (A canastra that very move makes counts.) With ``full`` (the cards held before
        laying ``laid``, on meld ``target`` or in a new meld), the one card a lay would leave
        may go first on a meld of the side, or into ``meld`` itself, where it makes a
        canastra: the hand then empties with a canastra on the table (a turn that uses the
        pile's top this way is a legal turn, with that card from the pile too)."""
        if rest >= 2 or self.leaves_ok(seat, rest):
            return True
        if self.readings.read(meld).canastra is not None and self.leaves_ok(seat, rest, True):
            return True
        if rest != 1 or full is None or not self.leaves_ok(seat, 0, True):
            return False
        left = list(full)
        for c in laid:
            left.remove(c)
        grown = (*meld, left[0])
        if self.readings.fits(grown) and self.readings.read(tuple(sorted(grown))).canastra:
            return True
        return self.canastra_with(self.sides[seat], left[0], target, laid)

    def canastra_with(self, side: int, card: int, target: int | None,
                      then: tuple[int, ...]) -> bool:
        """Does ``card``, laid off alone on one of the side's melds, make it a canastra? When
        that meld is ``target``, the cards ``then`` must still fit on it afterwards."""
        for m in self.melds[side]:
            grown = (*m.cards, card)
            if not self.readings.fits(grown):
                continue
            if self.readings.read(tuple(sorted(grown))).canastra is None:
                continue
            if m.id == target and not self.readings.fits((*grown, *then)):
                continue
            return True
        return False

    def set_limit_reached(self, side: int, cards: tuple[int, ...]) -> bool:
        """``max_sets_per_rank``: would ``cards``, read as a set, be one set too many?"""
        limit = self.rules.max_sets_per_rank if self.rules else 0
        if not limit:
            return False
        reading = self.readings.read(cards)
        if reading.kind != "set":
            return False
        same = sum(
            1 for m in self.melds[side] if m.kind == "set" and _set_rank(m.cards) == reading.rank
        )
        return same >= limit

    def check_top_kept(self, ev: MeldLaid | CardsLaidOff, seat: int) -> None:
        """Under must_use_top the pile's top card must be used in the turn of the pickup
        (RULES.md §4), not necessarily first: cards laid before it may not leave it unusable
        (nobody is left with a turn that cannot end). ``ev`` lays no copy of the top card, its
        cards are held and make a meld (a card left to throw is checked after this, §7 after
        §4); it is tried on a copy of the table."""
        top = self.pile_top
        assert top is not None
        trial = _Table(self.freeze())
        _HANDLERS[ev.__class__](trial, ev, False)
        if not trial.top_playable(seat):
            raise self.fail(
                ev,
                "pile.must_use_top",
                f"{self.who(seat)} would leave no way to use the pile's top {self.card} "
                f"{self.fmt((top,))} this turn",
                seat,
                ev.cards,
            )

    def top_playable(self, seat: int) -> bool:
        """After a must-use-top pickup, before its top card is used: can the seat still lay
        it (with any cards of its hand, in a new meld or on one of the side's melds) in a move
        the reducer accepts?"""
        top = self.pile_top
        assert top is not None
        hand = self.hands[seat]
        return bool(self.ways_to_lay(seat, top, hand, hand, True))

    # ----------------------------------------------------------------- handlers
    # Each handler checks (when ``check``) and then applies. Checks come before any change,
    # so a failed step leaves the table untouched.

    def on_match_started(self, ev: MatchStarted, check: bool) -> None:
        if check:
            if self.phase != "new":
                raise self.fail(ev, "match.already_started", _second_start(self))
            n = len(ev.players)
            try:
                rules_mod.check(ev.rules, n)
            except RulesError as exc:
                raise self.fail(ev, "match.rules", str(exc)) from None
            expected = tuple(rules_mod.side_of(s, n) for s in range(n))
            if ev.sides != expected:
                raise self.fail(
                    ev, "match.sides", f"sides {ev.sides} do not match the seating {expected}"
                )
            if not 0 <= ev.first_dealer < n:
                raise self.fail(ev, "match.first_dealer", f"no seat {ev.first_dealer}")
        n = len(ev.players)
        self.match_id = ev.match_id
        self.use_rules(ev.rules)
        self.players = ev.players
        self.n_seats = n
        self.sides = ev.sides
        self.n_sides = ev.rules.sides(n)
        self.first_dealer = ev.first_dealer
        self.totals = [0] * self.n_sides
        self.phase = "between"

    def on_totals_carried(self, ev: TotalsCarried, check: bool) -> None:
        if check:
            r = self.rules
            assert r is not None
            if self.phase != "between" or self.results or self.seq != 0:
                raise self.fail(
                    ev,
                    "match.carried_totals",
                    "carried-over totals come right after the match start, before any hand",
                )
            if len(ev.totals) != self.n_sides:
                raise self.fail(
                    ev,
                    "match.carried_totals",
                    f"{len(ev.totals)} totals for {self.n_sides} sides",
                )
            winner = match_decided(r, ev.totals)
            if winner is not None:
                raise self.fail(
                    ev,
                    "match.carried_totals",
                    f"totals {list(ev.totals)} already decide the match (target "
                    f"{r.target_score}): there is no match left to play",
                )
        self.totals = list(ev.totals)

    def on_hand_started(self, ev: HandStarted, check: bool) -> None:
        r = self.rules
        n = len(self.players)
        if check:
            if self.phase != "between":
                rule = "match.over" if self.phase in ("decided", "over") else "hand.not_expected"
                raise self.fail(ev, rule, f"a new hand cannot start in phase {self.phase!r}")
            assert r is not None
            if ev.hand != len(self.results):
                raise self.fail(ev, "hand.number", f"hand {ev.hand} should be {len(self.results)}")
            if ev.dealer != (self.first_dealer + ev.hand) % n:
                raise self.fail(
                    ev,
                    "deal.dealer_rotation",
                    f"dealer {ev.dealer}; the deal rotates to {(self.first_dealer + ev.hand) % n}",
                )
            if len(ev.hands) != n or any(len(h) != r.hand_size for h in ev.hands):
                raise self.fail(
                    ev, "deal.hand_size", f"each of {n} players gets {r.hand_size} {self.card}s"
                )
            want_mortos = self.n_sides if r.morto else 0
            if len(ev.mortos) != want_mortos or any(len(m) != r.morto_size for m in ev.mortos):
                raise self.fail(ev, "deal.morto_size",
                                f"{want_mortos} mortos of {r.morto_size} {self.card}s expected")
            if (ev.upcard is not None) != r.initial_upcard:
                raise self.fail(
                    ev,
                    "deal.upcard",
                    ("an upcard is " if self.card == "card" else "a tile turned up is ")
                    + ("required" if r.initial_upcard else "not part of this preset"),
                )
            if not _is_material(ev, r.jokers):
                cards = [*ev.stock, *(c for h in (*ev.hands, *ev.mortos) for c in h)]
                if ev.upcard is not None:
                    cards.append(ev.upcard)
                dealt, material = Counter(cards), Counter(deck(r.jokers))
                extra = tuple((dealt - material).elements())
                short = tuple((material - dealt).elements())
                raise self.fail(
                    ev,
                    "deal.material",
                    f"the deal is not the material of {r.name}: extra "
                    f"{self.fmt(extra) or 'none'}, missing {self.fmt(short) or 'none'}",
                )
        assert r is not None
        s = self.n_sides
        self.hand = ev.hand
        self.dealer = ev.dealer
        self.turn = (ev.dealer + 1) % n
        self.turns = 0
        self.hands = [list(h) for h in ev.hands]
        self.stock = list(reversed(ev.stock))
        self.pile = [ev.upcard] if ev.upcard is not None else []
        self.mortos = [tuple(m) for m in ev.mortos] if r.morto else [()] * s
        self.morto_taken = [False] * s
        self.morto_taken_at = [None] * s
        self.morto_pending = [None] * s
        self.melds = [[] for _ in range(s)]
        self.meld_readings = [[] for _ in range(s)]
        self.drawn = None
        self.may_reject = r.first_turn_redraw
        self.rejected = False
        self.pile_top = None
        self.taken_top = None
        self.emptied_by = None
        self.laid_this_turn = []
        self.vulnerable = [r.vulnerability and t >= r.vulnerable_at for t in self.totals]
        self.opened = [False] * s
        self.opening_min = [r.opening_min] * s
        self.opening_points = 0
        self.relancinho = [0] * s
        self.laid_before = [False] * n
        self.relancinho_done = [False] * n
        self.went_out = None
        self.phase = "draw"

    def on_card_drawn(self, ev: CardDrawn, check: bool) -> None:
        stock = self.stock
        if check:
            # Fast path first: this is one of the two most common events.
            if self.phase != "draw" or ev.seat != self.turn:
                self.expect_turn(ev, ev.seat, "draw")
            r = self.rules
            assert r is not None
            if len(stock) <= r.stock_floor:
                raise self.fail(
                    ev,
                    "stock.floor_reached",
                    f"the stock holds {self.many(len(stock))} (floor "
                    f"{r.stock_floor}): take the pile or the hand ends",
                    ev.seat,
                )
            if ev.card != stock[-1]:
                raise self.fail(
                    ev,
                    "draw.wrong_card",
                    f"{self.who(ev.seat)} drew {self.fmt((ev.card,))}, but the top of "
                    f"the stock is {self.fmt((stock[-1],))}",
                    ev.seat,
                    (ev.card,),
                )
        stock.pop()
        self.hands[ev.seat].append(ev.card)
        self.drawn = ev.card
        if self.may_reject:
            # Only the first draw of the hand's first turn may be rejected, and only once.
            self.may_reject = self.turns == 0 and not self.rejected
        self.phase = "play"

    def on_first_draw_rejected(self, ev: FirstDrawRejected, check: bool) -> None:
        if check:
            r = self.rules
            assert r is not None
            if not r.first_turn_redraw:
                raise self.fail(
                    ev, "draw.redraw_not_allowed", f"{r.name} has no first-turn redraw", ev.seat
                )
            self.expect_turn(ev, ev.seat, "play")
            if not self.may_reject or self.laid_this_turn:
                raise self.fail(
                    ev,
                    "draw.redraw_only_first",
                    f"only the first {self.card} of the hand's first turn may be rejected, "
                    "right after drawing it",
                    ev.seat,
                    (ev.card,),
                )
            if ev.card != self.drawn:
                raise self.fail(
                    ev,
                    "draw.wrong_card",
                    f"rejected {self.fmt((ev.card,))}, but the {self.card} drawn was "
                    f"{self.fmt((self.drawn,)) if self.drawn is not None else 'none'}",
                    ev.seat,
                    (ev.card,),
                )
        self.hands[ev.seat].remove(ev.card)
        self.pile.append(ev.card)
        self.may_reject = False
        self.rejected = True
        self.drawn = None
        self.phase = "draw"

    def on_pile_taken(self, ev: PileTaken, check: bool) -> None:
        seat = ev.seat
        pile = self.pile
        if check:
            if self.phase != "draw" or seat != self.turn:
                self.expect_turn(ev, seat, "draw")
            if self.rejected:
                raise self.fail(
                    ev,
                    "draw.redraw_from_stock",
                    f"after rejecting the first {self.card} the player draws from the stock",
                    seat,
                )
            if not pile:
                raise self.fail(ev, "pile.empty", "the discard pile is empty", seat)
            if ev.count != len(pile):
                raise self.fail(
                    ev,
                    "pile.whole_pile",
                    f"took {ev.count} {self.card}{'' if ev.count == 1 else 's'}; the whole pile is "
                    f"{len(pile)} {self.card}{'' if len(pile) == 1 else 's'} (never part of it)",
                    seat,
                )
            if ev.top != pile[-1]:
                raise self.fail(
                    ev,
                    "pile.wrong_top",
                    f"named top {self.fmt((ev.top,))}, but the top is {self.fmt((pile[-1],))}",
                    seat,
                    (ev.top,),
                )
            if self.must_use_top and not self.can_take_top(seat):
                blocked = self.top_blocked(seat)
                limited = None if blocked else self.top_set_limited(seat)
                raise self.fail(
                    ev,
                    "pile.must_use_top",
                    f"{self.who(seat)} cannot use the top {self.card} {self.fmt((ev.top,))} "
                    + (f"without being left with no {self.card} to throw ({blocked})" if blocked
                       else f"with two {self.card}s from the hand or on a meld"
                       + (f" ({self.fmt(limited)} would be one set of that "
                          f"{meld_words(self.rules)['rank'] if self.rules else 'rank'} too many)"
                          if limited else "")),
                    seat,
                    (ev.top,),
                )
        self.hands[seat].extend(pile)
        self.pile = []
        self.may_reject = False
        if self.must_use_top:
            self.pile_top = self.taken_top = ev.top
        self.phase = "play"

    def on_meld_laid(self, ev: MeldLaid, check: bool) -> None:
        seat = ev.seat
        cards = ev.cards
        if check and (self.phase != "play" or seat != self.turn):
            self.expect_turn(ev, seat, "play")
        side = self.sides[seat]
        rest = self.hand_without(ev, seat, cards)
        melds = self.melds[side]
        if check and ev.meld is not None and ev.meld != len(melds):
            raise self.fail(
                ev,
                "meld.wrong_id",
                f"new meld numbered {ev.meld}; the side's next is {len(melds)}",
                seat,
            )
        reading = self.new_meld(ev, seat, side, cards)
        # What the move leaves, in RULES.md order: the pile's top (§4) before a card to
        # throw (§7).
        if check and self.pile_top is not None and self.pile_top not in cards:
            self.check_top_kept(ev, seat)
        if check and len(rest) < 2:
            self.check_remaining(ev, seat, rest, reading.canastra is not None, reading)
        self.hands[seat] = rest
        melds.append(Meld(len(melds), side, cards, reading.kind, reading.canastra, seat))
        self.meld_readings[side].append(reading)
        self.after_laying(seat, side, cards)

    def new_meld(self, ev: Event, seat: int, side: int, cards: tuple[int, ...]) -> Reading:
        """Read ``cards`` as a new meld of the side, or raise naming the rule (nothing moves)."""
        try:
            reading = self.readings.read(cards)
        except MeldError as exc:
            raise self.fail(ev, exc.rule, f"{self.who(seat)}: {self.meld_text(exc)}", seat,
                            cards) from None
        limit = self.rules.max_sets_per_rank if self.rules else 0
        if reading.kind == "set" and limit:
            same = [m for m in self.melds[side]
                    if m.kind == "set" and _set_rank(m.cards) == reading.rank]
            if len(same) >= limit:
                # The sets named, as a referee asks which one (`003`: "Não pode baixar dois
                # jogos de trincas do mesmo valor"): the cards may go on it instead.
                word = meld_words(self.rules)["rank"] if self.rules else "rank"
                have = "a set" if len(same) == 1 else f"{len(same)} sets"
                where = ", ".join(f"meld {m.id}: {self.fmt(m.cards)}" for m in same)
                raise self.fail(
                    ev,
                    "meld.second_set_of_rank",
                    f"{self.who(seat)}: the side already has {have} of that {word} ({where}); "
                    f"at most {limit} set{'s' if limit > 1 else ''} of one {word}",
                    seat,
                    cards,
                )
        return reading

    def on_cards_laid_off(self, ev: CardsLaidOff, check: bool) -> None:
        seat = ev.seat
        add = ev.cards
        i = ev.meld
        if check:
            if self.phase != "play" or seat != self.turn:
                self.expect_turn(ev, seat, "play")
            if not 0 <= i < len(self.melds[self.sides[seat]]):
                raise self.fail(
                    ev,
                    "layoff.no_such_meld",
                    f"the side of {self.who(seat)} has no meld {i} ({self.card}s are "
                    "laid off only on the side's own melds)",
                    seat,
                    add,
                )
            if not add:
                raise self.fail(ev, "layoff.no_cards", "nothing was laid off", seat)
        side = self.sides[seat]
        rest = self.hand_without(ev, seat, add)
        old = self.melds[side][i]
        cards = old.cards + add
        known = self.meld_readings[side][i]
        try:
            if known is None:
                reading = self.readings.read(cards)
            else:
                reading = self.readings.extended(known, add, cards)
        except MeldError as exc:
            raise self.fail(
                ev, exc.rule, f"{self.who(seat)} laying off on meld {i}: {self.meld_text(exc)}",
                seat, add
            ) from None
        if check and self.pile_top is not None and self.pile_top not in add:
            self.check_top_kept(ev, seat)  # §4 before §7, as for a new meld
        if check and len(rest) < 2:
            self.check_remaining(ev, seat, rest, reading.canastra is not None, reading)
        self.hands[seat] = rest
        self.melds[side][i] = Meld(old.id, side, cards, reading.kind, reading.canastra, old.laid_by)
        self.meld_readings[side][i] = reading
        self.after_laying(seat, side, add)

    def on_opening_retracted(self, ev: OpeningRetracted, check: bool) -> None:
        seat = ev.seat
        side = self.sides[seat] if 0 <= seat < len(self.sides) else -1
        r = self.rules
        assert r is not None
        if check:
            # A short opening that emptied the hand by melding is taken back in the emptied
            # phase too: it can take no morto and cannot go out (both refused).
            emptied = (self.phase == "emptied" and 0 <= seat < self.n_seats
                       and self.opening_short(seat))
            self.expect_turn(ev, seat, "emptied" if emptied else "play")
            if not self.opening_short(seat):
                raise self.fail(
                    ev,
                    "vulnerable.retract_not_needed",
                    "only a vulnerable side whose opening this turn is short takes its "
                    f"{self.card}s back",
                    seat,
                    ev.cards,
                )
            if Counter(ev.cards) != Counter(self.laid_this_turn):
                raise self.fail(
                    ev,
                    "vulnerable.retract_cards",
                    f"took back {self.fmt(ev.cards)}, but laid "
                    f"{self.fmt(tuple(self.laid_this_turn))} this turn",
                    seat,
                    ev.cards,
                )
        # Every meld of the side was laid this turn (the side had not opened).
        self.melds[side] = []
        self.meld_readings[side] = []
        self.hands[seat].extend(self.laid_this_turn)
        # A must-use-top pile's top card laid in the short opening was used, and comes back
        # by the vulnerability rule: the turn may end without laying it again (house rules
        # only; asking for it again left a side that cannot reach the higher minimum with it
        # no way to end the turn). A top card not yet laid must still be laid.
        self.laid_this_turn = []
        self.opening_points = 0
        self.opening_min[side] = r.opening_min_after_retract
        if self.phase == "emptied":  # the emptying melds are back in hand: play on, discard
            self.phase = "play"
            self.emptied_by = None

    def on_card_discarded(self, ev: CardDiscarded, check: bool) -> None:
        seat = ev.seat
        if check and (self.phase != "play" or seat != self.turn):
            self.expect_turn(ev, seat, "play")
        hand = self.hands[seat]
        if check:
            if ev.card not in hand:
                self.take_from_hand(ev, seat, (ev.card,), "discard.card_not_in_hand")
            if self.pile_top is not None or self.laid_this_turn:
                self.check_turn_end(ev, seat)
            if len(hand) == 1:
                self.check_emptying(ev, seat, "discard")
        hand.remove(ev.card)
        self.pile.append(ev.card)
        if hand:
            self.end_turn()
        else:
            self.phase = "emptied"
            self.emptied_by = "discard"

    def check_remaining(self, ev: Event, seat: int, rest: list[int],
                        new_canastra: bool = False, made: Reading | None = None) -> None:
        """Laying down may empty the hand only when that is allowed, and may leave a single
        card only when discarding it would be allowed: nobody is left without a discard.
        ``rest``: the cards the move leaves in hand. ``new_canastra``: the cards laid make a
        canastra (they count for the side). ``made``: the meld the move makes or grows."""
        if not rest:
            self.check_emptying(ev, seat, "meld", new_canastra, made)
        elif len(rest) == 1:
            problem = self.emptying_problem(self.sides[seat], "discard", new_canastra)
            if problem:
                # The card kept is named: a referee asks which card could not be thrown.
                raise self.fail(
                    ev,
                    problem[0],
                    f"{self.who(seat)} would keep one {self.card} that cannot be discarded "
                    f"({self.fmt((rest[0],))}): {self.with_set_hint(seat, problem, made)}",
                    seat,
                )

    def with_set_hint(self, seat: int, problem: tuple[str, str], made: Reading | None) -> str:
        """A refusal for want of a canastra, with the long sets that are none under rules whose
        canastras are runs (`mega`, `003`: "Canastra - Jogo de sete cartas ou mais em sequencia
        do mesmo naipe"): a referee shown seven kings on the table asks where the canastra is.
        Only for a refusal's message (probes never build it)."""
        r = self.rules
        if r is None or r.canastra_from_sets or not problem[0].endswith(".needs_canastra"):
            return problem[1]
        size = r.canastra_size
        long_sets = [f"meld {m.id}, {len(m.cards)} {self.card}s"
                     for m in self.melds[self.sides[seat]]
                     if m.kind == "set" and len(m.cards) >= size]
        if made is not None and made.kind == "set" and made.size >= size:
            long_sets.append(f"the set laid now, {made.size} {self.card}s")
        if not long_sets:
            return problem[1]
        return (f"{problem[1]} (under these rules a canastra is a run, and no set is one: "
                f"{'; '.join(long_sets)})")

    def check_turn_end(self, ev: Event, seat: int) -> None:
        problem = self.turn_end_problem(seat)
        if problem:
            raise self.fail(ev, problem[0], f"{self.who(seat)}: {problem[1]}", seat)

    def check_emptying(self, ev: Event, seat: int, by: str, new_canastra: bool = False,
                       made: Reading | None = None) -> None:
        problem = self.emptying_problem(self.sides[seat], by, new_canastra)
        if problem:
            raise self.fail(
                ev, problem[0], f"{self.who(seat)} may not empty the hand: "
                f"{self.with_set_hint(seat, problem, made)}", seat
            )

    def on_morto_taken(self, ev: MortoTaken, check: bool) -> None:
        seat = ev.seat
        side = self.sides[seat] if 0 <= seat < len(self.sides) else -1
        r = self.rules
        assert r is not None
        if check:
            if not r.morto:
                # A move these rules lack is named so whoever sends it, in any phase, as the
                # redraw is (docs/rules.md): RULES.md §3 deals no morto before §4 orders a turn.
                raise self.fail(ev, "morto.not_available",
                                f"{r.name} has no morto: emptying the hand is going out", seat)
            self.expect_turn(ev, seat, "emptied")
            if self.morto_taken[side]:
                raise self.fail(
                    ev,
                    "morto.not_available",
                    f"side {side} already took its morto (seq {self.morto_taken_at[side]}): "
                    "emptying the hand again is going out",
                    seat,
                )
            self.check_emptying(ev, seat, self.emptied_by or "meld")
            direct = self.emptied_by == "meld"
            if direct and self.opening_short(seat):
                # The hand was emptied by an opening the side must take back: no morto.
                raise self.fail(
                    ev,
                    "vulnerable.opening_too_low",
                    f"the side is vulnerable: its opening must total {self.opening_min[side]} "
                    f"points, this one totals {self.opening_points}; the {self.card}s are taken "
                    "back, not the morto",
                    seat,
                )
            if ev.direct != direct:
                raise self.fail(
                    ev,
                    "morto.wrong_kind",
                    f"the hand was emptied by {'melding' if direct else 'discarding'}:"
                    f" the morto is taken {'directly' if direct else 'indirectly'}",
                    seat,
                )
            if ev.count is not None and ev.count != len(self.mortos[side]):
                raise self.fail(
                    ev,
                    "morto.wrong_count",
                    f"the morto holds {self.many(len(self.mortos[side]))}, not {ev.count}",
                    seat,
                )
        self.note_relancinho(seat)
        self.hands[seat] = list(self.mortos[side])
        self.mortos[side] = ()
        self.morto_taken[side] = True
        self.morto_taken_at[side] = ev.seq
        if self.emptied_by == "meld":
            self.phase = "play"  # direct: the turn goes on, without drawing
            self.emptied_by = None
        else:
            self.morto_pending[side] = seat
            self.emptied_by = None
            self.end_turn()

    def on_went_out(self, ev: WentOut, check: bool) -> None:
        seat = ev.seat
        side = self.sides[seat] if 0 <= seat < len(self.sides) else -1
        r = self.rules
        assert r is not None
        if check:
            self.expect_turn(ev, seat, "emptied")
            if r.morto and not self.morto_taken[side]:
                raise self.fail(
                    ev,
                    "go_out.morto_first",
                    f"{self.who(seat)} emptied the hand before the side took its "
                    "morto: the morto is taken, not going out",
                    seat,
                )
            self.check_emptying(ev, seat, self.emptied_by or "meld")
            self.check_turn_end(ev, seat)
        self.note_relancinho(seat)
        self.went_out = seat
        self.phase = "out"

    def on_hand_ended(self, ev: HandEnded, check: bool) -> None:
        r = self.rules
        assert r is not None
        if check:
            if ev.reason == "went_out":
                if self.phase != "out":
                    raise self.fail(ev, "hand.not_over", "nobody went out")
            elif self.phase == "out":
                raise self.fail(
                    ev,
                    "hand.not_over",
                    f"{self.who(self.went_out or 0)} went out: the hand ends by going out, "
                    f"not by {ev.reason}",
                )
            elif self.phase != "draw":
                raise self.fail(
                    ev,
                    "hand.not_over",
                    f"the hand ends by {ev.reason} only when a turn begins, before the draw "
                    f"(phase {self.phase!r})",
                )
            elif len(self.stock) > r.stock_floor:
                raise self.fail(
                    ev,
                    "hand.not_over",
                    f"the stock still holds {self.many(len(self.stock))} (floor {r.stock_floor})",
                )
            elif self.must_use_top and self.pile and self.can_take_top(self.turn):
                # RULES.md §8, `001`: the hand ends at the floor only when the pile cannot be
                # taken; under a free pile the player chooses not to take it.
                raise self.fail(
                    ev,
                    "stock.pile_can_be_taken",
                    f"the stock is at its floor, but {self.who(self.turn)} can take the pile: "
                    f"its top {self.card} {self.fmt((self.pile[-1],))} can be used",
                    self.turn,
                )
        scores = self.score()
        if check and ev.scores is not None:
            computed = tuple(s.total for s in scores)
            if ev.scores != computed:
                parts = [
                    f"side {i}: recorded {a}, recomputed {b} ({a - b:+d})"
                    for i, (a, b) in enumerate(zip(ev.scores, computed, strict=False))
                    if a != b
                ]
                # A count off is said beside the values off: a referee who mends only the
                # values named would be refused again for the count.
                if len(ev.scores) != len(computed):
                    parts.append(f"{len(ev.scores)} scores for {len(computed)} sides")
                diff = ", ".join(parts)
                raise self.fail(ev, "score.mismatch", f"hand {self.hand}: {diff}")
        self.results.append(
            HandResult(
                hand=self.hand,
                dealer=self.dealer,
                reason=ev.reason,
                went_out=self.went_out,
                scores=scores,
                recorded=ev.scores,
                morto_taken_at=tuple(self.morto_taken_at),
                turns=self.turns + 1,
                end_seq=ev.seq,
            )
        )
        self.totals = [t + s.total for t, s in zip(self.totals, scores, strict=True)]
        winner = match_decided(r, self.totals)
        self.phase = "decided" if winner is not None else "between"
        self.winner = winner

    def score(self) -> tuple[SideScore, ...]:
        r = self.rules
        assert r is not None
        return score_hand(
            r,
            self.sides,
            self.n_sides,
            self.hands,
            self.melds,
            self.morto_taken,
            self.morto_pending,
            self.went_out,
            self.relancinho,
        )

    def on_match_ended(self, ev: MatchEnded, check: bool) -> None:
        if check:
            if self.phase != "decided":
                r = self.rules
                if r is not None and self.phase == "between":
                    why = (f"no side has reached the target with a unique highest total "
                           f"(totals {list(self.totals)}, target {r.target_score}): the match "
                           "plays another hand")
                else:
                    why = ("no side has reached the target with a unique highest total "
                           f"(phase {self.phase!r})")
                raise self.fail(ev, "match.not_over", why)
            if ev.totals is not None and ev.totals != tuple(self.totals):
                # The totals come first (§9 before §10); a wrong winner beside them is said
                # here, as a replay that goes on past a score mismatch checks nothing else.
                also = (f"; the recorded winner, side {ev.winner}, is wrong too: side "
                        f"{self.winner} won" if ev.winner is not None
                        and ev.winner != self.winner else "")
                raise self.fail(
                    ev,
                    "score.mismatch",
                    f"recorded totals {ev.totals}, recomputed {tuple(self.totals)}{also}",
                )
            if ev.winner is not None and ev.winner != self.winner:
                raise self.fail(
                    ev,
                    "match.wrong_winner",
                    f"recorded winner side {ev.winner}, but side {self.winner} won",
                )
        self.phase = "over"


_HANDLERS: dict[type, Callable[[_Table, Any, bool], None]] = {
    MatchStarted: _Table.on_match_started,
    TotalsCarried: _Table.on_totals_carried,
    HandStarted: _Table.on_hand_started,
    CardDrawn: _Table.on_card_drawn,
    FirstDrawRejected: _Table.on_first_draw_rejected,
    PileTaken: _Table.on_pile_taken,
    MeldLaid: _Table.on_meld_laid,
    CardsLaidOff: _Table.on_cards_laid_off,
    OpeningRetracted: _Table.on_opening_retracted,
    CardDiscarded: _Table.on_card_discarded,
    MortoTaken: _Table.on_morto_taken,
    WentOut: _Table.on_went_out,
    HandEnded: _Table.on_hand_ended,
    MatchEnded: _Table.on_match_ended,
}


_EDGE_PHASES = frozenset(("new", "out", "decided", "over"))


def _dispatch(table: _Table, ev: Event, check: bool) -> None:
    handler = _HANDLERS.get(ev.__class__)
    if handler is None:
        raise TypeError(f"no handler for event type {type(ev).__name__}")  # a program error
    if check and (ev.seq != table.seq + 1 or table.phase in _EDGE_PHASES):
        _check_sequence(table, ev)
    handler(table, ev, check)
    table.seq = ev.seq


def _check_sequence(table: _Table, ev: Event) -> None:
    """The envelope checks: seq order, and events that no phase of this kind accepts."""
    if ev.seq != table.seq + 1:
        raise table.fail(ev, "seq.out_of_order",
                         f"seq {ev.seq} follows seq {table.seq}; expected {table.seq + 1}")
    if type(ev) is MatchStarted and table.phase != "new":
        # a referee meets a second start (two matches in one file), not a late move: the rule
        # is the second start's wherever it stands, with the end said when there is one
        raise table.fail(ev, "match.already_started", _second_start(table))
    if table.phase == "over":
        raise table.fail(ev, "match.over", "the match has ended")
    if table.phase == "new" and type(ev) is not MatchStarted:
        raise table.fail(ev, "match.not_started", "the log must open with MatchStarted")
    if table.phase in ("out", "decided") and type(ev) not in (HandEnded, MatchEnded):
        if table.phase == "out":
            rule = "hand.over"
            seat = table.went_out
            who = table.who(seat) if seat is not None and 0 <= seat < table.n_seats else "a seat"
            why = f"after {who} went out: only the hand's end may follow"
        else:
            rule = "match.decided"
            w = table.winner
            r = table.rules
            won = f"side {w} won the match with {table.totals[w]}" \
                if w is not None and 0 <= w < len(table.totals) else "the match was decided"
            target = f" (target {r.target_score})" if r is not None else ""
            why = f"after {won}{target}: only the match end may follow"
        raise table.fail(ev, rule, f"{tag_of(ev)} {why}")


def _second_start(table: _Table) -> str:
    """Why a match start after the first is refused, and where the match it follows stands."""
    where = (f"has already started and ended (MatchEnded at seq {table.seq})"
             if table.phase == "over" else "has already started")
    return (f"a second match start: this log's match {where}; a new match is written in a log "
            "of its own")


def meld_with_top(readings: MeldCache, top: Card, hand: Iterable[Card]) -> bool:
    """Can ``top`` form a new meld with two cards of ``hand``? Any meld holding the top card
    contains a valid three-card meld holding it (its neighbours in the run, or two more of
    the set), so trying pairs is enough."""
    counts: dict[Card, int] = {}  # a plain dict: Counter's constructor is interpreted code
    for c in hand:
        counts[c] = counts.get(c, 0) + 1
    cards = [c for c in counts if _may_join(top, c)]
    cards.sort()
    for i in range(len(cards)):
        a = cards[i]
        for j in range(i, len(cards)):
            b = cards[j]
            if (a != b or counts[a] >= 2) and readings.fits((top, a, b)):
                return True
    return False


# --------------------------------------------------------------------- public API


def validate(state: State, event: AnyEvent) -> None:
    """Raise :class:`IllegalMoveError` if ``event`` may not follow ``state``."""
    _dispatch(_Table(state), event, True)


def apply(state: State, event: AnyEvent) -> State:
    """The state after ``event``, trusting that it is legal."""
    t = _Table(state)
    _dispatch(t, event, False)
    return t.freeze()


def step(state: State, event: AnyEvent) -> State:
    """Validate, then apply."""
    t = _Table(state)
    _dispatch(t, event, True)
    return t.freeze()


NO_BYTE = 255  # a missing value in the one-byte columns (read back as int8, -1)

# The events whose columns need the table (or start a hand's or match's bookkeeping): the
# collector steps them itself. A MeldLaid without a recorded id is one too (its id is the
# engine's); every other kind is collected inside Replayer.collect.
_COLUMN_STOPS = frozenset((MatchStarted, TotalsCarried, HandStarted, MortoTaken, HandEnded,
                           MatchEnded))


class EventColumns:
    """The archive's columns of the events :meth:`Replayer.collect` accepted, in order.

    One entry per event in ``kind`` (the code ``kinds`` gives its class), ``seat``, ``lens``
    (how many cards the event has in ``cards``; -1: it has no cards column) and ``meld``
    (:data:`NO_BYTE`: none); ``cards`` holds them all in order. ``pickups`` holds a seat and a
    count per pile pickup, for the caller to clear at each deal. Plain int lists: appends are
    native once compiled, and the caller copies each into a typed array in one call.
    """

    def __init__(self, kinds: dict[type, int]) -> None:
        self.kinds = kinds
        self.kind: list[int] = []
        self.seat: list[int] = []
        self.cards: list[int] = []
        self.lens: list[int] = []
        self.meld: list[int] = []
        self.pickups: list[int] = []


class Replayer:
    """Replays events one by one on a private mutable table.

    ``step`` validates and applies; ``apply`` trusts. ``state()`` is a frozen snapshot.
    With ``snapshot_every``, frozen states are kept every N events for fast jumps.
    """

    def __init__(self, start: State | None = None, *, snapshot_every: int = 0) -> None:
        self._t = _Table(start or State())
        self._every = snapshot_every
        self.snapshots = Snapshots()

    @property
    def seq(self) -> int:
        return self._t.seq

    @property
    def phase(self) -> str:
        return self._t.phase

    def step(self, event: AnyEvent) -> None:
        t = self._t
        handler = _HANDLERS.get(event.__class__)
        if handler is None or event.seq != t.seq + 1 or t.phase in _EDGE_PHASES:
            _dispatch(t, event, True)  # the slow path names what is wrong
        else:
            handler(t, event, True)
            t.seq = event.seq
        if self._every and event.seq % self._every == 0:
            self.snapshots.keep(self._t.freeze(False), self._t.results)

    def run(self, events: Iterable[AnyEvent]) -> None:
        """``step`` every event in turn: the same checks, without a call per event.

        The three commonest events, a plain draw, a plain discard and a free pile pickup, are
        applied inline here when every condition for accepting them holds; anything else
        (including every event that would be refused) goes to its handler, which names the
        broken rule. The inline paths are tested against the handlers event by event
        (tests/property/test_fast_path.py).
        """
        self._run(events, None)

    def collect(self, events: Iterator[AnyEvent], into: EventColumns) -> AnyEvent | None:
        """``run`` the events, appending each one's columns to ``into`` once it is accepted.

        Stops at the first event whose columns need the table (see :class:`EventColumns`) and
        returns it unapplied, consumed from ``events``; None when the events ran out. The
        archive's collector (``buraco_log.columns``) steps that event itself and goes on: the
        columns of every common event are gathered in this loop, compiled, not in a second
        interpreted one.
        """
        stop: AnyEvent | None = self._run(events, into)
        return stop

    def _run(self, events: Iterable[AnyEvent], into: EventColumns | None) -> Any:
        t = self._t
        edge = _EDGE_PHASES
        every = self._every
        last = t.seq
        # Local names: faster than module globals, in plain Python and compiled alike.
        discarded, drawn, taken = CardDiscarded, CardDrawn, PileTaken
        laid_off, melded = CardsLaidOff, MeldLaid
        rejected, retracted, went_out = FirstDrawRejected, OpeningRetracted, WentOut
        event: Any  # the class tests below stand in for isinstance, which mypy would want
        seq: int
        seat: int
        card: int
        try:
            for event in events:
                cls = type(event)
                if into is not None and (cls in _COLUMN_STOPS or (cls is melded
                                                                 and event.meld is None)):
                    return event
                seq = event.seq
                done = False
                if seq == last + 1:
                    if cls is discarded:
                        seat = event.seat
                        if t.phase == "play" and seat == t.turn and t.pile_top is None:
                            hand = t.hands[seat]
                            card = event.card
                            if (
                                card in hand
                                and len(hand) > 1
                                and not (t.laid_this_turn and t.opening_short(seat))
                            ):
                                hand.remove(card)
                                t.pile.append(card)
                                t.end_turn()
                                done = True
                    elif cls is drawn:
                        stock = t.stock
                        seat = event.seat
                        card = event.card
                        if (
                            t.phase == "draw"
                            and seat == t.turn
                            and not t.may_reject
                            and len(stock) > t.stock_floor
                            and card == stock[-1]
                        ):
                            stock.pop()
                            t.hands[seat].append(card)
                            t.drawn = card
                            t.phase = "play"
                            done = True
                    elif cls is taken:
                        pile = t.pile
                        seat = event.seat
                        if (
                            t.phase == "draw"
                            and seat == t.turn
                            and pile
                            and not t.must_use_top
                            and not t.rejected
                            and event.count == len(pile)
                            and event.top == pile[-1]
                        ):
                            t.hands[seat] += pile
                            t.pile = []
                            t.may_reject = False
                            t.phase = "play"
                            done = True
                if not done:
                    t.seq = last
                    # Direct calls for the common kinds (native calls once compiled).
                    if seq != last + 1 or t.phase in edge:
                        _dispatch(t, event, True)
                    elif cls is laid_off:
                        t.on_cards_laid_off(event, True)
                    elif cls is melded:
                        t.on_meld_laid(event, True)
                    elif cls is taken:
                        t.on_pile_taken(event, True)
                    elif cls is discarded:
                        t.on_card_discarded(event, True)
                    elif cls is drawn:
                        t.on_card_drawn(event, True)
                    else:
                        _dispatch(t, event, True)
                last = seq
                if every and seq % every == 0:
                    t.seq = seq
                    self.snapshots.keep(t.freeze(False), t.results)
                if into is not None:  # accepted: its columns, each attribute read once
                    seat = event.seat
                    into.kind.append(into.kinds[cls])
                    into.seat.append(seat)
                    if cls is taken:
                        into.cards.append(event.top)
                        into.lens.append(1)
                        into.meld.append(NO_BYTE)
                        into.pickups.append(seat)
                        into.pickups.append(event.count)
                    elif cls is discarded or cls is drawn or cls is rejected:
                        into.cards.append(event.card)
                        into.lens.append(1)
                        into.meld.append(NO_BYTE)
                    elif cls is went_out:  # no cards
                        into.lens.append(-1)
                        into.meld.append(NO_BYTE)
                    else:  # a lay-off, a meld with its id recorded, a retraction
                        cards = event.cards
                        into.cards.extend(cards)
                        into.lens.append(len(cards))
                        into.meld.append(NO_BYTE if cls is retracted else event.meld)
        except AttributeError:
            if not isinstance(event, Event):  # caught here, not checked per event
                raise TypeError(f"replay takes events, not {type(event).__name__}: "
                                f"{event!r:.60}") from None
            raise
        finally:
            t.seq = last
        return None

    def apply(self, event: AnyEvent) -> None:
        _dispatch(self._t, event, False)
        if self._every and event.seq % self._every == 0:
            self.snapshots.keep(self._t.freeze(False), self._t.results)

    def state(self) -> State:
        return self._t.freeze()

    @property
    def table(self) -> _Table:
        """The live mutable table, for fast read-only use (simulation, archive flattening):
        its attributes are those of :class:`State`, with the stock's top at the end. Never
        mutate it; take :meth:`state` for a value that can be kept."""
        return self._t


def replay(events: Iterable[AnyEvent], *, check: bool = True) -> State:
    """The state after the last event (validated unless ``check`` is False)."""
    r = Replayer()
    if check:
        r.run(events)
    else:
        for ev in events:
            r.apply(ev)
    return r.state()


def states(events: Iterable[AnyEvent]) -> Iterator[State]:
    """Every state along the log, validated (slow: one frozen copy per event)."""
    r = Replayer()
    for ev in events:
        r.step(ev)
        yield r.state()


def state_at(events: Iterable[AnyEvent], seq: SupportsIndex, *, check: bool = True) -> State:
    """The state right after event ``seq``."""
    # checked here, not by the compiled signature: True was seq 1, 3.0 or None a TypeError
    at = position(seq, "seq")
    if at < 0:  # the loop would stop at the first event and name it as the log's last
        raise PositionError(f"the log has no seq {at}: seqs start at 0", seq=at)
    r = Replayer()
    run = r.step if check else r.apply
    for ev in events:
        run(ev)
        if ev.seq >= at:
            break
    if r.seq != at:
        raise PositionError(f"the log has no seq {at} (last seq {r.seq})", seq=at)
    return r.state()


def _may_join(top: Card, c: Card) -> bool:
    """Could ``c`` share a three-card meld with ``top``? A cheap filter before real readings."""
    if top == JOKER or c == JOKER:
        return True
    rank_of = RANK  # one global look-up, not six (compiled code looks globals up by name)
    rt, rc = rank_of[top], rank_of[c]
    if rt == 2 or rc == 2 or rc == rt:
        return True
    suit_of = SUIT
    if suit_of[c] != suit_of[top]:
        return False
    d = abs(rc - rt)
    return d <= 2 or d >= 11  # neighbours, or across the ace (Q-K-A, A-2-3)


_MATERIAL: dict[int, list[int]] = {}


def _material_counts(jokers: int) -> list[int]:
    """How many of each card code the material holds (built once per joker count)."""
    counts = _MATERIAL.get(jokers)
    if counts is None:
        counts = [0] * (JOKER + 1)
        for c in deck(jokers):
            counts[c] += 1
        _MATERIAL[jokers] = counts
    return counts


def _is_material(ev: HandStarted, jokers: int) -> bool:
    """Does the deal hold exactly the material, each card as often as the decks have it?
    (Counting, not sorting: a tight loop once compiled; the message is built elsewhere.)"""
    left = _material_counts(jokers).copy()
    parts: list[tuple[int, ...]] = [ev.stock, *ev.hands, *ev.mortos]
    if ev.upcard is not None:
        parts.append((ev.upcard,))
    part: tuple[int, ...]
    c: int
    for part in parts:
        for c in part:
            if c < 0 or c > JOKER or left[c] == 0:
                return False
            left[c] -= 1
    return not any(left)


def _no_cards(ev: Event, rules: Rules | None) -> tuple[Any, ...]:
    """The codes ``ev`` holds that are no card of ``rules`` (a joker where the preset has none),
    in the event's order, each once; () for an event that holds only cards or none."""
    codes: list[Any]
    if isinstance(ev, (CardDrawn, FirstDrawRejected, CardDiscarded)):
        codes = [ev.card]
    elif isinstance(ev, PileTaken):
        codes = [ev.top]
    elif isinstance(ev, (MeldLaid, CardsLaidOff, OpeningRetracted)):
        codes = list(ev.cards)
    elif isinstance(ev, HandStarted):
        codes = [*(c for h in ev.hands for c in h), *(c for m in ev.mortos for c in m),
                 *ev.stock]
        if ev.upcard is not None:
            codes.append(ev.upcard)
    else:
        return ()
    jokers = rules is None or rules.jokers > 0
    bad: list[Any] = []
    for c in codes:
        if (not is_card(c) or (c == JOKER and not jokers)) and c not in bad:
            bad.append(c)
    return tuple(bad)


def _set_rank(cards: tuple[int, ...]) -> int:
    return next(RANK[c] for c in cards if c != JOKER and RANK[c] != 2)


def _fmt(cards: tuple[Card | None, ...], style: Style = "ascii") -> str:
    """Cards as text for a message, in ``style``; a code that is no card shows as ``#999``."""
    return " ".join(format_card(c, style) if is_card(c) else f"#{c}" for c in cards
                    if c is not None)
