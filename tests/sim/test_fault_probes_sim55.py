"""Fault probes of simulation (round 55): a club reproducing a disputed simulation.

- A simulated match is the same bytes in a process of another hash seed (``PYTHONHASHSEED``
  0, 1, random) and with the engine run from its ``.py`` sources instead of the compiled copies:
  nothing the bots, the expert or the dealer choose may follow the order of a set of strings.
- Every move a bot plays (random, heuristic, the expert) is one ``legal_moves`` lists at that
  table (melds and lay-offs up to the order of their cards), in every preset and table size.
- A bot that takes the pile, lays a short opening, takes it back and discards, turn after turn,
  was never stopped as a pile passed round: the laying it took back reset the count, and the
  hand ran to its 20,000-event limit ("hand 0 is still going at seq 20002"; hours for an
  expert). The takes before a retraction now still count, and the hand stops at 100 of them.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from buraco_log import simulate
from buraco_log.events import (
    AnyEvent,
    CardDiscarded,
    CardsLaidOff,
    HandStarted,
    MatchEnded,
    MatchStarted,
    MeldLaid,
    OpeningRetracted,
    PileTaken,
)
from buraco_log.moves import legal_moves
from buraco_log.reducer import Replayer
from buraco_log.rules import PRESETS, derive
from buraco_log.state import State
from tests.pure_engine import PURE_PRELUDE

ROOT = Path(__file__).resolve().parents[2]
TINY = "expert:2x2r1"

# A child process that simulates the matches given on stdin and prints the SHA-256 of each
# match's log bytes; with "pure", the engine's compiled modules are imported from their .py.
CHILD = PURE_PRELUDE + """
import json, hashlib
from buraco_log.rules import PRESETS
from buraco_log.simulate import encode_match, simulate_match
out = []
for name, players, seed, index, bots in json.load(sys.stdin):
    events = simulate_match(PRESETS[name], players, seed=seed, index=index, bots=bots)
    out.append(hashlib.sha256(encode_match(events)).hexdigest())
assert all(sys.modules[n].__file__.endswith(".py") == pure for n in names)
print(json.dumps(out))
"""

Case = tuple[str, int, str, int, list[str]]


def _digests_here(cases: list[Case]) -> list[str]:
    return [hashlib.sha256(simulate.encode_match(simulate.simulate_match(
        PRESETS[n], p, seed=s, index=i, bots=b))).hexdigest() for n, p, s, i, b in cases]


def _digests_in_child(cases: list[Case], hashseed: str, engine: str) -> list[str]:
    env = {**os.environ, "PYTHONHASHSEED": hashseed, "PYTHONPATH": str(ROOT)}
    child = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), engine],
                           input=json.dumps(cases), capture_output=True, text=True,
                           timeout=1200, env=env, cwd=ROOT)
    assert child.returncode == 0, child.stderr[-2000:]
    return list(json.loads(child.stdout))


def test_a_match_is_the_same_bytes_under_another_hash_seed_and_the_plain_python_engine() -> None:
    cases: list[Case] = [("thirteen-quick", 4, "hs55", 0, ["random", "heuristic"])]
    assert _digests_in_child(cases, "1", "pure") == _digests_here(cases)


@pytest.mark.slow  # every preset and table size, three bots, four processes: 2-4 minutes
def test_every_presets_matches_are_the_same_bytes_in_any_process() -> None:
    cases: list[Case] = []
    for name, rules in PRESETS.items():
        for players in rules.player_counts:
            cases.append((name, players, "hs55", 3, ["random", "heuristic"]))
            cases.append((name, players, "hs55", 4, ["heuristic"]))
            if players <= 4:
                cases.append((name, players, "hs55", 5, [TINY, "heuristic"]))
    here = _digests_here(cases)
    for hashseed, engine in (("0", "compiled"), ("1", "pure"), ("random", "compiled"),
                             ("random", "pure")):
        assert _digests_in_child(cases, hashseed, engine) == here, (hashseed, engine)


# -- every bot's move is one legal_moves lists ---------------------------------------------


def _as_listed(ev: AnyEvent) -> AnyEvent:
    """``ev`` as ``legal_moves`` names it: melds, lay-offs and retractions with their cards in
    order, a match's end without the server seed (revealed by the dealer, not chosen)."""
    if isinstance(ev, (MeldLaid, CardsLaidOff, OpeningRetracted)):
        return msgspec.structs.replace(ev, cards=tuple(sorted(ev.cards)))
    if isinstance(ev, MatchEnded):
        return msgspec.structs.replace(ev, server_seed="")
    return ev


