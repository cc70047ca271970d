"""A referee's scoring scenarios, straight from RULES.md §6–§10, for every preset.

Every expected number is worked out by hand from RULES.md's tables (copied below as plain
literals, never read from the engine's presets): hand scores, canastra bonuses, the morto not
taken, going out, the relancinho, the match end, ties and vulnerability. Each refusal names its
exact rule id.
"""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from buraco_log.cards import format_card, parse_cards
from buraco_log.errors import IllegalMoveError
from buraco_log.events import CardDiscarded, HandEnded, TotalsCarried
from buraco_log.reducer import Replayer, step, validate
from tests.scenario import Scenario, build_deal
from tests.spec_points import CARD_POINTS as CARD
from tests.spec_points import spec_points

# RULES.md §9, bonus table: going out, relancinho (0: "–"), morto not taken (0: "–").
GOING_OUT = {"classic": 50, "biriba": 50, "bossa-nova": 50, "thirteen": 100,
             "thirteen-quick": 100, "burraco": 100, "mega": 100, "burako": 100}
RELANCINHO = {"classic": 100, "biriba": 100, "bossa-nova": 100}
MORTO_NOT_TAKEN = {"biriba": 100, "bossa-nova": 100, "thirteen": 100, "thirteen-quick": 100,
                   "burraco": 100, "mega": 100, "burako": 100}
# RULES.md §10: the targets.
TARGET = {"classic": 1500, "biriba": 1500, "bossa-nova": 1500, "thirteen": 2005,
          "thirteen-quick": 1005, "burraco": 2005, "mega": 3000, "burako": 3000}
ALL = tuple(CARD)
MORTO_PRESETS = tuple(MORTO_NOT_TAKEN)
CLASSIC_FAMILY = ("classic", "biriba", "bossa-nova")


pts = spec_points  # RULES.md §9's card table for the preset


def refused(s: Scenario, rule: str, move: str, *args: object, **kw: object) -> None:
    """``move`` (a Scenario method) is refused with ``rule`` at the next seq."""
    seq = s.rep.seq + 1
    with s.illegal(rule):
        getattr(s, move)(*args, **kw)
    assert s.last_error.seq == seq, (s.last_error.seq, seq)


# -- a whole hand with the morto, every morto preset (RULES.md §7, §9) ----------------------

# The first hand down: a clean run of hearts (a canastra everywhere) and four kings; 4c is
# thrown last, so the morto is taken indirectly (the one way every morto preset allows).
RUN11 = "3h 4h 5h 6h 7h 8h 9h"
RUN13 = "3h 4h 5h 6h 7h 8h 9h Th Jh"
MORTO = "Ts Td Tc Js Jd Jc Qs Qd Qc As Ad"  # with Ac drawn: four sets of three


def first_hand(name: str) -> tuple[str, str]:
    run = RUN13 if name.startswith("thirteen") else RUN11
    return run, f"{run} Ks Kd Kc 4c"


def whole_hand(name: str, totals: tuple[int, int] | None = None) -> tuple[Scenario, int, int]:
    """Seat 0 lays its whole first hand (a clean run, four kings) and throws 4c: its morto,
    indirectly. Seat 1 passes. Seat 0 lays the whole morto with Ac and goes out. Returns the
    scenario before the hand end and the two hand scores worked out from RULES.md §9."""
    run, hand0 = first_hand(name)
    s = carried(Scenario(name, hands={0: hand0}, stock="Kh 5s Ac", mortos={0: MORTO}), totals)
    s.draw("Kh").meld(run).meld("Ks Kd Kc Kh").discard("4c").morto(direct=False)
    s.pass_turn()
    s.draw("Ac").meld("Ts Td Tc").meld("Js Jd Jc").meld("Qs Qd Qc").meld("As Ad Ac")
    s.go_out()
    # Side 0: the run (3..7 = 25, the rest 10 each), kings 40, tens 30, jacks 30, queens 30,
    # aces 45; one clean canastra 200; going out; the relancinho (the whole first hand down
    # in one turn) where the preset has one; no card left, the morto taken. Side 1: its hand
    # by the card table, and its morto never taken.
    table = 25 + 10 * (len(run.split()) - 5) + 40 + 30 + 30 + 30 + 45
    side0 = table + 200 + GOING_OUT[name] + RELANCINHO.get(name, 0)
    return s, side0, -pts(name, s.hand(1)) - MORTO_NOT_TAKEN[name]


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_a_whole_hand_with_the_morto_scores_as_rules_md_adds_it(name: str) -> None:
    s, side0, side1 = whole_hand(name)
    refused(s, "score.mismatch", "end_hand", "went_out", (side0 + 1, side1))
    s.end_hand("went_out", (side0, side1))
    sc0, sc1 = s.state.results[0].scores
    assert (sc0.canastra_bonus, sc0.going_out, sc0.hand_penalty) == (200, GOING_OUT[name], 0)
    assert (sc1.table_points, sc1.morto_penalty) == (0, MORTO_NOT_TAKEN[name])
    assert sc0.relancinho == RELANCINHO.get(name, 0)


