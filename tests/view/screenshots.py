"""The two example screenshots in examples/screenshots, made with the browser tests' tooling.

    python -m tests.view.screenshots        # remakes examples/screenshots/*.png

``test_browser.py`` makes the same two pictures in a temporary directory on every run, so the
commands and pages behind them keep working.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from buraco_log.audit import load
from buraco_log.timeline import Timeline
from buraco_log.view import build_page, write_page
from tests.view.pages import SIM

OUT = Path(__file__).parents[2] / "examples" / "screenshots"
LOG = SIM / "biriba-4p-000000.blog"


def referee_mid_hand(tl: Timeline) -> int:
    """A seq in the middle of the second hand (or the first, if only one)."""
    hand = 1 if 1 in tl.deals else 0
    start = tl.deals[hand]
    end = tl.deals.get(hand + 1, tl.last_seq)
    return (start + end) // 2


def seat_with_canastra(tl: Timeline, seat: int) -> int:
    """The first seq at which ``seat``'s side has a canastra on the table, a few moves on."""
    for seq in range(tl.last_seq + 1):
        s = tl.state_at(seq)
        if s.melds and any(m.canastra for m in s.melds[s.sides[seat]]):
            return min(seq + 2, tl.last_seq)
    raise AssertionError(f"seat {seat}'s side never makes a canastra in {LOG.name}")


def shoot(driver: Any, page: Path, seq: int, png: Path, width: int, height: int) -> None:
    driver.set_window_size(width, height)
    driver.get(page.resolve().as_uri() + f"#seq={seq}")
    assert driver.execute_script("return +document.body.getAttribute('data-seq')") == seq
    driver.save_screenshot(str(png))


def make_all(driver: Any, out: Path) -> list[Path]:
    """Write both screenshots into ``out``; return their paths."""
    tl = Timeline(load(LOG))
    out.mkdir(parents=True, exist_ok=True)
    referee, seat = out / "referee.html", out / "seat.html"
    write_page(referee, build_page(tl.recorded).html)
    write_page(seat, build_page(tl.recorded, seat=0).html)
    shots = [out / "referee-mid-hand.png", out / "seat-0-with-canastra.png"]
    shoot(driver, referee, referee_mid_hand(tl), shots[0], 1200, 1000)
    shoot(driver, seat, seat_with_canastra(tl, 0), shots[1], 420, 1100)
    referee.unlink()
    seat.unlink()
    return shots


if __name__ == "__main__":
    from tests.view.conftest import make_driver

    d = make_driver()
    try:
        for p in make_all(d, OUT):
            print(p)
    finally:
        d.quit()
