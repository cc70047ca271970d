"""Simulated match logs for the archive tests and benchmark, written once and reused."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor

from buraco_log.log import write_log
from buraco_log.rules import preset
from buraco_log.simulate import SimulationError, simulate_match

# Quick presets keep the corpus cheap; classic matches run to 1500 points (thousands of events).
PRESETS = ("thirteen-quick",)


def _one(args: tuple[str, int, str, int, str]) -> str:
    directory, index, name, players, seed = args
    path = os.path.join(directory, f"{name}-{players}p-{index:06d}.blog")
    if not os.path.exists(path):
        bots = ("heuristic", "random") if index % 3 else ("heuristic",)
        for attempt in range(10):
            try:
                events = simulate_match(preset(name), players, seed=seed,
                                        index=index + attempt * 1_000_000, bots=bots)
                break
            except SimulationError:  # a simulator defect on this seed: take the next one
                continue
        else:
            raise RuntimeError(f"no simulated match for index {index}")
        tmp = path + ".part"
        if os.path.exists(tmp):
            os.unlink(tmp)
        write_log(tmp, events, validate=False)
        os.replace(tmp, path)
    return path


def make_corpus(directory: str, n: int, *, seed: str = "archive", jobs: int = 2,
                presets: tuple[str, ...] = PRESETS) -> list[str]:
    """``n`` finished matches (2 and 4 players, alternating) as sealed logs in ``directory``."""
    os.makedirs(directory, exist_ok=True)
    args = [(directory, i, presets[i % len(presets)], 4 if i % 2 else 2, seed) for i in range(n)]
    if jobs <= 1:
        return [_one(a) for a in args]
    with ProcessPoolExecutor(jobs) as pool:
        return list(pool.map(_one, args, chunksize=4))
