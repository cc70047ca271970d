"""Fault probes of `view` (round 45): accessibility, printing and the browser's console.

- The step buttons were named by their glyphs ("|◀", "▶") and the pile's button by the card
  drawn on it ("9 ♦"): a screen reader said nothing of what they do. Each control now has a
  name in words.
- The focus ring was the browser's own, a 1-pixel dark line on the dark green page (2.4:1):
  a keyboard user could not see where the focus was.
- Printed, the page kept its light text (grey on white once the printer leaves out the green
  background), the buttons and the slider, and the move list in its box cut at 60% of the
  screen's height.
  Burako's yellow tiles were 3:1 against the tile, and a seat's card backs, whose colour is
  a gradient alone, printed their white count on white.
- The page never said where a meld's wild stands ("2s as the 6", as `replay` says and the
  docs promised): it looked for the words in the wrong module. A sweep now reads the event
  line, the phase, the dealer, the turn, every hand, the pile, each meld (cards, kind,
  canastra class, wild) and opened/vulnerable from the page and holds them to the timeline.
- Two partners with right-to-left names were drawn in the side's heading as one
  right-to-left run, the second seat's name first: each name is now isolated (<bdi>).
- `view --ignore-integrity` did not exist ("No such option", exit 2): a referee could see
  past damage with `replay` but not on the page. It now shows every event that decodes,
  with a banner saying from which seq they are not vouched for, exit 1.
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
from buraco_log.view.frames import held
from tests.view.contrast import CONTRAST
from tests.view.pages import SIM, WORD_LEFT

BROWSER = pytest.mark.xdist_group("browser")  # one Chromium, with tests/view/test_browser.py
MEGA = SIM / "mega-4p-000000.blog"


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


PRINTED = [("mega-4p-000000", None, 900), ("burako-4p-000000", None, 60),
           ("classic-2p-000000", 1, 60)]


@BROWSER
@pytest.mark.parametrize(("name", "seat", "seq"), PRINTED)
def test_the_printed_page_is_dark_on_white_with_no_control_and_nothing_cut(
        browser: Any, tmp_path: Path, name: str, seat: int | None, seq: int) -> None:
    page = tmp_path / f"{name}.html"
    write_page(page, page_for_log(SIM / f"{name}.blog", seat=seat).html)
    size = browser.get_window_size()
    try:
        browser.set_window_size(794, 1123)  # A4 at 96 dpi
        _open(browser, page, f"#seq={seq}")
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
        assert got["pos"].startswith(f"seq {seq} / ")
        import base64

        pdf = base64.b64decode(browser.print_page())
        assert pdf.startswith(b"%PDF") and b"/Type /Page" in pdf
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
        browser.set_window_size(size["width"], size["height"])


def _others(tmp_path: Path) -> dict[str, Path]:
    """A seat's page of the largest preset, the pages of an illegal and a damaged log, and a
    review's page."""
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
    from buraco_log.audit import load
    from buraco_log.expert import Budget
    from buraco_log.review import review_events, review_page

    short = load(SIM / "thirteen-quick-2p-000000.blog")[:80]
    review = review_events(short, 1, budget=Budget(samples=2, candidates=3, rounds=1))
    pages["review"] = tmp_path / "review.html"
    write_page(pages["review"], review_page(short, review))
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


# -- the page against the timeline: the fields the round-44 sweep did not read ---------------

_TABLE = """
var seqs = arguments[0], out = [];
function codes(el) {
  return el ? Array.from(el.querySelectorAll('[data-card]'),
                         function (c) { return +c.getAttribute('data-card'); }) : null;
}
for (var i = 0; i < seqs.length; i++) {
  window.buracoView.go(seqs[i]);
  out.push({
    seq: +document.body.getAttribute('data-seq'),
    event: document.getElementById('event').textContent,
    status: document.getElementById('status').textContent,
    pile: codes(document.querySelector('#pile [data-zone="pile"]')),
    seats: Array.from(document.querySelectorAll('#seats [data-seat]'), function (s) {
      var hand = s.querySelector('[data-zone^="hand-"]');
      return {head: s.querySelector('h3').textContent, turn: s.classList.contains('turn'),
              cards: hand.hasAttribute('data-count') ? null : codes(hand),
              hidden: hand.hasAttribute('data-count') ? +hand.getAttribute('data-count') : null};
    }),
    sides: Array.from(document.querySelectorAll('#sides [data-side]'), function (s) {
      return {head: s.querySelector('h3').textContent,
              melds: Array.from(s.querySelectorAll('[data-meld]'), function (m) {
                return {id: +m.getAttribute('data-meld'), kind: m.getAttribute('data-kind'),
                        canastra: m.getAttribute('data-canastra') || null,
                        tag: m.querySelector('.tag').textContent, cards: codes(m)};
              })};
    })
  });
}
return out;
"""

# the page's words for a phase (PHASE in viewer.js): the timeline gives the reducer's name
_PHASE = {"new": "before the match", "between": "between hands", "draw": "draw", "play": "play",
          "emptied": "hand emptied", "out": "went out", "decided": "decided", "over": "over"}
