"""One line saying what each rules knob means, for `rules show`, house-rules errors and the docs.

Kept beside ``rules.py`` rather than in it: the rules value is a format promise read on every
replay, while these sentences are for people and may be reworded at any time. A test checks that
every field of ``Rules`` (and of its ``points`` and ``bonuses``) has a line here.
"""

from __future__ import annotations

import difflib
from typing import Final

KNOBS: Final[dict[str, str]] = {
    "name": "the preset's or house rules' name",
    "player_counts": "how many players may sit (2, 3, 4 or 6); 4 and 6 play as two partnerships",
    "jokers": "jokers in the material (0, 2 or 4); they and the 2s are wild",
    "hand_size": "cards dealt to each player",
    "morto": "each side has a morto (a second hand) to take after emptying the hand",
    "morto_size": "cards in each morto",
    "morto_direct": "emptying the hand by melding takes the morto at once, mid-turn",
    "morto_needs_canastra": "a side must have a canastra before it may take its morto",
    "go_out_needs_canastra": "a side must have a canastra before it may go out",
    "initial_upcard": "one card is turned up to start the pile",
    "pile_pickup": "free: take the whole pile at will; must_use_top: only to meld its top card",
    "first_turn_redraw": "on a hand's first turn, the first card drawn may be refused for the next",
    "ace_both_ends": "a run may hold both aces, A..K..A (14 cards); it still never wraps (K-A-2)",
    "max_sets_per_rank": "how many sets of one rank a side may lay down (0: no limit)",
    "canastra_size": "cards in a canastra",
    "canastra_from_sets": "sets of equal rank can become canastras (runs always can)",
    "semi_clean": "a run with one wild beside 7 unbroken naturals is a semi-clean canastra",
    "royal_canastras": "a run A..K is a royal canastra, A..K..A an ace-to-ace one",
    "relancinho": "laying the whole hand down in one turn, with no earlier meld, scores a bonus",
    "stock_floor": "the hand ends when the stock is down to this many cards",
    "target_score": "the match ends when a side reaches this total",
    "vulnerability": "a side at or above vulnerable_at needs a higher first meld",
    "vulnerable_at": "the total from which a side is vulnerable (half the target by default)",
    "opening_min": "points a vulnerable side's first meld must reach",
    "opening_min_after_retract": "the same, once a short first meld was taken back",
    "points": "card points by kind, counted on the table and against cards left in hand",
    "points.joker": "points of a joker",
    "points.two": "points of a 2",
    "points.ace": "points of an ace",
    "points.high": "points of an 8 to a king",
    "points.low": "points of a 3 to a 7",
    "bonuses": "canastra and end-of-hand bonuses (penalties are positive numbers)",
    "bonuses.clean": "a clean canastra (no wild)",
    "bonuses.semi_clean": "a semi-clean canastra",
    "bonuses.dirty": "a dirty canastra (with a wild out of place)",
    "bonuses.royal": "a royal canastra (A..K of one suit)",
    "bonuses.ace_to_ace": "an ace-to-ace canastra (A..K..A of one suit)",
    "bonuses.going_out": "going out",
    "bonuses.relancinho": "the relancinho (the whole hand down in one turn)",
    "bonuses.morto_not_taken": "penalty for a side that never took its morto",
    "rendering": "cards, or tiles (Burako): how the material is drawn",
    "morto_voided_by": "which end of the hand voids an indirect morto its taker has not played: "
    "opponent_out (only an opponent going out) or any_end (the reading of logs made before it)",
}


# The lines that speak of playing cards, as a rules value drawn in tiles says them (Burako,
# RULES.md §1: tile 1 = ace, 11/12/13 = J/Q/K, colour = suit; only the rendering differs).
TILE_KNOBS: Final[dict[str, str]] = {
    "hand_size": "tiles dealt to each player",
    "morto_size": "tiles in each morto",
    "initial_upcard": "one tile is turned up to start the pile",
    "pile_pickup": "free: take the whole pile at will; must_use_top: only to meld its top tile",
    "first_turn_redraw": "on a hand's first turn, the first tile drawn may be refused for the next",
    "ace_both_ends": "a run may hold both 1s, 1..13..1 (14 tiles); it still never wraps (13-1-2)",
    "max_sets_per_rank": "how many sets of one number a side may lay down (0: no limit)",
    "canastra_size": "tiles in a canastra",
    "canastra_from_sets": "sets of equal number can become canastras (runs always can)",
    "royal_canastras": "a run 1..13 is a royal canastra, 1..13..1 a 1-to-1 one",
    "stock_floor": "the hand ends when the stock is down to this many tiles",
    "points": "tile points by kind, counted on the table and against tiles left in hand",
    "points.ace": "points of a 1",
    "points.high": "points of an 8 to a 13",
    "bonuses.royal": "a royal canastra (1..13 of one colour)",
    "bonuses.ace_to_ace": "a 1-to-1 canastra (1..13..1 of one colour)",
}


def describe(knob: str, tiles: bool = False) -> str:
    """The line for ``knob`` (a field, or ``points.two``), or an empty string; ``tiles``: as
    a rules value drawn in tiles says it (Burako)."""
    if tiles and knob in TILE_KNOBS:
        return TILE_KNOBS[knob]
    return KNOBS.get(knob, "")


def did_you_mean(word: str, choices: list[str] | None = None) -> str:
    """`` (did you mean 'target_score'?)`` for a misspelt knob, or an empty string."""
    close = difflib.get_close_matches(word, choices if choices is not None else list(KNOBS), 1, 0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
