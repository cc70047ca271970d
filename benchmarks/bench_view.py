"""Benchmark of the replay page (`buraco-log view`): write time, file size, step time.

    python benchmarks/bench_view.py                 # a 3,000-event match
    python benchmarks/bench_view.py --events 1000   # quicker

1. A match of --events events is simulated (bossa-nova, 3 heuristic bots, the target raised so
   the match runs long enough, then cut at --events; cached in --cache).
2. Baseline: replaying it once with the reducer as `buraco-log replay` does (Timeline).
   Measured: writing the referee's page and a seat's page (median of --repeat runs), as
   absolute times and as ratios to the baseline. The issue's bounds: <= 1 s, <= 1.5 MB.
3. File size: the page's bytes, bytes per event, and the ratio to the log's own bytes.
4. Step time in a headless Chromium (Debian's chromium + chromium-driver, if installed): every
   seq forward, then the same number of jumps; median, 95th percentile and max per step, as
   measured by the page's own clock (performance.now()). The bound is 16 ms; not asserted.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from buraco_log.events import AnyEvent
from buraco_log.log import read_events, write_log
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match
from buraco_log.timeline import Timeline
from buraco_log.view import build_page

STEP_TIMES = """
var v = window.buracoView, out = [], t;
for (var i = 1; i <= v.last; i++) {
  t = performance.now(); v.go(i); document.body.offsetHeight;
  out.push(performance.now() - t);
}
for (var j = v.last - 1; j >= 0; j--) {
  var s = (j * 7919) % (v.last + 1);
  t = performance.now(); v.go(s); document.body.offsetHeight;
  out.push(performance.now() - t);
}
return out;
"""


def long_match(n: int, cache: Path) -> list[AnyEvent]:
    path = cache / f"view-bench-{n}.blog"
    if path.exists():
        return read_events(str(path))
    rules = msgspec.structs.replace(PRESETS["bossa-nova"], target_score=8_000)
    events = simulate_match(rules, 3, seed="bench-view", max_hands=400)[:n]
    cache.mkdir(parents=True, exist_ok=True)
    write_log(str(path), events, sealed=False, validate=False)
    return events


def timed(fn: object, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()  # type: ignore[operator]
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)


def browser_steps(html: str) -> list[float] | None:
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver:
        return None
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1200,1000"):
        opts.add_argument(arg)
    d = webdriver.Chrome(service=Service(driver), options=opts)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            page = Path(tmp) / "bench.html"
            page.write_text(html, encoding="utf-8")
            d.get(page.as_uri() + "#seq=0")
            times: list[float] = d.execute_script(STEP_TIMES)
    finally:
        d.quit()
    return sorted(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=3000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "buraco-bench")
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args()

    events = long_match(args.events, args.cache)
    log_bytes = (args.cache / f"view-bench-{args.events}.blog").stat().st_size
    n = len(events)
    print(f"match: {n:,} events (bossa-nova, 3 players), log {log_bytes:,} bytes")
    base = timed(lambda: Timeline(events), args.repeat)
    print(f"baseline  replay (Timeline)            {base * 1000:8.1f} ms   1.00x")
    for label, seat in (("referee page", None), ("seat 0 page", 0)):
        t = timed(lambda seat=seat: build_page(events, seat=seat), args.repeat)
        size = len(build_page(events, seat=seat).html.encode("utf-8"))
        ok = "ok" if t <= 1.0 and size <= 1_500_000 else "OVER THE BOUND"
        print(f"write     {label:<28} {t * 1000:8.1f} ms  {t / base:5.2f}x   "
              f"{size:,} bytes ({size / n:.0f} per event, {size / log_bytes:.1f}x the log)"
              f"  [{ok}: <= 1 s, <= 1.5 MB]")
    if args.no_browser:
        return
    times = browser_steps(build_page(events).html)
    if times is None:
        print("step      (no chromium/chromedriver: not measured)")
        return
    p95 = times[int(len(times) * 0.95)]
    print(f"step      {len(times):,} steps in Chromium: median {statistics.median(times):.2f} ms, "
          f"p95 {p95:.2f} ms, max {times[-1]:.2f} ms  (bound 16 ms, not asserted)")


if __name__ == "__main__":
    main()
