"""Review of RULES.md §2 (seats, sides, turn order), §3 (deal), §4 (a turn), §7 (morto and
going out) and §8 (stock floor), across presets and player counts, beyond the existing tests."""

from __future__ import annotations

import msgspec
import pytest

from buraco_log.cards import format_card, parse_cards
from buraco_log.errors import IllegalMoveError
from buraco_log.reducer import replay
from tests.play import start
from tests.scenario import Scenario, build_deal

SETS_11 = "7h 7s 7d 8c 8d 8s 9h 9s 9d Kc Kd"  # + Ks: four sets, the whole hand
SETS_10_PLUS_1 = "7h 7s 7d 8c 8d 8s 9h 9s 9d 9c Kd"  # + 7c: eleven melded, Kd discarded
MORTO_11 = "3h 3s 3d 3c 4h 4s 4d 4c 5h 5s 5d"
# Thirteen cards none of which goes with the king of diamonds (no K, no Q/J/A of diamonds
# in reach, no wild): the pile with Kd on top cannot be taken under must_use_top.
DEAD_FOR_KD = "8h 9h 4c 5c 6d 7s 9s Jd 3h 3c 5d 7c Qs"
# Thirteen cards with no two in one meld with a joker: distinct ranks, same-suit ranks at
# least three apart (across the ace too), and the only 2 (clubs) sits next to the Kc only.
DEAD_FOR_JOKER = "Ah 4h 7h Th 5s 8s Js 3d 6d 9d Qd Kc 2c"
# Thirteen cards none of which goes with the jack of hearts (nor the ten of hearts).
DEAD_FOR_JH = "4c 5c 6d 7s 9s 3c 5d 7c Qs 3s Ks Ac 8d"


def _c(text: str) -> int:
    return parse_cards(text)[0]


def _cs(text: str) -> tuple[int, ...]:
    return parse_cards(text)


def _drawn(s: Scenario) -> str:
    d = s.rep._t.drawn
    assert d is not None
    return format_card(d)


def _points(s: Scenario, seats: tuple[int, ...]) -> int:
    pts = s.rules.point_table()
    return sum(pts[c] for seat in seats for c in s.hand(seat))


def _pass_until(s: Scenario, stock_left: int) -> None:
    t = s.rep._t
    while len(t.stock) > stock_left:
        s.pass_turn()


# ====================================================================== §2 seats and sides


def test_six_player_classic_two_triangles_and_turns_cycle_through_all_seats() -> None:
    s = Scenario("classic", 6)
    assert s.state.sides == (0, 1, 0, 1, 0, 1) and s.state.n_sides == 2
    assert s.state.dealer == 5 and s.turn == 0
    order = []
    for _ in range(7):
        order.append(s.turn)
        s.pass_turn()
    assert order == [0, 1, 2, 3, 4, 5, 0]


@pytest.mark.parametrize("players", [4, 6])
def test_partners_lay_off_on_each_others_melds_opponents_cannot(players: int) -> None:
    s = Scenario("classic", players, hands={0: "7h 7s 7d", 1: "7c", 2: "7c"})
    s.draw().meld("7h 7s 7d")
    s.discard(_drawn(s))
    s.draw()  # seat 1, of the other side: its side has no meld 0
    with s.illegal("layoff.no_such_meld"):
        s.layoff(0, "7c")
    s.discard(_drawn(s))
    s.draw().layoff(0, "7c")  # seat 2, seat 0's partner
    meld = s.state.melds[0][0]
    assert meld.cards == _cs("7h 7s 7d 7c") and meld.laid_by == 0 and meld.side == 0
    assert s.state.melds[1] == ()


def test_six_player_hand_penalties_sum_over_the_three_partners() -> None:
    s = Scenario("classic", 6, hands={0: SETS_11}, stock="Ks")
    s.draw().meld("7h 7s 7d").meld("8c 8d 8s").meld("9h 9s 9d").meld("Kc Kd Ks")
    s.go_out()
    s.end_hand()
    side0, side1 = s.state.results[0].scores
    assert side1.hand_penalty == _points(s, (1, 3, 5)) > 0
    assert side0.hand_penalty == _points(s, (2, 4)) > 0
    assert side0.going_out == 50