# -- the indirect morto voided by an opponent going out at once (RULES.md §7, §9) ----------

SEAT1 = "3s 4s 5s 6s 7s 8s 9s"
SEAT1_13 = "3s 4s 5s 6s 7s 8s 9s Ts Js"
MORTO1 = "5d 5d 5c 6d 6d 6c 7d 7d 7c 4d 4d"  # with 4s drawn: four sets of three


def voided_hand(name: str, totals: tuple[int, int] | None = None) -> tuple[Scenario, int, int]:
    """Seat 1 takes its morto indirectly; seat 0 then takes its own indirectly; seat 1 lays its
    whole morto and goes out before seat 0 plays again. Returns the scenario at the end of the
    hand (not yet scored) and the two hand scores worked out from RULES.md."""
    run0, hand0 = first_hand(name)
    run1 = SEAT1_13 if name.startswith("thirteen") else SEAT1
    s = carried(Scenario(name, hands={0: hand0, 1: f"{run1} Qh Qd Qc 9c"},
                         stock="Kd Qs Kh 4s", mortos={0: MORTO, 1: MORTO1}), totals)
    s.pass_turn()  # seat 0 draws Kd and throws it
    s.draw("Qs").meld(run1).meld("Qh Qd Qc Qs").discard("9c").morto(direct=False)
    s.draw("Kh").meld(run0).meld("Ks Kd Kc Kh").discard("4c").morto(direct=False)
    assert s.state.morto_pending == (0, None)
    s.draw("4s").meld("5d 5d 5c").meld("6d 6d 6c").meld("7d 7d 7c").meld("4d 4d 4s").go_out()
    run_pts = 25 + 10 * (len(run0.split()) - 5)  # both runs: 3..7 at 5, the rest at 10
    # Side 0: its run and kings, one clean canastra, the relancinho noted at once where the
    # preset has one; its morto counts as not taken (-100) and its untouched cards not at all.
    side0 = run_pts + 40 + 200 + RELANCINHO.get(name, 0) - MORTO_NOT_TAKEN[name]
    # Side 1: run, queens 40, four sets of low cards 4 x 15; canastra, going out, relancinho.
    side1 = run_pts + 40 + 60 + 200 + GOING_OUT[name] + RELANCINHO.get(name, 0)
    return s, side0, side1


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_an_opponent_out_before_the_takers_next_turn_voids_the_indirect_morto(name: str) -> None:
    s, side0, side1 = voided_hand(name)
    stood = side0 + MORTO_NOT_TAKEN[name] - pts(name, MORTO)  # the reading RULES.md refuses
    refused(s, "score.mismatch", "end_hand", "went_out", (stood, side1))
    s.end_hand("went_out", (side0, side1))
    sc0 = s.state.results[0].scores[0]
    assert (sc0.morto_penalty, sc0.hand_penalty) == (MORTO_NOT_TAKEN[name], 0)


# -- the match end, the winner and ties, from the hand just scored (RULES.md §10) ------------


