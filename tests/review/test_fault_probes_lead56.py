"""The review page says a cost inside its noise as the text does: "about even with X", not
"best found X" (a tenfold search found X no better in most such decisions; docs/review.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from buraco_log.expert import Budget
from buraco_log.log import read_events
from buraco_log.review import Review, review_events, review_page

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "examples/sim/thirteen-quick-2p-000000.blog"
BROWSER = pytest.mark.xdist_group("browser")


def _with_costs(review: Review, seq: int, cost: float, se: float) -> Review:
    moves = tuple(msgspec.structs.replace(m, cost=cost, se=se, flagged=False)
                  if m.seq == seq else m for m in review.moves)
    return msgspec.structs.replace(review, moves=moves)


@BROWSER
@pytest.mark.slow
def test_a_cost_inside_its_noise_names_no_better_move_on_the_page(
        browser: Any, tmp_path: Path) -> None:
    events = read_events(LOG)
    review = review_events(events, 1, budget=Budget(samples=8, candidates=4), seqs={93})
    (move,) = review.moves
    for cost, se, said in ((3.0, 2.0, "about even with"), (5.0, 2.0, "best found")):
        page = tmp_path / f"review{cost}.html"
        page.write_text(review_page(events, _with_costs(review, move.seq, cost, se)),
                        encoding="utf-8")
        browser.get(page.as_uri())
        browser.execute_script(f"window.buracoView.go({move.seq - 1});")
        now = browser.execute_script("return document.getElementById('rv-now').textContent;")
        assert f"; {said} {move.best}, cost {cost:.1f}" in now, now
        other = "best found" if said == "about even with" else "about even with"
        assert other not in now, now
        browser.execute_script(f"window.buracoView.go({move.seq});")
        here = browser.execute_script("return document.getElementById('rv-now').textContent;")
        assert f"; {said} {move.best}" in here, here
