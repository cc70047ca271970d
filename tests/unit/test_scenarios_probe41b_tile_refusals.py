"""Probe 41b: every refusal a Burako table can give speaks of tiles (RULES.md §1: Burako's
tiles are numbers in colours; "only the rendering differs").

Probe 41 made the meld refusals say tiles, number and colour; the rest of the reducer still
said "the stock holds 0 cards", "the pile's top card 13k", "took 3 cards; the whole pile is 4
cards", and `moves` said "draw the top card of the stock". Here a Burako match (and one under
house rules that switch every optional rule on) is played, and at many of its seqs a set of
wrong moves is tried: every refusal's text is collected, and none may speak of cards. The same
moves over `classic` and `mega` keep their card words (never "tile").
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

import msgspec
import pytest

from buraco_log.errors import IllegalMoveError, RulesError
from buraco_log.events import (
    AnyEvent,
    HandStarted,
)
from buraco_log.reducer import Replayer
from buraco_log.rules import Rules, derive, preset
from buraco_log.simulate import simulate_match
from buraco_log.state import State
from tests.scenario import Scenario
from tests.unit.card_words import CARD_WORDS, TILE_WORDS, _wrong_moves

# Every optional rule on, over Burako: the pile's top must be used, a first draw may be
# refused, an upcard, a direct morto after a canastra, vulnerability, one set per number.
HOUSE: dict[str, object] = {
    "pile_pickup": "must_use_top", "first_turn_redraw": True, "initial_upcard": True,
    "morto_direct": True, "morto_needs_canastra": True, "vulnerability": True,
    "max_sets_per_rank": 1, "stock_floor": 2, "target_score": 1000}
# Tables drawn in tiles: Burako, Burako under house rules, and card presets drawn as tiles
# (`rendering` is a knob) for the paths Burako's own rules never take (thirteen's pile).
TILES: dict[str, tuple[str, dict[str, object]]] = {
    "burako": ("burako", {}),
    "burako-house": ("burako", HOUSE),
    "thirteen-tiles": ("thirteen", {"rendering": "tiles"}),
    "classic-tiles": ("classic", {"rendering": "tiles", "vulnerability": True}),
}
CARDS: dict[str, tuple[str, dict[str, object]]] = {
    "classic": ("classic", {"vulnerability": True}),
    "mega-house": ("mega", HOUSE),
    "thirteen": ("thirteen", {}),
}


def _wrong_deals(deal: HandStarted, rules: Rules) -> Iterator[HandStarted]:
    r = msgspec.structs.replace
    yield r(deal, hands=(deal.hands[0][1:], *deal.hands[1:]))
    if deal.mortos:
        yield r(deal, mortos=(deal.mortos[0][1:], *deal.mortos[1:]))
    yield r(deal, upcard=None if rules.initial_upcard else deal.stock[0],
            stock=deal.stock if rules.initial_upcard else deal.stock[1:])
    yield r(deal, stock=(deal.stock[0], *deal.stock))  # one tile too many
    yield r(deal, dealer=(deal.dealer + 1) % len(deal.hands))


@cache
def refusals(variant: str) -> dict[str, set[str]]:
    """Rule id -> the texts of its refusals, over a simulated match of ``variant``."""
    name, knobs = TILES.get(variant) or CARDS[variant]
    rules = derive(name, **knobs) if knobs else preset(name)
    events = simulate_match(rules, 2, seed="probe41b", index=0)
    rep = Replayer()
    found: dict[str, set[str]] = {}

    def attempt(state: State, ev: AnyEvent) -> None:
        try:
            Replayer(state).step(ev)
        except IllegalMoveError as exc:
            found.setdefault(exc.rule, set()).add(exc.message)

    for ev in events:
        if isinstance(ev, HandStarted):
            for deal in _wrong_deals(ev, rules):
                attempt(rep.state(), deal)
        rep.step(ev)
        state = rep.state()
        for bad in _wrong_moves(state, ev.seq + 1) if state.players else ():
            attempt(state, bad)
    return found


def _speaks_of_cards(text: str) -> bool:
    """Past the stable rule id ("[discard.card_not_in_hand]" keeps its name), without the
    bots' names."""
    return bool(CARD_WORDS.search(re.sub(r"^\[[a-z_.]+\] |\(heuristic-\d\)", "", text)))


@pytest.mark.parametrize("variant", TILES)
def test_no_tile_refusal_speaks_of_cards(variant: str) -> None:
    found = refusals(variant)
    bad = sorted(t for texts in found.values() for t in texts if _speaks_of_cards(t))
    assert not bad, bad
    assert len(found) >= 30, sorted(found)


@pytest.mark.parametrize("variant", CARDS)
def test_card_presets_keep_their_words(variant: str) -> None:
    texts = [t for ts in refusals(variant).values() for t in ts]
    assert not [t for t in texts if TILE_WORDS.search(t)]
    assert sum(map(_speaks_of_cards, texts)) >= 20


