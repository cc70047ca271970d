"""An audit that read no event says so, and nothing about legality or scores.

A file that is no log (bad magic), or one cut inside its first record, got the full report:
"0 events legal; match not finished" and "recorded scores agree with the recomputed ones",
as if something had been checked and found fine.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTE = "  note        no event was read: deals, legality and scores were not checked"


def test_a_file_nothing_was_read_from_has_no_legality_or_scoring_lines(tmp_path: Path) -> None:
    junk = tmp_path / "junk.blog"
    junk.write_bytes(b"PK\x03\x04 not a match log at all")
    good = ROOT / "examples" / "golden" / "classic.jsonl"
    r = subprocess.run([sys.executable, "-m", "cli.main", "audit", str(junk), str(good)],
                       cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 2, r.stdout + r.stderr  # junk.blog is no log: the batch's worst
    out = r.stdout.split(f"{good}:")
    junk_part, good_part = out[0], out[1]
    assert junk_part.startswith(f"{junk}: FINDINGS (1)")
    assert "bad magic" in junk_part and NOTE in junk_part.splitlines()
    assert "  legality    " not in junk_part and "  scoring     " not in junk_part
    # a log that was read keeps every section, and no such note
    assert "  legality    " in good_part and "  scoring     " in good_part
    assert NOTE not in good_part
