"""The replay page of a finished hand, and every preset's golden log in a real browser.

Once a hand was scored, the status line still said "side 0: 255 (+105 on the table)": the
105 already counted in the 255, read as 105 still to come (a referee showing the score of a
disputed hand read 360).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from buraco_log.audit import load
from buraco_log.timeline import Timeline
from buraco_log.view import page_for_log, write_page
from tests.view.pages import GOLDEN, data_of

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


# -- a damaged JSON line on a player's copy ---------------------------------------------------
# The reader's words on a JSON line whose card field is not a card quote the field: a seat's
# page (and a seat's review) said 'field 'card': ["8d"] is not a card', the card another seat
# drew, which the seat whose copy it is never saw.


def _hidden_draw_garbled(tmp_path: Path) -> tuple[Path, str, int]:
    """A JSON Lines log whose line of a draw by seat 1 holds its card in a list; the card, and
    the seat that could not see it."""
    lines = CLASSIC.read_text().splitlines()
    at = next(i for i, x in enumerate(lines) if '"t":"dr","seat":1' in x)
    card = json.loads(lines[at])["card"]
    lines[at] = lines[at].replace(f'"card":"{card}"', f'"card":["{card}"]')
    path = tmp_path / "garbled.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path, card, 0


def test_a_seats_page_of_a_damaged_line_does_not_quote_the_card_it_could_not_see(
        tmp_path: Path) -> None:
    path, card, seat = _hidden_draw_garbled(tmp_path)
    page = page_for_log(path, seat=seat)
    banner = page.banners[0]
    assert banner.kind == "damaged" and banner.rule == "log.jsonl"
    said = [banner.text, *(m["text"] for ms in data_of(page.html)["marks"].values() for m in ms)]
    assert len(said) == 2 and not [t for t in said if card in t], said  # it was quoted
    assert f'[\\"{card}\\"]' not in page.html  # as the page's JSON holds it
    assert "line 8, seq 6" in banner.text and "left out of a player's copy" in banner.text
    referee = page_for_log(path)  # the referee's copy keeps the reader's words
    assert f'["{card}"] is not a card' in referee.banners[0].text


@pytest.mark.slow  # a subprocess: the default run has no second to spare
def test_a_seats_review_of_a_damaged_line_does_not_quote_the_card(tmp_path: Path) -> None:
    from tests.view.cli_run import run

    path, card, seat = _hidden_draw_garbled(tmp_path)
    p = run("review", path, "--seat", str(seat), "--budget", "1x2r1", "-f", "json")
    assert p.returncode == 1
    assert card not in (p.stdout + p.stderr).decode(), (p.stdout, p.stderr)
    assert b"line 8" in p.stdout


@pytest.mark.slow
def test_a_seats_review_page_of_a_damaged_line_does_not_quote_the_card(tmp_path: Path) -> None:
    from tests.view.cli_run import run

    path, card, seat = _hidden_draw_garbled(tmp_path)
    out = tmp_path / "review.html"
    p = run("review", path, "--seat", str(seat), "--budget", "1x2r1", "--partial", "-f", "html",
            "-o", out)
    assert p.returncode == 1 and out.exists(), p.stderr
    data = data_of(out.read_text("utf-8"))
    said = [b["text"] for b in data["banners"]]
    said += [m["text"] for ms in data["marks"].values() for m in ms if m["kind"] == "damaged"]
    assert len(said) == 2 and all("line 8, seq 6" in t for t in said), said
    assert not [t for t in said if card in t], said  # it was quoted
    assert card not in p.stderr.decode()
