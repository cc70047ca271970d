"""Probe 42, the must-use-top pickup against a search of whole turns (RULES.md §4, `001`).

The reducer decides a pickup at once, from the hand before it (`can_take_top`, with its rules
for the one card a lay would leave). The oracle here decides it the long way: take the pile
anyway (under a free pile, so nothing of the check runs), then search every turn the reducer
lets the player play from there, in any order, and look for one that

- lays the top card either in a new meld with two or more cards of the hand before the
  pickup, or on a meld the side already had ("juntada a um jogo que você já tem"), the top
  and those cards of the hand making that meld, or fitting that meld as it was, by
  themselves (cards of the pile may go in the same move), and
- ends as a turn may: a discard that leaves cards, or an empty hand that then takes the
  morto or goes out.

The other lays of the turn may use the pile's cards, before or after the top's. The pickup is
legal exactly when such a turn exists. Random small positions: hands of 1 to 5 cards, piles
of 1 to 4, the side's melds near a canastra or not, the morto taken or not; `thirteen`, and
must-use-top as house rules over `burako` (the morto only by a discard) and `bossa-nova`
(the morto needs a canastra).
"""

from __future__ import annotations

import random

import msgspec
import pytest

from buraco_log.cards import parse_cards
from buraco_log.errors import IllegalMoveError
from buraco_log.events import CardDiscarded, CardsLaidOff, MeldLaid, MortoTaken, PileTaken, WentOut
from buraco_log.melds import MeldError, read_meld
from buraco_log.moves import legal_moves
from buraco_log.reducer import apply, validate
from buraco_log.rules import Rules, derive, preset
from buraco_log.state import Meld, State
from tests.scenario import Scenario

VARIANTS = ("thirteen", "burako", "bossa-nova")
POOL = sorted(set(parse_cards(
    "3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh Ah Ks Kd Kc Qs Qd 9s 9d 2h 2s JK 5s 5d")))
TABLES = ("3h 4h 5h 6h 7h 8h", "3h 4h 5h 6h 7h 8h 9h", "5h 6h 7h", "Ks Kd Kc", "Ks Kd Kc 2s",
          "Th Jh Qh", "9s 9d 9h", "3h 4h 5h 6h JK 8h", "Qs Qd 2h Qh Qs Qd Qh",
          "Ks Kd Kc Ks Kd Kh", "9s 9d 9h 9c 9s 9d", "3h 4h 5h 6h", "Th Jh Qh Kh")

TRIPLES = ("Ks Kd Kc", "Th Jh Qh", "5s 5d 5h", "9s 9d 9h", "Qs Qd Qh", "3h 4h 5h", "Jh Qh Kh",
           "Qh Kh Ah", "5s 5d JK", "9h Th Jh", "Kd Kc 2h", "7h 8h 2s")


def rules_of(name: str) -> Rules:
    r = preset(name)
    if r.jokers == 0:  # the pool holds a joker: in rules without one it is no card at all
        r = derive(r, jokers=2)
    if r.pile_pickup == "must_use_top":
        return r
    return derive(r, pile_pickup="must_use_top", vulnerability=False)


def position(base: State, rules: Rules, rng: random.Random) -> State:
    """Seat 0 to draw, a small hand and pile of distinct cards (the top is never ambiguous)."""
    # Mostly small: a lay that would leave one card, or none, is where the rules bite. Half
    # the time the top makes a meld with two cards of the hand (the rest is then about what
    # that meld would leave).
    n_hand, n_pile = rng.choice((1, 2, 2, 3, 3, 4, 5)), rng.choice((1, 1, 2, 2, 3, 4))
    cards = rng.sample(POOL, n_hand + n_pile)
    if rng.random() < 0.5:
        three = parse_cards(rng.choice(TRIPLES))
        rest = [c for c in POOL if c not in three]
        extra, under = rng.randint(0, 2), rng.randint(0, 2)
        more = rng.sample(rest, extra + under)
        cards = [three[0], three[1], *more[:extra], *more[extra:], three[2]]
        n_hand = 2 + extra
    melds: list[Meld] = []
    for text in rng.sample(TABLES, rng.randint(0, 2)):
        laid = parse_cards(text)
        reading = read_meld(laid, rules)
        melds.append(Meld(len(melds), 0, laid, reading.kind, reading.canastra, 0))
    taken = rng.random() < 0.6
    return msgspec.structs.replace(
        base, hands=(tuple(cards[:n_hand]), base.hands[1]), pile=tuple(cards[n_hand:]),
        melds=(tuple(melds), ()), morto_taken=(taken, False),
        mortos=(() if taken else base.mortos[0], base.mortos[1]), turns=5, may_reject=False)


def top_use_ok(state: State, move: MeldLaid | CardsLaidOff, before: tuple[int, ...],
               rules: Rules) -> bool:
    """Is ``move``, which lays the top card, a use of it the pickup may rest on? The top and
    the cards of the hand before the pickup in it must make that use alone; cards of the
    pile may ride along in the same move (docs/rules.md, "Whose hand uses the top card")."""
    top = state.pile[-1]
    others = list(move.cards)
    others.remove(top)
    own = tuple(c for c in others if c in before)
    if isinstance(move, MeldLaid):
        if len(own) < 2:
            return False
        use: tuple[int, ...] = (top, *own)
    elif move.meld >= len(state.melds[0]):
        return False  # a meld laid this turn is no meld the side already had
    else:
        use = (*state.melds[0][move.meld].cards, top, *own)
    try:
        read_meld(use, rules)
    except MeldError:
        return False
    return True


