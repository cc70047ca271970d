"""Which files of the paths given are logs: directories walked in name order."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from buraco_log import log


def is_log_file(path: str | os.PathLike[str]) -> bool:
    """A binary log (by its magic bytes or its ``.blog`` name) or a JSON Lines log (by its
    ``.jsonl`` name). A ``.blog`` file whose header is damaged is still a log, so that checking
    a directory reports it instead of passing over it."""
    p = str(path)
    if p.endswith((".jsonl", ".blog")):
        return True
    try:
        with open(p, "rb") as f:
            return f.read(len(log.MAGIC)) == log.MAGIC
    except OSError:
        return False


_BACKUP = re.compile(r"\.bak(\.\d+)?$")  # copies `log.repair` keeps of the damaged bytes


def find_logs(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """Files as given; directories searched recursively for logs, in name order (hidden
    files and the ``.bak`` copies that repair leaves are skipped)."""
    out: list[str] = []
    for p in paths:
        p = str(p)
        if os.path.isdir(p):
            found = []
            for root, dirs, files in os.walk(p):
                dirs.sort()
                found += [os.path.join(root, f) for f in sorted(files)
                          if not f.startswith(".") and not _BACKUP.search(f)
                          and is_log_file(os.path.join(root, f))]
            out += found
        else:
            out.append(p)
    return out
