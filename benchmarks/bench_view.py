"""Benchmark of the replay page (`buraco-log view`): write time, file size, step time.

    python benchmarks/bench_view.py                 # a 3,000-event match
    python benchmarks/bench_view.py --events 1000   # quicker
    python benchmarks/bench_view.py --events 100000 --target 40000 --steps 500 --jumps 100 \
        --before a5c98587                           # a long match, against an older page script
    python benchmarks/bench_view.py --events 100000 --target 40000 --no-browser \
        --write-before 32df3f1                      # writing it, against an older page builder

1. A match of --events events is simulated (bossa-nova, 3 heuristic bots, the target raised to
   --target so the match runs long enough, then cut at --events; cached in --cache).
2. Baseline: replaying it once with the reducer as `buraco-log replay` does (Timeline).
   Measured: writing the referee's page and a seat's page (median of --repeat runs), as
   absolute times and as ratios to the baseline. The issue's bounds: <= 1 s, <= 1.5 MB.
   --write-before REV also times the page builder (buraco_log/view/frames.py and page.py) of
   git revision REV, alternating with today's in the same run, and checks both write the same
   bytes.
3. File size: the page's bytes, bytes per event, and the ratio to the log's own bytes.
4. Step time in a headless Chromium (Debian's chromium + chromium-driver, if installed), with
   the browser tests' tooling (tests/view): --steps seqs forward (default every seq), then
   --jumps jumps across the match of each kind a reader makes (go() as the keys and buttons
   call it, the slider dragged, a move-list line clicked, a hand picked from the menu);
   median, 95th percentile and max per step (go() and the layout it leaves), as measured by
   the page's own clock (performance.now()), and each jump's median as a ratio to a step's.
   The bound is 16 ms; not asserted. --before REV also measures the same page with the
   page script and styles of git revision REV, in the same browser and run, alternating.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from buraco_log.events import AnyEvent
from buraco_log.log import read_events, write_log
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match
from buraco_log.timeline import Timeline
from buraco_log.view import build_page
from buraco_log.view.page import script_hash


def cached(cache: Path, n: int, target: int) -> Path:
    """Where the match of ``n`` events to ``target`` points is kept between runs."""
    return cache / f"view-bench-{n}{'' if target == 8_000 else f'-t{target}'}.blog"


def long_match(n: int, cache: Path, target: int = 8_000) -> list[AnyEvent]:
    path = cached(cache, n, target)
    if path.exists():
        return read_events(str(path))
    rules = msgspec.structs.replace(PRESETS["bossa-nova"], target_score=target)
    events = simulate_match(rules, 3, seed="bench-view", max_hands=max(400, target // 10))[:n]
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


def older_page(html: str, rev: str) -> str:
    """``html`` with the page script and styles of git revision ``rev`` in place of today's."""
    root = Path(__file__).resolve().parents[1]
    for name in ("viewer.js", "viewer.css"):
        now = (root / "buraco_log" / "view" / "template" / name).read_text("utf-8")
        then = subprocess.run(["git", "show", f"{rev}:buraco_log/view/template/{name}"],
                              cwd=root, capture_output=True, text=True, check=True).stdout
        assert html.count(now) == 1, name
        html = html.replace(now, then, 1)
        if name == "viewer.js":
            # the page's Content-Security-Policy runs a script by its hash alone: without the
            # older script's hash the older script would never run (buracoView undefined)
            old_hash, new_hash = script_hash(f"\n{now}\n"), script_hash(f"\n{then}\n")
            assert html.count(old_hash) == 1, "script hash"
            html = html.replace(old_hash, new_hash, 1)
    return html


def older_builder(rev: str, tmp: Path) -> Any:
    """``build_page`` of git revision ``rev``: its view/frames.py and view/page.py loaded as a
    package of their own beside today's library (the compiled reducer is today's)."""
    import importlib

    root = Path(__file__).resolve().parents[1]
    pkg = tmp / f"view_{rev}"
    pkg.mkdir()
    for name in ("frames.py", "page.py"):
        text = subprocess.run(["git", "show", f"{rev}:buraco_log/view/{name}"], cwd=root,
                              capture_output=True, text=True, check=True).stdout
        (pkg / name).write_text(text.replace("buraco_log.view.frames", f"{pkg.name}.frames"),
                                encoding="utf-8")
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    sys.path.insert(0, str(tmp))
    return importlib.import_module(f"{pkg.name}.page").build_page


