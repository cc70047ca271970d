"""Match-log throughput, printed as figures (a script, not a timed test).

    python benchmarks/bench_log.py [--matches 20] [--events 1000000] [--dir DIR]
    python benchmarks/bench_log.py --lock --matches 4 --events 100000 --before OLD_LOG_PY

Figures:
- durable append (write + fsync per event) and batched append, events per second;
- read + verify (checksums, seqs, SHA-256 chain) as a ratio to a bare msgspec decode of the
  same segment payloads, and read + verify + replay as a ratio to decode + replay, all measured
  on the same simulated matches in this run;
- JSON Lines read (every check) as a ratio to the binary read + verify;
- bytes per event on disk.
Goals: verification adds at most 25% to replay time; batched appends reach 1,000,000 events/s.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import msgspec

from buraco_log import events as ev
from buraco_log import jsonl, log
from buraco_log.reducer import Replayer
from buraco_log.rules import preset
from buraco_log.simulate import simulate_match


def best(fn: Callable[[], object], repeat: int = 5) -> float:
    """Fastest of ``repeat`` runs, in seconds (the least disturbed by the machine)."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def payloads(path: Path) -> list[bytes]:
    """The raw segment payloads of a log, for the bare-decode baseline."""
    out = []
    with log.Reader(path) as reader:
        reader.read_header()
        f = reader._f
        f.seek(log.HEADER_SIZE)
        size = reader._seg_head_size
        while head := f.read(size):
            length = int.from_bytes(head[:4], "little")
            out.append(f.read(length))
    return out


