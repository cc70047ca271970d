"""Legal moves: every event the player to move may record next, and the pile question.

``legal_moves`` is complete: every meld the hand can lay (each multiset of cards once) and every
set of cards each of the side's melds can take, put through the same checks the reducer runs,
so it lists exactly what the reducer accepts (a property test holds us to that, both ways).
``quick_moves`` is the bots' fast partial list: the same moves except that melds are capped
and lay-offs are single cards. ``pile_options`` answers "could they have taken the pile here,
and how could its top card be used?".
"""

from __future__ import annotations

from collections import defaultdict

import msgspec

from buraco_log.cards import ACE, JOKER, RANK, SUIT, Card
from buraco_log.combos import layoff_options, meld_options
from buraco_log.errors import IllegalMoveError
from buraco_log.events import (
    AnyEvent,
    CardDiscarded,
    CardDrawn,
    CardsLaidOff,
    FirstDrawRejected,
    HandEnded,
    MatchEnded,
    MeldLaid,
    MortoTaken,
    OpeningRetracted,
    PileTaken,
    WentOut,
)
from buraco_log.melds import MeldError, meld_words, read_meld
from buraco_log.reducer import _Table
from buraco_log.rules import Rules
from buraco_log.state import State

MELD_CAP = 48


def legal_moves(state: State) -> list[AnyEvent]:
    """Every event the player to move may record next: complete. Empty between hands (the
    deal is chance) and after the match. Melds come in card order, then the lay-offs meld by
    meld, then the discards."""
    if not isinstance(state, State):  # None reached an attribute deep in the table
        raise TypeError(f"legal_moves takes a State, not {type(state).__name__}")
    t = _Table(state)
    out = _not_playing(t)
    if out is not None:
        return out
    return _play(t, complete=True, meld_cap=0)


def quick_moves(state: State, *, meld_cap: int = MELD_CAP) -> list[AnyEvent]:
    """The bots' fast partial list: every move it lists is legal, but melds are capped and
    lay-offs are single cards (``legal_moves`` has them all)."""
    t = _table_of(state, "quick_moves")
    out = _not_playing(t)
    if out is not None:
        return out
    moves = _play(t, complete=False, meld_cap=meld_cap)
    if not moves and t.pile_top is not None:
        # A must-use-top pile whose top can be laid only after another lay (one that makes the
        # canastra the turn needs to keep or empty its hand, RULES.md section 4): the partial
        # list, every way to lay the top now, is empty, and a bot had no move at all.
        return _play(t, complete=True, meld_cap=meld_cap)
    return moves


def _table_of(state: State, entry: str) -> _Table:
    """The table of ``state``; anything else is a TypeError naming ``entry``. Caught when the
    table cannot be built, not checked first: the bots call this once per move."""
    try:
        return _Table(state)
    except AttributeError:
        if isinstance(state, State):
            raise
        raise TypeError(f"{entry} takes a State, not {type(state).__name__}") from None


def _not_playing(t: _Table) -> list[AnyEvent] | None:
    """The moves of every phase but "play" (they are few and always listed whole)."""
    r = t.rules
    seq = t.seq + 1
    phase = t.phase
    if r is None or phase in ("new", "between", "over"):
        return []
    seat = t.turn
    side = t.sides[seat]
    out: list[AnyEvent] = []
    if phase == "draw":
        may_take = bool(t.pile) and not t.rejected and (
            r.pile_pickup == "free" or t.can_take_top(seat)
        )
        if len(t.stock) > r.stock_floor:
            out.append(CardDrawn(seat, t.stock[-1], seq=seq))
        elif not (may_take and r.pile_pickup == "must_use_top"):
            # At the floor the hand ends, unless the pile must be taken (`001`, RULES.md §8).
            out.append(HandEnded("stock_out", tuple(s.total for s in t.score()), seq=seq))
        if may_take:
            out.append(PileTaken(seat, len(t.pile), t.pile[-1], seq=seq))
        return out
    if phase == "emptied":
        if t.opening_short(seat):  # a short opening emptied the hand: it is taken back
            return [OpeningRetracted(seat, tuple(t.laid_this_turn), seq=seq)]
        if r.morto and not t.morto_taken[side]:
            out.append(MortoTaken(seat, t.emptied_by == "meld", len(t.mortos[side]), seq=seq))
        elif t.turn_end_problem(seat) is None:
            out.append(WentOut(seat, seq=seq))
        return out
    if phase == "out":
        return [HandEnded("went_out", tuple(s.total for s in t.score()), seq=seq)]
    if phase == "decided":
        return [MatchEnded(tuple(t.totals), t.winner, seq=seq)]
    return None


