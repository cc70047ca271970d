"""The review page in a real headless Chromium: marks in the move list, the alternative shown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from buraco_log.cards import parse_card
from buraco_log.expert import Budget
from buraco_log.review import review_events, review_page
from tests.review.positions import bad_discard


def test_the_page_marks_the_mistake_and_outlines_the_alternative(
    browser: Any, tmp_path: Path
) -> None:
    events, seq = bad_discard()
    # 16 samples measure the cost: with 12 (6 measuring) it was inside the noise
    review = review_events(events, 0, budget=Budget(samples=32))
    move = next(m for m in review.moves if m.seq == seq)
    assert move.flagged
    page = tmp_path / "review.html"
    page.write_text(review_page(events, review), encoding="utf-8")
    browser.get(page.as_uri())
    marked = browser.execute_script(
        "return Array.from(document.querySelectorAll('#moves li.rv-bad'))"
        ".map(function (li) { return +li.getAttribute('data-seq'); });")
    assert marked == [m.seq for m in review.moves if m.flagged]
    flagged = browser.execute_script(
        "return Array.from(document.querySelectorAll('#moves li.mk-mistake'))"
        ".map(function (li) { return +li.getAttribute('data-seq'); });")
    assert flagged == marked  # the viewer's own marks agree
    browser.execute_script(f"window.buracoView.go({seq - 1});")  # the table the seat decided on
    now = browser.execute_script("return document.getElementById('rv-now').textContent;")
    assert f"Decision at seq {seq} (mistake)" in now and "discard 9h" in now and move.best in now
    outlined = browser.execute_script(
        "return Array.from(document.querySelectorAll('.card.rv-alt'))"
        ".map(function (c) { return [+c.getAttribute('data-card'),"
        " c.closest('[data-zone]').getAttribute('data-zone')]; });")
    assert outlined == [[parse_card(move.best.split()[-1]), "hand-0"]]
    browser.execute_script(f"window.buracoView.go({seq});")
    now = browser.execute_script("return document.getElementById('rv-now').textContent;")
    assert "This move" in now
    mark = browser.execute_script("return document.getElementById('marks').textContent;")
    assert "a mistake costing" in mark and move.best in mark
    assert not browser.execute_script("return document.querySelectorAll('.card.rv-alt').length;")
