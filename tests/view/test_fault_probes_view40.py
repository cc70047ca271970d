"""Fault probes of `view` (round 40): a name or match id cut inside a joined emoji, a flag, a
letter's accents or an escape such as `\\u2066` (the heading showed "\\u206…"); the frames
worked out from what changed (the page of a long match took 7-12 s to write) against whole
frames; hostile text (`</script>`, U+2028, a bidi override, NUL) in the names and the match
id; damaged and empty logs; `#seq=` fragments; the keys held against the first and last seq;
a match of one event."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from buraco_log.audit import load
from buraco_log.events import HandStarted, MortoTaken
from buraco_log.jsonl import event_to_json
from buraco_log.log import write_log
from buraco_log.reducer import Replayer
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match
from buraco_log.timeline import Timeline
from buraco_log.view import frames, page_for_log, write_page
from buraco_log.view.frames import Frames, cut, diff, referee_frame, seat_frame
from tests.cli.probes import one_error_line
from tests.view.pages import SIM, data_of

ROOT = Path(__file__).resolve().parents[2]
BROWSER = pytest.mark.xdist_group("browser")  # one Chromium, with tests/view/test_browser.py
FAMILY = "\U0001F468\u200d\U0001F469\u200d\U0001F467"  # man ZWJ woman ZWJ girl: 5 code points
FLAG = "\U0001F1E7\U0001F1F7"  # two regional indicators
THUMB = "\U0001F44D\U0001F3FD"  # a thumb and its skin tone
HEART = "\u2764\ufe0f"  # a heart and its emoji variation selector
E_ACUTE = "e\u0301\u0323"  # e and two combining marks
ENGLAND = "\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F"  # tag flag
HALF_ESCAPE = re.compile(r"\\(x[0-9a-f]?|u[0-9a-f]{0,3})\u2026")  # "\u206…"
EVIL = "</script><script>window.__pwned=1</script>\u2028\u202e\x00\u2066<!--"


# -- cutting at a boundary ----------------------------------------------------------------

@pytest.mark.parametrize(("text", "most", "want"), [
    ("a" * 44 + FAMILY * 2, 48, "a" * 44 + "\u2026"),  # the family did not fit: not split
    ("a" * 42 + FAMILY * 2, 48, "a" * 42 + FAMILY + "\u2026"),
    ("a" * 46 + FLAG * 2, 48, "a" * 46 + "\u2026"),  # not half a flag
    ("a" * 45 + FLAG * 2, 48, "a" * 45 + FLAG + "\u2026"),
    ("a" * 44 + FLAG * 3, 48, "a" * 44 + FLAG + "\u2026"),  # pairs counted from the first
    ("a" * 46 + THUMB * 2, 48, "a" * 46 + "\u2026"),  # not a thumb without its tone
    ("a" * 46 + HEART * 2, 48, "a" * 46 + "\u2026"),
    ("a" * 45 + E_ACUTE * 2, 48, "a" * 45 + "\u2026"),  # not an e without its accents
    ("a" * 42 + ENGLAND * 2, 48, "a" * 42 + "\u2026"),  # not a flag without its tags
    ("a" * 40 + ENGLAND * 2, 48, "a" * 40 + ENGLAND + "\u2026"),
    ("a" * 60 + "\\u2066" + "b" * 9, 64, "a" * 60 + "\u2026"),  # an escape kept whole
    ("a" * 61 + "\\x00" + "b" * 9, 64, "a" * 61 + "\u2026"),
    ("a" * 58 + "\\x00" + "b" * 9, 64, "a" * 58 + "\\x00" + "b" + "\u2026"),
    ("a" * 47 + "bc", 48, "a" * 47 + "\u2026"),  # plain text: cut where it always was
    ("a" * 48, 48, "a" * 48),  # short enough: whole
])
def test_a_cut_falls_between_what_is_seen_as_characters(text: str, most: int, want: str
                                                        ) -> None:
    assert cut(text, most) == want


def test_one_cluster_longer_than_the_limit_is_still_cut_at_the_limit() -> None:
    zalgo = "z" + "\u0301" * 100  # one letter and 100 accents: no boundary within the limit
    got = cut(zalgo, 48)
    assert got == zalgo[:47] + "\u2026"


def test_a_name_cut_in_the_move_lines_keeps_its_emoji_whole(tmp_path: Path) -> None:
    objs = [event_to_json(e) for e in simulate_match(PRESETS["classic"], 2, seed="v40")][:30]
    objs[0]["players"][1]["name"] = "b" * 44 + FAMILY * 3
    log = _jsonl(tmp_path / "fam.jsonl", objs)
    moves = data_of(page_for_log(log).html)["moves"]
    named = [m for m in moves if "b" * 44 in m]
    assert named and all("b" * 44 + "\u2026" in m and "\u200d" not in m for m in named), named


# -- frames from what changed, against whole frames -----------------------------------------

@pytest.mark.parametrize("name", ["biriba-4p-000000.blog", "classic-3p-000000.blog"])
def test_each_diff_is_the_diff_of_the_whole_frames(name: str) -> None:
    tl = Timeline(load(SIM / name))
    for seat in (None, *range(len(tl.players))):
        got = Frames(tl, seat, every=7)  # snapshots off the hands' starts
        prev: dict[str, Any] = {}
        morto_by: list[int | None] = []
        rep = Replayer()
        for ev in tl.events:
            rep.apply(ev)
            s = rep.state()
            if isinstance(ev, HandStarted):
                morto_by = [None] * s.n_sides
            elif isinstance(ev, MortoTaken) and s.sides:
                morto_by[s.sides[ev.seat]] = ev.seat
            made = (referee_frame(s, morto_by) if seat is None
                    else seat_frame(s, seat, morto_by))
            assert got.diffs[ev.seq] == diff(prev, made), (seat, ev.seq)
            assert list(got.diffs[ev.seq]) == list(diff(prev, made))  # in the same order
            if ev.seq % 7 == 0:
                assert got.snaps[ev.seq // 7] == made, (seat, ev.seq)
            prev = made


# -- hostile text, damaged and empty logs, on the command line ------------------------------

def _jsonl(path: Path, objs: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")
    return path


def _view(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", "view", *map(str, args)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, check=False,
                          env={**os.environ, "COLUMNS": "200"})


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    objs = [event_to_json(e) for e in simulate_match(PRESETS["classic"], 2, seed="v40")][:120]
    objs[0]["match_id"] = EVIL + "M" * 100
    objs[0]["players"][0]["name"] = EVIL
    objs[0]["players"][1]["name"] = "\u202e" + FAMILY * 20
    return _jsonl(tmp_path_factory.mktemp("v40") / "evil.jsonl", objs)


def test_hostile_text_leaves_no_raw_control_and_no_closing_tag_in_the_data(
        hostile: Path, tmp_path: Path) -> None:
    out = tmp_path / "evil.html"
    done = _view(hostile, "-o", out)
    assert done.returncode == 0, done.stderr
    html = out.read_text("utf-8")
    assert not any(c in html for c in "\u2028\u2029\u202e\u2066\x00")
    assert html.count("</script>") == html.count("<script")  # each closes its own element
    data = data_of(html)
    assert data["match"].startswith("</script>") and "\\u2028\\u202e\\x00" in data["match"]
    title = html[html.index("<title>"):html.index("</title>")]
    assert not HALF_ESCAPE.search(title), title  # an escape whole, or not at all


MARKERS = "/*@JS@*/ @CHART@ /*@CSS@*/ @DATA@ @TITLE@"  # the page template's


def test_the_templates_markers_in_a_match_id_or_name_are_text(tmp_path: Path) -> None:
    objs = [event_to_json(e) for e in simulate_match(PRESETS["classic"], 2, seed="v40")][:30]
    objs[0]["match_id"] = MARKERS
    objs[0]["players"][0]["name"] = MARKERS
    objs[0]["rules"]["name"] = MARKERS
    html = page_for_log(_jsonl(tmp_path / "mk.jsonl", objs)).html
    title = html[html.index("<title>") + 7:html.index("</title>")]
    assert title == f"&#x2068;{MARKERS}&#x2069; (&#x2068;{MARKERS}&#x2069;, referee) - buraco-log"
    # (it was the page's script)
    script = (Path(frames.__file__).parent / "template" / "viewer.js").read_text("utf-8")
    style = (Path(frames.__file__).parent / "template" / "viewer.css").read_text("utf-8")
    assert html.count(script) == 1 and html.count(style) == 1
    assert html.index(script) > html.index("</title>")
    assert data_of(html)["match"] == MARKERS


@pytest.mark.parametrize(("cut_at", "rule", "status"), [
    (300, "[log.torn]", 1),  # inside the first record
    (None, "[log.damage]", 1),  # a byte of the first record flipped
    (0, "[log.empty]", 2),  # an empty file: a match not started
])
def test_a_log_with_no_intact_event_is_one_line_and_no_page(
        tmp_path: Path, cut_at: int | None, rule: str, status: int) -> None:
    whole = tmp_path / "whole.blog"
    write_log(str(whole), list(simulate_match(PRESETS["classic"], 2, seed="v40"))[:50],
              sealed=False, validate=False)
    data = bytearray(whole.read_bytes())
    if cut_at is None:
        data[200] ^= 0xFF  # in the first record (the header is 20 bytes)
    else:
        data = data[:cut_at]
    log = tmp_path / "bad.blog"
    log.write_bytes(bytes(data))
    out = tmp_path / "out" / "p.html"
    out.parent.mkdir()
    line = one_error_line(_view(log, "-o", out), status)
    assert str(log) in line and rule in line, line
    assert cut_at == 0 or "byte 20" in line, line
    assert list(out.parent.iterdir()) == []


def test_a_jsonl_log_of_garbage_names_its_line_and_rule(tmp_path: Path) -> None:
    log = tmp_path / "g.jsonl"
    log.write_text('{"t": "ms", "seq": 0\n', encoding="utf-8")
    line = one_error_line(_view(log, "-o", tmp_path / "g.html"), 1)
    assert f"{log}, line 1" in line and "[log.jsonl]" in line, line
    assert not (tmp_path / "g.html").exists()


# -- in the browser -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def one_event(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A match of its start alone: a page of one seq and no hand."""
    obj = event_to_json(next(iter(simulate_match(PRESETS["classic"], 2, seed="v40"))))
    return _jsonl(tmp_path_factory.mktemp("one") / "one.jsonl", [obj])


