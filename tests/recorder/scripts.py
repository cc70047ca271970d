"""Child scripts the recorder's tests run in a process of their own (``python -c``)."""

from __future__ import annotations

import textwrap

ADOPTED_CHILD = textwrap.dedent("""
    import json, os, signal, sys, time
    from buraco_log import log
    from buraco_log.errors import LogFormatError
    from buraco_log.recorder import FileOps, Recorder
    from tests.recorder.sources import matches
    a, b = matches()[0], matches()[1]
    directory = sys.argv[1]

    class Failing(FileOps):
        fail_at = -1  # the journal append of that number fails (a full disk)

        def __init__(self):
            self.appends = 0

        def append(self, fd, data):
            self.appends += 1
            if self.appends == self.fail_at:
                raise OSError(28, "No space left on device")
            super().append(fd, data)

    ops = Failing()
    rec = Recorder(directory, sync="journal", ops=ops, sealed=False, idle_timeout=0.01,
                   save_every=0, checkpoint_every=600)
    for k in range(5):
        rec.append("a", a[k])
        rec.append("b", b[k])
    while rec.stats().open_handles:
        time.sleep(0.01)
    log.seal(os.path.join(directory, "a.blog"))  # rewritten while the recorder had it closed
    ops.fail_at = ops.appends + 1  # the round's append, the adopted log's record in it
    rec.window = 0.3
    futures = {"a": rec.submit("a", a[5]), "b": rec.submit("b", b[5])}
    out = {}
    for name, future in futures.items():
        try:
            out[name] = future.result(timeout=30)
        except LogFormatError as exc:
            out[name] = str(exc)
    print(json.dumps(out), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
""")
"""A recorder whose journal append fails (a full disk) in the round that adopts a log a seal
rewrote while it was closed; it prints what its appends gave, then kills itself."""
