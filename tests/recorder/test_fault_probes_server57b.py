"""Fault probes of the recorder behind the example server, round 57: out of descriptors.

A site's process shares its limit on open files between the recorder's logs and everything
else (a server's clients above all). When a log could not be opened for want of a descriptor
(EMFILE), its moves were refused "Too many open files", in one bare line, while the recorder
held idle logs open: with 150 clients under ``ulimit -n 256``, 1,117 of 20,000 moves of 5,000
tables (1,677 with ``sync="fsync"``), new tables and resumed ones alike. Now the recorder
closes its least recently used logs, keeps fewer open for a while (``stats().pool``), and
records the moves a round later; only where no log can be let go is a move refused, saying
the process is out of descriptors and that nothing was recorded. Also: with ``sync="syncfs"``
the first round's ``import ctypes`` of a process out of descriptors failed, taken for a failed
sync (every table of the round refused for good); and a checkpoint that could not open a
closed log to check it took it for a log lacking acknowledged moves, kept its journal as
``*.unfolded`` (never written back) and ``audit`` reported moves missing, with nothing lost.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from buraco_log import events as ev
from buraco_log import log
from buraco_log.errors import LogFormatError
from buraco_log.recorder import FileOps, Recorder, journal_notes
from tests.recorder.serverclient import ROOT, SERVER, frame, sources
from tests.recorder.sources import matches, source_of


@contextlib.contextmanager
def _spare_descriptors(spare: int) -> Iterator[None]:
    """Other code of the process takes every descriptor but ``spare`` (under a soft limit a
    little above what is open now), and lets go at the end."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + spare + 16,
                                                 hard))
    taken: list[int] = []
    try:
        with contextlib.suppress(OSError):
            while True:
                taken.append(os.open(os.devnull, os.O_RDONLY))
        for _ in range(spare):
            os.close(taken.pop())
        yield
    finally:
        for fd in taken:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _play(rec: Recorder, names: list[str], moves: int) -> tuple[dict[str, int], list[str]]:
    """Each table's first ``moves`` moves, a round of all tables at a time."""
    src = matches()
    acked = dict.fromkeys(names, 0)
    refused = []
    for k in range(moves):
        futures = {t: rec.submit(t, source_of(t, src)[k]) for t in names if acked[t] == k}
        for table, future in futures.items():
            try:
                future.result(30)
                acked[table] += 1
            except Exception as exc:
                refused.append(str(exc))
    return acked, refused


@pytest.mark.parametrize("sync", [pytest.param("fsync", marks=pytest.mark.slow), "journal"])
def test_out_of_descriptors_the_recorder_closes_idle_logs_and_records_every_move(
        tmp_path: Path, sync: str) -> None:
    rec = Recorder(tmp_path, sync=sync, max_open=200, window=0.001)
    try:
        names = [f"t{i}" for i in range(32)]
        with _spare_descriptors(16):
            acked, refused = _play(rec, names, 2)
        stats = rec.stats()
    finally:
        rec.close()
    assert refused == [] and set(acked.values()) == {2}, refused[:3]
    assert stats.short_of_descriptors >= 1 and stats.pool < 200 - 18, stats
    for table in names:
        assert len(log.read_events(tmp_path / f"{table}.blog")) == 2


