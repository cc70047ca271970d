"""Probe 41b: `explain` (and `replay`'s events in words) of a Burako table speak of tiles.

Its facts said "seat 0 holds 12 cards", "stock: 40 cards", "the pile's top card 13k", "meld
rules: at least 3 cards ... (ace at both ends: yes); sets per rank", its rule descriptions "A
draw takes the top card of the stock", and `replay` "took the pile (3 cards, top 13k)". A table
drawn in tiles now says tiles, number and 1; the card presets keep their words.
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
from buraco_log.audit.explanation import explain_event
from buraco_log.events import AnyEvent, CardDiscarded, PileTaken
from buraco_log.reducer import Replayer
from buraco_log.ruleids import RULES, TILE_RULES, describe
from buraco_log.rules import Rules, derive, preset
from buraco_log.simulate import simulate_match
from buraco_log.timeline import describe_event
from tests.unit.card_words import CARD_WORDS, TILE_WORDS, _wrong_moves

ROOT = Path(__file__).resolve().parents[2]
VARIANTS: dict[str, Rules] = {
    "burako": preset("burako"),
    "burako-house": derive("burako", pile_pickup="must_use_top", first_turn_redraw=True,
                           morto_direct=True, initial_upcard=True, vulnerability=True),
    "mega": preset("mega"),
}


@cache
def _explained(variant: str, every: int = 46) -> tuple[str, ...]:
    """The words of `explain` at every ``every``-th seq of a simulated match, and of some
    wrong moves there: the event, the rule's description and the facts. Each explanation
    replays the prefix: the default run samples every 46th seq (a third of the time of every
    23rd, which the slow run samples)."""
    events = simulate_match(VARIANTS[variant], 2, seed="probe41b")
    rep, said = Replayer(), set[str]()
    for i, ev in enumerate(events[:-1]):
        rep.step(ev)
        if i % every:
            continue
        tried: list[AnyEvent] = [*list(_wrong_moves(rep.state(), ev.seq + 1))[::4], events[i + 1]]
        for bad in tried:
            x = explain_event([*events[: i + 1], bad], bad.seq)
            said.update((x.event, x.description or "", *x.facts))
    return tuple(sorted(said))


def _speaks_of_cards(text: str) -> bool:
    return bool(CARD_WORDS.search(re.sub(r"\(heuristic-\d\)", "", text)))


@pytest.mark.parametrize("variant", ["burako", "burako-house"])
def test_explaining_a_tile_table_speaks_of_tiles(variant: str) -> None:
    said = _explained(variant)
    assert not [t for t in said if _speaks_of_cards(t)]
    joined = " | ".join(said)
    for words in ("tiles: ", "stock: ", "tiles (floor", "meld rules: at least 3 tiles",
                  "(1 at both ends: yes); sets per number per side"):
        assert words in joined, words


def test_explaining_a_card_table_keeps_card_words() -> None:
    said = _explained("mega")
    assert not [t for t in said if TILE_WORDS.search(t)]
    assert "meld rules: at least 3 cards" in " | ".join(said)


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
def test_explaining_every_23rd_seq_keeps_each_table_in_its_words(variant: str) -> None:
    said = _explained(variant, 23)
    if variant == "mega":
        assert not [t for t in said if TILE_WORDS.search(t)]
    else:
        assert not [t for t in said if _speaks_of_cards(t)]


def test_every_tile_description_is_a_rules_description_without_card_words() -> None:
    assert set(TILE_RULES) <= set(RULES)
    for rule in RULES:
        if rule.startswith(("log.", "sig", "archive.", "continuation.", "audit.", "deal.prov")):
            continue  # files, signatures, archives: no table's words
        assert describe(rule) == RULES[rule]
        assert not _speaks_of_cards(describe(rule, tiles=True)), rule


def test_a_pile_taken_in_words() -> None:
    ev = PileTaken(0, 3, 13, seq=9)
    assert describe_event(ev, style="tiles") == "seq 9: seat 0 took the pile (3 tiles, top 13y)"
    assert describe_event(ev) == "seq 9: seat 0 took the pile (3 cards, top Kc)"


def test_the_explain_command_of_a_burako_refusal(tmp_path: Path) -> None:
    """One process: a discard of a tile not held, explained in tiles."""
    events = simulate_match(preset("burako"), 2, seed="probe41b")
    rep = Replayer()
    for i, ev in enumerate(events):
        rep.step(ev)
        if rep.phase == "play" and i > 20:
            break
    s = rep.state()
    bad = next(m for m in _wrong_moves(s, s.seq + 1)
               if isinstance(m, CardDiscarded) and m.card not in s.hands[s.turn])
    path = tmp_path / "bad.blog"
    log.write_log(path, [*events[: i + 1], bad], validate=False)
    done = subprocess.run([sys.executable, "-m", "cli.main", "explain", str(path), "--at",
                           str(bad.seq)], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          check=False, env={**os.environ, "COLUMNS": "400"})
    out = done.stdout + done.stderr
    assert "discard.card_not_in_hand" in out, out
    assert "A player discards a tile from their own hand" in out, out
    assert not _speaks_of_cards(out.replace("discard.card_not_in_hand", "")), out
    shown = subprocess.run([sys.executable, "-m", "cli.main", "replay", str(path), "--at",
                            str(bad.seq - 1)], cwd=ROOT, capture_output=True, text=True,
                           timeout=120, check=False, env={**os.environ, "COLUMNS": "400"})
    assert shown.returncode == 0 and "  morto 11 tiles" in shown.stdout, shown.stdout
    assert not _speaks_of_cards(shown.stdout), shown.stdout
    audited = subprocess.run([sys.executable, "-m", "cli.main", "audit", str(path)], cwd=ROOT,
                             capture_output=True, text=True, timeout=120, check=False,
                             env={**os.environ, "COLUMNS": "400"})
    assert audited.returncode == 1, audited.stderr
    # the rule's description (the audit's own table and labels are left as they are)
    assert "rule      A player discards a tile from their own hand; the player does not hold " \
        "this one." in audited.stdout, audited.stdout


def test_a_reviewed_pickup_in_words() -> None:
    from buraco_log.review import move_text

    ev = PileTaken(0, 3, 13, seq=9)
    assert move_text(ev, "tiles-unicode").startswith("take the pile (3 tiles, top 13")
    assert move_text(ev) == "take the pile (3 cards, top Kc)"
