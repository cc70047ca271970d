"""Frozen state values handed to callers, and the per-seat view (hidden information).

The replay loop works on a private mutable table (see ``reducer``); what escapes is always one
of these frozen structs, so nobody can change a past state by accident.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Mapping, Sequence
from typing import Literal

import msgspec

from buraco_log.events import Player
from buraco_log.rules import Rules

Phase = Literal[
    "new",  # before MatchStarted
    "between",  # between hands: HandStarted comes next
    "draw",  # the player to move must draw or take the pile
    "play",  # the player to move may meld, lay off, and must discard
    "emptied",  # the hand just emptied: MortoTaken or WentOut comes next
    "out",  # a player went out: HandEnded comes next
    "decided",  # the match is decided: MatchEnded comes next
    "over",  # the match ended
]


class Meld(msgspec.Struct, frozen=True, gc=False):
    """A meld on the table. ``cards`` in the order laid; the reading is recomputed from them."""

    id: int
    side: int
    cards: tuple[int, ...]
    kind: Literal["set", "run"]
    canastra: str | None
    laid_by: int


class SideScore(msgspec.Struct, frozen=True, gc=False):
    """One side's score for one hand, line by line (RULES.md §9)."""

    side: int
    table_points: int  # points of the cards in the side's melds
    canastras: dict[str, int]  # count by class
    canastra_bonus: int
    going_out: int
    relancinho: int
    hand_penalty: int  # points of cards left in the side's hands (positive number)
    morto_penalty: int  # positive number
    total: int


class HandResult(msgspec.Struct, frozen=True, gc=False):
    hand: int
    dealer: int
    reason: str
    went_out: int | None
    scores: tuple[SideScore, ...]
    recorded: tuple[int, ...] | None
    morto_taken_at: tuple[int | None, ...]  # seq at which each side took its morto
    turns: int
    end_seq: int


class State(msgspec.Struct, frozen=True, gc=False):
    """Everything after one event. Equal logs give equal states, in any process."""

    seq: int = -1
    phase: Phase = "new"
    match_id: str = ""
    rules: Rules | None = None
    players: tuple[Player, ...] = ()
    sides: tuple[int, ...] = ()  # side of each seat
    n_sides: int = 0
    first_dealer: int = 0
    hand: int = -1
    dealer: int = 0
    turn: int = 0  # seat to move
    turns: int = 0  # turns ended this hand: the turn in play is number turns, from 0
    hands: tuple[tuple[int, ...], ...] = ()  # per seat, in the order received
    stock: tuple[int, ...] = ()  # stock[0] is the top, drawn next (as HandStarted deals it)
    pile: tuple[int, ...] = ()  # pile[-1] is the top
    mortos: tuple[tuple[int, ...], ...] = ()  # per side; empty once taken
    morto_taken: tuple[bool, ...] = ()
    morto_taken_at: tuple[int | None, ...] = ()
    morto_pending: tuple[int | None, ...] = ()  # taker of an indirect morto before their turn
    melds: tuple[tuple[Meld, ...], ...] = ()  # per side
    totals: tuple[int, ...] = ()  # match score per side before the current hand's result
    results: tuple[HandResult, ...] = ()
    # Turn bookkeeping.
    drawn: int | None = None  # card drawn from the stock this turn
    may_reject: bool = False  # first_turn_redraw is still available
    rejected: bool = False  # the first draw was rejected: draw from the stock again
    pile_top: int | None = None  # must_use_top: the taken top card, until it is used
    taken_top: int | None = None  # must_use_top: the top card taken this turn
    emptied_by: str | None = None  # "meld" or "discard", while phase is "emptied"
    laid_this_turn: tuple[int, ...] = ()  # cards the player laid this turn
    # Per side, per hand.
    vulnerable: tuple[bool, ...] = ()
    opened: tuple[bool, ...] = ()  # the side has laid its opening (before this turn)
    opening_min: tuple[int, ...] = ()
    opening_points: int = 0  # card points laid this turn toward an opening
    relancinho: tuple[int, ...] = ()
    # Per seat, per hand.
    laid_before: tuple[bool, ...] = ()  # the seat laid cards in an earlier turn
    relancinho_done: tuple[bool, ...] = ()
    went_out: int | None = None
    winner: int | None = None

    def side_of(self, seat: int) -> int:
        return self.sides[seat]

    def card_count(self) -> int:
        """Cards in play this hand: conservation says this never changes within a hand."""
        return (sum(map(len, self.hands)) + len(self.stock) + len(self.pile)
                + sum(map(len, self.mortos)) + sum(len(m.cards) for s in self.melds for m in s))


class Snapshots(Mapping[int, State]):
    """A replay's frozen states by seq (``Replayer(snapshot_every=N)``), for fast jumps.

    Each is kept without the ended hands' results, with their count, and gets them back when
    read, from one list every snapshot shares (the results of a match only grow): a frozen
    state copies every result, so a snapshot every N events of a match of H hands held H
    results each, memory quadratic in the hands.
    """

    def __init__(self) -> None:
        self._bare: dict[int, tuple[State, int]] = {}
        self._results: list[HandResult] = []

    def keep(self, bare: State, results: Sequence[HandResult]) -> None:
        """Keep ``bare`` (a state frozen with no results) as the state after its seq, whose
        results are ``results`` (the live table's list, which only grows)."""
        have = self._results
        if len(results) > len(have):
            have.extend(results[len(have):])
        self._bare[bare.seq] = (bare, len(results))

    def __getitem__(self, seq: int) -> State:
        bare, count = self._bare[seq]
        if not count:
            return bare
        return msgspec.structs.replace(bare, results=tuple(self._results[:count]))

    def __iter__(self) -> Iterator[int]:
        return iter(self._bare)

    def __len__(self) -> int:
        return len(self._bare)


class SeatView(msgspec.Struct, frozen=True):
    """What one seat could see: its own hand, counts of the others, the table and the pile."""

    seat: int
    seq: int
    phase: str
    hand: int
    turn: int
    my_hand: tuple[int, ...]
    hand_counts: tuple[int, ...]
    stock_count: int
    pile: tuple[int, ...]  # the discard pile is open in every preset
    morto_counts: tuple[int, ...]
    morto_taken: tuple[bool, ...]
    melds: tuple[tuple[Meld, ...], ...]
    totals: tuple[int, ...]


def view(state: State, seat: int) -> SeatView:
    """The state as ``seat`` sees it: other hands and the stock are counts only."""
    # ValueError, as it always was, for a seat that is no whole number too (True was seat 1;
    # 1.5 and None failed inside); a Timeline's own check gives a PositionError
    try:
        index = -1 if isinstance(seat, bool) else operator.index(seat)  # NumPy ints too
    except TypeError:
        index = -1
    if not 0 <= index < len(state.players):
        raise ValueError(f"no seat {seat!r} in a {len(state.players)}-player match")
    seat = index
    return SeatView(
        seat=seat, seq=state.seq, phase=state.phase, hand=state.hand, turn=state.turn,
        my_hand=state.hands[seat] if state.hands else (),
        hand_counts=tuple(len(h) for h in state.hands),
        stock_count=len(state.stock), pile=state.pile,
        morto_counts=tuple(len(m) for m in state.mortos), morto_taken=state.morto_taken,
        melds=state.melds, totals=state.totals,
    )
