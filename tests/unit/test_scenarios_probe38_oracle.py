"""Probe 38, the engine against an oracle written from RULES.md alone (no buraco_log.melds,
no buraco_log.scoring):

- meld reading (RULES.md §5, §6): a set or a run, at most one wild, a 2 read natural whenever
  the meld is valid so, the ace low or high (both only with `ace_both_ends`), never a wrap,
  and the canastra class (clean, dirty, semi-clean in `burraco`, royal and ace-to-ace in
  `burako`, sets only where `canastra_from_sets`), on seeded random cards;
- hand scores (RULES.md §7, §9): cards on the table, canastra bonuses, going out, relancinho,
  cards left in hand, the morto not taken or voided by an opponent's going out before its
  taker's next turn, on seeded random legal matches of every preset and player count.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

import pytest

from buraco_log.cards import JOKER, RANK, SUIT, format_cards, make
from buraco_log.events import (
    AnyEvent,
    CardDiscarded,
    CardsLaidOff,
    HandEnded,
    HandStarted,
    MeldLaid,
    MortoTaken,
    OpeningRetracted,
    WentOut,
)
from buraco_log.melds import MeldError, read_meld
from buraco_log.reducer import Replayer
from buraco_log.rules import Rules, preset
from tests.play import random_match
from tests.spec_points import spec_points

# RULES.md §9, by hand.
BONUS = {"clean": 200, "semi_clean": 150, "dirty": 100, "royal": 500, "ace_to_ace": 1000}
GOING_OUT = {"classic": 50, "biriba": 50, "bossa-nova": 50, "thirteen": 100,
             "thirteen-quick": 100, "burraco": 100, "mega": 100, "burako": 100}
RELANCINHO = {"classic": 100, "biriba": 100, "bossa-nova": 100}
MORTO_NOT_TAKEN = 100
RANK_OF_CLASS = {None: 0, "dirty": 1, "semi_clean": 2, "clean": 3, "royal": 4, "ace_to_ace": 5}

Reading = tuple[int, str | None, str]  # wilds, class, kind


def _set_reading(cards: Sequence[int], r: Rules) -> list[Reading]:
    naturals = [c for c in cards if c != JOKER and RANK[c] != 2]
    wilds = len(cards) - len(naturals)
    if len(naturals) < 2 or wilds > 1 or len({RANK[c] for c in naturals}) != 1:
        return []
    cls = None
    if len(cards) >= r.canastra_size and r.canastra_from_sets:
        cls = "clean" if wilds == 0 else "dirty"
    return [(wilds, cls, "set")]


def _longest_stretch(ranks: list[int]) -> int:
    srt = sorted(ranks)
    best = run = 1
    for a, b in itertools.pairwise(srt):
        run = run + 1 if b == a + 1 else 1
        best = max(best, run)
    return best


def _run_class(n: int, wilds: int, ranks: list[int], r: Rules) -> str | None:
    if n < r.canastra_size:
        return None
    if wilds:
        semi = r.semi_clean and _longest_stretch(ranks) >= r.canastra_size
        return "semi_clean" if semi else "dirty"
    if r.royal_canastras and n == 14:
        return "ace_to_ace"
    if r.royal_canastras and n == 13 and set(range(2, 14)) <= set(ranks) and (
            1 in ranks or 14 in ranks):
        return "royal"
    return "clean"


def _run_readings(cards: Sequence[int], r: Rules) -> list[Reading]:
    n = len(cards)
    plain = [c for c in cards if c != JOKER and RANK[c] != 2]
    twos = [c for c in cards if c != JOKER and RANK[c] == 2]
    out: list[Reading] = []
    for suit in {SUIT[c] for c in plain} or {SUIT[c] for c in twos}:
        if any(SUIT[c] != suit for c in plain):
            continue
        own_two = [c for c in twos if SUIT[c] == suit][:1]
        for natural_two in (own_two, []):
            naturals = plain + natural_two
            wilds = n - len(naturals)
            others = [RANK[c] for c in naturals if RANK[c] != 1]
            aces = len(naturals) - len(others)
            if wilds > 1 or len(naturals) < 2 or len(set(others)) != len(others) or aces > 2 \
                    or (aces == 2 and not r.ace_both_ends):
                continue
            ace_places = [[1, 14]] if aces == 2 else [[1], [14]] if aces else [[]]
            for ace in ace_places:
                ranks = others + ace
                for lo in range(1, 16 - n):
                    hi = lo + n - 1
                    if lo == 1 and hi == 14 and not r.ace_both_ends:
                        continue
                    if all(lo <= x <= hi for x in ranks):
                        out.append((wilds, _run_class(n, wilds, ranks, r), "run"))
    return out


def spec_reading(cards: Sequence[int], r: Rules) -> tuple[str, str | None] | None:
    """(kind, canastra class) by RULES.md, or None when the cards are no meld."""
    if len(cards) < 3:
        return None
    readings = _set_reading(cards, r) + _run_readings(cards, r)
    if not readings:
        return None
    _, cls, kind = min(readings, key=lambda x: (x[0], -RANK_OF_CLASS[x[1]]))
    return kind, cls


def _random_cards(rng: random.Random, r: Rules) -> list[int]:
    def wild() -> int:
        return JOKER if r.jokers and rng.random() < 0.5 else make(2, rng.randrange(4))

    suit = rng.randrange(4)
    if rng.random() < 0.25:  # a set, now and then with a stray card
        rank = rng.choice([1, 2, 3, 7, 9, 13])
        cards = [make(rank, rng.randrange(4)) for _ in range(rng.randint(1, 9))]
        cards += [wild() for _ in range(rng.choice([0, 0, 1, 2]))]
        if rng.random() < 0.1:
            cards.append(make(rng.randint(3, 13), rng.randrange(4)))
        return cards
    lo, length = rng.randint(1, 13), rng.randint(3, 14)
    if rng.random() < 0.2:  # turning the corner
        ranks = [(lo - 1 + i) % 13 + 1 for i in range(length)]
    else:
        ranks = list(range(lo, min(14, lo + length)))
    cards = [make(x, suit) for x in ranks]
    if ranks[-1] == 13 and rng.random() < 0.3:
        cards.append(make(1, suit))
    if len(cards) > 3 and rng.random() < 0.5:
        cards.pop(rng.randrange(len(cards)))
    cards += [wild() for _ in range(rng.choice([0, 1, 1, 2]))]
    return cards


def engine_reading(cards: Sequence[int], r: Rules) -> tuple[str, str | None] | None:
    try:
        m = read_meld(cards, r)
    except MeldError:
        return None
    return m.kind, m.canastra


@pytest.mark.parametrize("name", ["classic", "burraco", "thirteen", "mega", "burako"])
def test_meld_readings_agree_with_the_oracle(name: str) -> None:
    r = preset(name)
    rng = random.Random(f"probe38-{name}")
    seen = {True: 0, False: 0}
    for _ in range(1500):
        cards = _random_cards(rng, r)
        want = spec_reading(cards, r)
        got = engine_reading(cards, r)
        assert got == want, f"{name} {format_cards(cards)}: engine {got}, RULES.md {want}"
        seen[want is not None] += 1
    assert min(seen.values()) > 300  # both valid and invalid melds were tried


# -- hand scores ---------------------------------------------------------------------------------

class _Hand:
    """What RULES.md's scoring needs, followed from the events of one hand."""

    def __init__(self, ev: HandStarted, r: Rules, players: int) -> None:
        self.r, self.n = r, players
        sides = r.sides(players)
        self.melds: list[list[list[int]]] = [[] for _ in range(sides)]
        self.laid_now: list[tuple[int, int]] = []  # (side, meld) touched this turn
        self.laid_any_now = False
        self.laid_earlier = [False] * players
        self.relancinho = [0] * sides
        self.noted = [False] * players
        self.taken = [False] * sides
        self.pending: list[int | None] = [None] * sides
        self.went_out: int | None = None
        self.turn = (ev.dealer + 1) % players

    def side(self, seat: int) -> int:
        return seat if self.n <= 3 else seat % 2

    def next_turn(self) -> None:
        if self.laid_any_now:
            self.laid_earlier[self.turn] = True
        self.laid_any_now = False
        self.turn = (self.turn + 1) % self.n
        if self.pending[self.side(self.turn)] == self.turn:
            self.pending[self.side(self.turn)] = None  # the taker's own next turn began

    def emptied(self, seat: int) -> None:
        if self.r.relancinho and not self.laid_earlier[seat] and not self.noted[seat]:
            self.noted[seat] = True
            self.relancinho[self.side(seat)] += 1

    def step(self, ev: AnyEvent, hand_left: int) -> None:
        if isinstance(ev, MeldLaid):
            self.melds[self.side(ev.seat)].append(list(ev.cards))
            self.laid_any_now = True
        elif isinstance(ev, CardsLaidOff):
            self.melds[self.side(ev.seat)][ev.meld].extend(ev.cards)
            self.laid_any_now = True
        elif isinstance(ev, OpeningRetracted):
            self.melds[self.side(ev.seat)] = []  # a side that had not opened: all laid now
            self.laid_any_now = False
        elif isinstance(ev, CardDiscarded) and hand_left:
            self.next_turn()
        elif isinstance(ev, MortoTaken):
            self.taken[self.side(ev.seat)] = True
            self.emptied(ev.seat)
            if not ev.direct:
                self.pending[self.side(ev.seat)] = ev.seat
                self.next_turn()
        elif isinstance(ev, WentOut):
            self.emptied(ev.seat)
            self.went_out = ev.seat

    def scores(self, name: str, hands: Sequence[Sequence[int]]) -> list[int]:
        out = []
        for side, melds in enumerate(self.melds):
            total = sum(spec_points(name, m) for m in melds)
            for m in melds:
                reading = spec_reading(m, self.r)
                assert reading is not None, f"{format_cards(m)} on the table is no meld"
                total += BONUS.get(reading[1] or "", 0)
            out_side = self.went_out is not None and self.side(self.went_out) == side
            voided = self.pending[side] is not None and self.went_out is not None \
                and not out_side
            total += GOING_OUT[name] if out_side else 0
            total += self.relancinho[side] * RELANCINHO.get(name, 0)
            for seat, held in enumerate(hands):
                if self.side(seat) == side and not (voided and seat == self.pending[side]):
                    total -= spec_points(name, held)
            if self.r.morto and (not self.taken[side] or voided):
                total -= MORTO_NOT_TAKEN
            out.append(total)
        return out