def test_a_log_that_cannot_be_opened_while_none_can_be_let_go_is_refused_saying_why(
        tmp_path: Path) -> None:
    """``read``: a table read afresh from its log (forgotten); ``idle``: a table whose log was
    closed as idle, reopened by its round. Every descriptor is taken, none by a log."""
    rec = Recorder(tmp_path, sync="fsync", max_open=200, idle_timeout=0.01)
    src = {t: source_of(t, matches()) for t in ("read", "idle")}
    refusals = []
    try:
        for table in src:
            assert rec.append(table, src[table][0]) == 0
        rec.forget("read")
        deadline = time.monotonic() + 10
        while rec.stats().open_handles:  # "idle" closed as idle
            assert time.monotonic() < deadline
            time.sleep(0.005)
        with _spare_descriptors(0):
            for table in src:
                with pytest.raises(LogFormatError) as refused:
                    rec.append(table, src[table][1])
                refusals.append(refused.value)
        for table in src:  # sent again, once there is a descriptor
            assert rec.append(table, src[table][1]) == 1
    finally:
        rec.close()
    for table, exc in zip(src, refusals, strict=True):
        assert exc.kind == "io" and exc.path == str(tmp_path / f"{table}.blog"), exc
        assert "out of file descriptors" in exc.message, exc.message
        assert "nothing was recorded: send it again" in exc.message, exc.message
        assert len(log.read_events(tmp_path / f"{table}.blog")) == 2


class _TakeAllAtCheckpoint(FileOps):
    """At a checkpoint's syncfs, other code takes every descriptor until the journal goes."""

    def __init__(self) -> None:
        self.held: list[int] = []
        self.armed = False

    def syncfs(self, fd: int) -> None:
        super().syncfs(fd)
        if self.armed:
            self.armed = False
            with contextlib.suppress(OSError):
                while True:
                    self.held.append(os.open(os.devnull, os.O_RDONLY))

    def fsync_dir(self, fd: int) -> None:
        while self.held:
            os.close(self.held.pop())
        super().fsync_dir(fd)


def test_a_checkpoint_out_of_descriptors_keeps_its_journal_whole_not_unfolded(
        tmp_path: Path) -> None:
    ops = _TakeAllAtCheckpoint()
    rec = Recorder(tmp_path, sync="journal", max_open=30, checkpoint_every=3600, ops=ops)
    names = [f"t{i}" for i in range(12)]  # more than its 4 log slots: most logs are closed
    try:
        acked, refused = _play(rec, names, 2)
        assert refused == [] and set(acked.values()) == {2}
        with _spare_descriptors(64):
            ops.armed, rec.checkpoint_every = True, 0.0
            src = source_of("t0", matches())
            rec.append("t0", src[2])
            deadline = time.monotonic() + 10
            while rec.stats().checkpoints + rec.stats().checkpoint_failures == 0:
                assert time.monotonic() < deadline
                time.sleep(0.002)
        stats = rec.stats()
    finally:
        rec.close()
    assert not ops.armed
    assert stats.checkpoint_failures == 1 and stats.checkpoints == 0, stats
    assert not list(tmp_path.glob("*.unfolded")), journal_notes(tmp_path)
    Recorder(tmp_path, sync="journal").close()  # the next recorder writes it back
    assert journal_notes(tmp_path) == []
    assert {t: len(log.read_events(tmp_path / f"{t}.blog")) for t in names} == {
        t: 3 if t == "t0" else 2 for t in names}


