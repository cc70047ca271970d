"""A referee's scenarios of RULES.md §2 (seats and sides), §3 (the deal) and §4 (a turn: the
draw, the pile, melding on the side's own melds, the discard), for every preset of §11 and
every player count it allows.

Expected values are worked out from RULES.md by hand (the tables below are copied from §2, §3,
§10 and §11, never read from the engine's presets); each refusal is checked for its rule id,
its seq and the words of its message, and a refused move must leave the table unchanged.
"""

from __future__ import annotations

import msgspec
import pytest

from buraco_log.cards import parse_cards
from buraco_log.errors import IllegalMoveError, RulesError
from buraco_log.events import OpeningRetracted, TotalsCarried
from buraco_log.moves import legal_moves
from buraco_log.reducer import Replayer
from buraco_log.rules import derive
from tests.play import start
from tests.scenario import Scenario, build_deal, refused

# RULES.md §11: players, jokers, hand, morto, upcard, pile, redraw.
PRESET = {
    "classic": ((2, 3, 4, 6), 0, 11, False, False, "free", True),
    "biriba": ((2, 3, 4), 0, 11, True, False, "free", True),
    "bossa-nova": ((2, 3, 4), 0, 11, True, False, "free", True),
    "thirteen": ((2, 4), 4, 13, True, True, "must_use_top", False),
    "thirteen-quick": ((2, 4), 4, 13, True, True, "must_use_top", False),
    "burraco": ((2, 4), 4, 11, True, True, "free", False),
    "mega": ((2, 4), 4, 11, True, True, "free", False),
    "burako": ((2, 4), 2, 11, True, False, "free", False),
}
ALL = tuple(PRESET)
FREE = tuple(n for n in ALL if PRESET[n][5] == "free")
MUST_USE_TOP = ("thirteen", "thirteen-quick")
REDRAW = ("classic", "biriba", "bossa-nova")
SEATINGS = [(n, p) for n in ALL for p in PRESET[n][0]]
# §2: alone with 2 or 3 players, partners on alternate seats with 4 or 6.
SIDES = {2: (0, 1), 3: (0, 1, 2), 4: (0, 1, 0, 1), 6: (0, 1, 0, 1, 0, 1)}
MORTO_SIZE = 11



# -- §2 seats and sides, §3 the deal ---------------------------------------------------------


@pytest.mark.parametrize(("name", "players"), SEATINGS)
def test_the_deal_the_sides_and_the_seat_after_the_dealer_moving_first(
    name: str, players: int
) -> None:
    _, jokers, hand, morto, upcard, _, _ = PRESET[name]
    s = Scenario(name, players)
    st = s.state
    assert st.dealer == players - 1 and st.turn == 0  # the seat after the dealer
    assert st.sides == SIDES[players]
    assert [len(h) for h in st.hands] == [hand] * players
    n_sides = 3 if players == 3 else 2
    if morto:  # one morto of 11 per side
        assert [len(m) for m in st.mortos] == [MORTO_SIZE] * n_sides
    else:
        assert not any(st.mortos)
    assert len(st.pile) == (1 if upcard else 0)
    dealt = players * hand + (n_sides * MORTO_SIZE if morto else 0) + (1 if upcard else 0)
    assert len(st.stock) == 104 + jokers - dealt
    # Play passes to the next seat, round the table and back to seat 0.
    for seat in range(players):
        assert s.turn == seat
        other = (seat + 1) % players
        refused(s, "turn.not_your_turn", (f"seat {other}", f"seat {seat}"), "draw", seat=other)
        s.pass_turn()
    assert s.turn == 0


@pytest.mark.parametrize("name", ALL)
def test_a_player_count_the_preset_does_not_allow_is_refused_at_the_start(name: str) -> None:
    allowed = PRESET[name][0]
    for players in (2, 3, 4, 6):
        rep = Replayer()
        if players in allowed:
            rep.step(start(name, players))
            assert rep.phase == "between"
            continue
        with pytest.raises(IllegalMoveError) as info:
            rep.step(start(name, players))
        assert info.value.rule == "match.rules", info.value
        assert f"not {players}" in str(info.value)
        assert rep.phase == "new"


