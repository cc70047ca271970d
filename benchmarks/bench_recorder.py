"""Recording live matches: the Recorder against one Writer per table, in the same run.

    python benchmarks/bench_recorder.py [--quick] [--tables 10,200,1000,10000]
        [--modes paced,saturated] [--seconds S] [--pace P] [--dir DIR] [--max-open N[,M,...]]
        [--syncs fsync,syncfs,journal] [--checkpoint-every S] [--save-every S] [--gc-freeze S]
        [--gc-young N]
        [--no-baseline] [--no-syncfs] [--restart 10000] [--journal-restart 2000x20]
    python benchmarks/bench_recorder.py --floor [--tables 200,1000]
    python benchmarks/bench_recorder.py --ceiling --tables 1000 --seconds 5
    python benchmarks/bench_recorder.py --check-cost --tables 1000,10000

N tables play real matches (legal moves by the simulator's bots, validated on append). Each
table is one asyncio task that appends a move and waits for its acknowledgement:
- paced: one move per table every P seconds (3 s; ``--quick`` uses 1 s and says so), each
  table on its own schedule from a random phase; a paced move's latency counts from when it
  was due (a move the busy process could not even send in time counts as late);
- saturated: the next move as soon as the last one is acknowledged.
Measuring starts two periods (paced) or one second (saturated) after every table made its
first move. The ways of recording, each in the same run: ``recorder``
(``buraco_log.recorder``, one fsync per touched file per round, its default handle pool
unless ``--max-open``), ``rec-syncfs`` (``sync="syncfs"``: one syncfs per round),
``rec-journal`` (``sync="journal"``: one journal fdatasync per round, the logs made durable by
a checkpoint every ``--checkpoint-every`` s; ``journal-unchecked``, ``rec-jnocheck``: the same
without the checkpoint's check of its logs, one ``stat`` each, to measure it;
``fsync-untailed``, ``syncfs-untailed``, ``journal-untailed``, ``rec-notail``, ``rec-snotail``,
``rec-jnotail``: the same without a round's read-back of the last bytes it wrote in each open
log, one ``pread`` each, to measure it); ``--syncs`` picks among them. The baseline
``writers``: one ``log.Writer`` per table, each append (write + fsync) run in a pool of 64
threads, every Writer open for the whole run. ``--gc-freeze S`` calls ``gc.freeze()`` every S
seconds while the tables play, and ``--gc-young N`` sets the collector's youngest threshold to N
(what a server with thousands of tables may do: see docs/recorder.md).
Printed per run: events/s, p50/p99 acknowledgement latency, CPU per event (process time of
all threads, the driver included), syncs per event (file fsyncs + syncfs + directory fsyncs +
journal syncs + checkpoint fsyncs), the most file descriptors open, failures and the slowest
acknowledgement (``--save-every S``: the recorder saves the tables' states every S s, 60 by
default, so a 20 s run sees no save unless this is lower); then each ratio
against the last way in the run (events/s, p50, p99, CPU). Then the restart figures: a new
recorder reloading ``--restart`` mid-match logs (read, verify, replay to validate the next
move) with no saved state, after a clean close (from the saved states), and after a crash 5
moves a table past the last save; and the writing-back of a journal left alone (every log
lost, ``--journal-restart TABLESxMOVES``). ``--ceiling`` prints the CPU ceiling of one process
instead: the recorder with syncs that cost nothing (validating and not, saturated), and the
driver alone (saturated and paced) against a stand-in that only settles futures in rounds.
Goals: >= 25,000 events/s at N=1,000 (saturated); p99 < 20 ms at 10,000 paced tables.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import os
import random
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import msgspec

from buraco_log import events as ev
from buraco_log import log
from buraco_log.recorder import SAVED_NAME, FileOps, Recorder
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match


class Result(msgspec.Struct):
    name: str
    tables: int
    mode: str
    events: int
    seconds: float
    p50_ms: float
    p99_ms: float
    cpu_us: float
    fsyncs_per_event: float
    max_fds: int
    failures: int
    max_ms: float = 0.0  # the slowest acknowledgement measured
    reopened: float = 0.0  # closed logs reopened per acknowledged event (the whole run)

    @property
    def rate(self) -> float:
        return self.events / self.seconds if self.seconds else 0.0


def sources(count: int) -> list[tuple[ev.AnyEvent, ...]]:
    return [
        tuple(simulate_match(PRESETS["classic"], 2 + 2 * (i % 2), seed="bench", index=i))
        for i in range(count)
    ]


class FdWatch:
    """Samples the number of open descriptors of this process every 250 ms (listing 10,000
    descriptors takes milliseconds of CPU, under the GIL: more often would slow what it
    measures; the pools hold their peak for whole seconds, so the peak is still seen)."""

    def __init__(self) -> None:
        self.most = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            self.most = max(self.most, len(os.listdir("/proc/self/fd")))

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.most


Append = Callable[[str, ev.AnyEvent], Awaitable[int]]


async def drive(
    append: Append,
    tables: int,
    srcs: list[tuple[ev.AnyEvent, ...]],
    pace: float | None,
    seconds: float,
    prefix: str,
    marks: list[tuple[float, int]],
    fsyncs: Callable[[], int],
) -> tuple[int, list[float], float, int]:
    """Run ``tables`` tables for ``seconds``; returns events, latencies, elapsed, failures.
    Only the time after every table has made its first move (its log exists) and then two more
    periods (paced) or one second (saturated) have passed is measured: the 10,000 first moves
    create 10,000 logs, a burst that takes seconds to settle. ``marks`` gets (process time,
    fsyncs) at the start and at the end of that time."""
    latencies: list[float] = []
    counted = [0]
    failures = [0]
    started = asyncio.Event()
    measuring = [False]
    ready = [0]
    stop_at = [0.0]

    async def table(i: int) -> None:
        gen = 0
        rng = random.Random(i)
        name, src, seq = f"{prefix}{i}-{gen}", srcs[i % len(srcs)], 0
        first = True
        # Paced: each table keeps its own schedule, one move every `pace` seconds from a random
        # phase, whatever the latency; a stall of the process does not line tables up. The
        # latency of a paced move counts from when it was due, so a move that could not even be
        # sent in time (the process busy) counts as late as its player sees it.
        due = time.perf_counter() + (rng.uniform(0, pace) if pace else 0.0)
        if pace:
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
        while True:
            t = time.perf_counter()
            origin = min(t, due) if pace else t
            try:
                await append(name, src[seq])
            except Exception:
                failures[0] += 1
                return
            now = time.perf_counter()
            if first:
                first = False
                ready[0] += 1
                if ready[0] == tables:
                    started.set()
            elif measuring[0]:
                if now > stop_at[0]:
                    return
                latencies.append(now - origin)
                counted[0] += 1
            seq += 1
            if seq == len(src):
                gen += 1
                name, src, seq = f"{prefix}{i}-{gen}", srcs[(i + gen) % len(srcs)], 0
            if pace:
                due += pace
                if now > due + pace:  # a whole period behind (its first move, while 10,000
                    due = now + rng.uniform(0, pace)  # logs were created): a fresh phase
                await asyncio.sleep(max(0.0, due - now))

    async def freezer() -> None:
        # What a server with thousands of tables may do: move the objects alive now out of
        # the cyclic collector's reach, so a full collection does not walk every table's state
        # (about 15 ms per 1,000 tables, in one pause).
        while True:
            await asyncio.sleep(GC_FREEZE[0])
            gc.freeze()

    freezing = asyncio.create_task(freezer()) if GC_FREEZE[0] else None
    old_threshold = gc.get_threshold()
    if GC_YOUNG[0]:
        gc.set_threshold(GC_YOUNG[0], *old_threshold[1:])
    tasks = [asyncio.create_task(table(i)) for i in range(tables)]
    await started.wait()
    await asyncio.sleep(2 * pace if pace else 1.0)
    measuring[0] = True
    marks.append((time.process_time(), fsyncs()))
    begin = time.perf_counter()
    stop_at[0] = begin + seconds
    await asyncio.sleep(seconds)
    marks.append((time.process_time(), fsyncs()))
    counted_now = counted[0]
    await asyncio.gather(*tasks)
    gc.set_threshold(*old_threshold)
    if freezing is not None:
        freezing.cancel()
        gc.unfreeze()
    return counted_now, latencies, seconds, failures[0]


def measure(
    name: str,
    tables: int,
    mode: str,
    run: Callable[[list[tuple[float, int]]], tuple[int, list[float], float, int]],
) -> Result:
    watch = FdWatch()
    marks: list[tuple[float, int]] = []
    events, lat, elapsed, failures = run(marks)
    (c0, f0), (c1, f1) = marks
    most = watch.stop()
    lat.sort()
    q = statistics.quantiles(lat, n=100) if len(lat) > 1 else [0.0] * 99
    return Result(
        name=name,
        tables=tables,
        mode=mode,
        events=events,
        seconds=elapsed,
        p50_ms=q[49] * 1e3,
        p99_ms=q[98] * 1e3,
        max_ms=lat[-1] * 1e3 if lat else 0.0,
        cpu_us=(c1 - c0) / max(1, events) * 1e6,
        fsyncs_per_event=(f1 - f0) / max(1, events),
        max_fds=most,
        failures=failures,
    )


def run_recorder(
    directory: Path,
    tables: int,
    srcs: list[tuple[ev.AnyEvent, ...]],
    pace: float | None,
    seconds: float,
    mode: str,
    max_open: int | None = None,
    *,
    sync: str = "fsync",
    checkpoint_every: float = 10.0,
    save_every: float = 60.0,
) -> Result:
    unchecked = sync == "journal-unchecked"
    way = sync.removesuffix("-untailed")
    rec = Recorder(directory, max_open=max_open, window=0.002,
                   sync="journal" if unchecked else way,
                   checkpoint_every=checkpoint_every, save_every=save_every)
    if unchecked:
        rec._check_retired = False
    if sync.endswith("-untailed"):
        rec._check_tails = False

    def syncs() -> int:
        s = rec.stats()
        return s.fsyncs + s.syncfs + s.dir_fsyncs + s.journal_syncs + s.checkpoint_fsyncs

    def run(marks: list[tuple[float, int]]) -> tuple[int, list[float], float, int]:
        return asyncio.run(drive(rec.append_async, tables, srcs, pace, seconds, "r", marks, syncs))

    try:
        name = {"fsync": "recorder", "syncfs": "rec-syncfs", "journal": "rec-journal",
                "journal-unchecked": "rec-jnocheck", "fsync-untailed": "rec-notail",
                "syncfs-untailed": "rec-snotail", "journal-untailed": "rec-jnotail"}[sync]
        result = measure(name, tables, mode, run)
        done = rec.stats()
        result.reopened = done.reopened / max(1, done.events)
        return result
    finally:
        rec.close()


def run_writers(
    directory: Path,
    tables: int,
    srcs: list[tuple[ev.AnyEvent, ...]],
    pace: float | None,
    seconds: float,
    mode: str,
    max_open: int | None = None,
) -> Result:
    del max_open  # one descriptor per table, whatever the limit
    writers: dict[str, log.Writer] = {}
    pool = ThreadPoolExecutor(64)
    done = [0]

    def append_sync(match: str, event: ev.AnyEvent) -> int:
        w = writers.get(match)
        if w is None:
            w = writers[match] = log.Writer(directory / f"{match}.blog")
            if event.seq == 0:
                prev = match.rsplit("-", 1)
                old = writers.pop(f"{prev[0]}-{int(prev[1]) - 1}", None)
                if old is not None:
                    old.close()
        seq = w.append(event)
        done[0] += 1
        return seq

    async def append(match: str, event: ev.AnyEvent) -> int:
        return await asyncio.get_running_loop().run_in_executor(pool, append_sync, match, event)

    def run(marks: list[tuple[float, int]]) -> tuple[int, list[float], float, int]:
        fsyncs = lambda: done[0]  # noqa: E731  (a Writer fsyncs every append)
        return asyncio.run(drive(append, tables, srcs, pace, seconds, "w", marks, fsyncs))

    try:
        return measure("writers", tables, mode, run)
    finally:
        pool.shutdown()
        for w in writers.values():
            w.close()


GC_FREEZE = [0.0]  # --gc-freeze: seconds between gc.freeze() calls (0: never)
GC_YOUNG = [0]  # --gc-young: the youngest generation's threshold while tables play (0: as is)
_SHORT = {"recorder": "fsync", "rec-syncfs": "syncfs", "rec-journal": "journal",
          "rec-jnocheck": "jnocheck", "rec-notail": "notail", "rec-snotail": "snotail",
          "rec-jnotail": "jnotail",
          "writers": "wr"}


def _short(name: str) -> str:
    """A result's short name; a pool size (``@N``) is kept."""
    way, at, pool = name.partition("@")
    return _SHORT[way] + at + pool


