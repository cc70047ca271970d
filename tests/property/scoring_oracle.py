"""An independent hand scorer, written from RULES.md §6, §7 and §9 alone (never from the
engine's scoring): what the differential tests hold the engine's hand scores against.

It reads the events of a hand itself for what scoring depends on beyond where the cards lie
(who took a morto and how, whether its taker played again, who went out, relancinhos), and
takes from the engine's table only where each card lies when the hand ends (conservation is
checked elsewhere). Melds are read here again from their cards: the canonical reading of 2s,
the wild's place, and the canastra class all come from the spec's words.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from buraco_log.cards import JOKER, RANK, SUIT
from buraco_log.events import (
    AnyEvent,
    CardsLaidOff,
    HandEnded,
    HandStarted,
    MatchStarted,
    MeldLaid,
    MortoTaken,
    OpeningRetracted,
    WentOut,
)
from buraco_log.reducer import Replayer
from buraco_log.rules import Rules
from buraco_log.state import State


@dataclass(frozen=True)
class Values:
    """One column of RULES.md §9's two tables. ``None``: the preset has no such canastra."""

    joker: int
    two: int
    ace: int
    high: int  # 8..K
    low: int  # 3..7
    clean: int
    dirty: int
    going_out: int
    relancinho: int
    morto_not_taken: int
    semi_clean: int | None = None
    royal: int | None = None
    ace_to_ace: int | None = None


_BRAZILIAN_CARDS = dict(joker=10, two=10, ace=15, high=10, low=5)
_FOUR_JOKER_CARDS = dict(joker=50, two=10, ace=15, high=10, low=5)

# RULES.md §9, column by column ("–" is None for a canastra kind, 0 for a bonus or penalty).
SPEC: dict[str, Values] = {
    "classic": Values(**_BRAZILIAN_CARDS, clean=200, dirty=100, going_out=50, relancinho=100,
                      morto_not_taken=0),
    "biriba": Values(**_BRAZILIAN_CARDS, clean=200, dirty=100, going_out=50, relancinho=100,
                     morto_not_taken=100),
    "bossa-nova": Values(**_BRAZILIAN_CARDS, clean=200, dirty=100, going_out=50,
                         relancinho=100, morto_not_taken=100),
    "thirteen": Values(**_FOUR_JOKER_CARDS, clean=200, dirty=100, going_out=100, relancinho=0,
                       morto_not_taken=100),
    "burraco": Values(joker=30, two=20, ace=15, high=10, low=5, clean=200, dirty=100,
                      going_out=100, relancinho=0, morto_not_taken=100, semi_clean=150),
    "mega": Values(**_FOUR_JOKER_CARDS, clean=200, dirty=100, going_out=100, relancinho=0,
                   morto_not_taken=100),
    "burako": Values(**_FOUR_JOKER_CARDS, clean=200, dirty=100, going_out=100, relancinho=0,
                     morto_not_taken=100, royal=500, ace_to_ace=1000),
}
# RULES.md §10: thirteen-quick is thirteen to a lower target, nothing else.
SPEC["thirteen-quick"] = SPEC["thirteen"]


def house_values(rules: Rules) -> Values:
    """The values a house-rules value states itself (a log embeds them): for derived rules,
    whose numbers are the house's choice rather than the spec's."""
    p, b = rules.points, rules.bonuses
    return Values(
        joker=p.joker, two=p.two, ace=p.ace, high=p.high, low=p.low,
        clean=b.clean, dirty=b.dirty, going_out=b.going_out,
        relancinho=b.relancinho if rules.relancinho else 0,
        morto_not_taken=b.morto_not_taken,
        semi_clean=b.semi_clean if rules.semi_clean else None,
        royal=b.royal if rules.royal_canastras else None,
        ace_to_ace=b.ace_to_ace if rules.royal_canastras else None,
    )


def card_points(v: Values, card: int) -> int:
    if card == JOKER:
        return v.joker
    rank = RANK[card]
    if rank == 2:
        return v.two
    if rank == 1:
        return v.ace
    return v.high if rank >= 8 else v.low


# --- Reading a meld (RULES.md §5, §6) -----------------------------------------------------


