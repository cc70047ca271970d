"""A scoring dispute at the end of a hand, every preset: RULES.md §9-10 and the seeds' score
sentences read one by one. Every expected score is added up by hand from the sentence (card
values from `spec_points`, RULES.md §9's card table written out by hand, never the engine's
presets); the engine's HandEnded / MatchEnded must agree, and a log claiming a score one rule
off must be refused with the score rule's id (`score.mismatch`, `match.wrong_winner`).
"""

from __future__ import annotations

import pytest

from tests.scenario import Scenario, carried_in, refused
from tests.spec_points import spec_points
from tests.unit.closing_hands import MORTO0, SIDE0, closing_hand

PRESETS = ("classic", "biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
           "burako")
JOKERS = ("thirteen", "thirteen-quick", "burraco", "mega", "burako")
TARGETS = {"classic": 1500, "biriba": 1500, "bossa-nova": 1500, "thirteen": 2005,
           "thirteen-quick": 1005, "burraco": 2005, "mega": 3000, "burako": 3000}
# RULES.md §9, by hand: what a joker and a 2 are worth, and the going-out bonus, per preset
JOKER = {"classic": 10, "biriba": 10, "bossa-nova": 10, "thirteen": 50, "thirteen-quick": 50,
         "burraco": 30, "mega": 50, "burako": 50}
TWO = {name: 20 if name == "burraco" else 10 for name in PRESETS}
GOING_OUT = {name: 50 if name in ("classic", "biriba", "bossa-nova") else 100
             for name in PRESETS}
MORTO_NOT_TAKEN = {name: 0 if name == "classic" else 100 for name in PRESETS}


def held_with_wilds(name: str) -> str:
    """Seat 1's hand, never opened: two 2s and (where the material has them) a joker, an ace."""
    wild = "JK" if name in JOKERS else "2h"
    extra = " 3s 5s" if name.startswith("thirteen") else ""
    return f"{wild} 2c 2d Ac 3c 5d 7s 9d Jc Kc 4s{extra}"


# ----------------------------------------------------- §9 cards left in hand, wilds among them

@pytest.mark.parametrize("name", PRESETS)
def test_wilds_left_in_a_hand_that_never_opened_cost_their_own_value(name: str) -> None:
    """§9 "− points of cards left in the side's hands − morto penalty": a side that never
    opened scores its hand negatively, each wild at its own value (`000` "curinga = 10 pontos;
    dois = 10 pontos"; `003` "Coringão (joker) = 50", `004` "Tatu: 50"; burraco's jolly 30 and
    pinella 20), an ace 15; its morto never taken costs 100 (none in classic)."""
    s, _ = closing_hand(name, held1=held_with_wilds(name))
    wild = JOKER[name] if name in JOKERS else TWO[name]
    # wild + two 2s + ace 15 + 3c 5d 7s 4s (4 x 5) + 9d Jc Kc (3 x 10); thirteen: 3s 5s more
    cards = wild + 2 * TWO[name] + 15 + 4 * 5 + 3 * 10 + (10 if name.startswith("thirteen")
                                                             else 0)
    assert cards == spec_points(name, held_with_wilds(name))
    want = (SIDE0[name], -cards - MORTO_NOT_TAKEN[name])
    # the wild left in hand valued as a low card, and the morto penalty forgotten: refused
    low = (want[0], want[1] + wild - 5)
    refused(s, "score.mismatch", ("side 1", f"recorded {low[1]}", f"recomputed {want[1]}"),
            "end_hand", "went_out", low)
    if MORTO_NOT_TAKEN[name]:
        refused(s, "score.mismatch", ("side 1", "+100"), "end_hand", "went_out",
                (want[0], want[1] + 100))
    # the going-out bonus given to the wrong side
    bonus = GOING_OUT[name]
    refused(s, "score.mismatch", ("side 0", "side 1"), "end_hand", "went_out",
            (want[0] - bonus, want[1] + bonus))
    s.end_hand("went_out", want)
    side0, side1 = s.state.results[0].scores
    assert (side0.going_out, side1.going_out) == (bonus, 0)
    assert side1.table_points == 0 and side1.hand_penalty == cards
    assert side1.morto_penalty == MORTO_NOT_TAKEN[name]
    assert s.state.totals == want


