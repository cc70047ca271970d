"""Probe 44: the end of a hand and of a match, every preset, against RULES.md §8-10 read line
by line. Every score below is added up by hand from RULES.md §9's tables (the arithmetic is in
the comments), then held against the reducer (the hand's end records it: a wrong one is
refused) and against the audit's recomputation (`audit.audit_events`, its lines added up).

- A hand ended by the stock (§8): the sides' melds count, the cards left in hand cost, and
  the cards of the pile, the stock and an untaken morto count for nobody; each untaken morto
  costs its 100 (§9) where the preset has one. A meld is one canastra however long it grows
  (a set of nine is one dirty canastra, and none in `mega`). A wild counts its own value
  where it stands (a joker as the 5 of a run is 50 in `mega`), and a 2 in its own place is
  still a 2 (20 in `burraco`, not a 3..7).
- The match (§10): both sides at the target with equal totals play another hand, dealt by the
  next seat; a later hand with one side at the target alone and highest ends it.
- An indirect morto (§7) voided by an opponent who is not the next seat, at four (every morto
  preset) and at three (biriba, bossa-nova): the partner's cards still count, the taker's
  (the morto) are nobody's, and a relancinho noted with it stands.
"""

from __future__ import annotations

import msgspec
import pytest

from buraco_log import audit
from buraco_log.cards import format_cards
from buraco_log.events import AnyEvent
from buraco_log.ruleids import describe
from tests.scenario import Scenario, build_deal, carried_in, refused
from tests.spec_points import spec_points

PRESETS = ("classic", "biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
           "burako")
JOKERS = ("thirteen", "thirteen-quick", "burraco", "mega", "burako")


def audited(events: list[AnyEvent], want: tuple[int, ...], hand: int = 0) -> None:
    """The audit recomputes ``want`` for ``hand``, its lines adding up to each side's total,
    and finds nothing wrong with the log."""
    v = audit.audit_events(events, audit.Integrity("sealed", "binary", len(events), 1, ""))
    assert v.scoring.ok and not [f for f in v.findings if f.section in ("scoring",
                                                                       "legality")], v.findings
    check = v.scoring.hands[hand]
    assert tuple(s.recomputed for s in check.sides) == want
    assert tuple(s.recorded for s in check.sides) == want
    for side in check.sides:
        assert sum(line.points for line in side.lines) == side.recomputed, side.lines


def end_by_stock(s: Scenario, want: tuple[int, ...]) -> None:
    """Pass turns to the stock floor, then end the hand recording ``want``: a score one off
    for any side is refused first (the reducer recomputes it), then ``want`` is accepted."""
    while len(s.state.stock) > s.rules.stock_floor:
        s.pass_turn()
    for side in range(len(want)):
        off = tuple(w + (1 if i == side else 0) for i, w in enumerate(want))
        refused(s, "score.mismatch", (f"side {side}",), "end_hand", "stock_out", off)
    s.end_hand("stock_out", want)


# ------------------------------------------------------------------ a hand ended by the stock

WILD0 = {name: "JK" if name in JOKERS else "2c" for name in PRESETS}  # in the set of kings
WILD1 = {name: "JK" if name in JOKERS else "2d" for name in PRESETS}  # in the run, as the 5

