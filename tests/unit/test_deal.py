"""The deal (RULES.md §3): exact material, sizes, mortos, upcard, rotation."""

from __future__ import annotations

import msgspec
import pytest

from buraco_log.errors import IllegalMoveError
from buraco_log.events import HandStarted
from buraco_log.reducer import Replayer
from buraco_log.rules import PRESETS, preset
from tests.play import start
from tests.scenario import build_deal


def _replayer(name: str, players: int) -> Replayer:
    r = Replayer()
    r.step(msgspec.structs.replace(start(name, players), first_dealer=players - 1))
    return r


def _deal(name: str, players: int) -> HandStarted:
    rules = preset(name)
    return build_deal(rules, players, {}, "", {}, None)


def _refused(name: str, players: int, ev: HandStarted, rule: str) -> None:
    r = _replayer(name, players)
    with pytest.raises(IllegalMoveError) as info:
        r.step(ev)
    assert info.value.rule == rule, str(info.value)


@pytest.mark.parametrize(
    ("name", "players"), [(n, p) for n, r in PRESETS.items() for p in r.player_counts]
)
def test_every_preset_deals_its_exact_material(name: str, players: int) -> None:
    ev = _deal(name, players)
    r = _replayer(name, players)
    r.step(ev)
    s = r.state()
    rules = preset(name)
    assert s.card_count() == 104 + rules.jokers
    assert all(len(h) == rules.hand_size for h in s.hands)
    assert len([m for m in s.mortos if m]) == (rules.sides(players) if rules.morto else 0)
    assert (len(s.pile) == 1) == rules.initial_upcard


def test_a_deal_with_a_card_too_many_is_refused() -> None:
    ev = _deal("classic", 2)
    # a third copy of a card (a joker, no card of classic, is event.invalid)
    third = next(c for c in ev.stock if ev.stock.count(c) == 2)
    bad = msgspec.structs.replace(ev, stock=(*ev.stock[:-1], third))
    if ev.stock[-1] == third:
        bad = msgspec.structs.replace(ev, stock=(third, *ev.stock[1:]))
    _refused("classic", 2, bad, "deal.material")


def test_a_short_hand_is_refused() -> None:
    ev = _deal("classic", 2)
    bad = msgspec.structs.replace(
        ev, hands=(ev.hands[0][:-1], ev.hands[1]), stock=(ev.hands[0][-1], *ev.stock)
    )
    _refused("classic", 2, bad, "deal.hand_size")


def test_a_morto_preset_needs_its_mortos() -> None:
    ev = _deal("biriba", 2)
    bad = msgspec.structs.replace(ev, mortos=(), stock=ev.stock + ev.mortos[0] + ev.mortos[1])
    _refused("biriba", 2, bad, "deal.morto_size")


def test_the_upcard_is_there_exactly_when_the_preset_turns_one() -> None:
    ev = _deal("thirteen", 2)
    assert ev.upcard is not None
    bad = msgspec.structs.replace(ev, upcard=None, stock=(ev.upcard, *ev.stock))
    _refused("thirteen", 2, bad, "deal.upcard")
    ev = _deal("classic", 2)
    bad = msgspec.structs.replace(ev, upcard=ev.stock[0], stock=ev.stock[1:])
    _refused("classic", 2, bad, "deal.upcard")


def test_the_deal_rotates() -> None:
    ev = _deal("classic", 2)
    _refused("classic", 2, msgspec.structs.replace(ev, dealer=0), "deal.dealer_rotation")
    _refused("classic", 2, msgspec.structs.replace(ev, hand=3), "hand.number")
