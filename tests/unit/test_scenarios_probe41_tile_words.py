"""Probe 41, the words of Burako's meld refusals (RULES.md §1: tile 1 = ace, 11/12/13 =
J/Q/K, colour = suit; "Only the rendering differs (numbers and colours, not A/K and suits)").

Probe 40 drew the tiles of a Burako refusal as tiles (13k, 5y), but the words around them
still spoke of cards: "one suit", "each rank once", "wraps around the ace (K-A-2)", "2 wild
cards". A rules value drawn in tiles now says colour, number, 1 and tiles; the presets with
cards keep their words.
"""

from __future__ import annotations

import pytest

from buraco_log.cards import parse_cards
from buraco_log.melds import MeldError, read_meld
from buraco_log.rules import derive, preset
from tests.scenario import Scenario, refused

# (cards laid, rule, words a Burako refusal says, words a card preset's refusal says)
CASES: list[tuple[str, str, tuple[str, ...], tuple[str, ...]]] = [
    ("5c 6d 7c", "meld.not_a_meld", ("5y 6b 7y:", "one number", "one colour, consecutive"),
     ("5c 6d 7c:", "one rank", "one suit, consecutive")),
    ("5c 6c 6c 7c", "meld.duplicate_in_run", ("each number once",), ("each rank once",)),
    ("Kc Ac 3c", "meld.run_wraps", ("13y 1y 3y:", "from 13 back to 1 (13-1-2)"),
     ("Kc Ac 3c:", "around the ace (K-A-2)")),
    ("5c 6c 2d 2h", "meld.too_many_wilds", ("2 wild tiles; at most one",),
     ("2 wild cards; at most one",)),
    ("2c 2d 2h", "meld.set_of_twos", ("two natural tiles",), ("two natural cards",)),
    ("5c 6c", "meld.too_few_cards", ("at least 3 tiles",), ("at least 3 cards",)),
]

# Words of playing cards that a tile refusal must not say.
CARD_WORDS = ("suit", "rank", "card", "ace", "k-a-2")


def _refusal(preset: str, cards: str, rule: str, words: tuple[str, ...],
             **overrides: object) -> str:
    filler = "9s 9d 4s 3d 8h Jh Qd"
    hand = " ".join((cards, filler)).split()[:11]
    s = Scenario(preset, hands={0: " ".join(hand)}, stock="Kh", **overrides)
    s.draw("Kh")
    refused(s, rule, words, "meld", cards)
    return _words(s)


def _words(s: Scenario) -> str:
    """The refusal's text past its stable rule id ("[meld.too_few_cards] ..." keeps its name)
    and the player ("seat 0 (p0): ")."""
    return str(s.last_error).split("] ", 1)[1].split(": ", 1)[1].lower()


@pytest.mark.parametrize(("cards", "rule", "tiles", "card_words"), CASES)
def test_burako_refusals_speak_of_tiles(cards: str, rule: str, tiles: tuple[str, ...],
                                        card_words: tuple[str, ...]) -> None:
    text = _refusal("burako", cards, rule, tiles)
    for word in CARD_WORDS:
        assert word not in text, (word, text)


@pytest.mark.parametrize("preset", ["mega", "classic"])
@pytest.mark.parametrize(("cards", "rule", "tiles", "card_words"), CASES)
def test_card_presets_keep_card_words(preset: str, cards: str, rule: str,
                                      tiles: tuple[str, ...],
                                      card_words: tuple[str, ...]) -> None:
    text = _refusal(preset, cards, rule, card_words)
    for word in ("colour", "number", "tile", "13-1-2"):
        assert word not in text, (word, text)


def test_two_aces_without_both_ends_name_the_tile_one() -> None:
    """House rules without ``ace_both_ends``: a tile run holds one 1, a card run one ace."""
    _refusal("burako", "Ac 3c 4c Ac", "meld.duplicate_in_run",
             ("a run holds one 1 (low or high, never both)",), ace_both_ends=False)
    _refusal("mega", "Ac 3c 4c Ac", "meld.duplicate_in_run",
             ("a run holds one ace (low or high, never both)",))


