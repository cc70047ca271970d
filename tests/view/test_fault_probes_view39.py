"""Fault probes of `view` (round 39): a jump across a long match set a class on every row of
the score sheet and every point of the chart (0.4-3.7 s a jump at 100,000 events); the match
start's line named every player whole and a 20,000-character match id filled the heading and
that line (5,900 and 10,000 pixels tall); a fragment was matched loosely (`#seq=1e3` opened
seq 1, `#xseq=7` seq 7); a damaged log's banner said "The log is torn tail" and
"damaged (damage)"; `view --at` past the damage said only "the page holds seqs 0 to 4", exit 2,
as of a seq the log never had."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from buraco_log.jsonl import event_to_json
from buraco_log.log import read_events
from buraco_log.view import frames, page_for_log, write_page
from tests.view.pages import GOLDEN, SIM, data_of, greyed_wrongly

ROOT = Path(__file__).resolve().parents[2]
BROWSER = pytest.mark.xdist_group("browser")  # one Chromium, with tests/view/test_browser.py
NAME = "A" * 10_000
MATCH_ID = "M" * 20_000
NAME_IN_MOVES: int = frames.NAME_IN_MOVES
ID_SHOWN: int = getattr(frames, "ID_SHOWN", 64)  # so the tests run before it was


def _jsonl(path: Path, objs: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def huge(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The simulated classic match (11 hands) with a 10,000-character name and a
    20,000-character match id."""
    objs = [event_to_json(e) for e in read_events(str(SIM / "classic-2p-000000.blog"))]
    objs[0]["players"][1]["name"] = NAME
    objs[0]["match_id"] = MATCH_ID
    return _jsonl(tmp_path_factory.mktemp("v39") / "huge.jsonl", objs)


def test_the_match_start_line_cuts_names_and_the_match_id_as_the_other_lines_do(
        huge: Path) -> None:
    page = page_for_log(huge).html
    data = data_of(page)
    first = data["moves"][0]
    assert NAME[:NAME_IN_MOVES] not in first, len(first)  # the 10,000 letters were all there
    assert f"{'A' * (NAME_IN_MOVES - 1)}\u2026" in first
    assert MATCH_ID[:ID_SHOWN] not in first and f"{'M' * (ID_SHOWN - 1)}\u2026" in first
    assert len(first) < 300
    assert data["match"] == MATCH_ID and data["players"][1]["name"] == NAME  # the data: whole
    title = page.split("<title>", 1)[1].split("</title>", 1)[0]
    assert len(title) < 200, len(title)


def test_a_damaged_logs_banner_says_what_the_damage_is_in_plain_words(tmp_path: Path) -> None:
    log = (SIM / "classic-2p-000000.blog").read_bytes()
    torn = tmp_path / "torn.blog"
    torn.write_bytes(log + b"\0" * 100)  # a crash before the tail reached the disk
    twice = tmp_path / "twice.blog"
    twice.write_bytes(log + log[64:])  # the records again after the seal: a checksum fails
    (t,) = page_for_log(torn).banners
    (d,) = page_for_log(twice).banners
    assert t.text.startswith(f"The log has a torn tail at byte {len(log)}, "), t.text
    assert d.text.startswith(f"The log is damaged at byte {len(log)}, "), d.text


def test_view_at_a_seq_past_the_damage_names_the_damage_and_writes_nothing(
        tmp_path: Path) -> None:
    objs = [event_to_json(e) for e in read_events(str(SIM / "classic-2p-000000.blog"))[:20]]
    lines = [json.dumps(o) for o in objs]
    lines[6] = '{"t": "dr", "seq": 6, garbage'
    log = tmp_path / "cut.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "cut.html"
    p = subprocess.run([sys.executable, "-m", "cli.main", "view", str(log), "--at", "9", "-o",
                        str(out)], capture_output=True, text=True, timeout=60, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 1, p.stderr  # a finding about the log, as replay --at 9 says (was 2)
    assert p.stdout == "" and p.stderr.count("\n") == 1 and not out.exists()
    assert f"{log}: --at 9: the page holds seqs 0 to 5" in p.stderr
    assert "damaged" in p.stderr and "line 7, seq 6" in p.stderr, p.stderr


@BROWSER
def test_a_jump_across_the_match_moves_one_veil_not_every_row_and_point(
        browser: Any, tmp_path: Path) -> None:
    page = tmp_path / "jump.html"
    write_page(page, page_for_log(SIM / "classic-2p-000000.blog").html)
    browser.get(page.as_uri())
    rows = browser.execute_script("return document.querySelectorAll('#sheet tr').length")
    assert rows > 20  # 11 hands, 2 sides: the old page changed each row on such a jump
    last = browser.execute_script("return window.buracoView.last")
    browser.execute_script("""
        window.__changes = 0;
        // a row's aria-hidden (what a screen reader is read) changes with its hand's side of
        // the veil: no style depends on it (tests/view/test_fault_probes_view57.py)
        new MutationObserver(function (m) {
          window.__changes += m.filter(function (r) {
            return r.attributeName !== 'aria-hidden'; }).length;
        }).observe(
          document.getElementById('scores'), {attributes: true, childList: true, subtree: true});
    """)
    for seq in (0, last, last // 2, 1):
        before = browser.execute_script("return window.__changes")
        browser.execute_script(f"window.buracoView.go({seq})")
        changed = browser.execute_script(
            "return new Promise(function (done) { setTimeout(function () {"
            " done(window.__changes); }, 0); })") - before
        assert changed <= 6, (seq, changed)  # the sheet's veil and the chart's: was 44
        assert greyed_wrongly(browser, seq) == [], seq
    assert [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"] == []


@BROWSER
def test_a_huge_match_id_leaves_the_heading_and_the_first_line_a_few_lines_tall(
        browser: Any, huge: Path, tmp_path: Path) -> None:
    page = tmp_path / "huge.html"
    write_page(page, page_for_log(huge).html)
    browser.get(page.as_uri() + "#seq=0")
    got = browser.execute_script("""
        var h = document.getElementById('title');
        return {heading: h.getBoundingClientRect().height, tip: h.title.length,
                line: document.querySelector('#moves li[data-seq]').getBoundingClientRect().height,
                event: document.getElementById('event').getBoundingClientRect().height};""")
    assert got["heading"] < 60 and got["line"] < 200 and got["event"] < 80, got  # 5,900; 9,958
    assert got["tip"] >= len(MATCH_ID)  # whole in the heading's tooltip


@BROWSER
def test_a_fragment_that_names_no_seq_opens_the_page_where_it_opens_and_is_rewritten(
        browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    page = tmp_path / "frag.html"
    write_page(page, page_for_log(next(p for p in GOLDEN if p.stem == "classic")).html)
    uri = page.as_uri()
    browser.get(uri)
    last = browser.execute_script("return window.buracoView.last")
    assert last > 12
    for frag in ("#seq=1e3", "#xseq=7", "#seq=12abc", "#seq=-5"):  # were seq 1, 7, 12; last
        browser.get("about:blank")
        browser.get(uri + frag)
        assert browser.execute_script("return window.buracoView.seq()") == last, frag
        # on the open page: the table stays, the address names it again
        browser.execute_script("window.buracoView.go(5); location.hash = arguments[0]", frag)
        WebDriverWait(browser, 3, poll_frequency=0.02).until(
            lambda b: b.execute_script("return location.hash") == "#seq=5", frag)
        assert browser.execute_script("return window.buracoView.seq()") == 5, frag
    browser.get(uri + "#seq=0012")  # digits alone still open their seq
    assert browser.execute_script("return window.buracoView.seq()") == 12