@pytest.mark.parametrize("name", ALL)
def test_a_deal_that_is_not_the_presets_is_refused(name: str) -> None:
    morto, upcard = PRESET[name][3:5]
    s = Scenario(name)
    begin = s.events[0]
    good = build_deal(s.rules, 2, {}, "", {}, None)
    for bad, rule in [
        (msgspec.structs.replace(good, hands=(good.hands[0][:-1], good.hands[1]),
                                 stock=good.stock + good.hands[0][-1:]), "deal.hand_size"),
        (msgspec.structs.replace(good, mortos=good.mortos[:1] if morto else (good.stock[:11],),
                                 stock=(good.stock + good.mortos[1]) if morto
                                 else good.stock[11:]), "deal.morto_size"),
        (msgspec.structs.replace(good, upcard=None, stock=(*good.stock, good.upcard))
         if upcard else msgspec.structs.replace(good, upcard=good.stock[0],
                                                stock=good.stock[1:]), "deal.upcard"),
        (msgspec.structs.replace(good, dealer=0), "deal.dealer_rotation"),
    ]:
        rep = Replayer()
        rep.step(begin)
        with pytest.raises(IllegalMoveError) as info:
            rep.step(bad)
        assert info.value.rule == rule, info.value
        assert rep.phase == "between"


# -- §4.1 the draw ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_a_turn_begins_with_the_stocks_top_card_once(name: str) -> None:
    s = Scenario(name, hands={0: "3h 3s 3d 9c"}, stock="Kh 4c")
    refused(s, "turn.must_draw_first", ("draw",), "meld", "3h 3s 3d")
    refused(s, "turn.must_draw_first", ("draw",), "discard", "9c")
    refused(s, "draw.wrong_card", (s.text("4c"), "top of the stock is " + s.text("Kh")),
            "draw", "4c")
    s.draw("Kh")
    assert s.hand(0)[-1] == parse_cards("Kh")[0]
    refused(s, "turn.already_drew", ("already drew",), "draw", "4c")
    if s.state.pile:
        refused(s, "turn.already_drew", ("already drew",), "take_pile")
    s.meld("3h 3s 3d").discard("Kh")
    assert s.turn == 1 and s.state.pile[-1] == parse_cards("Kh")[0]


@pytest.mark.parametrize("name", ALL)
def test_the_whole_pile_is_taken_never_part_of_it(name: str) -> None:
    # Seat 0 throws 9h; seat 1 throws Kh (on 9h, and on the upcard in the upcard presets).
    # Seat 0 then holds Kc Kd, so even must-use-top lets it take the pile for the king.
    s = Scenario(name, hands={0: "9h Kc Kd", 1: "Kh"}, stock="5c 6c")
    if not s.state.pile:
        refused(s, "pile.empty", ("empty",), "take_pile")
    s.draw("5c").discard("9h").draw("6c").discard("Kh")
    pile = s.state.pile
    assert pile[-2:] == parse_cards("9h Kh")
    unit = "tile" if s.rules.rendering == "tiles" else "card"  # Burako's tiles (probe 41b)
    refused(s, "pile.whole_pile", (f"took 1 {unit};", f"is {len(pile)} {unit}s", "never part"),
            "take_pile", count=1)
    refused(s, "pile.wrong_top", (s.text("9h"),), "take_pile", top="9h")
    before = len(s.hand(0))
    s.take_pile()
    assert s.state.pile == () and len(s.hand(0)) == before + len(pile)
    s.meld("Kc Kd Kh").discard("5c")
    assert s.turn == 1