def carried(s: Scenario, totals: tuple[int, ...] | None) -> Scenario:
    """The scenario's match resumed from ``totals`` (TotalsCarried right after the start)."""
    if totals is None:
        return s
    rep = Replayer()
    first, deal = s.events[0], replace(s.events[1], seq=2)
    tc = TotalsCarried(totals, seq=1)
    for ev in (first, tc, deal):
        rep.step(ev)
    s.rep, s.events = rep, [first, tc, deal]
    return s


def next_deal(s: Scenario, rule: str | None = None) -> None:
    """The next hand's deal is accepted: the match goes on, the deal rotated (RULES.md §2, §10:
    the seat after the new dealer plays first). With ``rule``: refused so."""
    deal = replace(build_deal(s.rules, s.players, {}, "", {}, None, hand_no=1),
                   seq=s.rep.seq + 1)
    if rule is not None:
        refused(s, rule, "push", deal)
        return
    # hand 0 was dealt by the last seat; the same dealer again is refused
    refused(s, "deal.dealer_rotation", "push", replace(deal, dealer=s.players - 1))
    s.push(deal)
    assert s.state.hand == 1 and s.state.phase == "draw"
    assert s.turn == (deal.dealer + 1) % s.players


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_the_hand_that_reaches_the_target_ends_the_match_and_one_point_short_does_not(
    name: str,
) -> None:
    # Side 0 scores exactly what it lacks: its total is the target, the highest: it wins.
    side0 = whole_hand(name, (0, 0))[1]
    s, got0, got1 = whole_hand(name, (TARGET[name] - side0, 0))
    s.end_hand("went_out", (got0, got1))
    assert s.state.totals == (TARGET[name], got1) and s.state.winner == 0
    next_deal(s, "match.decided")  # the match ended with that hand: no further deal
    refused(s, "match.wrong_winner", "end_match", winner=1)
    refused(s, "score.mismatch", "end_match", totals=(TARGET[name] - 1, got1))
    s.end_match(totals=(TARGET[name], got1), winner=0)
    # One point less: the match goes on to another hand.
    s, got0, got1 = whole_hand(name, (TARGET[name] - side0 - 1, 0))
    s.end_hand("went_out", (got0, got1))
    assert s.state.totals[0] == TARGET[name] - 1 and s.state.winner is None
    refused(s, "match.not_over", "end_match")
    next_deal(s)


@pytest.mark.parametrize("name", MORTO_PRESETS)
@pytest.mark.parametrize("lead", [0, 10, -10])
def test_both_sides_at_the_target_the_highest_total_wins_and_a_tie_plays_on(
    name: str, lead: int
) -> None:
    # Both sides score positively in the voided-morto hand (side 1 goes out). Carried in so
    # that both end it at the target or above: "Highest total wins; a tie plays another
    # hand" -- whoever went out. ``lead``: side 0's total less side 1's after the hand.
    _, side0, side1 = voided_hand(name)
    assert side0 > 10 and side1 > 10
    t = TARGET[name]
    s = voided_hand(name, (t - side0 + max(lead, 0), t - side1 + max(-lead, 0)))[0]
    s.end_hand("went_out", (side0, side1))
    assert s.state.totals == (t + max(lead, 0), t + max(-lead, 0))
    if lead == 0:
        assert s.state.winner is None
        refused(s, "match.not_over", "end_match")
        next_deal(s)
        return
    winner = 0 if lead > 0 else 1
    assert s.state.winner == winner
    refused(s, "match.wrong_winner", "end_match", winner=1 - winner)
    s.end_match(winner=winner)


# -- a canastra is classed by its current cards (RULES.md §6), and scored so (§9) -----------

MORTO_TJQ = "Ts Td Tc Js Jd Jc Qs Qd Qc Qh Qh"  # three sets: tens 30, jacks 30, queens 50