# By hand, RULES.md §9 (joker / 2 / ace / 8..K / 3..7: classic family 10 / 10 / 15 / 10 / 5,
# thirteen 50 / 10, burraco 30 / 20, mega and burako 50 / 10; a dirty canastra 100, the morto
# not taken 100 but in classic).
#   side 0: eight kings 80 and its wild; one canastra of nine, dirty, 100 (mega: sets are no
#           canastra, 0); 5d 9s left, 5 + 10 = 15 (13-card presets: Jh 7c more, 30);
#   side 1: 3h 4h W 6h 7h, the wild as the 5 counting its own value: the family's 2d
#           5 + 5 + 10 + 5 + 5 = 30, a joker 5 + 5 + 50 + 5 + 5 = 70 (burraco 50);
#           As 2s 3s 4s, the 2s natural: 15 + 10 + 5 + 5 = 35 (burraco 45); no canastra;
#           4c Qh left, 5 + 10 = 15 (13-card presets: Ad 8c more, 40);
#   the mortos, the pile and the stock: nobody's.
STOCK_OUT = {
    "classic": (80 + 10 + 100 - 15, 30 + 35 - 15),  # (175, 50)
    "biriba": (80 + 10 + 100 - 15 - 100, 30 + 35 - 15 - 100),  # (75, -50)
    "bossa-nova": (80 + 10 + 100 - 15 - 100, 30 + 35 - 15 - 100),  # (75, -50)
    "thirteen": (80 + 50 + 100 - 30 - 100, 70 + 35 - 40 - 100),  # (100, -35)
    "thirteen-quick": (80 + 50 + 100 - 30 - 100, 70 + 35 - 40 - 100),  # (100, -35)
    "burraco": (80 + 30 + 100 - 15 - 100, 50 + 45 - 15 - 100),  # (95, -20)
    "mega": (80 + 50 + 0 - 15 - 100, 70 + 35 - 15 - 100),  # (15, -10)
    "burako": (80 + 50 + 100 - 15 - 100, 70 + 35 - 15 - 100),  # (115, -10)
}


def stock_out_deal(name: str) -> Scenario:
    thirteen = name.startswith("thirteen")
    hand0 = f"Kc Kd Kh Ks Kc Kd Kh Ks {WILD0[name]} 5d 9s" + (" Jh 7c" if thirteen else "")
    hand1 = f"3h 4h {WILD1[name]} 6h 7h As 2s 3s 4s 4c Qh" + (" Ad 8c" if thirteen else "")
    s = Scenario(name, hands={0: hand0, 1: hand1})
    s.draw()
    s.meld(f"Kc Kd Kh Ks Kc Kd Kh Ks {WILD0[name]}")
    s.discard(_drawn(s))
    s.draw()
    s.meld(f"3h 4h {WILD1[name]} 6h 7h").meld("As 2s 3s 4s")
    s.discard(_drawn(s))
    return s


def _drawn(s: Scenario) -> str:
    """The card just drawn, as text."""
    card = s.rep._t.drawn
    assert card is not None
    return format_cards((card,), "ascii")


@pytest.mark.parametrize("name", PRESETS)
def test_a_stock_out_counts_melds_and_hands_and_nothing_else(name: str) -> None:
    s = stock_out_deal(name)
    kings = s.state.melds[0][0]
    assert len(kings.cards) == 9 and kings.canastra == (None if name == "mega" else "dirty")
    want = STOCK_OUT[name]
    end_by_stock(s, want)
    result = s.state.results[0]
    assert result.reason == "stock_out" and result.went_out is None
    assert [sc.going_out for sc in result.scores] == [0, 0]
    # what lay in the pile, the stock and the mortos at the end was counted nowhere
    side0, side1 = result.scores
    assert side0.canastras == ({} if name == "mega" else {"dirty": 1})
    assert side1.canastras == {}
    assert s.state.totals == want
    audited(s.events, want)


def test_the_stock_out_table_is_what_rules_md_adds_up() -> None:
    """The comments' sums, written once more as the tables give them, so a slip in one of
    the expected pairs shows here too."""
    for name, (side0, side1) in STOCK_OUT.items():
        thirteen = name.startswith("thirteen")
        dirty = 0 if name == "mega" else 100
        morto = 0 if name == "classic" else 100
        assert side0 == spec_points(name, f"Kc Kd Kh Ks Kc Kd Kh Ks {WILD0[name]}") + dirty \
            - spec_points(name, "5d 9s" + (" Jh 7c" if thirteen else "")) - morto, name
        assert side1 == spec_points(name, f"3h 4h {WILD1[name]} 6h 7h As 2s 3s 4s") \
            - spec_points(name, "4c Qh" + (" Ad 8c" if thirteen else "")) - morto, name


