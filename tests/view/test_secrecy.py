"""A seat's page carries no hidden card: not in its data, markup or comments, at any seq.

Checked on the written file's bytes: the data is decoded back from the file and every frame
rebuilt; every card in a frame must be one the seat could see at that seq (its own hand, the
pile, the melds); nothing outside the data element names a card; and no hidden hand, stock or
morto appears in the bytes in any of the forms the page writes cards. The referee's page fails
the same checks, which shows they can fail.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from buraco_log.audit import load
from buraco_log.cards import Style, format_cards, sort_key
from buraco_log.events import CardDrawn
from buraco_log.state import State
from buraco_log.timeline import Timeline, card_style
from buraco_log.view import build_page
from tests.view.pages import GOLDEN, SIM, data_of, frames_of

LOGS = [*GOLDEN, SIM / "biriba-4p-000000.blog",
        pytest.param(SIM / "bossa-nova-3p-000000.blog", marks=pytest.mark.slow)]


def _visible(s: State, seat: int) -> Counter[int]:
    seen: Counter[int] = Counter(s.hands[seat]) if s.hands else Counter()
    seen.update(s.pile)
    for side in s.melds:
        for m in side:
            seen.update(m.cards)
    return seen


def _seen_lists(s: State, seat: int) -> list[tuple[int, ...]]:
    out = [s.hands[seat], s.pile] if s.hands else [s.pile]
    return out + [m.cards for side in s.melds for m in side]


def _forms(cards: tuple[int, ...] | list[int], style: Style) -> list[bytes]:
    """The ways the page could write these cards: JSON code lists (as held or as dealt) and
    text."""
    out = []
    for order in (list(cards), sorted(cards, key=sort_key)):
        out.append(("[" + ",".join(map(str, order)) + "]").encode())
        out.append(format_cards(order, style).encode())
    return out


def leaks(page: bytes, tl: Timeline, seat: int) -> list[str]:
    """Every way ``page`` shows ``seat`` a card it could not see; empty for a good page."""
    found: list[str] = []
    data = data_of(page)
    text = page.decode("utf-8")
    outside = re.sub(r'(?s)<script type="application/json" id="bl-data">.*?</script>', "", text)
    if re.search(r'data-card="\d', outside) or re.search(r"\b(?:[2-9TJQKA]|10)[cdhs]\b", outside):
        found.append("a card outside the data element")
    style = card_style(tl.rules)
    # What the seat sees at some point of the match may be in the file: a morto it takes later
    # shows up as its hand, and that is no leak.
    seen_forms = b"\n".join(
        form for seq in range(tl.last_seq + 1) for cards in _seen_lists(tl.state_at(seq), seat)
        for form in _forms(cards, style))
    for seq, f in enumerate(frames_of(data)):
        s = tl.state_at(seq)
        hidden_keys = [k for k in f if (re.fullmatch(r"h\d+", k) and k != f"h{seat}")
                       or re.fullmatch(r"d\d+", k)]
        if hidden_keys:
            found.append(f"seq {seq}: frame keys {hidden_keys}")
        shown: Counter[int] = Counter()
        for k, v in f.items():
            if re.fullmatch(r"[hd]\d+|p", k):
                shown.update(v)
            elif re.fullmatch(r"m\d+", k):
                for meld in v:
                    shown.update(meld[3])
        if shown - _visible(s, seat):
            found.append(f"seq {seq}: frame shows {sorted((shown - _visible(s, seat)).elements())}")
        hidden = [h for i, h in enumerate(s.hands) if i != seat and len(h) >= 4]
        hidden += [m for m in s.mortos if len(m) >= 4]
        if len(s.stock) >= 4:
            hidden.append(s.stock)
        for cards in hidden:
            for form in _forms(cards, style):
                if form in page and form not in seen_forms:
                    found.append(f"seq {seq}: hidden cards {form[:40]!r} in the bytes")
    for seq, ev in enumerate(tl.events):
        if isinstance(ev, CardDrawn) and ev.seat != seat:
            drawn = format_cards([ev.card], style)
            if data["moves"][seq].endswith(drawn):
                found.append(f"seq {seq}: the move list names the card seat {ev.seat} drew")
    return found


@pytest.mark.parametrize("path", LOGS, ids=lambda p: getattr(p, "name", str(p)))
def test_no_seats_page_shows_a_card_that_seat_could_not_see(path: Path) -> None:
    tl = Timeline(load(path))
    for seat in range(len(tl.players)):
        page = build_page(tl.recorded, seat=seat).html.encode("utf-8")
        assert leaks(page, tl, seat) == []


@pytest.mark.parametrize("path", [GOLDEN[0], SIM / "biriba-4p-000000.blog"],
                         ids=lambda p: p.name)
def test_the_referees_page_fails_the_same_checks(path: Path) -> None:
    tl = Timeline(load(path))
    page = build_page(tl.recorded).html.encode("utf-8")
    found = leaks(page, tl, 0)
    assert any("frame keys" in f for f in found)
    assert any("in the bytes" in f for f in found)
    assert any("move list" in f for f in found)


def test_a_seats_page_still_shows_its_own_hand_and_the_counts_of_the_others() -> None:
    tl = Timeline(load(SIM / "biriba-4p-000000.blog"))
    frames = frames_of(data_of(build_page(tl.recorded, seat=2).html))
    for seq in (5, 60, tl.last_seq):
        s = tl.state_at(seq)
        assert frames[seq]["h2"] == sorted(s.hands[2], key=sort_key)
        assert frames[seq]["c"] == [len(h) for h in s.hands]
        assert frames[seq]["mc"] == [len(m) for m in s.mortos]


def test_an_illegal_events_banner_on_a_seats_page_gives_the_rule_not_the_cards() -> None:
    from tests.brokenlogs import match, with_illegal_discard

    events, bad = with_illegal_discard(match("biriba", 4, seed=3))
    referee = build_page(events)
    seat = build_page(events, seat=(events[bad].seat + 1) % 4)  # type: ignore[union-attr]
    assert referee.banners[0].rule == seat.banners[0].rule
    assert referee.banners[0].text != seat.banners[0].text
    assert f"seq {bad} is illegal" in seat.banners[0].text
