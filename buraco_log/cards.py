"""Cards as small integers, and their text forms.

A card is an ``int`` code: ``suit * 16 + rank`` with rank 1 (ace) .. 13 (king) and suit
0 clubs, 1 diamonds, 2 hearts, 3 spades; the joker is ``JOKER`` (64). Codes fit in one
MessagePack byte and index flat lookup tables, which keeps replay fast. The two copies of a card
share one code: copies are interchangeable for the rules, and conservation is checked on the
multiset.

Burako tiles are the same model rendered differently: tile 1..13 = rank, colour = suit.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Iterable
from typing import Final, Literal

from buraco_log.errors import CardParseError, RulesError

Card = int
"""A card code (see the module docstring)."""

CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3
SUITS = (CLUBS, DIAMONDS, HEARTS, SPADES)
# Final: the compiled modules take these values as constants instead of looking them up.
ACE: Final = 1
JACK: Final = 11
QUEEN: Final = 12
KING: Final = 13
JOKER: Final = 64
NATURALS: tuple[Card, ...] = tuple(s * 16 + r for s in SUITS for r in range(1, 14))
ALL_CODES: tuple[Card, ...] = (*NATURALS, JOKER)

Style = Literal["ascii", "unicode", "tiles", "tiles-unicode"]
STYLES: tuple[Style, ...] = ("ascii", "unicode", "tiles", "tiles-unicode")

# Flat tables indexed by code: replay reads these on every meld, so no arithmetic per lookup.
RANK: list[int] = [0] * 65
SUIT: list[int] = [-1] * 65
for _c in NATURALS:
    RANK[_c] = _c & 15
    SUIT[_c] = _c >> 4
IS_CARD: list[bool] = [False] * 65
for _c in ALL_CODES:
    IS_CARD[_c] = True

_RANK_ASCII = {1: "A", 10: "T", 11: "J", 12: "Q", 13: "K"}
_SUIT_ASCII = "cdhs"
_SUIT_UNICODE = "♣♦♥♠"
# Burako tile colours. The letters differ from the suit letters, so text is never ambiguous.
_TILE_COLOURS = "ybrk"  # yellow, blue, red, black
_TILE_UNICODE = "🟡🔵🔴⚫"


def make(rank: int, suit: int) -> Card:
    """The code of a natural card."""
    if not (1 <= rank <= 13 and 0 <= suit <= 3):
        raise CardParseError(f"no card with rank {rank} and suit {suit}")
    return suit * 16 + rank


def is_card(code: object) -> bool:
    """True for a valid card code (an int; ``True`` is no ace of clubs)."""
    return isinstance(code, int) and not isinstance(code, bool) and 0 <= code <= 64 \
        and IS_CARD[code]


def rank_of(card: Card) -> int:
    return RANK[card]


def suit_of(card: Card) -> int:
    return SUIT[card]


JOKERS_MAX: Final = 4
"""The most jokers a material holds: the rules' bound on the ``jokers`` knob (rules.BOUNDS)."""


def deck(jokers: int) -> list[Card]:
    """The material: two French decks (104 cards) plus ``jokers`` jokers, in a fixed order.

    ``jokers`` is bounded as the rules knob is (0 to :data:`JOKERS_MAX`): a caller passing
    10**10 built a list of ten billion jokers before anything said no."""
    if isinstance(jokers, bool):  # True is no count
        raise RulesError("jokers", f"{jokers!r} is not an integer")
    try:
        n = operator.index(jokers)  # a NumPy integer is a count, as for the dealer
    except TypeError:
        raise RulesError("jokers", f"{jokers!r} is not an integer") from None
    if not 0 <= n <= JOKERS_MAX:
        shown = n if abs(n) < 10**12 else f"{str(n)[:6]}... ({len(str(abs(n)))} digits)"
        raise RulesError("jokers", f"{shown} is out of bounds (0 to {JOKERS_MAX})")
    return [*NATURALS, *NATURALS, *([JOKER] * n)]


