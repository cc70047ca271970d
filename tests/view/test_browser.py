"""The replay page in a real headless Chromium: keyboard stepping through every golden match
(referee and one seat) draws exactly the reducer's cards; fragment, slider, move list and hand
jumps land right; banners; 360 px; no network request. Step times are measured, not asserted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from buraco_log.audit import load
from buraco_log.timeline import Timeline, describe_event
from buraco_log.view import build_page, page_for_log, write_page
from buraco_log.view.frames import visible_text
from tests.view.pages import (
    GOLDEN,
    GREYED,
    SIM,
    expected_zones,
    greyed_wrongly,
    hidden_counts,
    step_times,
)

# Read every zone of the drawn table on each key press (registered after the page's own
# handler, so it sees the table the key produced).
RECORD = """
window.__rec = [];
window.__snap = function () {
  var z = {}, n = {};
  document.querySelectorAll('[data-zone]').forEach(function (e) {
    var name = e.getAttribute('data-zone');
    if (name.indexOf('melds-') === 0) { return; }
    if (e.hasAttribute('data-count')) { n[name] = +e.getAttribute('data-count'); return; }
    z[name] = [].map.call(e.querySelectorAll('[data-card]'),
                          function (c) { return +c.getAttribute('data-card'); });
  });
  return {seq: +document.body.getAttribute('data-seq'), zones: z, counts: n,
          stock: +document.getElementById('stock').getAttribute('data-stock'),
          event: document.getElementById('event').textContent,
          hash: location.hash};
};
document.addEventListener('keydown', function () { window.__rec.push(window.__snap()); });
"""


def _open(browser: Any, path: Path, fragment: str = "") -> None:
    browser.get(path.resolve().as_uri() + fragment)
    browser.get_log("performance")  # drop what came before


def _keys(browser: Any, keys: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(browser).send_keys(keys).perform()


def _check(snap: dict[str, Any], tl: Timeline, seat: int | None) -> None:
    seq = snap["seq"]
    s = tl.state_at(seq)
    want = expected_zones(s, seat)
    got = {k: (sorted(v) if k.startswith("meld-") else v) for k, v in snap["zones"].items()}
    assert got == want, f"seq {seq}"
    assert snap["counts"] == hidden_counts(s, seat), f"seq {seq}"
    assert snap["stock"] == len(s.stock)
    assert snap["event"] == visible_text(tl.events[seq], tl, seat)
    if seat is None:  # the referee reads the event in replay's words
        assert snap["event"] == describe_event(tl.events[seq], tl.players, tl.style)


def _hash_settles_on(browser: Any, seq: int) -> None:
    """The fragment follows the page (at most every 120 ms, so it may trail a fast sweep)."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 5).until(lambda b: b.execute_script("return location.hash")
                                    == f"#seq={seq}")


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_stepping_with_the_keyboard_draws_the_reducers_table_at_every_seq(
        browser: Any, path: Path, tmp_path: Path) -> None:
    from selenium.webdriver.common.keys import Keys

    tl = Timeline(load(path))
    for seat in (None, 1):
        page = tmp_path / f"{path.stem}-{seat}.html"
        write_page(page, build_page(tl.recorded, seat=seat).html)
        _open(browser, page)
        browser.execute_script(RECORD)
        _keys(browser, Keys.HOME + Keys.ARROW_RIGHT * tl.last_seq)
        rec = browser.execute_script("return window.__rec")
        assert [r["seq"] for r in rec] == list(range(tl.last_seq + 1))
        for snap in rec:
            _check(snap, tl, seat)
        _hash_settles_on(browser, tl.last_seq)
        # and back: Left steps down, End goes to the last seq
        browser.execute_script("window.__rec = []")
        _keys(browser, Keys.ARROW_LEFT * 3 + Keys.END)
        rec = browser.execute_script("return window.__rec")
        assert [r["seq"] for r in rec] == [tl.last_seq - 1, tl.last_seq - 2, tl.last_seq - 3,
                                           tl.last_seq]
        _check(rec[1], tl, seat)
        _hash_settles_on(browser, tl.last_seq)
        _no_network(browser)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["biriba-4p-000000.blog", "burako-2p-000000.blog",
                                  "classic-6p-000000.blog"])