def test_three_players_are_three_sides_each_with_its_own_morto() -> None:
    s = Scenario("biriba", 3, hands={1: SETS_11}, stock="4c Ks", mortos={1: MORTO_11})
    assert s.state.sides == (0, 1, 2) and len(s.state.mortos) == 3
    s.pass_turn()
    s.draw("Ks").meld("7h 7s 7d").meld("8c 8d 8s").meld("9h 9s 9d").meld("Kc Kd Ks")
    s.morto(direct=True)
    assert sorted(s.hand(1)) == sorted(_cs(MORTO_11))
    assert s.state.morto_taken == (False, True, False)
    assert len(s.state.mortos[0]) == 11 and len(s.state.mortos[2]) == 11
    assert s.turn == 1 and s.state.phase == "play"


@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_the_dealer_rotates_and_the_seat_after_the_new_dealer_opens(players: int) -> None:
    s = Scenario("classic", players, hands={0: SETS_11}, stock="Ks")
    s.draw().meld("7h 7s 7d").meld("8c 8d 8s").meld("9h 9s 9d").meld("Kc Kd Ks")
    s.go_out().end_hand()
    ev = build_deal(s.rules, players, {}, "", {}, None, hand_no=1)
    s.push(msgspec.structs.replace(ev, seq=s._seq()))
    assert s.state.dealer == 0  # the first dealer was the last seat
    assert s.turn == 1 % players
    with s.illegal("turn.not_your_turn"):
        s.draw(seat=0)


@pytest.mark.parametrize(
    ("name", "players"),
    [("thirteen", 3), ("burraco", 3), ("mega", 3), ("burako", 3), ("classic", 5),
     ("bossa-nova", 6)],
)
def test_player_counts_outside_the_preset_are_refused(name: str, players: int) -> None:
    with pytest.raises(IllegalMoveError) as info:
        replay([start(name, players)])
    assert info.value.rule == "match.rules" and "player_counts" in str(info.value)


@pytest.mark.parametrize(("name", "players"), [("biriba", 3), ("bossa-nova", 4), ("mega", 4)])
def test_player_counts_of_the_preset_are_accepted(name: str, players: int) -> None:
    s = Scenario(name, players)
    assert s.state.phase == "draw" and len(s.state.hands) == players


# ====================================================================== §3 the deal


@pytest.mark.parametrize("name", ["classic", "biriba", "bossa-nova", "burako"])
def test_without_an_upcard_the_first_discard_starts_the_pile(name: str) -> None:
    s = Scenario(name, stock="Kh 5s")
    assert s.state.pile == ()
    with s.illegal("pile.empty"):
        s.take_pile(count=0, top="4c")
    s.draw("Kh").discard("Kh")
    assert s.state.pile == _cs("Kh") and s.turn == 1


@pytest.mark.parametrize(("name", "players"), [("thirteen", 4), ("mega", 2), ("burraco", 4)])
def test_with_an_upcard_the_pile_starts_with_it_and_the_stock_is_the_rest(
    name: str, players: int
) -> None:
    s = Scenario(name, players, upcard="Kd", stock="5s")
    r = s.rules
    assert s.state.pile == _cs("Kd")
    assert s.state.stock[0] == _c("5s")
    assert len(s.state.stock) == 104 + r.jokers - players * r.hand_size - 2 * 11 - 1


# ====================================================================== §4 a turn


@pytest.mark.parametrize("name", ["biriba", "bossa-nova"])
def test_the_first_turn_redraw_is_part_of_the_whole_classic_family(name: str) -> None:
    s = Scenario(name, stock="Kh 5s")
    s.draw("Kh").reject("Kh").draw("5s")
    assert s.state.pile == _cs("Kh") and _c("5s") in s.hand(0) and _c("Kh") not in s.hand(0)


@pytest.mark.parametrize("name", ["burraco", "mega", "burako"])
def test_the_presets_outside_the_classic_family_have_no_redraw(name: str) -> None:
    s = Scenario(name, stock="Kh 5s").draw()
    with s.illegal("draw.redraw_not_allowed"):
        s.reject()


def test_the_rejected_card_lies_face_up_and_the_next_player_may_take_it() -> None:
    s = Scenario("classic", stock="Kh 5s")
    s.draw("Kh").reject("Kh")
    with s.illegal("turn.must_draw_first"):
        s.discard("Kh")  # the rejected card is no longer in the hand; a draw comes first
    s.draw("5s").discard("5s")
    assert s.state.pile == _cs("Kh 5s")
    s.take_pile()
    assert s.turn == 1 and _c("Kh") in s.hand(1) and _c("5s") in s.hand(1)
    assert s.state.pile == ()


def test_the_redraw_is_gone_once_the_player_has_laid_cards() -> None:
    s = Scenario("classic", hands={0: "7h 7s 7d"}, stock="Kh 5s")
    s.draw("Kh").meld("7h 7s 7d")
    with s.illegal("draw.redraw_only_first"):
        s.reject("Kh")


