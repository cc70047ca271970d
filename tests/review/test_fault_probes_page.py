"""Fault probes of the review page: a match whose player names and match id are hostile HTML
and terminal control sequences. The review's own data element must keep them as data, the
page must show them as text, and the text review must print them escaped."""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec
import pytest

from buraco_log import events as ev
from buraco_log.expert import Budget
from buraco_log.review import review_events, review_page
from buraco_log.rules import PRESETS
from buraco_log.safetext import terminal_safe
from buraco_log.simulate import simulate_match

NAMES = ("</script><img src=x onerror=alert(1)>", "\"q\" & 'p' <b>\x1b[2J\u202e")


@pytest.fixture(scope="module")
def page() -> str:
    events = list(simulate_match(PRESETS["classic"], 2, seed="nasty-review", index=0))
    start = events[0]
    assert isinstance(start, ev.MatchStarted)
    events[0] = msgspec.structs.replace(
        start, match_id="</script><script>alert(2)</script>",
        players=tuple(ev.Player(name=n) for n in NAMES))
    events = events[:80]  # a prefix: a few decisions are enough
    review = review_events(events, 1, budget=Budget(samples=2, candidates=2, rounds=1))
    return review_page(events, review)


def test_the_review_data_keeps_the_names_as_data(page: str) -> None:
    assert page.count("<script") == 4  # viewer data and code, review data and code
    assert "<img" not in page
    found = re.findall(r'<script type="application/json" id="bl-review">(.*?)</script>',
                       page, re.S)
    assert len(found) == 1
    head = json.loads(found[0])["head"]
    # as text, with the control and bidi characters shown as escapes (review3 probes)
    assert terminal_safe(NAMES[1]) in head and "</script><script>alert(2)</script>" in head


def test_the_review_page_shows_hostile_names_as_text(browser: Any, page: str,
                                                     tmp_path: Any) -> None:
    path = tmp_path / "review.html"
    path.write_text(page, encoding="utf-8")
    browser.get(path.as_uri())
    found = browser.execute_script("""
        return {imgs: document.querySelectorAll('img').length,
                scripts: document.querySelectorAll('script').length,
                head: document.querySelector('.rv-head').textContent};""")
    assert found["imgs"] == 0 and found["scripts"] == 4
    assert terminal_safe(NAMES[1]) in found["head"]
    assert [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"] == []
