"""Fault probes of the replay page for a player on a phone, with no mouse, or who cannot tell
colours apart, in Chromium: the keyboard, what a screen reader is told (Chromium's own
accessibility tree), colour, a 360 x 740 phone, reduced motion, print.

- Burako's tiles told their colour by colour alone: a red 12 and a black 12 were one tile to a
  colour-blind player. Each tile now has its colour's letter under its number, as the text
  writes it ("12r").
- On a phone, the "four colours" box was 13 x 13 CSS pixels, the slider 16 and the hand menu
  19 pixels tall, a line of the move list 17: each is now at least 24 x 24. The meld's tag,
  the mortos' small cards and the chart's numbers were 10-11 pixels: each is now 12 or more.
- With a reader's wider text spacing (WCAG 1.4.12: line height 1.5 and so on), a card's fixed
  height cut its suit, and a tile's letter, in half: a card now grows to hold them.
- A Burako page offered the "four colours" box, which recolours suits: ticked, it changed
  nothing on tiles, yet Tab stopped on it. It is left out there.
- The current line of the move list was said only by its yellow: it is now aria-current.
  A mark pinned to a seq (a finding, the damage) appeared with no word to a screen reader:
  its box is a live region, as the event line is; its line in the move list, marked by a
  coloured border alone, now starts with a flag a screen reader says as "marked: ".
- In forced colours (Windows' contrast themes) the line shown in the move list lost its
  yellow and was like any other.
- The score chart's lines were told apart by colour alone, and nothing said which side each
  was: each side's line now has its own dashes, and a key above the lines names them.
- A review whose time cap cut decisions short said so on its text's last line; its page said
  nothing. The page's panel now gives the same line.
"""

from __future__ import annotations

import base64
import contextlib
import re
import zlib
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from buraco_log.audit import load
from buraco_log.expert import Budget
from buraco_log.review import Review, review_events, review_page, to_text
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match
from buraco_log.view import build_page, write_page
from tests.view.contrast import CONTRAST
from tests.view.pages import SIM

BROWSER = pytest.mark.xdist_group("browser")  # one Chromium, with tests/view/test_browser.py


@cache
def _capped() -> tuple[list[Any], Review]:
    """A review whose 1 ms time cap stops each decision at a few of its 4,000 samples."""
    events = list(simulate_match(PRESETS["thirteen-quick"], 2, seed="cap56"))[:40]
    return events, review_events(events, 0, budget=Budget(samples=4000, candidates=2, rounds=1,
                                                          ms=1))


def test_the_review_page_carries_the_texts_time_cap_line() -> None:
    events, capped = _capped()
    line = to_text(capped).splitlines()[-1]
    assert line.startswith("time cap: ")
    html = review_page(events, capped)
    assert '"short":"time cap: ' in html  # was: no word of it in the page's data
    plain = review_events(events, 0, budget=Budget(samples=2, candidates=2, rounds=1))
    assert '"short":""' in review_page(events, plain)


def test_the_charts_lines_differ_by_their_dashes_and_a_key_names_each_side() -> None:
    from buraco_log.timeline import Timeline
    from buraco_log.view.page import score_chart, score_sheet

    final = Timeline(load(SIM / "classic-3p-000000.blog")).final
    assert final.n_sides == 3
    chart = score_chart(score_sheet(final.results), final.n_sides)
    lines = re.findall(r'<polyline fill="none" (stroke="[^"]*"[^/]*?) points=', chart)
    keys = re.findall(r'<g class="key"><line [^>]*?(stroke="[^"]*"[^/]*?)/><text [^>]*>'
                      r"([^<]*)</text></g>", chart)
    # was: three lines told apart by their colour alone, and no word of which side is which
    assert [k[1] for k in keys] == ["side 0", "side 1", "side 2"]
    assert [k[0] for k in keys] == lines
    dashes = [re.search(r'stroke-dasharray="([^"]*)"', x) for x in lines]
    assert len({d[1] if d else "" for d in dashes}) == 3, lines


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("view56")
    out = {}
    for name, log, seat in (("referee", "classic-4p-000000", None),
                            ("seat", "classic-2p-000000", 1),
                            ("tiles", "burako-2p-000000", None)):
        out[name] = d / f"{name}.html"
        write_page(out[name], build_page(load(SIM / f"{log}.blog"), seat=seat).html)
    events, capped = _capped()
    out["review"] = d / "review.html"
    out["review"].write_text(review_page(events, capped), encoding="utf-8")
    return out


def _open(browser: Any, page: Path, fragment: str = "#seq=30") -> None:
    browser.get("about:blank")
    browser.get_log("browser")
    browser.get(page.as_uri() + fragment)