def _unlisted(events: list[AnyEvent]) -> list[tuple[int, AnyEvent]]:
    """The moves of a match that ``legal_moves`` did not list at their table."""
    rep = Replayer()
    out = []
    for ev in events:
        if not isinstance(ev, (MatchStarted, HandStarted)):  # chance, not a choice
            state: State = rep.state()
            if _as_listed(ev) not in {_as_listed(m) for m in legal_moves(state)}:
                out.append((ev.seq, ev))
        rep.step(ev)
    return out


def test_every_move_of_a_simulated_match_is_one_legal_moves_lists() -> None:
    events = simulate.simulate_match(PRESETS["thirteen-quick"], 2, seed="legal55",
                                     bots=("random", "heuristic"))
    assert len(events) > 100 and any(isinstance(e, MeldLaid) for e in events[:100])
    assert _unlisted(events[:100]) == []


@pytest.mark.slow  # every preset and table size, two seeds, experts among them: 2-3 minutes
@pytest.mark.parametrize(("name", "players"), [
    (n, p) for n, r in PRESETS.items() for p in r.player_counts])
def test_every_bots_moves_are_ones_legal_moves_lists(name: str, players: int) -> None:
    for seed, bots in (("legal55-0", ("random", "heuristic")),
                       ("legal55-1", (TINY, "random", "heuristic"))):
        events = simulate.simulate_match(PRESETS[name], players, seed=seed, bots=bots)
        assert isinstance(events[-1], MatchEnded)
        assert _unlisted(events) == [], (name, players, seed)


# -- a pile passed round with openings taken back ---------------------------------------------


class _TakeBackBot:
    """Takes the pile whenever it can, lays a short opening, takes it back, then discards."""

    name = "take-back"

    def __init__(self) -> None:
        self.laid = (-1, -1)

    def choose(self, state: State, moves: list[AnyEvent], rng: object) -> AnyEvent:
        for kind in (PileTaken, OpeningRetracted):
            got = [m for m in moves if isinstance(m, kind)]
            if got:
                return got[0]
        melds = [m for m in moves if isinstance(m, MeldLaid)]
        if melds and self.laid != (state.hand, state.turns):
            self.laid = (state.hand, state.turns)
            return min(melds, key=lambda m: len(m.cards))
        discards = [m for m in moves if isinstance(m, CardDiscarded)]
        return discards[-1] if discards else moves[0]


@pytest.mark.parametrize("knobs", [
    pytest.param(dict(vulnerable_at=0), id="free-pile"),
    pytest.param(dict(vulnerable_at=0, pile_pickup="must_use_top"), id="must-use-top",
                 marks=pytest.mark.slow)])
def test_a_pile_passed_round_with_openings_taken_back_is_stopped_in_one_line(
        monkeypatch: pytest.MonkeyPatch, knobs: dict[str, object]) -> None:
    monkeypatch.setattr(simulate, "make_bot", lambda name: _TakeBackBot())
    with pytest.raises(simulate.SimulationError) as caught:
        simulate.simulate_match(derive("bossa-nova", **knobs), 2, seed="loop0",
                                bots=("take-back",))
    said = str(caught.value)
    # it ran to "hand 0 is still going at seq 20002", 5,000 retractions later
    assert ": hand 0: the pile was taken 100 turns in a row (to seq " in said, said
    assert "an opening taken back lays none" in said and "\n" not in said
    seq = int(said.split("(to seq ")[1].split(")")[0])
    assert seq < 600, said