def _syncfs(fd: int) -> None:
    import ctypes

    if ctypes.CDLL(None, use_errno=True).syncfs(fd) != 0:
        raise OSError(ctypes.get_errno(), "syncfs failed")


def _fsync_each(fds: list[int]) -> None:
    for fd in fds:
        os.fsync(fd)


def floor(directory: Path, tables: int, rounds: int, threads: int = 16) -> list[str]:
    """The disk's floor, without encoding, validation or Python bookkeeping: every round
    writes 120 bytes to each of ``tables`` files, then (a) fsyncs every file from ``threads``
    threads (the recorder's default), (b) calls syncfs once (its ``sync="syncfs"``), or
    (c) writes the same bytes to one journal and fdatasyncs it once (what a shared journal
    would do, before folding into the logs)."""
    fds = [os.open(directory / f"f{i}", os.O_RDWR | os.O_CREAT, 0o644) for i in range(tables)]
    journal = os.open(directory / "journal", os.O_RDWR | os.O_CREAT, 0o644)
    data = b"x" * 120
    out = []
    with ThreadPoolExecutor(threads) as pool:
        for kind in ("per-file fsync", "one syncfs", "one journal fdatasync"):
            ends = [0] * tables
            jend = 0
            wall, cpu = time.perf_counter(), time.process_time()
            for _ in range(rounds):
                for i, fd in enumerate(fds):
                    os.pwrite(fd, data, ends[i])
                    ends[i] += len(data)
                if kind == "per-file fsync":
                    slices = [fds[k::threads] for k in range(threads)]
                    list(pool.map(_fsync_each, slices))
                elif kind == "one syncfs":
                    _syncfs(fds[0])
                else:
                    blob = data * tables
                    os.pwrite(journal, blob, jend)
                    jend += len(blob)
                    os.fdatasync(journal)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            n = rounds * tables
            out.append(
                f"floor    {tables:>6} {kind:22} {n / wall:>9.0f} events/s "
                f"{wall / rounds * 1e3:>7.2f} ms/round {cpu / n * 1e6:>6.1f} us CPU/event"
            )
    out.append(fsync_latency(fds, threads))
    for fd in [*fds, journal]:
        os.close(fd)
    return out


