"""Library values speak cards by name: a repr never shows card codes."""

from __future__ import annotations

from buraco_log import events as ev
from buraco_log.cards import parse_card, parse_cards


def test_an_event_repr_names_its_cards() -> None:
    meld = ev.MeldLaid(seat=1, cards=parse_cards("Qs 8h JK"), meld=0, seq=3)
    assert repr(meld) == "MeldLaid(seat=1, cards=(Qs, 8h, JK), meld=0, seq=3, at=None, note=None)"
    assert repr(ev.CardDiscarded(seat=0, card=parse_card("Tc"), seq=9)) == (
        "CardDiscarded(seat=0, card=Tc, seq=9, at=None, note=None)")
    pile = ev.PileTaken(seat=0, count=3, top=parse_card("2d"), seq=4)
    assert "top=2d" in repr(pile) and "count=3" in repr(pile)  # counts stay numbers


def test_a_deal_repr_names_every_hand_and_the_stock() -> None:
    deal = ev.HandStarted(hand=0, dealer=1, hands=(parse_cards("Ac 2d"), parse_cards("3h")),
                          stock=parse_cards("4s"), seq=1)
    text = repr(deal)
    assert "hands=((Ac, 2d), (3h))" in text and "stock=(4s)" in text and "dealer=1" in text