_CLASS = {"clean": "clean", "semi_clean": "semi-clean", "dirty": "dirty", "royal": "royal",
          "ace_to_ace": "ace-to-ace"}


def _codes(text: tuple[str, ...] | None) -> list[int] | None:
    from buraco_log.cards import parse_card

    return None if text is None else [parse_card(c) for c in text]


def _table_mismatches(tl: Any, row: dict[str, Any], seat: int | None) -> list[Any]:
    """What the page shows at ``row["seq"]`` that the timeline's table does not say."""
    seq = row["seq"]
    v = tl.view(seq, seat=seat, recent=1)
    out: list[Any] = []

    def same(what: str, shown: Any, want: Any) -> None:
        if shown != want:
            out.append((seq, what, shown, want))

    same("event", row["event"], v.recent[-1])
    same("phase", re.search(r"\u00b7 phase (.*?) \u00b7", row["status"])[1],  # type: ignore[index]
         _PHASE[v.phase])
    same("pile", row["pile"], _codes(v.pile))
    for s, shown in zip(v.seats, row["seats"], strict=True):
        same(f"dealer {s.seat}", " \u00b7 dealer" in shown["head"], s.seat == v.dealer)
        same(f"turn {s.seat}", shown["turn"],
             s.seat == v.turn and v.phase not in ("over",))
        want = _codes(s.cards)  # the timeline's in the hand's order; the page's as held
        same(f"hand {s.seat}", shown["cards"], None if want is None else held(want))
        same(f"hidden {s.seat}", shown["hidden"], None if s.cards is not None else s.count)
    for sv, shown in zip(v.sides, row["sides"], strict=True):
        head = shown["head"]
        same(f"opened {sv.side}", " \u00b7 opened" in head, sv.opened)
        same(f"vulnerable {sv.side}", " \u00b7 vulnerable" in head, sv.vulnerable)
        same(f"melds {sv.side}", [(m["id"], m["kind"], m["canastra"], sorted(m["cards"]))
                                  for m in shown["melds"]],
             [(m.id, m.kind, m.canastra, sorted(_codes(m.cards) or []))
              for m in sv.melds])
        for m, page in zip(sv.melds, shown["melds"], strict=False):
            if m.canastra is not None:
                same(f"class {sv.side}/{m.id}", f"{_CLASS[m.canastra]} canastra" in page["tag"],
                     True)
            if m.wild is not None:
                same(f"wild {sv.side}/{m.id}", m.wild in page["tag"], True)
            elif m.canastra is None:
                same(f"clean {sv.side}/{m.id}", "clean" in page["tag"], True)
    return out


def _sweep(browser: Any, log: Path, tmp_path: Path, seat: int | None, k: int) -> int:
    from buraco_log.audit.integrity import read_log
    from buraco_log.timeline import Timeline

    events = read_log(log)[0]
    tl = Timeline(events)
    page = tmp_path / f"{log.parent.name}-{log.stem}-{seat}.html"
    write_page(page, page_for_log(log, seat=seat).html)
    import random

    seqs = sorted(random.Random(f"{log.name}/{seat}").sample(range(tl.last_seq + 1),
                                                             min(k, tl.last_seq + 1)))
    _open(browser, page)
    rows = browser.execute_script(_TABLE, seqs)
    bad = [x for row in rows for x in _table_mismatches(tl, row, seat)]
    assert [r["seq"] for r in rows] == seqs
    assert bad == [], (log.name, seat, bad[:5])
    return len(rows)


SWEPT = [(SIM / "mega-4p-000000.blog", None), (SIM / "mega-4p-000000.blog", 1),
         (SIM / "burako-4p-000000.blog", None), (SIM / "biriba-3p-000000.blog", 2)]


@BROWSER
@pytest.mark.parametrize(("log", "seat"), SWEPT, ids=lambda x: getattr(x, "stem", str(x)))
def test_the_page_shows_the_timelines_event_phase_dealer_cards_and_melds(
        browser: Any, tmp_path: Path, log: Path, seat: int | None) -> None:
    assert _sweep(browser, log, tmp_path, seat, 40) == 40


@pytest.mark.slow  # every example log, referee and one seat, 60 seqs each
@BROWSER
def test_every_example_page_shows_what_the_timeline_says_at_random_seqs(
        browser: Any, tmp_path: Path) -> None:
    from tests.view.example_logs import EXAMPLES

    checked = 0
    for log in EXAMPLES:
        for seat in (None, 0):
            checked += _sweep(browser, log, tmp_path, seat, 60)
    assert checked > 60 * len(EXAMPLES)


# -- right-to-left names ---------------------------------------------------------------------