def canastra_hand(name: str, first: str, later: str) -> tuple[Scenario, int]:
    """Seat 0 lays ``first`` (7 hearts) and four kings, throws 4c (morto, indirectly); seat 1
    passes; seat 0 draws ``later``, lays it off on the run, lays the whole morto and goes out.
    Returns the scenario (hand not yet ended) and side 0's points besides the canastra bonus.
    ``thirteen`` is dealt 11 cards here (a knob that changes no score)."""
    s = Scenario(name, hands={0: f"{first} Ks Kd Kc 4c"}, stock=f"Kh 5s {later}",
                 mortos={0: MORTO_TJQ}, **({"hand_size": 11} if name.startswith("thirteen")
                                          else {}))
    s.draw("Kh").meld(first).meld("Ks Kd Kc Kh").discard("4c").morto(direct=False)
    s.pass_turn()
    s.draw(later).layoff(0, later)
    s.meld("Ts Td Tc").meld("Js Jd Jc").meld("Qs Qd Qc Qh Qh").go_out()
    run = pts(name, f"{first} {later}")
    return s, run + 40 + 30 + 30 + 50 + GOING_OUT[name] + RELANCINHO.get(name, 0)


# a 2 of another suit everywhere; a joker where the material has jokers (not the classic family)
WILDS = [(n, w) for n in MORTO_PRESETS for w in ("2c", "JK")
         if w == "2c" or n not in CLASSIC_FAMILY]


@pytest.mark.parametrize(("name", "wild"), WILDS)
def test_a_wild_laid_off_on_a_clean_canastra_makes_it_dirty_or_semi_clean_in_burraco(
    name: str, wild: str
) -> None:
    # 3h..9h is clean (200). A wild at an end leaves the seven naturals unbroken: semi-clean
    # in burraco (150, "sete cartas subsequentes"), dirty elsewhere (100).
    first = "3h 4h 5h 6h 7h 8h 9h"
    s = Scenario(name, hands={0: f"{first} Ks Kd Kc 4c"}, stock="Kh")
    s.draw("Kh").meld(first)
    assert s.state.melds[0][0].canastra == "clean"
    s, rest = canastra_hand(name, first, wild)
    cls, bonus = ("semi_clean", 150) if name == "burraco" else ("dirty", 100)
    assert s.state.melds[0][0].canastra == cls
    side1 = -pts(name, s.hand(1)) - MORTO_NOT_TAKEN[name]
    refused(s, "score.mismatch", "end_hand", "went_out", (rest + 200, side1))
    s.end_hand("went_out", (rest + bonus, side1))
    assert s.state.results[0].scores[0].canastras == {cls: 1}


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_the_3_that_a_2_of_hearts_stood_for_makes_a_dirty_canastra_clean(name: str) -> None:
    # 2h 4h..9h: the 2h cannot stand in its own place (no 3h), so it is the wild for the 3: a
    # dirty canastra (six naturals in a row: not semi-clean in burraco either). When the 3h
    # comes, the 2h is read natural (RULES.md §5): 2h..9h, a clean canastra of eight.
    first = "2h 4h 5h 6h 7h 8h 9h"
    s = Scenario(name, hands={0: f"{first} Ks Kd Kc 4c"}, stock="Kh")
    s.draw("Kh").meld(first)
    assert s.state.melds[0][0].canastra == "dirty"
    s, rest = canastra_hand(name, first, "3h")
    assert s.state.melds[0][0].canastra == "clean"
    side1 = -pts(name, s.hand(1)) - MORTO_NOT_TAKEN[name]
    refused(s, "score.mismatch", "end_hand", "went_out", (rest + 100, side1))
    s.end_hand("went_out", (rest + 200, side1))
    # the 2h scores as a 2 wherever it stands: 10, or 20 in burraco
    assert s.state.results[0].scores[0].table_points == (
        CARD[name][1] + 45 + 40 + 110)


# -- vulnerability counts card points, not canastra bonuses (RULES.md §10) ------------------


@pytest.mark.parametrize("name", CLASSIC_FAMILY)
def test_a_vulnerable_opening_of_a_clean_canastra_worth_45_card_points_is_short(
    name: str,
) -> None:
    # "its first melds, laid in one turn, must total at least 75 card points": 3h..9h is a
    # clean canastra (200 when scored) but only 5 x 5 + 2 x 10 = 45 card points.
    s = carried(Scenario(name, hands={0: "3h 4h 5h 6h 7h 8h 9h Ks Kd 5c 6c"}, stock="Kc"),
                (750, 0))
    s.draw("Kc").meld("3h 4h 5h 6h 7h 8h 9h")
    refused(s, "vulnerable.opening_too_low", "discard", "5c")
    s.meld("Ks Kd Kc")  # 45 + 30 = 75: enough
    s.discard("5c")
    assert s.state.opened == (True, False) and s.turn == 1