def write_against(events: list[AnyEvent], rev: str, repeat: int) -> None:
    """Today's page builder against revision ``rev``'s, alternating, median of ``repeat``."""
    with tempfile.TemporaryDirectory() as tmp:
        old = older_builder(rev, Path(tmp))
        for label, seat in (("referee page", None), ("seat 0 page", 0)):
            runs: dict[str, list[tuple[float, float]]] = {"then": [], "now": []}
            for _ in range(repeat):
                for fn, key in ((old, "then"), (build_page, "now")):
                    t, c = time.perf_counter(), time.process_time()
                    fn(events, seat=seat)
                    runs[key].append((time.perf_counter() - t, time.process_time() - c))
            same = old(events, seat=seat).html == build_page(events, seat=seat).html
            (a, ac), (b, bc) = ((statistics.median(x[0] for x in r),
                                 statistics.median(x[1] for x in r)) for r in runs.values())
            print(f"write     {label:<14} at {rev:<10} {a * 1000:8.1f} ms ({ac * 1000:.0f} ms CPU)"
                  f", now {b * 1000:8.1f} ms ({bc * 1000:.0f} ms CPU): {a / b:4.2f}x faster, "
                  f"{ac / bc:4.2f}x less CPU  (same bytes: {'yes' if same else 'NO'})")


Times = dict[str, list[float]]


def measure(d: Any, uri: str, steps: int | None, jumps: int) -> Times:
    """Steps and jumps of each kind of the page at ``uri``, in the driver ``d``."""
    from tests.view.pages import JUMP_KINDS, jump_times

    d.get(uri + "#seq=0")
    last, hands = d.execute_script(
        "return [window.buracoView.last, document.getElementById('handsel').length]")
    n = last if steps is None else min(steps, last)
    first = (last - n) // 2  # the middle of the match: its melds and pile are grown
    d.execute_script(f"window.buracoView.go({first})")
    out: Times = {"step": jump_times(d, "go", list(range(first + 1, first + n + 1)), 200)}
    for how in JUMP_KINDS:
        # far apart: each jump lands in another hand (7919 and 7 are prime to the sizes)
        span, step = (hands, 7) if how == "hand" else (last + 1, 7919)
        out[how] = jump_times(d, how, [(i * step) % span for i in range(1, jumps + 1)])
    return out


def browser_steps(pages: dict[str, str], steps: int | None, jumps: int, rounds: int
                  ) -> tuple[float, dict[str, Times]] | None:
    """The floor and each page's step and jump times in the browser tests' headless Chromium,
    the pages measured in turn ``rounds`` times; None without a browser."""
    if not shutil.which("chromium") or not shutil.which("chromedriver"):
        return None
    from tests.view.conftest import make_driver

    d = make_driver()
    got: dict[str, Times] = {label: {} for label in pages}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            floor = []
            for _ in range(rounds):
                for label, html in pages.items():
                    page = Path(tmp) / f"bench-{label}.html"
                    page.write_text(html, encoding="utf-8")
                    for k, v in measure(d, page.as_uri(), steps, jumps).items():
                        got[label].setdefault(k, []).extend(v)
                    floor += d.execute_script(FLOOR)
    finally:
        d.quit()
    return statistics.median(floor), got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=3000)
    ap.add_argument("--target", type=int, default=8_000, help="the match's target score")
    ap.add_argument("--steps", type=int, default=None, help="steps timed (default: every seq)")
    ap.add_argument("--jumps", type=int, default=None,
                    help="jumps of each kind timed (default: as many as steps)")
    ap.add_argument("--before", metavar="REV", default=None,
                    help="also time the page with the script and styles of git revision REV")
    ap.add_argument("--write-before", metavar="REV", default=None,
                    help="also time writing the page with the page builder of git revision REV")
    ap.add_argument("--rounds", type=int, default=1, help="times each page is measured")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "buraco-bench")
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args()

    events = long_match(args.events, args.cache, args.target)
    log_bytes = cached(args.cache, args.events, args.target).stat().st_size
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
    if args.write_before is not None:
        write_against(events, args.write_before, args.repeat)
    if args.no_browser:
        return
    html = build_page(events).html
    pages = {"now": html} if args.before is None else {
        f"at {args.before}": older_page(html, args.before), "now": html}
    steps = args.steps
    jumps = args.jumps if args.jumps is not None else (steps or n)
    got = browser_steps(pages, steps, jumps, args.rounds)
    if got is None:
        print("step      (no chromium/chromedriver: not measured)")
        return
    floor, times = got
    print(f"floor     90 cards written and laid out: median {floor:.2f} ms  (load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    for label, kinds in times.items():
        step = statistics.median(kinds["step"])
        for kind, part in kinds.items():
            part = sorted(part)
            p95 = part[int(len(part) * 0.95)]
            median = statistics.median(part)
            what = "step" if kind == "step" else f"jump:{kind}"
            print(f"{label:<14} {what:<12} {len(part):>6,} in Chromium: median {median:7.2f} ms "
                  f"({median / floor:5.2f}x the floor, {median / step:5.2f}x a step), "
                  f"p95 {p95:7.2f} ms, max {part[-1]:7.2f} ms")


if __name__ == "__main__":
    main()
