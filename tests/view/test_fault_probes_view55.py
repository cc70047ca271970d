"""Fault probes of the page as a site serving players' matches meets them: hostile text in every
string a log carries (names, ids, the rules' name, metadata, seeds, notes), 10,000 characters
long, checked in Chromium; and the page's Content-Security-Policy, which must run the page's
own scripts and nothing else (its ``'unsafe-inline'`` also ran inline handlers and
``javascript:`` links, had any text of a log ever become markup)."""

from __future__ import annotations

import base64
import hashlib
import re
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

from buraco_log import events as ev
from buraco_log.expert import Budget
from buraco_log.review import review_events, review_page
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match
from buraco_log.view import page_for_log, write_page
from tests.brokenlogs import write
from tests.review.positions import bad_discard

# Each sets window.__pwned if it ever runs.
HOSTILE = ("</script><script>window.__pwned=1</script>",
           '<img src=x onerror="window.__pwned=2">',
           "javascript:window.__pwned=3",
           "{{constructor.constructor('window.__pwned=4')()}}",
           "a\u2028b\u2029c';window.__pwned=5;'",
           "\u202eexe.gnp")
LONG = '<b class="x55">' + "x" * 10_000 + "</b>"


def _hostile_events() -> list[ev.AnyEvent]:
    events = list(simulate_match(PRESETS["classic"], 2, seed="hostile-55", index=0))[:150]
    start = events[0]
    assert isinstance(start, ev.MatchStarted)
    events[0] = msgspec.structs.replace(
        start, match_id=HOSTILE[0] + LONG,
        rules=msgspec.structs.replace(start.rules, name=HOSTILE[3] + HOSTILE[5]),
        players=(ev.Player(name=HOSTILE[1] + LONG, id=HOSTILE[2]),
                 ev.Player(name=HOSTILE[4], id=LONG)),
        player_seeds=(HOSTILE[0], HOSTILE[2]), key_id=HOSTILE[1],
        metadata={HOSTILE[0]: HOSTILE[1], "site": HOSTILE[2], LONG: HOSTILE[3]})
    return [msgspec.structs.replace(e, note=HOSTILE[i % len(HOSTILE)] + (LONG if i == 3 else ""))
            for i, e in enumerate(events)]


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("hostile55")
    log = write(d / "m.blog", _hostile_events())
    out = {}
    for name, seat in (("referee", None), ("seat1", 1)):
        out[name] = d / f"{name}.html"
        write_page(out[name], page_for_log(log, seat=seat).html)
    events, _ = bad_discard()
    out["review"] = d / "review.html"
    out["review"].write_text(review_page(
        events, review_events(events, 0, budget=Budget(samples=2, candidates=3, rounds=1))),
        encoding="utf-8")
    return out


_CSP = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">')
_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)  # the page's code: no type attribute


def _script_src(html: str) -> list[str]:
    found = _CSP.findall(html)
    assert len(found) == 1
    directive = next(d.split() for d in found[0].split(";") if d.split()[:1] == ["script-src"])
    return directive[1:]


@pytest.mark.parametrize("which", ["referee", "seat1", "review"])
def test_the_policy_runs_the_pages_own_scripts_and_nothing_inline_else(
        pages: dict[str, Path], which: str) -> None:
    html = pages[which].read_text("utf-8")
    sources = _script_src(html)
    assert "'unsafe-inline'" not in sources and "'unsafe-hashes'" not in sources
    scripts = _SCRIPT.findall(html)
    assert len(scripts) == (2 if which == "review" else 1)
    for code in scripts:
        digest = base64.b64encode(hashlib.sha256(code.encode("utf-8")).digest()).decode()
        assert f"'sha256-{digest}'" in sources


BROWSER = pytest.mark.xdist_group("browser")  # one Chromium, with tests/view/test_browser.py

# Markup as an escaping fault would make it: an inline handler, a javascript: link clicked, a
# <script> element. Under the page's policy none of them runs.
_INJECT = """
var box = document.createElement('div');
box.innerHTML = '<img src="data:," onerror="window.__pwned=11">' +
  '<a id="jsurl" href="javascript:window.__pwned=12">x</a>' +
  '<svg><animate onbegin="window.__pwned=13" attributeName="x" dur="1s"/></svg>';
document.body.appendChild(box);
document.getElementById('jsurl').click();
var s = document.createElement('script'); s.textContent = 'window.__pwned=14';
document.body.appendChild(s);
"""


@BROWSER
@pytest.mark.slow
@pytest.mark.parametrize("which", ["referee", "seat1", "review"])
def test_no_hostile_text_runs_and_injected_markup_would_not_either(
        browser: Any, pages: dict[str, Path], which: str) -> None:
    browser.get("about:blank")
    browser.get_log("browser")  # drop what an earlier page left
    browser.get(pages[which].as_uri())
    found = browser.execute_script("""
        var v = window.buracoView;
        for (var i = 0; i <= v.last; i += 3) { v.go(i); }  // every frame draws its texts again
        v.go(v.last);
        return {pwned: window.__pwned === undefined ? null : window.__pwned,
                drawn: document.querySelectorAll('#moves li').length,
                made: document.querySelectorAll('img, iframe, a[href], .x55').length,
                review: !!document.getElementById('rv-now'),
                text: document.body.textContent};""")
    assert found["pwned"] is None and found["made"] == 0 and found["drawn"] > 0
    assert found["review"] == (which == "review")  # the review panel's script ran
    if which != "review":
        assert "</script><script>window.__pwned=1</script>" in found["text"]  # shown as text
        assert "\u202e" not in found["text"] and "\u2028" not in found["text"]
    assert [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"] == []
    browser.execute_script(_INJECT)
    time.sleep(0.3)  # the image's error, the animation's begin
    assert browser.execute_script("return window.__pwned === undefined ? null : window.__pwned") \
        is None
    refused = [e["message"] for e in browser.get_log("browser")
               if "Content Security Policy" in e.get("message", "")]
    assert refused  # the policy said no, not a quiet failure elsewhere
