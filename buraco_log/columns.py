"""One validating replay that also collects the archive's columns of a match.

The archive (``buraco_log.archive.flatten``) stores every event as a row of typed columns and
every hand and final meld as rows. This is the loop that collects them while the rules engine
replays the match: plain typed arrays and tuples, which the archive turns into Arrow tables.
It is core code (no pyarrow) so that the collection stays beside the replay it rides on.

Core module: standard library and the rules engine only.
"""

from __future__ import annotations

from array import array
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
from buraco_log.reducer import Replayer
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
NULL8 = 255  # the same in the one-byte columns: the byte 255 is -1 read as int8


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

    One loop does both. Each event writes only the columns its type has into typed columns made
    at full length with NULL (``hand`` is filled in runs afterwards: it changes only at a deal).
    The rules engine validates every event: the events whose rows need nothing from the table
    (draws, discards, pickups, lay-offs, retractions, going out, melds with their id recorded)
    are replayed a stretch at a time by :meth:`Replayer.run`, right before the next event that
    reads the table after its own step (a meld without an id, the morto, a deal, a hand's end)
    and at the end. An illegal event stops the replay with the engine's error either way.
    """
    r = Replayer()
    t = r.table  # read-only: melds, sides, hands, turns, results
    f = Columns(gid)
    n = len(events)
    seat = bytearray(b"\xff") * n
    lens = array("i", [NULL]) * n
    meld = bytearray(b"\xff") * n
    count = array("h", [NULL]) * n
    direct = bytearray(b"\xff") * n
    stock = array("h", [NULL]) * n
    cards = f.cards
    add_card = cards.append
    add_cards = cards.extend
    step = r.step
    run = r.run
    deals: list[tuple[int, int]] = []  # (index, hand) of each HandStarted
    hand_start = 0
    morto: dict[int, tuple[int, int, bool]] = {}
    pickups: dict[int, list[int]] = {}
    sides: list[int] = []
    first_player = -1
    todo = 0  # events[todo:i] are collected but not replayed yet
    # Exact type tests (the event classes are final), commonest first: in plain Python one
    # `is` per test costs far less than an isinstance call.
    for i, ev in enumerate(events):
        tp = type(ev)
        if tp is CardDiscarded or tp is CardDrawn or tp is FirstDrawRejected:
            seat[i] = ev.seat  # type: ignore[union-attr]
            add_card(ev.card)  # type: ignore[union-attr]
            lens[i] = 1
            continue
        if tp is CardsLaidOff:
            seat[i] = ev.seat  # type: ignore[union-attr]
            add_cards(ev.cards)  # type: ignore[union-attr]
            lens[i] = len(ev.cards)  # type: ignore[union-attr]
            meld[i] = ev.meld  # type: ignore[union-attr,assignment]
            continue
        if tp is PileTaken:
            seat[i] = ev.seat  # type: ignore[union-attr]
            add_card(ev.top)  # type: ignore[union-attr]
            lens[i] = 1
            pickups.setdefault(sides[ev.seat], []).append(ev.count)  # type: ignore[union-attr,arg-type]
            continue
        if tp is MeldLaid and ev.meld is not None:  # type: ignore[union-attr]
            # A recorded meld id is checked by the engine (meld.wrong_id): no stop needed.
            seat[i] = ev.seat  # type: ignore[union-attr]
            add_cards(ev.cards)  # type: ignore[union-attr]
            lens[i] = len(ev.cards)  # type: ignore[union-attr]
            meld[i] = ev.meld  # type: ignore[union-attr]
            continue
        if tp is OpeningRetracted or tp is WentOut:
            seat[i] = ev.seat  # type: ignore[union-attr]
            if tp is OpeningRetracted:
                add_cards(ev.cards)  # type: ignore[union-attr]
                lens[i] = len(ev.cards)  # type: ignore[union-attr]
            continue
        if todo < i:
            run(events[todo:i])
        todo = i + 1
        if isinstance(ev, MeldLaid):  # no recorded id: the engine numbers it
            step(ev)
            s = seat[i] = ev.seat
            add_cards(ev.cards)
            lens[i] = len(ev.cards)
            meld[i] = t.melds[t.sides[s]][-1].id
        elif isinstance(ev, MortoTaken):
            turn: int = t.turns
            step(ev)
            seat[i] = ev.seat
            direct[i] = ev.direct
            count[i] = len(t.hands[ev.seat])
            morto[t.sides[ev.seat]] = (ev.seq, turn, ev.direct)
        elif isinstance(ev, HandStarted):
            step(ev)
            if ev.upcard is not None:
                add_card(ev.upcard)
                lens[i] = 1
            stock[i] = len(ev.stock)
            deals.append((i, t.hand))
            f.deal_events.append(ev)
            hand_start = ev.seq
            morto = {}
            pickups = {}
            if first_player < 0:
                first_player = t.turn
        elif isinstance(ev, HandEnded):
            final = [list(side) for side in t.melds]  # melds are reset for the next hand
            step(ev)
            _hand_rows(f, t, final, hand_start, morto, pickups)
        else:
            step(ev)
            sides = list(t.sides)  # fixed from the match start on
            if not isinstance(ev, TotalsCarried):
                f.deal_events.append(ev)  # MatchStarted or MatchEnded
    if todo < n:
        run(events[todo:])
    if t.phase != "over" or not isinstance(events[-1], MatchEnded):
        return None
    f.kind = bytes(map(_KIND_OF.__getitem__, map(type, events)))
    hand = array("h", [-1]) * (deals[0][0] if deals else n)
    for k, (i, h) in enumerate(deals):
        hand += array("h", [h]) * ((deals[k + 1][0] if k + 1 < len(deals) else n) - i)
    f.hand = hand
    f.seat, f.lens, f.meld, f.count, f.direct, f.stock = seat, lens, meld, count, direct, stock
    f.first_player = max(0, first_player)
    f.winner = t.winner if t.winner is not None else -1
    f.totals = tuple(t.totals)
    f.sides = tuple(t.sides)
    f.n_sides = t.n_sides
    f.hands = len(t.results)
    return f


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
