"""Probe 43b: a query or report started again after a compaction keeps the user's one time
limit (each start had the whole limit again: up to 8 times it)."""

from __future__ import annotations

import importlib
import itertools
import time
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import store, views

# (the package's `report` is the function: the module by its full name)
report_mod = importlib.import_module("buraco_log.archive.report")


def test_a_report_started_again_has_only_the_time_left(monkeypatch: pytest.MonkeyPatch) -> None:
    given: list[tuple[float | None, float | None]] = []

    def changed(archive: str, top: int, threads: int, memory_limit: str,
                timeout: float | None, said: float | None = None) -> Any:
        given.append((timeout, said))
        time.sleep(0.05)
        raise store.Changed("a compaction committed")

    monkeypatch.setattr(report_mod, "_report", changed)
    with pytest.raises(store.Changed):
        report_mod.report("unused", timeout=1.0)
    assert len(given) == store.RELISTS
    lefts = [left for left, _ in given]
    assert all(said == 1.0 for _, said in given)  # the error names the user's limit
    assert lefts[0] == pytest.approx(1.0, abs=0.02)
    assert all(b < a for a, b in itertools.pairwise(lefts)), lefts
    assert lefts[-1] <= 1.0 - 0.05 * (store.RELISTS - 1) + 0.02


def test_no_limit_stays_no_limit_on_every_start(monkeypatch: pytest.MonkeyPatch) -> None:
    given: list[float | None] = []

    def changed(*args: Any, **kwargs: Any) -> Any:
        given.append(args[4])
        raise store.Changed("a compaction committed")

    monkeypatch.setattr(report_mod, "_report", changed)
    for limit in (None, 0):
        given.clear()
        with pytest.raises(store.Changed):
            report_mod.report("unused", timeout=limit)
        assert given == [limit] * store.RELISTS


def test_a_query_started_again_has_only_the_time_left(
        arch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    given: list[float | None] = []

    def changed(self: views.QueryStream, run: Any, archive: str, sql: str, threads: int,
                memory_limit: str, timeout: float | None, *rest: Any) -> None:
        given.append(timeout)
        time.sleep(0.05)
        raise store.Changed("a compaction committed")

    monkeypatch.setattr(views.QueryStream, "_start", changed)
    with pytest.raises(store.Changed):
        views.QueryStream(arch, "SELECT 1", threads=1, memory_limit="1GB", timeout=0.2,
                          batch_rows=100, bound=False)
    assert len(given) == store.RELISTS
    assert given[0] == pytest.approx(0.2, abs=0.02)
    assert all(b < a or b == 1e-3 for a, b in itertools.pairwise(given)), given
    assert given[-1] == 1e-3  # past the limit: a moment, never 0 (no limit)


def test_time_left_bounds() -> None:
    start = time.monotonic()
    assert views.time_left(None, start) is None
    assert views.time_left(0, start) == 0
    assert views.time_left(1e12, start) == 1e12  # past TIMEOUT_MAX: no limit in practice
    assert views.time_left(5.0, start - 10) == 1e-3
    assert 4.9 < (views.time_left(5.0, start) or 0) <= 5.0
