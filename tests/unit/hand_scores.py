"""Each preset's hand-score knobs and a hand's points under one of them."""

from __future__ import annotations

from buraco_log.cards import JOKER, RANK, parse_cards

PRESETS = ("classic", "biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
           "burako")


# RULES.md §9, first table: (joker, 2); an ace is 15, 8-K 10, 3-7 5 everywhere.
JOKER_TWO = {"classic": (10, 10), "biriba": (10, 10), "bossa-nova": (10, 10),
             "thirteen": (50, 10), "thirteen-quick": (50, 10), "burraco": (30, 20),
             "mega": (50, 10), "burako": (50, 10)}


MORTO_NOT_TAKEN = {name: 0 if name == "classic" else 100 for name in PRESETS}


def points(name: str, cards: str) -> int:
    joker, two = JOKER_TWO[name]
    total = 0
    for c in parse_cards(cards):
        r = 0 if c == JOKER else RANK[c]
        total += (joker if c == JOKER else two if r == 2 else 15 if r == 1
                  else 10 if r >= 8 else 5)
    return total
