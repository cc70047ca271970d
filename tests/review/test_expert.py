"""The searching player: it sees only its seat's view, it is seeded, and it plays legal Buraco."""

from __future__ import annotations

import random
from collections import Counter

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from buraco_log import expert
from buraco_log.bots import make_bot
from buraco_log.cards import deck
from buraco_log.events import AnyEvent, MatchEnded
from buraco_log.expert import (
    Budget,
    ExpertBot,
    Tracker,
    decide,
    determinize,
    parse_budget,
    seat_view,
    views,
)
from buraco_log.reducer import Replayer, replay
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match
from buraco_log.state import State
from tests.review.expert_matches import match, swapped_twin

SMALL = Budget(samples=3, candidates=3)


def states_and_trackers(events: list[AnyEvent]) -> list[tuple[State, Tracker, AnyEvent]]:
    r = Replayer()
    tr = Tracker()
    out = []
    for ev in events:
        out.append((r.state(), _copy(tr), ev))
        r.step(ev)
        tr.observe(ev)
    return out


_ROWS: dict[tuple[str, int], list[tuple[State, Tracker]]] = {}


def playing_rows(preset: str, players: int) -> list[tuple[State, Tracker]]:
    if (preset, players) not in _ROWS:
        _ROWS[preset, players] = [(s, t) for s, t, _ in states_and_trackers(match(preset, players))
                                  if s.phase in ("draw", "play")]
    return _ROWS[preset, players]


def _copy(tr: Tracker) -> Tracker:
    c = Tracker()
    c.pile = list(tr.pile)
    c.shown = [list(k) for k in tr.shown]
    return c


# -- what the seat knows --------------------------------------------------------------------


@pytest.mark.parametrize(("preset", "players"), [("classic", 2), ("biriba", 4), ("thirteen", 2),
                                                 ("burraco", 4), ("classic", 3)])
def test_the_tracker_follows_the_pile_and_knows_only_cards_really_held(
    preset: str, players: int
) -> None:
    for state, tr, _ in states_and_trackers(match(preset, players)):
        if state.phase in ("new", "between", "over", "decided") or not state.hands:
            continue
        assert tuple(tr.pile) == state.pile
        for seat, known in enumerate(tr.known):
            left = Counter(state.hands[seat])
            left.subtract(Counter(known))
            assert min(left.values(), default=0) >= 0, (state.seq, seat)


def test_a_seat_view_holds_no_hidden_card() -> None:
    events = match("biriba", 4)
    for state, tr, _ in states_and_trackers(events)[::7]:
        if state.phase not in ("draw", "play"):
            continue
        v = seat_view(state, state.turn, tr.known)
        seat = state.turn
        assert v.table.stock == () and all(m == () for m in v.table.mortos)
        assert all(h == () for s, h in enumerate(v.table.hands) if s != seat)
        assert v.table.hands[seat] == state.hands[seat]
        assert v.known[seat] == ()
        assert v.stock_count == len(state.stock)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([("classic", 2), ("biriba", 4), ("mega", 2)]))
def test_a_sampled_table_holds_the_material_and_looks_the_same_to_the_seat(
    seed: int, config: tuple[str, int]
) -> None:
    rows = playing_rows(*config)
    state, tr = rows[seed % len(rows)]
    seat = state.turn
    v = seat_view(state, seat, tr.known)
    world = determinize(v, random.Random(seed))
    rules = state.rules
    assert rules is not None
    held = [*world.stock, *world.pile, *(c for h in world.hands for c in h),
            *(c for m in world.mortos for c in m),
            *(c for side in world.melds for m in side for c in m.cards)]
    assert Counter(held) == Counter(deck(rules.jokers))
    assert seat_view(world, seat, tr.known) == v
    for s, known in enumerate(v.known):  # known cards stay where they are known to be
        assert not Counter(known) - Counter(world.hands[s])


# -- information discipline -------------------------------------------------------------------


@pytest.mark.parametrize(("preset", "players"), [("classic", 2), ("biriba", 4)])
def test_two_tables_the_seat_cannot_tell_apart_give_the_same_decision(
    preset: str, players: int
) -> None:
    events = match(preset, players)
    twin, cut = swapped_twin(events, 0)
    a = dict((e.seq, v) for v, e in views(events[:cut + 1], 0))[cut]
    b = dict((e.seq, v) for v, e in views(twin, 0))[cut]
    sa, sb = replay(events[:cut]), replay(twin[:cut])
    assert sa.hands != sb.hands or sa.stock != sb.stock  # the tables differ...
    assert a == b  # ...but not to seat 0
    assert decide(a, SMALL, 7) == decide(b, SMALL, 7)


