"""Probe 41d: a stateful property test of the archive's write operations with intent records.

Rules ingest small example logs, compact, drop a batch, "crash" one of those at the N-th call
of a function of its commit/drop/clean-up path (a BaseException, so no ``except OSError``
undoes anything: as a kill, bar the lock's release), and plant a part of no record. After
each step: the rows the views show are the model's logs, each once; every file of every
committed batch is there with its fingerprint (``verify``); a part of no record that no run
left is refused, never deleted; after a clean-up ``verify`` finds no problem and no leftover.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from buraco_log.archive import ingest, query, store
from buraco_log.archive.compact import compact
from buraco_log.archive.fixity import verify_archive
from buraco_log.errors import ArchiveError

ROOT = Path(__file__).resolve().parents[2]
SIM = ROOT / "examples" / "sim"
POOL_SIZE = 6


class Crash(BaseException):
    """A kill at a chosen call: no handler of the library catches it."""


def _pool() -> list[str]:
    """A few small example logs, copied once per module into a directory of their own."""
    d = tempfile.mkdtemp(prefix="archive-ops-41d-pool-")
    atexit.register(shutil.rmtree, d, True)  # not left in /tmp by every run
    logs = sorted(SIM.glob("*.blog"), key=lambda p: p.stat().st_size)[:POOL_SIZE]
    out = []
    for p in logs:
        shutil.copy(p, os.path.join(d, p.name))
        out.append(os.path.join(d, p.name))
    return out


POOL = _pool()
STATS: Counter[str] = Counter()  # machines, checks (after init and each step), crashes
NAMES = [os.path.basename(p) for p in POOL]

# where a crash may strike: the module attribute, its name, and a call count to strike at
TARGETS: list[tuple[Any, str]] = [(os, "replace"), (os, "unlink"), (store, "_atomic_json"),
                                  (store, "note_intent"), (store, "recover"),
                                  (store, "_fsync_dir")]


@contextmanager
def crash_at(target: int, k: int) -> Iterator[list[int]]:
    """Raise :class:`Crash` at the k-th call of ``TARGETS[target]``; yields the call count."""
    mod, name = TARGETS[target]
    real: Callable[..., Any] = getattr(mod, name)
    calls = [0]

    def wrapped(*a: Any, **kw: Any) -> Any:
        calls[0] += 1
        if calls[0] == k:
            raise Crash(f"{name} #{k}")
        return real(*a, **kw)

    setattr(mod, name, wrapped)
    try:
        yield calls
    finally:
        setattr(mod, name, real)


class ArchiveOps(RuleBasedStateMachine):
    """The model: committed batch -> the names of its logs (a compacted batch: the union)."""

    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.mkdtemp(prefix="archive-ops-41d-")
        self.arch = os.path.join(self.tmp, "arch")
        self.batches: dict[str, set[str]] = {}
        STATS["machines"] += 1

    def teardown(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    # -- helpers -----------------------------------------------------------------------

    def pick(self, i: int) -> str:
        """A committed batch: drawn as a number, so that what is drawn never depends on how
        a crash ended (batch ids hold the time; crash points count calls of os functions)."""
        return sorted(self.batches)[i % len(self.batches)]

    def logs(self) -> set[str]:
        return set().union(*self.batches.values()) if self.batches else set()

    def records(self) -> dict[str, dict[str, Any]]:
        if not os.path.isdir(os.path.join(self.arch, store.BATCHES)):
            return {}
        return {m["batch"]: m for m in store.manifests(self.arch)}

    def committed_files(self) -> dict[str, list[str]]:
        """Every file (relative) of every committed batch, by batch."""
        return {b: [rel for rels in r["files"].values() for rel in rels]
                for b, r in self.records().items()}

    def after_ingest(self, before: set[str], wanted: set[str]) -> None:
        """Fold an ingest (whole, or crashed) into the model: no record or one new record
        holding exactly the logs not stored before."""
        new = set(self.records()) - before
        assert len(new) <= 1, new
        fresh = wanted - self.logs()
        if new:
            (b,) = new
            assert fresh, f"batch {b} committed by an ingest of logs all stored"
            self.batches[b] = fresh

    def after_compact(self, before: set[str]) -> None:
        recs = self.records()
        for b in set(recs) - before:
            replaced = recs[b].get("compacted") or []
            assert replaced and set(replaced) <= set(self.batches), (b, replaced)
            self.batches[b] = set().union(*(self.batches.pop(r) for r in replaced))

    def tree_parts(self) -> set[str]:
        return {str(p.relative_to(self.arch)) for p in Path(self.arch).rglob("part-*.parquet")}

    def clean(self) -> None:
        """After a clean-up: nothing left over, no problem."""
        report = verify_archive(self.arch)
        assert report.ok, report.problems
        assert report.leftovers == [], report.leftovers
        assert not list(Path(self.arch, store.BATCHES).glob("*" + store.INTENT))

    # -- rules -------------------------------------------------------------------------

    @initialize(first=st.sampled_from(range(len(POOL))))
    def start(self, first: int) -> None:
        r = ingest([POOL[first]], self.arch)
        assert r.added == 1 and len(r.batches) == 1
        self.batches[r.batches[0]] = {NAMES[first]}

    @rule(picks=st.sets(st.sampled_from(range(len(POOL))), min_size=1, max_size=3))
    def do_ingest(self, picks: set[int]) -> None:
        before = set(self.records())
        wanted = {NAMES[i] for i in picks}
        r = ingest([POOL[i] for i in sorted(picks)], self.arch)
        assert r.added == len(wanted - self.logs())
        assert r.already_stored + r.added == len(wanted)
        self.after_ingest(before, wanted)
        self.clean()

    @rule()
    def do_compact(self) -> None:
        before = set(self.records())
        compact(self.arch)
        self.after_compact(before)
        self.clean()

    @rule(pick=st.integers(0, 99))
    def do_drop(self, pick: int) -> None:
        if not self.batches:  # no precondition: whether a crash committed is not drawn
            return
        victim = self.pick(pick)
        store.drop_batches(self.arch, [victim])
        del self.batches[victim]
        assert not [p for p in self.tree_parts() if f"part-{victim}." in p]

    @rule(op=st.sampled_from(["ingest", "compact", "drop"]),
          where=st.sampled_from(range(len(TARGETS))), k=st.integers(1, 5),
          picks=st.sets(st.sampled_from(range(len(POOL))), min_size=1, max_size=2),
          pick=st.integers(0, 99))
    def crash(self, op: str, where: int, k: int, picks: set[int], pick: int) -> None:
        """An operation killed mid-way: its outcome is either none or whole, never half."""
        STATS["crash rule"] += 1
        before = set(self.records())
        files_before = self.committed_files()
        logs_before = self.logs()
        victim = self.pick(pick) if op == "drop" and self.batches else None
        try:
            with crash_at(where, k):
                if op == "ingest":
                    ingest([POOL[i] for i in sorted(picks)], self.arch)
                elif op == "compact":
                    compact(self.arch)
                elif victim is not None:
                    store.drop_batches(self.arch, [victim])
        except Crash:
            STATS["crashed"] += 1
        if op == "ingest":
            self.after_ingest(before, {NAMES[i] for i in picks})
        elif op == "compact":
            self.after_compact(before)
            assert self.logs() == logs_before
        elif victim is not None and victim not in self.records():
            del self.batches[victim]
        # the files of batches still committed were all kept (and verify reads them back)
        now = set(self.records())
        for b in before & now:
            for rel in files_before[b]:
                assert os.path.exists(os.path.join(self.arch, rel)), (b, rel)
        report = verify_archive(self.arch)  # a run cut short is no problem, only leftovers
        assert report.ok, report.problems

    @rule(op=st.sampled_from(["ingest", "compact", "drop"]))
    def plant_part_of_no_record(self, op: str) -> None:
        """A part whose record was deleted by hand: refused by every clean-up, kept."""
        parts = sorted(self.tree_parts())
        if not parts or not self.batches:
            return
        stray = os.path.join(self.arch, "matches", "preset=x", "month=unknown",
                             "part-20200101T000000Z-deadbeef.parquet")
        os.makedirs(os.path.dirname(stray), exist_ok=True)
        shutil.copy(os.path.join(self.arch, parts[0]), stray)
        before = {p: Path(self.arch, p).read_bytes() for p in self.tree_parts()}
        with pytest.raises(ArchiveError, match="belong to no batch record"):
            if op == "ingest":
                ingest([POOL[0]], self.arch)
            elif op == "compact":
                compact(self.arch)
            else:
                store.drop_batches(self.arch, [sorted(self.batches)[0]])
        assert {p: Path(self.arch, p).read_bytes() for p in self.tree_parts()} == before
        assert not verify_archive(self.arch).ok
        shutil.rmtree(os.path.dirname(os.path.dirname(stray)))

    # -- invariants ----------------------------------------------------------------------

    @invariant()
    def views_show_the_model(self) -> None:
        STATS["checks"] += 1
        if not os.path.isdir(self.arch):
            return
        got = query(self.arch, "SELECT source_path, digest, batch FROM matches").to_pylist()
        names = [os.path.basename(r["source_path"]) for r in got]
        assert len(names) == len(set(names)), names  # never stored twice
        assert len({r["digest"] for r in got}) == len(got)
        assert set(names) == self.logs()
        assert set(self.records()) == set(self.batches)
        # each row in the batch the model says (or the one a merge made of it)
        for r in got:
            assert os.path.basename(r["source_path"]) in self.batches[r["batch"]], r

    @invariant()
    def committed_files_are_there(self) -> None:
        for b, rels in self.committed_files().items():
            for rel in rels:
                assert os.path.exists(os.path.join(self.arch, rel)), (b, rel)


def _run(max_examples: int, steps: int) -> None:
    ArchiveOps.TestCase.settings = settings(
        max_examples=max_examples, stateful_step_count=steps, deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    STATS.clear()
    ArchiveOps.TestCase().runTest()
    print(dict(STATS))  # shown with -s: how much was run

def test_archive_operations_with_crashes() -> None:
    _run(15, 8)


@pytest.mark.slow
def test_archive_operations_with_crashes_long() -> None:
    _run(200, 20)
    assert STATS["crashed"] > 20, STATS  # the crash points are still reached
