"""Benchmark of a long match's replay page: its bytes per part, and its load time in Chromium.

    python benchmarks/bench_view_load.py                  # the 100,000-event match
    python benchmarks/bench_view_load.py --events 3000    # quicker
    python benchmarks/bench_view_load.py --no-browser     # sizes only

The match is bench_view.py's (simulated once, cached in --cache). Printed: the page's bytes,
the bytes of each part of its data object (as written, JSON), and, in the browser tests'
headless Chromium, the median over --repeat loads of the time from navigation start to the
load event's end (the page's script parses the data and draws the table before it), and of
the first step after it, as ratios to a page of the same match cut to its first 1,000 events
(the baseline, loaded in the same browser and run).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # its sibling, as mypy names it

from bench_view import long_match

from buraco_log.timeline import Timeline
from buraco_log.view import build_page
from buraco_log.view.page import json_text, page_data

LOADED = ("var t = performance.getEntriesByType('navigation')[0];"
          "return t.loadEventEnd - t.startTime;")


def parts(events: list[Any]) -> dict[str, int]:
    """Bytes of each key of the page's data object, as the page writes it."""
    data = page_data(Timeline(events))
    return {k: len(json_text(v).encode()) for k, v in data.items()}


def load_times(driver: Any, uri: str, repeat: int) -> float:
    """Median milliseconds from navigation start to the end of the load event."""
    runs = []
    for _ in range(repeat):
        driver.get("about:blank")
        driver.get(uri)
        runs.append(float(driver.execute_script(LOADED)))
    return statistics.median(runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--target", type=int, default=40_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "buraco-bench")
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args()
    events = long_match(args.events, args.cache, args.target)
    page = build_page(events).html.encode()
    print(f"page: {len(page):,} bytes for {len(events):,} events "
          f"({len(page) / len(events):.1f} bytes an event)")
    for k, n in sorted(parts(events).items(), key=lambda kv: -kv[1]):
        if n >= 1000:
            print(f"  {k:8} {n:>12,} bytes  {100 * n / len(page):5.1f} %")
    if args.no_browser or not shutil.which("chromium") or not shutil.which("chromedriver"):
        return
    from tests.view.conftest import make_driver

    with tempfile.TemporaryDirectory() as tmp:
        long_page, short_page = Path(tmp, "long.html"), Path(tmp, "short.html")
        long_page.write_bytes(page)
        short_page.write_text(build_page(events[:1000]).html)
        d = make_driver()
        try:
            base = load_times(d, short_page.as_uri(), args.repeat)
            took = load_times(d, long_page.as_uri(), args.repeat)
        finally:
            d.quit()
    print(f"load in Chromium: {took:,.0f} ms (median of {args.repeat}); a 1,000-event page "
          f"{base:,.0f} ms; ratio {took / base:.1f}")


if __name__ == "__main__":
    main()
