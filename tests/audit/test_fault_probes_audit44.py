"""Fault probes of the audit pool, round 44 (helper log44).

``pool._stop`` (a batch stopped by an exception: an ``on_done`` raising, Ctrl-C) terminated
the workers, joined each for up to 5 s, and returned; a CI run once saw a worker still there:

- The pool's manager thread joins the same workers, and of two waitpid calls on one worker
  one takes its status: the other saw it running (exitcode None) until that thread set it.
  ``_stop``'s second ``shutdown(wait=True)`` meant to wait for that thread, but the first
  ``shutdown(wait=False)`` had already forgotten it: ``audit_many`` returned with a worker
  listed as running (7 runs in 100 here, with no load at all). It now waits for the thread.
- A worker holding SIGTERM blocked (or handling it) outlived its terminate: the pool's process
  waited 5 s per worker and left it running. It now gets SIGKILL after a short grace.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures.process import _ExecutorManagerThread
from pathlib import Path

import pytest

from buraco_log import audit
from buraco_log.audit import pool as poolmod

ROOT = Path(__file__).resolve().parents[2]
MATCH = ROOT / "examples" / "sim" / "classic-2p-000000.blog"
ILLEGAL = ROOT / "examples" / "disputes" / "illegal.log"


def _managers() -> list[threading.Thread]:
    return [t for t in threading.enumerate()
            if isinstance(t, _ExecutorManagerThread) and t.is_alive()]


def _children() -> set[int]:
    """This process's running children (another test's leftovers are not this pool's)."""
    return {p.pid for p in multiprocessing.active_children() if p.pid is not None}


def _stopping(_verdict: object) -> None:
    raise KeyboardInterrupt


def test_a_stopped_batch_leaves_no_worker_and_no_manager_thread_when_it_returns() -> None:
    before = _children()
    for _ in range(10):
        with pytest.raises(KeyboardInterrupt):
            audit.audit_many([str(MATCH), str(ILLEGAL)] * 3, workers=2, on_done=_stopping)
        # at once: no grace, nothing left to reap
        assert _managers() == []
        assert _children() - before == set()


def _blocking_sigterm(folder: str) -> None:
    """A pool task that holds SIGTERM blocked (as signalmask.held does around a write) and
    works on: a terminate cannot end it."""
    signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGTERM,))
    Path(folder, str(os.getpid())).touch()
    time.sleep(30)


@pytest.fixture
def short_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(poolmod, "_TERM_GRACE", 0.3)  # 2 s in use: the test need not wait it


@pytest.mark.usefixtures("short_grace")
def test_a_worker_that_outlives_sigterm_is_killed(tmp_path: Path) -> None:
    before = _children()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt), poolmod.worker_pool(2) as pool:
        for _ in range(2):
            pool.submit(_blocking_sigterm, str(tmp_path))
        while len(os.listdir(tmp_path)) < 2 and time.monotonic() - started < 20:
            time.sleep(0.02)
        assert len(os.listdir(tmp_path)) == 2
        raise KeyboardInterrupt
    took = time.monotonic() - started
    assert _children() - before == set()
    assert _managers() == []
    assert took < poolmod._TERM_GRACE + 5, took


@pytest.mark.usefixtures("short_grace")
def test_the_stop_codes_say_which_workers_the_pool_had_to_kill(tmp_path: Path) -> None:
    before = _children()
    pool = poolmod.new_pool(2)
    futures = [pool.submit(_blocking_sigterm, str(tmp_path)) for _ in range(2)]
    deadline = time.monotonic() + 20
    while len(os.listdir(tmp_path)) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    codes = poolmod._stop(pool)
    assert sorted(codes) == sorted(int(name) for name in os.listdir(tmp_path))
    assert list(codes.values()) == [None, None]  # killed by the pool: "cut short", not "died"
    assert all(f.done() for f in futures)
    assert _children() - before == set()


# -- an error raised in a worker -----------------------------------------------------------------


def _raising(which: str) -> None:
    from buraco_log.errors import IllegalMoveError, RulesError
    from buraco_log.log import NotDurableError
    from buraco_log.melds import MeldError

    raise {
        "illegal": IllegalMoveError("discard.card_not_in_hand", "seat 1 does not hold Ac",
                                    seq=23, tag="dc", path="m.blog"),
        "rules": RulesError("hand_size", "must be at least 1", "house.toml"),
        "meld": MeldError("meld.too_short", (), "a meld needs 3 cards"),
        "durable": NotDurableError("written", "EIO", path="m.blog"),
    }[which]


@pytest.mark.parametrize("which", ["illegal", "rules", "meld", "durable"])
def test_an_error_raised_in_a_worker_comes_out_as_itself_not_as_a_dead_worker(
        which: str) -> None:
    """IllegalMoveError (and every error whose __init__ takes other arguments than its
    ``args``) could not be unpickled in the pool's process: the pool broke, and the batch
    said "a worker process ended abruptly (killed, or out of memory)"."""
    with pytest.raises(Exception) as raised:
        _raising(which)
    here = raised.value
    with pytest.raises(type(here)) as there, poolmod.worker_pool(2, "testing") as pool:
        pool.submit(_raising, which).result()
    assert type(there.value) is type(here)
    assert str(there.value) == str(here)
    assert there.value.__dict__ == here.__dict__
