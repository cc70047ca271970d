"""The seal and repair races, with every system call of theirs failed or killed under strace.

`seal` and `repair` run again and again on a log while another process appends to it (the
recorder, which closes idle logs and reopens the file a seal rewrote, or a `log.Writer` that
opens and closes it around a few events), each run with one system call of its own made to
fail (`strace -e inject=fsync:error=EIO:when=N`) or killed there (`signal=KILL`). After
each race every acknowledged event is in the log, the log verifies, and every run that was
not killed answered in one line, without a traceback (tests/log/sealrace58.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from buraco_log import log
from tests.log.samples import match_events
from tests.log.sealrace58 import run_case

REPO = Path(__file__).resolve().parents[2]
STRACE = shutil.which("strace")
needs_strace = pytest.mark.skipif(STRACE is None, reason="strace is not installed")

# The system calls seal makes after Python's start (strace -c; Python's own start makes
# none of them, so the Nth is seal's Nth), and how many times: the log's lock and the sealed
# copy's (flock), the copy's header and records (pwrite64), its fsyncs and the directory's,
# the creation name's removal, the mode and owner, the rename, and the report on stdout.
SEAL_CALLS = {"flock": 3, "pwrite64": 3, "fsync": 3, "link": 1, "unlinkat": 1, "fchmod": 1,
              "fchown": 1, "renameat": 1, "write": 1}
# repair: the lock, the backup's records and size, the fsyncs (backup, its directory, the
# cut log), the cut and the report
REPAIR_CALLS = {"flock": 2, "pwrite64": 1, "ftruncate": 2, "fsync": 4, "write": 1}
ERRORS = {"flock": "ENOLCK", "pwrite64": "ENOSPC", "fsync": "EIO", "link": "EIO",
          "unlinkat": "EIO", "fchmod": "EPERM", "fchown": "EPERM", "renameat": "EIO",
          "ftruncate": "EIO", "write": "EIO"}


def _injections(calls: dict[str, int]) -> list[str]:
    out = []
    for name, count in calls.items():
        for when in range(1, count + 1):
            out.append(f"{name}:error={ERRORS[name]}:when={when}")
            out.append(f"{name}:signal=KILL:when={when}")
    return out


def _torn_prefix(directory: Path, events: int = 100) -> None:
    """A log of the match's first ``events`` events and half a record after them (a writer
    killed in the middle of its write), for `repair` to cut while the recorder appends."""
    path = directory / "t0.blog"
    with log.Writer(path, sealed=False, validate=False) as w:
        for event in match_events()[:events]:
            w.append(event)
    whole = log.encode_log(match_events()[: events + 3], sealed=False, batch_events=events)
    with open(path, "ab") as f:
        f.write(whole[path.stat().st_size:][:30])
    (directory / "prefix").write_text(str(events))


@needs_strace
def test_seal_whose_fsync_fails_names_the_log_in_one_line_and_changes_nothing(
        tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    with log.Writer(path, sealed=False, validate=False) as w:
        w.append_many(list(match_events()[:20]))
    before = path.read_bytes()
    p = subprocess.run([str(STRACE), "-f", "-qq", "-o", "/dev/null", "--seccomp-bpf", "-e",
                        "trace=fsync", "-e", "inject=fsync:error=EIO:when=1", sys.executable,
                        "-m", "cli.main", "seal", str(path)], capture_output=True, text=True,
                       timeout=30, cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.splitlines() == [
        f"buraco-log: error: {path}: writing the sealed copy beside it failed (the log is "
        "unchanged): Input/output error"]
    assert path.read_bytes() == before and sorted(tmp_path.iterdir()) == [path]


@needs_strace
@pytest.mark.slow
@pytest.mark.parametrize("kind", ["writer", "recorder"])
@pytest.mark.parametrize("inject", _injections(SEAL_CALLS))
def test_seal_beside_an_appender_with_a_system_call_failed_or_killed_loses_nothing(
        tmp_path: Path, kind: str, inject: str) -> None:
    assert run_case(kind, "seal", inject, str(tmp_path)) == []


@needs_strace
@pytest.mark.slow
@pytest.mark.parametrize("inject", [None, *_injections(REPAIR_CALLS)])
def test_repair_beside_the_recorder_with_a_system_call_failed_or_killed_loses_nothing(
        tmp_path: Path, inject: str | None) -> None:
    _torn_prefix(tmp_path)
    assert run_case("recorder", "repair", inject, str(tmp_path)) == []