def test_stepping_a_long_match_with_the_keyboard(browser: Any, name: str, tmp_path: Path
                                                 ) -> None:
    """The full sweep: simulated matches of hundreds of events, referee and seat 1."""
    from selenium.webdriver.common.keys import Keys

    tl = Timeline(load(SIM / name))
    for seat in (None, 1):
        page = tmp_path / f"{seat}.html"
        write_page(page, build_page(tl.recorded, seat=seat).html)
        _open(browser, page)
        browser.execute_script(RECORD)
        _keys(browser, Keys.HOME)
        for start in range(0, tl.last_seq, 100):  # keys in batches: one long chain stalls
            _keys(browser, Keys.ARROW_RIGHT * min(100, tl.last_seq - start))
        rec = browser.execute_script("return window.__rec")
        assert [r["seq"] for r in rec] == list(range(tl.last_seq + 1))
        for snap in rec:
            _check(snap, tl, seat)


def test_jumps_across_hands_draw_the_reducers_table(
        browser: Any, long_page: tuple[Path, Timeline]) -> None:
    """Jumps back and forth across hands reuse the drawn melds only where they still hold."""
    import random

    page, tl = long_page
    _open(browser, page, "#seq=0")
    browser.execute_script(RECORD)
    seqs = random.Random(15).sample(range(tl.last_seq + 1), 60)
    snaps = browser.execute_script(
        "return arguments[0].map(function (s) { window.buracoView.go(s); "
        "return window.__snap(); })", seqs)
    assert [s["seq"] for s in snaps] == seqs
    for snap in snaps:
        _check(snap, tl, None)


def _no_network(browser: Any) -> None:
    """Nothing but the page's own file was requested, and no resource was ever loaded."""
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    for entry in browser.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg["method"] == "Network.requestWillBeSent":
            url = msg["params"]["request"]["url"]
            assert url.startswith("file://"), url


@pytest.fixture(scope="module")
def long_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Timeline]:
    tl = Timeline(load(SIM / "biriba-4p-000000.blog"))
    page = tmp_path_factory.mktemp("view") / "biriba.html"
    write_page(page, build_page(tl.recorded).html)
    return page, tl


def _snap(browser: Any) -> dict[str, Any]:
    browser.execute_script(RECORD)
    out: dict[str, Any] = browser.execute_script("return window.__snap()")
    return out


def test_the_fragment_opens_that_seq_and_follows_each_step(
        browser: Any, long_page: tuple[Path, Timeline]) -> None:
    from selenium.webdriver.common.keys import Keys

    page, tl = long_page
    browser.get(page.resolve().as_uri() + "#seq=123")
    _check(_snap(browser), tl, None)
    assert _snap(browser)["seq"] == 123
    _keys(browser, Keys.ARROW_RIGHT)
    _hash_settles_on(browser, 124)
    browser.execute_script("location.hash = '#seq=40'")
    browser.execute_script("return 0")
    snap = _snap(browser)
    assert snap["seq"] == 40
    _check(snap, tl, None)


def test_the_address_bar_keeps_up_with_a_fast_sweep(
        browser: Any, long_page: tuple[Path, Timeline]) -> None:
    """Hundreds of steps a second (a held key) leave the browser's own URL at the last seq:
    the page writes the fragment at a rate the browser accepts."""
    from selenium.webdriver.support.ui import WebDriverWait

    page, tl = long_page
    _open(browser, page, "#seq=0")
    target = min(400, tl.last_seq)
    browser.execute_script(f"for (var i = 1; i <= {target}; i++) window.buracoView.go(i);")
    WebDriverWait(browser, 5).until(lambda b: b.current_url.endswith(f"#seq={target}"))


def test_the_slider_the_move_list_and_the_hand_menu_land_on_their_seq(
        browser: Any, long_page: tuple[Path, Timeline]) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    page, tl = long_page
    _open(browser, page, "#seq=0")
    slider = browser.find_element(By.ID, "slider")
    ActionChains(browser).click(slider).perform()  # the middle of the track
    snap = _snap(browser)
    assert abs(snap["seq"] - tl.last_seq / 2) <= max(2, tl.last_seq / 100)
    assert int(slider.get_attribute("value")) == snap["seq"]
    _check(snap, tl, None)

    item = browser.find_element(By.CSS_SELECTOR, "#moves li[data-seq='77']")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", item)
    item.click()
    snap = _snap(browser)
    assert snap["seq"] == 77
    _hash_settles_on(browser, 77)
    _check(snap, tl, None)

    hand, deal = max(tl.deals.items())
    Select(browser.find_element(By.ID, "handsel")).select_by_value(str(deal))
    snap = _snap(browser)
    assert snap["seq"] == deal and hand > 0
    _check(snap, tl, None)