@pytest.mark.slow
@pytest.mark.parametrize("sync", ["fsync", "syncfs", "journal"])
def test_a_fresh_process_out_of_descriptors_records_every_move(tmp_path: Path,
                                                               sync: str) -> None:
    """A process of its own: ``syncfs``'s ``import ctypes`` at the first round found no
    descriptor (in the test process it is imported already)."""
    done = subprocess.run([sys.executable, "-m", "tests.recorder.descriptors_child",
                           str(tmp_path), sync, "300", "60", "6"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["refused"] == {} and result["wrong"] == [], result
    assert result["acked"] == 300 * 6 and result["short"] >= 1, result


async def _client(port: int, tables: list[str], played: dict[str, list[ev.AnyEvent]],
                  moves: int, tally: collections.Counter[str], acked: list[tuple[str, int]],
                  ) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    for k in range(moves):
        writer.write(b"".join(frame(["play", t, msgspec.Raw(ev.encode(played[t][k]))])
                              for t in tables))
        for _ in tables:
            try:
                head = await reader.readexactly(4)
                reply: list[Any] = msgspec.msgpack.decode(
                    await reader.readexactly(int.from_bytes(head, "big")))
            except (asyncio.IncompleteReadError, ConnectionError):
                tally["hung up"] += 1
                continue
            tally[reply[0] if reply[0] == "ok" else f"{reply[2]}: {reply[3]}"] += 1
            if reply[0] == "ok":
                acked.append((reply[1], reply[2]))
    writer.close()


@pytest.mark.slow
def test_a_server_whose_clients_take_most_descriptors_records_every_move(
        tmp_path: Path) -> None:
    """``ulimit -n 256``, the recorder's default pool (128), 150 clients let in
    (``--max-clients 200``), 3,000 tables: before, 600 to 1,700 moves were refused "Too many
    open files"."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    server = subprocess.Popen([sys.executable, str(SERVER), str(tmp_path), "--sync", "journal",
                               "--max-clients", "200"], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, preexec_fn=limit)
    assert server.stdout is not None
    port = int(server.stdout.readline().split()[2])
    played = sources(3000, "fd57")
    names = list(played)
    tally: collections.Counter[str] = collections.Counter()
    acked: list[tuple[str, int]] = []

    async def everyone() -> None:
        await asyncio.gather(*[_client(port, names[i::150], played, 3, tally, acked)
                               for i in range(150)])

    try:
        asyncio.run(everyone())
    finally:
        server.terminate()
        out, err = server.communicate(timeout=120)
    assert tally == {"ok": 9000}, tally.most_common(4)
    assert err == "" and out.startswith("stopped"), err
    stats = json.loads(out.split(" ", 1)[1])
    assert stats["short_of_descriptors"] >= 1, stats
    held = {t: len(log.read_events(tmp_path / f"{t}.blog")) for t in names}
    assert all(held[t] > seq for t, seq in acked) and set(held.values()) == {3}


def _limited(address_space: int) -> Any:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    return limit


@pytest.mark.slow
def test_a_server_that_cannot_start_its_threads_says_so_and_exits(tmp_path: Path) -> None:
    """``ulimit -v 1000000``: the default ``fsync`` server's 16 sync threads reserve more
    address space than that (an arena each). Before, it started, and every table of its first
    rounds was refused for good ("recorder error: RuntimeError("can't start new thread")",
    "MemoryError"); some clients were hung up on without a word."""
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    done = subprocess.run([sys.executable, str(SERVER), str(tmp_path / "logs"), "--sync",
                           "fsync"], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          preexec_fn=_limited(1_000_000 << 10), env=env)
    assert done.returncode == 1 and done.stdout == "", (done.returncode, done.stdout)
    assert done.stderr.count("\n") == 1, done.stderr
    assert "cannot start the recorder's threads" in done.stderr and "ulimit -v" in done.stderr
    # with the C library's arenas bounded and fewer threads, the same limit serves
    server = subprocess.Popen([sys.executable, str(SERVER), str(tmp_path / "logs"), "--sync",
                               "fsync", "--sync-threads", "4"], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              preexec_fn=_limited(1_000_000 << 10),
                              env={**env, "MALLOC_ARENA_MAX": "2"})
    assert server.stdout is not None
    port = int(server.stdout.readline().split()[2])
    played = sources(200, "as57")
    tally: collections.Counter[str] = collections.Counter()
    acked: list[tuple[str, int]] = []

    async def everyone() -> None:
        names = list(played)
        await asyncio.gather(*[_client(port, names[i::20], played, 3, tally, acked)
                               for i in range(20)])

    try:
        asyncio.run(everyone())
    finally:
        server.terminate()
        _, err = server.communicate(timeout=60)
    assert tally == {"ok": 600} and err == "", (tally.most_common(3), err[-2000:])


def test_a_recorder_refused_as_it_opens_leaves_no_thread_behind(tmp_path: Path) -> None:
    with Recorder(tmp_path):
        before = threading.active_count()
        for _ in range(3):
            with pytest.raises(LogFormatError) as refused:
                Recorder(tmp_path)  # another recorder holds the directory
            assert refused.value.kind == "locked"
        assert threading.active_count() == before
