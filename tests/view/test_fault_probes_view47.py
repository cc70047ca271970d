"""Fault probes of `view` (round 47): the tab's title, screen readers, and every preset.

- The tab's title ("ID (RULES, seat 1) - buraco-log") of a right-to-left match id was drawn as
  a right-to-left line: "buraco-log" first, the id last. The id and the rules' name are now
  isolated in it (FSI ... PDI), as the heading isolates them (<bdi>).
- A card had no name for a screen reader: its face, "Q" and a suit glyph, read as nothing or
  "Q, black heart suit". Each card is now one image named "queen of hearts" ("yellow 7" for a
  Burako tile, ", wild" for a meld's wild), and a hand face down "11 cards face down".
- A page stopped by a refused event said so only in its banner at the top of the page: at the
  last legal table, where the reader stands and the move list ends, nothing named the rule.
  The refusal is now marked there too (under the event, and on the line in the move list).
- Held, across every preset (Mega's 4 jokers, Burako's tiles, Biriba's mortos, 2 and 4
  players): every card of the material is drawn once, face up or counted (the stock), and
  the score line is the engine's.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from buraco_log.audit import load
from buraco_log.cards import deck
from buraco_log.timeline import Timeline
from buraco_log.view import build_page, write_page
from tests.brokenlogs import with_illegal_discard
from tests.view.pages import PLAIN_WORDS, SIM

BROWSER = pytest.mark.xdist_group("browser")  # one Chromium, with tests/view/test_browser.py


@cache
def _html(name: str, seat: int | None) -> str:
    """The page of a simulated match, built once for the tests that open it."""
    return build_page(load(SIM / f"{name}.blog"), seat=seat).html


def _open(browser: Any, page: Path, fragment: str = "") -> None:
    browser.get("about:blank")
    browser.get_log("browser")  # what earlier pages said
    browser.get(page.as_uri() + fragment)


# -- the tab's title ------------------------------------------------------------------------

MATCH, RULES = "\u05de\u05e9\u05d7\u05e7", "\u05e7\u05dc\u05d0\u05e1\u05d9"  # Hebrew words


@BROWSER
@pytest.mark.parametrize("seat", [None, 1])
def test_the_tabs_title_reads_id_rules_and_seat_in_order_for_a_right_to_left_id(
        browser: Any, tmp_path: Path, seat: int | None) -> None:
    import msgspec

    from buraco_log.events import MatchStarted

    events = load(SIM / "classic-4p-000000.blog")[:40]
    start = events[0]
    assert isinstance(start, MatchStarted)
    events[0] = msgspec.structs.replace(
        start, match_id=MATCH, rules=msgspec.structs.replace(start.rules, name=RULES))
    page = tmp_path / "rtl.html"
    write_page(page, build_page(events, seat=seat).html)
    _open(browser, page)
    who = "referee" if seat is None else f"seat {seat}"
    title = browser.title
    assert re.sub("[\u2066-\u2069]", "", title) == f"{MATCH} ({RULES}, {who}) - buraco-log"
    left = browser.execute_script(PLAIN_WORDS, title, [MATCH, RULES, who, "buraco-log"])
    assert None not in left and left == sorted(left), left  # was [196, 147, 94, 0]
    tip = browser.execute_script("return document.getElementById('title').title")
    assert re.sub("[\u2066-\u2069]", "", tip) == f"match {MATCH} \u00b7 {RULES}"
    assert browser.get_log("browser") == []


# -- cards for a screen reader ----------------------------------------------------------------

SUIT = ("clubs", "diamonds", "hearts", "spades")
RANK = ("", "ace", "2", "3", "4", "5", "6", "7", "8", "9", "10", "jack", "queen", "king")
TILE = ("yellow", "blue", "red", "black")  # cards._TILE_COLOURS, "ybrk"


def _said(code: int, tiles: bool) -> str:
    if code == 64:
        return "joker"
    s, r = code >> 4, code & 15
    return f"{TILE[s]} {r}" if tiles else f"{RANK[r]} of {SUIT[s]}"


@BROWSER
@pytest.mark.parametrize(("name", "seat"), [
    ("mega-4p-000000", None), pytest.param("burako-4p-000000", 1, marks=pytest.mark.slow)])
def test_each_card_is_named_by_its_rank_and_suit_for_a_screen_reader(
        browser: Any, tmp_path: Path, name: str, seat: int | None) -> None:
    from selenium.webdriver.common.by import By

    events = load(SIM / f"{name}.blog")
    tl = Timeline(events)
    seq = next(s for s in range(tl.last_seq, 0, -1)  # melds, one with a wild, still in play
               if (st := tl.state_at(s)).phase == "play"
               and any(c == 64 or c & 15 == 2 for side in st.melds for m in side
                       for c in m.cards))
    page = tmp_path / f"{name}.html"
    write_page(page, _html(name, seat))
    _open(browser, page, f"#seq={seq}")
    tiles = name.startswith("burako")
    held = browser.find_elements(By.CSS_SELECTOR, "#seats .card")[:2]
    melded = browser.find_elements(By.CSS_SELECTOR, "#sides .meld .card")[:2]
    assert held and len(melded) == 2
    shown = held + melded
    for el in shown:
        code = int(el.get_attribute("data-card"))
        want = _said(code, tiles) + (", wild" if "wild" in el.get_attribute("class") else "")
        assert (el.aria_role, el.accessible_name) == ("image", want), el.text  # was ""
    wild = browser.find_elements(By.CSS_SELECTOR, "#sides .card.wild")
    assert all(w.accessible_name.endswith(", wild") for w in wild[:2])
    if seat is not None:
        back = browser.find_element(By.CSS_SELECTOR, "#seats .back")
        count = int(back.text)
        tiles_ = "tile" if count == 1 else "tiles"
        assert back.accessible_name == f"{count} {tiles_} face down", back.accessible_name
    assert browser.get_log("browser") == []


# -- every preset: each card drawn once, the engine's score -----------------------------------

# The cards the page draws at its seq, by where: each hand (face up, or its backs' count), the
# melds, the whole pile (not the pile's button, which draws its top again), the mortos (the
# referee's), the stock's count; and the status line.
DRAWN = """
function codes(sel) {
  return [].map.call(document.querySelectorAll(sel),
                     function (c) { return +c.getAttribute('data-card'); });
}
var backs = [].map.call(document.querySelectorAll('#seats .back'),
                        function (b) { return +b.textContent; });
