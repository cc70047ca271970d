"""The appending processes of the seal and repair race probes (test_fault_probes_hang58c.py).

    python -m tests.log.sealrace58 recorder DIR TABLES PAUSE
    python -m tests.log.sealrace58 writer LOG PAUSE

``recorder`` appends a whole legal match (``samples.match_events()``, from the next seq
``t0.blog`` holds, if it exists) to TABLES tables ``t0``... of an unsealed :class:`Recorder`
in DIR that closes a log idle for a moment (so that `seal` finds it unlocked between moves,
and the recorder reopens the file it rewrote), a move of each table in turn, and prints
``ack TABLE SEQ`` once each append returns (fsync on).
``writer`` appends the same match to LOG with :class:`log.Writer`, opening and closing it
around every few events (waiting for the lock up to 5 s), and prints ``ack SEQ`` likewise.
Either prints ``done`` at its end, and ``refused SEQ: MESSAGE`` where an append was refused
(never acknowledged) for another reason than a `seal` or `repair` holding the log (the
recorder's move is then sent again, as a client would); every process sleeps PAUSE seconds
between events.
"""

from __future__ import annotations

import os
import sys
import time

from buraco_log import log
from buraco_log.errors import LogFormatError
from tests.log.samples import match_events


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _held(path: str) -> int:
    """How many events the log at ``path`` holds already (a torn tail's cut record not
    counted): the appender goes on from there."""
    if not os.path.exists(path):
        return 0
    return len(log.read_events(path, allow_torn=True))


def recorder(directory: str, tables: int, pause: float) -> None:
    from buraco_log.recorder import Recorder

    events = match_events()[_held(os.path.join(directory, "t0.blog")):]
    with Recorder(directory, sealed=False, idle_timeout=0.01, save_every=0,
                  checkpoint_every=0.2) as rec:
        for event in events:
            for t in range(tables):
                for attempt in range(1000):  # a seal or repair holds the log: send it again
                    try:
                        rec.append(f"t{t}", event)
                        break
                    except LogFormatError as exc:
                        if exc.kind != "locked" or attempt == 999:
                            _say(f"refused t{t} {event.seq}: {exc}")
                            return
                        time.sleep(0.005)
                _say(f"ack t{t} {event.seq}")
            time.sleep(pause)
    _say("done")


def writer(path: str, pause: float) -> None:
    events = match_events()
    for i in range(_held(path), len(events), 5):
        try:
            with log.Writer(path, sealed=False, lock_timeout=5) as w:
                for event in events[i:i + 5]:
                    w.append(event)
                    _say(f"ack {event.seq}")
                    time.sleep(pause)
        except LogFormatError as exc:
            _say(f"refused {i}: {exc}")
            return
    _say("done")


def main(args: list[str]) -> None:
    if args[0] == "recorder":
        recorder(args[1], int(args[2]), float(args[3]))
    elif args[0] == "writer":
        writer(args[1], float(args[2]))
    else:
        raise SystemExit(f"unknown process {args[0]!r}")


if __name__ == "__main__":
    main(sys.argv[1:])


def run_case(kind: str, command: str, inject: str | None, directory: str,
             pause: float = 0.001) -> list[str]:
    """One probe: the appender ``kind`` (``writer`` or ``recorder``) writes a match to
    ``DIRECTORY/t0.blog`` while ``buraco-log COMMAND`` (``seal`` or ``repair``) runs on it again
    and again, each run under ``strace -e inject=INJECT`` (a failed or killed system call).
    Returns what went wrong: an acknowledged event missing from the log, a log that does not
    verify, a run's traceback or an answer of more than one line, the appender refused."""
    import subprocess
    import threading

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root)
    path = os.path.join(directory, "t0.blog")
    target = directory if kind == "recorder" else path
    extra = ["1"] if kind == "recorder" else []
    appender = subprocess.Popen(
        [sys.executable, "-m", "tests.log.sealrace58", kind, target, *extra, str(pause)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=root, env=env)
    said: list[str] = []
    reader = threading.Thread(target=lambda: said.extend(
        line.strip() for line in appender.stdout or ()), daemon=True)
    reader.start()
    problems: list[str] = []
    runs = 0
    args = [sys.executable, "-m", "cli.main", command, path]
    if inject is not None:
        args = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", f"inject={inject}", *args]
    while appender.poll() is None or runs == 0:
        if os.path.exists(path):
            r = subprocess.run(args, capture_output=True, text=True, cwd=root, env=env,
                               timeout=60)
            runs += 1
            lines = r.stderr.splitlines()
            if (r.returncode not in (0, -9) and len(lines) != 1) or (
                    "Traceback" in r.stderr or "internal error" in r.stderr):
                problems.append(f"{command} exit {r.returncode}: {r.stderr[-400:]!r}")
        time.sleep(0.005)
    reader.join(10)
    appender.wait()
    trouble = appender.stderr.read() if appender.stderr else ""
    for pipe in (appender.stdout, appender.stderr):
        if pipe is not None:
            pipe.close()
    held = [e.seq for e in match_events()[: _prefix(directory)]]
    acked = held + [int(line.split()[-1]) for line in said if line.startswith("ack")]
    if said[-1:] != ["done"]:
        problems.append(f"the appender ended with {said[-1:]} {trouble[-400:]}")
    try:
        got = log.read_events(path)
        log.verify(path)
    except LogFormatError as exc:
        return [*problems, f"the log after the race: {exc}"]
    if got[: len(acked)] != list(match_events()[: len(acked)]):
        problems.append(f"acknowledged events lost: {len(acked)} acknowledged, the log holds "
                        f"{len(got)}")
    return problems


def _prefix(directory: str) -> int:
    """The events the log held before the appender started (written by the test)."""
    try:
        with open(os.path.join(directory, "prefix")) as f:
            return int(f.read())
    except FileNotFoundError:
        return 0