def test_the_tile_words_cover_every_refusal_that_spoke_of_cards() -> None:
    """The texts that said "card" (the reducer's refusals; the meld reader's are probe 41's)
    are reached here, each saying tiles."""
    said = " | ".join(t for v in TILES for ts in refusals(v).values() for t in ts)
    for words in WORDS_REACHED:
        assert words in said, words


# The reducer's texts that spoke of cards, as the tile tables say them.
WORDS_REACHED = (
    "tiles: going out comes only once the hand is empty",
    "tiles: taking the morto comes only once the hand is empty",
    "the morto is taken only by discarding the last tile (indirect)",
    "the pile's top tile",
    "players gets 11 tiles",
    "mortos of 11 tiles expected",
    "a tile turned up is required",
    "a tile turned up is not part of this preset",
    "the stock holds 2 tiles (floor 2)",
    "only the first tile of the hand's first turn may be rejected",
    "but the tile drawn was",
    "tiles; the whole pile is",
    "cannot use the top tile",
    "with two tiles from the hand or on a meld",
    "(tiles are laid off only on the side's own melds)",
    "takes its tiles back",
    "would keep one tile that cannot be discarded",
    "the morto holds 11 tiles, not 99",
    "the stock still holds",
    "can take the pile: its top tile",
    "a meld needs at least 3 tiles",
)


# -- the refusals a simulated match does not reach, one scenario each (card presets drawn in
# tiles: their rules reach these paths, Burako's own do not all)


def _said(s: Scenario, rule: str, move: str, *args: object) -> str:
    with s.illegal(rule):
        getattr(s, move)(*args)
    text = s.last_error.message
    assert not _speaks_of_cards(text), text
    return text


def test_a_rejected_first_draw_then_the_pile() -> None:
    s = Scenario("classic", stock="Kh 4c", rendering="tiles").draw("Kh").reject("Kh")
    text = _said(s, "draw.redraw_from_stock", "take_pile")
    assert "after rejecting the first tile the player draws from the stock" in text


def test_a_pickup_that_leaves_no_tile_to_throw() -> None:
    s = Scenario("thirteen", hands={0: "9c 9d", 1: "4c 5d"}, upcard="9h", hand_size=2,
                 morto_direct=False, rendering="tiles")
    text = _said(s, "pile.must_use_top", "take_pile")
    assert "cannot use the top tile 9r without being left with no tile to throw (the morto " \
        "is taken only by discarding the last tile (indirect))" in text


def test_a_meld_that_leaves_the_pile_top_unusable() -> None:
    """6♥ was to carry the top 7♥ onto 3♥-4♥-5♥; a set of sixes takes it away."""
    s = Scenario("thirteen", hands={0: "3h 4h 5h 6h 6c 6d Kc Qd Js 9c Ts 4c 5d",
                                    1: "7h 3c 4s 6s 8d 9s Tc Jd Qs Kh 3d 4d Ad"},
                 stock="Ac Qc", upcard="9d", rendering="tiles")
    s.draw("Ac").meld("3h 4h 5h").discard("Ac").draw("Qc").discard("7h").take_pile()
    text = _said(s, "pile.must_use_top", "meld", "6h 6c 6d")
    assert "would leave no way to use the pile's top tile 7r this turn" in text


@pytest.mark.parametrize("name", ["burraco", "mega"])
def test_a_short_opening_that_emptied_the_hand_takes_no_morto(name: str) -> None:
    s = Scenario(name, hands={0: "3c 3d"}, stock="3h", hand_size=2, vulnerability=True,
                 vulnerable_at=0, morto_direct=True, rendering="tiles")
    s.draw("3h").meld("3c 3d 3h")
    text = _said(s, "vulnerable.opening_too_low", "morto", True)
    assert "this one totals 15; the tiles are taken back, not the morto" in text


def test_a_one_tile_morto_that_could_not_be_thrown() -> None:
    sets = ["3s 3d 3c 3h 3s", "4s 4d 4c 4h", "5s 5d 5c 5h 5s"]
    hand = " ".join(" ".join(sets).split()[1:])
    s = Scenario("thirteen", hands={0: hand}, stock="3s", mortos={0: "Kd"}, morto_size=1,
                 rendering="tiles")
    s.draw("3s").meld(sets[0]).meld(sets[1])
    text = _said(s, "go_out.needs_canastra", "meld", sets[2])
    assert "the morto's one tile could not be discarded" in text


def test_house_rules_over_burako_that_cannot_be_dealt_speak_of_tiles() -> None:
    with pytest.raises(RulesError) as tiles:
        derive("burako", hand_size=40)
    assert str(tiles.value).endswith(
        "4 players x 40 tiles + 2 mortos of 11 need 182 tiles, more than the 106 of the material")
    with pytest.raises(RulesError) as up:
        derive("burako", hand_size=20, initial_upcard=True)
    assert "+ the tile turned up leave a stock of 3 of the 106 tiles of the material" \
        in str(up.value)
    with pytest.raises(RulesError) as cards:
        derive("mega", hand_size=20)
    assert "+ the upcard leave a stock of 5 of the 108 cards of the material" in str(cards.value)
