"""Probe 33, turns: partnerships and the pile, where the other scenario files play one seat.

- Vulnerability is the side's (RULES.md §10): once one partner has opened, the other lays any
  meld; once one partner took a short opening back, the other needs 90 for the rest of the hand.
  The opening's points count the cards laid off that turn on the melds it laid.
- The relancinho (RULES.md §7) is the player's: a partner's earlier melds do not spoil it, and
  a lay-off on the partner's meld in the same turn is part of laying the whole hand down.
- The pile (RULES.md §4): none to take before the first discard in the `classic` family; the
  card the first player rejected lies in the pile the next player may take, whole.
- Must-use-top (RULES.md §4, §5): the side's melds are the partner's too, never the opponents';
  the spec's own K♠ A♠ 2♠ (the 2 standing for the queen) uses a K♠ on top, K♠ A♠ 3♠ does not.

Every expected number is worked out by hand from RULES.md §9's tables.
"""

from __future__ import annotations

import pytest

from buraco_log.cards import parse_cards
from buraco_log.moves import pile_options
from buraco_log.wilds import wild_place
from tests.scenario import Scenario, refused
from tests.spec_points import spec_points

CLASSIC_FAMILY = ("classic", "biriba", "bossa-nova")
THIRTEEN = ("thirteen", "thirteen-quick")
# vulnerable_at=0 below: every side is vulnerable from the first hand.


def _cards(text: str) -> tuple[int, ...]:
    return tuple(sorted(parse_cards(text)))


# -- vulnerability is the side's, in partnerships (RULES.md §10) ---------------------------

@pytest.mark.parametrize("name", CLASSIC_FAMILY)
def test_once_a_partner_opened_with_75_the_other_lays_a_meld_of_15(name: str) -> None:
    # Seat 0 opens with kings, queens and jacks (90); seat 2 then lays three 3s (15) freely.
    s = Scenario(name, 4, hands={0: "Kh Ks Kd Qh Qs Qd Jh Js Jd", 2: "3c 3d 3h"},
                 stock="9c 9d 9h", vulnerable_at=0)
    s.draw().meld("Kh Ks Kd").meld("Qh Qs Qd").meld("Jh Js Jd").discard("9c")
    s.pass_turn()
    s.draw().meld("3c 3d 3h").discard("9h")
    assert [len(m.cards) for m in s.state.melds[0]] == [3, 3, 3, 3]
    assert s.state.turn == 3
    # The side that has not opened: its three 3s are 15 of the 75 it needs.
    s = Scenario(name, 4, hands={1: "3c 3d 3h"}, stock="9c 9d 9h", vulnerable_at=0)
    s.pass_turn()
    s.draw().meld("3c 3d 3h")
    refused(s, "vulnerable.opening_too_low", ("75", "15"), "discard", "9d")


@pytest.mark.parametrize("name", CLASSIC_FAMILY)
def test_after_one_partner_took_a_short_opening_back_the_other_needs_90(name: str) -> None:
    s = Scenario(name, 4, hands={0: "3c 3d 3h", 2: "Ah As Ad Kh Ks Kd 5h 5s 5d"},
                 stock="9c 9d 9h", vulnerable_at=0)
    s.draw().meld("3c 3d 3h")
    refused(s, "vulnerable.opening_too_low", ("75", "15"), "discard", "9c")
    s.retract("3c 3d 3h").discard("9c")
    assert s.state.opening_min[0] == 90 and s.state.opening_min[1] == 75
    s.pass_turn()
    # Aces 45 and kings 30: 75 was enough before the partner's retraction, not now.
    s.draw().meld("Ah As Ad").meld("Kh Ks Kd")
    refused(s, "vulnerable.opening_too_low", ("90", "75"), "discard", "9h")
    s.meld("5h 5s 5d")  # 75 + 15 = 90
    s.discard("9h")
    assert s.state.turn == 3 and len(s.state.melds[0]) == 3


@pytest.mark.parametrize("name", CLASSIC_FAMILY)
def test_the_opening_counts_the_cards_laid_off_on_its_melds_that_turn(name: str) -> None:
    # 6-7-8 (5 + 5 + 10) and the lay-off 9..K (50): 70. The ace on top (15) makes 85.
    s = Scenario(name, hands={0: "6h 7h 8h 9h Th Jh Qh Kh Ah"}, stock="9c", vulnerable_at=0)
    s.draw().meld("6h 7h 8h").layoff(0, "9h Th Jh Qh Kh")
    refused(s, "vulnerable.opening_too_low", ("75", "70"), "discard", "9c")
    s.layoff(0, "Ah")
    s.discard("9c")
    assert s.state.melds[0][0].canastra == "clean"  # 6..A, nine cards
    # Taken back instead: the retraction names every card laid, lay-offs included.
    s = Scenario(name, hands={0: "6h 7h 8h 9h Th Jh Qh Kh Ah"}, stock="9c", vulnerable_at=0)
    s.draw().meld("6h 7h 8h").layoff(0, "9h Th Jh Qh Kh")
    refused(s, "vulnerable.retract_cards", (), "retract", "6h 7h 8h")
    s.retract("6h 7h 8h 9h Th Jh Qh Kh").discard("9c")
    assert s.state.melds[0] == () and s.state.opening_min[0] == 90


