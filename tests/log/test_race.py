"""A writer and a rewriter (``seal``) on one log, in two real processes: no acknowledged event
is ever lost (issue 13, item 1).

The probe that found the bug: a ``Writer`` opened the log, ``seal`` replaced the file, the
writer's lock was taken late (on the old, replaced file) and it went on acknowledging appends
to a file no longer at the path: 420 acknowledged events lost, 5 runs of 5. Here the processes
(``tests/log/racer.py``) are paused at named points of ``buraco_log.log`` to force each order,
then a randomized pair races through many logs with random pauses at every point.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from buraco_log import log
from buraco_log.errors import LogFormatError
from tests.log.racer import ROUNDS, SEED
from tests.log.samples import sample_events

ROOT = Path(__file__).resolve().parents[2]
TOTAL = 520  # the probe's writer acknowledged events up to seq 519


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.log.racer", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(path: Path, proc: subprocess.Popen[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None:
            raise AssertionError(f"process ended before {path.name}: {proc.stderr.read()}")  # type: ignore[union-attr]
        if time.monotonic() > deadline:
            raise AssertionError(f"{path.name} never reached")
        time.sleep(0.005)


def _finish(proc: subprocess.Popen[str]) -> list[str]:
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return out.splitlines()


def _acked(lines: list[str]) -> list[int]:
    return [int(line.split()[-1]) for line in lines if line.startswith("ack ")]


def _unsealed_log(tmp_path: Path, n: int = 100) -> Path:
    path = tmp_path / "m.blog"
    log.write_log(path, sample_events(TOTAL, SEED)[:n], sealed=False, validate=False)
    return path


def _assert_nothing_lost(path: Path, acked: list[int]) -> None:
    kept = log.read_events(path)  # verified: checksums, seqs, chain
    assert kept == sample_events(TOTAL, SEED)[: len(kept)]
    lost = [seq for seq in acked if seq >= len(kept)]
    assert lost == [], f"{len(lost)} acknowledged events lost"


def test_a_writer_that_opened_the_log_before_seal_replaced_it_appends_to_the_new_file(
    tmp_path: Path,
) -> None:
    """The probe's order: the writer opens, seal replaces the file, then the writer locks."""
    path = _unsealed_log(tmp_path)
    writer = _start("writer", str(path), str(TOTAL), "--pause", "lock.opened")
    _wait_for(Path(f"{path}.lock.opened.reached"), writer)  # holds the old file, unlocked
    sealer = _start("seal", str(path))
    assert _finish(sealer) == ["sealed 100"]
    Path(f"{path}.lock.opened.go").touch()
    lines = _finish(writer)
    acked = _acked(lines)
    assert lines[0] == "open 100" and acked == list(range(100, TOTAL))
    _assert_nothing_lost(path, acked)
    info = log.verify(path)
    assert info.sealed and info.events == TOTAL  # appended to the sealed file, the new one


def test_a_writer_waiting_for_the_lock_while_seal_renames_appends_to_the_new_file(
    tmp_path: Path,
) -> None:
    """The other order: seal holds the lock with the new file written; the writer opens the old
    file and waits for its lock; seal renames and lets go."""
    path = _unsealed_log(tmp_path)
    sealer = _start("seal", str(path), "--pause", "seal.before-rename")
    _wait_for(Path(f"{path}.seal.before-rename.reached"), sealer)
    Path(f"{path}.lock.opened.go").touch()  # the writer only reports reaching it
    writer = _start("writer", str(path), str(TOTAL), "--pause", "lock.opened", "--timeout", "60")
    _wait_for(Path(f"{path}.lock.opened.reached"), writer)  # opened the file about to go
    time.sleep(0.2)  # and is now waiting for seal's lock
    assert writer.poll() is None
    Path(f"{path}.seal.before-rename.go").touch()
    assert _finish(sealer) == ["sealed 100"]
    acked = _acked(_finish(writer))
    assert acked == list(range(100, TOTAL))
    _assert_nothing_lost(path, acked)
    assert log.verify(path).sealed


def test_seal_refuses_a_log_a_writer_holds_and_seals_it_once_the_writer_is_done(
    tmp_path: Path,
) -> None:
    path = _unsealed_log(tmp_path)
    with log.Writer(path, validate=False) as w:
        sealer = subprocess.run(
            [sys.executable, "-m", "tests.log.racer", "seal", str(path)],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
        )
        assert sealer.returncode != 0 and "another writer holds this log" in sealer.stderr
        waiting = _start("seal", str(path), "--timeout", "60")
        for event in sample_events(TOTAL, SEED)[100:150]:
            w.append(event)
        time.sleep(0.2)
        assert waiting.poll() is None  # still waiting for the writer's lock
    assert _finish(waiting) == ["sealed 150"]
    _assert_nothing_lost(path, list(range(150)))