# ------------------------------------------------------------------ the match: a tie, then on

TARGET = {"classic": 1500, "biriba": 1500, "bossa-nova": 1500, "thirteen": 2005,
          "thirteen-quick": 1005, "burraco": 2005, "mega": 3000, "burako": 3000}
WILD = {name: ("JK", "JK") if name in JOKERS else ("2c", "2d") for name in PRESETS}

# Hand 0, the same for both sides: all eight kings (side 0) or queens (side 1) and a wild,
# 80 and the wild; one dirty canastra 100 (mega 0); 5 + 10 = 15 left in hand (13-card
# presets 30); the morto 100 (classic 0). Both sides score the same: a tie.
TIE = {
    "classic": 80 + 10 + 100 - 15,  # 175
    "biriba": 80 + 10 + 100 - 15 - 100,  # 75
    "bossa-nova": 80 + 10 + 100 - 15 - 100,  # 75
    "thirteen": 80 + 50 + 100 - 30 - 100,  # 100
    "thirteen-quick": 80 + 50 + 100 - 30 - 100,  # 100
    "burraco": 80 + 30 + 100 - 15 - 100,  # 95
    "mega": 80 + 50 + 0 - 15 - 100,  # 15
    "burako": 80 + 50 + 100 - 15 - 100,  # 115
}
# Hand 1, the sets swapped, side 0 left with 9s Jh (20; 13-card presets Tc 8d more, 40),
# side 1 with 4c 5h (10; Ad 8s more, 35): side 1 ends 10 (13-card presets 5) ahead.
DECIDER = {
    "classic": (80 + 10 + 100 - 20, 80 + 10 + 100 - 10),  # (170, 180)
    "biriba": (80 + 10 + 100 - 20 - 100, 80 + 10 + 100 - 10 - 100),  # (70, 80)
    "bossa-nova": (80 + 10 + 100 - 20 - 100, 80 + 10 + 100 - 10 - 100),  # (70, 80)
    "thirteen": (80 + 50 + 100 - 40 - 100, 80 + 50 + 100 - 35 - 100),  # (90, 95)
    "thirteen-quick": (80 + 50 + 100 - 40 - 100, 80 + 50 + 100 - 35 - 100),  # (90, 95)
    "burraco": (80 + 30 + 100 - 20 - 100, 80 + 30 + 100 - 10 - 100),  # (90, 100)
    "mega": (80 + 50 + 0 - 20 - 100, 80 + 50 + 0 - 10 - 100),  # (10, 20)
    "burako": (80 + 50 + 100 - 20 - 100, 80 + 50 + 100 - 10 - 100),  # (110, 120)
}
KINGS = "Kc Kd Kh Ks Kc Kd Kh Ks"
QUEENS = "Qc Qd Qh Qs Qc Qd Qh Qs"


def sets_turn(s: Scenario, cards: str) -> None:
    """Draw, lay ``cards`` (a closed set: all eight copies and a wild), throw the card drawn."""
    s.draw().meld(cards)
    s.discard(_drawn(s))