return {cards: codes('#seats .card').concat(codes('#sides .meld .card'), codes('#pile .card'),
                                            codes('#sides .morto .card')),
        pile: codes('#pile .card'), top: codes('#piletop .card'), backs: backs,
        stock: +document.getElementById('stock').textContent,
        status: document.getElementById('status').textContent, seq: window.buracoView.seq()};
"""
ALL_SIMS = sorted(p.stem for p in SIM.glob("*.blog"))
QUICK = ["mega-4p-000000", "burako-2p-000000", "biriba-4p-000000"]


def _seqs(tl: Timeline, n: int) -> list[int]:
    """``n`` seqs spread over the match, each in a hand's play (cards dealt, a stock)."""
    inside = [s for s in range(tl.last_seq + 1) if tl.state_at(s).phase in ("draw", "play")]
    return [inside[(len(inside) - 1) * i // (n - 1)] for i in range(n)]


def _drawn_as_the_engine_holds_them(browser: Any, tmp_path: Path, name: str, seat: int | None,
                                    n: int) -> None:
    events = load(SIM / f"{name}.blog")
    tl = Timeline(events)
    page = tmp_path / f"{name}.html"
    write_page(page, _html(name, seat))
    _open(browser, page)
    for seq in _seqs(tl, n):
        got = browser.execute_script(f"window.buracoView.go({seq});" + DRAWN)
        s = tl.state_at(seq)
        assert s.rules is not None and got["seq"] == seq
        material = Counter(deck(s.rules.jokers))
        held = [c for i, h in enumerate(s.hands) for c in h if seat in (None, i)]
        melded = [c for side in s.melds for m in side for c in m.cards]
        dead = [c for m in s.mortos for c in m] if seat is None else []
        engine = Counter(held + melded + list(s.pile) + dead)
        where = f"{name} seat {seat} seq {seq}"
        assert Counter(got["cards"]) == engine, where  # each card drawn once, where it is
        assert not Counter(got["cards"]) - material, where
        hidden = sum(got["backs"]) + (0 if seat is None else sum(len(m) for m in s.mortos))
        assert len(got["cards"]) + hidden + got["stock"] == sum(material.values()), where
        assert got["stock"] == len(s.stock) and got["pile"] == list(s.pile), where
        assert got["top"] == list(s.pile[-1:]), where
        points = s.rules.point_table()
        for side in range(s.n_sides):
            table = sum(points[c] for m in s.melds[side] for c in m.cards)
            total = s.totals[side] if s.totals else 0
            assert f"side {side}: {total} (+{table} on the table)" in got["status"], where
    assert browser.get_log("browser") == []


@BROWSER
@pytest.mark.parametrize("name", QUICK)
def test_every_card_is_drawn_once_and_the_score_is_the_engines(browser: Any, tmp_path: Path,
                                                                name: str) -> None:
    _drawn_as_the_engine_holds_them(browser, tmp_path, name, None, 3)


@BROWSER
@pytest.mark.slow
@pytest.mark.parametrize("seat", [None, 0, 1])
@pytest.mark.parametrize("name", ALL_SIMS)
def test_every_preset_draws_every_card_once_at_many_seqs(browser: Any, tmp_path: Path,
                                                         name: str, seat: int | None) -> None:
    _drawn_as_the_engine_holds_them(browser, tmp_path, name, seat, 12)


# -- a refused event: its rule where the page stops -------------------------------------------

@BROWSER
@pytest.mark.parametrize(("name", "seat"), [
    ("burako-2p-000000", 1), pytest.param("mega-4p-000000", None, marks=pytest.mark.slow)])
def test_the_refusals_rule_shows_at_the_last_legal_table(
        browser: Any, tmp_path: Path, name: str, seat: int | None) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    events, bad = with_illegal_discard(load(SIM / f"{name}.blog"))
    page = tmp_path / f"{name}.html"
    write_page(page, build_page(events, seat=seat).html)
    _open(browser, page, "#seq=0")
    rule = "discard.card_not_in_hand"
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.END)
    assert browser.execute_script("return window.buracoView.seq()") == bad - 1
    mark = browser.find_element(By.CSS_SELECTOR, "#marks .mark-refused")  # was no mark
    assert mark.is_displayed() and f"seq {bad} is refused [{rule}]" in mark.text, mark.text
    line = browser.find_element(By.CSS_SELECTOR, f'#moves li[data-seq="{bad - 1}"]')
    assert "mk-refused" in line.get_attribute("class").split()
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.HOME)
    assert browser.find_elements(By.CSS_SELECTOR, "#marks .mark") == []  # at its table only
    assert browser.get_log("browser") == []