def test_must_use_top_the_top_may_be_laid_off_on_a_partners_meld_not_an_opponents() -> None:
    s = Scenario(
        "thirteen",
        4,
        hands={0: "8h 9h Th Jh", 1: "Jh 4c 5c 6d 7s 9s 3c 5d 7c Qs 3s Ks Ac", 2: DEAD_FOR_JH},
        stock="4d 3d",
        upcard="6s",
    )
    s.draw("4d").meld("8h 9h Th").discard("Jh")
    # Seat 1 cannot use Jh: only side 0's run would take it.
    with s.illegal("pile.must_use_top"):
        s.take_pile()
    s.draw("3d").discard("Jh")
    # Seat 2's own hand cannot use Jh either, but its partner's run can.
    s.take_pile()
    with s.illegal("pile.must_use_top"):
        s.discard("Ks")
    s.layoff(0, "Jh")
    assert s.state.melds[0][0].cards == _cs("8h 9h Th Jh")
    s.discard("Ks")
    assert s.turn == 3


def test_must_use_top_the_cards_below_the_top_do_not_count() -> None:
    # Pile 9h Jh Th: with the pile's own cards Th would make a run, but the hand has none.
    s = Scenario("thirteen", hands={0: DEAD_FOR_JH}, stock="Jh Th", upcard="9h")
    s.draw("Jh").discard("Jh")
    s.draw("Th").discard("Th")
    assert s.state.pile == _cs("9h Jh Th")
    with s.illegal("pile.must_use_top"):
        s.take_pile()
    assert s.turn == 0


def test_must_use_top_a_joker_on_top_needs_two_hand_cards_or_a_meld_to_join() -> None:
    s = Scenario("thirteen", hands={0: DEAD_FOR_JOKER}, upcard="JK")
    with s.illegal("pile.must_use_top"):
        s.take_pile()


def test_must_use_top_a_joker_on_top_may_be_laid_off_on_a_clean_meld() -> None:
    hand = "8h 9h Th Ah 4h 5s 8s Js 3d 6d Qd Kc 2c"
    s = Scenario("thirteen", hands={0: hand}, stock="5c JK")
    s.draw("5c").meld("8h 9h Th").discard("5c")
    s.draw("JK").discard("JK")
    s.take_pile()
    s.layoff(0, "JK")
    meld = s.state.melds[0][0]
    assert meld.kind == "run" and _c("JK") in meld.cards and _c("JK") not in s.hand(0)


def test_must_use_top_a_joker_on_top_cannot_join_a_meld_that_already_has_a_wild() -> None:
    hand = "8h 9h JK Ah 4h 5s 8s Js 3d 6d Qd Kc 2c"
    s = Scenario("thirteen", hands={0: hand}, stock="5c JK")
    s.draw("5c").meld("8h 9h JK").discard("5c")
    s.draw("JK").discard("JK")
    with s.illegal("pile.must_use_top"):
        s.take_pile()


# ====================================================================== §8 the stock floor


def test_classic_at_an_empty_stock_the_player_may_still_take_the_pile() -> None:
    s = Scenario("classic")
    _pass_until(s, 0)
    seat = s.turn
    with s.illegal("stock.floor_reached"):
        s.draw("4c")  # the stock is empty: any card
    s.take_pile()
    assert s.state.phase == "play" and s.turn == seat and s.state.pile == ()
    s.discard(format_card(s.hand(seat)[0]))
    assert s.turn == 1 - seat
    s.end_hand("stock_out")
    assert s.state.results[0].reason == "stock_out" and s.state.results[0].went_out is None


def test_mega_the_hand_goes_on_at_three_stock_cards_and_the_pile_is_free_at_two() -> None:
    s = Scenario("mega")
    _pass_until(s, 3)
    with s.illegal("hand.not_over"):
        s.end_hand("stock_out")
    s.pass_turn()
    assert len(s.state.stock) == 2
    with s.illegal("stock.floor_reached"):
        s.draw()
    s.take_pile()
    assert s.state.phase == "play"


def test_thirteen_at_the_floor_a_pile_whose_top_cannot_be_used_ends_the_hand() -> None:
    s = Scenario("thirteen", hands={0: "Kd", 1: DEAD_FOR_KD})
    _pass_until(s, 1)
    assert s.turn == 0
    s.draw().discard("Kd")
    with s.illegal("stock.floor_reached"):
        s.draw("4c")  # the stock is empty: any card
    with s.illegal("pile.must_use_top"):
        s.take_pile()
    s.end_hand("stock_out")
    assert s.state.results[0].reason == "stock_out"


