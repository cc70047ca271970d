"""The page's frames equal the reducer's state at every seq, and they are stored compactly."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from buraco_log.audit import load
from buraco_log.cards import JOKER, parse_cards, sort_key
from buraco_log.rules import PRESETS
from buraco_log.timeline import Timeline, describe_event
from buraco_log.view import build_page
from buraco_log.view.frames import diff, meld_order, patch
from tests.view.pages import GOLDEN, SIM, data_of, frames_of, moves_of

LOGS = [*GOLDEN, SIM / "biriba-4p-000000.blog", SIM / "burako-2p-000000.blog"]


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_every_referee_frame_equals_the_reducers_state_at_its_seq(path: Path) -> None:
    tl = Timeline(load(path))
    data = data_of(build_page(tl.recorded).html)
    frames = frames_of(data)
    assert len(frames) == tl.last_seq + 1
    for seq, f in enumerate(frames):
        s = tl.state_at(seq)
        assert f["s"] == seq and f["ph"] == s.phase and f["t"] == s.turn and f["n"] == s.hand
        for i, hand in enumerate(s.hands):
            assert f[f"h{i}"] == sorted(hand, key=sort_key)
            assert f["c"][i] == len(hand)
        assert f["p"] == list(s.pile) and f["k"] == len(s.stock)
        for side, melds in enumerate(s.melds):
            assert [(m[0], sorted(m[3])) for m in f[f"m{side}"]] == [
                (m.id, sorted(m.cards)) for m in melds]
            assert [m[2] for m in f[f"m{side}"]] == [m.canastra for m in melds]
            assert sorted(f[f"d{side}"]) == sorted(s.mortos[side])
        assert f["T"] == (list(s.totals) or [0] * s.n_sides)
        assert f["mt"] == (list(s.morto_taken) or [False] * s.n_sides)
        assert moves_of(data)[seq] == describe_event(tl.events[seq], tl.players, tl.style)


def test_the_page_opens_at_the_last_seq_unless_told() -> None:
    events = load(GOLDEN[0])
    assert data_of(build_page(events).html)["start"] == len(events) - 1
    assert data_of(build_page(events, at=3).html)["start"] == 3


def test_a_diff_stores_only_what_changed_and_a_grown_list_as_its_tail() -> None:
    old = {"p": [1, 2], "k": 50, "h0": [3, 4]}
    new = {"p": [1, 2, 9], "k": 50, "h0": [4]}
    assert diff(old, new) == {"p+": [9], "h0": [4]}
    assert patch(old, diff(old, new)) == new


frame_values = st.one_of(st.integers(-5, 70), st.none(), st.booleans(),
                         st.lists(st.integers(0, 64), max_size=6))


@given(st.dictionaries(st.sampled_from("abcdhkp"), frame_values),
       st.dictionaries(st.sampled_from("abcdhkp"), frame_values))
def test_patching_a_frame_with_its_diff_gives_the_next_frame(a: dict[str, Any],
                                                             b: dict[str, Any]) -> None:
    b = {**dict.fromkeys(a), **b}  # frames of one match keep their keys
    assert patch(a, diff(a, b)) == b


@pytest.mark.parametrize(("cards", "expected"), [
    ("5h 6h 2c 8h", "5h 6h 2c 8h"),  # the wild fills its gap
    ("8h 5h 6h 2c", "5h 6h 2c 8h"),
    ("Ah 3h 2h", "Ah 2h 3h"),  # a 2 of the run's suit stands in its own place
    ("Kh Ah Qh 2c", "2c Qh Kh Ah"),  # ace high: the wild extends the low end
    ("7h 7s 2d 7c", "7c 7h 7s 2d"),  # a set: the wild last
])
def test_melds_are_drawn_in_reading_order_with_the_wild_in_its_place(cards: str,
                                                                     expected: str) -> None:
    order, wild = meld_order(parse_cards(cards), PRESETS["classic"])
    assert order == list(parse_cards(expected))
    assert wild is not None or "2c" not in cards


def test_a_meld_the_reader_refuses_is_drawn_as_laid() -> None:
    cards = parse_cards("5h 9s Kd")
    assert meld_order(cards, PRESETS["classic"]) == (list(cards), None)


def test_a_joker_is_a_wild_in_a_preset_with_jokers() -> None:
    order, wild = meld_order((*parse_cards("5h 6h"), JOKER), PRESETS["thirteen"])  # 4 jokers
    assert wild == JOKER and order[:2] == list(parse_cards("5h 6h"))


def test_a_long_match_is_small_and_quick_to_write() -> None:
    events = load(SIM / "burako-4p-000000.blog")
    t = time.perf_counter()
    html = build_page(events).html
    took = time.perf_counter() - t
    per_event = len(html.encode()) / len(events)
    # 1.5 MB for 3,000 events is 500 bytes an event; the benchmark measures the real thing.
    assert per_event < 500, per_event
    assert took < 1.0 * len(events) / 3000 * 3  # generous: shared CI machines
