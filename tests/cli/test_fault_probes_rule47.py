"""A log damaged before its first event, read anyway, names the reader's rule as `verify` does.

`replay` and `moves` with `--ignore-integrity` said `[log.damage]` (a checksum that does not
match) of a JSON Lines log whose first event line is of an unknown type, where `verify` and the
warning on the same line said `[log.unknown]`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.probes import ROOT

GOLDEN = ROOT / "examples" / "golden" / "classic.jsonl"


def _run(*argv: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli", *map(str, argv)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120, check=False)


@pytest.mark.parametrize("command", ["replay", "moves"])
def test_damage_before_the_first_event_names_the_readers_rule(tmp_path: Path,
                                                             command: str) -> None:
    lines = GOLDEN.read_text().splitlines(keepends=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[0] + '{"t":"zz","seat":0}\n' + "".join(lines[2:5]))
    verify = _run("verify", bad)
    assert verify.returncode == 1 and verify.stderr.rstrip().endswith("[log.unknown]")
    r = _run(command, bad, "--ignore-integrity")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "before its first event: no table to show" in r.stderr, r.stderr
    assert r.stderr.rstrip().endswith(" [log.unknown]"), r.stderr  # the rule, last
    assert "[log.damage]" not in r.stderr, r.stderr