def format_card(card: Card, style: Style = "ascii") -> str:
    """Text for one card. ``parse_card`` reads every style back."""
    if not is_card(card):
        raise CardParseError(f"{card!r} is not a card code")
    if card == JOKER:
        return "🃏" if style == "unicode" else "JK"
    r, s = RANK[card], SUIT[card]
    if style == "ascii":
        return _RANK_ASCII.get(r, str(r)) + _SUIT_ASCII[s]
    if style == "unicode":
        return (_RANK_ASCII.get(r, str(r)) if r != 10 else "10") + _SUIT_UNICODE[s]
    if style == "tiles":
        return f"{r}{_TILE_COLOURS[s]}"
    if style == "tiles-unicode":
        return f"{r}{_TILE_UNICODE[s]}"
    # a style no reader knows fell through to coloured tiles ('bogus' gave 7🟡)
    raise CardParseError(f"unknown card style {style!r} (one of {', '.join(STYLES)})")


def format_cards(cards: Iterable[Card], style: Style = "ascii", sep: str = " ") -> str:
    return sep.join(format_card(c, style) for c in cards)


_RANK_TEXT = {"A": 1, "T": 10, "J": 11, "Q": 12, "K": 13}
_JOKER_TEXT = {"JK", "JOKER", "🃏", "*", "TATU"}


def parse_card(text: str) -> Card:
    """Read ``Th``, ``10h``, ``7♥``, ``10♥``, ``JK``, ``🃏`` or a Burako tile ``12r``.

    Written files use ``7h``/``Th``/``12r``; a reader also takes the other spellings it has
    always taken (``1h`` or ``11s`` for a card, ``Kr`` for a tile, ``07h``), because logs
    written by hand or by other tools hold them and a log once read must stay readable."""
    if not isinstance(text, str):  # None.strip() failed deep inside, b"7h" in endswith
        raise CardParseError(f"{text!r} is not a card: a card is text (e.g. 7h, Th, JK)")
    t = text.strip()
    if t.upper() in _JOKER_TEXT:
        return JOKER
    if len(t) < 2:
        raise CardParseError(f"{text!r} is not a card (expected e.g. 7h, Th, 10h, 7♥, JK)")
    for table in (_SUIT_ASCII, _SUIT_UNICODE, _TILE_COLOURS, _TILE_UNICODE):
        tiles = table is _TILE_COLOURS or table is _TILE_UNICODE
        for suit, mark in enumerate(table):
            if t.endswith(mark) or (table is _SUIT_ASCII and t.endswith(mark.upper())):
                return make(_parse_rank(t[: -len(mark)], text, tiles), suit)
    raise CardParseError(f"{text!r} is not a card: unknown suit or colour")


def _parse_rank(head: str, text: str, tiles: bool) -> int:
    h = head.upper()
    if h in _RANK_TEXT:
        return _RANK_TEXT[h]
    # ASCII digits only: str.isdigit() takes other scripts' digits (٧, ７) and superscripts
    # (², which int() then refuses), so a card could be written in text no reader sees as 7.
    if h.isascii() and h.isdigit() and 1 <= int(h) <= 13:
        return int(h)
    raise CardParseError(
        f"{text!r} is not a card: unknown {'number' if tiles else 'rank'} {head!r}")


def parse_cards(text: str) -> tuple[Card, ...]:
    """Read cards separated by spaces or commas."""
    return tuple(parse_card(p) for p in text.replace(",", " ").split())


def sort_key(card: Card) -> tuple[int, int]:
    """Display order: by suit, then rank; jokers last."""
    return (SUIT[card] if card != JOKER else 9, RANK[card])


def multiset(cards: Iterable[Card]) -> Counter[Card]:
    return Counter(cards)


def counted(n: int, unit: str) -> str:
    """``1 card``, ``3 tiles``: a count and its unit (``card``, ``tile``), singular for one;
    the words of every count of cards or tiles a message gives (it said "1 cards")."""
    return f"{n} {unit}" if n == 1 else f"{n} {unit}s"