def test_thirteen_at_the_floor_a_usable_top_may_still_be_taken() -> None:
    s = Scenario("thirteen", hands={0: "Kd", 1: "Qd Jd"})
    _pass_until(s, 1)
    assert s.turn == 0
    s.draw().discard("Kd")
    s.take_pile().meld("Jd Qd Kd")
    assert s.state.melds[1][0].cards == _cs("Jd Qd Kd")


# ====================================================================== §7 the morto


MORTO_SETS = "Jh Js Jd Jc Qh Qs Qd Qc Th Ts Td"


@pytest.mark.parametrize(
    ("name", "hand", "draw", "melds", "relancinho"),
    [
        ("biriba", SETS_11, "Ks", ["7h 7s 7d", "8c 8d 8s", "9h 9s 9d", "Kc Kd Ks"], 1),
        (
            "thirteen",
            "3h 3s 3d 4h 4s 4d 5h 5s 5d 6h 6s 6d 6c",
            "6h",
            ["3h 3s 3d", "4h 4s 4d", "5h 5s 5d", "6h 6s 6d 6c 6h"],
            0,
        ),
        ("burraco", SETS_11, "Ks", ["7h 7s 7d", "8c 8d 8s", "9h 9s 9d", "Kc Kd Ks"], 0),
        ("mega", SETS_11, "Ks", ["7h 7s 7d", "8c 8d 8s", "9h 9s 9d", "Kc Kd Ks"], 0),
        (
            "bossa-nova",
            "3h 4h 5h 6h 7h 8h 9h Th Kc Kd Ks",
            "Jh",
            ["3h 4h 5h 6h 7h 8h 9h Th Jh", "Kc Kd Ks"],
            1,
        ),
    ],
)
def test_a_direct_morto_continues_the_turn_without_drawing(
    name: str, hand: str, draw: str, melds: list[str], relancinho: int
) -> None:
    s = Scenario(name, hands={0: hand}, stock=draw, mortos={0: MORTO_SETS})
    s.draw(draw)
    for m in melds:
        s.meld(m)
    assert s.state.phase == "emptied"
    with s.illegal("morto.wrong_kind"):
        s.morto(direct=False)
    s.morto(direct=True)
    assert sorted(s.hand(0)) == sorted(_cs(MORTO_SETS))
    assert s.state.morto_taken == (True, False) and s.state.morto_pending == (None, None)
    assert s.turn == 0 and s.state.phase == "play"
    with s.illegal("turn.already_drew"):
        s.draw()
    assert s.state.relancinho == (relancinho, 0)
    s.meld("Jh Js Jd Jc").discard("Qh")
    assert s.turn == 1 and s.state.phase == "draw"


def test_bossa_nova_keeping_one_card_to_discard_for_the_morto_needs_a_canastra() -> None:
    s = Scenario("bossa-nova", hands={0: SETS_10_PLUS_1}, stock="7c")
    s.draw("7c").meld("7h 7s 7d 7c").meld("8c 8d 8s")
    with s.illegal("morto.needs_canastra"):
        s.meld("9h 9s 9d 9c")  # would leave Kd, whose discard could not take the morto
    s2 = Scenario("biriba", hands={0: SETS_10_PLUS_1}, stock="7c")
    s2.draw("7c").meld("7h 7s 7d 7c").meld("8c 8d 8s").meld("9h 9s 9d 9c").discard("Kd")
    s2.morto(direct=False)
    assert s2.state.morto_taken == (True, False) and s2.turn == 1


def test_bossa_nova_relancinho_notes_the_bonus_and_the_hand_goes_on() -> None:
    s = Scenario("bossa-nova", hands={0: "3h 4h 5h 6h 7h 8h 9h Kc Kd Ks Qc"}, stock="Th")
    s.draw().meld("3h 4h 5h 6h 7h 8h 9h Th").meld("Kc Kd Ks").discard("Qc")
    s.morto(direct=False)
    assert s.state.relancinho == (1, 0)
    assert s.state.phase == "draw" and s.turn == 1 and s.state.results == ()


def test_classic_relancinho_may_end_with_a_discard_and_ends_the_hand() -> None:
    s = Scenario("classic", hands={0: SETS_10_PLUS_1}, stock="7c")
    s.draw().meld("7h 7s 7d 7c").meld("8c 8d 8s").meld("9h 9s 9d 9c").discard("Kd")
    assert s.state.phase == "emptied"
    s.go_out()
    assert s.state.phase == "out"
    with s.illegal("hand.over"):
        s.draw(seat=1)
    s.end_hand()
    side0 = s.state.results[0].scores[0]
    assert (side0.going_out, side0.relancinho, side0.hand_penalty) == (50, 100, 0)