# ----------------------------------------------------- §10 both sides past the target in one hand

@pytest.mark.parametrize("name", PRESETS)
def test_both_sides_at_the_target_after_one_hand_the_highest_total_wins(name: str) -> None:
    """§10 "It ends after the hand in which a side reaches `target_score` ... Highest total
    wins": carried in level (a tie at the target is no end, so it may be carried), both end the
    hand at or past the target; the side with the higher total wins, and a log naming the other
    side, or totals a hand off, is refused."""
    target = TARGETS[name]
    start = target + 400
    s, (gain0, gain1) = closing_hand(name, (start, start))
    totals = (start + gain0, start + gain1)
    assert totals[1] >= target and totals[0] > totals[1]  # both past it, side 0 higher
    s.end_hand("went_out", (gain0, gain1))
    refused(s, "match.wrong_winner", ("side 1", "side 0 won"), "end_match", winner=1)
    refused(s, "score.mismatch", (f"recomputed {totals}",), "end_match",
            totals=(start, start), winner=0)
    s.end_match(totals=totals, winner=0)
    assert s.state.winner == 0


# ----------------------------------------------------- §7 relancinho: once a player, once a hand

RELANCINHO_HAND = "5c 5d 5s 5h 6c 6d 6s 8c 8d 8s 8h"
RELANCINHO_MORTO = "9c 9d 9s 9h 9c 9d 9s Tc Td Th 3c"


def test_a_relancinho_taking_the_morto_is_noted_once_though_the_morto_goes_down_too() -> None:
    """§7 relancinho, `biriba`: the whole hand down in one turn takes the morto directly
    (+100, "logo anotados"); laying the whole morto and going out in that same turn is no
    second relancinho (the player has laid melds earlier in this hand), only the going out
    (50). Side 0: fives 20, sixes 20, eights 40, nines 70, tens 30 = 180; seven nines a clean
    canastra 200; 100 + 50. Side 1 never opened: its eleven cards and its morto (100)."""
    s = Scenario("biriba", hands={0: RELANCINHO_HAND, 1: "Ac Ad 3d 5h 7s 9h Jc Kc 4s 6h 8h"},
                 stock="6h", mortos={0: RELANCINHO_MORTO})
    s.draw().meld("5c 5d 5s 5h").meld("8c 8d 8s 8h").meld("6c 6d 6s 6h").morto(direct=True)
    s.meld("9c 9d 9s 9h 9c 9d 9s").meld("Tc Td Th").discard("3c").go_out()
    assert s.state.relancinho == (1, 0)
    side1 = spec_points("biriba", "Ac Ad 3d 5h 7s 9h Jc Kc 4s 6h 8h")
    assert side1 == 15 + 15 + 5 * 5 + 10 * 4
    want = (20 + 20 + 40 + 70 + 30 + 200 + 100 + 50, -side1 - 100)
    refused(s, "score.mismatch", ("side 0", "+100"), "end_hand", "went_out",
            (want[0] + 100, want[1]))
    s.end_hand("went_out", want)
    assert s.state.results[0].scores[0].relancinho == 100


# ----------------------------------------- §7 an indirect morto a partner's going out keeps

TAKER = "5c 5d 5s 5h 6c 6d 6s 8c 8d 8s 8h"
PARTNER = "3h 4h 5h 6h 7h 8h 9h Jd Jc Jh Js"
FOUR_HANDED = ("biriba", "thirteen", "burraco", "mega", "burako")


