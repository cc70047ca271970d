"""Rule scenarios of the four-joker and tile presets (`thirteen`, `thirteen-quick`, `mega`,
`burako`; `burraco` where a rule is shared): the deal, wild cards in whole scored hands, the
burako canastras, each accepted and refused. Expected numbers come from RULES.md §9 by hand."""

from __future__ import annotations

import msgspec
import pytest

from buraco_log.cards import JOKER, RANK
from buraco_log.errors import IllegalMoveError
from buraco_log.reducer import Replayer
from buraco_log.rules import preset
from tests.scenario import Scenario, build_deal

# RULES.md §9 card table (joker, 2, ace, 8..K, 3..7) and bonuses (going out, morto not taken).
CARD = {
    "thirteen": (50, 10, 15, 10, 5),
    "thirteen-quick": (50, 10, 15, 10, 5),
    "burraco": (30, 20, 15, 10, 5),
    "mega": (50, 10, 15, 10, 5),
    "burako": (50, 10, 15, 10, 5),
}
GOING_OUT, MORTO_NOT_TAKEN = 100, 100  # the same in all five columns
MORTO = "Th Ts Td Tc Kh Ks Kd Qh Qs Qd Qc"  # 110 points, nothing wild


def points(name: str, cards: tuple[int, ...]) -> int:
    joker, two, ace, high, low = CARD[name]
    total = 0
    for c in cards:
        r = 0 if c == JOKER else RANK[c]
        total += joker if r == 0 else two if r == 2 else ace if r == 1 else high if r >= 8 else low
    return total


def refused(s: Scenario, rule: str, move: str, *args: object, **kw: object) -> None:
    seq = s.rep.seq + 1
    with s.illegal(rule):
        getattr(s, move)(*args, **kw)
    assert s.last_error.seq == seq


# -- the deal (RULES.md §3, §11) ------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "hand", "jokers", "upcard"),
    [("thirteen", 13, 4, True), ("thirteen-quick", 13, 4, True), ("mega", 11, 4, True),
     ("burako", 11, 2, False)],
)
def test_the_deal_of_each_preset_and_a_deal_of_another_preset_refused(
    name: str, hand: int, jokers: int, upcard: bool
) -> None:
    s = Scenario(name, 4)
    st = s.state
    assert [len(h) for h in st.hands] == [hand] * 4
    assert [len(m) for m in st.mortos] == [11, 11]  # one morto of 11 per side
    assert len(st.pile) == (1 if upcard else 0)
    assert st.card_count() == 104 + jokers
    # The same material dealt with the other hand size (11 or 13) is refused.
    other = msgspec.structs.replace(preset(name), hand_size=24 - hand)
    rep = Replayer()
    rep.step(s.events[0])
    with pytest.raises(IllegalMoveError) as info:
        rep.step(build_deal(other, 4, {}, "", {}, None))
    assert info.value.rule == "deal.hand_size"
    rep.step(s.events[1])


@pytest.mark.parametrize("name", ["thirteen", "thirteen-quick", "mega", "burako"])
def test_no_first_turn_redraw_outside_the_classic_family(name: str) -> None:
    s = Scenario(name, stock="Kh 4c")
    s.draw("Kh")
    refused(s, "draw.redraw_not_allowed", "reject", "Kh")
    s.discard("Kh")


# -- jokers in a whole scored hand (RULES.md §9) ------------------------------------------

# A dirty canastra: the run 3h..8h with a joker at an end, then a set; the drawn 4c is thrown
# (the indirect morto). Thirteen's 13 cards hold a second set.
FIRST = {13: ("3h 4h 5h 6h 7h 8h JK Jc Jd Js Kc Kd Ks", ["Jc Jd Js", "Kc Kd Ks"]),
         11: ("3h 4h 5h 6h 7h 8h JK Jc Jd Js Jh", ["Jc Jd Js Jh"])}


