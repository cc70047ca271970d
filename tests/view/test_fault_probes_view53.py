"""The replay page of a finished hand, and every preset's golden log in a real browser.

Once a hand was scored, the status line still said "side 0: 255 (+105 on the table)": the
105 already counted in the 255, read as 105 still to come (a referee showing the score of a
disputed hand read 360).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from buraco_log.audit import load
from buraco_log.timeline import Timeline
from buraco_log.view import page_for_log, write_page
from tests.view.pages import GOLDEN

BROWSER = pytest.mark.xdist_group("browser")  # one Chromium, with tests/view/test_browser.py
CLASSIC = next(p for p in GOLDEN if p.stem == "classic")

_STEP_ALL = """
var v = window.buracoView, bad = [], status = [];
for (var i = 0; i <= v.last; i++) {
  try { v.go(i); document.body.offsetHeight; } catch (e) { bad.push([i, String(e)]); }
  status.push(document.getElementById('status').textContent);
}
return {last: v.last, bad: bad, status: status};
"""


def _open(browser: Any, page: Path) -> dict[str, Any]:
    browser.get("about:blank")
    browser.get_log("browser")  # what earlier pages said
    browser.get(page.as_uri())
    out: dict[str, Any] = browser.execute_script(_STEP_ALL)
    return out


@BROWSER
def test_a_scored_hand_is_not_said_to_have_its_table_still_to_come(browser: Any,
                                                                    tmp_path: Path) -> None:
    page = tmp_path / "classic.html"
    write_page(page, page_for_log(CLASSIC).html)
    got = _open(browser, page)
    tl = Timeline(load(CLASSIC))
    assert got["bad"] == [] and got["last"] == tl.last_seq
    points = tl.state_at(tl.last_seq).rules.point_table()  # type: ignore[union-attr]
    for seq, status in enumerate(got["status"]):
        s = tl.state_at(seq)
        for side in range(s.n_sides):
            table = sum(points[c] for m in s.melds[side] for c in m.cards) if s.melds else 0
            total = s.totals[side] if s.totals else 0
            said = (f"side {side}: {total} ({table} on the table, scored)"
                    if s.phase in ("between", "decided", "over") and s.hand >= 0
                    else f"side {side}: {total} (+{table} on the table)")
            assert said in status, (seq, status)
    assert "side 0: 255 (105 on the table, scored)" in got["status"][-1]  # was "(+105 ..."
    assert browser.get_log("browser") == []


@BROWSER
@pytest.mark.slow
@pytest.mark.parametrize("seat", [None, 0, 1])
@pytest.mark.parametrize("log", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_every_frame_of_every_golden_log_draws_with_no_script_error(
        browser: Any, tmp_path: Path, log: Path, seat: int | None) -> None:
    page = tmp_path / f"{log.stem}.html"
    write_page(page, page_for_log(log, seat=seat).html)
    got = _open(browser, page)
    assert got["bad"] == []
    assert got["last"] == len(load(log)) - 1
    assert "phase over" in got["status"][-1]  # the match end drawn too
    assert browser.get_log("browser") == []