@pytest.mark.parametrize("name", FOUR_HANDED)
def test_a_partner_going_out_leaves_the_indirect_morto_standing(name: str) -> None:
    """§7 "If an opponent ends the hand by going out before that player's next turn, the morto
    counts as not taken ... A partner's going out ... does not undo it. A morto that stands is
    the taker's hand": at four, seat 0 empties the hand by a discard and takes the morto; seat 2
    goes out before seat 0 plays again. Side 0 pays no morto penalty and the morto's eleven
    cards count as cards left in hand; side 1 pays its hands and its untaken morto."""
    thirteen = name == "thirteen"
    taker = TAKER.replace("8h", "8h 5c 6h") if thirteen else TAKER
    partner = PARTNER + " Qc Qd" if thirteen else PARTNER
    upcard = "Kd" if name in ("thirteen", "burraco", "mega") else None
    s = Scenario(name, 4, hands={0: taker, 2: partner}, stock="9s Ts Qh", upcard=upcard)
    s.draw("9s").meld("5c 5d 5s 5h" + (" 5c" if thirteen else "")).meld(
        "6c 6d 6s" + (" 6h" if thirteen else "")).meld("8c 8d 8s 8h").discard("9s")
    s.morto(direct=False)
    morto = spec_points(name, s.hand(0))  # the taker's hand is now the morto, unplayed
    s.draw("Ts").discard("Ts")  # seat 1
    s.draw("Qh").meld("3h 4h 5h 6h 7h 8h 9h").meld("Jd Jc Jh Js")
    if thirteen:
        s.meld("Qc Qd Qh")  # the hand emptied by melding: going out needs no discard here
    else:
        s.discard("Qh")
    s.go_out()
    # by hand: fives, sixes, eights (thirteen: five 5s, four 6s), the run 3..9 (five cards of
    # 5, two of 10) 45, four jacks
    # 40 (thirteen: three queens 30 more); the run a clean canastra 200; going out
    table = (25 + 20 + 40 + 45 + 40 + 30) if thirteen else (20 + 15 + 40 + 45 + 40)
    relancinho = 200 if name == "biriba" else 0  # both partners laid all in one turn
    want0 = table + 200 + GOING_OUT[name] + relancinho - morto
    want1 = -spec_points(name, s.hand(1)) - spec_points(name, s.hand(3)) - 100
    # the morto's cards left out (as if voided), or the penalty charged on top: refused
    assert morto > 0
    refused(s, "score.mismatch", ("side 0",), "end_hand", "went_out", (want0 + morto, want1))
    refused(s, "score.mismatch", ("side 0", "-100"), "end_hand", "went_out",
            (want0 - 100, want1))
    s.end_hand("went_out", (want0, want1))
    side0 = s.state.results[0].scores[0]
    assert side0.morto_penalty == 0 and side0.hand_penalty == morto


# ----------------------------------------------------- §5-6 a wild moved, a canastra reclassed

def test_a_dirty_run_turns_semi_clean_when_its_gap_fills_and_the_wild_moves_to_an_end() -> None:
    """§5 "When a natural card fills the gap, the wild moves to an end (`002`: 3-4-JK-6-7 + 5
    becomes JK-3-4-5-6-7)"; §6 "a canastra can change class as cards are added": 3-4-JK-6..9
    is dirty (100), with the 5 it is JK-3..9, seven naturals in a row, semi-clean (150); a 2
    of the suit laid below stays a natural 2 (20) and the class semi-clean. Scored at a stock
    out: the run 3..9 45 + jolly 30 + pinella 20, semi-clean 150, 10♣ 4♦ left in hand 15,
    morto not taken 100."""
    s = Scenario("burraco", hands={0: "3h 4h JK 6h 7h 8h 9h Kd Qc Tc 4d"},
                 stock="Js 5d 5h 6d 2h 7d", upcard="Kc")
    s.draw("Js").meld("3h 4h JK 6h 7h 8h 9h").discard("Js")
    assert s.state.melds[0][0].canastra == "dirty"
    s.draw("5d").discard("5d")
    s.draw("5h").layoff(0, "5h").discard("Kd")
    assert s.state.melds[0][0].canastra == "semi_clean"
    s.draw("6d").discard("6d")
    s.draw("2h").layoff(0, "2h").discard("Qc")
    assert s.state.melds[0][0].canastra == "semi_clean"
    while len(s.state.stock) > s.rules.stock_floor:
        s.pass_turn()
    assert spec_points("burraco", s.hand(0)) == 15
    want = (45 + 30 + 20 + 150 - 15 - 100, -spec_points("burraco", s.hand(1)) - 100)
    # the run scored as it was laid (dirty), or the 2 as a 3..7 card: refused
    refused(s, "score.mismatch", ("side 0", "recorded 80"), "end_hand", "stock_out",
            (want[0] - 50, want[1]))
    refused(s, "score.mismatch", ("side 0",), "end_hand", "stock_out", (want[0] - 15, want[1]))
    s.end_hand("stock_out", want)
    assert s.state.results[0].scores[0].canastras == {"semi_clean": 1}


