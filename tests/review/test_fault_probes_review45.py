"""Probe 45 of the review and its searching bot.

- In two hand-built positions whose best move is plain, the review flags the move played and
  names the right one: a seat that could lay off its wild and go out (the discard that empties
  the hand follows) discards the wild instead; a seat that could take a pile whose top card
  completes a canastra draws from the stock instead.
- A review's text and HTML page are the same bytes for one process and for two (``-j``).
- Defect: on the review page, a flagged decision's "Decision at seq N (mistake)" was dark red
  on the dark green panel, 1.6:1: now light red on screen (5.4:1), dark red on paper.
- Slow: over many seeds of every preset and every player count, every move a review names
  (played, best, alternatives) is accepted by the reducer in its position.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from buraco_log.audit import load
from buraco_log.cards import parse_card
from buraco_log.events import AnyEvent, CardDiscarded, CardDrawn
from buraco_log.expert import Budget
from buraco_log.reducer import Replayer, replay
from buraco_log.review import review_events
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match
from tests.cli.probes import ROOT, cli
from tests.play import random_match
from tests.review.legality import CONFIGS, review_is_legal
from tests.review.positions import bad_discard

SIM = ROOT / "examples" / "sim"
SMALL = Budget(samples=24, candidates=5)


def could_go_out() -> tuple[list[AnyEvent], int]:
    """classic, 2 players: seat 1 holds 2h and Ts with its morto taken and a canastra down;
    laying the 2h off and discarding the Ts goes out (as the simulated match did at seq 73).
    Here it discards the 2h instead and keeps the Ts. The events and that seq."""
    events = load(SIM / "classic-2p-000000.blog")[:73]
    state = replay(events)
    assert sorted(state.hands[1]) == sorted((parse_card("2h"), parse_card("Ts")))
    events.append(CardDiscarded(1, parse_card("2h"), seq=73))
    replay(events)
    return events, 73


def refused_canastra() -> tuple[list[AnyEvent], int]:
    """Seat 0 discards the 9h beside seat 1's six-card heart run (``bad_discard``); seat 1
    then draws from the stock instead of taking the pile, whose 9h makes the run a clean
    canastra. The events and the seq of that draw."""
    events, seq = bad_discard()
    rep = Replayer()
    for ev in events:
        rep.step(ev)
    events.append(CardDrawn(1, rep.state().stock[0], seq=seq + 1))
    replay(events)
    return events, seq + 1


@pytest.mark.parametrize(("position", "seat", "best"), [
    (could_go_out, 1, "lay off 2h on meld"),
    (refused_canastra, 1, "take the pile (3 cards, top 9h)"),
])
def test_the_plainly_better_move_is_named_and_the_move_played_flagged(
        position: object, seat: int, best: str) -> None:
    events, seq = position()  # type: ignore[operator]
    review = review_events(events, seat, budget=SMALL, seed="45", seqs={seq})
    [move] = review.moves
    assert move.seq == seq and move.flagged, move
    assert move.best.startswith(best), move.best
    assert move.cost >= 50 and move.cost >= 2 * move.se, (move.cost, move.se)


@pytest.mark.slow  # four reviews in subprocesses, a pool of two: some 25 s
def test_the_review_is_the_same_bytes_for_one_process_and_two(tmp_path: Path) -> None:
    log = SIM / "thirteen-quick-4p-000000.blog"
    out: dict[tuple[str, int], bytes] = {}
    for fmt in ("text", "html"):
        for jobs in (1, 2):
            path = tmp_path / f"{fmt}-{jobs}"
            done = cli("review", log, "--seat", "2", "--budget", "4x3r1", "-j", jobs,
                       "--format", fmt, "--no-progress", "-o", path)
            assert done.returncode == 0, done.stderr
            out[fmt, jobs] = path.read_bytes()
    assert out["text", 1] == out["text", 2] and out["html", 1] == out["html", 2]
    assert b"decisions" in out["text", 1] and b"bl-review" in out["html", 1]


@pytest.mark.slow  # 4-12 s a seed: every preset and player count, a hand or 400 events
@pytest.mark.parametrize("seed", range(12))
def test_every_move_a_review_names_is_legal_at_every_table(seed: int) -> None:
    checked = 0
    for name, players in CONFIGS:
        seat = random.Random(f"{seed}/{name}/{players}").randrange(players)
        if seed % 2:
            events = random_match(name, players, seed, max_hands=1, eager=True)
        else:
            events = simulate_match(PRESETS[name], players, seed=f"p45-{seed}")[:400]
        checked += review_is_legal(events, seat)
    assert checked > 1000


@pytest.mark.xdist_group("browser")  # one Chromium, with the viewer's tests
def test_a_flagged_decision_reads_clearly_on_screen_and_on_paper(browser: Any,
                                                                  tmp_path: Path) -> None:
    """The panel's "Decision at seq N (mistake)" was dark red on the dark green, 1.6:1."""
    from buraco_log.review import review_page
    from tests.view.contrast import CONTRAST

    events, seq = refused_canastra()
    review = review_events(events, 1, budget=SMALL, seed="45")
    assert next(m for m in review.moves if m.seq == seq).flagged
    page = tmp_path / "review.html"
    page.write_text(review_page(events, review), encoding="utf-8")
    browser.get(page.as_uri())
    browser.execute_script(f"window.buracoView.go({seq - 1});")
    now = browser.execute_script("return document.querySelector('#rv-now b.bad').textContent")
    assert now == f"Decision at seq {seq} (mistake)"
    try:
        for media in ("screen", "print"):
            browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": media})
            low = [x for x in browser.execute_script(CONTRAST, media == "print")
                   if not str(x[0]).startswith("{")]  # the chart's SVG text is drawn by fill
            assert low == [], (media, low)
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
