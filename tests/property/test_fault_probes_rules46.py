"""The heuristic bot's fast path builds its move straight from the table; the simulator puts it
through the reducer and falls back to the full list of legal moves when it is refused. Every
move it builds must be legal at once, in every preset and at every table size: a refused move
is a bot that broke a rule (a must-use-top pile whose top could not be used, a lay that keeps
one card that cannot be thrown, a discard after a short vulnerable opening).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from buraco_log import bots
from buraco_log.errors import IllegalMoveError
from buraco_log.reducer import validate
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match

TABLES = [(name, n) for name, r in PRESETS.items() for n in r.player_counts]


def _refusals(monkeypatch: pytest.MonkeyPatch, name: str, players: int,
              seeds: range) -> tuple[int, Counter[tuple[str, str]], list[str]]:
    """Moves the fast path built, and those the reducer refuses (by event kind and rule)."""
    fast: Callable[..., Any] = bots.HeuristicBot.fast_move
    built = 0
    refused: Counter[tuple[str, str]] = Counter()
    examples: list[str] = []

    def checked(self: bots.HeuristicBot, table: Any, stock_top: Any,
                end_scores: Any = None) -> Any:
        nonlocal built
        ev = fast(self, table, stock_top, end_scores)
        if ev is not None:
            built += 1
            try:
                validate(table.freeze(), ev)
            except IllegalMoveError as exc:
                refused[(type(ev).__name__, exc.rule)] += 1
                examples.append(str(exc))
        return ev

    monkeypatch.setattr(bots.HeuristicBot, "fast_move", checked)
    for i in seeds:
        simulate_match(PRESETS[name], players, seed="fast-path-legal", index=i)
    return built, refused, examples


@pytest.mark.parametrize(("name", "players"), TABLES)
def test_every_move_of_the_fast_path_is_legal_at_once(monkeypatch: pytest.MonkeyPatch,
                                                      name: str, players: int) -> None:
    built, refused, examples = _refusals(monkeypatch, name, players, range(2))
    assert built > 100, built  # the fast path did play these matches
    assert not refused, (refused, examples[:3])


@pytest.mark.slow
@pytest.mark.parametrize(("name", "players"), TABLES)
def test_every_move_of_the_fast_path_is_legal_over_many_seeds(monkeypatch: pytest.MonkeyPatch,
                                                              name: str, players: int) -> None:
    built, refused, examples = _refusals(monkeypatch, name, players, range(2, 42))
    assert built > 1000, built
    assert not refused, (refused, examples[:3])