@pytest.mark.parametrize("name", ["thirteen", "thirteen-quick", "burraco", "mega", "burako"])
def test_a_joker_scores_its_preset_points_on_the_table_and_in_the_hand(name: str) -> None:
    size = preset(name).hand_size
    hand, sets = FIRST[size]
    s = Scenario(name, hands={0: hand, 1: "JK 9c"}, stock="4c 9d Kh", mortos={0: MORTO})
    s.draw("4c").meld("3h 4h 5h 6h 7h 8h JK")
    assert s.state.melds[0][0].canastra == "dirty"
    for m in sets:
        s.meld(m)
    s.discard("4c").morto(direct=False)
    s.pass_turn()
    s.draw("Kh").meld("Th Ts Td Tc").meld("Qh Qs Qd Qc").meld("Kh Ks Kd Kh")
    s.go_out().end_hand()
    side0, side1 = s.state.results[0].scores
    joker = CARD[name][0]
    first = 35 + joker + (60 if size == 13 else 40)  # 3h..7h 25 + 8h 10, the joker, the sets
    assert side0.table_points == first + 40 + 40 + 40
    assert side0.canastras == {"dirty": 1} and side0.canastra_bonus == 100
    assert side0.total == first + 120 + 100 + GOING_OUT
    # Seat 1 holds a joker (and 9c): its points count against side 1, with the morto penalty.
    assert side1.hand_penalty == points(name, s.hand(1)) >= joker + 10
    assert side1.total == -points(name, s.hand(1)) - MORTO_NOT_TAKEN


@pytest.mark.parametrize("name", ["thirteen", "mega", "burako"])
def test_two_wilds_in_one_meld_are_refused_one_is_accepted(name: str) -> None:
    s = Scenario(name, hands={0: "5h 5s JK 2c 9c"}, stock="4c")
    s.draw("4c")
    refused(s, "meld.too_many_wilds", "meld", "5h 5s JK 2c")
    s.meld("5h 5s JK")
    refused(s, "meld.too_many_wilds", "layoff", 0, "2c")
    s.discard("2c")


# -- burako: royal and ace-to-ace canastras (RULES.md §6, §9) -------------------------------

# Seat 0 lays Ah..Jh (a clean canastra, the 2h in its own place), throws 4c and takes the morto
# indirectly; seat 1 passes; seat 0 lays off Qh Kh (royal: A..K), three sets, and then the
# morto's last card X: the second Ah (ace-to-ace), a joker (dirty), or 9c is thrown (royal).
RUN = "Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Jh"


@pytest.mark.parametrize(
    ("last", "cls", "bonus", "table"),
    [
        # A..K: one ace 15, the 2h 10, 3..7 25, 8..K 60 = 110; A..K..A 125
        ("Ah", "ace_to_ace", 1000, 125),
        ("9c", "royal", 500, 110),
        ("JK", "dirty", 100, 160),  # the joker (50) as the second ace: dirty, not royal
    ],
)
def test_burako_royal_ace_to_ace_and_a_wild_that_spoils_them(
    last: str, cls: str, bonus: int, table: int
) -> None:
    morto = f"Qh Kh {last} 5s 5d 5c 6s 6d 6c 7s 7d"
    s = Scenario("burako", hands={0: RUN}, stock="4c 9d 7c", mortos={0: morto})
    s.draw("4c").meld(RUN).discard("4c")
    assert s.state.melds[0][0].canastra == "clean"
    s.morto(direct=False)
    s.pass_turn()
    s.draw("7c").layoff(0, "Qh Kh")
    assert s.state.melds[0][0].canastra == "royal"
    s.meld("5s 5d 5c").meld("6s 6d 6c").meld("7s 7d 7c")
    if last == "9c":
        s.discard("9c")
    else:
        s.layoff(0, last)
    assert s.state.melds[0][0].canastra == cls
    s.go_out()
    right = (table + 45 + bonus + GOING_OUT, -points("burako", s.hand(1)) - MORTO_NOT_TAKEN)
    if cls != "dirty":  # a table that counted the clean 200 on top of the royal bonus: refused
        refused(s, "score.mismatch", "end_hand", "went_out", (right[0] + 200, right[1]))
    s.end_hand("went_out", right)
    side0, side1 = s.state.results[0].scores
    assert side0.table_points == table + 45
    assert side0.canastras == {cls: 1} and side0.canastra_bonus == bonus
    assert (side0.total, side1.total) == right


def test_burako_the_pair_of_aces_needs_the_whole_run() -> None:
    r = preset("burako")
    assert r.ace_both_ends
    s = Scenario("burako", hands={0: "Ah 2h 3h Ah 9c"}, stock="4c")
    s.draw("4c")
    refused(s, "meld.run_not_consecutive", "meld", "Ah 2h 3h Ah")
    s.meld("Ah 2h 3h")
    refused(s, "meld.run_not_consecutive", "layoff", 0, "Ah")


