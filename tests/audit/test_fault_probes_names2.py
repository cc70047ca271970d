"""Fault probes, `show` of a match whose players share a name.

Four players named Ana (a club's guests, four bots alike): the summary counted who went out
by name alone, so "went out  Ana x2" merged two different players, and the hands table named
the dealer and who went out as "Ana" each time. A name borne by more than one player is told
apart by its seat there; names borne once are shown as before.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

from buraco_log import log
from buraco_log.audit import show_log
from buraco_log.events import AnyEvent, MatchStarted, Player, WentOut
from buraco_log.rules import preset
from buraco_log.simulate import simulate_match
from cli.main import app


@pytest.fixture(scope="module")
def four_anas(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[AnyEvent]]:
    events = list(simulate_match(preset("thirteen-quick"), 4, seed="anas"))
    start = events[0]
    assert isinstance(start, MatchStarted)
    events[0] = msgspec.structs.replace(start, players=(
        Player("Ana"), Player("Ana"), Player("Bia"), Player("Ana")))
    path = tmp_path_factory.mktemp("names") / "anas.blog"
    log.write_log(path, events)
    return path, events


def _label(seat: int) -> str:
    return "Bia" if seat == 2 else f"Ana (seat {seat})"


def test_who_went_out_is_counted_per_player_not_per_name(
        four_anas: tuple[Path, list[AnyEvent]]) -> None:
    path, events = four_anas
    want = Counter(_label(e.seat) for e in events if isinstance(e, WentOut))
    assert want, "the match has hands that end by going out"
    s = show_log(path)
    assert s.went_out == dict(want)
    outs = [e.seat for e in events if isinstance(e, WentOut)]
    assert [h.went_out_name for h in s.hands if h.went_out is not None] == [
        _label(seat) for seat in outs]


def test_the_table_names_each_dealer_and_player_by_seat_when_names_repeat(
        four_anas: tuple[Path, list[AnyEvent]]) -> None:
    path, events = four_anas
    out = CliRunner().invoke(app, ["show", str(path)]).stdout
    went = next(line for line in out.splitlines() if line.startswith("went out  "))
    want = Counter(_label(e.seat) for e in events if isinstance(e, WentOut))
    assert went == "went out  " + ", ".join(f"{n} x{k}" for n, k in want.items())
    hand0 = next(line for line in out.splitlines() if line.startswith("  0     "))
    assert "Ana (seat " in hand0 or "Bia" in hand0


def test_unique_names_are_shown_as_they_are(tmp_path: Path) -> None:
    events = list(simulate_match(preset("thirteen-quick"), 2, seed="anas"))
    path = tmp_path / "m.blog"
    log.write_log(path, events)
    s = show_log(path)
    names = {p.name for p in s.players}
    assert set(s.went_out) <= names and "seat" not in " ".join(s.went_out)
