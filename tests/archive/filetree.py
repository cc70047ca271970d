"""Every name under a directory with its size and modification time, or with its bytes: what
a command that must write nothing (a refused query, a read) is checked against."""

from __future__ import annotations

import hashlib
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


def tree_digest(root: Path) -> str:
    """Every path, mode and byte under ``root``, hashed."""
    h = hashlib.sha256()
    for dirpath, dirs, names in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(dirs + names):
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            h.update(f"{os.path.relpath(path, root)}\0{st.st_mode}\0".encode())
            if os.path.isfile(path) and not os.path.islink(path):
                h.update(Path(path).read_bytes())
    return h.hexdigest()
