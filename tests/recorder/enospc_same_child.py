"""Record on a full file system, then go on with the same recorder once there is room:
``python -m tests.recorder.enospc_same_child DIR SYNC FILL_KB``.

Run inside a private mount namespace on a small tmpfs (see test_fault_probes_recorder47.py).
A filler takes most of DIR; eight tables play until each is refused or done. The filler is
removed and the same recorder plays every table three more moves, from the seq it asks for.
Prints one JSON line: the moves acknowledged per table, the refusals, the failures after the
room came back, and what was found wrong (a log not holding exactly its acknowledged moves).
"""

from __future__ import annotations

import json
import os
import sys

from buraco_log import journal, log
from buraco_log.errors import LogFormatError
from buraco_log.recorder import Recorder
from tests.recorder.sources import matches, source_of


def main() -> None:
    directory, sync, fill = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sources = matches()
    filler = os.path.join(directory, "filler")
    with open(filler, "wb") as f:
        f.write(b"x" * fill * 1024)
    tables = [f"t{i}" for i in range(8)]
    acked = dict.fromkeys(tables, 0)
    refusals: list[str] = []
    after: list[str] = []
    rec = Recorder(directory, sync=sync, save_every=0, checkpoint_every=0.05)
    live = set(tables)
    while live:
        futures = {}
        for table in sorted(live):
            src = source_of(table, sources)
            if acked[table] >= len(src):
                live.discard(table)
                continue
            try:
                futures[table] = rec.submit(table, src[acked[table]])
            except LogFormatError as exc:
                refusals.append(exc.message)
                live.discard(table)
        for table, future in futures.items():
            try:
                future.result(60)
                acked[table] += 1
            except LogFormatError as exc:
                refusals.append(exc.message)
                live.discard(table)
    os.unlink(filler)
    for table in tables:  # room again: the same recorder goes on with every table
        src = source_of(table, sources)
        try:
            start = rec.next_seq(table)
            if start != acked[table]:
                after.append(f"{table}: next seq {start}, {acked[table]} acknowledged")
            for seq in range(start, min(start + 3, len(src))):
                acked[table] = rec.append(table, src[seq]) + 1
        except LogFormatError as exc:
            after.append(f"{table}: {exc.message}")
    rec.close()
    wrong = []
    for table in tables:
        path = os.path.join(directory, table + ".blog")
        got = log.read_events(path) if os.path.exists(path) else []
        if got != list(source_of(table, sources)[:acked[table]]):
            wrong.append(f"{table}: {len(got)} events, {acked[table]} acknowledged")
    wrong += [f"kept aside: {p}" for _, p in journal.generations(directory, unfolded=True)]
    print(json.dumps({"acked": acked, "refusals": refusals, "after": after, "wrong": wrong}))


if __name__ == "__main__":
    main()
