"""Meld readings held to a brute force written from RULES.md §5-6 alone: every way of
reading the cards (each 2 of the run's suit natural in its place or wild, each ace low or
high, the one wild anywhere it fits) is tried, the canonical reading keeps the most natural
2s, and the canastra class is the best the readings give (RULES.md §6: semi-clean when some
reading holds seven naturals in a row; royal A..K and ace-to-ace A..K..A in burako). The
engine's reader (bit masks, a memo) must say the same of random runs and sets: meld or no
meld, set or run, and the class.
"""

from __future__ import annotations

import itertools
import random

import pytest

from buraco_log.cards import JOKER, RANK, SUIT, Card, format_cards
from buraco_log.melds import MeldError, _read
from buraco_log.rules import Rules, preset

Reading = tuple[str, str | None]
NAMES = ("classic", "thirteen", "burraco", "mega", "burako")
ORDER = ["ace_to_ace", "royal", "clean", "semi_clean", "dirty", None]


def _run_readings(cards: list[Card], suit: int, rules: Rules) -> list[tuple[int, str | None]]:
    """(natural 2s, canastra class) of every valid reading of ``cards`` as a run of ``suit``."""
    out: list[tuple[int, str | None]] = []
    own_twos = [i for i, c in enumerate(cards) if c != JOKER and RANK[c] == 2 and SUIT[c] == suit]
    for k in range(len(own_twos) + 1):
        for natural in itertools.combinations(own_twos, k):
            fixed: list[int] = []
            wilds = aces = 0
            for i, c in enumerate(cards):
                if c == JOKER or (RANK[c] == 2 and i not in natural):
                    wilds += 1
                elif RANK[c] == 1:
                    aces += 1
                else:
                    fixed.append(RANK[c])
            if wilds > 1:
                continue
            for ace_places in itertools.product((1, 14), repeat=aces):
                pos = sorted(fixed + list(ace_places))
                if not pos or len(set(pos)) != len(pos):
                    continue
                if 1 in pos and 14 in pos and not rules.ace_both_ends:
                    continue
                lo, hi = pos[0], pos[-1]
                missing = hi - lo + 1 - len(pos)
                size = len(pos) + wilds
                if missing > wilds or size > rules.max_run():
                    continue
                if missing == 0 and wilds and lo == 1 and hi == 14:
                    continue  # no end left for the wild
                stretch = best = 1
                for a, b in itertools.pairwise(pos):
                    stretch = stretch + 1 if b == a + 1 else 1
                    best = max(best, stretch)
                cls: str | None = None
                if size >= rules.canastra_size:
                    if not wilds:
                        cls = "clean"
                        if rules.royal_canastras and (lo, hi) == (1, 14):
                            cls = "ace_to_ace"
                        elif rules.royal_canastras and size == 13:
                            cls = "royal"  # all thirteen ranks, the ace at either end
                    elif rules.semi_clean and best >= rules.canastra_size:
                        cls = "semi_clean"
                    else:
                        cls = "dirty"
                out.append((k, cls))
    return out


def brute(cards: list[Card], rules: Rules) -> Reading | None:
    if len(cards) < 3:
        return None
    naturals = [c for c in cards if c != JOKER and RANK[c] != 2]
    wilds = len(cards) - len(naturals)
    if len(naturals) >= 2 and len({RANK[c] for c in naturals}) == 1:
        if wilds > 1:
            return None
        big = len(cards) >= rules.canastra_size and rules.canastra_from_sets
        return ("set", ("dirty" if wilds else "clean") if big else None)
    suits = {SUIT[c] for c in naturals}
    if len(suits) > 1:
        return None
    candidates = suits or {SUIT[c] for c in cards if c != JOKER}
    readings = [r for suit in candidates for r in _run_readings(cards, suit, rules)]
    if not readings:
        return None
    most = max(k for k, _ in readings)  # a 2 is natural wherever it can be (RULES.md §5)
    return ("run", min((cls for k, cls in readings if k == most), key=ORDER.index))


def engine(cards: list[Card], rules: Rules) -> Reading | None:
    got = _read(cards, rules)
    return None if isinstance(got, MeldError) else (got.kind, got.canastra)


def random_meld(rng: random.Random, rules: Rules) -> list[Card]:
    if rng.random() < 0.15:  # a set, perhaps with a wild
        rank = rng.randint(1, 13)
        cards = [rng.randrange(4) * 16 + rank for _ in range(rng.randint(2, 8))]
        if rng.random() < 0.6:
            cards.append(JOKER if rules.jokers and rng.random() < 0.5
                         else rng.randrange(4) * 16 + 2)
        return cards
    suit = rng.randrange(4)
    lo = rng.randint(1, 13)
    ranks = list(range(lo, rng.randint(lo, min(14, lo + 13)) + 1))
    rng.shuffle(ranks)
    cards = [suit * 16 + (1 if r == 14 else r) for r in ranks[: rng.randint(1, len(ranks))]]
    for _ in range(rng.choice((0, 0, 1, 1, 1, 2))):
        kind = rng.choice(("joker", "own 2", "other 2", "copy"))
        if kind == "joker" and rules.jokers:
            cards.append(JOKER)
        elif kind == "own 2":
            cards.append(suit * 16 + 2)
        elif kind == "other 2":
            cards.append((suit + rng.randint(1, 3)) % 4 * 16 + 2)
        elif kind == "copy":
            cards.append(rng.choice(cards))
    rng.shuffle(cards)
    return cards


def compare(name: str, seed: int, count: int) -> None:
    rules = preset(name)
    rng = random.Random(seed)
    for _ in range(count):
        cards = random_meld(rng, rules)
        want, got = brute(cards, rules), engine(cards, rules)
        assert got == want, f"{name}: {format_cards(sorted(cards), 'ascii')}: " \
                            f"RULES.md reads {want}, the engine {got}"


def test_the_brute_force_knows_the_rules_md_examples() -> None:
    """The brute force itself, on RULES.md's own examples, so a slip in it shows here."""
    burraco, burako, thirteen = preset("burraco"), preset("burako"), preset("thirteen")

    def cards(text: str) -> list[Card]:
        from buraco_log.cards import parse_cards
        return list(parse_cards(text))

    assert brute(cards("Ah JK 3h 4h 5h 6h 7h 8h 9h"), burraco) == ("run", "semi_clean")
    assert brute(cards("3h 4h 5h 6h JK 8h 9h Th"), burraco) == ("run", "dirty")
    assert brute(cards("Ks As 2s"), thirteen) == ("run", None)  # Q-K-A, the 2 wild
    assert brute(cards("Ks As 3s"), thirteen) is None  # a wrap
    assert brute(cards("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks"), burako) == ("run", "royal")
    assert brute(cards("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks As"), burako) == \
        ("run", "ace_to_ace")
    assert brute(cards("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks As"), thirteen) is None
    assert brute(cards("2c 2d 2h"), thirteen) is None
    assert brute(cards("7c 7d 7h 7s 7c 7d 2h"), preset("mega")) == ("set", None)


@pytest.mark.parametrize("name", NAMES)
def test_the_reader_reads_as_the_brute_force(name: str) -> None:
    compare(name, 45, 3000)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_the_reader_reads_as_the_brute_force_long(name: str) -> None:
    compare(name, 4545, 60000)
