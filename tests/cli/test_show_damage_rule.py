"""`show` of a damaged log: its finding's line ends with the damage's rule, as every other
command's damaged-log line does (`[log.torn]`, `[log.chain]`; it ended with none)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

EXE = shutil.which("buraco-log")
TAMPERED = Path(__file__).resolve().parents[2] / "examples" / "disputes" / "tampered.log"


@pytest.mark.skipif(EXE is None, reason="the buraco-log command is not installed")
def test_show_of_a_damaged_log_names_the_rule(tmp_path: Path) -> None:
    assert EXE is not None
    torn = tmp_path / "torn.log"
    data = TAMPERED.read_bytes()
    torn.write_bytes(data[:1300])  # a cut in a record past the header: a torn tail
    for path, rule in ((torn, "[log.torn]"), (TAMPERED, "[log.chain]")):
        r = subprocess.run([EXE, "show", str(path)], capture_output=True, text=True)
        assert r.returncode == 1, r.stderr
        lines = r.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"buraco-log: error: {path}, byte "), lines
        assert lines[0].endswith(rule), lines
        assert r.stdout.strip(), r.stdout  # the summary is shown all the same