@pytest.mark.parametrize("name", PRESETS)
def test_a_tie_at_the_target_plays_a_hand_dealt_by_the_next_seat(name: str) -> None:
    thirteen = name.startswith("thirteen")
    w0, w1 = WILD[name]
    target, tie = TARGET[name], TIE[name]
    more = (" Jh 7c", " Js 7d") if thirteen else ("", "")
    s = carried_in(Scenario(name, hands={0: f"{KINGS} {w0} 5d 9s{more[0]}",
                                         1: f"{QUEENS} {w1} 5c 9h{more[1]}"}),
                   (target - tie, target - tie))
    sets_turn(s, f"{KINGS} {w0}")
    sets_turn(s, f"{QUEENS} {w1}")
    end_by_stock(s, (tie, tie))
    # §10: both sides at the target, equal highest totals: another hand, not the end
    assert s.state.totals == (target, target) and s.state.phase == "between"
    assert s.state.winner is None
    refused(s, "match.not_over", ("another hand",), "end_match")
    audited(s.events, (tie, tie))
    # §2: the dealer rotates (seat 1 dealt hand 0, seat 0 deals hand 1); the next seat plays
    more = (" Tc 8d", " Ad 8s") if thirteen else ("", "")
    hands = {0: f"{QUEENS} {w0} 9s Jh{more[0]}", 1: f"{KINGS} {w1} 4c 5h{more[1]}"}
    deal = build_deal(s.rules, 2, hands, "", {}, None, hand_no=1, dealer=1)
    deal = msgspec.structs.replace(deal, seq=s.rep.seq + 1)
    with s.illegal("deal.dealer_rotation"):
        s.push(deal)
    s.push(msgspec.structs.replace(deal, dealer=0))
    assert s.state.dealer == 0 and s.turn == 1
    sets_turn(s, f"{KINGS} {w1}")
    sets_turn(s, f"{QUEENS} {w0}")
    want = DECIDER[name]
    end_by_stock(s, want)
    totals = (target + want[0], target + want[1])
    # both at or above the target; side 1 alone highest wins
    assert s.state.totals == totals and s.state.winner == 1 and s.state.phase == "decided"
    refused(s, "match.wrong_winner", ("side 1 won",), "end_match", totals=totals, winner=0)
    refused(s, "score.mismatch", ("recomputed",), "end_match",
            totals=(totals[0], totals[1] - 1), winner=1)
    s.end_match(totals=totals, winner=1)
    audited(s.events, want, hand=1)
    v = audit.audit_events(s.events, audit.Integrity("sealed", "binary", len(s.events), 1, ""))
    assert v.scoring.totals_recomputed == totals == v.scoring.totals_recorded
    # what `show` prints: each hand's running total goes on from the carried totals (it ran
    # from 0, so the last hand's total was not the match total)
    summary = audit.summarize(s.events)
    assert [h.cumulative for h in summary.hands] == [(target, target), totals]
    assert summary.totals == totals and summary.winner == 1


# ------------------------------------------------------------------ a morto voided at four

MORTO_PRESETS = ("biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
                 "burako")
FAMILY = ("biriba", "bossa-nova")


def partners_deal(name: str) -> Scenario:
    """Four players: seat 1 empties its hand by a discard (side 1's morto), seat 0 does the
    same three turns later (side 0's morto, pending), and seat 3, an opponent but not the
    next seat, goes out before seat 0 plays again. Seat 2 only draws and throws."""
    t = name.startswith("thirteen")
    w2 = "JK" if name not in FAMILY else "2s"
    hands = {
        0: "3h 4h 5h 6h 7h 8h 9h" + (" Th Jh" if t else "") + " Kc Kd Ks 5s",
        1: "3c 4c 5c 6c 7c 8c 9c" + (" Tc Jc" if t else "") + " Qc Qd Qs 5d",
        2: f"Ac Ad 9s 9d Ts Td 3s 3d 7s 7d {w2}" + (" 5h 8d" if t else ""),
        3: "8s 8d 8h 6s 6d 6h 4s 4d 4h Js Jd" + (" 8c 6c" if t else ""),
    }
    mortos = {0: "Ah As Ad Ac Kh Qh 2s 2d Th Tc Jc",  # voided: nobody's
              1: "9c 9d 7c 7h 5c 5s 3c 3h 4c 4s 2h"}  # stands: seat 1's hand
    return Scenario(name, 4, hands=hands, mortos=mortos, stock="Ks Qh Qs Js Kh Ts 9h Jh")


