"""A recorder process to kill: ``python -m tests.recorder.crash_child DIR TABLES THREADS RUN``.

It continues every unfinished match in DIR (restart path: sweep, torn-tail cut, reload), starts
new ones up to TABLES, and records from THREADS threads, each submitting one move for each of
its tables and waiting for them all (runs take turns with the three ways of syncing a round).
After each acknowledgement it writes ``match seq`` to stdout with one ``write`` (atomic on a
file), so the parent knows exactly what was acked when it sends SIGKILL.
"""

from __future__ import annotations

import os
import sys
import threading

from buraco_log.recorder import Recorder
from tests.recorder.sources import matches, source_of


def main() -> None:
    directory, tables, threads, run = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    sources = matches()
    sync = ("fsync", "syncfs", "journal")[int(run) % 3]  # every way of making a round durable
    # Small pool: evictions. Every other pair of runs saves the tables' states often, so the
    # restarts after those kills load matches from a saved state and the events after it (and
    # a journal is retired every 50 ms: kills land in checkpoints too).
    often = 0.05 if int(run) // 2 % 2 else 60.0
    rec = Recorder(directory, window=0.002, max_open=48, sync=sync, save_every=often,
                   checkpoint_every=often)
    names = []
    for entry in sorted(os.listdir(directory)):
        if entry.endswith(".blog"):
            name = entry[:-5]
            if rec.next_seq(name) < len(source_of(name, sources)):
                names.append(name)
    names += [f"r{run}-{i}" for i in range(max(0, tables - len(names)))]
    os.write(1, f"ready {rec.stats().resumed}\n".encode())  # matches loaded from a state

    def player(mine: list[str]) -> None:
        while mine:
            futures = []
            for name in list(mine):
                src = source_of(name, sources)
                seq = rec.next_seq(name)
                if seq >= len(src):
                    mine.remove(name)
                    continue
                futures.append((name, rec.submit(name, src[seq])))
            for name, future in futures:
                seq = future.result()
                os.write(1, f"{name} {seq}\n".encode())

    workers = [threading.Thread(target=player, args=(names[k::threads],)) for k in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    rec.close()
    os.write(1, b"done\n")


if __name__ == "__main__":
    main()