@pytest.fixture
def phone(browser: Any) -> Iterator[Any]:
    """The browser as a 360 x 740 phone that asks for reduced motion."""
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": 360, "height": 740, "deviceScaleFactor": 1, "mobile": True})
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {
        "features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})
    try:
        yield browser
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


# -- the review's time cap -----------------------------------------------------------------

@BROWSER
@pytest.mark.slow
def test_the_review_panel_says_a_time_cap_cut_decisions_short_on_screen_and_paper(
        browser: Any, pages: dict[str, Path]) -> None:
    _, capped = _capped()
    line = to_text(capped).splitlines()[-1]
    _open(browser, pages["review"])
    said = browser.execute_script(
        "var e = document.getElementById('rv-short'); return e && e.innerText")
    assert said == line  # was: None, the panel gave the summary and nothing of the cap
    try:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
        printed = browser.execute_script(
            "return document.getElementById('rv-short').getClientRects().length > 0")
        assert printed
        assert browser.execute_script(CONTRAST, True) == []
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    # Chromium's own print to PDF: text drawn on every page, not a blank sheet
    pdf = base64.b64decode(browser.execute_cdp_cmd("Page.printToPDF", {})["data"])
    shown = []
    for body in re.findall(rb"stream\r?\n(.*?)endstream", pdf, re.S):
        with contextlib.suppress(zlib.error):
            shown.append(len(re.findall(rb"\bT[Jj]\b", zlib.decompress(body))))
    pages = len(re.findall(rb"/Type\s*/Page\b(?!s)", pdf))
    assert pages >= 1 and len([n for n in shown if n]) >= pages, (pages, shown)


# -- colour ----------------------------------------------------------------------------------

TILE_LETTER = {"yellow": "y", "blue": "b", "red": "r", "black": "k"}


@BROWSER
@pytest.mark.slow
def test_every_tile_shows_its_colours_letter_not_its_colour_alone(
        browser: Any, pages: dict[str, Path]) -> None:
    _open(browser, pages["tiles"], "#seq=60")
    shown = browser.execute_script("""
        return [].map.call(document.querySelectorAll('#table .card'), function (c) {
          return [c.getAttribute('aria-label'), c.innerText.replace(/\\s+/g, '')];
        });""")
    assert len(shown) > 20
    wrong = []
    for label, text in shown:
        m = re.fullmatch(r"(yellow|blue|red|black) (\d+)(, wild)?", label)
        if m:  # a joker is its star
            want = m[2] + TILE_LETTER[m[1]]
            if text != want:
                wrong.append((label, text, want))
    assert wrong == [], wrong[:5]  # was: ('red 12', '12', '12r'): only its colour said red


# -- a phone -------------------------------------------------------------------------------

# Each control a finger aims at smaller than 24 x 24 CSS pixels, each text drawn under 12 px
# (an SVG's text at the size the SVG is drawn), the page's width, and the animations running.
PHONE = """
var small = [], tiny = {};
var controls = 'button, input, select, [tabindex], #moves li.m';
document.querySelectorAll(controls).forEach(function (e) {
  var r = e.getBoundingClientRect();
  if (r.width && (r.width < 24 || r.height < 24)) {
    small.push([e.id || e.tagName, Math.round(r.width), Math.round(r.height)]);
  }
});
document.querySelectorAll('body *').forEach(function (e) {
  var own = [].some.call(e.childNodes, function (n) {
    return n.nodeType === 3 && n.textContent.trim();
  });
  if (!own || !e.getClientRects().length) { return; }
  var px = parseFloat(getComputedStyle(e).fontSize), svg = e.closest('svg');
  if (svg) { px *= svg.getBoundingClientRect().width / svg.viewBox.baseVal.width; }
  if (px < 12 - 1e-6) {
    var k = e.tagName + '.' + (e.getAttribute('class') || '') + ' ' + px.toFixed(1);
    tiny[k] = (tiny[k] || 0) + 1;
  }
});
return {small: small.slice(0, 8), tiny: tiny, width: document.documentElement.scrollWidth,
        anims: document.getAnimations().length};
"""


@BROWSER
@pytest.mark.slow
@pytest.mark.parametrize("which", ["referee", "seat", "tiles", "review"])
def test_a_phone_has_no_sideways_scroll_no_target_under_24_px_and_no_text_under_12(
        phone: Any, pages: dict[str, Path], which: str) -> None:
    _open(phone, pages[which], "#seq=38" if which == "review" else "#seq=120")
    phone.find_element("id", "piletop").click()  # the whole pile open: more cards drawn
    phone.find_element("id", "next").click()
    got = phone.execute_script(PHONE)
    # was: [['four', 13, 13], ['slider', 179, 16], ['handsel', 111, 19], ...] and
    # {'SPAN.tag 11.0': 7, 'text. 10.6': 2}
    assert got == {"small": [], "tiny": {}, "width": 360, "anims": 0}, got
    assert phone.execute_script(CONTRAST, False) == []
    assert phone.get_log("browser") == []


# -- a screen reader -----------------------------------------------------------------------

_NAMED = ("button", "checkbox", "slider", "combobox", "image", "navigation", "region")
_CARD = re.compile(r"(?:(?:ace|[2-9]|10|jack|queen|king) of (?:clubs|diamonds|hearts|spades)"
                   r"|joker|(?:yellow|blue|red|black) (?:[1-9]|1[0-3]))"
                   r"(?:, wild)?(?:, in the best move found)?")


def _ax(browser: Any) -> list[dict[str, Any]]:
    """Chromium's accessibility tree of the page: each node not ignored, as role, name, and
    its properties."""
    browser.execute_cdp_cmd("Accessibility.enable", {})
    try:
        nodes = browser.execute_cdp_cmd("Accessibility.getFullAXTree", {})["nodes"]
    finally:
        browser.execute_cdp_cmd("Accessibility.disable", {})
    return [{"role": n.get("role", {}).get("value"), "name": n.get("name", {}).get("value", ""),
             **{p["name"]: p["value"].get("value") for p in n.get("properties", [])}}
            for n in nodes if not n.get("ignored")]


@BROWSER
@pytest.mark.slow
@pytest.mark.parametrize("which", ["referee", "seat", "tiles", "review"])
def test_a_screen_reader_is_told_each_controls_name_each_cards_name_and_the_step(
        browser: Any, pages: dict[str, Path], which: str) -> None:
    _open(browser, pages[which])
    ax = _ax(browser)
    unnamed = [n for n in ax if n["role"] in _NAMED and not n["name"].strip()]
    assert unnamed == []
    cards = [n["name"] for n in ax if n["role"] == "image" and "face down" not in n["name"]
             and n["name"] != "Running score over hands"]
    assert cards and [c for c in cards if not _CARD.fullmatch(c)] == []
    assert {"button", "slider", "combobox"} | ({"checkbox"} if which != "tiles" else set()) \
        <= {n["role"] for n in ax}
    assert any(n["role"] == "list" and n["name"] == "Moves: the arrow keys step" for n in ax)
    live = sum(1 for n in ax if n.get("live") == "polite")
    assert live >= 3 + (which == "review")  # the seq, the event, the marks (the review's panel)
    current = browser.execute_script("""
        return [].map.call(document.querySelectorAll('[aria-current]'), function (e) {
          return [e.getAttribute('data-seq'), e.getAttribute('aria-current'), e.tagName];
        });""")
    assert current == [["30", "step", "LI"]]  # was: [], the line said current by its colour
    browser.find_element("id", "next").click()
    assert browser.execute_script(
        "return [].map.call(document.querySelectorAll('[aria-current]'),"
        " function (e) { return e.getAttribute('data-seq'); })") == ["31"]
    assert browser.find_element("id", "slider").get_attribute("aria-valuetext").startswith(
        "seq 31 of ")


# -- the keyboard --------------------------------------------------------------------------

@BROWSER
@pytest.mark.slow
def test_the_keyboard_alone_reaches_and_works_every_control_with_a_ring_and_no_trap(
        browser: Any, pages: dict[str, Path]) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    _open(browser, pages["review"])
    where = "var e = document.activeElement; return e.id || e.tagName;"
    ring = ("var s = getComputedStyle(document.activeElement);"
            "return [s.outlineStyle, parseFloat(s.outlineWidth), s.outlineColor];")

    def press(*keys: str) -> None:
        ActionChains(browser).send_keys(*keys).perform()

    order = []
    for _ in range(11):
        press(Keys.TAB)
        order.append(browser.execute_script(where))
        if order[-1] != "BODY":
            assert browser.execute_script(ring) == ["solid", 3, "rgb(250, 204, 21)"], order
    # in the order drawn, then round again: no control keeps the focus
    assert order == ["four", "first", "prev", "next", "last", "slider", "handsel", "piletop",
                     "moves", "BODY", "four"], order
    seq = "return window.buracoView.seq()"
    press(Keys.SPACE)
    assert browser.execute_script("return document.body.classList.contains('four')")
    press(Keys.TAB, Keys.TAB, Keys.TAB)  # on "next"
    press(Keys.ENTER)
    assert browser.execute_script(seq) == 31
    ActionChains(browser).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
    assert browser.execute_script(where) == "prev"
    press(Keys.SPACE)
    assert browser.execute_script(seq) == 30
    press(Keys.TAB, Keys.TAB, Keys.TAB)  # the slider: its arrows, Home and End step
    press(Keys.ARROW_RIGHT)
    assert browser.execute_script(seq) == 31
    press(Keys.END)
    last = browser.execute_script("return window.buracoView.last")
    assert browser.execute_script(seq) == last
    press(Keys.HOME)
    assert browser.execute_script(seq) == 0
    press(Keys.TAB, Keys.TAB)  # the pile's button
    press(Keys.ENTER)
    assert browser.find_element("id", "piletop").get_attribute("aria-expanded") == "true"
    press(Keys.TAB, Keys.ARROW_DOWN, Keys.ARROW_DOWN)
    assert browser.execute_script(seq) == 2
    assert browser.get_log("browser") == []


@BROWSER
@pytest.mark.slow
def test_in_forced_colours_the_line_shown_still_stands_out(
        browser: Any, pages: dict[str, Path]) -> None:
    """Windows' contrast themes (forced colours) paint each background the page's own colour."""
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {
        "features": [{"name": "forced-colors", "value": "active"}]})
    try:
        _open(browser, pages["referee"])
        assert browser.execute_script("return matchMedia('(forced-colors: active)').matches")
        got = browser.execute_script("""
            var bg = function (e) { return getComputedStyle(e).backgroundColor; };
            var cur = document.querySelector('#moves li.cur');
            return [bg(cur), bg(document.body), getComputedStyle(cur).color];""")
        # was: ['rgb(255, 255, 255)', 'rgb(255, 255, 255)', ...]: the yellow became the page's
        # own colour, the line shown like any other
        assert got[0] != got[1] and got[0] != got[2], got
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