# By hand, RULES.md §9. Side 0: the run 3h..9h 5 * 5 + 10 + 10 = 45 (13-card presets to the
# jack, 65), four kings 40; the run a clean canastra 200; seat 2 holds Ac Ad 30, 9s 9d Ts Td
# 40, 3s 3d 7s 7d 20 and its wild (2s 10 in the family; a joker: thirteen 50, burraco 30,
# mega and burako 50), and in the 13-card presets 5h 8d 15 more; seat 0's morto was voided
# (an opponent went out before seat 0 played again, RULES.md §7): its cards are nobody's and
# the side pays 100. Side 1: the run 3c..9c 45 (65), four queens 40, seat 3's 888 666 444
# JJJ 30 + 15 + 15 + 30 = 90 (13-card presets 8888 6666: 40 + 20 + 15 + 30 = 105); the run a
# clean canastra 200; going out 50 (family) or 100; seat 1 holds its morto, which stood:
# 9c 9d 20, 7c 7h 5c 5s 3c 3h 4c 4s 40, 2h 10 (burraco 20). In the family each of seats 1, 0
# and 3 laid its whole hand in one turn with nothing laid before: a relancinho each, +100,
# seat 0's kept though its morto was voided (docs/rules.md).
VOIDED_AT_FOUR = {
    "biriba": (45 + 40 + 200 + 100 - (30 + 40 + 20 + 10) - 100,  # 185
               45 + 40 + 90 + 200 + 50 + 200 - (20 + 40 + 10)),  # 555
    "bossa-nova": (45 + 40 + 200 + 100 - (30 + 40 + 20 + 10) - 100,
                   45 + 40 + 90 + 200 + 50 + 200 - (20 + 40 + 10)),
    "thirteen": (65 + 40 + 200 - (30 + 40 + 20 + 50 + 15) - 100,  # 50
                 65 + 40 + 105 + 200 + 100 - (20 + 40 + 10)),  # 440
    "thirteen-quick": (65 + 40 + 200 - (30 + 40 + 20 + 50 + 15) - 100,
                       65 + 40 + 105 + 200 + 100 - (20 + 40 + 10)),
    "burraco": (45 + 40 + 200 - (30 + 40 + 20 + 30) - 100,  # 65
                45 + 40 + 90 + 200 + 100 - (20 + 40 + 20)),  # 395
    "mega": (45 + 40 + 200 - (30 + 40 + 20 + 50) - 100,  # 45
             45 + 40 + 90 + 200 + 100 - (20 + 40 + 10)),  # 405
    "burako": (45 + 40 + 200 - (30 + 40 + 20 + 50) - 100,
               45 + 40 + 90 + 200 + 100 - (20 + 40 + 10)),
}


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_an_opponent_two_seats_on_voids_the_indirect_morto_the_partner_still_pays(
        name: str) -> None:
    t = name.startswith("thirteen")
    s = partners_deal(name)
    s.pass_turn()  # seat 0
    s.draw("Qh").meld("3c 4c 5c 6c 7c 8c 9c" + (" Tc Jc" if t else ""))
    s.meld("Qc Qd Qs Qh").discard("5d").morto(direct=False)  # seat 1: side 1's morto
    s.pass_turn()  # seat 2
    s.pass_turn()  # seat 3
    s.draw("Kh").meld("3h 4h 5h 6h 7h 8h 9h" + (" Th Jh" if t else ""))
    s.meld("Kc Kd Ks Kh").discard("5s").morto(direct=False)  # seat 0: pending
    assert s.state.morto_pending[0] == 0
    s.pass_turn()  # seat 1 plays again: side 1's morto stands
    s.pass_turn()  # seat 2, seat 0's partner: no turn of seat 0's
    assert s.turn == 3 and s.state.morto_pending[0] == 0
    s.draw("Jh").meld("8s 8d 8h" + (" 8c" if t else "")).meld("6s 6d 6h" + (" 6c" if t else ""))
    s.meld("4s 4d 4h").meld("Js Jd Jh").go_out()
    want = VOIDED_AT_FOUR[name]
    for side in (0, 1):
        off = tuple(w - (1 if i == side else 0) for i, w in enumerate(want))
        refused(s, "score.mismatch", (f"side {side}",), "end_hand", "went_out", off)
    s.end_hand("went_out", want)
    side0, side1 = s.state.results[0].scores
    assert (side0.morto_penalty, side1.morto_penalty) == (100, 0)
    assert (side0.relancinho, side1.relancinho) == ((100, 200) if name in FAMILY else (0, 0))
    audited(s.events, want)