def _hash_becomes(browser: Any, want: str) -> None:
    """The fragment follows the page at most every 120 ms (HASH_MS in viewer.js)."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 3, poll_frequency=0.02).until(
        lambda b: b.execute_script("return location.hash") == want, want)


def _severe(browser: Any) -> list[Any]:
    return [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]


@BROWSER
def test_hostile_text_runs_nothing_and_is_cut_as_the_move_lines_cut_it(
        browser: Any, hostile: Path, tmp_path: Path) -> None:
    page = tmp_path / "evil.html"
    write_page(page, page_for_log(hostile).html)
    browser.get(page.as_uri() + "#seq=0")
    got = browser.execute_script("""return {pwned: window.__pwned || null,
        title: document.getElementById('title').textContent,
        names: Array.from(document.querySelectorAll('#seats h3 .n')).map(e => e.textContent),
        tips: Array.from(document.querySelectorAll('#seats h3 .n')).map(e => e.title)};""")
    assert got["pwned"] is None and _severe(browser) == []
    assert not HALF_ESCAPE.search(got["title"]) and "\\x00" in got["title"], got["title"]
    want = "\\u202e" + cut("\u202e" + FAMILY * 20, frames.NAME_IN_MOVES)[1:]  # cut, then shown
    assert want == "\\u202e" + FAMILY * 9 + "\u2026"  # 46 code points, a family not split
    assert want in got["names"][1], (got["names"], want)
    assert got["tips"][1] == "\\u202e" + FAMILY * 20  # whole in the tooltip


@BROWSER
def test_the_pages_script_cuts_as_python_cuts(browser: Any) -> None:
    import random

    js = (Path(frames.__file__).parent / "template" / "viewer.js").read_text("utf-8")
    body = js[js.index("  var NAME_IN_MOVES"):js.index("  function name(")]  # cut and its rules
    pieces = ["a", "b", FAMILY, FLAG, FLAG[0], THUMB, HEART, E_ACUTE, ENGLAND, "\\u2066",
              "\\x1b", "\u200d", "\u0301", "\\", "u20", "\U0001F600"]
    rng = random.Random(40)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 40))) for _ in range(400)]
    most = [rng.choice([1, 2, 5, 8, 48, 64]) for _ in texts]
    got = browser.execute_script(
        body + "var M = arguments[1];\n"
        "return arguments[0].map(function (t, i) { return cut(t, M[i]); });", texts, most)
    assert got == [cut(t, m) for t, m in zip(texts, most, strict=True)]


@BROWSER
@pytest.mark.parametrize(("frag", "where"), [
    ("#seq=", "start"), ("#seq=99999999999999999999", "last"), ("#seq=%33", "start"),
    ("#seq=\uff13", "start"), ("#seq=3", 3), ("#seq=3#seq=4", "start"), ("#SEQ=3", "start")])
def test_a_fragment_opens_its_seq_or_the_page_where_it_opens(
        browser: Any, tmp_path: Path, frag: str, where: str | int) -> None:
    page = tmp_path / "frag.html"
    write_page(page, page_for_log(SIM / "classic-2p-000000.blog").html)
    browser.get("about:blank")
    browser.get(page.as_uri() + frag)
    last, seq = browser.execute_script("return [window.buracoView.last, "
                                       "window.buracoView.seq()]")
    want = {"start": last, "last": last}.get(str(where), where)  # the page opens at its last
    assert seq == want, (frag, seq)
    _hash_becomes(browser, f"#seq={want}")  # the address names the table shown
    assert _severe(browser) == []


@BROWSER
def test_the_keys_held_at_either_end_stay_there(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    page = tmp_path / "keys.html"
    write_page(page, page_for_log(SIM / "classic-2p-000000.blog").html)
    browser.get(page.as_uri() + "#seq=0")
    last = browser.execute_script("return window.buracoView.last")
    body = browser.find_element("tag name", "body")
    for key in (Keys.ARROW_LEFT, Keys.ARROW_UP, Keys.HOME, Keys.PAGE_UP):
        ActionChains(browser).send_keys_to_element(body, key).perform()
        assert browser.execute_script("return window.buracoView.seq()") == 0, key
    ActionChains(browser).send_keys_to_element(body, Keys.END).perform()
    for key in (Keys.ARROW_RIGHT, Keys.ARROW_DOWN, Keys.END, Keys.PAGE_DOWN):
        ActionChains(browser).send_keys_to_element(body, key).perform()
        assert browser.execute_script("return window.buracoView.seq()") == last, key
    _hash_becomes(browser, f"#seq={last}")
    assert _severe(browser) == []


@BROWSER
def test_a_match_of_one_event_is_a_page_of_one_seq(browser: Any, one_event: Path,
                                                   tmp_path: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    out = tmp_path / "one.html"
    done = _view(one_event, "-o", out)
    assert done.returncode == 0, done.stderr
    browser.get(out.as_uri())
    body = browser.find_element("tag name", "body")
    for key in (Keys.ARROW_RIGHT, Keys.PAGE_DOWN, Keys.END, Keys.ARROW_LEFT, Keys.PAGE_UP):
        ActionChains(browser).send_keys_to_element(body, key).perform()
        assert browser.execute_script("return [window.buracoView.last, "
                                      "window.buracoView.seq()]") == [0, 0], key
    assert "No hand has ended yet." in browser.find_element("id", "sheet").text
    assert _severe(browser) == []