def _load(path: str) -> ModuleType:
    """A log module from a file (an older log.py, for the before/after figures)."""
    spec = importlib.util.spec_from_file_location("log_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lock_costs(root: Path, events: list[ev.AnyEvent], before: str | None, durable: int) -> None:
    """What the lock discipline costs: durable appends (one stat per fsync), reopening a log
    (lock + inode check), and seal (the whole rewrite under the lock), each as a ratio to the
    same operation by the log module at ``before`` (an older log.py), measured in this run."""
    sides: dict[str, ModuleType] = {"now": log}
    if before:
        sides["before"] = _load(before)
    small = events[:durable]
    unsealed = root / "seal-src.blog"
    log.write_log(unsealed, events, sealed=False, validate=False)
    results: dict[str, dict[str, float]] = {name: {} for name in sides}

    def run(name: str, mod: ModuleType, i: int) -> None:
        res = results[name]
        path = root / f"lock-{name}-{i}.blog"
        with mod.Writer(path, validate=False) as w:
            t = time.perf_counter()
            for e in small:
                w.append(e)
            res["durable"] = min(res.get("durable", 1e9), (time.perf_counter() - t) / len(small))
        t = time.perf_counter()
        for _ in range(50):
            mod.Writer(path, validate=False).close()
        res["reopen"] = min(res.get("reopen", 1e9), (time.perf_counter() - t) / 50)
        os.unlink(path)
        copy = root / f"seal-{name}-{i}.blog"
        shutil.copyfile(unsealed, copy)
        t = time.perf_counter()
        mod.seal(copy)
        res["seal"] = min(res.get("seal", 1e9), time.perf_counter() - t)
        os.unlink(copy)

    for i in range(3):  # interleaved, best of 3: the machine's load disturbs both alike
        for name, mod in sides.items():
            run(name, mod, i)
    now = results["now"]
    for key, unit, scale in (("durable", "ms/event", 1e3), ("reopen", "ms/open", 1e3),
                             ("seal", f"s for {len(events):,} events", 1.0)):
        line = f"{key + ':':<24} {now[key] * scale:10.3f} {unit}"
        if "before" in results:
            old = results["before"][key]
            line += f"  (before: {old * scale:.3f}; x{now[key] / old:.2f})"
        print(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--matches", type=int, default=20)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--durable", type=int, default=300)
    ap.add_argument("--dir", default=None, help="Where the logs go (default: a temporary dir).")
    ap.add_argument("--lock", action="store_true",
                    help="Only the lock discipline's cost: durable append, reopen, seal.")
    ap.add_argument("--before", default=None,
                    help="An older log.py to compare --lock against (`git show REV:buraco_log/"
                         "log.py > FILE`).")
    args = ap.parse_args()
    root = Path(args.dir or tempfile.mkdtemp(prefix="bench-log-"))
    root.mkdir(parents=True, exist_ok=True)

    print(f"simulating {args.matches} matches ...", flush=True)
    matches = [
        simulate_match(preset("classic"), 2 + i % 3, seed="bench", index=i)
        for i in range(args.matches)
    ]
    total = sum(len(m) for m in matches)
    print(f"{total} events in {args.matches} matches; logs in {root}")
    if args.lock:
        template = [e for m in matches for e in m]
        n = min(args.events, 200_000)
        big = [msgspec.structs.replace(template[i % len(template)], seq=i) for i in range(n)]
        lock_costs(root, big, args.before, args.durable)
        return

    # Durable appends: one write + fsync per event.
    path = root / "durable.blog"
    events = list(matches[0])
    n = min(args.durable, len(events))
    with log.Writer(path, validate=False) as w:
        t = time.perf_counter()
        for e in events[:n]:
            w.append(e)
        durable = time.perf_counter() - t
    print(
        f"durable append:          {n / durable:12,.0f} events/s  "
        f"({durable / n * 1e3:.2f} ms/event, fsync each)"
    )
    print(f"bytes per event:         {path.stat().st_size / n:12.1f}  (durable, one segment each)")

    # Batched appends of many events, through append() one at a time.
    template = [e for m in matches for e in m]
    big = [msgspec.structs.replace(template[i % len(template)], seq=i) for i in range(args.events)]
    path = root / "batched.blog"
    with log.Writer(path, validate=False, batched=True) as w:
        t = time.perf_counter()
        for e in big:
            w.append(e)
        w.flush()
        batched = time.perf_counter() - t
    print(
        f"batched append():        {len(big) / batched:12,.0f} events/s  "
        f"({len(big):,} events, {log.BATCH_EVENTS} per segment, fsync per segment)"
    )
    path2 = root / "batched-many.blog"
    with log.Writer(path2, validate=False, batched=True) as w:
        t = time.perf_counter()
        w.append_many(big)
        w.flush()
        many = time.perf_counter() - t
    print(f"batched append_many():   {len(big) / many:12,.0f} events/s")
    print(f"bytes per event:         {path.stat().st_size / len(big):12.1f}  (batched)")
    os.unlink(path)
    os.unlink(path2)

    # Validated appends: the rules engine checks every event (one log per match).
    t = time.perf_counter()
    for i, m in enumerate(matches):
        with log.Writer(root / f"v{i}.blog", batched=True) as w:
            w.append_many(m)
    validated = time.perf_counter() - t
    print(f"validated batched:       {total / validated:12,.0f} events/s  (rules engine on)")

    # Reading: one log per match, as stored; sealed logs in large segments.
    paths = [root / f"v{i}.blog" for i in range(args.matches)]
    raw = [payloads(p) for p in paths]

    def bare_decode() -> None:
        for segs in raw:
            for p in segs:
                ev.decode_many(p)

    def read_verify() -> None:
        for p in paths:
            log.read_events(p)

    def read_verify_replay() -> None:
        for p in paths:
            r = Replayer()
            for e in log.Reader(p):
                r.step(e)

    def decode_replay() -> None:
        for segs in raw:
            r = Replayer()
            for p in segs:
                for e in ev.decode_many(p):
                    r.step(e)

    # Interleaved best-of-N: the machine's other load disturbs both sides alike.
    t_decode = t_read = t_full = t_base = float("inf")
    for _ in range(5):
        t_decode = min(t_decode, best(bare_decode, 1))
        t_read = min(t_read, best(read_verify, 1))
        t_base = min(t_base, best(decode_replay, 1))
        t_full = min(t_full, best(read_verify_replay, 1))
    print(f"bare msgspec decode:     {total / t_decode:12,.0f} events/s")
    print(
        f"read + verify:           {total / t_read:12,.0f} events/s  "
        f"(x{t_read / t_decode:.2f} the bare decode)"
    )
    print(f"decode + replay:         {total / t_base:12,.0f} events/s")
    print(f"read + verify + replay:  {total / t_full:12,.0f} events/s")
    print(
        f"verification cost:       {100 * (t_full / t_base - 1):+12.1f}%  of decode + replay, "
        f"measured ({100 * (t_read - t_decode) / t_base:+.1f}% from the read figures alone); "
        "goal <= 25%"
    )
    # The readable form: the same matches as JSON Lines, read with every check.
    texts = [root / f"v{i}.jsonl" for i in range(args.matches)]
    for src, dst in zip(paths, texts, strict=True):
        jsonl.binary_to_jsonl(src, dst)

    def read_jsonl() -> None:
        for p in texts:
            jsonl.read_jsonl(p)

    t_text = min(best(read_jsonl, 1) for _ in range(3))
    print(
        f"JSON Lines read:         {total / t_text:12,.0f} events/s  "
        f"(x{t_text / t_read:.2f} the binary read + verify)"
    )
    sizes = [p.stat().st_size for p in paths]
    print(
        f"bytes per event:         {sum(sizes) / total:12.1f}  "
        f"(sealed match logs, median {statistics.median(sizes):,.0f} bytes per match)"
    )


if __name__ == "__main__":
    main()