# By hand, RULES.md §9, three sides (biriba, bossa-nova: 2 to 4 players, a morto each). Seat 2
# takes its morto by a discard, then seat 0 does; seat 1 passes; seat 2 goes out from its
# morto before seat 0 plays again. Side 0: 3h..9h 45, four kings 40, clean 200, relancinho
# 100 (its whole hand in one turn), its morto voided: 100, its cards nobody's. Side 1: never
# laid; Ac Ad 30, 9s 9d Ts Td 40, 3s 3d 7s 7d 20, 2s 10 left; its morto 100. Side 2:
# 3c..9c 45, four queens 40, 888 666 444 JJJ 90; clean 200, going out 50, one relancinho
# 100 (the morto laid down later is no second one: the player had laid in this hand).
VOIDED_AT_THREE = (45 + 40 + 200 + 100 - 100,  # 285
                   -(30 + 40 + 20 + 10) - 100,  # -200
                   45 + 40 + 90 + 200 + 50 + 100)  # 525


@pytest.mark.parametrize("name", FAMILY)
def test_three_sides_the_third_sides_going_out_voids_the_morto_the_idle_side_pays(
        name: str) -> None:
    hands = {0: "3h 4h 5h 6h 7h 8h 9h Kc Kd Ks 5s",
             1: "Ac Ad 9s 9d Ts Td 3s 3d 7s 7d 2s",
             2: "3c 4c 5c 6c 7c 8c 9c Qc Qd Qs 5d"}
    mortos = {0: "Ah As Ad Ac Kh Qh 2s 2d Th Tc Jc",
              2: "8s 8d 8h 6s 6d 6h 4s 4d 4h Js Jd"}
    s = Scenario(name, 3, hands=hands, mortos=mortos, stock="Ks Qs Qh Kh Js Jh")
    s.pass_turn().pass_turn()  # seats 0 and 1
    s.draw("Qh").meld("3c 4c 5c 6c 7c 8c 9c").meld("Qc Qd Qs Qh").discard("5d")
    s.morto(direct=False)  # seat 2
    s.draw("Kh").meld("3h 4h 5h 6h 7h 8h 9h").meld("Kc Kd Ks Kh").discard("5s")
    s.morto(direct=False)  # seat 0: pending until its next turn
    s.pass_turn()  # seat 1
    s.draw("Jh").meld("8s 8d 8h").meld("6s 6d 6h").meld("4s 4d 4h").meld("Js Jd Jh").go_out()
    for side in range(3):
        off = tuple(w + (100 if i == side else 0) for i, w in enumerate(VOIDED_AT_THREE))
        refused(s, "score.mismatch", (f"side {side}",), "end_hand", "went_out", off)
    s.end_hand("went_out", VOIDED_AT_THREE)
    scores = s.state.results[0].scores
    assert [sc.morto_penalty for sc in scores] == [100, 100, 0]
    assert [sc.relancinho for sc in scores] == [100, 0, 100]
    assert [sc.hand_penalty for sc in scores] == [0, 100, 0]
    audited(s.events, VOIDED_AT_THREE)


def test_the_score_refusal_names_every_part_rules_md_adds() -> None:
    """RULES.md §9: table, canastra bonuses, going out, relancinho, cards left in hand, the
    morto; the id's description (what `explain` prints) named all but the relancinho."""
    text = describe("score.mismatch")
    for part in ("cards on the table", "canastra bonuses", "going out", "relancinho",
                 "cards left in hand", "morto"):
        assert part in text, part