@pytest.mark.parametrize("name", ["thirteen", "burraco", "mega", "burako"])
def test_presets_outside_the_classic_family_note_no_relancinho(name: str) -> None:
    if name == "thirteen":
        hand, draw, melds = SETS_10_PLUS_1 + " 4h 4s", "4d", ["7h 7s 7d", "4h 4s 4d"]
    else:
        hand, draw, melds = SETS_10_PLUS_1, "7c", ["7h 7s 7d 7c"]
    s = Scenario(name, hands={0: hand}, stock=draw)
    s.draw(draw)
    for m in [*melds, "8c 8d 8s", "9h 9s 9d 9c"]:
        s.meld(m)
    s.discard("Kd").morto(direct=False)
    assert s.state.relancinho == (0, 0) and s.state.morto_taken == (True, False)
    assert s.turn == 1


def test_burako_goes_out_by_melding_after_an_indirect_morto() -> None:
    morto = "3h 4h 5h 6h 7h 8h 9h Th Kc Kd Ks"
    s = Scenario("burako", hands={0: SETS_10_PLUS_1}, stock="7c 4d Jh", mortos={0: morto})
    s.draw("7c").meld("7h 7s 7d 7c").meld("8c 8d 8s").meld("9h 9s 9d 9c").discard("Kd")
    s.morto(direct=False)
    s.pass_turn()
    s.draw("Jh").meld("3h 4h 5h 6h 7h 8h 9h Th Jh").meld("Kc Kd Ks")
    assert s.state.phase == "emptied"
    s.go_out()
    s.end_hand()
    side0 = s.state.results[0].scores[0]
    assert side0.going_out == 100 and side0.morto_penalty == 0 and side0.hand_penalty == 0


@pytest.mark.parametrize(("name", "allowed"), [("mega", False), ("burraco", True)])
def test_a_set_of_seven_is_a_canastra_for_going_out_except_in_mega(
    name: str, allowed: bool
) -> None:
    hand = "7h 7s 7d 7c 7h 7s 7d 8c 8d 8s 8h"
    morto = "9c 9d 9s 9h Jc Jd Js Kc Kd Ks Qc"
    s = Scenario(name, hands={0: hand}, stock="8c", mortos={0: morto})
    s.draw().meld("7h 7s 7d 7c 7h 7s 7d").meld("8c 8d 8s 8h 8c").morto(direct=True)
    s.meld("9c 9d 9s 9h").meld("Jc Jd Js")
    if not allowed:
        with s.illegal("go_out.needs_canastra"):
            s.meld("Kc Kd Ks")  # would leave Qc, whose discard would go out
        return
    s.meld("Kc Kd Ks").discard("Qc").go_out()
    assert s.state.phase == "out" and s.state.went_out == 0


def test_in_a_partnership_the_first_partner_to_empty_takes_the_sides_morto() -> None:
    s = Scenario("biriba", 4, hands={2: SETS_11}, stock="4c 5c Ks", mortos={0: MORTO_11})
    s.pass_turn().pass_turn()
    s.draw("Ks").meld("7h 7s 7d").meld("8c 8d 8s").meld("9h 9s 9d").meld("Kc Kd Ks")
    s.morto(direct=True)
    assert s.turn == 2 and sorted(s.hand(2)) == sorted(_cs(MORTO_11))
    assert s.state.morto_taken == (True, False) and s.state.mortos[0] == ()


def test_in_a_partnership_the_second_partner_to_empty_goes_out() -> None:
    s = Scenario(
        "biriba",
        4,
        hands={0: SETS_11, 2: "Jh Js Jd Qc Qd Qs Th Ts Td Ac Ad"},
        stock="Ks 6c Ah",
        mortos={0: MORTO_11},
    )
    s.draw("Ks").meld("7h 7s 7d").meld("8c 8d 8s").meld("9h 9s 9d").meld("Kc Kd Ks")
    s.morto(direct=True).meld("3h 3s 3d 3c").discard("5d")
    s.pass_turn()
    s.draw("Ah").meld("Jh Js Jd").meld("Qc Qd Qs").meld("Th Ts Td").meld("Ac Ad Ah")
    with s.illegal("morto.not_available"):
        s.morto(direct=True)
    s.go_out().end_hand()
    side0, side1 = s.state.results[0].scores
    assert s.state.results[0].went_out == 2
    assert side0.morto_penalty == 0 and side0.going_out == 50
    assert side1.morto_penalty == 100


