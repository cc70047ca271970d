"""Legal moves: every event the player to move may record next.

Candidates are generated from the hand and then put through the same checks the reducer
runs, so a listed move is always accepted (a property test holds us to that). Meld
enumeration is capped: not every legal meld is listed, but every listed one is legal.
"""

from __future__ import annotations

from collections import defaultdict

from buraco_log.cards import ACE, JOKER, RANK, SUIT, Card
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
from buraco_log.melds import MeldError, read_meld
from buraco_log.reducer import _Table
from buraco_log.rules import Rules
from buraco_log.state import State

MELD_CAP = 48


def legal_moves(state: State, *, meld_cap: int = MELD_CAP) -> list[AnyEvent]:
    """Events the player to move may record next. Empty between hands (the deal is chance)
    and after the match."""
    t = _Table(state)
    return _legal(t, meld_cap)


def _legal(t: _Table, meld_cap: int) -> list[AnyEvent]:
    r = t.rules
    seq = t.seq + 1
    phase = t.phase
    if r is None or phase in ("new", "between", "over"):
        return []
    seat = t.turn
    side = t.sides[seat]
    out: list[AnyEvent] = []
    if phase == "draw":
        if len(t.stock) > r.stock_floor:
            out.append(CardDrawn(seat, t.stock[-1], seq=seq))
        else:
            out.append(HandEnded("stock_out", tuple(s.total for s in t.score()), seq=seq))
        if t.pile and not t.rejected and (r.pile_pickup == "free" or t.can_take_top(seat)):
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
    for cards in candidate_melds(hand, r, meld_cap, must=top):
        if top is not None and top not in cards:
            continue
        ok = leaves_ok(len(cards))
        if not ok and len(cards) < r.canastra_size:
            continue
        try:
            reading = t.new_meld(_PROBE, seat, side, cards)
        except IllegalMoveError:
            continue
        if ok or leaves_ok(len(cards), reading.canastra is not None):
            out.append(MeldLaid(seat, cards, len(t.melds[side]), seq=seq))
    for meld in t.melds[side]:
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
    elif problem[0] == "vulnerable.opening_too_low":
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
