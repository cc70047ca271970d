"""The writer process of the signed kill -9 probes: a signing writer appends a match and
reports each acknowledgement.

    python -m tests.signing.killsigner LOG KEY SEED durable|batched

Prints ``open`` once the log exists, then ``ack SEQ`` (flushed) once the event at SEQ and its
signature are on disk: after each ``append`` (durable), or after each ``sign_head`` (batched,
every 7 events).
"""

from __future__ import annotations

import sys

from buraco_log import log
from buraco_log.signing.keys import load_signer
from tests.signing.helpers import match


def main() -> None:
    path, key, seed, mode = sys.argv[1:5]
    signer = load_signer(key)
    batched = mode == "batched"
    out = sys.stdout
    with log.Writer(path, signer=signer, batched=batched, batch_events=50) as w:
        out.write("open\n")
        out.flush()
        for event in match(seed, key_id=signer.key_id):
            w.append(event)
            if batched and event.seq % 7 != 6:
                continue
            if batched:
                w.sign_head()
            out.write(f"ack {event.seq}\n")
            out.flush()


if __name__ == "__main__":
    main()