def test_seal_holding_the_lock_refuses_a_writer_that_does_not_wait(tmp_path: Path) -> None:
    path = _unsealed_log(tmp_path)
    sealer = _start("seal", str(path), "--pause", "seal.locked")
    _wait_for(Path(f"{path}.seal.locked.reached"), sealer)
    with pytest.raises(LogFormatError) as exc:
        log.Writer(path, validate=False)
    assert exc.value.kind == "locked"
    Path(f"{path}.seal.locked.go").touch()
    assert _finish(sealer) == ["sealed 100"]


def _random_runs(tmp_path: Path, runs: int, seed: int) -> None:
    events = sample_events(ROUNDS * 5 + 3, SEED)
    for i in range(runs):
        log.write_log(tmp_path / f"r{i}.blog", events[:3], sealed=False, validate=False)
    writer = _start("random-writer", str(tmp_path), str(runs), str(seed))
    sealer = _start("random-sealer", str(tmp_path), str(runs), str(seed + 1))
    w_lines, s_lines = _finish(writer), _finish(sealer)
    acked: dict[int, list[int]] = {}
    for line in w_lines:
        if line.startswith("ack "):
            _, i, seq = line.split()
            acked.setdefault(int(i), []).append(int(seq))
    lost = 0
    for i in range(runs):
        kept = log.read_events(tmp_path / f"r{i}.blog")
        assert kept == events[: len(kept)]
        lost += sum(1 for seq in acked.get(i, []) if seq >= len(kept))
    assert sum(map(len, acked.values())) > 0 and any(s.startswith("sealed") for s in s_lines)
    assert lost == 0, f"{lost} acknowledged events lost in {runs} runs"


def test_a_writer_and_seal_racing_through_random_interleavings_lose_nothing(
    tmp_path: Path,
) -> None:
    _random_runs(tmp_path, 12, seed=1)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [11, 12])
def test_writer_and_seal_race_120_random_runs_each_losing_nothing(
    tmp_path: Path, seed: int
) -> None:
    _random_runs(tmp_path, 120, seed)


def test_a_writer_refuses_to_acknowledge_when_its_file_was_replaced_behind_the_lock(
    tmp_path: Path,
) -> None:
    """A program that ignores the lock (``mv``, an editor) renames another file into place:
    the next durable append fails instead of acknowledging an event nobody will find."""
    path = _unsealed_log(tmp_path, 10)
    other = tmp_path / "other.blog"
    log.write_log(other, sample_events(TOTAL, SEED)[:10], sealed=False, validate=False)
    events = sample_events(TOTAL, SEED)
    with log.Writer(path, validate=False) as w:
        w.append(events[10])
        os.replace(other, path)
        with pytest.raises(LogFormatError) as exc:
            w.append(events[11])
        assert "replaced or removed" in str(exc.value) and exc.value.kind == "io"
        with pytest.raises(LogFormatError):  # and it stays refused
            w.append(events[12])


def test_a_writer_refuses_to_acknowledge_when_its_file_was_removed(tmp_path: Path) -> None:
    path = _unsealed_log(tmp_path, 10)
    with log.Writer(path, validate=False) as w:
        os.unlink(path)
        with pytest.raises(LogFormatError, match="replaced or removed"):
            w.append(sample_events(TOTAL, SEED)[10])


def test_a_second_lock_on_a_log_is_refused_and_one_with_a_timeout_waits(tmp_path: Path) -> None:
    path = _unsealed_log(tmp_path, 10)
    with log.LogLock(path):
        with pytest.raises(LogFormatError) as exc:
            log.LogLock(path)
        assert exc.value.kind == "locked"
        t = time.monotonic()
        with pytest.raises(LogFormatError):
            log.LogLock(path, timeout=0.1)
        assert time.monotonic() - t >= 0.1
    with log.LogLock(path) as lock:
        assert lock.current() and lock.fd is not None


def test_a_lock_taken_on_a_replaced_file_moves_to_the_file_at_the_path(tmp_path: Path) -> None:
    path = _unsealed_log(tmp_path, 10)
    old = os.stat(path).st_ino
    seen: list[str] = []

    def replace_once(name: str) -> None:  # seal runs between this lock's open and its flock
        if name == "lock.opened" and not seen:
            seen.append(name)
            log._hook = None
            log.seal(path)

    log._hook = replace_once
    try:
        with log.LogLock(path) as lock:
            assert seen and lock.identity[1] != old and lock.current()
    finally:
        log._hook = None
