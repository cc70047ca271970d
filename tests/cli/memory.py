"""A regular file whose every read fails (EIO), and whether this system makes it fail."""

from __future__ import annotations

from pathlib import Path


def _read_fails(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            f.read(20)
    except OSError:
        return True
    return False


MEM = Path("/proc/self/mem")  # a regular file whose read fails (EIO)
