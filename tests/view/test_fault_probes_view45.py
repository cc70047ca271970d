"""Fault probes of `view` (round 45): accessibility, printing and the browser's console.

- The step buttons were named by their glyphs ("|◀", "▶") and the pile's button by the card
  drawn on it ("9 ♦"): a screen reader said nothing of what they do. Each control now has a
  name in words.
- The focus ring was the browser's own, a 1-pixel dark line on the dark green page (2.4:1):
  a keyboard user could not see where the focus was.
- Printed, the page kept its light text (grey on white once the printer leaves out the green
  background), the buttons and the slider, and the move list in its box cut at 60% of the
  screen's height.
- Held: the console stays empty (no error, no warning) for the largest preset's page opened
  from file:// and stepped from end to end with the keys, for a seat's page and for pages of
  an illegal and of a damaged log.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from buraco_log.view import page_for_log, write_page
from tests.view.pages import SIM

BROWSER = pytest.mark.xdist_group("browser")  # one Chromium, with tests/view/test_browser.py
MEGA = SIM / "mega-4p-000000.blog"

# WCAG's contrast ratio of two "rgb(a)" colours, and each element's colour against what is
# painted behind it: its ancestors' background colours, blended, over white. ``print``: a
# background is left out unless its element asks to print it exactly (a printer's default).
CONTRAST = r"""
var printing = arguments[0];
function rgba(s) {
  var m = /rgba?\(([^)]*)\)/.exec(s);
  if (!m) { return [0, 0, 0, 0]; }
  var p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number);
  return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
}
function over(top, under) {
  var a = top[3];
  return [top[0] * a + under[0] * (1 - a), top[1] * a + under[1] * (1 - a),
          top[2] * a + under[2] * (1 - a), 1];
}
function lum(c) {
  var v = c.slice(0, 3).map(function (x) {
    x /= 255; return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4);
  });
  return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2];
}
function ratio(a, b) {
  var x = lum(a), y = lum(b);
  return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
}
function behind(el) {
  var chain = [];
  for (var e = el; e && e.nodeType === 1; e = e.parentElement) { chain.push(e); }
  var bg = [255, 255, 255, 1];
  for (var i = chain.length - 1; i >= 0; i--) {
    var st = getComputedStyle(chain[i]);
    var exact = st.printColorAdjust === "exact" || st.webkitPrintColorAdjust === "exact";
    if (printing && !exact) { continue; }
    var c = rgba(st.backgroundColor);
    if (c[3] > 0) { bg = over(c, bg); }
  }
  return bg;
}
window.__contrast = {rgba: rgba, over: over, ratio: ratio, behind: behind};
var low = [];
var all = document.querySelectorAll("body *");
for (var i = 0; i < all.length; i++) {
  var el = all[i];
  var text = [].filter.call(el.childNodes, function (n) {
    return n.nodeType === 3 && n.textContent.trim();
  }).map(function (n) { return n.textContent.trim(); }).join(" ");
  if (!text || !el.getClientRects().length) { continue; }
  var st = getComputedStyle(el);
  if (st.visibility === "hidden") { continue; }
  var bg = behind(el);
  var fg = over(rgba(st.color), bg);
  var r = ratio(fg, bg);
  if (r < 4.5) { low.push([el.id || el.className || el.tagName, text.slice(0, 30), r]); }
}
return low;
"""


def _open(browser: Any, page: Path, fragment: str = "") -> None:
    browser.get("about:blank")
    browser.get_log("browser")  # what earlier pages said
    browser.get(page.as_uri() + fragment)


@pytest.fixture(scope="module")
def mega(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mega") / "mega.html"
    write_page(out, page_for_log(MEGA).html)
    return out


@BROWSER
def test_every_control_is_named_in_words_for_a_screen_reader(browser: Any, mega: Path) -> None:
    from selenium.webdriver.common.by import By

    _open(browser, mega, "#seq=40")
    names = {el.get_attribute("id"): el.accessible_name for el in
             browser.find_elements(By.CSS_SELECTOR, "button, input, select")}
    assert set(names) >= {"first", "prev", "next", "last", "slider", "handsel", "piletop",
                          "four"}
    wordless = {k: v for k, v in names.items() if not re.search(r"[a-z]{3}", v, re.I)}
    assert wordless == {}, wordless  # "|◀", "▶", "9 ♦"
    assert names["next"] == "Next event" and names["first"] == "First event"
    top = browser.execute_script("var p = window.buracoView.frame().p; return p[p.length - 1]")
    pile = browser.find_element(By.ID, "piletop")
    said = pile.accessible_name
    assert "show the whole pile" in said and "on top" in said, said
    rank, suit = top & 15, top >> 4
    assert ["clubs", "diamonds", "hearts", "spades"][suit] in said, (top, said)
    assert pile.get_attribute("aria-expanded") == "false"
    pile.click()
    assert pile.get_attribute("aria-expanded") == "true"
    assert browser.find_element(By.ID, "pile").is_displayed()
    pile.click()
    assert pile.get_attribute("aria-expanded") == "false"
    assert rank > 0


@BROWSER
def test_the_control_with_the_keyboards_focus_is_ringed_so_it_shows(browser: Any,
                                                                     mega: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    _open(browser, mega, "#seq=40")
    browser.execute_script(CONTRAST, False)  # defines the helpers
    seen = {}
    for _ in range(9):
        ActionChains(browser).send_keys(Keys.TAB).perform()
        got = browser.execute_script("""
            var e = document.activeElement, st = getComputedStyle(e), h = window.__contrast;
            var ring = h.rgba(st.outlineColor), bg = h.behind(e.parentElement);
            return [e.id || e.tagName, st.outlineStyle, parseFloat(st.outlineWidth),
                    h.ratio(h.over(ring, bg), bg), e.matches(':focus-visible')];""")
        seen[got[0]] = got[1:]
    assert {"first", "next", "last", "slider"} <= set(seen), seen
    faint = {k: v for k, v in seen.items()
             if v[3] and (v[0] in ("none", "auto") or v[1] < 2 or v[2] < 3)}
    assert faint == {}, faint  # 1 px, "auto", 2.4:1 on the green


@BROWSER
def test_the_printed_page_is_dark_on_white_with_no_control_and_nothing_cut(
        browser: Any, mega: Path) -> None:
    size = browser.get_window_size()
    try:
        browser.set_window_size(794, 1123)  # A4 at 96 dpi
        _open(browser, mega, "#seq=900")
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
        low = browser.execute_script(CONTRAST, True)
        assert low == [], low[:10]
        got = browser.execute_script("""
            var shown = function (id) {
              return document.getElementById(id).getClientRects().length > 0;
            };
            var cut = [].filter.call(document.querySelectorAll('body *'), function (e) {
              var st = getComputedStyle(e);
              return e.getClientRects().length && /auto|scroll|hidden/.test(st.overflowY) &&
                e.scrollHeight > e.clientHeight + 2;
            }).map(function (e) { return e.id || e.className || e.tagName; });
            return {controls: ['first', 'prev', 'next', 'last', 'slider', 'handsel', 'four']
                      .filter(shown),
                    kept: ['pos', 'event', 'status', 'table', 'sheet'].filter(shown),
                    cut: cut, pos: document.getElementById('pos').textContent,
                    wide: document.documentElement.scrollWidth - window.innerWidth};""")
        assert got["controls"] == [], got
        assert got["kept"] == ["pos", "event", "status", "table", "sheet"], got
        assert got["cut"] == [] and got["wide"] <= 0, got
        assert got["pos"].startswith("seq 900 / ")
        import base64

        pdf = base64.b64decode(browser.print_page())
        assert pdf.startswith(b"%PDF") and b"/Type /Page" in pdf
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
        browser.set_window_size(size["width"], size["height"])


def _others(tmp_path: Path) -> dict[str, Path]:
    """A seat's page of the largest preset, and the pages of an illegal and a damaged log."""
    from tests.brokenlogs import match, segment_offsets, with_illegal_discard, write

    pages = {}
    seat = tmp_path / "seat.html"
    write_page(seat, page_for_log(MEGA, seat=2).html)
    pages["seat"] = seat
    events, _ = with_illegal_discard(match("biriba", 4, seed=3))
    pages["illegal"] = tmp_path / "illegal.html"
    write_page(pages["illegal"], page_for_log(write(tmp_path / "bad.blog", events)).html)
    log = write(tmp_path / "damaged.blog", match("biriba", 2, seed=5, max_hands=1), segment=8)
    offset, hsize, _ = segment_offsets(log)[3]
    data = bytearray(log.read_bytes())
    data[offset + hsize + 2] ^= 0xFF
    log.write_bytes(bytes(data))
    pages["damaged"] = tmp_path / "damaged.html"
    write_page(pages["damaged"], page_for_log(log).html)
    return pages


@BROWSER
def test_the_console_stays_empty_from_file_and_from_end_to_end(browser: Any, mega: Path,
                                                                tmp_path: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    said = {}
    for name, page in {"mega": mega, **_others(tmp_path)}.items():
        _open(browser, page)
        assert page.as_uri().startswith("file://")
        keys = ActionChains(browser)
        for k in (Keys.HOME, Keys.LEFT, Keys.PAGE_UP, Keys.PAGE_DOWN, Keys.END, Keys.RIGHT,
                  Keys.PAGE_DOWN, Keys.HOME):
            keys.send_keys(k)
        keys.perform()
        assert browser.execute_script("return window.buracoView.seq()") == 0, name
        browser.execute_script("window.buracoView.go(window.buracoView.last)")
        said[name] = browser.get_log("browser")  # every level, not errors only
    assert said == {name: [] for name in said}