# -- thirteen and thirteen-quick: the pile only to use its top (RULES.md §4) -----------------

# Thirteen cards of which no two make a meld with Kd (no king, no diamond near it, no wild).
DEAD_FOR_KD = "8h 9h 4c 5c 6d 7s 9s Jd 3h 3c 5d 7c Qs"


@pytest.mark.parametrize("name", ["thirteen", "thirteen-quick"])
def test_both_thirteen_presets_take_the_pile_only_to_use_its_top(name: str) -> None:
    s = Scenario(name, hands={0: DEAD_FOR_KD}, upcard="Kd")
    refused(s, "pile.must_use_top", "take_pile")
    s.draw()
    ok = Scenario(name, hands={0: "8h 9h 4c"}, upcard="Th")
    ok.take_pile()
    refused(ok, "pile.must_use_top", "discard", "4c")  # not before the top is laid
    ok.meld("8h 9h Th").discard("4c")


@pytest.mark.parametrize("name", ["thirteen", "thirteen-quick"])
def test_both_thirteen_presets_end_at_an_empty_stock_only_if_the_top_is_unusable(
    name: str
) -> None:
    # Seat 0 keeps Kd to throw last; seat 1 holds nothing that goes with it.
    s = Scenario(name, hands={0: "Kd", 1: DEAD_FOR_KD})
    t = s.rep._t
    while len(t.stock) > 1:
        s.pass_turn()
    assert s.turn == 0
    s.draw().discard("Kd")
    refused(s, "stock.floor_reached", "draw", "4c")
    refused(s, "pile.must_use_top", "take_pile")
    s.end_hand("stock_out")
    # The same, but seat 1 holds Kh Ks: the pile could be taken, so the hand goes on.
    s = Scenario(name, hands={0: "Kd", 1: "Kh Ks"})
    t = s.rep._t
    while len(t.stock) > 1:
        s.pass_turn(discard=None)
    s.draw().discard("Kd")
    refused(s, "stock.pile_can_be_taken", "end_hand", "stock_out")
    s.take_pile().meld("Kh Ks Kd")


# -- partnerships: one morto per side, the partner's going out (RULES.md §7) ----------------


@pytest.mark.parametrize("name", ["thirteen", "mega", "burako"])
def test_the_partner_goes_out_while_the_morto_taken_indirectly_stands_as_a_hand(
    name: str
) -> None:
    thirteen = preset(name).hand_size == 13
    jacks = "Jc Jd Js Jh Jc Jd" if thirteen else "Jc Jd Js Jh"
    run2 = "3s 4s 5s 6s 7s 8s 9s" + (" Ts Js" if thirteen else "")
    morto = "Th Ts Td Tc Kh Ks Kd Kc 5c 5d 5h"  # 40 + 40 + 15 = 95
    s = Scenario(name, 4, hands={0: f"3h 4h 5h 6h 7h 8h 9h {jacks}", 2: f"{run2} Qc Qd Qs Qh"},
                 stock="Kc 4c Qc", mortos={0: morto})
    s.draw("Kc").meld("3h 4h 5h 6h 7h 8h 9h").meld(jacks).discard("Kc").morto(direct=False)
    s.pass_turn()
    s.draw("Qc").meld(run2).meld("Qc Qd Qs Qh Qc")
    assert s.state.phase == "emptied"
    refused(s, "morto.not_available", "morto", direct=True)  # side 0 has taken its morto
    s.go_out().end_hand()
    side0, side1 = s.state.results[0].scores
    # Runs 45 and 45 (65 with Ts Js), jacks 40 (60), queens 50; two clean canastras; out 100.
    # Seat 0 has not played its morto, but only an opponent's going out would void it: it is
    # seat 0's hand, 95 points against the side.
    table = 45 + (65 if thirteen else 45) + (60 if thirteen else 40) + 50
    assert side0.table_points == table and side0.canastras == {"clean": 2}
    assert (side0.hand_penalty, side0.morto_penalty, side0.going_out) == (95, 0, GOING_OUT)
    assert side0.total == table + 400 + GOING_OUT - 95
    hands1 = s.hand(1) + s.hand(3)
    assert side1.total == -points(name, hands1) - MORTO_NOT_TAKEN
