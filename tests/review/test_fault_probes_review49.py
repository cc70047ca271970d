"""Probe 49 of `buraco-log review`: a move played that scores as well as the best found.

- A meld played as the log holds it (Qs Qd Qh) was reviewed with "best: meld Qd Qh Qs" in the
  JSON and on the page, the same meld in the search's order, as if another move were better;
  and a move tied with another (the same mean over the same samples) was given the other as
  "best". The page's panel said "played meld Qs Qd Qh; best found meld Qd Qh Qs, cost 0.0", and
  a player who made no mistake read of a better move at each tie. The move played that scores
  as well as any is now the best (named as played) and first among the alternatives; the panel
  says "the best move found".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from buraco_log.audit import load
from buraco_log.expert import Budget, move_key
from buraco_log.jsonl import event_from_json
from buraco_log.log import read_events
from buraco_log.review import Review, review_events, review_page

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "examples/sim/thirteen-quick-2p-000000.blog"
# seat 1's decisions there that tie the best found at this budget: a meld of the same cards in
# another order (104), melds and discards of equal mean (93, 156)
TIES = {93, 104, 156}
BROWSER = pytest.mark.xdist_group("browser")


@pytest.fixture(scope="module")
def tied() -> tuple[list[Any], Review]:
    events = read_events(LOG)
    return events, review_events(events, 1, budget=Budget(samples=8, candidates=4), seqs=TIES)


def _key(event: dict[str, Any], seq: int) -> Any:
    if event["t"] == "dr":
        return ("dr", event["seat"])
    return move_key(event_from_json({**event, "seq": seq}))


def test_a_move_that_ties_the_best_is_the_best(tied: tuple[list[Any], Review]) -> None:
    _, review = tied
    assert {m.seq for m in review.moves} == TIES
    for m in review.moves:
        assert m.cost == 0.0 and not m.flagged
        assert m.best == m.played, (m.seq, m.best, m.played)
        assert m.best_event == m.played_event
        assert m.alternatives[0].event == m.played_event and m.alternatives[0].cost == 0.0
        # named once: no other alternative is the same move in another order
        keys = [_key(a.event, m.seq) for a in m.alternatives]
        assert len(set(keys)) == len(keys), (m.seq, [a.move for a in m.alternatives])
        means = [a.mean for a in m.alternatives]
        assert means == sorted(means, reverse=True)


@BROWSER
def test_the_panel_says_the_move_played_was_the_best_found(
        browser: Any, tmp_path: Path, tied: tuple[list[Any], Review]) -> None:
    events, review = tied
    page = tmp_path / "review.html"
    page.write_text(review_page(events, review), encoding="utf-8")
    browser.get(page.as_uri())
    browser.execute_script("window.buracoView.go(103);")
    now = browser.execute_script("return document.getElementById('rv-now').textContent;")
    assert "played meld Qs Qd Qh, the best move found." in now, now
    assert "Qd Qh Qs" not in now and "best found meld" not in now
    browser.execute_script("window.buracoView.go(104);")
    now = browser.execute_script("return document.getElementById('rv-now').textContent;")
    assert "This move: meld Qs Qd Qh, the best move found" in now, now
    assert browser.get_log("browser") == []


# Counts the page's queries of the move list for one line by its seq, from before the scripts
# run: the review's script asked once for every reviewed move, each a scan of the whole list.
_COUNTER = ("<script>window.__byseq = 0; (function (q) { document.querySelector = function (s) {"
            " if (String(s).indexOf('data-seq=') >= 0) { window.__byseq++; }"
            " return q.call(document, s); }; }(document.querySelector));</script>")


@BROWSER
def test_the_review_finds_the_move_lines_in_one_pass(browser: Any, tmp_path: Path) -> None:
    events = load(ROOT / "examples/golden/classic.jsonl")
    review = review_events(events, 0, budget=Budget(samples=2, candidates=2))
    assert len(review.moves) >= 5
    html = review_page(events, review)
    head = html.index("<head>") + len("<head>")
    page = tmp_path / "review.html"
    page.write_text(html[:head] + _COUNTER + html[head:], encoding="utf-8")
    browser.get(page.as_uri())
    marked = browser.execute_script("return document.querySelectorAll('#moves li.rv').length;")
    assert marked == len(review.moves)  # every reviewed move is marked in the list
    # a 21,000-event match's page spent 1.8 s on these queries as it opened, 43 ms without
    assert browser.execute_script("return window.__byseq;") == 0


@BROWSER
def test_a_step_lays_out_the_panel_not_the_move_list_under_it(
        browser: Any, tmp_path: Path, tied: tuple[list[Any], Review]) -> None:
    # The panel's height changes from one decision to the next, moving the list under it: with
    # each chunk of lines laid out on its own, a step's 90th percentile on a 6,000-event page
    # went from 8.6-14 ms to 5.8 ms (a 21,000-event page: 11-27 ms to 5-8 ms).
    events, review = tied
    page = tmp_path / "review.html"
    page.write_text(review_page(events, review), encoding="utf-8")
    browser.get(page.as_uri())
    contained = browser.execute_script(
        "return [].map.call(document.querySelectorAll('#moves li.chunk'),"
        " function (c) { return getComputedStyle(c).contain; });")
    assert contained and all("layout" in c for c in contained), contained