def test_the_bot_chooses_alike_on_tables_it_cannot_tell_apart() -> None:
    events = match("classic", 2)
    twin, cut = swapped_twin(events, 0)
    chosen = []
    for evs in (events[:cut], twin[:cut]):
        bot = ExpertBot(SMALL)
        for e in evs:
            bot.observe(e)
        state = replay(evs)
        from buraco_log.moves import quick_moves

        moves = quick_moves(state)
        chosen.append(bot.choose(state, moves, random.Random(5)))
    # A draw names the card on top of the stock, which differs: compare as the seat names it.
    from buraco_log.expert import move_key

    assert move_key(chosen[0]) == move_key(chosen[1])


def test_a_seat_with_another_hand_sees_another_view() -> None:
    # The control: the check above would pass for a view that ignored the table.
    events = match("classic", 2)
    twin, cut = swapped_twin(events, 1)  # a card of seat 0's own hand moves
    a = dict((e.seq, v) for v, e in views(events[:cut + 1], 0) if e.seq < cut)
    b = dict((e.seq, v) for v, e in views(twin[:cut + 1], 0) if e.seq < cut)
    assert a != b


# -- determinism, budget, play ----------------------------------------------------------------


def test_a_decision_is_the_same_for_a_seed_and_differs_across_seeds() -> None:
    events = match("classic", 2)
    rows = [v for v, e in views(events, 0) if v.table.phase == "play"][:6]
    for v in rows:
        assert decide(v, SMALL, 1) == decide(v, SMALL, 1)
    assert any(decide(v, SMALL, 1).evaluations != decide(v, SMALL, 2).evaluations for v in rows)


class _SlowClock:
    """A clock on which every reading is one second later: the time cap is spent at once,
    however fast this machine plays the samples out."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 1.0
        return self.now


def test_the_budget_bounds_the_search(monkeypatch: pytest.MonkeyPatch) -> None:
    events = match("classic", 2)
    v = next(v for v, e in views(events, 0) if v.table.phase == "play")
    d = decide(v, Budget(samples=4, candidates=2), 0)
    assert d.samples == 4 and len(d.evaluations) == 2
    monkeypatch.setattr(expert, "time", _SlowClock())
    d = decide(v, Budget(samples=10_000, candidates=2, ms=1), 0)
    assert d.samples == 2  # the time cap stops it after the minimum of two samples


@pytest.mark.parametrize(("text", "want"), [
    ("8", Budget(samples=8)), ("8x3", Budget(samples=8, candidates=3)),
    ("8x3/250ms", Budget(samples=8, candidates=3, ms=250)),
    ("8r0", Budget(samples=8, rounds=0)), ("8x2r5/9ms", Budget(8, 2, 5, 9)),
])
def test_budgets_are_read_from_text(text: str, want: Budget) -> None:
    assert parse_budget(text) == want
    assert parse_budget(want.text()) == want


@pytest.mark.parametrize("text", ["", "x", "0", "8x0", "-3", "8/ms", "fast", "8x3/0ms", "8r", "r3"])
def test_bad_budgets_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="budget"):
        parse_budget(text)


def test_make_bot_knows_the_expert_and_refuses_a_budget_on_other_bots() -> None:
    bot = make_bot("expert:6x2")
    assert isinstance(bot, ExpertBot) and bot.budget == Budget(samples=6, candidates=2)
    with pytest.raises(ValueError, match="unknown bot"):
        make_bot("heuristic:6")


def test_the_expert_plays_a_whole_legal_match_and_the_same_one_for_a_seed() -> None:
    rules = msgspec.structs.replace(PRESETS["classic"], target_score=150)
    a = simulate_match(rules, 2, seed="e", bots=("expert:2x3", "heuristic"))
    assert isinstance(a[-1], MatchEnded)
    replay(a)
    assert a == simulate_match(rules, 2, seed="e", bots=("expert:2x3", "heuristic"))


def test_after_taking_back_a_short_opening_the_expert_does_not_lay_it_again_that_turn() -> None:
    """A match where the expert, searching fresh heuristic bots, laid 3h 3s 2c, took it back
    and laid it again until the hand was 20,000 events long: it ends now, and no turn of the
    expert holds a meld laid after its retraction."""
    from buraco_log.events import MeldLaid, OpeningRetracted

    events = simulate_match(PRESETS["classic"], 2, seed="wr1000", index=6,
                                bots=("expert:8x3r1", "heuristic"))
    assert isinstance(events[-1], MatchEnded)
    retracted_at: tuple[int, int] | None = None
    r = Replayer()
    for ev in events:
        before = r.state()
        r.step(ev)
        if isinstance(ev, OpeningRetracted):
            retracted_at = (before.hand, before.turns)
        elif isinstance(ev, MeldLaid) and ev.seat == 0:
            assert retracted_at != (before.hand, before.turns), f"seq {ev.seq}: laid again"
    assert retracted_at is not None  # the match still has the retraction that looped


def test_a_forced_retraction_also_stops_the_expert_laying_again_that_turn() -> None:
    """The same loop when the retraction was the only move left (chosen without a search)."""
    events = simulate_match(PRESETS["classic"], 2, seed="wr1000", index=42,
                            bots=("heuristic", "expert:8x3r1"))
    assert isinstance(events[-1], MatchEnded) and len(events) < 2000