def _run_readings(cards: tuple[int, ...], max_run: int) -> list[tuple[list[int], int]]:
    """Every valid reading of ``cards`` as a run, with the most 2s read as natural (the
    canonical reading): (natural positions 1..14, wilds)."""
    plain = [c for c in cards if c != JOKER and RANK[c] != 2]
    if not plain:
        return []
    suit = SUIT[plain[0]]
    if any(SUIT[c] != suit for c in plain):
        return []
    own_twos = sum(1 for c in cards if c != JOKER and RANK[c] == 2 and SUIT[c] == suit)
    other_wilds = len(cards) - len(plain) - own_twos
    for natural_twos in range(own_twos, -1, -1):  # a 2 is natural whenever it can be
        wilds = other_wilds + own_twos - natural_twos
        if wilds > 1 or natural_twos > 1:
            continue
        ranks = [RANK[c] for c in plain] + [2] * natural_twos
        aces = ranks.count(1)
        others = [r for r in ranks if r != 1]
        choices: list[list[int]] = []
        if aces == 0:
            choices = [others]
        elif aces == 1:
            choices = [[*others, 1], [*others, 14]]
        elif aces == 2:
            choices = [[*others, 1, 14]]
        found = []
        for pos in choices:
            if len(set(pos)) != len(pos):
                continue
            span = max(pos) - min(pos) + 1
            gaps = span - len(pos)
            if gaps > wilds or len(cards) > max_run:
                continue
            if 1 in pos and 14 in pos and max_run < 14:
                continue
            if wilds and not gaps and span >= max_run:
                continue  # no end left for the wild
            found.append((sorted(pos), wilds))
        if found:
            return found
    return []


def _longest_stretch(pos: list[int]) -> int:
    best = cur = 1
    for a, b in itertools.pairwise(pos):
        cur = cur + 1 if b == a + 1 else 1
        best = max(best, cur)
    return best


def canastra_class(rules: Rules, v: Values, cards: tuple[int, ...], kind: str) -> str | None:
    """The canastra class of a meld by its current cards, or None (not a canastra)."""
    if len(cards) < rules.canastra_size:
        return None
    if kind == "set":
        if not rules.canastra_from_sets:
            return None
        ranks = [RANK[c] for c in cards if c != JOKER and RANK[c] != 2]
        wilds = len(cards) - len(ranks)
        return "clean" if wilds == 0 else "dirty"
    readings = _run_readings(cards, rules.max_run())
    assert readings, f"the table holds a run that is none: {cards}"
    classes = set()
    for pos, wilds in readings:
        if wilds == 0:
            if v.ace_to_ace is not None and len(cards) == 14:
                classes.add("ace_to_ace")
            elif v.royal is not None and len(cards) == 13:
                classes.add("royal")
            else:
                classes.add("clean")
        elif v.semi_clean is not None and _longest_stretch(pos) >= rules.canastra_size:
            classes.add("semi_clean")
        else:
            classes.add("dirty")
    # A..K with a wild in the gap reads with the ace low or high: the ace counts at either
    # end (docs/rules.md, "Semi-clean canastra"), so the best reading classes the run.
    return next(c for c in ("ace_to_ace", "royal", "clean", "semi_clean", "dirty") if c in classes)


def bonus_of(v: Values, cls: str) -> int:
    value = {"clean": v.clean, "dirty": v.dirty, "semi_clean": v.semi_clean,
             "royal": v.royal, "ace_to_ace": v.ace_to_ace}[cls]
    assert value is not None, cls
    return value


# --- Scoring a hand (RULES.md §9) ---------------------------------------------------------


@dataclass
class SideLines:
    table_points: int = 0
    canastras: dict[str, int] = field(default_factory=dict)
    canastra_bonus: int = 0
    going_out: int = 0
    relancinho: int = 0
    hand_penalty: int = 0
    morto_penalty: int = 0

    @property
    def total(self) -> int:
        return (self.table_points + self.canastra_bonus + self.going_out + self.relancinho
                - self.hand_penalty - self.morto_penalty)


@dataclass
class _Hand:
    taken: dict[int, int] = field(default_factory=dict)  # side -> taker seat
    morto_cards: dict[int, tuple[int, ...]] = field(default_factory=dict)
    pending: dict[int, int] = field(default_factory=dict)  # side -> indirect taker not yet played
    laid_before: set[int] = field(default_factory=set)  # seats that laid in an earlier turn
    turn_seat: int | None = None
    laid_now: int = 0  # cards the seat in turn laid this turn (less those taken back)
    relancinho: dict[int, int] = field(default_factory=dict)  # seat -> count (at most 1)
    went_out: int | None = None


