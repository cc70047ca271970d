"""A batch audit's summary and exit status for entries that are no log and entries that could
not be read.

Before: a file that could not be read (a link to nothing, no permission) was counted among
those that are no log ("of which 2 are not logs"), and a batch holding a FIFO exited 1 where
the same FIFO audited alone, and `verify` of the batch (the worst of its statuses), exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOOD = ROOT / "examples" / "disputes" / "fair-thirteen.log"


def test_a_batch_counts_the_unreadable_apart_and_exits_with_its_worst_status(
        tmp_path: Path) -> None:
    club = tmp_path / "club"
    club.mkdir()
    (club / "a-good.blog").write_bytes(GOOD.read_bytes())
    os.mkfifo(club / "b-pipe.blog")  # no log: never opened
    os.symlink(club / "gone.blog", club / "c-dangling.blog")  # cannot be read
    done = subprocess.run([sys.executable, "-m", "cli", "audit", str(club), "-j", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
                          stdin=subprocess.DEVNULL, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2, (done.returncode, done.stdout)  # the FIFO's, as alone
    lines = done.stdout.splitlines()
    assert lines[-1] == ("audited 3 logs: 1 clean, 2 with findings (integrity 2), of which 1 is "
                         "not a log and 1 is unreadable [log.unreadable]"), lines[-1]
    # each entry's line names the rule the summary counts it by
    assert any(x.startswith("  integrity   unreadable [log.filetype]: not a regular file (a "
                            "FIFO)") for x in lines), lines
    assert any(x.startswith("  integrity   unreadable [log.unreadable]: a symbolic link to")
               for x in lines), lines