# -- partnerships: the partner's going out keeps the morto, hands are the side's (§2, §7) ---

# seat 2's whole hand: three or four sets, and their points
PARTNER = {11: (("Qh Qd Qc", "Jh Jd Jc", "5s 5d 5c 5s 5d"), 30 + 30 + 25),
           13: (("Qh Qd Qc", "Jh Jd Jc", "5s 5d 5c", "6s 6d 6h 6c"), 30 + 30 + 15 + 20)}


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_four_players_the_partner_goes_out_and_the_takers_morto_stands_as_a_hand(
    name: str,
) -> None:
    # Seat 0 lays its whole hand, throws 4c and takes side 0's morto indirectly. Seat 1
    # passes. Seat 2, seat 0's partner, lays its whole hand, throws 8c and goes out (the side
    # took its morto and has a canastra) before seat 0 played again: the morto stands (only
    # an opponent's going out voids it) and, as seat 0's hand, its cards count against side 0.
    run0, hand0 = first_hand(name)
    size = 13 if name.startswith("thirteen") else 11
    hand2, sets2 = PARTNER[size]
    s = Scenario(name, 4, hands={0: hand0, 2: " ".join(hand2)}, stock="Kh 7c 8c",
                 mortos={0: MORTO})
    s.draw("Kh").meld(run0).meld("Ks Kd Kc Kh").discard("4c").morto(direct=False)
    s.pass_turn()
    s.draw("8c")
    for group in hand2:
        s.meld(group)
    s.discard("8c").go_out()
    run_pts = 25 + 10 * (len(run0.split()) - 5)
    # Side 0: run, kings 40, seat 2's sets; clean canastra; out; a relancinho for each
    # partner where the preset has one; less seat 0's morto in hand: tens, jacks, queens
    # 30 each, two aces 30.
    morto_pts = 30 + 30 + 30 + 30
    side0 = (run_pts + 40 + sets2 + 200 + GOING_OUT[name] + 2 * RELANCINHO.get(name, 0)
             - morto_pts)
    side1 = -pts(name, s.hand(1)) - pts(name, s.hand(3)) - MORTO_NOT_TAKEN[name]
    assert pts(name, MORTO) == morto_pts and s.state.morto_pending == (0, None)
    voided = side0 + morto_pts - MORTO_NOT_TAKEN[name]  # the reading RULES.md refuses
    refused(s, "score.mismatch", "end_hand", "went_out", (voided, side1))
    s.end_hand("went_out", (side0, side1))
    sc0, sc1 = s.state.results[0].scores
    assert (sc0.hand_penalty, sc0.morto_penalty) == (morto_pts, 0)
    assert sc1.morto_penalty == MORTO_NOT_TAKEN[name]  # once for the side, not per player


# -- mega: a set of seven is no canastra, so it cannot let a side go out (RULES.md §6, §7) ---