def oracle_check(name: str, players: int, seed: int) -> int:
    """Replay a random legal match, scoring each hand by the oracle; the hands compared."""
    r = preset(name)
    rep = Replayer()
    hand: _Hand | None = None
    compared = 0
    for ev in random_match(name, players, seed, max_hands=2, eager=True):
        if isinstance(ev, HandEnded):
            assert hand is not None
            want = hand.scores(name, rep.state().hands)
        rep.step(ev)
        if isinstance(ev, HandStarted):
            hand = _Hand(ev, r, players)
        elif isinstance(ev, HandEnded):
            got = [s.total for s in rep.state().results[-1].scores]
            assert got == want, f"{name} {players}p seed {seed} seq {ev.seq}: {got} != {want}"
            compared += 1
        elif hand is not None and hasattr(ev, "seat"):
            hand.step(ev, len(rep.state().hands[ev.seat]))
    return compared


CASES = [(name, p) for name in GOING_OUT for p in preset(name).player_counts]


@pytest.mark.parametrize(("name", "players"), CASES)
def test_hand_scores_agree_with_the_oracle(name: str, players: int) -> None:
    assert oracle_check(name, players, 38) >= 1


@pytest.mark.slow
@pytest.mark.parametrize(("name", "players"), CASES)
def test_hand_scores_agree_with_the_oracle_on_more_matches(name: str, players: int) -> None:
    assert sum(oracle_check(name, players, seed) for seed in range(100, 110)) >= 10
