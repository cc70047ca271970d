"""Probe 35, edges of the morto and the tiles (RULES.md §1, §4, §6, §7, §9):

- `burako` written in tiles (1..13 in four colours, the tatu): a red run 1..11 grown to
  1..13..1 is ace-to-ace (1000); with the tatu standing for the 7 it is dirty, never royal or
  ace-to-ace (clean runs only), and the red 7 can no longer join it (the tatu would need a
  fifteenth place). The tatu in the opponent's hand is 50.
- `burako`: the indirect morto voided when the opponent goes out in the very next turn
  (`004`: "no caso de que haja Batida Indireta e o adversário bata na vez seguinte"): the side
  pays 100 and the morto's cards count for nothing.
- `burraco` with four players: two indirect mortos in one hand; the one whose taker played
  again stands as that player's hand, the other is voided by an opponent going out before its
  taker's next turn (a partner's turn between does not count).
- `thirteen` (must use top): a one-card pile taken by a two-card hand that melds it and so
  empties the hand is legal where the morto may be taken directly; with `morto_direct` off
  (house rules) the pickup would leave no card to throw and is refused.
"""

from __future__ import annotations

import pytest

from tests.scenario import Scenario, refused


@pytest.mark.parametrize("tatu_in_run", [False, True])
def test_burako_tiles_ace_to_ace_or_dirty_with_the_tatu(tatu_in_run: bool) -> None:
    run = "1r 2r 3r 4r 5r 6r " + ("tatu" if tatu_in_run else "7r") + " 8r 9r 10r"
    hand0 = run + " 5y"
    morto = "12r 13r 9k 9b 9y 4k 4b 4y 3y 3b " + ("7r" if tatu_in_run else "tatu")
    hand1 = ("2y" if tatu_in_run else "tatu") + " 2k 1y 3k 5k 7k 9r 11y 13y 4r 6y"
    s = Scenario("burako", hands={0: hand0, 1: hand1}, stock="11r 8y 1r", mortos={0: morto})
    s.draw("11r").meld(run + " 11r").discard("5y").morto(direct=False)
    s.pass_turn()
    s.draw("1r").layoff(0, "12r 13r 1r").meld("9k 9b 9y").meld("4k 4b 4y")
    if tatu_in_run:
        # 1..13..1 with the tatu as the 7: fourteen cards, dirty. The 7r would send the tatu
        # to an end of a run that has none left: fifteen cards (RULES.md §5: 14 at most).
        assert s.state.melds[0][0].canastra == "dirty"
        refused(s, "meld.run_too_long", ("14",), "layoff", 0, "7r")
        s.discard("7r")
        assert len(s.hand(0)) == 2 and s.turn == 1
        return
    s.meld("3y 3b tatu").go_out()
    assert s.state.melds[0][0].canastra == "ace_to_ace"
    # RULES.md §9, burako: 1 (ace) 15, 2 10, 3..7 5, 8..13 10, tatu 50.
    # 1..13..1: 15 + 10 + 25 + 60 + 15 = 125; nines 30; fours 15; threes 10 and the tatu 50.
    side0 = 125 + 30 + 15 + 60 + 1000 + 100
    # Side 1: tatu 50, 2k 10, 1y 15, 3k 5k 7k 15, 9r 11y 13y 30, 4r 6y 10: 130; morto 100.
    side1 = -130 - 100
    refused(s, "score.mismatch", ("side 0", "recomputed 1330"), "end_hand", "went_out",
            (side0 - 1000 + 500, side1))
    refused(s, "score.mismatch", ("side 1", "recomputed -230"), "end_hand", "went_out",
            (side0, side1 + 40))
    s.end_hand("went_out", (side0, side1))


def test_burako_the_opponent_out_in_the_next_turn_voids_the_indirect_morto() -> None:
    hand0 = "3s 4s 5s 6s 7s 8s 9s Qh Qs Qd Qc"
    hand1 = "3h 4h 5h 6h 7h 8h 9h Js Jd Jc Jh"
    morto0 = "Ac 5c 6c 7c 9c Tc Jc Kh 2c JK 3c"  # 15 + 15 + 40 + 10 + 50 + 5 = 135
    morto1 = "Ks Kd Kc Th Ts Td 8c 8d 8s As Ad"
    s = Scenario("burako", hands={0: hand0, 1: hand1}, stock="4d 6d 5d Ah",
                 mortos={0: morto0, 1: morto1})
    s.draw("4d").discard("4d")
    s.draw("6d").meld("3h 4h 5h 6h 7h 8h 9h").meld("Js Jd Jc Jh").discard("6d")
    s.morto(direct=False)  # seat 1's morto: it stands once seat 1's turn comes again
    s.draw("5d").meld("3s 4s 5s 6s 7s 8s 9s").meld("Qh Qs Qd Qc").discard("5d")
    s.morto(direct=False)  # seat 0's morto: voided if seat 1 goes out before seat 0 plays
    s.draw("Ah").meld("Ks Kd Kc").meld("Th Ts Td").meld("8c 8d 8s").meld("As Ad Ah")
    s.go_out()
    # Side 1: 3..9 45, jacks 40, kings 30, tens 30, eights 30, aces 45: 220; clean 200, out 100.
    side1 = 220 + 200 + 100
    # Side 0: 3..9 45, queens 40, clean 200; the morto counts as not taken: -100, its cards
    # nothing (read as standing it would be -135 instead).
    side0 = 45 + 40 + 200 - 100
    refused(s, "score.mismatch", ("side 0", "recomputed 185"), "end_hand", "went_out",
            (45 + 40 + 200 - 135, side1))
    s.end_hand("went_out", (side0, side1))
    sc = s.state.results[0].scores
    assert (sc[0].morto_penalty, sc[0].hand_penalty) == (100, 0)


