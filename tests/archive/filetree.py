"""Every name under a directory with its size and modification time: what a command that
must write nothing (a refused query, a read) is checked against."""

from __future__ import annotations

import os
from pathlib import Path


def sized_tree(root: Path) -> list[tuple[str, int, int]]:
    """(relative path, size, mtime in ns) of every file and directory under ``root``."""
    out = []
    for dirpath, dirs, names in os.walk(root):
        for name in dirs + names:
            st = os.lstat(os.path.join(dirpath, name))
            out.append((os.path.relpath(os.path.join(dirpath, name), root), st.st_size,
                        st.st_mtime_ns))
    return sorted(out)