def _play(t: _Table, *, complete: bool, meld_cap: int) -> list[AnyEvent]:
    r = t.rules
    assert r is not None
    seq = t.seq + 1
    seat = t.turn
    side = t.sides[seat]
    out: list[AnyEvent] = []
    # phase == "play"
    hand = t.hands[seat]
    if t.may_reject and not t.laid_this_turn and t.drawn is not None:
        out.append(FirstDrawRejected(seat, t.drawn, seq=seq))
    n_hand = len(hand)
    can_empty_by_meld = t.emptying_problem(side, "meld") is None
    can_keep_one = t.emptying_problem(side, "discard") is None

    def leaves_ok(k: int, canastra: bool = False) -> bool:
        """May ``k`` cards be laid? ``canastra``: they make one, which counts for the side."""
        rest = n_hand - k
        if rest >= 2 or (rest == 1 and can_keep_one) or (rest == 0 and can_empty_by_meld):
            return True
        return canastra and t.emptying_problem(side, "discard" if rest else "meld", True) is None

    top = t.pile_top
    # After taking a must-use-top pile its top card must be laid this turn. Some ways use it
    # only together with cards of the hand, so the quick list has every way to lay it then
    # (and, being partial, nothing else); the complete list also has every other lay that
    # leaves a way to use it (the reducer's check_top_kept).
    others = complete or top is None
    complete = complete or top is not None

    def top_kept(move: MeldLaid | CardsLaidOff) -> bool:
        try:
            t.check_top_kept(move, seat)
        except IllegalMoveError:
            return False
        return True
    melds = (
        meld_options(hand, r, t.readings, None if others else top)
        if complete
        else candidate_melds(hand, r, meld_cap, must=top)
    )
    for cards in melds:  # without ``others``, they all hold the top card
        uses_top = top is None or top in cards
        ok = leaves_ok(len(cards))
        if not ok and len(cards) < r.canastra_size:
            continue
        try:
            reading = t.new_meld(_PROBE, seat, side, cards)
        except IllegalMoveError:
            continue
        if ok or leaves_ok(len(cards), reading.canastra is not None):
            laid = MeldLaid(seat, cards, len(t.melds[side]), seq=seq)
            if uses_top or top_kept(laid):
                out.append(laid)
    if complete:
        for i, meld in enumerate(t.melds[side]):
            reading = t.meld_readings[side][i] or t.readings.read(meld.cards)
            for add in layoff_options(meld.cards, reading, hand, t.readings,
                                      None if others else top):
                uses_top = top is None or top in add
                if leaves_ok(len(add)) or (
                    n_hand - len(add) < 2
                    and leaves_ok(len(add), t.readings.read(meld.cards + add).canastra is not None)
                ):
                    off = CardsLaidOff(seat, meld.id, add, seq=seq)
                    if uses_top or top_kept(off):
                        out.append(off)
    for meld in t.melds[side] if not complete else ():
        ok = leaves_ok(1)
        if not ok and len(meld.cards) + 1 < r.canastra_size:
            continue
        for c in sorted(set(hand)) if top is None else (top,):
            try:
                reading = read_meld((*meld.cards, c), r)
            except MeldError:
                continue
            if ok or leaves_ok(1, reading.canastra is not None):
                out.append(CardsLaidOff(seat, meld.id, (c,), seq=seq))
    problem = t.turn_end_problem(seat)
    if problem is None:
        if n_hand > 1 or t.emptying_problem(side, "discard") is None:
            out.extend(CardDiscarded(seat, c, seq=seq) for c in sorted(set(hand)))
    elif t.opening_short(seat):  # also while a must-use-top top card is still to be laid
        out.append(OpeningRetracted(seat, tuple(t.laid_this_turn), seq=seq))
    return out


_PROBE = CardDrawn(0, 0, seq=-1)  # stands in for the event in error messages never shown