@pytest.mark.parametrize("name", FREE)
def test_a_free_pile_is_taken_without_using_its_top_which_may_be_thrown_back(name: str) -> None:
    # Seat 1 throws 9h; whatever seat 0 holds, the free pile is taken without laying it, and
    # the top card itself may be the discard that ends the turn.
    s = Scenario(name, hands={1: "9h"}, stock="5c 6c")
    s.pass_turn()
    s.draw("6c").discard("9h")
    s.take_pile()
    assert parse_cards("9h")[0] in s.hand(0)
    s.discard("9h")
    assert s.turn == 1 and s.state.pile == parse_cards("9h")


@pytest.mark.parametrize("name", MUST_USE_TOP)
def test_must_use_top_the_pile_only_for_a_top_that_two_hand_cards_or_a_meld_take(
    name: str
) -> None:
    # Seat 1 throws 9h. Seat 0 holds no 9, no heart near it and no wild: refused. With 9c 9d
    # (a new meld with two cards of the hand) or 8h and a run 5h 6h 7h on the table (a
    # lay-off) it is taken, and the top must then be laid before the turn ends.
    dead = "3c 4s 5d 6c 7s 8d Tc Js Qd Kc As 3d 4c"  # no 9, no heart, no wild
    s = Scenario(name, hands={0: dead, 1: "9h"}, stock="5c 6c")
    s.pass_turn()
    s.draw("6c").discard("9h")
    refused(s, "pile.must_use_top", ("9h",), "take_pile")
    assert s.state.pile[-1] == parse_cards("9h")[0]

    s = Scenario(name, hands={0: "9c 9d Kh Ks", 1: "9h"}, stock="5c 6c")
    s.pass_turn()
    s.draw("6c").discard("9h")
    s.take_pile()
    refused(s, "pile.must_use_top", ("9h", "not used"), "discard", "Kh")
    s.meld("9c 9d 9h").discard("Kh")
    assert s.turn == 1

    # The lay-off: 5h 6h 7h on the table, 8h in hand; 8h 9h go on the run.
    s = Scenario(name, hands={0: "5h 6h 7h 8h Ks", 1: "9h"}, stock="5c 6c")
    s.draw("5c").meld("5h 6h 7h").discard("5c")
    s.draw("6c").discard("9h")
    s.take_pile()
    refused(s, "pile.must_use_top", ("9h", "not used"), "discard", "Ks")
    s.layoff(0, "8h 9h").discard("Ks")
    assert s.state.melds[0][0].cards == parse_cards("5h 6h 7h 8h 9h")


@pytest.mark.parametrize("name", MUST_USE_TOP)
def test_must_use_top_a_wild_top_card_must_end_up_in_a_valid_meld(name: str) -> None:
    # A joker on top: two naturals of the hand (Q♠ Q♥) take it in a set; a hand whose only
    # partners for it are one natural and another wild (2♠ 7♣: two wilds) cannot.
    s = Scenario(name, hands={0: "Qs Qh", 1: "JK"}, stock="5c 6c")
    s.pass_turn()
    s.draw("6c").discard("JK")
    s.take_pile().meld("Qs Qh JK")
    assert s.state.melds[0][0].cards == parse_cards("Qs Qh JK")

    # Ranks all different, cards of one suit four ranks apart: 2♠ is the only wild.
    dead = "Ac 3d 4h 5s 6c 7d 8h 9s Tc Jd Qh Ks 2s"
    s = Scenario(name, hands={0: dead, 1: "JK"}, stock="5c 6c")
    s.pass_turn()
    s.draw("6c").discard("JK")
    refused(s, "pile.must_use_top", ("jk",), "take_pile")


# -- §4.2 melds: the side's own, never an opponent's -----------------------------------------


@pytest.mark.parametrize(("name", "players"), [(n, p) for n in ALL for p in PRESET[n][0]
                                               if p in (2, 4)])
