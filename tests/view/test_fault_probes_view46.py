"""Fault probes of `view` (round 46).

- The match start's line ("match ID started (RULES; NAME0, NAME1, ...)") put two right-to-left
  names side by side as one right-to-left run: seat 1's name was drawn before seat 0's, in
  the event line and in the move list. A right-to-left rules' name ran into the first name
  the same way, and the page's heading drew a right-to-left match id and rules' name rules
  first. Each name, the id and the rules' name are now isolated (<bdi>).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.view.pages import SIM, WORD_LEFT

BROWSER = pytest.mark.xdist_group("browser")  # one Chromium, with tests/view/test_browser.py


def _open(browser: Any, page: Path, fragment: str = "") -> None:
    browser.get("about:blank")
    browser.get_log("browser")  # what earlier pages said
    browser.get(page.as_uri() + fragment)



MATCH, RULES = "\u05de\u05e9\u05d7\u05e7", "\u05e7\u05dc\u05d0\u05e1\u05d9"  # Hebrew words
NAMES = ["\u05d0\u05d1\u05d9", "\u05d3\u05e0\u05d4", "Bob", "Eve"]  # seats 0 and 1 Hebrew


def _rtl_page(tmp_path: Path, seat: int | None = None) -> Path:
    import msgspec

    from buraco_log.audit import load
    from buraco_log.events import MatchStarted
    from buraco_log.view import build_page

    events = load(SIM / "classic-4p-000000.blog")
    start = events[0]
    assert isinstance(start, MatchStarted)
    events[0] = msgspec.structs.replace(
        start, match_id=MATCH, rules=msgspec.structs.replace(start.rules, name=RULES),
        players=tuple(msgspec.structs.replace(p, name=n)
                      for p, n in zip(start.players, NAMES, strict=True)))
    page = tmp_path / f"rtl{seat}.html"
    page.write_text(build_page(events, seat=seat).html)
    return page


@BROWSER
@pytest.mark.parametrize("seat", [None, 1])
def test_the_match_starts_line_draws_right_to_left_names_in_seat_order(
        browser: Any, tmp_path: Path, seat: int | None) -> None:
    _open(browser, _rtl_page(tmp_path, seat), "#seq=0")
    words = ["match", MATCH, "started", RULES, NAMES[0], NAMES[1], "Bob", "Eve"]
    for where in ("#event", '#moves li[data-seq="0"]'):
        assert browser.find_element("css selector", where).text.endswith(
            f"({RULES}; {', '.join(NAMES)})")  # the same words as replay's
        left = browser.execute_script(WORD_LEFT, where, words)
        assert None not in left and left == sorted(left), (where, left)
    head = browser.execute_script(WORD_LEFT, "#title", ["match", MATCH, RULES])
    assert None not in head and head == sorted(head), head  # the id, then the rules
    assert browser.get_log("browser") == []


def test_only_the_match_starts_line_is_given_in_pieces(tmp_path: Path) -> None:
    from tests.view.pages import data_of

    data = data_of(_rtl_page(tmp_path).read_bytes())
    assert list(data["parts"]) == ["0"]
    parts = data["parts"]["0"]
    assert "".join(parts) == data["moves"][0]
    assert parts[1::2] == [MATCH, RULES, *NAMES]


# -- back on the page: the controls the browser restores ---------------------------------------


@pytest.fixture(scope="module")
def mega(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from buraco_log.view import page_for_log, write_page

    out = tmp_path_factory.mktemp("mega") / "mega.html"
    write_page(out, page_for_log(SIM / "mega-4p-000000.blog").html)
    return out


_STATE = """
var v = window.buracoView;
return {seq: v.seq(), hash: location.hash, slider: +document.getElementById("slider").value,
        hand: +document.getElementById("handsel").value,
        ticked: document.getElementById("four").checked,
        four: document.body.classList.contains("four")};
"""


def _back(browser: Any) -> dict[str, Any]:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 10).until(lambda b: b.current_url == "about:blank")
    browser.back()
    WebDriverWait(browser, 10).until(
        lambda b: b.execute_script("return document.readyState") == "complete"
        and b.execute_script("return !!window.buracoView"))
    state: dict[str, Any] = browser.execute_script(_STATE)
    return state


@BROWSER
def test_back_on_the_page_the_four_colours_box_and_the_cards_agree(browser: Any,
                                                                  mega: Path) -> None:
    _open(browser, mega, "#seq=300")
    browser.find_element("id", "four").click()
    assert browser.execute_script(_STATE)["four"] is True
    browser.get("about:blank")
    state = _back(browser)
    assert state["ticked"] is True, state  # the browser gave the box back ticked
    assert state["four"] is True, state  # and the cards are drawn in four colours again


@BROWSER
def test_back_on_the_page_the_slider_menu_address_and_table_name_one_seq(
        browser: Any, mega: Path) -> None:
    """The reader drags the slider and leaves the page at once (a link, a bookmark): the
    address was still some steps behind (it follows every 120 ms), and back on the page the
    browser put the slider and the hand menu where they were, over the table of the address's
    older seq."""
    import json

    _open(browser, mega, "#seq=300")
    hands = json.loads(browser.execute_script(
        "return JSON.stringify(JSON.parse(document.getElementById('bl-data').textContent)"
        ".hands)"))
    browser.execute_script("""
        var v = window.buracoView, sl = document.getElementById("slider");
        v.go(301); v.go(302);
        sl.value = 900; sl.dispatchEvent(new Event("input"));
        location.href = "about:blank";""")
    state = _back(browser)
    deal = max(h[1] for h in hands if h[1] <= 900)
    assert state["slider"] == 900 and state["hand"] == deal, state
    assert (state["seq"], state["hash"]) == (900, "#seq=900"), state
    # whatever the browser gives back, the controls follow the table the page opens at (here
    # the address is changed under the page as it is left: no hashchange reaches it)
    browser.execute_script("""
        history.replaceState(null, "", "#seq=50");
        location.href = "about:blank";""")
    state = _back(browser)
    deal = max(h[1] for h in hands if h[1] <= 50)
    assert (state["seq"], state["hash"], state["slider"], state["hand"]) == (
        50, "#seq=50", 50, deal), state
