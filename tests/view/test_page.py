"""The page's score sheet and chart come from the reducer's hand results; Burako is drawn as
tiles; per-event marks (the hook a review uses) reach the page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from msgspec.structs import replace

from buraco_log.audit import load
from buraco_log.events import TotalsCarried
from buraco_log.reducer import replay
from buraco_log.rules import derive
from buraco_log.timeline import Timeline
from buraco_log.view import build_page
from buraco_log.view.page import score_chart, score_sheet
from tests.play import random_match
from tests.view.pages import GOLDEN, SIM, data_of

LOGS = [*GOLDEN, SIM / "biriba-4p-000000.blog", SIM / "classic-6p-000000.blog"]


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_the_score_sheet_is_the_reducers_hand_by_hand_and_runs_to_the_final_totals(
        path: Path) -> None:
    tl = Timeline(load(path))
    sheet = data_of(build_page(tl.recorded).html)["sheet"]
    results = tl.final.results
    assert [(r["hand"], r["end"], r["went_out"]) for r in sheet] == [
        (h.hand, h.end_seq, h.went_out) for h in results]
    running = [0] * tl.final.n_sides
    for row, h in zip(sheet, results, strict=True):
        for side, (got, want) in enumerate(zip(row["sides"], h.scores, strict=True)):
            running[side] += want.total
            assert got["total"] == want.total and got["running"] == running[side]
            assert got["table"] == want.table_points and got["canastras"] == want.canastras
            assert got["morto"] == -want.morto_penalty and got["left"] == -want.hand_penalty
            assert got["out"] == want.going_out and got["bonus"] == want.canastra_bonus
    if sheet:
        assert [s["running"] for s in sheet[-1]["sides"]] == list(tl.final.totals)


def test_a_match_resumed_from_carried_totals_runs_from_them() -> None:
    rules = derive("classic", target_score=5000)
    events = random_match(rules, 2, 3, max_hands=2)
    resumed = [events[0], TotalsCarried((1200, 300), seq=1),
               *(replace(e, seq=e.seq + 1) for e in events[1:])]
    final = replay(resumed)
    sheet = data_of(build_page(resumed).html)["sheet"]
    assert len(sheet) == 2
    first = [s.total for s in final.results[0].scores]
    assert [s["running"] for s in sheet[0]["sides"]] == [1200 + first[0], 300 + first[1]]
    assert [s["running"] for s in sheet[-1]["sides"]] == list(final.totals)
    # the chart's lines start from the carried totals
    chart = score_chart(sheet, 2)
    axis = re.search(r'class="axis" x1="[\d.]+" y1="([\d.]+)"', chart)
    starts = re.findall(r'points="[\d.]+,([\d.]+) ', chart)
    assert axis is not None and len(starts) == 2
    assert all(float(y) < float(axis.group(1)) for y in starts)  # above zero, both sides
    assert score_sheet(final.results) != sheet  # from zero it would differ


def test_the_chart_has_a_line_per_side_and_a_point_per_ended_hand() -> None:
    tl = Timeline(load(SIM / "biriba-4p-000000.blog"))
    page = build_page(tl.recorded).html
    hands = len(tl.final.results)
    assert hands >= 2
    assert page.count("<polyline") == tl.final.n_sides
    ends = re.findall(r'<circle data-end="(\d+)"', page)
    assert sorted(map(int, ends)) == sorted(
        [h.end_seq for h in tl.final.results] * tl.final.n_sides)


def test_a_match_with_no_ended_hand_says_so() -> None:
    events = load(GOLDEN[0])
    first_end = Timeline(events).final.results[0].end_seq
    page = build_page(events[:first_end]).html
    assert "No hand has ended yet." in page and "<polyline" not in page


@pytest.mark.parametrize(("path", "tiles"), [(GOLDEN[2], True), (GOLDEN[0], False)],
                         ids=["burako", "biriba"])
def test_burako_is_drawn_as_tiles(path: Path, tiles: bool) -> None:
    assert path.stem in ("burako", "biriba")
    data = data_of(build_page(load(path)).html)
    assert data["tiles"] is (path.stem == "burako") is tiles


def test_marks_a_caller_pins_to_events_reach_the_page_and_bad_ones_are_refused() -> None:
    from buraco_log.cards import parse_cards
    from buraco_log.view import Mark

    events = load(GOLDEN[0])
    best = tuple(parse_cards("5h 6h 7h"))
    marks = {5: [Mark("mistake", "discarding <b>Ks</b> fed the next player", best)],
             len(events) + 10: [Mark("note", "past the end")]}
    page = build_page(events, marks=marks).html
    data = data_of(page)
    assert data["marks"] == {"5": [{"kind": "mistake", "cards": list(best),
                                    "text": "discarding <b>Ks</b> fed the next player"}]}
    assert "<b>Ks</b>" not in page  # data is text, never markup
    assert data_of(build_page(events).html)["marks"] == {}
    for bad in (Mark('x" onclick="', "t"), Mark("note", "t", (65,))):
        with pytest.raises(ValueError):
            build_page(events, marks={1: [bad]})
