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


def frames_of(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every frame of a page, rebuilt from its snapshots and diffs as the script rebuilds them."""
    out = []
    every = data["every"]
    f: dict[str, Any] = {}
    for s, d in enumerate(data["diffs"]):
        f = data["snaps"][s // every] if s % every == 0 else patch(f, d)
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
