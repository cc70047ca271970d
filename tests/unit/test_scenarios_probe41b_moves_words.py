"""Probe 41b: `buraco-log moves` and `rules show` speak of tiles under Burako (RULES.md §1).

`moves` said "draw the top card of the stock", "take the whole pile (4 cards, ...)", "its top
card can be used", "pile (4 cards; free)" and "ace-to-ace canastra" of a Burako table, and
`rules show burako` said a run "never wraps (K-A-2)". Card presets keep their words.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from buraco_log import log
from buraco_log.options import MovesAt, moves_at
from buraco_log.reducer import Replayer
from buraco_log.rules import Rules, derive, preset
from buraco_log.simulate import simulate_match
from tests.scenario import Scenario
from tests.unit.card_words import CARD_WORDS, TILE_WORDS

ROOT = Path(__file__).resolve().parents[2]


def _texts(m: MovesAt) -> list[str]:
    out = [*(m.pile.reason, *m.pile.uses)] if m.pile is not None else []
    for g in m.groups:
        out += [g.heading, *(mv.text for mv in g.moves)]
    return out


@cache
def _said(rules: Rules) -> tuple[str, ...]:
    """Every text `moves` gives at every other seq of a simulated match under ``rules``."""
    rep, said = Replayer(), set()
    for i, ev in enumerate(simulate_match(rules, 2, seed="probe41b")):
        rep.step(ev)
        if i % 2 == 0:
            said.update(_texts(moves_at(rep.state())))
    return tuple(sorted(said))


TILE_RULES = {"burako": preset("burako"),
              "burako-house": derive("burako", pile_pickup="must_use_top",
                                     first_turn_redraw=True, morto_direct=True),
              "thirteen-tiles": derive("thirteen", rendering="tiles")}


@pytest.mark.parametrize("variant", TILE_RULES)
def test_moves_under_tiles_speak_of_tiles(variant: str) -> None:
    said = _said(TILE_RULES[variant])
    assert not [t for t in said if CARD_WORDS.search(t)]
    joined = " | ".join(said)
    assert "draw the top tile of the stock" in joined and " tiles, top " in joined


def test_the_tile_moves_say_each_of_their_words() -> None:
    joined = " | ".join(t for r in TILE_RULES.values() for t in _said(r))
    for words in ("reject the first tile", "take the morto (11 tiles)",
                  "its top tile can be used in", "its top tile cannot be used"):
        assert words in joined, words


@pytest.mark.parametrize("name", ["mega", "thirteen"])
def test_moves_under_cards_keep_their_words(name: str) -> None:
    said = _said(preset(name))
    assert not [t for t in said if TILE_WORDS.search(t)]
    assert "draw the top card of the stock" in " | ".join(said)


@pytest.mark.parametrize(("rules", "words"), [
    ("burako", "1r 12r 13r -> run of 14, 1-to-1 canastra"),
    (derive("burako", rendering="cards"), "Ah Qh Kh -> run of 14, ace-to-ace canastra"),
])
def test_a_canastra_from_one_to_one(rules: str | Rules, words: str) -> None:
    """Burako's tile 1 is the ace: its canastra 1..13..1 is said "1-to-1"."""
    s = Scenario(rules, hands={0: "Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Jh"},
                 mortos={0: "Qh Kh Ah 3s 4s 6s 7s 8s 9s Ts Js"}, stock="Qc 5d 9d")
    s.draw("Qc").meld("Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Jh").discard("Qc").morto(direct=False)
    s.pass_turn().draw("9d")
    assert words in _texts(moves_at(s.state))


def _cli(*argv: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *map(str, argv)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "COLUMNS": "400"})


def test_the_moves_command_and_rules_show_under_burako(tmp_path: Path) -> None:
    """One process each: the pile line of `moves` and the knob lines of `rules show`."""
    events = simulate_match(preset("burako"), 2, seed="probe41b")
    path = tmp_path / "burako.blog"
    log.write_log(path, events)
    rep = Replayer()
    for ev in events:  # the first draw with a pile of two tiles or more
        rep.step(ev)
        if rep.phase == "draw" and len(rep.state().pile) > 1:
            break
    moves = _cli("moves", path, "--at", rep.seq)
    assert moves.returncode == 0, moves.stderr
    assert re.search(r"^pile \(\d+ tiles, top \S+; free\): may take the pile", moves.stdout,
                     re.M), moves.stdout
    assert "draw the top tile of the stock" in moves.stdout
    assert not CARD_WORDS.search(moves.stdout), moves.stdout
    shown = _cli("rules", "show", "burako")
    assert shown.returncode == 0, shown.stderr
    line = next(x for x in shown.stdout.splitlines() if x.startswith("ace_both_ends"))
    assert line.endswith("a run may hold both 1s, 1..13..1 (14 tiles); it still never wraps "
                         "(13-1-2)"), line
    knobs = "\n".join(x.split(None, 2)[-1] for x in shown.stdout.splitlines())
    assert not CARD_WORDS.search(knobs.replace("cards, or tiles (Burako)", "")), knobs


def test_every_knob_line_in_tiles_is_a_knobs_line_without_card_words() -> None:
    from buraco_log.knobs import KNOBS, TILE_KNOBS, describe

    assert set(TILE_KNOBS) <= set(KNOBS)
    for knob in KNOBS:
        line = describe(knob, tiles=True)
        assert line and describe(knob) == KNOBS[knob]
        if knob != "rendering":  # "cards, or tiles (Burako)": the knob's own choices
            assert not CARD_WORDS.search(line), (knob, line)


def test_rules_list_says_burakos_source_in_tiles() -> None:
    from buraco_log.rules import PRESET_SOURCES

    assert PRESET_SOURCES["burako"] == ("004 Burako tiles: 1s at both ends, royal canastras, "
                                        "indirect morto only")