@pytest.mark.parametrize("name", ["thirteen", "burraco", "mega", "burako"])
def test_a_set_of_seven_is_a_canastra_for_going_out_everywhere_but_mega(name: str) -> None:
    # Seat 0 lays seven tens and a set of kings (thirteen: kings and nines) and takes its
    # morto by a discard; seat 1 passes; seat 0 lays the whole morto, four sets with Ac drawn.
    # Going out needs a canastra: the seven tens are one (clean, 200), except in mega, whose
    # canastra is a run only ("Jogo de sete cartas ou mais em sequencia do mesmo naipe").
    thirteen = name == "thirteen"
    hand0 = "Th Ts Td Tc Th Ts Td Ks Kd Kc " + ("9c 9d 4c" if thirteen else "4c")
    s = Scenario(name, hands={0: hand0}, stock=("9s" if thirteen else "Kh") + " 5h Ac",
                 mortos={0: "5s 5d 5c Js Jd Jc Qs Qd Qc As Ad"})
    s.draw().meld("Th Ts Td Tc Th Ts Td")
    if thirteen:
        s.meld("Ks Kd Kc").meld("9c 9d 9s")
    else:
        s.meld("Ks Kd Kc Kh")
    s.discard("4c").morto(direct=False).pass_turn()
    s.draw("Ac").meld("5s 5d 5c").meld("Js Jd Jc").meld("Qs Qd Qc")
    if name == "mega":
        assert s.state.melds[0][0].canastra is None
        refused(s, "go_out.needs_canastra", "meld", "As Ad Ac")
        return
    s.meld("As Ad Ac").go_out()
    assert s.state.melds[0][0].canastra == "clean"
    # tens 70, kings 40 (thirteen: kings 30 and nines 30), fives 15, jacks 30, queens 30,
    # aces 45; clean 200; out 100. Side 1: its hand and its morto.
    table = 70 + (60 if thirteen else 40) + 15 + 30 + 30 + 45
    side1 = -pts(name, s.hand(1)) - MORTO_NOT_TAKEN[name]
    s.end_hand("went_out", (table + 200 + GOING_OUT[name], side1))


# -- the relancinho needs no earlier laying down ("sem descida parcelada", RULES.md §7) -----


@pytest.mark.parametrize("name", CLASSIC_FAMILY)
def test_no_relancinho_for_a_hand_laid_down_over_two_turns(name: str) -> None:
    # Seat 0 lays three kings in its first turn, the rest (a clean run and the fourth king)
    # in its second, and throws 4c: the hand went down in two turns, no +100. Classic goes
    # out (50); biriba and bossa-nova take the morto (the run is bossa-nova's canastra).
    s = Scenario(name, hands={0: "Kc Kd Ks 3h 4h 5h 6h 7h 8h 9h 4c"}, stock="Qc 5s Kh",
                 mortos={0: MORTO})
    s.draw("Qc").meld("Kc Kd Ks").discard("Qc")
    s.pass_turn()
    s.draw("Kh").layoff(0, "Kh").meld("3h 4h 5h 6h 7h 8h 9h").discard("4c")
    if name == "classic":
        s.go_out()
        opp = pts(name, s.hand(1))
        # kings 40, run 45, clean 200, out 50; no relancinho
        refused(s, "score.mismatch", "end_hand", "went_out", (435, -opp))
        s.end_hand("went_out", (335, -opp))
    else:
        s.morto(direct=False)
    assert s.state.relancinho == (0, 0)


# -- a hand ended by the stock: no going out, each untaken morto paid (RULES.md §8, §9) -----


def run_out_stock(s: Scenario) -> None:
    """Every player draws and throws the drawn card until the stock is at its floor; the last
    throw is one the next player cannot use (under must-use-top a usable top card refuses the
    stock-out, which is not under test here). The hand is not ended."""
    t = s.rep._t
    while len(t.stock) > s.rules.stock_floor + 1:
        s.pass_turn()
    s.draw()
    for card in sorted(set(s.hand(s.turn))):
        after = step(s.state, CardDiscarded(s.turn, card, seq=s.rep.seq + 1))
        try:
            validate(after, HandEnded("stock_out", None, seq=after.seq + 1))
        except IllegalMoveError:
            continue
        s.discard(format_card(card))
        return
    raise AssertionError("no discard lets the hand end")


