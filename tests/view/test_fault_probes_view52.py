"""Fault probes of `view` (round 52): words the page said without a separator or a name.

- A rules value named "" (or blanks, as a log may carry it) made the first move line
  "match m started (; seat 0, ...)", the heading "match m ·  · referee view" and the tab's
  title "m (⁨⁩, referee)": it is now "rules with no name" in each.
- The slider's accessible name was "seq" alone: a screen reader said "seq, slider".
- A seat with no name had the heading "seat 1 side 1 · 11 cards": the separator a named seat
  has ("seat 3 ana · side 1") was missing before "side".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
from selenium.webdriver.common.by import By

from buraco_log.events import AnyEvent, MatchStarted, Player
from buraco_log.log import read_events
from buraco_log.timeline import describe_event
from buraco_log.view import build_page
from tests.view.pages import SIM

BROWSER = pytest.mark.xdist_group("browser")  # one Chromium, with tests/view/test_browser.py
LOG = SIM / "burraco-4p-000000.blog"

TEXTS = """
var q = function (s) { return [].map.call(document.querySelectorAll(s),
  function (e) { return e.textContent; }); };
return {title: document.title, heading: document.getElementById('title').textContent,
  tip: document.getElementById('title').title, seats: q('#seats h3'),
  first: document.querySelector('#moves li[data-seq="0"]').textContent};
"""


def _events(rules_name: str, names: tuple[str, ...]) -> list[AnyEvent]:
    events = read_events(LOG)[:30]
    start = events[0]
    assert isinstance(start, MatchStarted)
    return [msgspec.structs.replace(
        start, rules=msgspec.structs.replace(start.rules, name=rules_name),
        players=tuple(Player(name=x) for x in names)), *events[1:]]


def test_a_rules_value_with_no_name_is_said_so_in_its_line() -> None:
    start = _events(" ", ("ana", "bo", "cy", "di"))[0]
    assert describe_event(start) == ("seq 0: match " + start.match_id + " started "
                                     "(rules with no name; ana, bo, cy, di)")


@BROWSER
def test_the_page_names_nameless_rules_the_slider_and_an_unnamed_seats_side(
        browser: Any, tmp_path: Path) -> None:
    events = _events(" ", ("", "  ", "\t", "ana"))
    path = tmp_path / "p.html"
    path.write_text(build_page(events).html, encoding="utf-8")
    browser.get("about:blank")
    browser.get(f"{path.as_uri()}#seq=20")
    got: dict[str, Any] = browser.execute_script(TEXTS)
    assert "(;" not in got["first"] and "(rules with no name; seat 0, " in got["first"], got
    assert " \u00b7 rules with no name \u00b7 referee view" in got["heading"], got["heading"]
    assert "\u2068rules with no name\u2069" in got["tip"], got["tip"]
    assert "(\u2068rules with no name\u2069, referee)" in got["title"], got["title"]
    seats = [h.split(" \u00b7 ")[:2] for h in got["seats"]]
    assert seats == [["seat 0", "side 0"], ["seat 1", "side 1"], ["seat 2", "side 0"],
                     ["seat 3 ana", "side 1"]], got["seats"]
    name = browser.find_element(By.ID, "slider").accessible_name
    assert name != "seq" and "event" in name.lower() and "seq" in name, name