def score_hand(rules: Rules, v: Values, hand: _Hand, end: State, reason: str) -> list[SideLines]:
    """Each side's lines, from the table as the hand ended (``end``: the state before
    HandEnded) and what the events of the hand said."""
    n_sides = end.n_sides
    sides = [SideLines() for _ in range(n_sides)]
    voiding = rules.morto_voiding()
    voided: set[int] = set()
    for side in hand.pending:
        by_opponent = hand.went_out is not None and end.sides[hand.went_out] != side
        if voiding == "any_end" or by_opponent:
            voided.add(side)
    for side in range(n_sides):
        lines = sides[side]
        for meld in end.melds[side]:
            lines.table_points += sum(card_points(v, c) for c in meld.cards)
            cls = canastra_class(rules, v, meld.cards, meld.kind)
            if cls is not None:
                lines.canastras[cls] = lines.canastras.get(cls, 0) + 1
                lines.canastra_bonus += bonus_of(v, cls)
        if rules.morto and (side not in hand.taken or side in voided):
            lines.morto_penalty = v.morto_not_taken
    for seat, cards in enumerate(end.hands):
        side = end.sides[seat]
        if side in voided and hand.pending[side] == seat:
            # The morto counts as not taken: its cards are not the taker's hand.
            assert sorted(cards) == sorted(hand.morto_cards[side]), (cards, hand.morto_cards)
            continue
        sides[side].hand_penalty += sum(card_points(v, c) for c in cards)
    if reason == "went_out":
        assert hand.went_out is not None
        sides[end.sides[hand.went_out]].going_out = v.going_out
    for seat, count in hand.relancinho.items():
        sides[end.sides[seat]].relancinho += count * v.relancinho
    return sides


@dataclass
class Compared:
    """One hand: the oracle's lines and the engine's score per side."""

    hand: int
    seq: int
    oracle: list[SideLines]
    engine: list[dict[str, object]]
    recorded: tuple[int, ...] | None


def engine_lines(state: State) -> list[dict[str, object]]:
    out = []
    for s in state.results[-1].scores:
        out.append(dict(table_points=s.table_points,
                        canastras={k: n for k, n in s.canastras.items() if n},
                        canastra_bonus=s.canastra_bonus, going_out=s.going_out,
                        relancinho=s.relancinho, hand_penalty=s.hand_penalty,
                        morto_penalty=s.morto_penalty, total=s.total))
    return out


def oracle_lines(lines: SideLines) -> dict[str, object]:
    return dict(table_points=lines.table_points, canastras=dict(lines.canastras),
                canastra_bonus=lines.canastra_bonus, going_out=lines.going_out,
                relancinho=lines.relancinho, hand_penalty=lines.hand_penalty,
                morto_penalty=lines.morto_penalty, total=lines.total)


def compare_match(events: list[AnyEvent], values: Values | None = None) -> list[Compared]:
    """Score every ended hand of ``events`` by the oracle next to the engine's score.
    ``values``: the spec's column to score by (default: the numbers the rules value states)."""
    first = events[0]
    assert isinstance(first, MatchStarted)
    rules = first.rules
    v = values if values is not None else house_values(rules)
    rep = Replayer()
    hand = _Hand()
    out: list[Compared] = []
    for ev in events:
        before = rep.state()
        if isinstance(ev, HandStarted):
            hand = _Hand()
        seat = getattr(ev, "seat", None)
        if seat is not None:
            if seat != hand.turn_seat:  # a new turn: the last one's laying is earlier now
                if hand.turn_seat is not None and hand.laid_now > 0:
                    hand.laid_before.add(hand.turn_seat)
                hand.turn_seat, hand.laid_now = seat, 0
            side = before.sides[seat]
            if hand.pending.get(side) == seat:
                del hand.pending[side]  # the taker plays again: the morto stands
        if isinstance(ev, MeldLaid | CardsLaidOff):
            hand.laid_now += len(ev.cards)
        elif isinstance(ev, OpeningRetracted):
            hand.laid_now -= len(ev.cards)
        elif isinstance(ev, MortoTaken | WentOut):
            if (rules.relancinho and ev.seat not in hand.laid_before
                    and ev.seat not in hand.relancinho):
                hand.relancinho[ev.seat] = 1
            if isinstance(ev, MortoTaken):
                side = before.sides[ev.seat]
                hand.taken[side] = ev.seat
                hand.morto_cards[side] = before.mortos[side]
                if not ev.direct:
                    hand.pending[side] = ev.seat
            else:
                hand.went_out = ev.seat
        elif isinstance(ev, HandEnded):
            if ev.reason == "stock_out":
                # The taker's turn counts once it begins (docs/rules.md): a hand that ends
                # when the taker must draw has let the taker play again.
                side = before.sides[before.turn]
                if hand.pending.get(side) == before.turn:
                    del hand.pending[side]
            lines = score_hand(rules, v, hand, before, ev.reason)
            rep.step(ev)
            after = rep.state()
            out.append(Compared(before.hand, ev.seq, lines, engine_lines(after), ev.scores))
            continue
        rep.step(ev)
    return out


def disagreements(compared: list[Compared]) -> list[str]:
    """One line per side whose lines differ between the oracle and the engine."""
    bad = []
    for c in compared:
        for side, (o, e) in enumerate(zip(c.oracle, c.engine, strict=True)):
            mine = oracle_lines(o)
            if mine != e:
                diff = {k: (mine[k], e[k]) for k in mine if mine[k] != e[k]}
                bad.append(f"hand {c.hand} (seq {c.seq}) side {side}: oracle, engine {diff}")
    return bad
