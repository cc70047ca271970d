"""``Replayer.run`` applies the commonest events inline; ``Replayer.step`` always goes through
the handlers. On any log, legal or broken, the two must agree: the same states, snapshots and
refusals (rule, seq and message)."""

from __future__ import annotations

import functools
from collections.abc import Mapping

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from buraco_log.errors import BuracoLogError
from buraco_log.events import AnyEvent, CardDiscarded, CardDrawn, FirstDrawRejected, PileTaken
from buraco_log.reducer import Replayer, state_at
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match
from buraco_log.state import State

CASES = [(name, n) for name, r in PRESETS.items() for n in r.player_counts]
FIELDS = ("seat", "card", "count", "top", "cards", "meld", "seq", "direct")


@functools.cache
def match(name: str, players: int) -> tuple[AnyEvent, ...]:
    return tuple(simulate_match(PRESETS[name], players, seed="fast-path"))


def outcome(events: list[AnyEvent],
            batched: bool) -> tuple[str | None, State, Mapping[int, State]]:
    r = Replayer(snapshot_every=5)
    error = None
    try:
        if batched:
            r.run(events)
        else:
            for ev in events:
                r.step(ev)
    except BuracoLogError as exc:
        error = f"{type(exc).__name__}: {exc}"
    return error, r.state(), r.snapshots


def plausible(events: list[AnyEvent], i: int, kind: str, value: int) -> AnyEvent:
    """An event of ``kind`` for the seat to move, built from the state before event ``i``: the
    kind of event the inline paths accept, in places where it may or may not be legal."""
    s = state_at(events, i - 1)
    seat, seq = s.turn, events[i].seq
    if kind == "take" and s.pile:
        return PileTaken(seat, len(s.pile), s.pile[-1], seq=seq)
    if kind == "draw" and s.stock:
        return CardDrawn(seat, s.stock[0], seq=seq)
    hand = s.hands[seat] if seat < len(s.hands) else ()
    return CardDiscarded(seat, hand[value % len(hand)] if hand else value, seq=seq)


def mutate(ev: AnyEvent, field: str, value: int) -> AnyEvent:
    if field not in ev.__struct_fields__:
        return ev
    old = getattr(ev, field)
    if field == "cards":
        new: object = (*old[:-1], value) if old else (value,)
    elif field == "direct":
        new = not old
    else:
        new = value
    return msgspec.structs.replace(ev, **{field: new})


@pytest.mark.parametrize(("name", "players"), CASES)
def test_run_and_step_agree_on_a_whole_legal_match(name: str, players: int) -> None:
    events = list(match(name, players))
    batched, stepped = outcome(events, True), outcome(events, False)
    assert batched[0] is None and stepped[0] is None
    assert batched == stepped
    assert len(batched[2]) == (len(events) - 1) // 5 + 1  # seqs 0, 5, 10, ...


@pytest.mark.parametrize(("name", "players"), CASES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    where=st.floats(0, 1, exclude_max=True),
    edit=st.sampled_from(("field", "field", "field", "drop", "swap", "take", "draw", "discard")),
    field=st.sampled_from(FIELDS),
    value=st.integers(-2, 70),
)
def test_run_and_step_agree_on_a_broken_match(
    name: str, players: int, where: float, edit: str, field: str, value: int
) -> None:
    events = list(match(name, players))
    i = 1 + int(where * (len(events) - 1))
    if edit == "drop":
        del events[i]
    elif edit == "swap" and i + 1 < len(events):
        events[i], events[i + 1] = events[i + 1], events[i]
    elif edit in ("take", "draw", "discard"):
        events[i] = plausible(events, i, edit, value)
    else:
        events[i] = mutate(events[i], field, value)
    assert outcome(events, True) == outcome(events, False)


def test_a_refused_pile_pickup_is_refused_by_both_paths_with_the_same_rule() -> None:
    """The inline pickup never accepts what the handler refuses (here: a wrong count)."""
    events = list(match("classic", 2))
    i = next(k for k, ev in enumerate(events) if isinstance(ev, PileTaken))
    pickup = events[i]
    assert isinstance(pickup, PileTaken)
    events[i] = msgspec.structs.replace(pickup, count=pickup.count + 1)
    batched = outcome(events, True)
    assert batched[0] is not None and "[pile.whole_pile]" in batched[0]
    assert batched == outcome(events, False)
    assert batched[1].seq == i - 1  # the state stops right before the refused event


@pytest.mark.parametrize("name", ["classic", "biriba", "bossa-nova"])
def test_after_rejecting_the_first_card_both_paths_refuse_the_pile(name: str) -> None:
    for players in PRESETS[name].player_counts:
        events = list(match(name, players))
        for i, ev in enumerate(events):
            if isinstance(ev, FirstDrawRejected):
                broken = [*events[: i + 1], plausible(events, i + 1, "take", 0)]
                batched = outcome(broken, True)
                assert batched[0] is not None and "[draw.redraw_from_stock]" in batched[0]
                assert batched == outcome(broken, False)
                return
    pytest.skip(f"no first-card rejection in the {name} corpus")