def test_a_tile_run_longer_than_fourteen() -> None:
    """1..13..1 and a tatu: fifteen tiles, one too many."""
    run = "Ac 2c 3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Kc Ac JK"
    with pytest.raises(MeldError) as info:  # no hand holds 15 tiles: the reader directly
        read_meld(parse_cards(run), preset("burako"))
    assert info.value.rule == "meld.run_too_long"
    assert info.value.detail == "a run has at most 14 tiles"
    with pytest.raises(MeldError) as cards:
        read_meld(parse_cards(run), derive("burako", rendering="cards"))
    assert cards.value.detail == "a run has at most 14 cards"


def test_a_second_set_of_a_number_in_tiles() -> None:
    """``max_sets_per_rank`` (house rules over Burako): the side has a set of that number."""
    s = Scenario("burako", hands={0: "9s 9d 9h 9c 9s 9d 4s"}, stock="Kh",
                 max_sets_per_rank=1)
    s.draw("Kh").meld("9s 9d 9h")
    refused(s, "meld.second_set_of_rank", ("a set of that number",), "meld", "9c 9s 9d")
    assert "rank" not in _words(s)
    c = Scenario("mega", hands={0: "9s 9d 9h 9c 9s 9d 4s"}, stock="Kh")
    c.draw("Kh").meld("9s 9d 9h")
    refused(c, "meld.second_set_of_rank", ("a set of that rank",), "meld", "9c 9s 9d")


def test_explaining_a_burako_meld_refusal_names_tiles_once() -> None:
    """`explain` printed the refusal's cards twice, the second time as playing cards ("5y 6y
    8y do not form a meld [...]: 5c 6c 8c: not consecutive"); now once, in tiles."""
    from buraco_log import audit
    from buraco_log.events import MeldLaid

    s = Scenario("burako", hands={0: "5c 6c 8c 9s 9d"}, stock="Kh")
    s.draw("Kh")
    bad = MeldLaid(0, parse_cards("5c 6c 8c"), seq=s.rep.seq + 1)
    facts = audit.explain_event([*s.events, bad], bad.seq).facts
    fact = next(f for f in facts if "do not form a meld" in f)
    assert fact == "5y 6y 8y do not form a meld [meld.run_not_consecutive]: not consecutive"


def test_no_tile_refusal_speaks_of_cards() -> None:
    """Every refusal of every three-card meld, and of every run window of one colour with a
    wild added or a tile left out, speaks of tiles under Burako (and of cards under `mega`)."""
    import itertools

    from buraco_log.cards import ALL_CODES, JOKER

    tiles, cards = preset("burako"), preset("mega")
    melds: list[tuple[int, ...]] = list(itertools.combinations_with_replacement(ALL_CODES, 3))
    for lo in range(13):
        for hi in range(lo + 2, 16):
            window = tuple(r % 13 + 1 for r in range(lo, hi))  # clubs are suit 0: code = rank
            for extra in ((), (JOKER,), (18,), (JOKER, 34)):
                melds += [(*window, *extra), (*window[:1], *window[2:], *extra)]
    rules_seen: set[str] = set()
    for meld in melds:
        try:
            read_meld(meld, tiles)
        except MeldError as exc:
            rules_seen.add(exc.rule)
            for word in ("suit", "rank", "card", "ace", "k-a"):
                assert word not in exc.detail.lower(), (meld, exc.detail)
        try:
            read_meld(meld, cards)
        except MeldError as exc:
            for word in ("tile", "colour", "number", "13-1-2"):
                assert word not in exc.detail, (meld, exc.detail)
    assert {"meld.not_a_meld", "meld.run_wraps", "meld.duplicate_in_run", "meld.too_many_wilds",
            "meld.set_of_twos", "meld.run_not_consecutive", "meld.run_too_long"} <= rules_seen
