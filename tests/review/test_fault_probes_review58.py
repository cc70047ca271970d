"""Fault probes of `review` (round 58): a player reviewing every kind of game.

- A cost measured on fewer than 2 samples has no interval: the text says ``± n/a``, and the
  page said ``± 0.0, 95%`` (its data carried the stored ± of 0, not the samples that measured
  it): a cost known exactly, where it is known least. The page data now carries ``measured``
  (added, the meaning of every other field unchanged: its version stays 2) and the page says
  ``± n/a`` where the text does.
- A match a forgotten going-out bonus gave to the other side (the last hand's score, the
  totals and the winner recorded without it) was refused whole, as illegal
  [match.wrong_winner], where replay, view and audit read it as one score mismatch naming the
  wrong winner and go on: the review cleared the wrong totals but left the wrong winner. It
  is now reviewed whole, its note naming the wrong winner (status 1, as for any mismatch).
- A cost's standard error came from the measuring half alone: 48 measuring samples all alike
  stated a cost of 0 ± 0 where the choosing half (and 960 samples of another seed) found the
  two moves apart, and mid-game the 95% intervals held the cost of ten times the samples in
  92.3% of the decisions checked. The spread pooled over both halves now bounds it below.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from buraco_log import expert
from buraco_log.events import AnyEvent, HandEnded, MatchEnded, MatchStarted, WentOut
from buraco_log.expert import Budget
from buraco_log.log import read_events
from buraco_log.review import (
    REVIEW_VERSION,
    Review,
    review_events,
    review_page,
    tasks,
    to_text,
)
from buraco_log.simulate import write_match
from tests.command_line import run

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def _bare() -> tuple[list[AnyEvent], Review]:
    """A review at 3 samples a decision: 1 measures each cost, so none has an interval."""
    events = read_events(ROOT / "examples/sim/thirteen-quick-2p-000000.blog")[:24]
    return events, review_events(events, 0, budget=Budget(samples=3, candidates=2, rounds=1),
                                 seed="bare")


def _data(html: str) -> dict[str, Any]:
    blob = re.search(r'<script type="application/json" id="bl-review">(.*?)</script>', html,
                     re.S)
    assert blob is not None
    out: dict[str, Any] = json.loads(blob.group(1))
    return out


def test_the_page_data_says_how_many_samples_measured_each_cost() -> None:
    events, review = _bare()
    data = _data(review_page(events, review))
    assert data["version"] == REVIEW_VERSION == 2  # a field added, no meaning changed
    assert review.moves
    for m in review.moves:
        assert data["moves"][str(m.seq)]["measured"] == m.measured == 1
        assert "±   n/a" in next(line for line in to_text(review).splitlines()
                                 if f"seq {m.seq} " in line)


@pytest.mark.slow  # a real Chromium
def test_the_page_says_n_a_where_the_text_does(browser: Any, tmp_path: Path) -> None:
    events, review = _bare()
    m = next(m for m in review.moves if m.best != m.played)  # its panel names the other move
    page = tmp_path / "review.html"
    page.write_text(review_page(events, review), encoding="utf-8")
    browser.get(page.as_uri())
    titles = browser.execute_script(
        "return Array.from(document.querySelectorAll('#moves li.rv'))"
        ".map(function (li) { return li.getAttribute('title'); });")
    assert len(titles) == len(review.moves)
    assert all(t.endswith(" ± n/a)") and "95%" not in t for t in titles), titles
    li = f"var li = document.querySelector('#moves li[data-seq=\"{m.seq}\"]');"
    assert browser.execute_script(li + "return li.getAttribute('title');") == \
        f"about even with: {m.best} (cost {m.cost:.1f} ± n/a)"
    browser.execute_script(f"window.buracoView.go({m.seq - 1});")
    now = browser.execute_script("return document.getElementById('rv-now').textContent;")
    assert f"about even with {m.best}, cost {m.cost:.1f} ± n/a points." in now, now
    assert "± 0.0" not in now and "95%" not in now, now
    alts = browser.execute_script(
        "return Array.from(document.querySelectorAll('#rv-now td:last-child'))"
        ".map(function (td) { return td.textContent; });")
    assert len(alts) == len(m.alternatives) and all(a.endswith("± n/a") for a in alts), alts


def _bonus_left_out() -> list[AnyEvent]:
    """examples/sim's thirteen-quick match, won by the side that went out in the last hand, its
    score for that hand recorded short by its going-out bonus and the margin, so that the
    recorded totals and winner give the match to the other side (a scorer's slip a referee is
    asked to settle)."""
    events = read_events(ROOT / "examples/sim/thirteen-quick-2p-000000.blog")
    he, me, start = events[-2], events[-1], events[0]
    assert isinstance(he, HandEnded) and isinstance(me, MatchEnded)
    assert isinstance(start, MatchStarted)
    assert he.scores is not None and me.totals is not None and me.winner is not None
    w = me.winner
    out = [ev for ev in events if isinstance(ev, WentOut)][-1]
    assert start.sides[out.seat] == w and he.reason == "went_out"
    gap = me.totals[w] - me.totals[1 - w] + start.rules.bonuses.going_out
    scores = tuple(s - gap if i == w else s for i, s in enumerate(he.scores))
    totals = tuple(t - gap if i == w else t for i, t in enumerate(me.totals))
    return [*events[:-2], msgspec.structs.replace(he, scores=scores),
            msgspec.structs.replace(me, totals=totals, winner=1 - w)]


def test_a_match_whose_recorded_winner_lost_its_going_out_bonus_is_reviewed() -> None:
    events = _bonus_left_out()
    winner = events[-1].winner  # type: ignore[union-attr]
    seq = next(ev.seq for ev in events if getattr(ev, "seat", None) == 0 and ev.seq > 10)
    review = review_events(events, 0, budget=Budget(samples=2, candidates=2, rounds=1),
                           seqs={seq})  # the whole log is replayed; one decision searched
    assert review.note is not None and "illegal" not in review.note, review.note
    assert review.note.count("[score.mismatch]") == 2
    assert f"the recorded winner, side {winner}, is wrong too: side {1 - winner} won" \
        in review.note, review.note


@pytest.mark.slow  # a real buraco-log review of the whole match, in a subprocess
def test_the_command_reviews_it_whole_and_exits_1(tmp_path: Path) -> None:
    log = tmp_path / "bonus.blog"
    write_match(log, _bonus_left_out())
    r = run("review", log, "--seat", "0", "--budget", "2x2r1", "-f", "json", timeout=300)
    assert r.code == 1, r.err
    got = json.loads(r.out)
    assert got["decisions"] > 50 and "wrong too" in got["note"], got["note"]
    assert "illegal" not in r.err and "is wrong too" in r.err, r.err


def test_a_measuring_half_that_saw_no_difference_states_no_certainty(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two moves that differ on 2 of 8 sampled tables, both among the choosing half: the
    measuring half sees them alike. Its cost, 0, was stated ± 0 (the moves known equal)."""
    events = read_events(ROOT / "examples/sim/thirteen-quick-2p-000000.blog")[:30]
    task = next(t for t in tasks(events, 0, "z")[0] if t.view.table.phase == "play")
    real = expert._search

    def two_moves(view: Any, budget: Any, seed: int, include: Any, no_opening: bool) -> Any:
        first, cands, _, _, cache = real(view, Budget(samples=1, candidates=2), seed, include,
                                         no_opening)
        assert len(cands) == 2
        mine = [expert.move_key(c) for c in cands].index(expert.move_key(include))
        other = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
        other[0] = other[2] = 30.0  # samples 0 and 2: the choosing half's
        values = [[0.0] * 8, other] if mine == 0 else [other, [0.0] * 8]
        return first, cands, values, 8, cache

    monkeypatch.setattr(expert, "_search", two_moves)
    d = expert.judge(task.view, Budget(samples=8, candidates=2), task.seed, task.played)
    played = d.find(task.played)
    assert played is not None and d.measured == 4
    assert expert.move_key(d.evaluations[0].move) != expert.move_key(task.played)
    assert played.cost == 0.0 and played.se > 0.0, played  # 0 ± 0 before
    # the choosing half's differences 30, 30, 0, 0 (900 about their mean), the measuring
    # half's none: 900 over 6 degrees of freedom, over the 4 measuring samples
    assert played.se == pytest.approx((900 / 6 / 4) ** 0.5, abs=1e-3)
