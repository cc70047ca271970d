"""A command run on a really full disk: a 512 KiB tmpfs in a private mount namespace."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def small_disk(mount: Path, *command: str) -> subprocess.CompletedProcess[str] | None:
    """Run ``command`` in a private mount namespace with a 512 KiB tmpfs on ``mount``; None
    where that cannot be done (no unshare, not allowed to mount)."""
    script = 'mount -t tmpfs -o size=512k tmpfs "$0" || exit 97; exec "$@"'
    try:
        done = subprocess.run(["unshare", "-m", "sh", "-c", script, str(mount), *command],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)
    except FileNotFoundError:
        return None
    if done.returncode == 97 or (done.returncode and "unshare" in done.stderr):
        return None
    return done
