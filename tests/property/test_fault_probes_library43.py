"""Probe 43: the library a referee uses (docs/library.md).

- Each line of the rules-engine example that states its value in a comment (``# ((305, -80),
  0)``) gives that value, read from the page, not copied here; the rest of the example is held
  to what the page says of it (``state_at`` is the table after that seq, ``view`` is the seat's,
  ``legal_moves`` lists only moves the reducer accepts).
- Hidden cards never reach another seat's view, at any seq of random games of every preset
  and player count: the other hands, the stock, the mortos and the card just drawn are
  shuffled among themselves, and ``state.view``, ``timeline.table_view``, the seat's recent
  events and the review's ``expert.seat_view`` must not change. A draw by another seat is
  told without its card.
"""

from __future__ import annotations

import ast
import random
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from buraco_log.events import CardDrawn
from buraco_log.expert import Tracker, seat_view
from buraco_log.jsonl import read_jsonl
from buraco_log.moves import legal_moves
from buraco_log.reducer import Replayer, state_at, validate
from buraco_log.rules import PRESETS
from buraco_log.state import SideScore, State, view
from buraco_log.timeline import Timeline, describe_event, table_view
from tests.play import random_match

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "library.md").read_text(encoding="utf-8")
CONFIGS = [(name, n) for name, r in sorted(PRESETS.items()) for n in r.player_counts]


def first_python_block() -> str:
    m = re.search(r"```python\n(.*?)```", PAGE, re.S)
    assert m is not None, "docs/library.md has no python block"
    return m.group(1)


def stated_values(code: str) -> list[tuple[str, Any]]:
    """The lines ``EXPR  # LITERAL`` of ``code``: the expression and the value it states."""
    out = []
    for line in code.splitlines():
        expr, hash_, note = line.partition("#")
        if not hash_ or "=" in expr or not expr.strip():
            continue
        try:
            out.append((expr.strip(), ast.literal_eval(note.strip())))
        except (ValueError, SyntaxError):
            continue  # a comment in words
    return out


def test_the_rules_engine_example_gives_the_values_its_comments_state(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the page reads examples/ from where it runs
    code = first_python_block()
    stated = stated_values(code)
    assert stated, "no line of the example states its value"
    ns: dict[str, Any] = {}
    exec(compile(code, "docs/library.md", "exec"), ns)
    for expr, want in stated:
        assert eval(expr, ns) == want, f"docs/library.md: {expr} is not {want!r}"
    events, mid = ns["events"], ns["mid"]
    seq = int(re.search(r"state_at\(events, (\d+)\)", code).group(1))  # type: ignore[union-attr]
    assert mid.seq == seq and mid == state_at(events, seq)
    seat = int(re.search(r"view\(mid, seat=(\d+)\)", code).group(1))  # type: ignore[union-attr]
    assert view(mid, seat).my_hand == mid.hands[seat]
    moves = legal_moves(mid)
    assert moves
    for m in moves:
        validate(mid, m)  # raises for a move the reducer refuses


def test_the_example_log_is_the_match_the_page_replays() -> None:
    events = read_jsonl(ROOT / "examples/golden/biriba.jsonl")
    rep = Replayer()
    rep.run(events)
    assert isinstance(rep.state().results[0].scores[0], SideScore)  # as the page says
    assert Timeline(events).final == rep.state()


# ------------------------------------------------------------------ no hidden card leaks


def shuffled_hidden(state: State, seat: int, rng: random.Random) -> State:
    """``state`` with what ``seat`` cannot see (the other hands, the stock, the mortos, another
    seat's drawn card) dealt anew among the same places, each keeping its count."""
    others = [i for i in range(len(state.hands)) if i != seat]
    hidden = [c for i in others for c in state.hands[i]] + list(state.stock)
    hidden += [c for m in state.mortos for c in m]
    rng.shuffle(hidden)
    pos = 0

    def take(n: int) -> tuple[int, ...]:
        nonlocal pos
        pos += n
        return tuple(hidden[pos - n:pos])

    hands = tuple(state.hands[i] if i == seat else take(len(state.hands[i]))
                  for i in range(len(state.hands)))
    stock = take(len(state.stock))
    mortos = tuple(take(len(m)) for m in state.mortos)
    drawn = state.drawn
    if drawn is not None and state.turn != seat and hands[state.turn]:
        drawn = hands[state.turn][-1]
    return msgspec.structs.replace(state, hands=hands, stock=stock, mortos=mortos, drawn=drawn)


def check_views(events: list[Any], seed: int) -> int:
    """Every seat's views at every seq are blind to the hidden cards; the count checked."""
    rng = random.Random(seed)
    tl = Timeline(events)
    players = tl.players
    style = tl.style
    rep = Replayer()
    tracker = Tracker()  # the cards each seat is known to hold, as the review's expert sees
    checked = 0
    for ev in events:
        rep.step(ev)
        tracker.observe(ev)
        state = rep.state()
        if not state.hands:
            continue
        for seat in range(len(players)):
            twin = shuffled_hidden(state, seat, rng)
            if twin == state:
                continue  # nothing hidden to move (or the shuffle kept it)
            recent = tl.recent(state.seq, 8, seat)
            assert view(twin, seat) == view(state, seat), (state.seq, seat)
            assert table_view(twin, seat=seat, recent=recent) == \
                table_view(state, seat=seat, recent=recent), (state.seq, seat)
            known = tracker.known
            assert seat_view(twin, seat, known) == seat_view(state, seat, known), (state.seq, seat)
            if isinstance(ev, CardDrawn) and ev.seat != seat:
                text = describe_event(ev, players, style, seat)
                assert text.endswith((" drew a card", " drew a tile")), text
            checked += 1
    return checked


# One body, two runs that differ only in size: the default run and the slow soak.
RUNS = [pytest.param(6, 1, id="default"),
        pytest.param(60, 2, id="soak", marks=pytest.mark.slow)]


@pytest.mark.parametrize(("examples", "max_hands"), RUNS)
def test_no_seat_view_shows_a_hidden_card(examples: int, max_hands: int) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(st.sampled_from(CONFIGS), st.integers(0, 10_000))
    def run(config: tuple[str, int], seed: int) -> None:
        name, players = config
        events = random_match(name, players, seed, max_hands=max_hands, eager=seed % 2 == 0)
        assert check_views(events, seed) > 0

    run()


def test_a_timeline_view_for_a_seat_is_the_seats_table_view() -> None:
    events = random_match("biriba", 4, 7, max_hands=1, eager=True)
    tl = Timeline(events)
    for seq in range(2, tl.last_seq + 1, 17):
        for seat in range(4):
            got = tl.view(seq, seat=seat)
            state = tl.state_at(seq)
            assert got == table_view(state, seat=seat, recent=tl.recent(seq, seat=seat))
            assert [h.cards is None for h in got.seats] == [i != seat for i in range(4)]
