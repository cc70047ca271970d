"""First-turn redraw (`000`), the pile that must use its top (`001`), the stock floor."""

from __future__ import annotations

from buraco_log.cards import parse_cards
from tests.scenario import Scenario


def test_the_first_player_may_reject_the_first_card_and_draw_the_next() -> None:
    s = Scenario("classic", stock="Kh 5s 9c")
    s.draw("Kh").reject("Kh").draw("5s")
    assert s.state.pile == parse_cards("Kh")
    assert parse_cards("5s")[0] in s.hand(0) and parse_cards("Kh")[0] not in s.hand(0)


def test_the_rejected_card_cannot_be_taken_back_that_turn() -> None:
    s = Scenario("classic", stock="Kh 5s").draw().reject()
    with s.illegal("draw.redraw_from_stock"):
        s.take_pile()


def test_only_the_first_turn_may_reject_a_card() -> None:
    s = Scenario("classic", stock="Kh 5s 9c 8d")
    s.pass_turn()
    s.draw()
    with s.illegal("draw.redraw_only_first"):
        s.reject()


def test_a_card_may_be_rejected_once_only() -> None:
    s = Scenario("classic", stock="Kh 5s 9c").draw().reject().draw()
    with s.illegal("draw.redraw_only_first"):
        s.reject()


def test_the_redraw_names_the_card_drawn() -> None:
    s = Scenario("classic", stock="Kh 5s").draw()
    with s.illegal("draw.wrong_card"):
        s.reject("5s")


def test_presets_without_the_redraw_refuse_it() -> None:
    s = Scenario("thirteen", stock="Kh 5s").draw()
    with s.illegal("draw.redraw_not_allowed"):
        s.reject()


def test_must_use_top_the_pile_is_taken_only_when_its_top_can_be_used() -> None:
    # A full hand, so no filler card can help: nothing goes with the king of diamonds.
    s = Scenario("thirteen", hands={0: "8h 9h 4c 5c 6d 7s 9s Jd 3h 3c 5d 7c Qs"}, upcard="Kd")
    with s.illegal("pile.must_use_top"):
        s.take_pile()
    s2 = Scenario("thirteen", hands={0: "8h 9h 4c"}, upcard="Th")
    s2.take_pile().meld("8h 9h Th").discard("4c")
    assert s2.state.melds[0][0].cards == parse_cards("8h 9h Th")


def test_must_use_top_other_melds_may_come_first_in_the_same_turn() -> None:
    # RULES.md §4: the top card is used "in the same turn", not necessarily first
    s = Scenario("thirteen", hands={0: "Qh Jh 4c 5c 6c 7s 8d 9s 3d 5d Ts Jc Ad"}, upcard="Kh")
    s.take_pile()
    with s.illegal("pile.must_use_top"):
        s.discard("7s")  # not before the top is laid
    s.meld("4c 5c 6c").meld("Jh Qh Kh").discard("7s")
    assert [m.cards for m in s.state.melds[0]] == [parse_cards("4c 5c 6c"),
                                                    parse_cards("Jh Qh Kh")]


def test_must_use_top_a_meld_that_leaves_no_way_to_use_the_top_is_refused() -> None:
    # Qh Qc Qd would take the queen the king needs: nothing could then take Kh
    s = Scenario("thirteen", hands={0: "Qh Jh Qc Qd 4c 7s 8d 9s 3c 5d Ts 6c Ad"}, upcard="Kh")
    s.take_pile()
    with s.illegal("pile.must_use_top"):
        s.meld("Qh Qc Qd")
    with s.illegal("pile.must_use_top"):
        s.discard("4c")
    s.meld("Jh Qh Kh").discard("4c")


def test_must_use_top_a_lay_off_that_leaves_no_way_to_use_the_top_is_refused() -> None:
    # Side 0 has 3h 4h 5h and a set of sixes; 7h on top goes only onto the run, after 6h
    s = Scenario("thirteen", hands={0: "3h 4h 5h 6s 6c 6d 6h Kc Qd Js 9c Ts 4c",
                                    1: "7h 3c 4s 6c 8d 9s Tc Jd Qs Kh 3d 4d Ad"},
                 stock="Ac Qc", upcard="9d")
    s.draw("Ac").meld("3h 4h 5h").meld("6s 6c 6d").discard("Ac")
    s.draw("Qc").discard("7h")
    s.take_pile()
    with s.illegal("pile.must_use_top"):
        s.layoff(1, "6h")  # on the sixes: the 7h could then go nowhere
    s.layoff(0, "6h").layoff(0, "7h").discard("Kc")


def test_must_use_top_a_wild_top_card_must_go_into_a_meld() -> None:
    s = Scenario("thirteen", hands={0: "8h 9h 4c"}, upcard="JK")
    s.take_pile().meld("8h 9h JK")
    assert s.state.melds[0][0].canastra is None


def test_a_free_pile_may_be_taken_without_using_its_top() -> None:
    s = Scenario("burraco", upcard="Kd")
    s.take_pile().discard("Kd")


def test_drawing_at_the_stock_floor_is_illegal_and_the_hand_ends() -> None:
    s = Scenario("mega")
    t = s.rep._t
    # Run the stock down to the floor by passing turns.
    while len(t.stock) > 2:
        s.pass_turn()
    with s.illegal("stock.floor_reached"):
        s.draw()
    s.end_hand("stock_out")
    assert s.state.results[0].reason == "stock_out"


def test_the_hand_cannot_end_for_the_stock_while_cards_remain() -> None:
    s = Scenario("classic")
    with s.illegal("hand.not_over"):
        s.end_hand("stock_out")
    with s.illegal("hand.not_over"):
        s.end_hand("went_out")
