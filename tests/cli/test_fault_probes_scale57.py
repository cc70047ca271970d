"""One enormous log at the command line: a tail of zeros past 4 GiB (what a crash leaves on a
file system that grew the file before its data landed), cut by `repair`."""

from __future__ import annotations

import os
from pathlib import Path

from buraco_log import log
from tests.log import longmatch
from tests.log.cli_run import run

PAST_4_GIB = (1 << 32) + 4096


def test_repair_of_a_zero_tail_past_4_gib_names_the_backup_as_the_bytes_cut(tmp_path: Path
                                                                            ) -> None:
    path = tmp_path / "marathon.blog"
    with log.Writer(path, validate=False, batched=True) as writer:
        writer.append_many(longmatch.events(300))
    size = path.stat().st_size
    os.truncate(path, PAST_4_GIB)  # sparse: no disk space
    r = run("repair", path)
    assert r.code == 0 and r.err == "", r
    cut = PAST_4_GIB - size
    # it said "original kept in LOG.bak" of a file holding the cut zeros alone: a user who
    # kept that "original" and deleted the log lost every event
    assert r.out == (f"{path}: cut {cut} bytes at byte {size} (zero-filled tail (a crash "
                     f"before the data reached the disk)); 300 events kept; the bytes cut kept "
                     f"in {path}.bak (`cat LOG {path}.bak` gives the original back)\n"), r.out
    backup = Path(f"{path}.bak")
    assert path.stat().st_size == size and backup.stat().st_size == cut
    assert backup.stat().st_blocks * 512 < 1 << 20  # the zeros cost no disk space
