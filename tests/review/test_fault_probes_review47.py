"""Probe 47 of `buraco-log review`: its page read by a screen reader.

- The review panel's verdict at each decision changed without a word to a screen reader: it
  was no live region. It is now (polite), as the viewer's event line is.
- The best move's cards were outlined in green and said nothing else: a screen reader read
  "9 of hearts" for a card of the best move as for any other. Each now reads "9 of hearts, in
  the best move found", once however often the page stands on that table.
- The panel heading's tooltip (the whole heading, as the log holds it) drew a right-to-left
  match id and rules' name as one right-to-left run, the rules first: the tooltip is plain
  text, where the heading's <bdi> cannot reach. Its name, id and rules are now isolated by
  FSI ... PDI.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from buraco_log.cards import parse_card
from buraco_log.expert import Budget
from buraco_log.review import review_events, review_page
from tests.review.positions import bad_discard
from tests.view.pages import PLAIN_WORDS

BROWSER = pytest.mark.xdist_group("browser")
SUIT = ("clubs", "diamonds", "hearts", "spades")
RANK = ("", "ace", "2", "3", "4", "5", "6", "7", "8", "9", "10", "jack", "queen", "king")


@BROWSER
def test_the_verdict_is_a_live_region_and_the_best_moves_cards_say_so(browser: Any,
                                                                       tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    events, seq = bad_discard()
    review = review_events(events, 0, budget=Budget(samples=4))
    move = next(m for m in review.moves if m.seq == seq)
    page = tmp_path / "review.html"
    page.write_text(review_page(events, review), encoding="utf-8")
    browser.get(page.as_uri())
    now = browser.find_element(By.ID, "rv-now")
    assert now.get_attribute("aria-live") == "polite"  # was none
    best = parse_card(move.best.split()[-1])
    for _ in range(2):  # the same table twice: its words said once
        browser.execute_script(f"window.buracoView.go({seq - 1});")
        (card,) = browser.find_elements(By.CSS_SELECTOR, ".card.rv-alt")
        assert int(card.get_attribute("data-card")) == best
        said = f"{RANK[best & 15]} of {SUIT[best >> 4]}, in the best move found"
        assert card.accessible_name == said, card.accessible_name
    others = browser.find_elements(By.CSS_SELECTOR, '[data-zone="hand-0"] .card:not(.rv-alt)')
    assert others and not any("best move" in c.accessible_name for c in others[:5])
    browser.execute_script(f"window.buracoView.go({seq});")
    assert browser.find_elements(By.CSS_SELECTOR, ".card.rv-alt") == []
    assert browser.get_log("browser") == []


@BROWSER
def test_the_panels_tooltip_reads_a_right_to_left_id_and_rules_in_order(browser: Any,
                                                                         tmp_path: Path) -> None:
    import msgspec

    from buraco_log.events import MatchStarted

    match, rules = "\u05de\u05e9\u05d7\u05e7", "\u05e7\u05dc\u05d0\u05e1\u05d9"  # Hebrew
    events, _ = bad_discard()
    start = events[0]
    assert isinstance(start, MatchStarted)
    events = [msgspec.structs.replace(start, match_id=match, rules=msgspec.structs.replace(
        start.rules, name=rules)), *events[1:]]
    review = review_events(events, 0, budget=Budget(samples=1, candidates=2, rounds=1))
    page = tmp_path / "rtl.html"
    page.write_text(review_page(events, review), encoding="utf-8")
    browser.get(page.as_uri())
    tip = browser.execute_script("return document.querySelector('#review .rv-head').title")
    left = browser.execute_script(PLAIN_WORDS, tip, ["review", match, rules, "seed"])
    assert None not in left and left == sorted(left), left  # the rules were drawn first
    assert f"match \u2068{match}\u2069 (\u2068{rules}\u2069)" in tip, tip
    assert browser.get_log("browser") == []
