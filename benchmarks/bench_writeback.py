"""Writing back a recorder's journal at open: with and without the failed-sync marker.

    python benchmarks/bench_writeback.py [--tables 1000] [--moves 5] [--runs 9] [--dir DIR]

A journal recorder (``sync="journal"``, no checkpoint during the run) records ``--moves`` moves
on each of ``--tables`` live tables and is closed without retiring its journal (as after a
crash: the logs hold the moves, the journal too). Each run puts that journal back and calls
``buraco_log.journal.recover`` on the directory: once as usual (the records compared with the
logs and found there: one ``stat`` more than earlier versions), once with
``.recorder.unsynced`` present (left by a sync that failed: every record is written into its
log again and synced, since a page the kernel failed to write reads back right). Prints the
medians of wall and CPU time and the marker's cost as a ratio to the usual write-back, in the
same run (the machine is shared).
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from buraco_log import journal
from buraco_log.recorder import FileOps, Recorder
from tests.recorder.sources import matches

MARKER = ".recorder.unsynced"


def record(directory: Path, tables: int, moves: int) -> dict[str, bytes]:
    """The journals a recorder of ``tables`` tables leaves after ``moves`` moves each."""
    sources = matches()
    with Recorder(directory, sync="journal", checkpoint_every=3600,
                  max_open=tables + 64) as rec:
        for step in range(moves):
            done = [rec.submit(f"t{i}", sources[i % len(sources)][step]) for i in range(tables)]
            for future in done:
                future.result()
        kept = {p.name: p.read_bytes() for p in directory.glob(".recorder.journal-*")}
    if not kept:
        raise SystemExit("the recorder left no journal to write back")
    return kept


def write_back(directory: Path, kept: dict[str, bytes], marker: bool) -> tuple[float, float]:
    """One write-back of ``kept`` into ``directory``: (wall, CPU) seconds."""
    for name, data in kept.items():
        (directory / name).write_bytes(data)
    if marker:
        (directory / MARKER).touch()
    os.sync()  # the journal's own writes are not what is measured
    fd = os.open(directory, os.O_RDONLY)
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        journal.recover(str(directory), fd, ".blog", FileOps())
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        os.close(fd)
    if list(directory.glob(".recorder.journal-*")):
        raise SystemExit("a journal was left after the write-back")
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--moves", type=int, default=5)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--dir", type=Path, default=None,
                        help="where to record (a fresh folder; default: a temporary one)")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-writeback-")) if args.dir is None else args.dir
    directory = base / "live"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    try:
        kept = record(directory, args.tables, args.moves)
        print(f"{args.tables} tables, {args.moves} moves each, {len(kept)} journal(s); "
              f"medians of {args.runs} runs", flush=True)
        medians: dict[bool, tuple[float, float]] = {}
        for marker in (False, True, False, True):  # interleaved: drift hits both alike
            runs = [write_back(directory, kept, marker) for _ in range(args.runs)]
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            medians[marker] = (wall, cpu)
            label = "marker (rewrite)" if marker else "usual (compare)"
            print(f"{label:18s} {wall * 1000:8.0f} ms wall {cpu * 1000:8.0f} ms CPU", flush=True)
        (w0, c0), (w1, c1) = medians[False], medians[True]
        print(f"marker / usual: {w1 / w0:.2f}x wall, {c1 / c0:.2f}x CPU (last pass)")
    finally:
        if args.dir is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