# -- the relancinho is the player's (RULES.md §7, §9) --------------------------------------

def test_classic_a_relancinho_after_the_partners_meld_with_a_lay_off_on_it() -> None:
    s = Scenario("classic", 4, hands={0: "Kh Ks Kd", 2: "Kc 5h 5s 5d 6c 7c 8c 9c Tc Jc Qc"},
                 stock="9d 9h 9s")
    s.draw("9d").meld("Kh Ks Kd").discard("9d")
    s.pass_turn()
    s.draw("9s").layoff(0, "Kc").meld("5h 5s 5d").meld("6c 7c 8c 9c Tc Jc Qc").discard("9s")
    s.go_out()
    # Side 0: kings 40, fives 15, 6c 7c 10 and 8c..Qc 50 = 115; the clean run 200; going out
    # 50; the relancinho 100 (seat 2 laid nothing in an earlier turn); seat 0's eight cards.
    side0 = 115 + 200 + 50 + 100 - spec_points("classic", s.hand(0))
    side1 = -spec_points("classic", s.hand(1)) - spec_points("classic", s.hand(3))
    refused(s, "score.mismatch", (), "end_hand", "went_out", (side0 - 100, side1))
    s.end_hand("went_out", (side0, side1))
    sc0 = s.state.results[-1].scores[0]
    assert (sc0.table_points, sc0.canastra_bonus, sc0.going_out, sc0.relancinho) == (
        115, 200, 50, 100)


# -- the pile (RULES.md §3, §4) -------------------------------------------------------------

@pytest.mark.parametrize("name", CLASSIC_FAMILY)
def test_no_pile_before_the_first_discard_and_the_rejected_card_is_the_next_players(
    name: str,
) -> None:
    s = Scenario(name, hands={1: "Kh Ks"}, stock="Kd 9c")
    assert s.state.pile == ()  # no upcard in the classic family
    refused(s, "pile.empty", ("empty",), "take_pile", 0)
    s.draw("Kd").reject().draw("9c").discard("9c")
    assert s.state.pile == _pile("Kd 9c")
    refused(s, "pile.whole_pile", (), "take_pile", 1)  # the top card alone
    s.take_pile().meld("Kh Ks Kd").discard("9c")
    assert len(s.hand(1)) == 11 + 2 - 3 - 1
    assert s.state.pile == _pile("9c")


def _pile(text: str) -> tuple[int, ...]:
    return tuple(parse_cards(text))


# A thirteen-card hand with no wild, no heart but the J♥, one 6 (6♣), one king (K♣), no Q♠ or
# J♠: a 6♥ on top fits nothing in it, and a K♠ only its A♠ with a 2♠ (the K♠ hands below swap
# the K♣ for a J♦, since K♣ K♠ 2♠ would be a set, and the 3♠ for the 2♠ on the accepting side).
DEAD = "As 3s 8s 9c Jh 4c Qc 3d 7d Td 5d Kc 6c"


@pytest.mark.parametrize("name", THIRTEEN)
def test_must_use_top_a_king_on_top_is_used_as_q_k_a_with_the_hands_ace_and_2(
    name: str,
) -> None:
    # RULES.md §5: K♠ A♠ 2♠ is a run with the 2 as the wild queen; K♠ A♠ 3♠ wraps.
    hand = DEAD.replace("Kc 6c", "Jd 6c").replace("3s", "2s")
    s = Scenario(name, hands={0: hand}, stock="Kd 4c", upcard="Ks")
    uses = {(u.meld, tuple(sorted(u.cards))) for u in pile_options(s.state).uses}
    assert uses == {(None, _cards("Ks As 2s"))}
    s.take_pile().meld("Ks As 2s")
    place = wild_place(s.state.melds[0][0].cards, s.rules)
    assert place is not None and place.card == parse_cards("2s")[0] and place.ranks == (12,)
    s = Scenario(name, hands={0: DEAD.replace("Kc 6c", "Jd 6c")}, stock="Kd 4c", upcard="Ks")
    assert not pile_options(s.state).may_take
    refused(s, "pile.must_use_top", ("Ks",), "take_pile")


@pytest.mark.parametrize("name", THIRTEEN)
def test_must_use_top_the_partners_meld_takes_the_top_and_an_opponents_does_not(
    name: str,
) -> None:
    # Seat 0 lays 3-4-5 of hearts; seat 1 throws the 6♥; seat 2, its partner, takes the pile
    # to lay the 6♥ off on that run.
    s = Scenario(name, 4, hands={0: "3h 4h 5h", 1: "6h", 2: DEAD}, stock="Qd 8d 9s")
    s.draw("Qd").meld("3h 4h 5h").discard("Qd")
    s.draw("8d").discard("6h")
    assert [(u.meld, u.cards) for u in pile_options(s.state).uses] == [(0, _cards("6h"))]
    s.take_pile().layoff(0, "6h")
    assert len(s.state.melds[0][0].cards) == 4
    # The same run laid by seat 1, an opponent: seat 2 may not take the pile for it.
    s = Scenario(name, 4, hands={1: "3h 4h 5h 6h", 2: DEAD}, stock="Qd 8d 9s")
    s.pass_turn()
    s.draw("8d").meld("3h 4h 5h").discard("6h")
    assert not pile_options(s.state).may_take
    refused(s, "pile.must_use_top", ("6h",), "take_pile")
