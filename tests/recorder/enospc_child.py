"""Record on a full file system: ``python -m tests.recorder.enospc_child DIR SYNC FILL_KB``.

Run inside a private mount namespace on a small tmpfs (see test_fault_probes_recorder46.py),
so the disk really fills (``ENOSPC`` from the kernel, not from a stand-in). A filler of FILL_KB
takes most of DIR; eight tables then play until every one is refused or done. Each log must
hold exactly its acknowledged moves (strictly readable, nothing refused left in it). Then the
filler is removed and a new recorder goes on with every table. Prints one JSON line: the moves
acknowledged per table, the refusals, and what was found wrong.
"""

from __future__ import annotations

import json
import os
import sys

from buraco_log import log
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
    rec = Recorder(directory, sync=sync, save_every=0.05, checkpoint_every=0.05)
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
    try:
        rec.close()
    except LogFormatError as exc:
        refusals.append(exc.message)
    wrong: list[str] = []

    def check(stage: str) -> None:
        for table in tables:
            path = os.path.join(directory, table + ".blog")
            if not os.path.exists(path):
                if acked[table]:
                    wrong.append(f"{stage} {table}: missing, {acked[table]} acknowledged")
                continue
            try:
                got = log.read_events(path)
            except LogFormatError as exc:
                wrong.append(f"{stage} {table}: {exc}")
                continue
            if got != list(source_of(table, sources)[:len(got)]) or len(got) != acked[table]:
                wrong.append(f"{stage} {table}: {len(got)} events, {acked[table]} acknowledged")

    check("full")
    os.unlink(filler)
    with Recorder(directory, sync=sync, save_every=0) as rec:
        for table in tables:
            src = source_of(table, sources)
            for seq in range(rec.next_seq(table), min(acked[table] + 3, len(src))):
                acked[table] = rec.append(table, src[seq]) + 1
    check("after")
    print(json.dumps({"acked": acked, "refusals": refusals, "wrong": wrong}))


if __name__ == "__main__":
    main()
