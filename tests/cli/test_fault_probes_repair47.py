"""`repair` of a torn tail while another process holds the log's writer lock.

The record at the end may be the one a live writer is writing right now, and `log.repair`
refuses while the lock is held. The command offered first what it could not do: "would cut
every event ... (--force cuts them)", then with --force "another writer holds this log";
`--dry-run` said "would cut N bytes". Each now says at once that a writer holds the log.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from buraco_log import log
from tests import brokenlogs
from tests.cli.probes import ROOT

GOOD = ROOT / "examples" / "disputes" / "fair-thirteen.log"

HOLD = ("import sys\nfrom buraco_log import log\nlock = log.LogLock(sys.argv[1])\n"
        "print('held', flush=True)\nsys.stdin.read()\n")


@pytest.fixture
def torn(tmp_path: Path) -> Iterator[dict[str, Path]]:
    data = GOOD.read_bytes()
    paths = {"no event": tmp_path / "part.blog", "events": tmp_path / "tail.blog"}
    paths["no event"].write_bytes(data[: log.HEADER_SIZE + 5])
    brokenlogs.write(paths["events"], brokenlogs.match("thirteen", 2)[:12], sealed=False,
                     segment=1)
    brokenlogs.tear(paths["events"])
    assert log.verify(paths["events"]).events == 11
    yield paths


def cli(*argv: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli", *map(str, argv)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120, check=False)


def one_error_line(r: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("buraco-log: error: "), r.stderr
    return lines[0]


def _held(path: Path) -> subprocess.Popen[str]:
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


@pytest.mark.parametrize("case", ["no event", "events"])
def test_repair_of_a_held_log_says_a_writer_holds_it(torn: dict[str, Path], case: str) -> None:
    path = torn[case]
    before = path.read_bytes()
    holder = _held(path)
    try:
        for argv in (["repair", path], ["repair", "--force", path],
                     ["repair", "--dry-run", path]):
            r = cli(*argv)
            line = one_error_line(r)
            assert r.returncode == 1, (argv, r.stdout, r.stderr)
            assert "another writer holds this log" in line, (argv, line)
            assert "--force" not in line and "would cut" not in r.stdout, (argv, line)
    finally:
        assert holder.stdin is not None
        holder.communicate(timeout=30)
    assert path.read_bytes() == before
    # the writer gone, the same tail is a crash's: offered and cut as before
    r = cli("repair", "--dry-run", path)
    assert r.returncode == 0 and "would cut" in r.stdout, r.stderr


def test_verify_of_a_log_torn_at_its_first_event_names_repair_force(
        torn: dict[str, Path]) -> None:
    """It said "the 0 events before it are intact; `buraco-log repair` cuts it off", which
    repair refuses without --force (it would cut every event)."""
    line = one_error_line(cli("verify", torn["no event"]))
    assert "no event before it is intact; `buraco-log repair --force` cuts it off" in line, line
    line = one_error_line(cli("verify", torn["events"]))
    assert "the 11 events before it are intact; `buraco-log repair` cuts it off" in line, line