@BROWSER
def test_partners_with_right_to_left_names_are_drawn_in_seat_order(browser: Any,
                                                                   tmp_path: Path) -> None:
    import msgspec

    from buraco_log.audit import load
    from buraco_log.events import MatchStarted
    from buraco_log.view import build_page

    events = load(SIM / "classic-4p-000000.blog")
    names = ["\u05d0\u05d1\u05d9", "Bob", "\u05d3\u05e0\u05d4", "Eve"]  # seats 0 and 2: side 0
    start = events[0]
    assert isinstance(start, MatchStarted)
    events[0] = msgspec.structs.replace(start, players=tuple(
        msgspec.structs.replace(p, name=n) for p, n in zip(start.players, names, strict=True)))
    page = tmp_path / "rtl.html"
    page.write_text(build_page(events).html)
    _open(browser, page, "#seq=40")
    head = browser.execute_script(WORD_LEFT, '#sides [data-side="0"] > h3',
                                  ["side 0", names[0], names[2], "score"])
    assert None not in head and head == sorted(head), head  # seat 0's name, then seat 2's
    assert browser.get_log("browser") == []


# -- a damaged log read anyway: view --ignore-integrity ---------------------------------------


def _checksum_flipped(tmp_path: Path) -> tuple[Path, list[Any], int]:
    """A 2-player biriba hand in records of 8 events, one bit of record 3's checksum flipped:
    its events still decode as written. The log, its events, and that record's byte offset."""
    from tests.brokenlogs import match, segment_offsets, write

    events = match("biriba", 2, seed=5, max_hands=1)
    log = write(tmp_path / "flipped.blog", events, segment=8)
    offset = segment_offsets(log)[3][0]
    data = bytearray(log.read_bytes())
    data[offset + 4] ^= 0x01  # the record's checksum (<length, crc32, first seq>)
    log.write_bytes(bytes(data))
    return log, events, offset


def test_view_ignore_integrity_shows_every_event_that_decodes_with_a_banner(
        tmp_path: Path) -> None:
    from buraco_log.errors import ReplayError
    from buraco_log.view.salvaged import page_anyway
    from tests.cli.probes import cli_batch
    from tests.view.pages import data_of

    log, events, offset = _checksum_flipped(tmp_path)
    strict, anyway = tmp_path / "strict.html", tmp_path / "anyway.html"
    done = cli_batch([["view", log, "-o", strict],
                      ["view", log, "--ignore-integrity", "-o", anyway, "--seat", 1]])
    assert done[0].returncode == 1 and len(data_of(strict.read_bytes())["diffs"]) == 24
    assert done[1].returncode == 1, done[1].stderr  # damage is a finding, read anyway or not
    data = data_of(anyway.read_bytes())
    assert len(data["diffs"]) == len(events) and data["start"] == len(events) - 1
    [banner] = data["banners"]
    assert (banner["kind"], banner["offset"], banner["seq"]) == ("damaged", offset, 24)
    assert f"byte {offset}" in banner["text"] and "--ignore-integrity" in banner["text"]
    assert f"the last {len(events) - 24} of them, from seq 24 on, are not vouched for" \
        in banner["text"]
    assert "Read anyway" in done[1].stderr and "Traceback" not in done[1].stderr
    # a seq past a changed log read whole to its end: one the log does not hold, as replay
    # --ignore-integrity says it (the damaged part holds no more events)
    with pytest.raises(ReplayError, match=rf"the log has no seq {len(events) + 5} "
                                          rf"\(seqs 0 to {len(events) - 1}\)"):
        page_anyway(log, at=len(events) + 5)
    # a log that passes its check: the same page with or without the option
    clean = SIM / "thirteen-quick-2p-000000.blog"
    assert page_anyway(clean, seat=0) == page_for_log(clean, seat=0)


# -- the largest preset's page: how soon it shows, how fast it steps --------------------------


@pytest.mark.slow  # 1,783 steps and 300 jumps: 5 s idle, 20 s on a loaded machine
@BROWSER
def test_the_largest_presets_page_shows_at_once_and_steps_within_a_frame(
        browser: Any, mega: Path, record_property: Any) -> None:
    """mega, 4 players (1,784 events): the first frame drawn after the page is loaded, and
    every step forward and 300 jumps timed inside the page. Bounds far above the figures
    (0.2-0.7 s to the first frame, a median step of 0.6-1 ms, a median jump of 4-14 ms with
    the machine's two cores shared by a dozen processes); the figures are reported."""
    from tests.view.pages import step_times

    _open(browser, mega)
    first = browser.execute_async_script("""
        var done = arguments[arguments.length - 1];
        requestAnimationFrame(function () { requestAnimationFrame(function () {
          done(performance.now()); }); });""")  # ms from the start of the navigation
    last = browser.execute_script("return window.buracoView.last")
    times = step_times(browser, jumps=300)
    steps, jumps = sorted(times[:last]), sorted(times[last:])
    med_step, med_jump = steps[len(steps) // 2], jumps[len(jumps) // 2]
    for name, value in (("first_frame_ms", first), ("step_ms_median", med_step),
                        ("step_ms_p95", steps[int(len(steps) * 0.95)]),
                        ("jump_ms_median", med_jump)):
        record_property(f"mega_{name}", round(value, 2))
    print(f"mega-4p: first frame {first:.0f} ms, step median {med_step:.2f} ms, "
          f"jump median {med_jump:.2f} ms")
    assert last == 1783 and len(jumps) == 300
    assert first < 5000 and med_step < 16 and med_jump < 50
