"""Probe 41b: the audit, the viewer and the review of a Burako log speak of tiles.

The audit's text said "cards     2y" and "morto 11 cards" under a Burako illegal event, its
score explanation "cards on the table" and "cards left in hand"; the viewer's banners and the
review's refusal gave a rule's card description; every preset said "holds 1 cards". A table
drawn in tiles now says tiles everywhere; the card presets keep their words (and their JSON:
the illegal event's ``rendering`` is omitted when it is cards), and one card is "1 card".
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from buraco_log import audit
from buraco_log.view import build_page
from tests import brokenlogs
from tests.unit.card_words import CARD_WORDS, TILE_WORDS

ROOT = Path(__file__).resolve().parents[2]
RULE_IDS = re.compile(r"\[?[a-z_]+\.[a-z_]+\]?")  # discard.card_not_in_hand names no card


def _cards_in(text: str) -> list[str]:
    """The card words of ``text``, its rule ids left out."""
    return [m[0] for m in CARD_WORDS.finditer(RULE_IDS.sub("", text))]


@cache
def _logs(base: Path, preset: str) -> tuple[Path, Path]:
    """A log of ``preset`` with an illegal discard, and one with a wrong recorded score."""
    events = brokenlogs.match(preset=preset, players=2, seed=1)
    illegal, _ = brokenlogs.with_illegal_discard(list(events))
    wrong, _ = brokenlogs.with_wrong_score(list(events))
    return (brokenlogs.write(base / f"{preset}-illegal.blog", illegal),
            brokenlogs.write(base / f"{preset}-score.blog", wrong))


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("burako-reports")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "COLUMNS": "400"})


def test_burako_audit_text_says_tiles(base: Path) -> None:
    illegal, score = _logs(base, "burako")
    done = _cli("audit", str(illegal), str(score))
    assert done.returncode == 1, done.stderr
    out = done.stdout
    for said in ("    tiles     ", "  morto 11 tiles", "tiles on the table ",
                 "tiles left in hand ", "[discard.card_not_in_hand]"):
        assert said in out, (said, out)
    assert not _cards_in(out), (_cards_in(out), out)


def test_a_card_preset_audit_keeps_its_words_and_json(base: Path) -> None:
    illegal, score = _logs(base, "biriba")
    done = _cli("audit", str(illegal), str(score))
    assert done.returncode == 1, done.stderr
    for said in ("    cards     ", "  morto 11 cards", "cards on the table ",
                 "cards left in hand "):
        assert said in done.stdout, (said, done.stdout)
    assert not TILE_WORDS.search(done.stdout), done.stdout
    card = audit.audit_log(illegal).legality.first_illegal
    tile = audit.audit_log(_logs(base, "burako")[0]).legality.first_illegal
    assert card is not None and tile is not None
    # the field is the rules' rendering, in the JSON only where it is not cards
    assert "rendering" not in json.loads(_cli("audit", "-f", "json", str(illegal)).stdout)[
        "legality"]["first_illegal"]
    assert (card.rendering, tile.rendering) == ("cards", "tiles")


@pytest.mark.parametrize(("preset", "unit"), [("burako", "tiles"), ("biriba", "cards")])
def test_score_lines_and_hint_in_the_rules_words(base: Path, preset: str, unit: str) -> None:
    v = audit.audit_log(_logs(base, preset)[1])
    side = next(s for h in v.scoring.hands for s in h.sides if s.difference)
    items = [x.item for x in side.lines]
    assert f"{unit} on the table" in items and f"{unit} left in hand" in items, items
    assert any(line.startswith(f"{unit} on the table") for line in side.explanation)
    words = " ".join([*items, *side.explanation, side.hint or ""])
    assert bool(_cards_in(words)) is (unit == "cards"), words


@pytest.mark.parametrize("seat", [None, 0])
def test_burako_viewer_banners_say_tiles(base: Path, seat: int | None) -> None:
    illegal, score = _logs(base, "burako")
    from buraco_log.log import read_events

    texts = [b.text for path in (illegal, score)
             for b in build_page(read_events(path), seat=seat).banners]
    assert len(texts) == 2 and any("[score.mismatch]" in t for t in texts), texts
    assert not [t for t in texts if _cards_in(t)], texts
    if seat is not None:  # a seat's banner gives the rule's description: in tiles
        assert any("a tile from their own hand" in t for t in texts), texts


def test_burako_review_refusal_says_tiles(base: Path) -> None:
    done = _cli("review", str(_logs(base, "burako")[0]), "--seat", "0", "--budget", "10")
    assert done.returncode != 0 and "a tile from their own hand" in done.stderr, done.stderr
    assert not _cards_in(done.stderr), done.stderr


@pytest.mark.parametrize(("preset", "one"), [("burako", "1 tile "), ("biriba", "1 card ")])
def test_one_card_or_tile_is_singular(preset: str, one: str) -> None:
    from tests.scenario import refused
    from tests.unit.first_turns import first_turn

    s = first_turn(preset, "Jh")
    s.discard("Th").morto(direct=False)
    while len(s.state.stock) > 1:  # a stock of one above its floor: it said "holds 1 cards"
        s.pass_turn()
    refused(s, "hand.not_over", (f"holds {one}(floor 0)",), "end_hand", "stock_out")


@pytest.mark.parametrize(("preset", "drew"), [("burako", "drew a tile"), ("biriba", "drew a card")])
def test_a_seat_page_hides_a_draw_in_the_rules_words(preset: str, drew: str) -> None:
    from buraco_log.timeline import Timeline
    from buraco_log.view.page import page_data

    moves = page_data(Timeline(brokenlogs.match(preset=preset, players=2, seed=1)),
                      seat=0)["moves"]
    hidden = [m for m in moves if m.endswith((" drew a tile", " drew a card"))]
    assert hidden and all(m.endswith(drew) for m in hidden), hidden[:3]
    if preset == "burako":
        assert not [m for m in moves if _cards_in(m)], [m for m in moves if _cards_in(m)][:3]


@pytest.mark.parametrize(("preset", "field"), [("burako", "tile: "), ("biriba", "card: ")])
def test_diff_names_the_differing_field_in_the_rules_words(base: Path, preset: str,
                                                          field: str) -> None:
    illegal, score = _logs(base, preset)
    d = audit.diff_logs(illegal, score)
    assert d.diverge_seq is not None and len(d.differences) == 1, d.differences
    assert d.differences[0].startswith(field), d.differences
    # the tile drawn is the one the words of the event name
    assert d.words_a is not None and d.words_a.endswith(d.differences[0].split()[1])