# ----------------------------------------------------- §6, §9 burako's royal and ace-to-ace

SPADES_BUT_3_AND_K = "As 2s 4s 5s 6s 7s 8s 9s Ts Js Qs"
ROYAL_MORTO = {"royal": "Ks 3s Kd Kc Kh Qd Qc Qh 4d 5d 6d",
               "ace_to_ace": "Ks 3s As Kd Kc Kh Qd Qc Qh 9d 9c"}
# By hand (`004` "1: 15; 2: 10; 3 ao 7: 5; 8 ao 13: 10"): A..K of spades 15 + 10 + 25 + 60 =
# 110, a second ace 15 more; kings 30, queens 30, 4..6 of diamonds 15 or three 9s 30; the
# canastra's own bonus only (`004` "Canastra real: 500", "Canastra de 1 a 1: 1000"), going
# out 100 ("Batida final").
ROYAL_SIDE0 = {"royal": 110 + 30 + 30 + 15 + 500 + 100,
               "ace_to_ace": 125 + 30 + 30 + 30 + 1000 + 100}


@pytest.mark.parametrize("kind", ["royal", "ace_to_ace"])
def test_a_dirty_run_whose_two_comes_home_is_a_royal_canastra(kind: str) -> None:
    """§5 canonical 2s and §6's burako classes: A 2 4..Q is dirty (the 2♠ a wild for the 3);
    the morto's 3♠ and K♠ make the 2♠ natural, A..K clean: royal (500, not the clean 200 on
    top); with the second ace, ace-to-ace (1000)."""
    s = Scenario("burako", hands={0: SPADES_BUT_3_AND_K}, mortos={0: ROYAL_MORTO[kind]},
                 stock="Ks 5h 9h")
    s.draw("Ks").meld(SPADES_BUT_3_AND_K).discard("Ks").morto(direct=False)
    assert s.state.melds[0][0].canastra == "dirty"
    s.pass_turn()
    s.draw("9h").layoff(0, "Ks 3s" + (" As" if kind == "ace_to_ace" else ""))
    assert s.state.melds[0][0].canastra == kind
    s.meld("Kd Kc Kh").meld("Qd Qc Qh")
    if kind == "royal":
        s.meld("4d 5d 6d").discard("9h")
    else:
        s.meld("9d 9c 9h")  # the hand emptied by melding: going out (the morto is taken)
    s.go_out()
    want = (ROYAL_SIDE0[kind], -spec_points("burako", s.hand(1)) - 100)
    bonus = 500 if kind == "royal" else 1000
    # scored as a plain clean canastra, or with the clean 200 added to its own bonus: refused
    refused(s, "score.mismatch", ("side 0",), "end_hand", "went_out",
            (want[0] - bonus + 200, want[1]))
    refused(s, "score.mismatch", ("side 0",), "end_hand", "went_out", (want[0] + 200, want[1]))
    s.end_hand("went_out", want)
    assert s.state.results[0].scores[0].canastras == {kind: 1}


# ----------------------------------------------------- §2, §9 six players: sides of three

def test_six_players_score_by_side_each_partner_hand_against_it() -> None:
    """§2 "6 players (`classic` only): two sides of 3 on alternate seats"; §9 "per side ... −
    points of cards left in the side's hands": seat 0 lays the whole hand down and goes out
    (3..10 55, four jacks 40, clean 200, relancinho 100, going out 50); seats 2 and 4's hands
    count against side 0, seats 1, 3, 5's against side 1."""
    s = Scenario("classic", 6, hands={0: HAND0_CLASSIC}, stock="Th")
    s.draw("Th").meld("3h 4h 5h 6h 7h 8h 9h Th").meld("Js Jd Jc Jh").go_out()
    held = [spec_points("classic", s.hand(seat)) for seat in range(6)]
    assert held[0] == 0 and all(held[1:])
    want = (55 + 40 + 200 + 100 + 50 - held[2] - held[4], -held[1] - held[3] - held[5])
    # one partner's hand left out, or scored against the other side: refused
    refused(s, "score.mismatch", ("side 0",), "end_hand", "went_out",
            (want[0] + held[4], want[1]))
    refused(s, "score.mismatch", ("side 0", "side 1"), "end_hand", "went_out",
            (want[0] + held[2], want[1] - held[2]))
    s.end_hand("went_out", want)


