"""A seat's page carries no hidden card: not in its data, markup or comments, at any seq.

Checked on the written file's bytes: the data is decoded back from the file and every frame
rebuilt; every card in a frame must be one the seat could see at that seq (its own hand, the
pile, the melds); nothing outside the data element names a card; and no hidden hand, stock or
morto appears in the bytes in any of the forms the page writes cards. The referee's page fails
the same checks, which shows they can fail.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from buraco_log.audit import load
from buraco_log.cards import sort_key
from buraco_log.timeline import Timeline
from buraco_log.view import build_page
from tests.view.leaks import leaks
from tests.view.pages import GOLDEN, SIM, data_of, frames_of

LOGS = [*GOLDEN, SIM / "biriba-4p-000000.blog",
        pytest.param(SIM / "bossa-nova-3p-000000.blog", marks=pytest.mark.slow)]


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