@pytest.mark.parametrize("direct", [True, False])
def test_thirteen_a_one_card_pile_melded_by_a_two_card_hand(direct: bool) -> None:
    s = Scenario("thirteen", hands={0: "9c 9d", 1: "4c 5d"}, upcard="9h", hand_size=2,
                 morto_direct=direct)
    if not direct:
        refused(s, "pile.must_use_top", ("no card to throw",), "take_pile")
        return
    s.take_pile()
    s.meld("9c 9d 9h")  # the hand emptied by melding: the morto, directly, no draw
    refused(s, "turn.hand_emptied", ("morto",), "draw", "Kd")
    s.morto(direct=True)
    refused(s, "turn.already_drew", (), "draw", "Kd")
    assert len(s.hand(0)) == 11 and s.state.morto_taken[0]


def test_burraco_four_players_two_indirect_mortos_one_stands_one_voided() -> None:
    """Seat 1 takes side 1's morto indirectly and plays it from its next turn: it stands. Seat 0
    takes side 0's morto indirectly; before seat 0 plays again, seat 3 (an opponent) goes out:
    side 0's morto counts as not taken (RULES.md §7), its cards count for nothing."""
    hands = {0: "3s 4s 5s 6s 7s 8s 9s Qh Qs Qd Qc",
             1: "3h 4h 5h 6h 7h 8h 9h Js Jd Jc Jh",
             2: "Ac 3c 4c 6c 9d Tc Jc Kh 5h 7d 8h",  # 15 + 20 + 40 + 15 = 90
             3: "Ks Kd Kc Th Ts Td 8c 8d 8s As Ad"}
    morto0 = "Ac 5d 6d 9h Td Jh Kh 2c JK 3d 4h"  # 15 + 20 + 40 + 20 + 30 = 125
    morto1 = "Qc 2d 4d 5c 7s 9s Ts Jd Kd 6s 3s"  # 40 + 20 + 25 + 10 = 95
    s = Scenario("burraco", 4, hands=hands, stock="4d 6d 5c 5d 7c 9c 9d Ah",
                 mortos={0: morto0, 1: morto1})
    s.draw("4d").discard("4d")
    s.draw("6d").meld("3h 4h 5h 6h 7h 8h 9h").meld("Js Jd Jc Jh").discard("6d")
    s.morto(direct=False)
    s.pass_turn()
    s.pass_turn()
    s.draw("7c").meld("3s 4s 5s 6s 7s 8s 9s").meld("Qh Qs Qd Qc").discard("7c")
    s.morto(direct=False)
    s.pass_turn()  # seat 1 plays with its morto: it stands
    s.pass_turn()  # seat 2, seat 0's partner: seat 0's morto still hangs
    s.draw("Ah").meld("Ks Kd Kc").meld("Th Ts Td").meld("8c 8d 8s").meld("As Ad Ah")
    s.go_out()
    # Side 0: 3..9 45, queens 40, clean 200, seat 2's hand -90, the morto not taken -100.
    side0 = 85 + 200 - 90 - 100
    # Side 1: 3..9 45, jacks 40, kings 30, tens 30, eights 30, aces 45: 220; clean 200 (one:
    # the run), going out 100; seat 1's standing morto, its hand, -95.
    side1 = 220 + 200 + 100 - 95
    refused(s, "score.mismatch", ("side 0", "recomputed 95"), "end_hand", "went_out",
            (85 + 200 - 90 - 125, side1))
    refused(s, "score.mismatch", ("side 1", "recomputed 425"), "end_hand", "went_out",
            (side0, 220 + 200 + 100 - 100))
    s.end_hand("went_out", (side0, side1))
    sc = s.state.results[0].scores
    assert [(x.morto_penalty, x.hand_penalty) for x in sc] == [(100, 90), (0, 95)]