def test_cards_are_laid_off_on_the_sides_own_melds_never_an_opponents(
    name: str, players: int
) -> None:
    # Seat 0 lays 3h 3s 3d (side 0's meld 0). Seat 1 holds a 3 too but its side has no meld:
    # "meld 0" is side 0's, and seat 1 may not lay off on it. With four players seat 2, seat
    # 0's partner, lays off on it.
    s = Scenario(name, players, hands={0: "3h 3s 3d", 1: "3c", 2: "3c"} if players == 4
                 else {0: "3h 3s 3d", 1: "3c"}, stock="Kh Kd Ks")
    s.draw("Kh").meld("3h 3s 3d").discard("Kh")
    s.draw("Kd")
    refused(s, "layoff.no_such_meld", ("own",), "layoff", 0, "3c")
    assert s.state.melds[1] == ()
    s.discard("Kd")
    if players == 4:
        s.draw("Ks").layoff(0, "3c")
        assert s.state.melds[0][0].cards == parse_cards("3h 3s 3d 3c")


# -- §4.3 the discard ends the turn -------------------------------------------------------


@pytest.mark.parametrize(("name", "players"), SEATINGS)
def test_one_discard_ends_the_turn(name: str, players: int) -> None:
    # Seat 1 holds both aces of hearts: seat 0 cannot throw one.
    s = Scenario(name, players, hands={0: "9c", 1: "Ah Ah"}, stock="Kh")
    s.draw("Kh")
    refused(s, "discard.card_not_in_hand", ("does not hold " + s.text("Ah"),), "discard", "Ah")
    s.discard("9c")
    assert s.turn == 1 % players and s.state.phase == "draw"
    assert s.state.pile[-1] == parse_cards("9c")[0]
    refused(s, "turn.not_your_turn", ("seat 0",), "discard", "Kh", seat=0)


# -- §4.1 the first-turn redraw ----------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_the_first_turn_redraw_is_the_classic_familys_alone(name: str) -> None:
    s = Scenario(name, stock="Kh 4c 9d 8s")
    s.draw("Kh")
    if name not in REDRAW:
        refused(s, "draw.redraw_not_allowed", (name, "redraw"), "reject", "Kh")
        return
    s.reject("Kh")
    assert s.state.pile[-1] == parse_cards("Kh")[0] and s.turn == 0
    refused(s, "draw.redraw_from_stock", ("stock",), "take_pile")
    s.draw("4c").discard("4c")
    # Seat 1 has no redraw: it is the first turn of the hand only.
    s.draw("9d")
    refused(s, "draw.redraw_only_first", ("first",), "reject", "9d")


@pytest.mark.parametrize("name", MUST_USE_TOP)
def test_must_use_top_once_taken_the_top_may_go_with_cards_that_came_from_the_pile(
    name: str
) -> None:
    # The pickup is judged on the hand before it: 9c 9d take the 9h on top. Once taken, the
    # pile's 7h 8h are in the hand, and the 9h may go with them (docs/rules.md, "The pile and
    # the stock"). Without 9c 9d the same pile is refused.
    dead = "Kc Kd 8h Ac 3d 4s 5c 6d 7s Tc Jd Qs 3c"  # once 8h is thrown: no 9, heart, wild
    for holds, ok in (("9c 9d 8h", True), (dead, False)):
        s = Scenario(name, hands={0: holds, 1: "7h 9h"}, stock="5c 6c 4c 3c")
        s.pass_turn()  # seat 0 throws the 5c
        s.draw("6c").discard("7h").draw("4c").discard("8h").draw("3c").discard("9h")
        if not ok:
            refused(s, "pile.must_use_top", ("9h",), "take_pile")
            continue
        s.take_pile().meld("7h 8h 9h")
        assert s.state.pile_top is None
        s.discard("4c")
        assert s.turn == 1


# -- §3 the deal must fit the material: house rules that break it name their own knob -------