@pytest.mark.parametrize("name", ALL)
def test_a_stock_out_scores_the_table_less_the_hands_and_each_untaken_morto(name: str) -> None:
    # Seat 0 lays a clean run and three kings and keeps one card; nobody goes out. RULES.md §8: the
    # hand ends when the stock is down to its floor (mega: 2 cards, others: none).
    # Seat 1 holds no wild and no two cards that a third could join (ranks apart, suits
    # spaced): under must-use-top it cannot use the last card thrown, so the stock-out stands.
    run, _ = first_hand(name)
    hand1 = "3c 6c 9c Qc 4d 7d Td Kd 5s 8s Js" + (" Ah 3s" if name.startswith("thirteen") else "")
    s = Scenario(name, hands={0: f"{run} Ks Kd Kc 4c", 1: hand1}, stock="Qc")
    s.draw("Qc").meld(run).meld("Ks Kd Kc").discard("Qc")
    refused(s, "hand.not_over", "end_hand", "stock_out")
    run_out_stock(s)
    assert len(s.state.stock) == (2 if name == "mega" else 0)
    refused(s, "stock.floor_reached", "draw", "Kh")  # whatever card: the floor is reached
    table = 25 + 10 * (len(run.split()) - 5) + 30
    penalty = MORTO_NOT_TAKEN.get(name, 0)
    side0 = table + 200 - pts(name, s.hand(0)) - penalty
    side1 = -pts(name, s.hand(1)) - penalty
    assert len(s.hand(0)) == 1  # 4c, or the card drawn last if 4c was thrown instead
    refused(s, "score.mismatch", "end_hand", "stock_out", (side0 + GOING_OUT[name], side1))
    s.end_hand("stock_out", (side0, side1))
    assert [sc.going_out for sc in s.state.results[0].scores] == [0, 0]


# -- RULES.md §6's table of canastras, class and bonus, for every preset ---------------------

# RULES.md §9, second table: bonus per class; "–" (absent) where the class does not exist.
BONUS = {"clean": 200, "dirty": 100, "semi_clean": 150, "royal": 500, "ace_to_ace": 1000}
SEMI_CLEAN = ("burraco",)
ROYAL = ("burako",)
NO_SET_CANASTRA = ("mega",)


def expected_class(name: str, meld: str) -> str | None:
    """The class RULES.md §6 gives each meld below, preset by preset."""
    if meld in ("Ts Td Tc Th Ts Td Tc", "Ts Td Tc Th Ts Td 2c"):
        if name in NO_SET_CANASTRA:
            return None
        return "clean" if "2c" not in meld else "dirty"  # semi-clean is for runs only
    if meld == "3h 4h 5h 6h 7h 8h 9h 2c" or meld == "Ah 2c 3h 4h 5h 6h 7h 8h 9h":
        return "semi_clean" if name in SEMI_CLEAN else "dirty"
    if meld == "3h 4h 5h 6h 2c 8h 9h Th":
        return "dirty"  # the wild breaks the seven: no 7 in a row
    if meld == "Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh":
        return "royal" if name in ROYAL else "clean"
    return "clean"


CANASTRAS = ("3h 4h 5h 6h 7h 8h 9h", "Ts Td Tc Th Ts Td Tc", "Ts Td Tc Th Ts Td 2c",
             "3h 4h 5h 6h 7h 8h 9h 2c", "Ah 2c 3h 4h 5h 6h 7h 8h 9h", "3h 4h 5h 6h 2c 8h 9h Th",
             "Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh")


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("meld", CANASTRAS)
def test_each_canastra_of_rules_md_section_6_is_classed_and_paid_as_its_table_says(
    name: str, meld: str
) -> None:
    cls = expected_class(name, meld)
    s = Scenario(name, hands={0: f"{meld} 4c"}, stock="Kc",
                 hand_size=len(meld.split()) + 1 + (2 if name.startswith("thirteen") else 0))
    s.draw("Kc").meld(meld)
    m = s.state.melds[0][0]
    assert m.canastra == cls
    score = s.rep._t.score()[0]  # what a hand end now would count
    assert score.canastra_bonus == (BONUS[cls] if cls else 0)
    assert score.table_points == pts(name, meld)


@pytest.mark.parametrize("name", ALL)
def test_both_aces_in_one_run_are_burakos_ace_to_ace_canastra_and_refused_elsewhere(
    name: str,
) -> None:
    run = "Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh Ah"
    s = Scenario(name, hands={0: f"{run} 4c"}, stock="Kc", hand_size=15)
    s.draw("Kc")
    if name != "burako":
        refused(s, "meld.duplicate_in_run", "meld", run)
        return
    s.meld(run)
    assert s.state.melds[0][0].canastra == "ace_to_ace"
    # 2h 10, 3..7 25, 8..K 60, two aces 30 = 125; 1000 for ace-to-ace, not 200 nor 500
    assert s.rep._t.score()[0].canastra_bonus == 1000
    assert s.rep._t.score()[0].table_points == 125 == pts(name, run)


