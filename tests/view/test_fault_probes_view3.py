"""Fault probes of `view` (third round): hostile text in every field of a log the page shows,
checked in the real browser (no script of the log runs, no element of it is made, no raw bidi
override is drawn), and an output that is a FIFO no program reads (it waited forever)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

import buraco_log.view as view
from buraco_log import events as ev
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match
from buraco_log.view import page_for_log, write_page
from cli.view_cmd import write_audit_page
from tests.brokenlogs import with_illegal_discard, with_wrong_score, write

# Each payload sets window.__pwned if it ever runs; the bidi override would reverse the text
# after it on screen.
HOSTILE = ('<img src=x onerror="window.__pwned=1">',
           "</script><script>window.__pwned=2</script>",
           '"><svg onload="window.__pwned=3"></svg>',
           "'-alert(4)-'\u202egnp.exe\x1b[2J",
           "<!--", "]]><iframe srcdoc='<script>parent.__pwned=5</script>'>")


def _hostile_events() -> list[ev.AnyEvent]:
    events = list(simulate_match(PRESETS["classic"], 2, seed="hostile-view", index=0))[:120]
    events, _ = with_illegal_discard(events)
    start = events[0]
    assert isinstance(start, ev.MatchStarted)
    events[0] = msgspec.structs.replace(
        start, match_id=HOSTILE[1] + HOSTILE[3],
        rules=msgspec.structs.replace(start.rules, name=HOSTILE[2]),
        players=(ev.Player(name=HOSTILE[0], id=HOSTILE[4]), ev.Player(name=HOSTILE[3],
                                                                      id=HOSTILE[5])),
        metadata={HOSTILE[0]: HOSTILE[1], "site": HOSTILE[5]})
    # a referee's note on every event
    return [msgspec.structs.replace(e, note=HOSTILE[i % len(HOSTILE)])
            for i, e in enumerate(events)]


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("hostile")
    log = write(d / "m.blog", _hostile_events())
    scored = write(d / "s.blog", with_wrong_score(
        list(simulate_match(PRESETS["classic"], 2, seed="hostile-score", index=0)))[0])
    out = {}
    for name, seat in (("referee", None), ("seat1", 1)):
        out[name] = d / f"{name}.html"
        write_page(out[name], page_for_log(log, seat=seat).html)

    class F(msgspec.Struct):  # an audit finding whose message quotes the log
        seq: int | None
        rule: str
        message: str

    out["audit"] = d / "audit.html"
    write_audit_page(out["audit"], log, [F(5, "x.y", HOSTILE[1] + HOSTILE[0] + HOSTILE[3])])
    out["score"] = d / "score.html"
    write_page(out["score"], page_for_log(scored).html)
    return out


BROWSER = pytest.mark.xdist_group("browser")  # one Chromium, with tests/view/test_browser.py


@BROWSER
@pytest.mark.parametrize("which", ["referee", "seat1", "audit", "score"])
def test_no_text_of_the_log_runs_or_makes_an_element(browser: Any, pages: dict[str, Path],
                                                     which: str) -> None:
    browser.get(pages[which].as_uri())
    found = browser.execute_script("""
        var step = document.querySelectorAll('#moves li');
        // walk the page through its events: every frame draws its names again
        for (var i = 0; i < step.length; i += 7) { step[i].click(); }
        var text = document.body.textContent + document.title;
        return {pwned: window.__pwned === undefined ? null : window.__pwned,
                bad: document.querySelectorAll('img, iframe, svg:not(.chart)').length,
                scripts: document.querySelectorAll('script').length,
                handlers: document.querySelectorAll('[onerror], [onload]').length,
                rlo: text.indexOf('\\u202e') >= 0, esc: text.indexOf('\\u001b') >= 0,
                shownName: text.indexOf('\\\\u202egnp.exe') >= 0 || text.indexOf('gnp.exe') < 0,
                moves: step.length};""")
    assert found["pwned"] is None
    assert found["bad"] == 0 and found["handlers"] == 0
    assert found["scripts"] == 2  # the page's data and its code
    assert not found["rlo"] and not found["esc"]  # shown as escapes, never drawn
    assert found["moves"] > 0 and found["shownName"]
    assert [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"] == []


@BROWSER
def test_the_hostile_names_are_drawn_as_text(browser: Any, pages: dict[str, Path]) -> None:
    browser.get(pages["referee"].as_uri())
    text = browser.execute_script("return document.body.textContent")
    assert HOSTILE[0] in text  # the name, as its characters
    assert "\\u202egnp.exe\\x1b[2J" in text


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "page.fifo"
    os.mkfifo(path)
    return path


def test_a_fifo_nobody_reads_is_refused_after_a_wait(fifo: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(view, "FIFO_WAIT", 0.3)
    done: list[BaseException | None] = []

    def attempt() -> None:
        try:
            write_page(fifo, "<p>page</p>")
            done.append(None)
        except BaseException as exc:  # reported to the test
            done.append(exc)

    t = threading.Thread(target=attempt, daemon=True)  # a plain open() blocks forever
    t.start()
    t.join(10)
    if t.is_alive():  # unblock the stuck writer so the test process can end
        with open(fifo, "rb"):
            pass
        pytest.fail("write_page waited forever on a FIFO that no program reads")
    assert isinstance(done[0], OSError) and str(fifo) in str(done[0])
    assert "no program opened for reading" in str(done[0])


def test_a_fifo_with_a_reader_gets_the_whole_page(fifo: Path) -> None:
    got: list[bytes] = []

    def read() -> None:
        time.sleep(0.2)  # the writer is already waiting
        with open(fifo, "rb") as f:
            got.append(f.read())

    t = threading.Thread(target=read, daemon=True)
    t.start()
    page = "<p>" + "x" * 200_000 + "</p>"  # more than a pipe holds
    write_page(fifo, page)
    t.join(10)
    assert got == [page.encode()]
    assert Path(fifo).is_fifo()
