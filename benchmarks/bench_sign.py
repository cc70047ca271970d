"""What signing costs (issue 17), as ratios to unsigned logs in the same run.

    python benchmarks/bench_sign.py [--matches 20] [--repeat 5] [--preset classic]

For a set of simulated matches, written three ways into a temporary directory:

- unsigned: the baseline, durable (one fsync per append) and batched (64 events a segment);
- signed at every sealed segment: durable (a signature per event), and batched (one per
  segment of 64);
- signed only at the end of the match (one signature, batched).

It prints the signing cost per signed head (the Ed25519 signature and the record it adds),
the write time and the file size of each against its unsigned baseline, and the cost of
verifying a match: reading the log, and reading it and verifying every signature against the
trusted key (``audit`` without the rules: ``buraco_log.signing.check``), against reading the
unsigned log. Medians over ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from buraco_log import log
from buraco_log.audit import read_log_signed
from buraco_log.rules import preset
from buraco_log.signing import check, keys
from buraco_log.simulate import simulate_match


def median_time(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def write(path: Path, events: list[Any], signer: keys.Signer | None, mode: str) -> None:
    if path.exists():
        path.unlink()
    batched = mode != "durable"
    with log.Writer(path, signer=signer, batched=batched, batch_events=64, validate=False,
                    sign_at="end" if mode == "end" else "segment") as w:
        if batched:
            w.append_many(events)
        else:
            for e in events:
                w.append(e)


def write_all(paths: list[Path], matches: list[list[Any]], signer: keys.Signer | None,
              mode: str) -> None:
    for p, m in zip(paths, matches, strict=True):
        write(p, m, signer, mode)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--matches", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--preset", default="classic")
    args = ap.parse_args()
    signer = keys.Signer.generate()
    ring = keys.Keyring([signer.public()])
    matches = []
    for i in range(args.matches):
        events = simulate_match(preset(args.preset), 2, seed=f"bench-sign-{i}")
        events[0] = msgspec.structs.replace(events[0], key_id=signer.key_id)
        matches.append(events)
    n_events = sum(map(len, matches))
    head = bytes(32)
    per_sign = median_time(lambda: [signer.sign_head("m", i, head) for i in range(1000)],
                           args.repeat) / 1000
    verify_one = median_time(
        lambda: [keys.verify(signer.public_key, s.signature, s.message())
                 for s in [signer.sign_head("m", 1, head)] * 1000], args.repeat) / 1000
    print(f"{args.matches} {args.preset} matches, {n_events} events; medians of "
          f"{args.repeat} runs")
    print(f"sign one head (Ed25519 over {len(signer.sign_head('m', 1, head).message())} "
          f"bytes): {per_sign * 1e6:.1f} us; verify one: {verify_one * 1e6:.1f} us")
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        rows = [("durable", None, "unsigned, durable (baseline)"),
                ("durable", signer, "signed per event (durable: every segment)"),
                ("batched", None, "unsigned, batched 64 (baseline)"),
                ("batched", signer, "signed at every segment of 64"),
                ("end", signer, "signed at the end only (batched 64)")]
        results: dict[str, tuple[float, int, int]] = {}
        for mode, who, label in rows:
            paths = [d / f"{mode}-{who is not None}-{i}.blog" for i in range(len(matches))]
            t = median_time(functools.partial(write_all, paths, matches, who, mode),
                            max(1, args.repeat // 2 if mode == "durable" else args.repeat))
            size = sum(os.path.getsize(p) for p in paths)
            sigs = sum(log.verify(p).signatures for p in paths)
            results[label] = (t, size, sigs)
        print()
        print(f"{'log':44} {'write s':>8} {'x base':>7} {'bytes':>9} {'+size':>7} {'sigs':>6}")
        for mode, _who, label in rows:
            t, size, sigs = results[label]
            base_label = rows[0][2] if mode == "durable" else rows[2][2]
            bt, bsize, _ = results[base_label]
            print(f"{label:44} {t:8.3f} {t / bt:7.2f} {size:9d} "
                  f"{(size - bsize) / bsize * 100:6.1f}% {sigs:6d}")
        print()
        for mode, label in (("batched", "signed at every segment of 64"),
                            ("durable", "signed per event (durable: every segment)"),
                            ("end", "signed at the end only (batched 64)")):
            unsigned = [d / f"{'durable' if mode == 'durable' else 'batched'}-False-{i}.blog"
                        for i in range(len(matches))]
            signed = [d / f"{mode}-True-{i}.blog" for i in range(len(matches))]

            def read_all(ps: list[Path]) -> None:
                for p in ps:
                    read_log_signed(p)

            def verify_all(ps: list[Path]) -> None:
                for p in ps:
                    events, _, sig = read_log_signed(p)
                    _, problems = check.check(events, sig.signatures, keyring=ring,
                                              required=True)
                    assert not problems, problems

            base = median_time(functools.partial(read_all, unsigned), args.repeat)
            rd = median_time(functools.partial(read_all, signed), args.repeat)
            ver = median_time(functools.partial(verify_all, signed), args.repeat)
            print(f"verify per match, {label}: read {rd / len(signed) * 1e3:.2f} ms "
                  f"(x{rd / base:.2f} unsigned read), read + verify "
                  f"{ver / len(signed) * 1e3:.2f} ms (x{ver / base:.2f})")


if __name__ == "__main__":
    main()
