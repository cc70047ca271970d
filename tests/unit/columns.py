"""The check that a match's columnar tables hold exactly what its events say."""

from __future__ import annotations

from typing import Any

from buraco_log.columns import KINDS, NULL, NULL8, Columns, replay_columns
from buraco_log.events import (
    AnyEvent,
    CardsLaidOff,
    HandEnded,
    HandStarted,
    MeldLaid,
    MortoTaken,
    PileTaken,
)
from buraco_log.reducer import Replayer
from buraco_log.state import State


def reference(events: list[AnyEvent]) -> tuple[dict[str, Any], State]:
    """Every event column, one event at a time: read from the event, or from the table
    right after the event (a meld's engine-given id, the hand size after the morto); and
    ``pickups``, each side's pile pickups (hand, side -> counts in order). With the state at
    the end."""
    r = Replayer()
    t = r.table
    cols: dict[str, list[Any]] = {k: [] for k in
                                  ("kind", "hand", "seat", "cards", "meld", "count", "direct",
                                   "stock")}
    pickups: dict[tuple[int, int], list[int]] = {}
    hand = -1
    for ev in events:
        r.step(ev)
        tag = type(ev).__struct_config__.tag
        if isinstance(ev, HandStarted):
            hand = t.hand
        cards: list[int] | None = None
        for name in ("card", "top", "upcard"):
            value = getattr(ev, name, None)
            if value is not None:
                cards = [value]
        if hasattr(ev, "cards"):
            cards = list(ev.cards)
        meld = getattr(ev, "meld", None)
        if isinstance(ev, MeldLaid) and meld is None:
            meld = t.melds[t.sides[ev.seat]][-1].id
        cols["kind"].append(KINDS.index(tag))
        cols["hand"].append(hand)
        cols["seat"].append(getattr(ev, "seat", None))
        cols["cards"].append(cards)
        cols["meld"].append(meld if isinstance(ev, (MeldLaid, CardsLaidOff)) else None)
        cols["count"].append(len(t.hands[ev.seat]) if isinstance(ev, MortoTaken) else None)
        cols["direct"].append(ev.direct if isinstance(ev, MortoTaken) else None)
        cols["stock"].append(len(ev.stock) if isinstance(ev, HandStarted) else None)
        if isinstance(ev, PileTaken):
            pickups.setdefault((hand, t.sides[ev.seat]), []).append(ev.count)
        if isinstance(ev, HandEnded):
            assert t.results[-1].hand == hand
    return {**cols, "pickups": pickups}, r.state()


def collected(events: list[AnyEvent]) -> tuple[dict[str, Any], Columns]:
    f = replay_columns(events, 7)
    assert f is not None
    assert f.gid == 7
    n = len(events)
    for col in (f.kind, f.hand, f.seat, f.lens, f.meld, f.count, f.direct, f.stock):
        assert len(col) == n
    cards: list[list[int] | None] = []
    pos = 0
    for k in f.lens:
        if k == NULL:
            cards.append(None)
        else:
            cards.append(list(f.cards[pos:pos + k]))
            pos += k
    assert pos == len(f.cards)

    def opt(col: Any, null: int) -> list[int | None]:
        return [None if v == null else v for v in col]

    return {
        "kind": list(f.kind), "hand": list(f.hand), "seat": opt(f.seat, NULL8),
        "cards": cards, "meld": opt(f.meld, NULL8), "count": opt(f.count, NULL),
        "direct": [None if v == NULL8 else bool(v) for v in f.direct],
        "stock": opt(f.stock, NULL),
        # The pickups of each side, hand by hand, in the order they were taken.
        "pickups": {(row[1], row[2]): row[-1] for row in f.hand_rows if row[-1]},
    }, f


def check_match(events: list[AnyEvent]) -> None:
    want, s = reference(events)
    got, f = collected(events)
    for name in want:
        assert got[name] == want[name], name
    assert f.totals == tuple(s.totals)
    assert f.winner == (s.winner if s.winner is not None else -1)
    assert f.hands == len(s.results) == len({row[1] for row in f.hand_rows})
    assert len(f.hand_rows) == sum(len(res.scores) for res in s.results)
    assert [row[17] for row in f.hand_rows] == [sc.total for res in s.results
                                                for sc in res.scores]
    # The final melds of every hand, with their hand.
    assert len(f.melds) == len(f.meld_hand)
    assert type(f.deal_events[0]).__name__ == "MatchStarted"
    assert sum(isinstance(e, HandStarted) for e in f.deal_events) == f.hands
