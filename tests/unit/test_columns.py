"""The archive's columns of a match against a plain reference collected event by event.

``columns.replay_columns`` fills the columns inside the compiled replay loop, stopping only
for the events whose columns need the table; the reference below steps every event on its own
and reads each column straight from the event or the table after it. The two must agree on
every column of every example log (every preset, 2 to 6 players, three sides) and of simulated
matches, and an illegal event must stop both with the same rule at the same seq.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from buraco_log import audit
from buraco_log.columns import KINDS, replay_columns
from buraco_log.errors import IllegalMoveError
from buraco_log.events import (
    AnyEvent,
    CardsLaidOff,
    FirstDrawRejected,
    HandEnded,
    MatchEnded,
    MeldLaid,
    MortoTaken,
    OpeningRetracted,
    PileTaken,
    WentOut,
)
from buraco_log.reducer import Replayer
from buraco_log.rules import preset
from buraco_log.simulate import simulate_match
from tests.unit.columns import check_match

REPO = Path(__file__).resolve().parents[2]


def _example_logs() -> list[list[AnyEvent]]:
    out = []
    for p in sorted((REPO / "examples").rglob("*")):
        if p.suffix in (".blog", ".jsonl"):
            events, integrity = audit.read_log(str(p))
            if integrity.status in ("sealed", "unsealed") and events \
                    and isinstance(events[-1], MatchEnded):
                out.append(events)
    return out


EXAMPLES = _example_logs()


def test_the_examples_cover_every_kind_of_column() -> None:
    assert len(EXAMPLES) >= 20
    kinds = {type(e) for events in EXAMPLES for e in events}
    assert {MortoTaken, CardsLaidOff, PileTaken, MeldLaid, OpeningRetracted, FirstDrawRejected,
            WentOut} <= kinds
    # Melds without a recorded id (the engine numbers them) and with one.
    metas = {e.meld is None for events in EXAMPLES for e in events if isinstance(e, MeldLaid)}
    assert metas == {True, False}


@pytest.mark.parametrize("k", range(len(EXAMPLES)))
def test_columns_of_every_example_equal_the_reference(k: int) -> None:
    check_match(EXAMPLES[k])


@pytest.mark.parametrize("name,players", [("thirteen-quick", 2), ("thirteen-quick", 4),
                                          ("biriba", 3), ("classic", 6), ("bossa-nova", 3),
                                          ("burako", 2), ("mega", 4), ("burraco", 4)])
def test_columns_of_simulated_matches_equal_the_reference(name: str, players: int) -> None:
    """Every preset (short matches: a lower target, so several hands stay cheap)."""
    rules = preset(name)
    if name != "thirteen-quick":
        rules = msgspec.structs.replace(rules, target_score=800)
    for index in range(3):
        events = simulate_match(rules, players, seed="columns", index=index,
                                bots=("heuristic", "random"))
        check_match(events)


def _error(fn: Any) -> tuple[str, int | None] | None:
    try:
        fn()
    except IllegalMoveError as exc:
        return exc.rule, exc.seq
    return None


@pytest.mark.parametrize("k", range(0, len(EXAMPLES), 3))
def test_an_illegal_event_stops_the_collection_as_it_stops_the_replay(k: int) -> None:
    """Each event in turn is swapped for a wrong one (another seat, another card): the
    collection refuses exactly where, and with the rule with which, a plain replay does."""
    events = EXAMPLES[k]
    stride = max(1, len(events) // 40)
    tried = 0
    for i in range(1, len(events), stride):
        ev = events[i]
        for field, delta in (("seat", 1), ("card", 1), ("meld", 1), ("count", 1)):
            value = getattr(ev, field, None)
            if not isinstance(value, int) or isinstance(value, bool):
                continue
            bad = msgspec.structs.replace(ev, **{field: value + delta})
            broken = [*events[:i], bad, *events[i + 1:]]
            want = _error(lambda b=broken: Replayer().run(b))
            if want is None:
                continue  # still legal (a card the seat also holds)
            assert _error(lambda b=broken: replay_columns(b, 1)) == want, (i, field)
            tried += 1
    assert tried > 5


def test_an_unfinished_match_collects_nothing() -> None:
    events = EXAMPLES[0]
    cut = next(i for i, e in enumerate(events) if isinstance(e, HandEnded))
    assert replay_columns(events[:cut], 1) is None
    assert replay_columns(events[:-1], 1) is None


def test_every_event_type_has_a_kind_code() -> None:
    """A new event type without a stored kind would stop the collection (a KeyError)."""
    from typing import get_args

    from buraco_log.columns import _KIND_OF

    types = set(get_args(AnyEvent))
    assert len(types) == len(KINDS) == 14
    assert set(_KIND_OF) == types
    assert sorted(_KIND_OF.values()) == list(range(len(KINDS)))
