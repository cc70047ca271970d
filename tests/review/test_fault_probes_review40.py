"""Fault probes of `review` (round 40): the review panel's heading named a 20,000-character
match id whole (the viewer cuts it at 64 characters), and a cut could fall inside an escape
or a joined emoji; hostile text (`</script>`, U+2028, a bidi override, NUL) in a JSON Lines
log reviewed to a page; damaged and empty logs (one line, the exit status, nothing written)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from buraco_log import events as ev
from buraco_log.expert import Budget
from buraco_log.jsonl import event_to_json
from buraco_log.log import write_log
from buraco_log.review import review_events, review_page
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match
from tests.cli.probes import one_error_line

ROOT = Path(__file__).resolve().parents[2]
BROWSER = pytest.mark.xdist_group("browser")  # one Chromium, with the view's browser tests
FAMILY = "\U0001F468\u200d\U0001F469\u200d\U0001F467"  # man ZWJ woman ZWJ girl
HALF_ESCAPE = re.compile(r"\\(x[0-9a-f]?|u[0-9a-f]{0,3})\u2026")  # "\u206…"
EVIL = "</script><script>window.__pwned=1</script>\u2028\u202e\x00\u2066<!--"
BUDGET = Budget(samples=2, candidates=2, rounds=1)


def _events(n: int = 60) -> list[ev.AnyEvent]:
    return list(simulate_match(PRESETS["classic"], 2, seed="r40"))[:n]


def _review_data(page: str) -> dict[str, Any]:
    found = re.findall(r'<script type="application/json" id="bl-review">(.*?)</script>',
                       page, re.S)
    assert len(found) == 1
    data: dict[str, Any] = json.loads(found[0])
    return data


def _page(match_id: str, name: str) -> str:
    events = _events()
    start = events[0]
    assert isinstance(start, ev.MatchStarted)
    events[0] = msgspec.structs.replace(
        start, match_id=match_id, players=(ev.Player(name=name), *start.players[1:]))
    return review_page(events, review_events(events, 0, budget=BUDGET))


@pytest.fixture(scope="module")
def long_id() -> str:
    return _page("M" * 20_000, "b" * 44 + FAMILY * 3)


def test_the_heading_cuts_a_long_match_id_and_name_as_the_viewer_does(long_id: str) -> None:
    data = _review_data(long_id)
    assert "M" * 63 + "\u2026" in data["head"] and "M" * 64 not in data["head"]
    assert "b" * 44 + "\u2026" in data["head"] and "\u200d" not in data["head"]  # not split
    assert len(data["head"]) < 600, len(data["head"])  # was 20,000 and more
    assert "M" * 20_000 in data["whole"] and "b" * 44 + FAMILY * 3 in data["whole"]


def test_the_heading_never_shows_half_an_escape() -> None:
    data = _review_data(_page("a" * 60 + "\u2066" + "b" * 10, "c" * 46 + "\x1b[2J"))
    assert not HALF_ESCAPE.search(data["head"]), data["head"]
    assert "a" * 60 + "\u2026" in data["head"]  # "\u2066" did not fit whole: cut before it
    assert "c" * 46 + "\u2026" in data["head"]  # "\x1b" neither


@BROWSER
def test_the_heading_is_a_few_lines_tall_and_whole_in_its_tooltip(
        browser: Any, long_id: str, tmp_path: Path) -> None:
    path = tmp_path / "review.html"
    path.write_text(long_id, encoding="utf-8")
    browser.get(path.as_uri())
    got = browser.execute_script("""var h = document.querySelector('.rv-head');
        return {height: h.getBoundingClientRect().height, tip: h.title, text: h.textContent};""")
    assert got["height"] < 200, got["height"]  # tens of thousands of pixels with the id whole
    assert "M" * 20_000 in got["tip"] and "M" * 64 not in got["text"]
    assert [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"] == []


# -- on the command line ------------------------------------------------------------------

def _review(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", "review", *map(str, args)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, check=False,
                          env={**os.environ, "COLUMNS": "200"})


def test_hostile_text_in_a_jsonl_log_is_data_in_the_page(tmp_path: Path) -> None:
    objs = [event_to_json(e) for e in _events()]
    objs[0]["match_id"] = EVIL
    objs[0]["players"][0]["name"] = EVIL
    log = tmp_path / "evil.jsonl"
    log.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")
    out = tmp_path / "evil.html"
    done = _review(log, "--seat", "0", "--budget", "2x2r1", "--format", "html", "-o", out)
    assert done.returncode == 0, done.stderr
    html = out.read_text("utf-8")
    assert not any(c in html for c in "\u2028\u2029\u202e\u2066\x00")
    assert html.count("</script>") == html.count("<script") == 4  # each closes its own
    data = _review_data(html)
    assert "</script><script>window.__pwned=1</script>\\u2028\\u202e\\x00" in data["whole"]


@pytest.mark.parametrize(("damage", "status", "words"), [
    ("torn", 1, "byte 20"), ("flipped", 1, "byte 20"), ("empty", 2, "[log.empty]"),
    ("garbage", 1, "line 1")])
def test_a_log_with_no_intact_event_is_one_line_and_no_page(
        tmp_path: Path, damage: str, status: int, words: str) -> None:
    whole = tmp_path / "whole.blog"
    write_log(str(whole), _events(50), sealed=False, validate=False)
    data = bytearray(whole.read_bytes())
    log = tmp_path / ("bad.jsonl" if damage == "garbage" else "bad.blog")
    if damage == "torn":
        data = data[:300]  # inside the first record
    elif damage == "flipped":
        data[200] ^= 0xFF  # in the first record (the header is 20 bytes)
    elif damage == "empty":
        data = bytearray()
    else:
        data = bytearray(b'{"t": "ms", "seq": 0\n')
    log.write_bytes(bytes(data))
    out = tmp_path / "out" / "r.html"
    out.parent.mkdir()
    line = one_error_line(_review(log, "--seat", "0", "--budget", "2x2r1", "--format", "html",
                                  "-o", out), status)
    assert str(log) in line and words in line, line
    assert list(out.parent.iterdir()) == []


def test_a_partial_review_of_a_damaged_log_says_so_on_its_page(tmp_path: Path) -> None:
    from tests.view.pages import data_of

    lines = [json.dumps(event_to_json(e)) for e in _events(120)]
    lines[80] = "{garbage"
    log = tmp_path / "torn.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "r.html"
    done = _review(log, "--seat", "0", "--budget", "2x2r1", "--format", "html", "--partial",
                   "-o", out)
    assert done.returncode == 1, done.stderr  # written, and a finding
    banners = data_of(out.read_text("utf-8"))["banners"]  # it had none: the page looked whole
    assert [(b["kind"], b["seq"], b["rule"]) for b in banners] == [("damaged", 80, "log.jsonl")]
    assert "line 81" in banners[0]["text"] and "80 events read intact" in banners[0]["text"]