def candidate_melds(
    hand: list[Card], rules: Rules, cap: int, must: Card | None = None
) -> list[tuple[Card, ...]]:
    """Sets and runs that can be formed from ``hand`` (each at most once), up to ``cap``;
    with ``must``, only those holding that card."""
    wilds: list[Card] = []
    by_rank: dict[int, list[Card]] = defaultdict(list)
    by_suit: dict[int, dict[int, Card]] = defaultdict(dict)
    for c in hand:
        if c == JOKER:
            wilds.append(c)
            continue
        rank = RANK[c]
        if rank == 2:
            wilds.append(c)
            by_suit[SUIT[c]].setdefault(2, c)
            continue
        by_rank[rank].append(c)
        by_suit[SUIT[c]].setdefault(rank, c)
        if rank == ACE:
            by_suit[SUIT[c]].setdefault(14, c)
    # The card that must be used goes first, so every cut below keeps it.
    distinct_wilds = sorted(set(wilds), key=lambda c: (c != must, c))
    out: list[tuple[Card, ...]] = []
    seen: set[tuple[Card, ...]] = set()

    def add(cards: tuple[Card, ...]) -> None:
        if must is not None and must not in cards:
            return
        key = tuple(sorted(cards))
        if key not in seen and len(out) < cap:
            seen.add(key)
            out.append(cards)

    for _rank, cards in sorted(by_rank.items()):
        cards.sort(key=lambda c: c != must)
        for size in range(len(cards), 2, -1):
            add(tuple(cards[:size]))
        if len(cards) >= 2:
            for w in distinct_wilds:
                add((*cards[:2], w))
    max_run = rules.max_run()
    for _suit, ranks in sorted(by_suit.items()):
        for lo in range(1, 15):
            if lo not in ranks:
                continue
            picked: list[Card] = []
            missing: list[int] = []
            for pos in range(lo, min(lo + max_run, 15)):
                if pos in ranks and not (pos == 14 and lo == 1 and not rules.ace_both_ends):
                    picked.append(ranks[pos])
                else:
                    missing.append(pos)
                    if len(missing) > 1:
                        break
                n = len(picked)
                if not missing and n >= 3:
                    add(tuple(picked))
                if missing and n >= 2 and missing[-1] != pos:
                    for w in distinct_wilds:
                        if w not in picked:
                            add((*picked, w))
                            break
                elif not missing and n >= 2:
                    for w in distinct_wilds:
                        if w not in picked or picked.count(w) < hand.count(w):
                            add((*picked, w))
                            break
    # A natural 2 may be used twice (as itself and as a wild) only if the hand holds it twice.
    return [m for m in out if all(m.count(c) <= hand.count(c) for c in set(m))]


class PileUse(msgspec.Struct, frozen=True):
    """One way to use the pile's top card right after taking it: laid off on the side's meld
    ``meld`` with ``cards`` (the top card and cards of the hand), or, with ``meld`` None, laid
    as a new meld of ``cards``."""

    meld: int | None
    cards: tuple[int, ...]


class PileOptions(msgspec.Struct, frozen=True):
    """May the player to move take the discard pile, and how could its top card be used?

    ``pickup`` is the rule (``free`` or ``must_use_top``); ``uses`` lists every way of using the
    top card under ``must_use_top`` (empty under a free pile, where none is needed)."""

    seq: int
    seat: int | None
    may_take: bool
    pickup: str
    reason: str
    top: int | None
    count: int
    uses: tuple[PileUse, ...] = ()


def pile_options(state: State) -> PileOptions:
    """Whether the player to move may take the pile now, why, and (under must-use-top) every
    way its top card can be used with cards of the hand as it is before the pickup."""
    t = _table_of(state, "pile_options")
    r = t.rules
    pickup = r.pile_pickup if r is not None else "free"
    top = t.pile[-1] if t.pile else None
    seat = t.turn if t.phase in ("draw", "play", "emptied") else None

    def answer(may: bool, reason: str, uses: tuple[PileUse, ...] = ()) -> PileOptions:
        return PileOptions(state.seq, seat, may, pickup, reason, top, len(t.pile), uses)

    if r is None or seat is None:
        return answer(False, "nobody is to move: the hand is not in play")
    if t.phase != "draw":
        return answer(False, "the player to move has already drawn this turn")
    if not t.pile:
        return answer(False, "the discard pile is empty")
    if t.rejected:
        return answer(False, f"after rejecting the first {t.card} the player draws from the "
                      "stock")
    if pickup == "free":
        return answer(True, "the pile is free: the player may take it whole at any draw")
    uses = tuple(PileUse(m, cards) for m, cards in t.top_uses(seat))
    if uses:
        return answer(True, f"its top {t.card} can be used in {len(uses)} way(s)", uses)
    # A new set the rules' one-set-a-rank limit alone refuses is named: the hand holds a pair
    # of the top card, and a referee asks why it may not take the pile with it.
    limited = t.top_set_limited(seat)
    return answer(
        False,
        f"its top {t.card} cannot be used: on none of the side's melds, alone or with "
        f"{t.card}s of the hand, and in no new meld with two {t.card}s of the hand (without "
        "leaving the player unable to discard)"
        + (f"; {t.fmt(limited)} would be one set of that {meld_words(r)['rank']} too many"
           if limited else ""),
    )