# WCAG 1.4.12's text spacing, as a reader's own style sheet sets it.
SPACING = """
var st = document.createElement('style');
st.textContent = '* { line-height: 1.5 !important; letter-spacing: .12em !important; ' +
  'word-spacing: .16em !important; } p { margin-bottom: 2em !important; }';
document.head.appendChild(st);
return [[].filter.call(document.querySelectorAll('.card'), function (c) {
  return c.getClientRects().length && c.scrollHeight > c.clientHeight + 1;
}).map(function (c) { return c.getAttribute('aria-label'); }).slice(0, 5),
  document.documentElement.scrollWidth];
"""


@BROWSER
@pytest.mark.slow
@pytest.mark.parametrize("which", ["referee", "tiles"])
def test_a_readers_wider_text_spacing_cuts_no_cards_suit_or_tiles_letter(
        phone: Any, pages: dict[str, Path], which: str) -> None:
    _open(phone, pages[which], "#seq=120")
    cut, width = phone.execute_script(SPACING)
    # was: ['2 of clubs', '8 of clubs', ...]: a card's fixed height cut its suit in half
    assert (cut, width) == ([], 360)


@BROWSER
@pytest.mark.slow
def test_a_burako_page_offers_no_four_colours_box_that_changes_nothing(
        browser: Any, pages: dict[str, Path]) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    _open(browser, pages["tiles"])
    ActionChains(browser).send_keys(Keys.TAB).perform()
    # was: "four", a box whose tick recoloured nothing (tiles keep their own colours)
    assert browser.execute_script("return document.activeElement.id") == "first"
    assert not [n for n in _ax(browser) if n["role"] == "checkbox"]
    _open(browser, pages["referee"])
    ActionChains(browser).send_keys(Keys.TAB).perform()
    assert browser.execute_script("return document.activeElement.id") == "four"


@BROWSER
@pytest.mark.slow
def test_a_marked_line_of_the_move_list_is_said_marked_not_only_bordered(
        browser: Any, tmp_path: Path) -> None:
    from buraco_log.view import Mark

    page = tmp_path / "marked.html"
    write_page(page, build_page(load(SIM / "classic-2p-000000.blog")[:40],
                                marks={5: [Mark("finding", "a finding here")]}).html)
    _open(browser, page, "#seq=3")
    browser.execute_cdp_cmd("Accessibility.enable", {})
    try:
        nodes = browser.execute_cdp_cmd("Accessibility.getFullAXTree", {})["nodes"]
    finally:
        browser.execute_cdp_cmd("Accessibility.disable", {})
    by_id = {n["nodeId"]: n for n in nodes}
    said = {}
    for n in nodes:
        if n.get("role", {}).get("value") == "listitem":
            text = "".join(by_id[c].get("name", {}).get("value", "")
                           for c in n.get("childIds", []) if c in by_id)
            if m := re.search(r"seq (\d+):", text):
                said[int(m[1])] = text
    assert said[5].startswith("marked: seq 5: ")  # was: "seq 5: ...", as any other line
    assert said[4].startswith("seq 4: ") and said[6].startswith("seq 6: ")
