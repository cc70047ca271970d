"""Fault probes of the recorder, third round: a seal meeting a recorder's journal that is ahead
of its log (a recorder killed, its logs' page cache lost, not yet restarted), and a recorder
starting while a seal holds one of its logs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from buraco_log import journal, log
from buraco_log.errors import LogFormatError
from buraco_log.recorder import Recorder
from tests.recorder.sources import matches, on_disk

ROOT = Path(__file__).resolve().parents[2]
ACKED = 8
KEPT = 3  # events the log itself kept through the (simulated) power loss

CHILD = f"""
import os, sys, time
from buraco_log.recorder import Recorder
from tests.recorder.sources import matches
a = matches()[0]
rec = Recorder(sys.argv[1], sync="journal", checkpoint_every=600, save_every=600, sealed=False)
for event in a[:{ACKED}]:
    rec.append("a", event)
os.write(1, b"acked\\n")
time.sleep(120)
"""


def _killed_recorder_lost_page_cache(directory: Path) -> Path:
    """A recorder (sync="journal") acknowledged ACKED events of match a, was killed with
    SIGKILL before any checkpoint, and a power loss then took the log's unsynced tail: the
    log holds KEPT events, the synced journal all ACKED. Returns the log's path."""
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(directory)], cwd=ROOT,
                             stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == b"acked\n"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
    path = directory / "a.blog"
    with log.Reader(path) as reader:
        offsets = [off for off, events in reader.segments() if events[-1].seq >= KEPT]
    cut = offsets[0]
    os.truncate(path, cut)  # same file (inode): what the last checkpoint had made durable
    assert len(on_disk(str(path))) == KEPT
    assert any(n.startswith(journal.PREFIX) for n in os.listdir(directory))
    return path


def test_seal_refuses_a_log_whose_recorder_journal_holds_acknowledged_events_it_lacks(
    tmp_path: Path,
) -> None:
    path = _killed_recorder_lost_page_cache(tmp_path)
    before = path.read_bytes()
    done = subprocess.run([sys.executable, "-m", "cli", "seal", str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "journal" in lines[0], lines
    assert path.read_bytes() == before  # unchanged: the recorder can still write them back
    with Recorder(tmp_path) as rec:
        assert rec.stats().journal_conflicts == 0
    assert on_disk(str(path)) == list(matches()[0][:ACKED])
    info = log.seal(path)  # written back: now it seals, every acknowledged event in it
    assert info.sealed and info.events == ACKED


def test_a_recorder_starting_while_a_seal_holds_its_log_waits_and_writes_the_journal_back(
    tmp_path: Path,
) -> None:
    path = _killed_recorder_lost_page_cache(tmp_path)
    lock = log.LogLock(path)  # a seal, between taking the lock and refusing
    opened: list[Recorder] = []
    starter = threading.Thread(target=lambda: opened.append(Recorder(tmp_path)))
    starter.start()
    threading.Event().wait(0.3)
    with pytest.raises(LogFormatError, match="another writer holds this log"):
        log.seal(path)  # a second seal meanwhile: the lock or the journal refuses it
    lock.release()
    starter.join(30)
    assert opened, "the recorder did not start"
    with opened[0] as rec:
        assert rec.stats().journal_conflicts == 0
    assert on_disk(str(path)) == list(matches()[0][:ACKED])
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".unfolded")]
