"""Fault probes of `view` (round 43): a 100,000-event page was 17.3 MB, 3.4 MB of it what the
page can rebuild itself: every diff's seq (its own index), every move line's "seq N: " and the
event tags (used only to mark the lines that start a hand, which ``hands`` names). Data layout
2 leaves them out; the page writes back the same lines, classes and frames."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from buraco_log.audit import load
from buraco_log.timeline import Timeline, describe_event
from buraco_log.view import PAGE_VERSION, build_page
from buraco_log.view.frames import Frames
from tests.view.pages import SIM, data_of, frames_of, moves_of

BROWSER = pytest.mark.xdist_group("browser")  # one Chromium, with tests/view/test_browser.py
LOG = SIM / "classic-3p-000000.blog"


@pytest.mark.parametrize("seat", [None, 1])
def test_the_data_holds_no_seq_the_page_can_rebuild(seat: int | None) -> None:
    events = load(LOG)
    data = data_of(build_page(events, seat=seat).html)
    assert data["v"] == PAGE_VERSION == 2 and "tags" not in data
    assert len(data["diffs"]) == len(events) > 100
    assert not [i for i, d in enumerate(data["diffs"]) if "s" in d]  # each held its index
    assert not [m for m in data["moves"] if m.startswith("seq ")]
    tl = Timeline(events)
    assert moves_of(data)[1:] == [describe_event(e, tl.players, tl.style, seat)
                                  for e in events][1:]  # seq 0 cuts long names: view39
    frames = Frames(tl, seat)
    assert frames_of(data) == [frames.frame_at(i) for i in range(len(events))]


def test_the_pages_data_is_a_sixth_smaller() -> None:
    """Bytes an event of a simulated match's data object (layout 1: 174 on this match, 144
    now)."""
    events = load(LOG)
    blob = build_page(events).html.split('id="bl-data">', 1)[1].split("</script>", 1)[0]
    assert len(blob.encode()) / len(events) < 150, len(blob.encode()) / len(events)


@BROWSER
def test_the_page_shows_each_line_with_its_seq_and_marks_the_deals(browser: Any,
                                                                   tmp_path: Path) -> None:
    events = load(LOG)
    tl = Timeline(events)
    page = tmp_path / "page.html"
    page.write_text(build_page(events).html)
    browser.get("about:blank")
    browser.get(page.as_uri() + "#seq=5")
    got = browser.execute_script("""
        var lis = document.querySelectorAll('#moves li[data-seq]'), out = [];
        for (var i = 0; i < lis.length; i++) {
          out.push([lis[i].textContent, lis[i].classList.contains('hs')]);
        }
        return {lines: out, event: document.getElementById('event').textContent,
                frame: window.buracoView.frame()};""")
    want = [describe_event(e, tl.players, tl.style) for e in events]
    assert [t for t, _ in got["lines"]][1:] == want[1:]
    deals = {seq for _hand, seq in Frames(tl).hand_starts}
    assert [i for i, (_t, hs) in enumerate(got["lines"]) if hs] == sorted(deals) != []
    assert got["event"] == want[5]
    assert got["frame"]["s"] == 5 and got["frame"] == Frames(tl).frame_at(5)
    for seq in (33, 64 + 7):  # a jump patches diffs from a snapshot: each sets its seq
        browser.execute_script(f"window.buracoView.go({seq})")
        assert browser.execute_script("return window.buracoView.frame()") == \
            Frames(tl).frame_at(seq)