# -- the keyboard, the zoom and the phone -----------------------------------------------------

@BROWSER
def test_tab_reaches_the_move_list_of_a_short_match_and_its_keys_step(browser: Any,
                                                                      tmp_path: Path) -> None:
    """The move list was reachable by Tab only when it was long enough to scroll: the browser
    makes a scrolling box focusable, not a list of twelve lines."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    page = tmp_path / "short.html"
    write_page(page, build_page(load(SIM / "classic-2p-000000.blog")[:12]).html)
    _open(browser, page, "#seq=5")
    reached = []
    for _ in range(12):
        ActionChains(browser).send_keys(Keys.TAB).perform()
        reached.append(browser.execute_script(
            "var e = document.activeElement; return e.id || e.tagName"))
        if reached[-1] == "moves":
            break
    assert reached[-1] == "moves", reached  # was: the pile's button, then back to the top
    ring = browser.execute_script("var s = getComputedStyle(document.activeElement);"
                                  "return [s.outlineStyle, parseFloat(s.outlineWidth)]")
    assert ring == ["solid", 3], ring
    ActionChains(browser).send_keys(Keys.ARROW_RIGHT).perform()
    assert browser.execute_script("return window.buracoView.seq()") == 6
    assert browser.find_element("id", "moves").accessible_name


# Every element wider than the window or cut by its own box (overflow hidden), and every
# animation or transition that would run.
CUT = """
var W = document.documentElement.clientWidth, out = [];
// the move list's lines are one box's content (it scrolls): the box itself is checked
document.querySelectorAll('body *:not(#moves *)').forEach(function (e) {
  var r = e.getBoundingClientRect(), st = getComputedStyle(e);
  if (r.width && (r.right > W + 0.5 || r.left < -0.5)) { out.push(['wide', e.id || e.className]); }
  if ((st.overflowX === 'hidden' || st.overflowY === 'hidden') && r.width &&
      (e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1)) {
    out.push(['cut', e.id || e.className, e.textContent.slice(0, 12)]);
  }
  if (parseFloat(st.transitionDuration) > 0 || parseFloat(st.animationDuration) > 0) {
    out.push(['moves', e.id || e.className]);
  }
});
return [W, document.documentElement.scrollWidth, out.slice(0, 10)];
"""


@BROWSER
@pytest.mark.parametrize(("width", "height", "scale"), [(320, 640, 1), (640, 360, 2)],
                         ids=["phone-320", "zoom-200"])
def test_a_phone_and_a_zoom_of_200_percent_cut_nothing_and_nothing_moves(
        browser: Any, tmp_path: Path, width: int, height: int, scale: int) -> None:
    """Held: 320 CSS pixels (WCAG's reflow width) and 1280 x 720 at 200% (640 x 360 CSS
    pixels at 2 device pixels each), with reduced motion asked for."""
    page = tmp_path / "mega.html"
    write_page(page, _html("mega-4p-000000", None))
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": scale, "mobile": False})
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {
        "features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})
    try:
        _open(browser, page, "#seq=1200")  # four hands of 15 and melds on both sides
        w, scroll, bad = browser.execute_script(CUT)
        assert (w, scroll, bad) == (width, width, []), bad
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


# A disputed move: legal under the option the table played (the log's rules), refused under
# the other. (log, option, the seq it makes illegal, the rule that refuses it)
DISPUTED = [("classic-2p-000000", "go_out_needs_canastra", 73, "go_out.needs_canastra"),
            pytest.param("biriba-4p-000000", "morto_needs_canastra", 67,
                         "morto.needs_canastra", marks=pytest.mark.slow),
            ("mega-2p-000000", "vulnerability", 140, "vulnerable.opening_too_low")]


@BROWSER
@pytest.mark.parametrize(("name", "option", "bad", "rule"), DISPUTED,
                         ids=["go_out_needs_canastra", "morto_needs_canastra", "vulnerability"])
def test_a_disputed_move_is_shown_under_its_option_and_refused_with_its_rule_under_the_other(
        browser: Any, tmp_path: Path, name: str, option: str, bad: int, rule: str) -> None:
    import msgspec
    from selenium.webdriver.common.by import By

    from buraco_log.events import MatchStarted

    played = load(SIM / f"{name}.blog")[:bad + 6]
    start = played[0]
    assert isinstance(start, MatchStarted)
    other = msgspec.structs.replace(start.rules, **{option: not getattr(start.rules, option)})
    strict = [msgspec.structs.replace(start, rules=other), *played[1:]]
    for events, refused in ((played, False), (strict, True)):
        page = tmp_path / f"{option}-{refused}.html"
        write_page(page, build_page(events).html)
        _open(browser, page, f"#seq={bad}")
        shown = browser.execute_script("return window.buracoView.seq()")
        marks = browser.find_elements(By.CSS_SELECTOR, "#marks .mark-refused")
        banners = browser.find_elements(By.CSS_SELECTOR, "#banners [data-kind=illegal]")
        if not refused:  # the move played, a table like any other
            assert (shown, marks, banners) == (bad, [], []), shown
            continue
        assert shown == bad - 1  # the last legal table
        (mark,) = marks
        assert mark.is_displayed() and f"seq {bad} is refused [{rule}]" in mark.text, mark.text
        (banner,) = banners
        assert banner.get_attribute("data-rule") == rule
    assert browser.get_log("browser") == []