def test_an_indirect_morto_is_not_taken_when_the_opponent_goes_out_next() -> None:
    s = Scenario(
        "biriba",
        hands={0: SETS_10_PLUS_1, 1: "3h 3s 3d 4h 4s 4d 5h 5s 5d 6c 6d"},
        stock="Qc 6s 7c 3c",
        mortos={1: "Jh Js Jd Qh Qs Qd Th Ts Td Ac Ad"},
    )
    s.pass_turn()
    s.draw("6s").meld("3h 3s 3d").meld("4h 4s 4d").meld("5h 5s 5d").meld("6c 6d 6s")
    s.morto(direct=True).meld("Jh Js Jd").meld("Qh Qs Qd").meld("Th Ts Td").discard("Ad")
    assert s.hand(1) == _cs("Ac")
    s.draw("7c").meld("7h 7s 7d 7c").meld("8c 8d 8s").meld("9h 9s 9d 9c").discard("Kd")
    s.morto(direct=False)
    assert s.state.morto_pending == (0, None) and s.turn == 1
    s.draw("3c").layoff(0, "3c").discard("Ac")
    s.go_out().end_hand()
    side0, side1 = s.state.results[0].scores
    assert side0.morto_penalty == 100
    assert side0.hand_penalty == 0  # the untouched morto is not counted as hand cards
    assert side1.going_out == 50 and side1.morto_penalty == 0


@pytest.mark.parametrize("voided_by", ["any_end", "opponent_out"])
def test_a_stock_out_after_only_the_partner_played_voids_the_morto_only_under_the_old_reading(
    voided_by: str,
) -> None:
    hand = "3h 3s 3d 4h 4s 4d 5h 5s 5d 5c 5h"
    s = Scenario("mega", 4, hands={0: hand}, mortos={0: MORTO_SETS}, morto_voided_by=voided_by)
    t = s.rep._t
    while not (len(t.stock) == 5 and s.turn == 0):
        s.pass_turn()
    s.draw().meld("3h 3s 3d").meld("4h 4s 4d").meld("5h 5s 5d 5c 5h").discard(_drawn(s))
    s.morto(direct=False)
    s.pass_turn()  # seat 1
    s.pass_turn()  # seat 2, the partner: not the taker's turn
    assert s.state.morto_pending == (0, None) and s.turn == 3
    with s.illegal("stock.floor_reached"):
        s.draw()
    s.end_hand("stock_out")
    side0 = s.state.results[0].scores[0]
    if voided_by == "any_end":
        assert side0.morto_penalty == 100
        assert side0.hand_penalty == _points(s, (2,))  # seat 0's untouched morto not counted
    else:  # the stock running out does not undo it: the morto is seat 0's hand
        assert side0.morto_penalty == 0
        assert side0.hand_penalty == _points(s, (0, 2))


@pytest.mark.parametrize("voided_by", ["any_end", "opponent_out"])
def test_a_partner_going_out_before_the_indirect_taker_plays_again_voids_only_the_old_way(
    voided_by: str,
) -> None:
    s = Scenario(
        "biriba",
        4,
        hands={0: SETS_10_PLUS_1, 2: "3h 3s 3d 4h 4s 4d 5h 5s 5d 6c 6d"},
        stock="7c Qc 6s",
        morto_voided_by=voided_by,
    )
    s.draw("7c").meld("7h 7s 7d 7c").meld("8c 8d 8s").meld("9h 9s 9d 9c").discard("Kd")
    s.morto(direct=False)
    s.pass_turn()
    s.draw("6s").meld("3h 3s 3d").meld("4h 4s 4d").meld("5h 5s 5d").meld("6c 6d 6s")
    with s.illegal("morto.not_available"):
        s.morto(direct=True)
    s.go_out().end_hand()
    side0 = s.state.results[0].scores[0]
    assert side0.going_out == 50
    if voided_by == "any_end":
        assert side0.morto_penalty == 100  # seat 0 never played its morto
        assert side0.hand_penalty == 0
    else:  # RULES.md §7: a partner's going out does not undo it; its cards are in hand
        assert side0.morto_penalty == 0
        assert side0.hand_penalty == _points(s, (0,)) > 0


def test_the_redraw_belongs_to_the_first_player_of_every_hand() -> None:
    s = Scenario("classic", hands={0: SETS_11}, stock="Ks")
    s.draw().meld("7h 7s 7d").meld("8c 8d 8s").meld("9h 9s 9d").meld("Kc Kd Ks")
    s.go_out().end_hand()
    ev = build_deal(s.rules, 2, {}, "Qh 4d", {}, None, hand_no=1)
    s.push(msgspec.structs.replace(ev, seq=s._seq()))
    assert s.turn == 1
    s.draw("Qh").reject("Qh").draw("4d")
    assert s.state.pile == _cs("Qh") and _c("4d") in s.hand(1)