def a_turn_uses_the_top(state: State, free: Rules) -> bool:
    top = state.pile[-1]
    before = state.hands[0]
    after = apply(msgspec.structs.replace(state, rules=free),
                  PileTaken(0, len(state.pile), top, seq=state.seq + 1))
    seen: set[object] = set()
    todo = [(after, False)]
    while todo:
        s, used = todo.pop()
        k = (tuple(sorted(s.hands[0])), tuple(tuple(sorted(m.cards)) for m in s.melds[0]),
             s.phase, used)
        if k in seen or s.turn != 0:
            continue
        seen.add(k)
        for move in legal_moves(s):
            if isinstance(move, (MeldLaid, CardsLaidOff)):
                if top in move.cards and not top_use_ok(state, move, before, free):
                    continue
                todo.append((apply(s, move), used or top in move.cards))
            elif isinstance(move, CardDiscarded) and used:
                nxt = apply(s, move)
                if nxt.phase != "emptied" or any(
                        isinstance(m, (MortoTaken, WentOut)) for m in legal_moves(nxt)):
                    return True
            elif isinstance(move, MortoTaken):
                todo.append((apply(s, move), used))
            elif isinstance(move, WentOut) and used:
                return True
    return False


def compare(name: str, seed: int, count: int) -> tuple[int, int]:
    rules = rules_of(name)
    free = derive(rules, pile_pickup="free")
    base = Scenario(rules, hands={0: "", 1: ""}).state
    rng = random.Random(seed)
    taken = refused = 0
    for _ in range(count):
        s = position(base, rules, rng)
        pickup = PileTaken(0, len(s.pile), s.pile[-1], seq=s.seq + 1)
        try:
            validate(s, pickup)
            engine = True
        except IllegalMoveError as exc:
            assert exc.rule == "pile.must_use_top", exc
            engine = False
        assert engine == a_turn_uses_the_top(s, free), (
            f"engine {engine}: hand {s.hands[0]}, pile {s.pile}, melds "
            f"{[m.cards for m in s.melds[0]]}, morto taken {s.morto_taken[0]}")
        taken += engine
        refused += not engine
    return taken, refused


@pytest.mark.parametrize("name", VARIANTS)
def test_the_pickup_is_legal_exactly_when_a_turn_uses_the_top(name: str) -> None:
    taken, refused = compare(name, 42, 120)
    assert taken >= 10 and refused >= 10  # both answers are checked, not one


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("name", VARIANTS)
def test_the_pickup_is_legal_exactly_when_a_turn_uses_the_top_many(name: str,
                                                                    seed: int) -> None:
    compare(name, seed, 1500)


def a_turn_ends_after(s: State, top: int) -> bool:
    """From ``s`` (the top not laid yet), is there a way to lay the top card (with any cards
    now held, the pile's too) and end the turn as a turn may?"""
    seen: set[object] = set()
    todo = [(s, False)]
    while todo:
        st, used = todo.pop()
        k = (tuple(sorted(st.hands[0])), tuple(tuple(sorted(m.cards)) for m in st.melds[0]),
             st.phase, used)
        if k in seen or st.turn != 0:
            continue
        seen.add(k)
        for move in legal_moves(st):
            if isinstance(move, (MeldLaid, CardsLaidOff)):
                todo.append((apply(st, move), used or top in move.cards))
            elif isinstance(move, CardDiscarded) and used:
                nxt = apply(st, move)
                if nxt.phase != "emptied" or any(
                        isinstance(m, (MortoTaken, WentOut)) for m in legal_moves(nxt)):
                    return True
            elif isinstance(move, MortoTaken):
                todo.append((apply(st, move), used))
            elif isinstance(move, WentOut) and used:
                return True
    return False


def compare_lays_before_the_top(name: str, seed: int, count: int) -> tuple[int, int]:
    """After a legal pickup, a lay without the top card is accepted exactly when the turn can
    still lay the top and end (RULES.md §4 "used in the same turn"; docs/rules.md "When the
    top card is laid": none that would leave no way to lay it)."""
    rules = rules_of(name)
    free = derive(rules, pile_pickup="free")
    base = Scenario(rules, hands={0: "", 1: ""}).state
    rng = random.Random(seed)
    kept = refused = 0
    for _ in range(count):
        s = position(base, rules, rng)
        top = s.pile[-1]
        pickup = PileTaken(0, len(s.pile), top, seq=s.seq + 1)
        try:
            validate(s, pickup)
        except IllegalMoveError:
            continue
        after = apply(s, pickup)
        # The same table with nothing owed: every lay the hand could make.
        loose = msgspec.structs.replace(after, rules=free, pile_top=None, taken_top=None)
        for move in legal_moves(loose):
            if not isinstance(move, (MeldLaid, CardsLaidOff)) or top in move.cards:
                continue
            try:
                validate(after, move)
                engine = True
            except IllegalMoveError as exc:
                assert exc.rule == "pile.must_use_top", exc
                engine = False
            assert engine == a_turn_ends_after(apply(loose, move), top), (
                f"engine {engine} on {move}: hand {s.hands[0]}, pile {s.pile}, melds "
                f"{[m.cards for m in s.melds[0]]}, morto taken {s.morto_taken[0]}")
            kept += engine
            refused += not engine
    return kept, refused


@pytest.mark.parametrize("name", VARIANTS)
def test_a_lay_before_the_top_is_refused_exactly_when_it_strands_the_top(name: str) -> None:
    kept, refused = compare_lays_before_the_top(name, 42, 150)
    assert kept >= 10 and refused >= 10  # both answers are checked, not one


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("name", VARIANTS)
def test_a_lay_before_the_top_is_refused_exactly_when_it_strands_the_top_many(
        name: str, seed: int) -> None:
    compare_lays_before_the_top(name, seed, 1500)