def fsync_latency(fds: list[int], threads: int = 16, seconds: float = 3.0) -> str:
    """The latency of one fsync of one small write, ``threads`` files at a time: the floor
    under any acknowledgement latency of a per-file fsync (a round waits for its slowest)."""
    lat: list[float] = []
    stop = time.monotonic() + seconds

    def run(k: int) -> None:
        mine, i = fds[k::threads], 0
        while mine and time.monotonic() < stop:
            fd = mine[i % len(mine)]
            os.pwrite(fd, b"y" * 120, os.fstat(fd).st_size)
            t = time.perf_counter()
            os.fsync(fd)
            lat.append(time.perf_counter() - t)
            i += 1
            time.sleep(0.005)

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(run, range(threads)))
    lat.sort()
    q = statistics.quantiles(lat, n=1000) if len(lat) > 1 else [0.0] * 999
    return (
        f"floor    {len(fds):>6} one fsync, {threads} at once {len(lat):>9} fsyncs   "
        f"p50 {q[499] * 1e3:.1f} ms  p99 {q[989] * 1e3:.1f} ms  max {lat[-1] * 1e3:.1f} ms"
    )


def check_cost(directory: Path, tables: int, srcs: list[tuple[ev.AnyEvent, ...]]) -> str:
    """What a checkpoint's check of its logs costs (``Recorder._check_logs``: a ``stat`` and two
    ``pread``s a log the journal wrote, every log open), timed alone on ``tables`` logs: median
    of 7, wall and CPU; and what a round's read-back of the last bytes it wrote costs a log
    (``Recorder._refuse_rewritten``: one ``pread``), CPU."""
    rec = Recorder(directory, sync="journal", checkpoint_every=3600, save_every=0,
                   max_open=tables + 64)
    try:
        for step in range(2):
            futures = [rec.submit(f"c{i}", srcs[i % len(srcs)][step]) for i in range(tables)]
            for future in futures:
                future.result()
        logs = dict(rec._jdirty)
        walls, cpus, tails = [], [], []
        for _ in range(7):
            t, c = time.perf_counter(), time.thread_time()
            rec._check_logs(logs)
            walls.append(time.perf_counter() - t)
            cpus.append(time.thread_time() - c)
            # a round's read-back of each open log's last bytes (Recorder._refuse_rewritten)
            c = time.thread_time()
            for table in logs.values():
                rec._refuse_rewritten(table, table.end)
            tails.append(time.thread_time() - c)
        assert not rec._spoiled
    finally:
        rec.close()
    wall, cpu, tail = statistics.median(walls), statistics.median(cpus), statistics.median(tails)
    return (f"checkpoint check of {tables} logs: {wall * 1e3:.1f} ms wall, {cpu * 1e3:.1f} ms "
            f"CPU ({cpu / tables * 1e6:.1f} us CPU a log); a round's read-back of the last "
            f"bytes written: {tail / tables * 1e6:.2f} us CPU a log (a move)")


