"""Fault probes of `review` (round 58): a player reviewing every kind of game.

- A cost measured on fewer than 2 samples has no interval: the text says ``± n/a``, and the
  page said ``± 0.0, 95%`` (its data carried the stored ± of 0, not the samples that measured
  it): a cost known exactly, where it is known least. The page data now carries ``measured``
  (added, the meaning of every other field unchanged: its version stays 2) and the page says
  ``± n/a`` where the text does.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from buraco_log.events import AnyEvent
from buraco_log.expert import Budget
from buraco_log.log import read_events
from buraco_log.review import REVIEW_VERSION, Review, review_events, review_page, to_text

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def _bare() -> tuple[list[AnyEvent], Review]:
    """A review at 3 samples a decision: 1 measures each cost, so none has an interval."""
    events = read_events(ROOT / "examples/sim/thirteen-quick-2p-000000.blog")[:40]
    return events, review_events(events, 0, budget=Budget(samples=3, candidates=3, rounds=1),
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