@pytest.mark.parametrize("name", ALL)
def test_house_rules_whose_deal_does_not_fit_the_material_name_the_knob_at_fault(
    name: str
) -> None:
    _, jokers, hand, morto, upcard, _, _ = PRESET[name]
    # Two players: 2 x hand (+ 2 mortos of 11) (+ the upcard) leave the rest as the stock, and
    # each player needs two draws above the floor. A floor of 100 leaves no such stock.
    stock = 104 + jokers - 2 * hand - (22 if morto else 0) - (1 if upcard else 0)
    with pytest.raises(RulesError) as info:
        derive(name, stock_floor=100)
    assert info.value.field == "stock_floor"
    unit = "tiles" if name == "burako" else "cards"  # Burako's tiles (probe 41b)
    assert f"leave a stock of {stock} of the {104 + jokers} {unit}" in str(info.value)
    assert "stock floor of 100 need 104" in str(info.value)
    # The largest floor that still fits: the stock less two draws for each of two players.
    if stock - 4 < 108:
        assert derive(name, stock_floor=stock - 4, player_counts=(2,)).stock_floor == stock - 4
    with pytest.raises(RulesError) as info:
        derive(name, hand_size=60)
    assert info.value.field == "hand_size" and "more than the" in str(info.value)
    if morto:
        with pytest.raises(RulesError) as info:
            derive(name, morto_size=60)
        assert info.value.field == "morto_size"
        up = " + the upcard" if upcard else ""
        assert f"2 mortos of 60{up} need {2 * hand + 120 + (1 if upcard else 0)} {unit}" in str(
            info.value)


# -- §2 the dealer rotates each hand ------------------------------------------------------


@pytest.mark.parametrize(("name", "players"), [(n, p) for n, p in SEATINGS
                                               if n not in MUST_USE_TOP])
def test_the_deal_rotates_and_the_seat_after_the_new_dealer_plays_first(
    name: str, players: int
) -> None:
    # Hand 0 (dealer: the last seat) ends at the stock floor; hand 1 is dealt by seat 0, the
    # next seat round the table, and seat 1 plays first. Another dealer is refused.
    s = Scenario(name, players)
    floor = 2 if name == "mega" else 0
    t = s.rep._t
    while len(t.stock) > floor:
        s.pass_turn()
    s.end_hand("stock_out")
    nxt = build_deal(s.rules, players, {}, "", {}, None, hand_no=1, dealer=0)
    for wrong in (players - 1, 1 % players):
        if wrong == 0:
            continue
        refused(s, "deal.dealer_rotation", ("rotates to 0",), "push",
                msgspec.structs.replace(nxt, dealer=wrong, seq=s.rep.seq + 1))
    s.push(msgspec.structs.replace(nxt, seq=s.rep.seq + 1))
    assert (s.state.hand, s.state.dealer, s.turn) == (1, 0, 1)
    refused(s, "turn.not_your_turn", ("seat 1",), "draw", seat=0)


@pytest.mark.parametrize("name", MUST_USE_TOP)
def test_must_use_top_a_top_whose_use_would_empty_the_hand_unallowed_is_refused(
    name: str
) -> None:
    # Seat 0 takes its morto indirectly with sets only (no canastra), lays nine of its cards
    # and keeps 7c 7d. Seat 1 takes the pile for its 6c and throws 7h: the pile is that one
    # card. 7c 7d 7h would empty seat 0's hand, which is going out, and going out needs a
    # canastra (RULES.md §7): the top cannot be used, the pickup is refused, and the message
    # says why (the pair is there).
    s = Scenario(name, hands={0: "3s 3d 3c 3h 4s 4d 4c 4h 5s 5d 5c 5h 5s", 1: "6h 6s 7h"},
                 stock="Kc 8c 6c", mortos={0: "7c 7d Th Ts Td Qh Qs Qd Jh Js Jd"})
    s.draw("Kc").meld("3s 3d 3c 3h").meld("4s 4d 4c 4h").meld("5s 5d 5c 5h 5s").discard("Kc")
    s.morto(direct=False)
    s.pass_turn()
    s.draw("6c").meld("Th Ts Td").meld("Qh Qs Qd").meld("Jh Js Jd").discard("6c")
    s.take_pile().meld("6h 6s 6c").discard("7h")
    assert s.state.pile == parse_cards("7h") and sorted(s.hand(0)) == sorted(parse_cards("7c 7d"))
    refused(s, "pile.must_use_top", ("7h", "no card to throw", "going out needs a canastra"),
            "take_pile")
    s.draw()  # the stock, as always, is open to seat 0
    assert len(s.hand(0)) == 3


