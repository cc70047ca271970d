"""A count of one is said in the singular in the moves' words: "take the whole pile (1 card,
...)" and "pile (1 tile; ...)", not "1 cards" (a pile of one card is common: right after a
pickup's discard)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from buraco_log.log import read_events
from buraco_log.options import moves_at
from buraco_log.reducer import states

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "sim"


def _one_card_pile(name: str) -> tuple[int, list[str]]:
    """The first draw-phase seq with a pile of one, and the moves' texts there."""
    for state in states(read_events(EXAMPLES / name)):
        if state.phase == "draw" and len(state.pile) == 1:
            got = moves_at(state)
            return state.seq, [m.text for g in got.groups for m in g.moves]
    raise AssertionError(f"{name}: no pile of one card in the draw phase")


@pytest.mark.parametrize(("name", "unit"), [("biriba-2p-000000.blog", "card"),
                                            ("burako-2p-000000.blog", "tile")])
def test_pile_of_one_is_singular(name: str, unit: str) -> None:
    seq, texts = _one_card_pile(name)
    pile = [t for t in texts if t.startswith("take the whole pile")]
    if pile:  # taken only where the rules let it: when offered, it says one
        assert all(f"(1 {unit}," in t for t in pile), pile
    out = subprocess.run([sys.executable, "-m", "cli", "moves", str(EXAMPLES / name), "--at",
                          str(seq)], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("pile ("))
    assert line.startswith(f"pile (1 {unit}") and f"1 {unit}s" not in line, line