HAND0_CLASSIC = "3h 4h 5h 6h 7h 8h 9h Js Jd Jc Jh"


# ----------------------------------------------------- §7 + §10 a relancinho after a short opening

def test_a_short_opening_taken_back_leaves_the_relancinho_in_the_same_turn() -> None:
    """§10 vulnerability and §7 relancinho in one turn (`classic`, side 0 at 800 of 1500): the
    jacks alone are 30 of the 75 asked and are taken back; the whole hand then goes down for
    95 (past the 90 now asked) and out. Nothing laid earlier stands on the table, so it is
    still the whole hand down in one turn: 3..10 55, jacks 40, clean 200, relancinho 100,
    going out 50 (docs/rules.md, "Relancinho: what counts as laying earlier")."""
    s = carried_in(Scenario("classic", hands={0: HAND0_CLASSIC}, stock="Th"), (800, 0))
    s.draw("Th").meld("Js Jd Jc").retract()
    s.meld("3h 4h 5h 6h 7h 8h 9h Th").meld("Js Jd Jc Jh").go_out()
    want = (55 + 40 + 200 + 100 + 50, -spec_points("classic", s.hand(1)))
    refused(s, "score.mismatch", ("side 0", "-100"), "end_hand", "went_out",
            (want[0] - 100, want[1]))
    s.end_hand("went_out", want)
    assert s.state.totals == (800 + want[0], want[1])


# ----------------------------------------------------- §9 a score sheet with a side too many or few

@pytest.mark.parametrize("name", ["biriba", "burako"])
def test_a_score_sheet_off_in_count_and_value_names_both(name: str) -> None:
    """A HandEnded scoring a side that does not exist, or leaving one out, while a value is
    off too: the refusal names the value and the count, so a referee who mends one is not
    refused again for the other. The sheet right in both is accepted."""
    s, want = closing_hand(name)
    refused(s, "score.mismatch", ("side 1: recorded", "3 scores for 2 sides"), "end_hand",
            "went_out", (want[0], want[1] + 1, 0))
    refused(s, "score.mismatch", ("side 0: recorded 1", "1 scores for 2 sides"), "end_hand",
            "went_out", (1,))
    refused(s, "score.mismatch", ("3 scores for 2 sides",), "end_hand", "went_out", (*want, 0))
    s.end_hand("went_out", want)


# ----------------------------------------------------- §2, §9, §10 three players, three mortos

@pytest.mark.parametrize("name", ["biriba", "bossa-nova"])
def test_three_players_each_untaken_morto_costs_its_side_and_no_target_no_end(name: str) -> None:
    """§2 "2 or 3 players: each player is a side", §3 "3 players: 3 mortos", `000` "No jogo
    em três, os mortos também serão três": seat 0 goes out (3..10 55, jacks 40, the morto's
    kings 30, queens 40, aces 45, clean 200, relancinho 100, going out 50); seats 1 and 2
    each pay their hand and their own untaken morto (100). §10: no side at the target, so a
    match end is refused (`match.not_over`)."""
    s = Scenario(name, 3, hands={0: HAND0_CLASSIC}, stock="Th", mortos={0: MORTO0})
    s.draw("Th").meld("3h 4h 5h 6h 7h 8h 9h Th").meld("Js Jd Jc Jh").morto(direct=True)
    s.meld("Ks Kd Kc").meld("Qs Qd Qc Qh").meld("As Ad Ac").discard("5c").go_out()
    want = (55 + 40 + 30 + 40 + 45 + 200 + 100 + 50,
            -spec_points(name, s.hand(1)) - 100, -spec_points(name, s.hand(2)) - 100)
    assert want[0] == SIDE0[name]
    refused(s, "score.mismatch", ("side 2", "+100"), "end_hand", "went_out",
            (want[0], want[1], want[2] + 100))
    s.end_hand("went_out", want)
    assert [sc.morto_penalty for sc in s.state.results[0].scores] == [0, 100, 100]
    refused(s, "match.not_over", ("target 1500",), "end_match", totals=want, winner=0)
