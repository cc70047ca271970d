"""Fault probes of `view` (round 48): damage and a wrong recorded score, where they happen.

- A damaged log's page (the intact prefix, or every event read anyway with
  `--ignore-integrity`) said where the damage starts only in the banner at the top of the
  page: a referee stepping at the table saw nothing at the last event read whole. It is now
  marked there ("The log is damaged after seq 23 [log.damage]: ..."), its line flagged in
  the move list, on the referee's page and a seat's.
- A hand end whose recorded score the engine recomputes differently was named only in the
  banner: nothing at that hand's end. It is now marked there ("recorded 320, recomputed 220
  (+100) [score.mismatch]"), on a seat's page too (scores, which a seat sees on the score
  sheet; no card), where the banner had given the rule alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from buraco_log.audit import load
from buraco_log.events import HandEnded
from buraco_log.view import build_page, page_for_log, write_page
from buraco_log.view.salvaged import page_anyway
from tests.brokenlogs import match, segment_offsets, with_wrong_score, write
from tests.view.pages import SIM, data_of

BROWSER = pytest.mark.xdist_group("browser")  # one Chromium, with tests/view/test_browser.py


def _open(browser: Any, page: Path, seq: int) -> None:
    browser.get("about:blank")
    browser.get_log("browser")  # what earlier pages said
    browser.get(f"{page.as_uri()}#seq={seq}")


def _marked(browser: Any, kind: str, seq: int) -> str:
    """The text of the one mark of ``kind`` shown at ``seq``, its move line flagged."""
    from selenium.webdriver.common.by import By

    assert browser.execute_script("return window.buracoView.seq()") == seq
    [mark] = browser.find_elements(By.CSS_SELECTOR, f"#marks .mark-{kind}")  # was none
    assert mark.is_displayed()
    line = browser.find_element(By.CSS_SELECTOR, f'#moves li[data-seq="{seq}"]')
    assert f"mk-{kind}" in line.get_attribute("class").split()
    text: str = mark.text
    return text


def _no_mark_at(browser: Any, seq: int) -> None:
    from selenium.webdriver.common.by import By

    browser.execute_script("window.buracoView.go(arguments[0])", seq)
    assert browser.find_elements(By.CSS_SELECTOR, "#marks .mark") == []  # at its table only


def _flipped(tmp_path: Path) -> tuple[Path, int]:
    """A 2-player biriba hand in records of 8 events, one bit of record 3's checksum flipped
    (its events still decode): the log and the last seq read whole."""
    log = write(tmp_path / "flipped.blog", match("biriba", 2, seed=5, max_hands=1), segment=8)
    offset = segment_offsets(log)[3][0]
    data = bytearray(log.read_bytes())
    data[offset + 4] ^= 0x01  # the record's checksum (<length, crc32, first seq>)
    log.write_bytes(bytes(data))
    return log, 23


@BROWSER
@pytest.mark.parametrize(("anyway", "seat"), [(False, None), (True, 1)])
def test_where_the_damage_starts_shows_at_the_last_event_read_whole(
        browser: Any, tmp_path: Path, anyway: bool, seat: int | None) -> None:
    log, last = _flipped(tmp_path)
    built = (page_anyway if anyway else page_for_log)(log, seat=seat)
    [banner] = built.banners
    rule = banner.rule
    assert banner.kind == "damaged" and rule is not None and rule.startswith("log.")
    page = tmp_path / "damaged.html"
    write_page(page, built.html)
    _open(browser, page, last)
    text = _marked(browser, "damaged", last)
    assert f"The log is damaged after seq {last} [{rule}]" in text, text
    assert f"byte {banner.offset}" in text
    if anyway:  # the events past it are shown, and said not vouched for
        assert f"from seq {last + 1} on are read anyway" in text, text
        assert browser.execute_script("return window.buracoView.last") > last
    else:
        assert browser.execute_script("return window.buracoView.last") == last
    _no_mark_at(browser, last - 1)
    assert browser.get_log("browser") == []


@BROWSER
@pytest.mark.parametrize("seat", [None, 1])
def test_a_wrong_recorded_score_shows_at_its_hands_end(browser: Any, tmp_path: Path,
                                                       seat: int | None) -> None:
    played = load(SIM / "burako-2p-000000.blog")
    events, end = with_wrong_score(played, delta=100)
    recorded, right = events[end], played[end]
    assert isinstance(recorded, HandEnded) and isinstance(right, HandEnded)
    assert recorded.scores is not None and right.scores is not None
    page = tmp_path / "score.html"
    write_page(page, build_page(events, seat=seat).html)
    _open(browser, page, end)
    text = _marked(browser, "score", end)
    assert (f"side 0: recorded {recorded.scores[0]}, recomputed {right.scores[0]} (+100) "
            "[score.mismatch]") in text, text
    # a seat's banner says the same scores (it gave the rule alone), and no card
    [banner] = data_of(page.read_bytes())["banners"]
    assert f"recorded {recorded.scores[0]}, recomputed {right.scores[0]}" in banner["text"]
    _no_mark_at(browser, end - 1)
    assert browser.get_log("browser") == []
