"""Fault probes of `view` (round 41): an output named as a directory (`-o out/`, `-o out/.`)
was written as the file `out`, over a file of that name; and the page in a browser for tables
no simulated match shows: 50-card hands, tiles with 40-tile hands, a log that stops in the
middle of a hand, and a log that stops right after a deal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from buraco_log import events as ev
from buraco_log.log import write_log
from buraco_log.rules import derive
from buraco_log.simulate import simulate_match
from buraco_log.view import page_for_log, write_page
from tests.cli.probes import cli, one_error_line

ROOT = Path(__file__).resolve().parents[2]
BROWSER = pytest.mark.xdist_group("browser")  # one Chromium, with tests/view/test_browser.py
GOLDEN = ROOT / "examples" / "golden" / "burako.jsonl"


def test_an_output_named_as_a_directory_is_refused_and_nothing_is_written(
        tmp_path: Path) -> None:
    (tmp_path / "file").write_text("keep me", "utf-8")
    for name in ("out/", "file/."):
        done = cli("view", GOLDEN, "-o", name, cwd=tmp_path)
        line = one_error_line(done, 2)
        assert line.startswith(f"buraco-log: error: {name}: is a directory's name"), line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]  # no file "out"
    assert (tmp_path / "file").read_text("utf-8") == "keep me"  # it was replaced by the page


def _odd_tables(box: Path) -> dict[str, Path]:
    out = {}
    for preset, size in (("classic", 50), ("burako", 40)):
        rules = derive(preset, hand_size=size, name=f"{preset}-{size}", player_counts=(2,))
        out[f"{preset}-{size}"] = list(simulate_match(rules, 2, seed="v41"))
    four = list(simulate_match(derive("burako", name="burako"), 4, seed="v41"))
    deals = [i for i, e in enumerate(four) if isinstance(e, ev.HandStarted)]
    out["mid-hand"] = four[:deals[0] + 7]
    out["after-deal"] = four[:deals[1] + 1]
    paths = {}
    for name, events in out.items():
        paths[name] = box / f"{name}.blog"
        write_log(paths[name], events)
    return paths


@BROWSER
@pytest.mark.slow  # four tables, two pages each, stepped through every seq: ~10 s
def test_odd_tables_fit_a_phone_and_step_to_both_ends_without_an_error(
        browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    size = browser.get_window_size()
    browser.set_window_size(360, 800)  # Chromium keeps a window at least 500 wide
    try:
        for name, log in _odd_tables(tmp_path).items():
            for seat in (None, 1):
                _step_through(browser, ActionChains, Keys, tmp_path, name, log, seat)
    finally:
        browser.set_window_size(size["width"], size["height"])


def _step_through(browser: Any, chains: Any, keys: Any, box: Path, name: str, log: Path,
                  seat: int | None) -> None:
    """Every seq at the window's width (no side scroll), then the slider's keys at both ends;
    no error in the browser's log."""
    page = box / f"{name}-{seat}.html"
    write_page(page, page_for_log(log, seat=seat).html)
    browser.get("about:blank")
    browser.get(page.as_uri() + "#seq=0")
    got = browser.execute_script("""
      var v = window.buracoView, wide = [], sl = document.querySelector('input[type=range]');
      for (var i = 0; i <= v.last; i++) {
        v.go(i);
        if (document.documentElement.scrollWidth > window.innerWidth) wide.push(i);
      }
      return {last: v.last, max: +sl.max, wide: wide.slice(0, 5)};""")
    assert got["wide"] == [] and got["max"] == got["last"], (name, seat, got)
    browser.execute_script("document.querySelector('input[type=range]').focus()")
    for key, want in ((keys.END, got["last"]), (keys.ARROW_RIGHT, got["last"]),
                      (keys.PAGE_DOWN, got["last"]), (keys.HOME, 0), (keys.ARROW_LEFT, 0),
                      (keys.PAGE_UP, 0)):
        chains(browser).send_keys(key).perform()
        seq = browser.execute_script("return window.buracoView.seq()")
        assert seq == want, (name, seat, key, seq)
    severe = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert severe == [], (name, seat, severe)
