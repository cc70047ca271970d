"""Fault probes of the replay page against the referee's tools (round 44).

- A morto taken indirectly and then voided (an opponent went out before its taker played
  again, RULES.md §7) was drawn "morto taken by seat 1" on the page, beside the score sheet's
  morto penalty, while `replay` says "morto voided (taken, but counts as not taken)". The
  frames now carry each side's morto state (``ms``, from the timeline's ``morto_states``) and
  the page says "morto voided" as replay does.
- Probe (slow): every example log's page opens without a script error; at 20 random seqs the
  page's scores, points on the table, hand sizes and morto lines, read from the DOM, equal the
  library's timeline; the keys past either end keep the page at that end.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest

from buraco_log.audit.integrity import read_log
from buraco_log.events import AnyEvent, HandStarted, MortoTaken
from buraco_log.reducer import Replayer
from buraco_log.timeline import TableView, Timeline, morto_states
from buraco_log.view import build_page, page_for_log
from tests.view.example_logs import EXAMPLES
from tests.view.pages import SIM, data_of, frames_of

BROWSER = pytest.mark.xdist_group("browser")  # one Chromium, with tests/view/test_browser.py
VOIDED = SIM / "biriba-3p-000000.blog"  # hand 2: side 1 (seat 1) takes its morto by a
# discard at seq 299, seat 2 goes out at 303 before seat 1 plays again; the hand ends at 304

# Everything the probe compares, read from the DOM at each seq the page is sent to.
_READ = """
var seqs = arguments[0], out = [];
function bare(el) {  // an element's own words, without the cards drawn inside it
  var c = el.cloneNode(true);
  c.querySelectorAll('.small, .cards').forEach(function (x) { x.remove(); });
  return c.textContent;
}
for (var i = 0; i < seqs.length; i++) {
  window.buracoView.go(seqs[i]);
  out.push({
    seq: +document.body.getAttribute('data-seq'),
    status: document.getElementById('status').textContent,
    stock: +document.getElementById('stock').getAttribute('data-stock'),
    pile: +document.getElementById('piletop').getAttribute('data-size'),
    seats: Array.from(document.querySelectorAll('#seats [data-seat] h3'),
                      function (h) { return h.textContent; }),
    sides: Array.from(document.querySelectorAll('#sides [data-side] > h3'),
                      function (h) { return h.textContent; }),
    morto: Array.from(document.querySelectorAll('[data-morto-side]'), function (m) {
      return {text: bare(m), state: m.getAttribute('data-state')}; })
  });
}
return out;
"""


def _open(browser: Any, page: Path, seq: int | None = None) -> None:
    browser.get("about:blank")
    browser.get_log("browser")  # what earlier pages said
    browser.get(page.as_uri() + ("" if seq is None else f"#seq={seq}"))


def _errors(browser: Any) -> list[Any]:
    return [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def _read(browser: Any, seqs: list[int]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = browser.execute_script(_READ, seqs)
    return out


def _takers(events: list[AnyEvent]) -> tuple[dict[int, dict[int, int]], list[int]]:
    """seq -> side -> the seat that took the side's morto this hand, after each event; and
    the seqs at which a morto is voided (too rare for 20 random seqs to meet)."""
    sides: dict[int, int] = {}
    rep = Replayer()
    out: dict[int, dict[int, int]] = {}
    now: dict[int, int] = {}
    voided = []
    for ev in events:
        rep.apply(ev)
        if isinstance(ev, HandStarted):
            now = {}
            sides = dict(enumerate(rep.state().sides))
        elif isinstance(ev, MortoTaken):
            now = {**now, sides[ev.seat]: ev.seat}
        out[ev.seq] = now
        if now and "voided" in morto_states(rep.state()):
            voided.append(ev.seq)
    return out, voided


def _morto_line(view: TableView, side: int, by: int | None, unit: str) -> str:
    """The morto's line the page must show, from the timeline (RULES.md §7)."""
    sv = view.sides[side]
    taker = "" if by is None else f" by seat {by} ({view.seats[by].name})"
    if sv.morto_state == "voided":
        return f"morto voided (taken{taker}, but counts as not taken)"
    if sv.morto_taken:
        return f"morto taken{taker}"
    if sv.morto:
        return f"morto: {sv.morto} {unit}{'' if sv.morto == 1 else 's'}, not taken"
    return "no morto"


# -- 1. the voided morto ---------------------------------------------------------------------


def test_the_page_data_carries_each_sides_morto_state_at_every_seq() -> None:
    events = read_log(VOIDED)[0]
    rep = Replayer()
    states = []
    for ev in events:
        rep.apply(ev)
        states.append(list(morto_states(rep.state())))
    for seat in (None, 1):
        frames = frames_of(data_of(build_page(events, seat=seat).html))
        assert [f["ms"] for f in frames] == states, seat
    assert states[303] == states[304] == ["waiting", "voided", "taken"]


