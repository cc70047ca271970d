"""Soak (issue 13, item 12): the writer, seal, repair, audit and ingest run at once on one
directory, each in its own process, and are killed with SIGKILL and restarted at random for a
bounded time. Then: every acknowledged event is in its log, every log audits (clean, or with
its findings reported: never a traceback), and the archive holds exactly the matches a clean
ingest of the surviving logs holds. Slow: ``pytest -m slow tests/log/test_soak.py``."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from buraco_log import log
from tests.log.soak import match

ROOT = Path(__file__).resolve().parents[2]
MATCHES = 4
SECONDS = float(os.environ.get("SOAK_SECONDS", "40"))


class _Proc:
    def __init__(self, mode: str, directory: Path, archive: Path, seed: int) -> None:
        self.mode, self.args = mode, [str(directory), str(MATCHES), str(seed), str(archive)]
        self.lines: list[str] = []
        self.failures: list[str] = []
        self.proc: subprocess.Popen[str] | None = None
        self.start()

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.log.soak", self.mode, *self.args],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        proc = self.proc
        self.reader = threading.Thread(target=lambda: self.lines.extend(proc.stdout or ()),
                                       daemon=True)
        self.reader.start()

    def kill(self) -> None:
        assert self.proc is not None
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.reader.join()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        if self.proc.returncode not in (0, -signal.SIGKILL):
            self.failures.append(self.proc.stderr.read())
        self.proc.stdout.close()
        self.proc.stderr.close()

    def finished(self) -> bool:
        return self.proc is not None and self.proc.poll() == 0


def _rows(archive: Path) -> set[tuple[str, str, int]]:
    from buraco_log.archive.views import query

    table = query(archive, "SELECT match_id, digest, events FROM matches")
    return set(zip(*(table.column(c).to_pylist() for c in table.column_names), strict=True))


@pytest.mark.slow
def test_writer_seal_repair_audit_and_ingest_at_once_with_kills_lose_nothing(
    tmp_path: Path,
) -> None:
    from buraco_log import audit
    from buraco_log.archive.ingest import ingest

    logs, archive = tmp_path / "logs", tmp_path / "archive"
    logs.mkdir()
    for i in range(MATCHES):
        match(i)  # simulated once here: the processes simulate the same matches
    rng = random.Random(13)
    procs = {mode: _Proc(mode, logs, archive, rng.randrange(1000))
             for mode in ("writer", "seal", "repair", "audit", "ingest")}
    kills = 0
    deadline = time.monotonic() + SECONDS
    while time.monotonic() < deadline:
        time.sleep(rng.uniform(0.2, 1.5))
        victim = procs[rng.choice(["writer", "writer", "seal", "repair", "ingest"])]
        if victim.finished():  # the writer is done: nothing left to kill
            continue
        victim.kill()
        kills += 1
        victim.start()
    for p in procs.values():
        p.kill()
    failures = [f for p in procs.values() for f in p.failures]
    assert failures == [], failures[0]

    acked: dict[int, int] = {}
    for line in procs["writer"].lines:
        if line.startswith("ack "):
            _, i, seq = line.split()
            acked[int(i)] = max(acked.get(int(i), -1), int(seq))
    assert kills > 5 and sum(acked.values()) > 0
    complete = 0
    for i in range(MATCHES):
        path = logs / f"m{i}.blog"
        if not path.exists():
            assert i not in acked
            continue
        log.repair(path, lock_timeout=5)  # a writer killed mid-append may leave a torn tail
        kept = log.read_events(path)
        assert kept == list(match(i)[: len(kept)])
        assert len(kept) > acked.get(i, -1), f"m{i}: acknowledged events lost"
        complete += len(kept) == len(match(i))
        verdict = audit.audit_log(path)
        assert verdict.ok or verdict.findings  # clean, or its findings reported

    ingest([logs], archive)  # one last pass over the surviving logs
    clean = tmp_path / "clean"
    ingest([logs], clean)
    print(f"soak: {kills} kills, acknowledged up to {acked}, {complete} complete matches")
    rows = _rows(clean)
    assert len(rows) == complete  # every complete match, and only those, is archived
    assert _rows(archive) == rows
