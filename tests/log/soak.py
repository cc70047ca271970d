"""The processes of the soak test (tests/log/test_soak.py): each loops on one directory of logs.

    python -m tests.log.soak writer DIR MATCHES SEED
    python -m tests.log.soak seal|repair|audit DIR MATCHES SEED
    python -m tests.log.soak ingest DIR MATCHES SEED ARCHIVE

``writer`` appends the simulated matches ``m{i}.blog`` (unsealed) in sessions of 1 to 40 durable
appends, printing ``ack I SEQ`` after each, and resumes where the log ends when restarted. The
others pick a log at random, run their command, and go on whatever the project error (a held
lock, a torn tail...). Anything else (a traceback) ends the process with status 3.
"""

from __future__ import annotations

import os
import random
import sys
import time
import traceback
from functools import cache

from buraco_log import events as ev
from buraco_log import log
from buraco_log.errors import BuracoLogError


@cache
def match(i: int) -> tuple[ev.AnyEvent, ...]:
    from buraco_log.rules import preset
    from buraco_log.simulate import simulate_match

    return tuple(simulate_match(preset("classic"), 2, seed="soak", index=i))


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def writer(directory: str, matches: int, rng: random.Random) -> None:
    for i in range(matches):
        path = os.path.join(directory, f"m{i}.blog")
        events = match(i)
        done = False
        while not done:
            try:
                with log.Writer(path, validate=False, sealed=False, lock_timeout=0.05) as w:
                    start = w.next_seq
                    for event in events[start : start + rng.randint(1, 40)]:
                        w.append(event)
                        _say(f"ack {i} {event.seq}")
                    done = w.next_seq >= len(events)
            except BuracoLogError:  # locked by seal or repair, or a torn tail to be repaired
                time.sleep(0.01)
    _say("finished")


def worker(mode: str, directory: str, matches: int, rng: random.Random, archive: str) -> None:
    from buraco_log import audit
    from buraco_log.archive.ingest import ingest

    while True:
        path = os.path.join(directory, f"m{rng.randrange(matches)}.blog")
        try:
            if mode == "seal":
                log.seal(path, lock_timeout=rng.choice((0.0, 0.05)))
            elif mode == "repair":
                log.repair(path, lock_timeout=0.05)
            elif mode == "audit":
                if os.path.exists(path):
                    audit.audit_log(path)
            else:
                ingest([directory], archive)
        except BuracoLogError:
            pass
        time.sleep(rng.uniform(0, 0.05))


def main() -> None:
    mode, directory, matches, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    rng = random.Random(f"{seed}-{os.getpid()}")
    try:
        if mode == "writer":
            writer(directory, matches, rng)
        else:
            worker(mode, directory, matches, rng, sys.argv[5] if len(sys.argv) > 5 else "")
    except Exception:
        traceback.print_exc()
        sys.exit(3)


if __name__ == "__main__":
    main()
