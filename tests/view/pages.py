"""Test helpers for the replay page: read a page's data back from its bytes, and the cards each
zone of the table must show at a seq, straight from the reducer's state."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from buraco_log.cards import sort_key
from buraco_log.state import State
from buraco_log.view.frames import patch

GOLDEN = sorted((Path(__file__).parents[2] / "examples" / "golden").glob("*.jsonl"))
SIM = Path(__file__).parents[2] / "examples" / "sim"

_DATA = re.compile(r'<script type="application/json" id="bl-data">(.*?)</script>', re.S)


def data_of(page: str | bytes) -> dict[str, Any]:
    """The page's data object, decoded from the file's own bytes."""
    text = page.decode("utf-8") if isinstance(page, bytes) else page
    found = _DATA.findall(text)
    assert len(found) == 1, "a page holds exactly one data element"
    out: dict[str, Any] = json.loads(found[0])
    return out


def moves_of(data: dict[str, Any]) -> list[str]:
    """The move lines as the page shows them: each stored without its ``seq N: ``."""
    return [f"seq {i}: {line}" for i, line in enumerate(data["moves"])]


def frames_of(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every frame of a page, rebuilt from its snapshots and diffs as the script rebuilds them."""
    out = []
    every = data["every"]
    f: dict[str, Any] = {}
    for s, d in enumerate(data["diffs"]):
        f = data["snaps"][s // every] if s % every == 0 else patch(f, {"s": s, **d})
        out.append(f)
    return out


def expected_zones(s: State, seat: int | None) -> dict[str, list[int]]:
    """Zone -> card codes the page must draw at state ``s``: hands sorted as held, the pile
    bottom first, the mortos (referee only) and each meld (as a multiset: sorted codes)."""
    zones: dict[str, list[int]] = {}
    for i in range(len(s.players)):
        if seat is None or seat == i:
            zones[f"hand-{i}"] = sorted(s.hands[i], key=sort_key) if s.hands else []
    zones["pile"] = list(s.pile)
    for side in range(s.n_sides):
        for m in s.melds[side] if s.melds else ():
            zones[f"meld-{side}-{m.id}"] = sorted(m.cards)
        if seat is None and s.mortos and s.mortos[side]:
            zones[f"morto-{side}"] = sorted(s.mortos[side], key=sort_key)
    return zones


def hidden_counts(s: State, seat: int | None) -> dict[str, int]:
    """Zone -> count the page must show face down."""
    return {f"hand-{i}": len(s.hands[i]) if s.hands else 0
            for i in range(len(s.players)) if seat is not None and seat != i}


# One step as the page's own clock sees it: go() and the layout it leaves, forced at once.
_STEPS = """
var v = window.buracoView, out = [], t, from = arguments[0], to = arguments[1];
for (var i = from; i < to; i++) {
  var s = arguments[2] ? (i * 7919) % (v.last + 1) : i;
  t = performance.now(); v.go(s); document.body.offsetHeight;
  out.push(performance.now() - t);
}
return out;
"""


def step_times(driver: Any, chunk: int = 200, jumps: int | None = None) -> list[float]:
    """Milliseconds per step of the page open in ``driver``: every seq forward from 0, then
    ``jumps`` jumps across the match (default: as many as steps); in chunks, so no one script
    call runs for long."""
    last = int(driver.execute_script("return window.buracoView.last"))
    driver.execute_script("window.buracoView.go(0)")
    out: list[float] = []
    for jump, n in ((False, last), (True, last if jumps is None else jumps)):
        for a in range(1, n + 1, chunk):
            out += driver.execute_script(_STEPS, a, min(a + chunk, n + 1), jump)
    return out


# A jump as a reader makes one: the slider dragged (its input event), a line of the move list
# clicked, a hand picked from the menu (``seqs`` are then menu indexes), or go() as the
# buttons and keys call it. Timed as _STEPS times a step.
_JUMPS = """
var v = window.buracoView, seqs = arguments[0], how = arguments[1], out = [], t, s;
var slider = document.getElementById('slider'), menu = document.getElementById('handsel');
var items = document.querySelectorAll('#moves li[data-seq]');
for (var i = 0; i < seqs.length; i++) {
  s = seqs[i];
  t = performance.now();
  if (how === 'slider') { slider.value = s; slider.dispatchEvent(new Event('input')); }
  else if (how === 'list') { items[s].click(); }
  else if (how === 'hand') { menu.selectedIndex = s; menu.dispatchEvent(new Event('change')); }
  else { v.go(s); }
  document.body.offsetHeight;
  out.push(performance.now() - t);
}
return out;
"""

JUMP_KINDS = ("go", "slider", "list", "hand")


def jump_times(driver: Any, how: str, seqs: list[int], chunk: int = 50) -> list[float]:
    """Milliseconds per jump of the page open in ``driver`` to each of ``seqs`` (hand menu
    indexes for ``how="hand"``), made the way ``how`` names (one of :data:`JUMP_KINDS`)."""
    assert how in JUMP_KINDS, how
    out: list[float] = []
    for a in range(0, len(seqs), chunk):
        out += driver.execute_script(_JUMPS, seqs[a:a + chunk], how)
    return out


# Which rows of the score sheet and points of the chart the page greys: "in" under its veil,
# "out" clear of it, "partly" (a veil out of place) for each, with the hand's end seq.
GREYED = """
var veil = document.querySelector('#sheet .veil');
var v = veil && !veil.classList.contains('hidden') ? veil.getBoundingClientRect() : null;
var rows = [].map.call(document.querySelectorAll('#sheet tr[data-end]'), function (r) {
  var b = r.getBoundingClientRect();
  var where = !v || b.bottom <= v.top + 0.5 ? 'out'
    : b.top >= v.top - 0.5 && b.bottom <= v.bottom + 0.5 ? 'in' : 'partly';
  return [+r.getAttribute('data-end'), where];
});
var cv = document.querySelector('.chart .veil');  // none before a hand has ended
var x = cv ? +cv.getAttribute('x') : 0, w = cv ? +cv.getAttribute('width') : 0;
var points = [].map.call(document.querySelectorAll('.chart circle[data-end]'), function (c) {
  var cx = +c.getAttribute('cx'), r = +c.getAttribute('r');
  var where = w <= 0 || cx + r <= x ? 'out' : cx - r >= x && cx + r <= x + w ? 'in' : 'partly';
  return [+c.getAttribute('data-end'), where];
});
return {rows: rows, points: points};
"""


def greyed_wrongly(driver: Any, seq: int) -> list[Any]:
    """The rows and points of the page open in ``driver`` whose greying is wrong at ``seq``:
    a hand ended by ``seq`` must be clear, one still to come under the veil."""
    got = driver.execute_script(GREYED)
    return [(what, end, where) for what in ("rows", "points") for end, where in got[what]
            if where != ("in" if end > seq else "out")]


# A browser script: where each word is drawn, the left edge of its first occurrence in ``el``.
WORD_LEFT = """
var el = document.querySelector(arguments[0]), words = arguments[1];
return words.map(function (word) {
  var walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT), n;
  while ((n = walker.nextNode())) {
    var i = n.textContent.indexOf(word);
    if (i >= 0) {
      var r = document.createRange();
      r.setStart(n, i);
      r.setEnd(n, i + word.length);
      return r.getBoundingClientRect().left;
    }
  }
  return null;
});
"""


# A browser script: where each word of a plain text (a tab's title, a tooltip) is drawn when
# the text is laid out as the browser lays out such a line: its direction its first strong
# character's (unicode-bidi: plaintext, which skips what is isolated, as the Unicode bidi
# algorithm's P2 does). The left edge of each word's first occurrence, or null.
PLAIN_WORDS = """
var div = document.createElement('div');
div.style.cssText = 'unicode-bidi: plaintext; white-space: pre; position: absolute; top: 0';
div.textContent = arguments[0];
document.body.appendChild(div);
var n = div.firstChild;
var out = arguments[1].map(function (w) {
  var i = n.textContent.indexOf(w);
  if (i < 0) { return null; }
  var r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + w.length);
  return r.getBoundingClientRect().left;
});
div.remove();
return out;
"""


# Milliseconds from the start of the navigation to the first frame drawn after the page's
# script has drawn its first table (two animation frames on).
FIRST_FRAME = """
var done = arguments[arguments.length - 1];
requestAnimationFrame(function () { requestAnimationFrame(function () {
  done(performance.now()); }); });
"""


def first_frame(driver: Any, uri: str) -> float:
    """Milliseconds to the first frame of the page at ``uri`` (see :data:`FIRST_FRAME`)."""
    driver.get("about:blank")
    driver.get(uri)
    return float(driver.execute_async_script(FIRST_FRAME))