# -- house rules: must-use-top with vulnerability never leaves a turn without an end ---------


def _carried(s: Scenario, totals: tuple[int, int]) -> Scenario:
    rep = Replayer()
    begin, deal = s.events[0], msgspec.structs.replace(s.events[1], seq=2)
    for ev in (begin, TotalsCarried(totals, seq=1), deal):
        rep.step(ev)
    s.rep, s.events = rep, [begin, TotalsCarried(totals, seq=1), deal]
    return s


def test_must_use_top_with_vulnerability_a_short_opening_holding_the_top_is_taken_back() -> None:
    # thirteen with vulnerability (house rules): seat 0's side stands at 1100, above half of
    # 2005, so its opening must reach 75. It takes the pile for the 9h on top with 9c 9d: 30
    # points, short. The opening is taken back, the 9h with it: the top card was used, and the
    # turn may end with a discard (asking for it again, now with 90, could leave no way to end
    # the turn at all). A top card never laid must still be laid before the discard.
    rules = derive("thirteen", vulnerability=True)
    dead = "3c 4s 5d 6c 7s 8d Tc Js Qd Kc As 3d"  # with 9c 9d: no other meld near 9h
    s = _carried(Scenario(rules, hands={0: f"9c {dead}", 1: "9h"}, stock="9d 6h"),
                 (1100, 0))
    assert s.state.vulnerable == (True, False)
    s.draw("9d").discard("3c")
    s.draw("6h").discard("9h")
    s.take_pile()
    refused(s, "pile.must_use_top", ("9h", "not used"), "discard", "Kc")
    s.meld("9c 9d 9h")
    refused(s, "vulnerable.opening_too_low", ("75", "30"), "discard", "Kc")
    s.retract()
    assert s.state.pile_top is None and s.state.opening_min[0] == 90
    s.discard("Kc")
    assert s.turn == 1 and s.state.melds[0] == ()


def test_must_use_top_with_vulnerability_an_opening_without_the_top_is_taken_back() -> None:
    # The same house rules. Seat 0 takes the pile for its 9h and first lays Kh Ks Kd (30,
    # short) without it. The opening may be taken back at once (legal_moves lists it: it used
    # to leave it out while the top card was still to be laid); the 9h, never laid, must then
    # be laid; 9c 9d 9h (30) are short of the 90 now needed, taken back in turn, and with the
    # top card used so, the turn ends.
    rules = derive("thirteen", vulnerability=True)
    s = _carried(Scenario(rules, hands={0: "9c Kh Ks Kd 3c", 1: "9h"}, stock="9d 6h"),
                 (1100, 0))
    s.draw("9d").discard("3c")
    s.draw("6h").discard("9h")
    s.take_pile().meld("Kh Ks Kd")
    retract = [m for m in legal_moves(s.state) if isinstance(m, OpeningRetracted)]
    assert [sorted(m.cards) for m in retract] == [sorted(parse_cards("Kh Ks Kd"))]
    refused(s, "pile.must_use_top", ("9h",), "discard", "9c")
    s.retract("Kh Ks Kd")
    assert s.state.opening_min[0] == 90 and s.state.pile_top == parse_cards("9h")[0]
    refused(s, "pile.must_use_top", ("9h", "not used"), "discard", "Kh")
    s.meld("9c 9d 9h")
    refused(s, "vulnerable.opening_too_low", ("90", "30"), "discard", "Kh")
    s.retract("9c 9d 9h").discard("Kh")
    assert s.turn == 1