@pytest.mark.parametrize(
    ("hand", "top"),
    [
        ("Ah 3h", "2h"),  # A-2-3: the 2 in its own place
        ("3h 4h", "2h"),  # 2-3-4
        ("5h 6h", "2c"),  # 5-6 and a wild 2
    ],
)
def test_must_use_top_a_two_on_top_may_be_used_natural_or_wild(hand: str, top: str) -> None:
    full = hand + " 4c 5c 6d 7s 9s 3c 5d 7c Qs Ks 8d"
    s = Scenario("thirteen", hands={0: full}, upcard=top)
    s.take_pile()
    s.meld(f"{hand} {top}")
    meld = s.state.melds[0][0]
    assert meld.kind == "run" and _c(top) in meld.cards and s.state.phase == "play"


def test_must_use_top_a_two_on_top_with_nothing_to_join_is_refused() -> None:
    # A wild 2h joins two clubs near each other (Ac 3c: A-2-3 with the 2 standing in).
    s = Scenario("thirteen", hands={0: "Jh 4s 5c 6d 7s 9s 3c 5d 7c Qs 8h Kd Ac"}, upcard="2h")
    s.take_pile().meld("Ac 2h 3c")
    assert s.state.melds[0][0].kind == "run" and s.state.phase == "play"
    # No pair of one rank, no two cards of one suit within reach of each other, no A/3/4 of
    # hearts, and the 2c only next to the Kc (K-A-2 would wrap).
    dead = "As 4s 7s Ts 3d 6d 9d Qd 5h 8h Jh 2c Kc"
    s2 = Scenario("thirteen", hands={0: dead}, upcard="2h")
    with s2.illegal("pile.must_use_top"):
        s2.take_pile()


@pytest.mark.parametrize("name", ["burako", "mega"])
def test_emptying_the_hand_by_laying_off_is_emptying_by_melding(name: str) -> None:
    hand = "7h 7s 7d 8c 8d 8s 9h 9s 9d 9c 7c"
    s = Scenario(name, hands={0: hand}, stock="8h")
    s.draw("8h").meld("7h 7s 7d").meld("8c 8d 8s").meld("9h 9s 9d 9c").layoff(0, "7c")
    if name == "burako":
        with s.illegal("morto.indirect_only"):
            s.layoff(1, "8h")
        return
    s.layoff(1, "8h")
    assert s.state.phase == "emptied"
    with s.illegal("morto.wrong_kind"):
        s.morto(direct=False)
    s.morto(direct=True)
    assert s.turn == 0 and s.state.phase == "play"


def test_bossa_nova_a_partners_canastra_lets_the_other_partner_take_the_morto() -> None:
    s = Scenario(
        "bossa-nova",
        4,
        hands={0: "3h 4h 5h 6h 7h 8h 9h", 2: SETS_11},
        stock="Th 5c Ks",
    )
    s.draw("Th").meld("3h 4h 5h 6h 7h 8h 9h Th")
    assert s.state.melds[0][0].canastra is not None
    s.discard(format_card(s.hand(0)[0]))
    s.pass_turn()
    s.draw("Ks").meld("7h 7s 7d").meld("8c 8d 8s").meld("9h 9s 9d").meld("Kc Kd Ks")
    s.morto(direct=True)
    assert s.state.morto_taken == (True, False) and s.turn == 2


# ------------------------------------------------- a canastra laid by the emptying move itself
# RULES.md §7: "morto_needs_canastra: a side may take its morto only with a canastra" and
# "go_out_needs_canastra: ... need at least one canastra of any kind on the side's table".
# When the meld or lay-off that empties the hand (or leaves the one card to discard) is itself
# the side's first canastra, the side has that canastra on its table when the hand empties.

def test_bossa_nova_the_emptying_meld_may_be_the_canastra_that_takes_the_morto() -> None:
    s = Scenario("bossa-nova", hands={0: "Kc Kd Ks 3h 4h 5h 6h 7h 8h 9h Th"}, stock="Jh")
    s.draw("Jh").meld("Kc Kd Ks").meld("3h 4h 5h 6h 7h 8h 9h Th Jh")
    assert s.state.phase == "emptied" and s.state.melds[0][1].canastra == "clean"
    s.morto(direct=True)
    assert s.state.morto_taken == (True, False) and s.turn == 0