@BROWSER
def test_a_voided_morto_is_drawn_voided_not_taken_as_replay_says(
        browser: Any, tmp_path: Path) -> None:
    events = read_log(VOIDED)[0]
    tl = Timeline(events)
    name = tl.players[1].name
    for seat in (None, 1):  # the referee's page and the taker's own
        page = tmp_path / f"voided-{seat}.html"
        page.write_text(build_page(events, seat=seat).html)
        _open(browser, page, 302)
        got = {r["seq"]: r["morto"][1] for r in _read(browser, [302, 303, 304, 305])}
        assert _errors(browser) == []
        assert got[302] == {"text": f"morto taken by seat 1 ({name})", "state": "taken"}
        for seq in (303, 304):  # a player went out; the hand ended
            assert got[seq] == {"state": "voided", "text":
                                f"morto voided (taken by seat 1 ({name}), but counts as not taken)"}
            assert tl.view(seq).sides[1].morto_state == "voided"
        assert got[305]["text"].endswith(", not taken")  # the next deal's morto


# -- 2. every example log against the timeline (slow) ----------------------------------------


def _expected(tl: Timeline, seq: int, takers: dict[int, int], unit: str) -> dict[str, Any]:
    v = tl.view(seq, recent=0)
    return {
        "counts": [s.count for s in v.seats],
        "scores": [(s.total, s.table_points) for s in v.sides],
        "morto": [_morto_line(v, s, takers.get(s), unit) for s in range(len(v.sides))],
        "state": [s.morto_state for s in v.sides],
        "table": (v.hand, v.turn, v.stock, len(v.pile)),
    }


def _shown(row: dict[str, Any], unit: str) -> dict[str, Any]:
    counts = [int(re.search(rf"\u00b7 side \d+ \u00b7 (\d+) {unit}s?\b", h)[1])  # type: ignore[index]
              for h in row["seats"]]
    heads = [tuple(map(int, re.search(r"score (-?\d+) \u00b7 on the table (-?\d+)", h).groups()))  # type: ignore[union-attr]
             for h in row["sides"]]
    status = [tuple(map(int, m)) for m in
              # a scored hand's table is said "(105 on the table, scored)", not "(+105 ...)"
              re.findall(r"side \d+: (-?\d+) \(\+?(-?\d+) on the table(?:, scored)?\)",
                         row["status"])]
    assert status == heads, row
    head = re.match(r"hand (-|\d+) \u00b7 phase .*? \u00b7 turn: seat (\d+) ", row["status"])
    assert head is not None, row["status"]
    hand = -1 if head[1] == "-" else int(head[1])
    return {"counts": counts, "scores": heads, "morto": [m["text"] for m in row["morto"]],
            "state": [m["state"] for m in row["morto"]],
            "table": (hand, int(head[2]), row["stock"], row["pile"])}


def _keys(browser: Any, keys: str) -> list[Any]:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(browser).send_keys(keys).perform()
    out: list[Any] = browser.execute_script(
        "return [window.buracoView.seq(), +document.body.getAttribute('data-seq'),"
        " document.getElementById('pos').textContent];")
    return out


@pytest.mark.slow  # a page load per example log (some 40), 20 seqs each
@BROWSER
def test_every_example_page_opens_and_agrees_with_the_timeline_at_random_seqs(
        browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.keys import Keys

    assert len(EXAMPLES) > 30
    checked = found = 0
    for log in EXAMPLES:
        events = read_log(log)[0]
        page = tmp_path / f"{log.parent.name}-{log.name}.html"
        page.write_text(page_for_log(log).html)
        tl = Timeline(events)
        last = tl.last_seq
        unit = "tile" if tl.style == "tiles" else "card"
        takers, voided = _takers(tl.events)
        seqs = random.Random(log.name).choices(range(last + 1), k=20) + voided
        found += len(voided)
        _open(browser, page)
        rows = _read(browser, seqs)
        assert _errors(browser) == [], log
        for seq, row in zip(seqs, rows, strict=True):
            assert row["seq"] == seq, log
            want = _expected(tl, seq, takers.get(seq, {}), unit)
            assert _shown(row, unit) == want, (log.name, seq)
            checked += 1
        end = [last, last, f"seq {last} / {last}"]
        start = [0, 0, f"seq 0 / {last}"]
        assert _keys(browser, Keys.END + Keys.ARROW_RIGHT * 2 + Keys.PAGE_DOWN) == end, log
        assert _keys(browser, Keys.ARROW_DOWN) == end, log
        assert _keys(browser, Keys.HOME + Keys.ARROW_LEFT * 2 + Keys.PAGE_UP) == start, log
        assert _keys(browser, Keys.ARROW_UP) == start, log
        assert _errors(browser) == [], log
    assert checked == 20 * len(EXAMPLES) + found and found > 0
