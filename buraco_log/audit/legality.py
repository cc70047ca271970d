"""Legality: the first illegal event of a match and the table just before it."""

from __future__ import annotations

from typing import Any

import msgspec

from buraco_log.audit.findings import to_dict
from buraco_log.errors import BuracoLogError
from buraco_log.ruleids import describe
from buraco_log.state import State
from buraco_log.timeline import (
    TableView,
    Timeline,
    cards_text,
    table_view,
)

_CARDS = "cards"


class IllegalEvent(msgspec.Struct, frozen=True, omit_defaults=True):
    """The first illegal event and the table just before it. ``rendering``: the rules' (tiles
    for Burako), for the words a text report puts around ``cards``; omitted from the JSON when
    it is cards, so a card preset's report is as it was."""

    seq: int
    tag: str | None
    rule: str
    description: str  # the rule in plain language (``ruleids``)
    message: str  # what happened, naming seat and cards
    seat: int | None
    cards: tuple[str, ...]
    event: dict[str, Any]
    before: TableView
    rendering: str = _CARDS  # omitted from the JSON when it is cards
    # The seq of the changed deal (``deal.mismatch``) this event follows from: with the deal
    # its seeds give, the hand replays legally through it. Omitted when none.
    follows_from: int | None = None

    def __post_init__(self) -> None:
        # msgspec omits a default by identity, not equality: a verdict from an audit worker
        # (unpickled) held an equal "cards" of its own and `audit -j 2 -f json` printed it
        # where `-j 1` did not. Any equal value becomes the default object itself.
        if self.rendering == _CARDS and self.rendering is not _CARDS:
            msgspec.structs.force_setattr(self, "rendering", _CARDS)


class Legality(msgspec.Struct, frozen=True):
    """The legality section of a verdict: how far the events replay legally, and the first
    illegal event if any."""

    events_checked: int  # events replayed legally
    complete: bool  # the match reached its end (MatchEnded)
    first_illegal: IllegalEvent | None


def _illegal(tl: Timeline) -> IllegalEvent | None:
    exc = tl.illegal
    if exc is None or exc.seq is None:
        return None
    ev = next((e for e in tl.recorded if e.seq == exc.seq), None)
    before = tl.before_illegal or State()
    try:
        cards = cards_text(exc.cards, tl.style)
    except BuracoLogError:
        cards = tuple(str(c) for c in exc.cards)
    return IllegalEvent(
        seq=exc.seq, tag=exc.tag, rule=exc.rule,
        description=describe(exc.rule, tiles=tl.style == "tiles"),  # Burako: in tiles
        message=exc.explanation, seat=exc.seat, cards=cards,
        event=to_dict(ev) if ev is not None else {},
        before=table_view(before, recent=tl.recent(before.seq)),
        rendering="tiles" if tl.style == "tiles" else "cards",
    )
