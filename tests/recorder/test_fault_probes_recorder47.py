"""Fault probes of the recorder, round 47: an older copy put back before a checkpoint.

With ``sync="journal"``, the checkpoint retires the journal once the logs are synced. A copy
put back (``cp backup.blog live.blog``, or a restore renamed into place) after a table's last
move and before the checkpoint, with no move nor ``close`` to find it, had the checkpoint
sync the copy and delete the journal: the acknowledged moves it held were gone. The
checkpoint now checks each log its journal wrote (one ``stat``) and keeps the journal as
``*.unfolded`` when a log no longer holds what was acknowledged.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from buraco_log import journal, log
from buraco_log.recorder import Recorder
from tests.recorder.sources import matches

src = matches()[0]


def _put_back(backup: Path, path: Path, how: str) -> None:
    if how == "cp":  # in place: the same file, truncated and written again
        subprocess.run(["cp", str(backup), str(path)], check=True)
    else:  # a restore that writes a copy and renames it into place
        tmp = path.with_name("restore.tmp")
        subprocess.run(["cp", str(backup), str(tmp)], check=True)
        os.rename(tmp, path)


def _journal_bytes(directory: Path, match: str) -> bytes:
    """The log ``match`` as the kept journals' records give it (from offset 0, in order)."""
    records = [r for _, p in journal.generations(str(directory), unfolded=True)
               for r in journal.read(p) if r.match == match]
    data = b""
    for record in sorted(journal.withdraw(records), key=lambda r: r.offset):
        assert record.offset <= len(data)
        data = data[:record.offset] + record.data
    return data


def _checkpoint(rec: Recorder, other: str) -> None:
    """Make the next round retire the journal (a move of another table), and wait for it."""
    done = rec.stats().checkpoints + rec.stats().checkpoint_failures
    rec.checkpoint_every = 0.0
    rec.append(other, src[0])
    deadline = time.monotonic() + 10
    while rec.stats().checkpoints + rec.stats().checkpoint_failures == done:
        assert time.monotonic() < deadline, "no checkpoint"
        time.sleep(0.005)
    rec.checkpoint_every = 600.0


@pytest.mark.parametrize(("held", "how"), [("open", "cp"), ("open", "rename"), ("closed", "cp"),
                                           ("closed", "rename"), ("closed", "seal")])
def test_an_older_copy_put_back_before_a_checkpoint_keeps_the_journal(
        tmp_path: Path, held: str, how: str) -> None:
    rec = Recorder(tmp_path, sync="journal", max_open=0, checkpoint_every=600, save_every=0)
    path = Path(rec.path_of("a"))
    backup = tmp_path / "backup.copy"
    try:
        for event in src[:10]:
            rec.append("a", event)
        shutil.copyfile(path, backup)
        for event in src[10:20]:
            rec.append("a", event)
        acknowledged = path.read_bytes()
        if held == "closed":  # out of the handle pool (2 logs for 7 tables)
            for table in "bcdefg":
                rec.append(table, src[0])
            assert rec._tables["a"].fd is None
        if how == "seal":  # the same events rewritten: no loss, nothing kept
            log.seal(path)
        else:
            _put_back(backup, path, how)
        _checkpoint(rec, "h")
        unfolded = journal.generations(str(tmp_path), unfolded=True)
        if how == "seal":
            assert not unfolded
        else:  # the journal that held the acknowledged moves was kept, not deleted
            assert unfolded
            assert _journal_bytes(tmp_path, "a") == acknowledged
    finally:
        rec.close()
    if how == "seal":
        assert log.read_events(path) == list(src[:20])
        assert not journal.generations(str(tmp_path), unfolded=True)
    else:
        assert _journal_bytes(tmp_path, "a") == acknowledged
        assert log.read_events(tmp_path / "h.blog") == [src[0]]
