"""The writer process of the kill -9 test: appends events and reports each acknowledgement.

    python -m tests.log.killwriter LOG SEED COUNT durable|batched

Prints ``ack SEQ`` on stdout (flushed) once ``append`` (durable) or ``flush`` (batched) has
returned for every event up to SEQ.
"""

from __future__ import annotations

import sys

from buraco_log import log
from tests.log.samples import sample_events


def main() -> None:
    path, seed, count, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    events = sample_events(count, seed)
    out = sys.stdout
    with log.Writer(path, validate=False, batched=mode == "batched", batch_events=50) as w:
        out.write("open\n")
        out.flush()
        for event in events:
            w.append(event)
            if mode == "durable":
                out.write(f"ack {event.seq}\n")
                out.flush()
            elif event.seq % 7 == 6:
                w.flush()
                out.write(f"ack {event.seq}\n")
                out.flush()


if __name__ == "__main__":
    main()