def test_the_whole_pile_opens_on_a_click_and_four_colours_recolour_the_suits(
        browser: Any, long_page: tuple[Path, Timeline]) -> None:
    from selenium.webdriver.common.by import By

    page, tl = long_page
    seq = next(s for s in range(tl.last_seq) if len(tl.state_at(s).pile) >= 3)
    _open(browser, page, f"#seq={seq}")
    pile = browser.find_element(By.ID, "pile")
    assert not pile.is_displayed()
    browser.find_element(By.ID, "piletop").click()
    assert pile.is_displayed()
    shown = [int(c.get_attribute("data-card"))
             for c in pile.find_elements(By.CSS_SELECTOR, "[data-card]")]
    assert shown == list(tl.state_at(seq).pile)
    colour = "return getComputedStyle(document.querySelector('.card.s1')).color"
    browser.execute_script(f"window.buracoView.go({tl.last_seq})")
    before = browser.execute_script(colour)
    browser.find_element(By.ID, "four").click()
    assert browser.execute_script(colour) != before


def test_the_score_sheet_greys_the_hands_still_to_come(
        browser: Any, long_page: tuple[Path, Timeline]) -> None:
    from selenium.webdriver.common.by import By

    page, tl = long_page
    ends = [h.end_seq for h in tl.final.results]
    assert len(ends) >= 2
    _open(browser, page, f"#seq={ends[0]}")
    rows = browser.find_elements(By.CSS_SELECTOR, "#sheet tr[data-end]")
    assert len(rows) == len(ends) * tl.final.n_sides
    points = browser.find_elements(By.CSS_SELECTOR, ".chart circle[data-end]")
    assert len(points) == len(rows)
    got = browser.execute_script(GREYED)
    assert sum(where == "in" for _, where in got["rows"]) == (len(ends) - 1) * tl.final.n_sides
    assert greyed_wrongly(browser, ends[0]) == []
    for seq in (0, ends[1] - 1, ends[1], tl.last_seq, ends[0] + 1):  # back, forth, both ends
        browser.execute_script(f"window.buracoView.go({seq})")
        assert greyed_wrongly(browser, seq) == [], seq


