"""One validating replay that also collects the archive's columns of a match.

The archive (``buraco_log.archive.flatten``) stores every event as a row of typed columns and
every hand and final meld as rows. This is the loop that collects them while the rules engine
replays the match: plain typed arrays and tuples, which the archive turns into Arrow tables.
It is core code (no pyarrow) so that the collection stays beside the replay it rides on.

Core module: standard library and the rules engine only.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any

from buraco_log.events import (
    AnyEvent,
    CardDiscarded,
    CardDrawn,
    CardsLaidOff,
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
)
from buraco_log.melds import CANASTRA_CLASSES
from buraco_log.reducer import NO_BYTE, EventColumns, Replayer
from buraco_log.state import Meld

KINDS: tuple[str, ...] = (
    "ms", "hs", "dr", "rj", "pt", "ml", "lo", "rt", "dc", "mt", "wo", "he", "me", "tc",
)
"""The event kinds stored in the events table's ``kind`` column, by their code (the index).
New kinds are only ever appended: a stored code keeps its meaning."""

_EVENT_TYPES: tuple[type, ...] = (
    MatchStarted, HandStarted, CardDrawn, FirstDrawRejected, PileTaken, MeldLaid, CardsLaidOff,
    OpeningRetracted, CardDiscarded, MortoTaken, WentOut, HandEnded, MatchEnded, TotalsCarried,
)
_KIND_OF: dict[type, int] = {tp: KINDS.index(str(tp.__struct_config__.tag))  # type: ignore[attr-defined]
                             for tp in _EVENT_TYPES}
if len(_KIND_OF) != len(KINDS):
    raise ImportError("columns.KINDS and the event types disagree")

NULL = -1  # the missing value in the integer columns (no stored column holds -1)
NULL8 = NO_BYTE  # the same in the one-byte columns: the byte 255 is -1 read as int8


class Columns:
    """What one validating replay of a finished match collected for the archive."""

    def __init__(self, gid: int) -> None:
        self.gid = gid
        # The events' columns, one entry per event (NULL, NULL8: no value).
        self.kind = b""
        self.hand = array("h")
        self.seat = bytearray()
        self.cards = bytearray()  # every card of every event, in order
        self.lens = array("i")  # how many of them each event has (NULL: no cards column)
        self.meld = bytearray()
        self.count = array("h")
        self.direct = bytearray()
        self.stock = array("h")
        self.hand_rows: list[tuple[Any, ...]] = []  # rows of the hands table
        self.meld_hand: list[int] = []  # the final melds of every hand, and their hand
        self.melds: list[Meld] = []
        self.first_player = 0
        self.winner = 0
        self.totals: tuple[int, ...] = ()
        self.sides: tuple[int, ...] = ()
        self.n_sides = 0
        self.hands = 0
        self.deal_events: list[AnyEvent] = []  # MatchStarted, every HandStarted, MatchEnded


def replay_columns(events: list[AnyEvent], gid: int) -> Columns | None:
    """Validate every event and collect the columns; None when the match never finished.

    The rules engine's compiled loop (:meth:`Replayer.collect`) validates the events and
    appends the columns of the common ones (draws, discards, pickups, lay-offs, retractions,
    going out, melds with their id recorded) once each is accepted. It hands back the events
    whose columns need the table after their step (a meld without an id, the morto, a deal, a
    hand's end, the match's start and end), which are stepped here. An illegal event stops the
    replay with the engine's error either way, before any of its columns is read.
    ``hand`` is filled in runs afterwards: it changes only at a deal.
    """
    r = Replayer()
    t = r.table  # read-only: melds, sides, hands, turns, results
    f = Columns(gid)
    n = len(events)
    into = EventColumns(_KIND_OF)
    kinds, seats, cards, lens, melds = into.kind, into.seat, into.cards, into.lens, into.meld
    count = array("h", [NULL]) * n
    direct = bytearray(b"\xff") * n
    stock = array("h", [NULL]) * n
    step = r.step
    collect = r.collect
    it = iter(events)
    deals: list[tuple[int, int]] = []  # (index, hand) of each HandStarted
    hand_start = 0
    morto: dict[int, tuple[int, int, bool]] = {}
    first_player = -1
    while (ev := collect(it, into)) is not None:
        i = len(seats)  # this event's index: every earlier one has its entries
        kinds.append(_KIND_OF[type(ev)])
        seat, n_cards, meld = NULL8, NULL, NULL8
        if isinstance(ev, MeldLaid):  # no recorded id: the engine numbers it
            step(ev)
            seat, n_cards = ev.seat, len(ev.cards)
            cards.extend(ev.cards)
            meld = t.melds[t.sides[seat]][-1].id
        elif isinstance(ev, MortoTaken):
            turn: int = t.turns
            step(ev)
            seat = ev.seat
            direct[i] = ev.direct
            count[i] = len(t.hands[seat])
            morto[t.sides[seat]] = (ev.seq, turn, ev.direct)
        elif isinstance(ev, HandStarted):
            step(ev)
            if ev.upcard is not None:
                cards.append(ev.upcard)
                n_cards = 1
            stock[i] = len(ev.stock)
            deals.append((i, t.hand))
            f.deal_events.append(ev)
            hand_start = ev.seq
            morto = {}
            into.pickups.clear()
            if first_player < 0:
                first_player = t.turn
        elif isinstance(ev, HandEnded):
            final = [list(side) for side in t.melds]  # melds are reset for the next hand
            step(ev)
            _hand_rows(f, t, final, hand_start, morto, _pickups(into.pickups, t.sides))
        else:
            step(ev)
            if not isinstance(ev, TotalsCarried):
                f.deal_events.append(ev)  # MatchStarted or MatchEnded
        seats.append(seat)
        lens.append(n_cards)
        melds.append(meld)
    if t.phase != "over" or not isinstance(events[-1], MatchEnded):
        return None
    f.kind = bytes(kinds)
    hand = array("h", [-1]) * (deals[0][0] if deals else n)
    for k, (i, h) in enumerate(deals):
        hand += array("h", [h]) * ((deals[k + 1][0] if k + 1 < len(deals) else n) - i)
    f.hand = hand
    f.seat, f.cards, f.lens, f.meld = (bytearray(seats), bytearray(cards), array("i", lens),
                                       bytearray(melds))
    f.count, f.direct, f.stock = count, direct, stock
    f.first_player = max(0, first_player)
    f.winner = t.winner if t.winner is not None else -1
    f.totals = tuple(t.totals)
    f.sides = tuple(t.sides)
    f.n_sides = t.n_sides
    f.hands = len(t.results)
    return f


def _pickups(flat: list[int], sides: Sequence[int]) -> dict[int, list[int]]:
    """A hand's pile pickups (seat, count, seat, count, ...) as each side's counts in order."""
    out: dict[int, list[int]] = {}
    for k in range(0, len(flat), 2):
        out.setdefault(sides[flat[k]], []).append(flat[k + 1])
    return out


def _hand_rows(f: Columns, t: Any, final: list[list[Meld]], start_seq: int,
               morto: dict[int, tuple[int, int, bool]], pickups: dict[int, list[int]]) -> None:
    res = t.results[-1]
    first_morto = min((m[0] for m in morto.values()), default=None)
    best = max(s.total for s in res.scores)
    went_side = t.sides[res.went_out] if res.went_out is not None else None
    for s in res.scores:  # in the order of the hands table's columns
        mt = morto.get(s.side)
        f.hand_rows.append((
            f.gid, res.hand, s.side, res.dealer, res.reason, res.went_out, went_side == s.side,
            res.turns, res.end_seq - start_seq + 1, start_seq, res.end_seq, s.table_points,
            s.canastra_bonus, s.going_out, s.relancinho, s.hand_penalty, s.morto_penalty,
            s.total, *(s.canastras.get(c, 0) for c in CANASTRA_CLASSES),
            mt[0] if mt else None, mt[1] if mt else None, mt[2] if mt else None,
            s.total == best, mt is not None and mt[0] == first_morto,
            pickups.get(s.side, []),
        ))
    for side in final:
        f.meld_hand += [res.hand] * len(side)
        f.melds += side
