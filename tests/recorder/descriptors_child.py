"""A recorder in a process out of descriptors: ``python -m tests.recorder.descriptors_child DIR
SYNC TABLES FREE MOVES``.

A fresh process (nothing imported but what the recorder imports) under a limit of 256 open
files, with ``max_open=200``: every descriptor but ``FREE`` is taken by other code of the
process (as a server's clients would), ``TABLES`` tables each play ``MOVES`` moves, and halfway
through the others let go. Prints one JSON line: the moves acknowledged, the refusals, the
tables whose log does not hold exactly its acknowledged moves, and the recorder's counters.
"""

from __future__ import annotations

import collections
import json
import os
import resource
import sys

from buraco_log import log
from buraco_log.errors import LogFormatError
from buraco_log.recorder import Recorder
from tests.recorder.sources import matches, source_of


def main() -> None:
    directory, sync = sys.argv[1], sys.argv[2]
    tables, free, moves = (int(a) for a in sys.argv[3:6])
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    sources = matches()
    rec = Recorder(directory, sync=sync, max_open=200, checkpoint_every=0.02)
    others = []
    while True:  # every descriptor but ``free``, held by other code of the process
        try:
            others.append(os.open(os.devnull, os.O_RDONLY))
        except OSError:
            break
    for fd in others[:free]:
        os.close(fd)
    others = others[free:]
    names = [f"t{i}" for i in range(tables)]
    acked: collections.Counter[str] = collections.Counter()
    refused: collections.Counter[str] = collections.Counter()
    for k in range(moves):
        futures = {}
        for table in names:
            if acked[table] == k:
                try:
                    futures[table] = rec.submit(table, source_of(table, sources)[k])
                except LogFormatError as exc:
                    refused[exc.message] += 1
        for table, future in futures.items():
            try:
                future.result(60)
                acked[table] += 1
            except LogFormatError as exc:
                refused[exc.message] += 1
        if k == moves // 2:
            while others:
                os.close(others.pop())
    stats = rec.stats()
    rec.close()
    wrong = [t for t in names if acked[t] and len(log.read_events(
        os.path.join(directory, f"{t}.blog"))) != acked[t]]
    print(json.dumps({"acked": sum(acked.values()), "refused": refused, "wrong": wrong,
                      "short": getattr(stats, "short_of_descriptors", 0),  # (none before)
                      "reopened": stats.reopened}))


if __name__ == "__main__":
    main()