def test_burako_is_drawn_as_tiles_with_their_colours_letter_not_a_suit_mark(
        browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    tl = Timeline(load(next(p for p in GOLDEN if p.stem == "burako")))
    page = tmp_path / "burako.html"
    write_page(page, build_page(tl.recorded).html)
    _open(browser, page, "#seq=1")
    assert "tiles" in (browser.find_element(By.TAG_NAME, "body").get_attribute("class") or "")
    card = browser.find_element(By.CSS_SELECTOR, "[data-zone='hand-0'] .card:not(.jk)")
    # a tile: a number in its colour, and the colour's letter under it as the text writes it
    # ("12r"), never a suit's symbol: its colour alone told nothing to a colour-blind player
    number, letter = card.text.split()
    assert number.isdigit() and letter == "ybrk"[int(card.get_attribute("data-card")) >> 4]


def test_marks_show_at_their_seq_and_flag_their_line(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    from buraco_log.view import Mark

    events = load(GOLDEN[0])
    page = tmp_path / "marked.html"
    write_page(page, build_page(events, marks={4: [Mark("mistake", "a <i>bad</i> move",
                                                        (21, 22, 23))]}).html)
    _open(browser, page, "#seq=4")
    mark = browser.find_element(By.CSS_SELECTOR, "#marks .mark-mistake")
    assert mark.text.startswith("a <i>bad</i> move")
    assert [int(c.get_attribute("data-card"))
            for c in mark.find_elements(By.CSS_SELECTOR, "[data-card]")] == [21, 22, 23]
    line = browser.find_element(By.CSS_SELECTOR, "#moves li[data-seq='4']")
    assert "mk-mistake" in (line.get_attribute("class") or "")
    browser.execute_script("window.buracoView.go(5)")
    assert browser.find_elements(By.CSS_SELECTOR, "#marks .mark") == []


def test_a_phone_wide_screen_needs_no_sideways_scrolling(
        browser: Any, long_page: tuple[Path, Timeline]) -> None:
    page, tl = long_page
    size = browser.get_window_size()
    try:
        browser.set_window_size(360, 800)
        _open(browser, page, f"#seq={tl.last_seq // 2}")
        width = browser.execute_script("return document.documentElement.scrollWidth")
        inner = browser.execute_script("return window.innerWidth")
        assert width <= inner
    finally:
        browser.set_window_size(size["width"], size["height"])


def test_an_illegal_log_opens_at_the_last_legal_table_with_a_banner(
        browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    from tests.brokenlogs import match, with_illegal_discard, write

    events, bad = with_illegal_discard(match("biriba", 4, seed=3))
    log = write(tmp_path / "bad.blog", events)
    page = tmp_path / "bad.html"
    write_page(page, page_for_log(log).html)
    _open(browser, page)
    banner = browser.find_element(By.CSS_SELECTOR, "#banners [data-kind='illegal']")
    assert banner.get_attribute("data-seq") == str(bad)
    assert banner.get_attribute("data-rule") in banner.text
    assert f"seq {bad}" in banner.text
    snap = _snap(browser)
    assert snap["seq"] == bad - 1
    _check(snap, Timeline(events), None)


def test_a_damaged_log_shows_its_intact_prefix_and_where_the_damage_is(
        browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    from tests.brokenlogs import match, segment_offsets, write

    events = match("biriba", 2, seed=5, max_hands=1)
    log = write(tmp_path / "damaged.blog", events, segment=8)
    offset, hsize, _ = segment_offsets(log)[3]
    data = bytearray(log.read_bytes())
    data[offset + hsize + 2] ^= 0xFF  # a flipped payload byte: the record's checksum fails
    log.write_bytes(bytes(data))
    page = tmp_path / "damaged.html"
    write_page(page, page_for_log(log).html)
    _open(browser, page)
    banner = browser.find_element(By.CSS_SELECTOR, "#banners [data-kind='damaged']")
    assert banner.get_attribute("data-offset") == str(offset)
    assert f"byte {offset}" in banner.text
    snap = _snap(browser)
    assert snap["seq"] == 3 * 8 - 1  # three whole records of 8 events
    _check(snap, Timeline(events[:24]), None)


def test_one_step_is_measured(browser: Any, long_page: tuple[Path, Timeline],
                              record_property: Any) -> None:
    """Every seq once forward, then 200 jumps, timed inside the page (reported, not
    asserted: the issue's bound is 16 ms; benchmarks/bench_view.py reports it too)."""
    page, tl = long_page
    _open(browser, page, "#seq=0")
    times = step_times(browser, jumps=200)
    steps, jumps = times[:tl.last_seq], times[tl.last_seq:]
    for label, part in (("step", sorted(steps)), ("jump", sorted(jumps))):
        median, p95 = part[len(part) // 2], part[int(len(part) * 0.95)]
        record_property(f"view_{label}_ms_median", median)
        record_property(f"view_{label}_ms_p95", p95)
        record_property(f"view_{label}_ms_max", part[-1])
        print(f"one {label}: median {median:.2f} ms, p95 {p95:.2f} ms, max {part[-1]:.2f} ms "
              f"over {len(part)}")
    assert len(steps) == tl.last_seq and len(jumps) == 200 and all(t >= 0 for t in times)


def test_the_example_screenshots_are_made_by_this_tooling(browser: Any, tmp_path: Path) -> None:
    from tests.view.screenshots import OUT, make_all

    size = browser.get_window_size()
    try:
        shots = make_all(browser, tmp_path)
    finally:
        browser.set_window_size(size["width"], size["height"])
    for png in shots:
        head = png.read_bytes()[:24]
        assert head[:8] == b"\x89PNG\r\n\x1a\n"
        assert (OUT / png.name).exists(), "remake with: python -m tests.view.screenshots"
