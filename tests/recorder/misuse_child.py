"""A recorder process to misuse from another: ``python -m tests.recorder.misuse_child DIR SYNC``.

It reads commands from stdin, one a line, and answers each with one line on stdout:
``play TABLE N`` appends the table's next N moves (its source is fixed by its name), one at a
time, and answers ``ok SEQ`` (the last acknowledged) or ``error SEQ KIND MESSAGE`` at the
first refusal; ``flood TABLES`` starts one thread a table appending its moves until refused,
each acknowledgement written as ``acked TABLE SEQ`` (one ``write``, so the parent knows what
was acknowledged), then answers ``started``; ``close`` closes the recorder (while a flood
runs: the round in progress) and answers ``closed``, then each flood thread's end ``ended
TABLE KIND MESSAGE``, then ``done``.
"""

from __future__ import annotations

import os
import sys
import threading

from buraco_log.errors import LogFormatError
from buraco_log.recorder import Recorder
from tests.recorder.sources import matches, source_of


def _say(line: str) -> None:
    os.write(1, (line.replace("\n", "\\n") + "\n").encode())


def main() -> None:
    directory, sync = sys.argv[1], sys.argv[2]
    sources = matches()
    rec = Recorder(directory, sync=sync, save_every=0, checkpoint_every=600,
                   max_open=int(os.environ.get("MAX_OPEN", "0")) or None)
    ended: list[str] = []
    threads: list[threading.Thread] = []

    def flood(table: str) -> None:
        src = source_of(table, sources)
        try:
            for event in src[rec.next_seq(table):]:
                _say(f"acked {table} {rec.append(table, event)}")
            ended.append(f"ended {table} - finished")
        except LogFormatError as exc:
            ended.append(f"ended {table} {exc.kind} {exc}")

    _say("ready")
    for line in sys.stdin:
        words = line.split()
        if words[0] == "play":
            table, count = words[1], int(words[2])
            src = source_of(table, sources)
            seq = -1
            try:
                for _ in range(count):
                    seq = rec.next_seq(table)
                    seq = rec.append(table, src[seq])
                _say(f"ok {seq}")
            except LogFormatError as exc:
                _say(f"error {seq} {exc.kind} {exc}")
        elif words[0] == "flood":
            threads = [threading.Thread(target=flood, args=(t,)) for t in words[1:]]
            _say("started")  # before the threads: their first "acked" line could come first
            for thread in threads:
                thread.start()
        elif words[0] == "close":
            rec.close()
            _say("closed")
            for thread in threads:
                thread.join()
            for end in ended:
                _say(end)
            _say("done")
            return


if __name__ == "__main__":
    main()
