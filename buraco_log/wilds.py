"""Where a meld's wild card stands: which rank it stands for, or which end of a run it extends.

A meld on the table is the multiset of its cards (RULES.md §5: the wild's position is not
fixed), so the place is read from the cards, never stored: in a set the wild is one more of the
set's rank; in a run it fills the one gap between the naturals, or it extends the run at one
end. When either end is open the log cannot say which the player meant, and the answer names
both. ``describe_wild`` puts it in words for people ("2♠ as the 6"); ``wild_place`` is the
same as data. Core module: stdlib only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple

from buraco_log.cards import Card, Style, format_card
from buraco_log.melds import MeldError, cache_for
from buraco_log.rules import Rules

WildKind = Literal["set", "gap", "end"]


class WildPlace(NamedTuple):
    """The wild ``card`` of a meld and where it stands.

    ``kind``: ``set`` (one more of the set's rank), ``gap`` (inside a run), ``end`` (extending a
    run). ``ranks``: the rank it stands for (1 ace .. 13 king; a run's high ace is 14), or for
    ``end`` each rank it may stand for, low end first. ``ends``: for ``end``, which ends are
    open ("low", "high")."""

    card: Card
    kind: WildKind
    ranks: tuple[int, ...]
    ends: tuple[str, ...] = ()


def wild_place(cards: Sequence[Card], rules: Rules) -> WildPlace | None:
    """Where the wild of the meld ``cards`` stands; None when the meld has no wild (a 2 of a
    run's suit in its own place is natural) or the cards are no meld."""
    try:
        reading = cache_for(rules).read(tuple(cards))
    except MeldError:
        return None
    wild = reading.wild
    if wild is None:
        return None
    if reading.kind == "set":
        return WildPlace(wild, "set", (reading.rank,))
    if reading.gap is not None:
        return WildPlace(wild, "gap", (reading.gap,))
    low, high = reading.lo - 1, reading.hi + 1
    ends: list[tuple[str, int]] = []
    if low >= 1:
        ends.append(("low", low))
    if high <= 14 and not (high == 14 and reading.lo == 1 and not rules.ace_both_ends):
        ends.append(("high", high))
    return WildPlace(wild, "end", tuple(r for _, r in ends), tuple(e for e, _ in ends))


_RANK_NAMES = {1: "A", 11: "J", 12: "Q", 13: "K", 14: "A"}


def rank_name(rank: int, style: Style = "unicode") -> str:
    """A rank as people say it: A, 2 .. 10, J, Q, K; tiles by number (1 .. 13)."""
    if style.startswith("tiles"):
        return str(1 if rank == 14 else rank)
    return _RANK_NAMES.get(rank, str(rank))


def describe_wild(cards: Sequence[Card], rules: Rules, style: Style = "unicode") -> str | None:
    """The place of the meld's wild in words: "2♠ as the 6", "JK as a 9", "JK as the 8, at the
    high end", "JK at either end, as the 2 or the 8", "JK as the A, at either end" (a run 2..K,
    whose wild is an ace below or above). None when the meld has no wild."""
    place = wild_place(cards, rules)
    if place is None:
        return None
    card = format_card(place.card, style)
    names = [rank_name(r, style) for r in place.ranks]
    if place.kind == "set":
        article = "an" if names[0] in ("A", "8", "11") else "a"
        return f"{card} as {article} {names[0]}"
    if place.kind == "gap":
        return f"{card} as the {names[0]}"
    if len(names) == 2 and names[0] == names[1]:  # 2..K: the ace below the 2 or above the K
        return f"{card} as the {names[0]}, at either end"
    if len(names) == 2:
        return f"{card} at either end, as the {names[0]} or the {names[1]}"
    return f"{card} as the {names[0]}, at the {place.ends[0]} end"
