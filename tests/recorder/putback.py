"""An older copy of a log put back under the recorder, and what its journals hold."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from buraco_log import journal


def put_back(backup: Path, path: Path, how: str) -> None:
    """Put ``backup`` back at ``path`` as a program that ignores the log's lock would."""
    if how == "cp":  # in place: the same file, truncated and written again
        subprocess.run(["cp", str(backup), str(path)], check=True)
    else:  # a restore that writes a copy and renames it into place (rsync, tar)
        tmp = path.with_name("restore.tmp")
        subprocess.run(["cp", str(backup), str(tmp)], check=True)
        os.rename(tmp, path)


def journal_bytes(directory: Path, match: str) -> bytes:
    """The log ``match`` as the kept journals' records give it (from offset 0, in order)."""
    records = [r for _, p in journal.generations(str(directory), unfolded=True)
               for r in journal.read(p) if r.match == match]
    data = b""
    for record in sorted(journal.withdraw(records), key=lambda r: r.offset):
        assert record.offset <= len(data)
        data = data[:record.offset] + record.data
    return data
