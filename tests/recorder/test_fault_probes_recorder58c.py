"""Fault probes of the recorder, the operator's day: a power loss soon after a restart.

A recorder with ``sync="journal"`` killed (``kill -9``, the OOM killer) leaves its journal,
whose records are the only durable copy of the moves acknowledged since the last checkpoint:
the logs hold them in the page cache alone. The next recorder (a supervisor restarts it at
once) wrote back only the records whose bytes the logs lacked, synced only those logs, and
deleted the journal: the logs holding the bytes unsynced were never synced, and a power loss
in the next half minute (before the kernel's own write-back) lost every such acknowledged
move, the journal gone. Now every log a journal names is synced before the journal goes.
"""

from __future__ import annotations

import os
import signal
import tempfile
from pathlib import Path

import pytest

from buraco_log import journal, log
from buraco_log.recorder import Recorder
from tests.recorder.powerloss import PowerLossOps, key_of, restore
from tests.recorder.sources import matches, source_of

_NAMES = ("a", "b", "c")


def _killed_recorder(directory: Path) -> dict[str, int]:
    """A recorder in a forked child records five moves of each table and is killed with
    SIGKILL; the moves acknowledged, by table."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no close, no checkpoint
        os.close(read)
        try:
            rec = Recorder(directory, sync="journal", checkpoint_every=3600, save_every=0)
            for k in range(5):
                for name in _NAMES:
                    rec.append(name, source_of(name, matches())[k])
            os.write(write, b"5")
        finally:
            os.kill(os.getpid(), signal.SIGKILL)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        acked = f.read()
    os.waitpid(pid, 0)
    assert acked == b"5"
    return dict.fromkeys(_NAMES, 5)


@pytest.mark.slow
def test_a_restart_after_a_kill_syncs_the_logs_before_it_deletes_the_journal(
        tmp_path: Path) -> None:
    acked = _killed_recorder(tmp_path)
    [(_, kept)] = journal.generations(str(tmp_path))
    ops = PowerLossOps(str(tmp_path))  # durable after the kill: the journal alone (its
    with open(kept, "rb") as f:  # records were synced, the logs' bytes never were)
        key = key_of(f.fileno())
        ops.synced, ops.names = {key: f.read()}, {os.path.basename(kept): key}
    rec = Recorder(tmp_path, sync="journal", ops=ops)
    try:
        assert not os.path.exists(kept)  # the journal was written back and deleted
        image = ops.image()  # the power fails now, before any round or checkpoint
    finally:
        rec.close()
    with tempfile.TemporaryDirectory(dir=tmp_path.parent) as after:
        restore(after, image)
        with Recorder(after, sync="journal") as again:
            held = {name: again.next_seq(name) for name in _NAMES}
        assert held == acked, held  # every acknowledged move survived
        for name in _NAMES:
            assert log.read_events(Path(after) / f"{name}.blog") == list(
                source_of(name, matches())[:5])