# -- vulnerability is each side's own, from its own total (RULES.md §10) ---------------------


@pytest.mark.parametrize("name", CLASSIC_FAMILY)
def test_three_players_only_the_sides_at_half_the_target_need_75(name: str) -> None:
    # Totals 750, 749 and 1000 (half of 1500 is 750): sides 0 and 2 are vulnerable, side 1
    # is not. Seat 0's 30-point opening is refused at the turn's end and taken back; seat 1
    # opens with 15; seat 2 with exactly 75 (three aces 45 and three queens 30).
    s = carried(Scenario(name, 3, hands={0: "Kc Kd Ks 9c", 1: "3c 3d 3s 9d",
                                         2: "Ac Ad As Qc Qd Qs 9s"},
                         stock="8c 8d 8s", mortos={}), (750, 749, 1000))
    assert s.state.vulnerable == (True, False, True)
    s.draw("8c").meld("Kc Kd Ks")
    refused(s, "vulnerable.opening_too_low", "discard", "9c")
    s.retract().discard("9c")
    s.draw("8d").meld("3c 3d 3s").discard("9d")
    s.draw("8s").meld("Ac Ad As")
    refused(s, "vulnerable.opening_too_low", "discard", "9s")
    s.meld("Qc Qd Qs").discard("9s")
    assert s.state.opened == (False, True, True)
    assert s.state.opening_min == (90, 75, 75)


# -- going out by a discard earns the going-out bonus (RULES.md §7, §9) ----------------------


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_going_out_with_a_discard_after_the_morto_earns_the_bonus(name: str) -> None:
    # As the first hand, but seat 0 lays eleven of the twelve cards of its second turn and
    # throws 8c: "Baixe ou descarte a última carta para bater" (001). The thrown card is
    # neither on the table nor in hand.
    run, hand0 = first_hand(name)
    s = Scenario(name, hands={0: hand0}, stock="Kh 5s 8c",
                 mortos={0: "Ts Td Tc Js Jd Jc Qs Qd Qc Ks Kd"})
    s.draw("Kh").meld(run).meld("Ks Kd Kc Kh").discard("4c").morto(direct=False)
    s.pass_turn()
    s.draw("8c").meld("Ts Td Tc").meld("Js Jd Jc").meld("Qs Qd Qc").layoff(1, "Ks Kd")
    s.discard("8c").go_out()
    # run, six kings 60, tens, jacks, queens 30 each; clean 200; out; relancinho of the
    # first turn where the preset has one.
    side0 = (25 + 10 * (len(run.split()) - 5) + 60 + 90 + 200 + GOING_OUT[name]
             + RELANCINHO.get(name, 0))
    side1 = -pts(name, s.hand(1)) - MORTO_NOT_TAKEN[name]
    refused(s, "score.mismatch", "end_hand", "went_out", (side0 - GOING_OUT[name], side1))
    s.end_hand("went_out", (side0, side1))


@pytest.mark.parametrize("name", CLASSIC_FAMILY)
def test_a_relancinho_after_the_first_turn_redraw(name: str) -> None:
    # The first player rejects 5d (it goes face up on the pile, and may not be taken back
    # that turn), draws Qs instead and lays the whole hand: a relancinho all the same. The
    # rejected card is on no side's table and in no hand.
    s = Scenario(name, hands={0: "3h 4h 5h 6h 7h 8h 9h Kc Kd Ks 4c"}, stock="5d Kh",
                 mortos={0: MORTO})
    s.draw("5d").reject("5d")
    refused(s, "draw.redraw_from_stock", "take_pile")
    s.draw("Kh").meld("3h 4h 5h 6h 7h 8h 9h").meld("Kc Kd Ks Kh").discard("4c")
    assert s.state.pile == parse_cards("5d 4c")
    if name == "classic":
        s.go_out()
        opp = pts(name, s.hand(1))
        # run 45, kings 40, clean 200, out 50, relancinho 100
        s.end_hand("went_out", (435, -opp))
    else:
        s.morto(direct=False)
    assert s.state.relancinho == (1, 0)