def test_bossa_nova_the_meld_leaving_the_last_card_may_be_the_canastra() -> None:
    s = Scenario("bossa-nova", hands={0: "Kc Kd Ks 3h 4h 5h 6h 7h 8h 9h Qc"}, stock="Th")
    s.draw("Th").meld("Kc Kd Ks").meld("3h 4h 5h 6h 7h 8h 9h Th").discard("Qc")
    s.morto(direct=False)
    assert s.state.morto_taken == (True, False) and s.turn == 1


def test_bossa_nova_a_lay_off_completing_the_canastra_may_empty_the_hand() -> None:
    s = Scenario("bossa-nova", hands={0: "Kc Kd Ks 3h 4h 5h 6h 7h 8h 9h Th"}, stock="Jh")
    s.draw("Jh").meld("Kc Kd Ks").meld("3h 4h 5h 6h 7h 8h")
    s.layoff(1, "9h Th Jh")
    assert s.state.phase == "emptied"
    s.morto(direct=True)
    assert s.state.morto_taken == (True, False)


_BURRACO_HAND = "7h 7s 7d 8c 8d 8s 9h 9s 9d Kc Kd"
_BURRACO_MORTO = "3h 4h 5h 6h 7h 8h 9h Jc Jd Js Qc"


def _burraco_after_direct_morto() -> Scenario:
    s = Scenario("burraco", hands={0: _BURRACO_HAND}, stock="Ks", mortos={0: _BURRACO_MORTO})
    s.draw("Ks").meld("7h 7s 7d").meld("8c 8d 8s").meld("9h 9s 9d").meld("Kc Kd Ks")
    s.morto(direct=True).meld("Jc Jd Js")
    assert not any(m.canastra for m in s.state.melds[0])
    return s


def test_burraco_the_meld_before_going_out_may_be_the_first_canastra() -> None:
    s = _burraco_after_direct_morto()
    s.meld("3h 4h 5h 6h 7h 8h 9h")
    assert s.state.melds[0][5].canastra == "clean"
    s.discard("Qc").go_out().end_hand()
    assert s.state.results[0].went_out == 0


def test_burraco_a_lay_off_before_going_out_may_complete_the_first_canastra() -> None:
    s = _burraco_after_direct_morto()
    s.meld("3h 4h 5h 6h").layoff(5, "7h 8h 9h")
    assert s.state.melds[0][5].canastra == "clean"
    s.discard("Qc").go_out()
    assert s.state.phase == "out"


def test_must_use_top_the_pile_may_be_taken_to_lay_off_the_first_canastra_and_go_out() -> None:
    """The last two cards: the pile's single top card, laid off, makes the side's first
    canastra, and the one card left is discarded to go out (no morto here)."""
    s = Scenario("thirteen", hands={0: "3h 4h 5h 6h 7h 8h Kc Kd Ks Qc Qd Qs Jc",
                                    1: "5d 5s 9h"},
                 stock="5c 4c", morto=False, initial_upcard=False)
    s.draw("5c").meld("3h 4h 5h 6h 7h 8h").meld("Kc Kd Ks").meld("Qc Qd Qs").discard("5c")
    s.take_pile().meld("5c 5d 5s").discard("9h")  # seat 1: the pile is now 9h alone
    assert s.hand(0) == parse_cards("Jc") and s.state.pile == parse_cards("9h")
    s.take_pile()  # allowed: 9h laid off makes the run a 7-card canastra
    s.layoff(0, "9h")
    assert s.state.melds[0][0].canastra == "clean"
    s.discard("Jc").go_out()
    assert s.state.went_out == 0


def test_must_use_top_the_pile_is_refused_when_the_last_card_could_not_be_discarded() -> None:
    """The same, but 9h only makes the run 6 long: no canastra, so the one card left could not
    be discarded to go out, and the top card cannot be used."""
    s = Scenario("thirteen", hands={0: "4h 5h 6h 7h 8h Kc Kd Ks Kh Qc Qd Qs Jc",
                                    1: "5d 5s 9h"},
                 stock="5c 4c", morto=False, initial_upcard=False)
    s.draw("5c").meld("4h 5h 6h 7h 8h").meld("Kc Kd Ks Kh").meld("Qc Qd Qs").discard("5c")
    s.take_pile().meld("5c 5d 5s").discard("9h")
    assert s.hand(0) == parse_cards("Jc") and s.state.pile == parse_cards("9h")
    with s.illegal("pile.must_use_top"):
        s.take_pile()
    s.draw("4c")  # drawing is still allowed
    assert len(s.hand(0)) == 2