def journal_restart(
    directory: Path, logs: int, steps: int, srcs: list[tuple[ev.AnyEvent, ...]]
) -> tuple[int, float, float, int]:
    """The worst writing-back after a power loss with ``sync="journal"``: ``logs`` tables record
    ``steps`` moves each into one journal, then every log is gone and only that journal is
    left (their names never reached the disk). Returns (records, seconds, CPU seconds,
    logs created again) for a new recorder's open."""
    with Recorder(directory, sync="journal", checkpoint_every=3600, max_open=logs + 64) as rec:
        for step in range(steps):
            futures = [rec.submit(f"j{i}", srcs[i % len(srcs)][step]) for i in range(logs)]
            for f in futures:
                f.result()
        kept = {p.name: p.read_bytes() for p in directory.glob(".recorder.journal-*")}
    for p in directory.iterdir():
        if p.name != ".recorder.lock":
            p.unlink()
    for name, data in kept.items():
        (directory / name).write_bytes(data)
    t, c = time.perf_counter(), time.process_time()
    with Recorder(directory) as rec:
        took, cpu = time.perf_counter() - t, time.process_time() - c
        stats = rec.stats()
    return stats.recovered, took, cpu, stats.recreated


def restart(
    directory: Path, logs: int, srcs: list[tuple[ev.AnyEvent, ...]], tail: int = 5
) -> list[tuple[str, float, float, int]]:
    """``logs`` mid-match logs (half of each match), reloaded by a new recorder as the first
    move after a restart does, three ways: with no saved state (every log read and replayed
    from its first event), after a clean close (every match from its saved state), and after
    a crash that followed a save by ``tail`` moves a table (the saved state, then those moves
    replayed). Returns (how, wall seconds, process CPU seconds, matches loaded from a state)."""
    names = [f"m{i}" for i in range(logs)]
    for i, name in enumerate(names):
        src = srcs[i % len(srcs)]
        (directory / f"{name}.blog").write_bytes(log.encode_log(src[: len(src) // 2]))
    os.sync()
    out = []

    def reload(how: str) -> None:
        t, cpu = time.perf_counter(), time.process_time()
        rec = Recorder(directory, save_every=0)
        for name in names:
            rec.next_seq(name)
        took, cpu = time.perf_counter() - t, time.process_time() - cpu
        stats = rec.stats()
        assert stats.loaded == logs
        out.append((how, took, cpu, stats.resumed))
        rec.close()  # saves every state (not timed)

    reload("no saved state")
    reload("clean restart")
    saved = (directory / SAVED_NAME).read_bytes()
    with Recorder(directory, save_every=0) as rec:  # tail moves a table after that save
        for i, name in enumerate(names):
            src = srcs[i % len(srcs)]
            for event in src[len(src) // 2 : len(src) // 2 + tail]:
                rec.submit(name, event)
        rec.flush()
    (directory / SAVED_NAME).write_bytes(saved)  # as the crash left it
    os.sync()
    reload(f"crash, {tail} moves after the save")
    return out


class _NoSync(FileOps):
    """Durability calls that return at once: what the recorder costs with an infinitely fast
    disk (the CPU ceiling of one process; never a way to record)."""

    def fsync(self, fd: int) -> None:
        pass

    def fsync_dir(self, fd: int) -> None:
        pass

    def syncfs(self, fd: int) -> None:
        pass


def ceiling(directory: Path, tables: int, srcs: list[tuple[ev.AnyEvent, ...]],
            seconds: float, pace: float) -> list[str]:
    """Saturated tables on a recorder whose syncs cost nothing, with and without validation,
    and the driver alone (each table's asyncio task awaiting a future that a committer thread
    settles in rounds, as the recorder's are): the most events/s one process can acknowledge
    here whatever the disk, and where its CPU goes."""
    lines = []
    for validate in (True, False):
        d = directory / f"ceiling-{tables}-{validate}"
        d.mkdir()
        rec = Recorder(d, window=0.002, sync="syncfs", ops=_NoSync(), validate=validate)

        def rounds(rec: Recorder = rec) -> int:
            return rec.stats().rounds

        def run(marks: list[tuple[float, int]], rec: Recorder = rec
                ) -> tuple[int, list[float], float, int]:
            return asyncio.run(drive(rec.append_async, tables, srcs, None, seconds, "c", marks,
                                     rounds))

        try:
            r = measure("ceiling", tables, "saturated", run)
        finally:
            rec.close()
        lines.append(f"ceiling {tables:>6} no-op sync, validate={validate!s:5} "
                     f"{r.rate:>9.0f} events/s {r.cpu_us:>7.1f} us CPU/event "
                     f"p50 {r.p50_ms:.1f} ms p99 {r.p99_ms:.1f} ms")
    lines.append(driver_alone(tables, srcs, seconds, None))
    lines.append(driver_alone(tables, srcs, seconds, pace))
    return lines


def driver_alone(tables: int, srcs: list[tuple[ev.AnyEvent, ...]], seconds: float,
                 pace: float | None) -> str:
    """The benchmark's tables (saturated, or paced at one move per ``pace`` s) against a
    stand-in that only settles each append's future in rounds from another thread (no
    validation, encoding or I/O): what the asyncio side alone costs and delays."""
    lock = threading.Condition()
    waiting: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[int], int]] = []
    stop = [False]
    count = [0]

    def settle(group: list[tuple[asyncio.Future[int], int]]) -> None:
        for fut, seq in group:
            if not fut.done():
                fut.set_result(seq)

    def committer() -> None:
        while not stop[0]:
            with lock:
                lock.wait(0.002)
                batch = waiting[:]
                waiting.clear()
            if batch:
                count[0] += 1
                batch[0][0].call_soon_threadsafe(settle, [(f, s) for _, f, s in batch])

    async def append(match: str, event: ev.AnyEvent) -> int:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[int] = loop.create_future()
        with lock:
            waiting.append((loop, fut, event.seq))
            lock.notify()
        return await fut

    thread = threading.Thread(target=committer, daemon=True)
    thread.start()

    def run(marks: list[tuple[float, int]]) -> tuple[int, list[float], float, int]:
        return asyncio.run(drive(append, tables, srcs, pace, seconds, "d", marks,
                                 lambda: count[0]))

    mode = "paced" if pace else "saturated"
    r = measure("driver", tables, mode, run)
    stop[0] = True
    thread.join()
    return (f"ceiling {tables:>6} driver alone, {mode:9} {r.rate:>9.0f} events/s "
            f"{r.cpu_us:>7.1f} us CPU/event p50 {r.p50_ms:.1f} ms p99 {r.p99_ms:.1f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short runs, 1 s pacing")
    ap.add_argument("--tables", default="10,200,1000,10000")
    ap.add_argument("--modes", default="paced,saturated")
    ap.add_argument("--seconds", type=float, default=None)
    ap.add_argument("--pace", type=float, default=None)
    ap.add_argument("--dir", default=None, help="where to write (default: a temporary dir)")
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--no-syncfs", action="store_true", help="leave syncfs out of --syncs")
    ap.add_argument("--syncs", default="fsync,syncfs,journal",
                    help="the recorder's ways of syncing a round to run")
    ap.add_argument(
        "--max-open", default=None,
        help="recorder handle pool (default: its own); N,M,...: each way runs with each pool, "
             "the reopenings a move printed after it (a pool below the tables: every move "
             "reopens its log)")
    ap.add_argument("--restart", type=int, default=10000, help="mid-match logs to reload")
    ap.add_argument("--journal-restart", default="2000x20",
                    help="TABLESxMOVES written back from a journal alone at open ('0': skip)")
    ap.add_argument("--floor", action="store_true", help="only the disk floor (see floor())")
    ap.add_argument("--check-cost", action="store_true",
                    help="only the journal checkpoint's check of its logs, timed alone "
                         "(check_cost())")
    ap.add_argument("--ceiling", action="store_true",
                    help="only the CPU ceiling: no-op syncs, and the driver alone (ceiling())")
    ap.add_argument("--checkpoint-every", type=float, default=10.0,
                    help="seconds between the journal's checkpoints (sync=journal)")
    ap.add_argument("--save-every", type=float, default=60.0,
                    help="seconds between the recorder's saves of the tables' states")
    ap.add_argument("--gc-freeze", type=float, default=0.0,
                    help="call gc.freeze() every S seconds while the tables play (0: never)")
    ap.add_argument("--gc-young", type=int, default=0,
                    help="the cyclic collector's youngest threshold while the tables play "
                         "(gc.set_threshold N; 0: Python's own, 700)")
    args = ap.parse_args()
    GC_FREEZE[0] = args.gc_freeze
    GC_YOUNG[0] = args.gc_young
    seconds = args.seconds or (3.0 if args.quick else 10.0)
    pace = args.pace or (1.0 if args.quick else 3.0)
    if args.quick:
        print(
            f"quick mode: pacing scaled down to one move per {pace:g} s per table, "
            f"{seconds:g} s runs"
        )
    srcs = sources(12)
    pools: list[int | None] = ([None] if args.max_open is None
                               else [int(n) for n in args.max_open.split(",")])
    base = Path(tempfile.mkdtemp(prefix="bench-recorder-", dir=args.dir))
    if args.ceiling:
        for tables in map(int, args.tables.split(",")):
            print("\n".join(ceiling(base, tables, srcs, seconds, pace)), flush=True)
        shutil.rmtree(base, ignore_errors=True)
        return
    if args.check_cost:
        for tables in map(int, args.tables.split(",")):
            d = base / f"check-{tables}"
            d.mkdir()
            print(check_cost(d, tables, srcs), flush=True)
        shutil.rmtree(base, ignore_errors=True)
        return
    if args.floor:
        for tables in map(int, args.tables.split(",")):
            d = base / f"floor-{tables}"
            d.mkdir()
            print("\n".join(floor(d, tables, max(3, 20000 // tables))), flush=True)
        shutil.rmtree(base, ignore_errors=True)
        return
    print(
        f"{'impl':11} {'N':>6} {'mode':10} {'events/s':>9} {'p50 ms':>8} {'p99 ms':>8} "
        f"{'CPU us/ev':>9} {'fsync/ev':>8} {'max fds':>7} {'fail':>5} {'max ms':>8}"
    )
    try:
        for tables in map(int, args.tables.split(",")):
            for mode in args.modes.split(","):
                p = pace if mode == "paced" else None
                results = []
                impls: list[tuple[str, Callable[..., Result], int | None]] = [
                    (w, functools.partial(run_recorder, sync=w,
                                          checkpoint_every=args.checkpoint_every,
                                          save_every=args.save_every), pool)
                    for w in args.syncs.split(",") if not (w == "syncfs" and args.no_syncfs)
                    for pool in pools
                ]
                impls += [] if args.no_baseline else [("writers", run_writers, None)]
                for way, impl, pool in impls:
                    d = base / f"{way}-{pool}-{tables}-{mode}"
                    d.mkdir()
                    r = impl(d, tables, srcs, p, seconds, mode, max_open=pool)
                    if len(pools) > 1 and way != "writers":
                        r.name += f"@{pool}"
                    results.append(r)
                    print(
                        f"{r.name:11} {tables:>6} {mode:10} {r.rate:>9.0f} {r.p50_ms:>8.2f} "
                        f"{r.p99_ms:>8.2f} {r.cpu_us:>9.1f} {r.fsyncs_per_event:>8.3f} "
                        f"{r.max_fds:>7} {r.failures:>5} {r.max_ms:>8.1f}"
                        + (f"  reopened/ev {r.reopened:.3f}" if len(pools) > 1 else ""),
                        flush=True,
                    )
                    shutil.rmtree(d)
                pairs = [(a, results[-1]) for a in results[:-1]]
                if len(pools) > 1:  # each pool against the same way's last pool
                    pairs = [(a, b) for a in results for b in results
                             if a is not b and b.name.partition("@")[0] == a.name.partition(
                                 "@")[0] and b.name.endswith(f"@{pools[-1]}")]
                for a, b in pairs:
                    if not b.rate:
                        continue
                    print(
                        f"{_short(a.name) + '/' + _short(b.name):11} {tables:>6} {mode:10} "
                        f"{a.rate / b.rate:>8.2f}x "
                        f"{a.p50_ms / max(b.p50_ms, 1e-9):>7.2f}x "
                        f"{a.p99_ms / max(b.p99_ms, 1e-9):>7.2f}x "
                        f"{a.cpu_us / max(b.cpu_us, 1e-9):>8.2f}x",
                        flush=True,
                    )
        if args.journal_restart != "0":
            d = base / "journal-restart"
            d.mkdir()
            logs, steps = map(int, args.journal_restart.split("x"))
            records, took, cpu, made = journal_restart(d, logs, steps, srcs)
            print(
                f"restart from a journal alone: {records} records of {made} logs written back "
                f"in {took:.2f} s ({took / max(1, records) * 1e6:.0f} us a record; process CPU "
                f"{cpu / max(1, records) * 1e6:.0f} us a record)",
                flush=True,
            )
        if args.restart:
            d = base / "restart"
            d.mkdir()
            for how, took, cpu, resumed in restart(d, args.restart, srcs):
                print(
                    f"restart, {how}: {args.restart} mid-match logs reloaded in {took:.2f} s "
                    f"({took / args.restart * 1e3:.2f} ms per log; process CPU "
                    f"{cpu / args.restart * 1e3:.2f} ms per log; {resumed} from a saved state)",
                    flush=True,
                )
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
