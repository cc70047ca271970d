"""Benchmark of the replay page (`buraco-log view`): write time, file size, step time.

    python benchmarks/bench_view.py                 # a 3,000-event match
    python benchmarks/bench_view.py --events 1000   # quicker

1. A match of --events events is simulated (bossa-nova, 3 heuristic bots, the target raised so
   the match runs long enough, then cut at --events; cached in --cache).
2. Baseline: replaying it once with the reducer as `buraco-log replay` does (Timeline).
   Measured: writing the referee's page and a seat's page (median of --repeat runs), as
   absolute times and as ratios to the baseline. The issue's bounds: <= 1 s, <= 1.5 MB.
3. File size: the page's bytes, bytes per event, and the ratio to the log's own bytes.
4. Step time in a headless Chromium (Debian's chromium + chromium-driver, if installed), with
   the browser tests' tooling (tests/view): every seq forward, then the same number of jumps;
   median, 95th percentile and max per step (go() and the layout it leaves), as measured by
   the page's own clock (performance.now()). The bound is 16 ms; not asserted.
"""

from __future__ import annotations

import argparse
import os
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


# The floor of a jump on this machine, in the same browser and run: writing 90 cards (about
# what a jump in the middle of this match redraws) into a box of their own and laying them out.
FLOOR = """
var box = document.createElement('div'), out = [], t, html = '';
box.style.cssText = 'position:absolute; left:0; top:0; width:800px';
document.body.appendChild(box);
for (var r = 0; r < 60; r++) {
  html = '';
  for (var c = 0; c < 90; c++) {
    html += '<span class="card s' + ((c + r) % 4) + '" data-card="' + c + '">' + (1 + (c + r) % 13)
      + '<i>\u2663</i></span>';
  }
  t = performance.now(); box.innerHTML = html; document.body.offsetHeight;
  out.push(performance.now() - t);
}
box.remove();
return out;
"""


def browser_steps(html: str) -> list[float] | None:
    """Step times of the page in the browser tests' headless Chromium (every seq forward, then
    as many jumps), None without one."""
    if not shutil.which("chromium") or not shutil.which("chromedriver"):
        return None
    from tests.view.conftest import make_driver
    from tests.view.pages import step_times

    d = make_driver()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            page = Path(tmp) / "bench.html"
            page.write_text(html, encoding="utf-8")
            d.get(page.as_uri() + "#seq=0")
            times = step_times(d)
            floor = d.execute_script(FLOOR)
    finally:
        d.quit()
    return [statistics.median(floor), *times]


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
    floor, times = times[0], times[1:]
    half = len(times) // 2
    load = os.getloadavg()[0]
    print(f"floor     90 cards written and laid out: median {floor:.2f} ms  (load average "
          f"{load:.1f} on {os.cpu_count()} CPUs)")
    for label, part in (("step", times[:half]), ("jump", times[half:])):
        part = sorted(part)
        p95 = part[int(len(part) * 0.95)]
        median = statistics.median(part)
        print(f"{label:<9} {len(part):,} in Chromium: median {median:.2f} ms "
              f"({median / floor:.2f}x the floor), p95 {p95:.2f} ms, max {part[-1]:.2f} ms  "
              f"(bound 16 ms, not asserted)")


if __name__ == "__main__":
    main()
