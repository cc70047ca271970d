"""RULES.md read section by section as an outside checker would, for every preset: for each
rule a short hand that is accepted and one that is refused with its exact rule id, and whole
hands scored by hand from RULES.md §9's tables (the sums are in the comments and the tables
below; `spec_points` is the card table written from the spec, never from the presets).

The corners: an ace low and high, a run that would wrap, a wild at either end of a run, a
canastra of seven with a wild, two wilds in one meld, a lay-off on a partner's meld, going
out by a discard and by melding, the morto taken mid-turn and play going on, the last card of
the stock, and a pile whose top card must be used at once.
"""

from __future__ import annotations

import pytest

from buraco_log.cards import format_cards, parse_cards
from buraco_log.melds import MeldError, read_meld
from buraco_log.rules import preset
from buraco_log.wilds import wild_place
from tests.scenario import Scenario, carried_in, refused
from tests.spec_points import spec_points

PRESETS = ("classic", "biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
           "burako")
JOKERS = ("thirteen", "thirteen-quick", "burraco", "mega", "burako")
MORTO = PRESETS[1:]
THIRTEEN = ("thirteen", "thirteen-quick")
UPCARD = ("thirteen", "thirteen-quick", "burraco", "mega")


def wild(name: str) -> str:
    """A wild of the preset that is no 2 of the suits the scenarios use for runs (♥, ♠)."""
    return "JK" if name in JOKERS else "2c"


def other_wild(name: str) -> str:
    """A second wild beside :func:`wild`'s: the 2♦ (the first is a joker, or the 2♣)."""
    return "2d"


def drawn(s: Scenario) -> str:
    card = s.rep._t.drawn
    assert card is not None
    return format_cards((card,), "ascii")


def upcard(name: str) -> str | None:
    """A harmless upcard where the preset turns one up (a 10♦ fits nothing the hands hold)."""
    return "Td" if name in UPCARD else None


# ------------------------------------------------------------------ §5 melds, every preset


@pytest.mark.parametrize("name", PRESETS)
def test_an_ace_is_low_or_high_and_a_run_never_wraps(name: str) -> None:
    s = Scenario(name, hands={0: "As 2s 3s Qh Kh Ah Kd Ad 3d 7c"}, upcard=upcard(name))
    s.draw()
    # K-A-3 turns the corner at the ace: refused in every preset (RULES.md §5)
    refused(s, "meld.run_wraps", (), "meld", "Kd Ad 3d")
    s.meld("As 2s 3s")  # the ace low, the 2 natural in its own place: clean
    s.meld("Qh Kh Ah")  # the ace high
    low, high = (s.state.melds[0][i] for i in (0, 1))
    assert low.kind == high.kind == "run"
    assert wild_place(low.cards, s.rules) is None  # A-2-3 holds no wild
    assert wild_place(high.cards, s.rules) is None


@pytest.mark.parametrize("name", PRESETS)
def test_k_a_2_is_q_k_a_with_the_2_as_the_queen(name: str) -> None:
    """RULES.md §5: K♠ A♠ 2♠ is no wrap read with the 2 wild standing for the queen."""
    s = Scenario(name, hands={0: "Ks As 2s"}, upcard=upcard(name))
    s.draw().meld("Ks As 2s")
    place = wild_place(s.state.melds[0][0].cards, s.rules)
    assert place is not None and place.card == parse_cards("2s")[0]
    assert place.ranks == (12,)  # the queen, the only place it can stand


@pytest.mark.parametrize("name", PRESETS)
def test_a_wild_at_either_end_of_a_run_and_never_a_second(name: str) -> None:
    w = wild(name)
    s = Scenario(name, hands={0: f"5h 6h 7h {w} 4h 8h {other_wild(name)}"}, upcard=upcard(name))
    s.draw()
    s.meld(f"5h 6h 7h {w}")
    place = wild_place(s.state.melds[0][0].cards, s.rules)
    assert place is not None and place.kind == "end" and set(place.ranks) == {4, 8}
    s.layoff(0, "4h")  # the wild can still stand at either end: the 3 or the 8
    s.layoff(0, "8h")  # now the 3 or the 9
    place = wild_place(s.state.melds[0][0].cards, s.rules)
    assert place is not None and set(place.ranks) == {3, 9}
    refused(s, "meld.too_many_wilds", (), "layoff", 0, other_wild(name))


@pytest.mark.parametrize("name", PRESETS)
def test_two_wilds_in_one_new_meld_are_refused(name: str) -> None:
    w1 = wild(name)
    w2 = "2h" if name in JOKERS else "2d"  # JK + a 2 of another suit, or two 2s
    s = Scenario(name, hands={0: f"9s Ts {w1} {w2} 9h 9d"}, upcard=upcard(name))
    s.draw()
    refused(s, "meld.too_many_wilds", (), "meld", f"9s Ts {w1} {w2}")
    refused(s, "meld.too_many_wilds", (), "meld", f"9h 9d {w1} {w2}")
    s.meld(f"9s Ts {w1}")


@pytest.mark.parametrize("name", PRESETS)
def test_the_wild_in_the_gap_moves_to_an_end(name: str) -> None:
    """`002`: 3-4-JK-6-7 + 5 becomes JK-3-4-5-6-7 (RULES.md §5)."""
    w = wild(name)
    s = Scenario(name, hands={0: f"3h 4h {w} 6h 7h 5h"}, upcard=upcard(name))
    s.draw().meld(f"3h 4h {w} 6h 7h")
    place = wild_place(s.state.melds[0][0].cards, s.rules)
    assert place is not None and place.kind == "gap" and place.ranks == (5,)
    s.layoff(0, "5h")
    place = wild_place(s.state.melds[0][0].cards, s.rules)
    assert place is not None and place.kind == "end" and set(place.ranks) == {2, 8}


@pytest.mark.parametrize("name", PRESETS)
def test_a_canastra_of_seven_with_a_wild(name: str) -> None:
    """RULES.md §6: seven cards with one wild are a dirty canastra (no seven naturals in a
    row for burraco's semi-clean); a set of seven is none in mega (runs only)."""
    w = wild(name)
    s = Scenario(name, hands={0: f"4h 5h 6h 7h 8h {w} 3h"}, upcard=upcard(name))
    s.draw()
    s.meld(f"4h 5h 6h 7h 8h {w}")
    assert s.state.melds[0][0].canastra is None  # six: no canastra
    s.layoff(0, "3h")
    assert s.state.melds[0][0].canastra == "dirty"
    other = "2d" if name not in JOKERS else "2c"
    s2 = Scenario(name, hands={0: f"Kc Kd Kh Ks Kc Kd {other}"}, upcard=upcard(name))
    s2.draw().meld(f"Kc Kd Kh Ks Kc Kd {other}")
    assert s2.state.melds[0][0].canastra == (None if name == "mega" else "dirty")


def test_semi_clean_as_rules_md_gives_it() -> None:
    """RULES.md §6 (burraco): A-W-3-4-5-6-7-8-9 holds 3..9 unbroken, semi-clean;
    3-4-5-6-W-8-9-10 has no seven in a row, dirty, until the 7 sends the wild to an end
    (a canastra changes class as cards are added)."""
    s = Scenario("burraco", hands={0: "Ah JK 3h 4h 5h 6h 7h 8h 9h 5c", 1: "3s 4s 5s 6s 8s 9s Ts"},
                 stock="Kd 2d 9d 7s")
    s.draw().meld("Ah JK 3h 4h 5h 6h 7h 8h 9h")
    assert s.state.melds[0][0].canastra == "semi_clean"
    s.discard("Kd")
    s.draw().meld("3s 4s 5s 6s 2d 8s 9s Ts")  # the 2♦ as the 7
    assert s.state.melds[1][0].canastra == "dirty"
    s.discard(format_cards((s.hand(1)[0],), "ascii"))
    s.pass_turn()
    s.draw().layoff(0, "7s")
    assert s.state.melds[1][0].canastra == "semi_clean"


@pytest.mark.parametrize("name", PRESETS)
def test_no_set_of_twos(name: str) -> None:
    s = Scenario(name, hands={0: "2c 2d 2h 7c 7d"}, upcard=upcard(name))
    s.draw()
    refused(s, "meld.set_of_twos", (), "meld", "2c 2d 2h")
    s.meld("7c 7d 2h")  # a 2 as the wild of a set of sevens


@pytest.mark.parametrize("name", PRESETS)
def test_one_set_per_rank_only_in_mega(name: str) -> None:
    s = Scenario(name, hands={0: "7c 7d 7h 7s 7c 7d"}, upcard=upcard(name))
    s.draw().meld("7c 7d 7h")
    if name == "mega":
        refused(s, "meld.second_set_of_rank", (), "meld", "7s 7c 7d")
        s.layoff(0, "7s 7c 7d")  # the same cards on the set it has: allowed
    else:
        s.meld("7s 7c 7d")


ACE_TO_ACE = "As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks As"


@pytest.mark.parametrize("name", PRESETS)
def test_both_aces_in_one_run_only_in_burako(name: str) -> None:
    """RULES.md §5: A..K..A (14) only with `ace_both_ends` (burako); `001`'s 14 is read as 13.
    The 13-card presets show it in a log (fourteen cards after the draw); burako's is laid in
    the royal test below."""
    cards = parse_cards(ACE_TO_ACE)
    if name == "burako":
        assert read_meld(cards, preset(name)).canastra == "ace_to_ace"
    else:
        with pytest.raises(MeldError) as info:
            read_meld(cards, preset(name))
        assert info.value.rule == "meld.duplicate_in_run"
    if name in THIRTEEN:
        s = Scenario(name, hands={0: ACE_TO_ACE.rsplit(" ", 1)[0]}, stock="As",
                     upcard=upcard(name))
        s.draw()
        refused(s, "meld.duplicate_in_run", (), "meld", ACE_TO_ACE)
        s.meld("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks")  # A..K, 13 cards: clean
        assert s.state.melds[0][0].canastra == "clean"


SEAT1 = "2c Ac Kc 9c 7c 5c 3c Ks 9s 7s 5s"  # 90 (burraco 100: its 2 is 20)
SEAT1_13 = SEAT1 + " Js 3s"  # 105 (burraco 115)


def test_burako_royal_then_ace_to_ace_scored_by_hand() -> None:
    """RULES.md §6, §9 (burako): a clean run A..K is royal (500), with the second ace
    ace-to-ace (1000), in place of the clean 200; after its indirect morto the taker goes
    out by melding (`004` "Final")."""
    morto = "Qs Ks As 3c 3d 3h 4c 4d 4h 9c 9d"
    s = Scenario("burako", hands={0: "As 2s 3s 4s 5s 6s 7s 8s 9s Ts 5c", 1: SEAT1},
                 mortos={0: morto}, stock="Js 6d 9h")
    s.draw().meld("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js")
    assert s.state.melds[0][0].canastra == "clean"
    s.discard("5c").morto(direct=False)
    s.draw().discard("6d")  # seat 1
    s.draw()  # 9h
    s.layoff(0, "Qs Ks")
    assert s.state.melds[0][0].canastra == "royal"
    s.layoff(0, "As")
    assert s.state.melds[0][0].canastra == "ace_to_ace"
    s.meld("3c 3d 3h").meld("4c 4d 4h").meld("9c 9d 9h").go_out()
    # side 0: the run A..K..A 15+15 + 10 (the 2) + 5*5 (3..7) + 6*10 (8..K) = 110... by the
    # table: As As 30, 2s 10, 3s..7s 25, 8s..Ks 60 -> 125; sets 15 + 15 + 30 = 60;
    # ace-to-ace 1000; going out 100: 1285.
    # side 1: its hand 90, its morto never taken 100: -190.
    table = spec_points("burako", ACE_TO_ACE) + spec_points("burako", "3c 3d 3h 4c 4d 4h 9c 9d 9h")
    assert table == 185
    want = (185 + 1000 + 100, -spec_points("burako", SEAT1) - 100)
    assert want == (1285, -190)
    refused(s, "score.mismatch", ("side 0",), "end_hand", "went_out", (185 + 200 + 100, -190))
    s.end_hand("went_out", want)
    assert s.state.results[0].scores[0].canastras == {"ace_to_ace": 1}


# ------------------------------------------------------------------ §7, §9: a whole hand out
#
# Seat 0 holds 3♥..9♥ and four queens, draws a fifth queen and lays everything down in its
# first turn: a clean run canastra (in every preset) and a set of five queens (thirteen:
# fourteen cards, seven queens, a second clean canastra). Without a morto (classic) that is
# going out; with one, the morto taken directly (burako: by discarding the fifth queen,
# indirectly), then played: J♣ J♦ J♥ J♠, 8♣ 8♦ 8♠, 4♠ 4♦ 4♣ and the last card discarded
# (6♣) or melded (4♥). Seat 1 never melds.
#
# Card points by RULES.md §9: run 3..9 = 5*5 + 10 + 10 = 45; five queens 50 (seven 70);
# J x4 40, 8 x3 30, 4 x3 15 (x4 20).
#   classic    meld out  45 + 50 + 200 clean + 50 out + 100 relancinho = 445
#              discard   45 + 40 (Q x4, the fifth discarded) + 200 + 50 + 100 = 435
#   biriba,    discard   45 + 50 + 40 + 30 + 15 = 180 + 200 + 50 + 100 relancinho = 530
#   bossa-nova meld      185 + 200 + 50 + 100 = 535
#   thirteen   discard   45 + 70 + 85 = 200 + 400 (two clean) + 100 out = 700
#              meld      205 + 400 + 100 = 705
#   burraco    discard   180 + 200 + 100 = 480;  meld 185 + 200 + 100 = 485
#   mega       the same: the queens are a set, no canastra in mega (480 / 485)
#   burako     indirect: Q x4 40, the morto next turn with the drawn 4♥ (discard 6♣):
#              45 + 40 + 40 + 30 + 20 = 175 + 200 + 100 = 475; meld (drawn 8♥, 8 x4,
#              4 x4): 45 + 40 + 40 + 40 + 20 = 185 + 200 + 100 = 485
# Seat 1: SEAT1 90 (burraco 100, its 2♣ is 20), 13-card hands 105; morto never taken
# -100 but in classic.
OUT_SCORES = {
    ("classic", "meld"): (445, -90), ("classic", "discard"): (435, -90),
    ("biriba", "discard"): (530, -190), ("biriba", "meld"): (535, -190),
    ("bossa-nova", "discard"): (530, -190), ("bossa-nova", "meld"): (535, -190),
    ("thirteen", "discard"): (700, -205), ("thirteen", "meld"): (705, -205),
    ("thirteen-quick", "discard"): (700, -205), ("thirteen-quick", "meld"): (705, -205),
    ("burraco", "discard"): (480, -200), ("burraco", "meld"): (485, -200),
    ("mega", "discard"): (480, -190), ("mega", "meld"): (485, -190),
    ("burako", "discard"): (475, -190), ("burako", "meld"): (485, -190),
}
RUN = "3h 4h 5h 6h 7h 8h 9h"


def out_hand(name: str, by: str) -> Scenario:
    thirteen = name in THIRTEEN
    queens = "Qc Qd Qs Qh Qc Qd" if thirteen else "Qc Qd Qs Qh"
    last = "4h" if by == "meld" else "6c"
    morto = f"Jc Jd Jh Js 8c 8d 8s 4s 4d 4c {last}"
    # burako: the Q♠ drawn, seat 1's 6♦, then the card its taker draws to play the morto
    stock = f"Qs 6d {'8h' if by == 'meld' else '4h'}" if name == "burako" else "Qs"
    return Scenario(name, hands={0: f"{RUN} {queens}", 1: SEAT1_13 if thirteen else SEAT1},
                    mortos={0: morto} if name in MORTO else None, stock=stock,
                    upcard=upcard(name))


@pytest.mark.parametrize(("name", "by"), list(OUT_SCORES))
def test_going_out_by_melding_or_by_a_discard_scored_by_hand(name: str, by: str) -> None:
    s = out_hand(name, by)
    s.draw()  # the fifth (seventh) queen
    s.meld(RUN)
    queens = "Qc Qd Qs Qh Qc Qd Qs" if name in THIRTEEN else "Qc Qd Qs Qh Qs"
    if name == "classic":
        if by == "meld":
            s.meld(queens)
        else:
            s.meld("Qc Qd Qs Qh").discard("Qs")
        s.go_out()
    elif name == "burako":
        s.meld("Qc Qd Qs Qh")
        refused(s, "morto.indirect_only", (), "layoff", 1, "Qs")  # emptying by melding
        s.discard("Qs").morto(direct=False)
        s.draw().discard("6d")  # seat 1
        s.draw()
        if by == "meld":
            s.meld("Jc Jd Jh Js").meld("8c 8d 8s 8h").meld("4s 4d 4c 4h")
        else:
            s.meld("Jc Jd Jh Js").meld("8c 8d 8s").meld("4s 4d 4c 4h").discard("6c")
        s.go_out()
    else:
        s.meld(queens)
        # emptied by melding: the morto is taken directly, and the turn goes on
        refused(s, "morto.wrong_kind", (), "morto", False)
        refused(s, "go_out.morto_first", (), "go_out")
        s.morto(direct=True)
        refused(s, "turn.already_drew", (), "draw")  # no draw after a direct morto
        s.meld("Jc Jd Jh Js").meld("8c 8d 8s")
        if by == "meld":
            s.meld("4s 4d 4c 4h")
        else:
            s.meld("4s 4d 4c").discard("6c")
        s.go_out()
    want = OUT_SCORES[(name, by)]
    seat1 = SEAT1_13 if name in THIRTEEN else SEAT1
    assert want[1] == -spec_points(name, seat1) - (100 if name in MORTO else 0)
    for side in (0, 1):
        off = tuple(w + (5 if i == side else 0) for i, w in enumerate(want))
        refused(s, "score.mismatch", (f"side {side}",), "end_hand", "went_out", off)
    s.end_hand("went_out", want)
    assert s.state.totals == want


# ------------------------------------------------------------------ §2, §4: the side's melds


@pytest.mark.parametrize("name", PRESETS)
def test_a_lay_off_on_the_partners_meld_never_the_opponents(name: str) -> None:
    """RULES.md §2, §4: melds belong to the side; a player lays off on the partner's, and an
    opponent's meld is no meld of the player's side (`layoff.no_such_meld`)."""
    w = wild(name)
    s = Scenario(name, 4, hands={0: "7c 7d 7h 3s", 1: "7s 4s",
                                 2: f"7s {w} 8h {other_wild(name)}"}, upcard=upcard(name))
    s.draw().meld("7c 7d 7h").discard("3s")
    s.draw()  # seat 1: side 1 has no meld 0
    refused(s, "layoff.no_such_meld", ("no meld 0",), "layoff", 0, "7s")
    s.discard("4s")
    s.draw().layoff(0, f"7s {w}")  # seat 2 on seat 0's set: one wild
    meld = s.state.melds[0][0]
    assert meld.laid_by == 0 and len(meld.cards) == 5
    refused(s, "meld.too_many_wilds", (), "layoff", 0, other_wild(name))
    s.discard("8h")


def test_six_players_lay_off_on_either_partners_meld() -> None:
    """RULES.md §2: six players (classic) are two sides of three on alternate seats."""
    s = Scenario("classic", 6, hands={0: "7c 7d 7h 3s", 2: "7s 4s", 4: "7c 5s", 3: "7d 6s"})
    s.draw().meld("7c 7d 7h").discard("3s")
    s.pass_turn()
    s.draw().layoff(0, "7s").discard("4s")
    s.draw()  # seat 3, side 1
    refused(s, "layoff.no_such_meld", (), "layoff", 0, "7d")
    s.discard("6s")
    s.draw().layoff(0, "7c").discard("5s")
    assert len(s.state.melds[0][0].cards) == 5


# ------------------------------------------------------------------ §4: drawing


@pytest.mark.parametrize("name", PRESETS)
def test_the_whole_pile_and_the_first_turn_redraw(name: str) -> None:
    s = Scenario(name, hands={0: "3s 4d", 1: "5c"}, stock="9h Kd 6c", upcard=upcard(name))
    s.draw()
    if name in ("classic", "biriba", "bossa-nova"):
        s.reject("9h")  # face up on the pile; the next stock card instead
        refused(s, "draw.redraw_from_stock", (), "take_pile")
        s.draw("Kd")
        refused(s, "draw.redraw_only_first", (), "reject", "Kd")
        s.discard("3s")
    else:
        refused(s, "draw.redraw_not_allowed", (), "reject", "9h")
        s.discard("3s")
    if name in THIRTEEN:
        return  # the pickup under must-use-top: below
    refused(s, "pile.whole_pile", (), "take_pile", len(s.state.pile) + 1)
    s.take_pile()  # free: whatever the top
    assert s.state.pile == ()


def thirteen_hand(name: str, top: str, seat1: str) -> Scenario:
    return Scenario(name, hands={0: "Kc Kd 3c 5c 7c 9c Jc 4d 6d 8d Td Qd Ah", 1: seat1},
                    upcard=top)


@pytest.mark.parametrize("name", THIRTEEN)
def test_the_pile_top_must_be_used_at_once(name: str) -> None:
    """RULES.md §4 (`001`): the pile only when its top card is used that turn, laid off or
    in a new meld with two cards of the hand; the turn cannot end before it is laid."""
    s = thirteen_hand(name, "Kh", "3s")
    s.take_pile()  # K♣ K♦ in hand take the K♥
    refused(s, "pile.must_use_top", ("Kh",), "discard", "3c")
    s.meld("Kc Kd Kh").discard("3c")
    # a top card nothing in the hand takes (A♠ beside no ♠ and one other ace)
    s2 = thirteen_hand(name, "As", "3s")
    refused(s2, "pile.must_use_top", ("As",), "take_pile")
    s2.draw()


@pytest.mark.parametrize("name", THIRTEEN)
def test_the_pile_top_laid_off_on_a_meld_of_the_side(name: str) -> None:
    """The top card used by a lay-off alone (RULES.md §4): a J♣ fits nothing of side 1 (a
    set of nines, a run of spades, a hand with no jack and no club beside it), a 7♠ goes on
    the run."""
    s = Scenario(name, hands={0: "Kc Kd 3c 5c 7c 9c Jc 4d 6d 8d Td Qd 7s",
                              1: "9h 9d 9c 4s 5s 6s 3h 5h 7h Th Qh Kd 8c"}, upcard="Ad")
    s.draw().discard("Jc")
    refused(s, "pile.must_use_top", ("Jc",), "take_pile")
    s.draw().meld("9h 9d 9c").meld("4s 5s 6s").discard(drawn(s))
    s.draw().discard("7s")
    s.take_pile()
    refused(s, "pile.must_use_top", ("7s",), "discard", "3h")
    s.layoff(1, "7s").discard("3h")
    assert len(s.state.melds[1][1].cards) == 4


# ------------------------------------------------------------------ §8: the last card of the stock


@pytest.mark.parametrize("name", PRESETS)
def test_the_last_card_of_the_stock(name: str) -> None:
    """RULES.md §8: the player who draws the last card (the last above the floor: 2 in
    mega) plays the turn out; the next one cannot draw, and the hand ends unless that
    player takes the pile (under must-use-top: unless the top can be used)."""
    hands = {0: "Kc Kd 3c 5c 7c 9c Jc 4d 6d 8d Td", 1: "Ks Kh 4s 6s 8s Ts Qs 3h 5h 7h 9h"}
    if name in THIRTEEN:
        hands = {0: hands[0] + " Qd Ah", 1: hands[1] + " Jh 3d"}
    s = Scenario(name, hands=hands, upcard=upcard(name))
    floor = 2 if name == "mega" else 0
    while len(s.state.stock) > floor + 1:
        s.pass_turn()
    last_seat = s.turn
    s.draw()  # the last card above the floor
    assert len(s.state.stock) == floor
    throw = "Kc" if last_seat == 0 else "Ks"  # the other seat holds two kings
    s.discard(throw)
    refused(s, "stock.floor_reached", (), "draw", "5c")
    if name in THIRTEEN:
        refused(s, "stock.pile_can_be_taken", (), "end_hand", "stock_out")
        s.take_pile()
        kings = "Ks Kh" if last_seat == 0 else "Kc Kd"
        s.meld(f"{kings} {throw}")
        s.discard(format_cards((s.hand(s.turn)[0],), "ascii"))  # the next faces the floor
        refused(s, "stock.floor_reached", (), "draw", "5c")
        return
    s.end_hand("stock_out")  # a free pile: the player need not take it
    result = s.state.results[0]
    assert result.reason == "stock_out" and result.went_out is None
    morto = 100 if name in MORTO else 0
    for side, seat in ((0, 0), (1, 1)):
        assert result.scores[side].total == -spec_points(name, s.hand(seat)) - morto


# ------------------------------------------------------------------ §7: the morto voided
#
# Both seats take their morto indirectly (burako's only way), each laying a clean run
# canastra first (bossa-nova's morto needs one): seat 1 first, then seat 0; seat 1 plays its
# morto next turn and goes out before seat 0 plays again, so seat 0's morto counts as not
# taken (RULES.md §7: "an opponent ends the hand by going out before that player's next
# turn"): its cards count for nobody and side 0 pays the 100. Relancinhos (biriba,
# bossa-nova) are both noted, seat 0's standing though its morto is voided (§7 decision).
#
#   side 1: run 3♠..9♠ 45, jacks (x4; 13-card x6) 40 / 60, then K x4 40, A x3 45, 4 x4 20:
#           190 (13-card 210) + clean 200 + going out (50 classic family, else 100)
#           + relancinho 100 (biriba, bossa-nova)
#   side 0: run 3♥..9♥ 45 + queens x4 40 (13-card x6 60) = 85 (105) + clean 200
#           + relancinho 100 (biriba, bossa-nova) - morto 100
VOIDED = {
    "biriba": (85 + 200 + 100 - 100, 190 + 200 + 50 + 100),  # (285, 540)
    "bossa-nova": (85 + 200 + 100 - 100, 190 + 200 + 50 + 100),  # (285, 540)
    "thirteen": (105 + 200 - 100, 210 + 200 + 100),  # (205, 510)
    "thirteen-quick": (105 + 200 - 100, 210 + 200 + 100),  # (205, 510)
    "burraco": (85 + 200 - 100, 190 + 200 + 100),  # (185, 490)
    "mega": (85 + 200 - 100, 190 + 200 + 100),  # (185, 490)
    "burako": (85 + 200 - 100, 190 + 200 + 100),  # (185, 490)
}


@pytest.mark.parametrize("name", MORTO)
def test_an_indirect_morto_voided_by_the_opponent_going_out(name: str) -> None:
    thirteen = name in THIRTEEN
    queens = "Qc Qd Qs Qh Qc" if thirteen else "Qc Qd Qs"
    jacks = "Jc Jd Jh Jc Jd" if thirteen else "Jc Jd Jh"
    s = Scenario(name, hands={0: f"{RUN} {queens} 5c", 1: f"3s 4s 5s 6s 7s 8s 9s {jacks} 6c"},
                 mortos={1: "Kc Kd Kh Ac Ad Ah 4c 4d 4h 4s 5d"},
                 stock=f"Td Js {'Qd' if thirteen else 'Qh'} Ks", upcard=upcard(name))
    s.draw().discard("Td")
    s.draw().meld("3s 4s 5s 6s 7s 8s 9s").meld(f"{jacks} Js").discard("6c").morto(False)
    s.draw().meld(RUN).meld(f"{queens} {'Qd' if thirteen else 'Qh'}").discard("5c")
    s.morto(False)
    assert s.state.morto_pending == (0, None)
    s.draw().meld("Kc Kd Kh Ks").meld("Ac Ad Ah").meld("4c 4d 4h 4s").discard("5d").go_out()
    want = VOIDED[name]
    refused(s, "score.mismatch", ("side 0",), "end_hand", "went_out",
            (want[0] + spec_points(name, s.hand(0)), want[1]))  # the morto counted in hand
    s.end_hand("went_out", want)
    side0 = s.state.results[0].scores[0]
    assert side0.morto_penalty == 100 and side0.hand_penalty == 0


# ------------------------------------------------------------------ §7: going out needs ...
#
# Seat 0 lays its whole hand in sets (no canastra: four queens, four fives, three or five
# sevens) and throws the 9♠: with a morto that takes it indirectly (bossa-nova: refused, no
# canastra for the morto, at the meld that would keep one card to throw); without (classic),
# it goes out. Its morto is K♣ K♦ K♥ J♣ J♦ J♥ 4♣ 4♦ 4♥ 4♠ 6♣; next turn, with K♠ drawn, the
# fours laid keeping the 6♣ alone are refused where going out needs a canastra
# (`go_out.needs_canastra`), and accepted in biriba, which goes out without one.


@pytest.mark.parametrize("name", PRESETS)
def test_going_out_and_the_morto_without_a_canastra(name: str) -> None:
    thirteen = name in THIRTEEN
    sevens = "7c 7d 7s 7h 7d" if thirteen else "7c 7d 7s"
    fives = "5c 5d 5s 5h"
    s = Scenario(name, hands={0: f"Qc Qd Qs Qh {fives} {sevens}", 1: SEAT1_13 if thirteen
                              else SEAT1},
                 mortos={0: "Kc Kd Kh Jc Jd Jh 4c 4d 4h 4s 6c"} if name in MORTO else None,
                 stock="9s 8d Ks", upcard=upcard(name))
    s.draw().meld("Qc Qd Qs Qh").meld(fives)
    if name == "bossa-nova":
        refused(s, "morto.needs_canastra", (), "meld", sevens)
        return
    s.meld(sevens).discard("9s")
    if name == "classic":
        s.go_out()
        # Q x4 40 + 5 x4 20 + 7 x3 15 = 75, going out 50, relancinho 100; seat 1 -90
        s.end_hand("went_out", (75 + 50 + 100, -90))
        return
    s.morto(False)
    s.pass_turn()
    s.draw()
    s.meld("Kc Kd Kh Ks").meld("Jc Jd Jh")
    if name != "biriba":
        refused(s, "go_out.needs_canastra", (), "meld", "4c 4d 4h 4s")
        s.meld("4c 4d 4h").discard("6c")
        assert s.hand(0) == parse_cards("4s")
        return
    s.meld("4c 4d 4h 4s").discard("6c").go_out()
    # biriba: Q 40 + 5 20 + 7 15 + K 40 + J 30 + 4 20 = 165, out 50, relancinho 100;
    # seat 1: -90 and its morto -100
    s.end_hand("went_out", (165 + 50 + 100, -190))


# ------------------------------------------------------------------ §10: vulnerability


@pytest.mark.parametrize("name", PRESETS)
def test_a_vulnerable_side_opens_with_75_then_90(name: str) -> None:
    """RULES.md §10 (classic family): a side at half the target or more (750) opens with 75
    card points in one turn; one that lays less takes the cards back and then needs 90.
    Presets without vulnerability ask nothing at any total."""
    target = preset(name).target_score
    hand = "Kc Kd Kh Qc Qd Qh 8c 8d 8h 3s 4d" + (" 5s 6d" if name in THIRTEEN else "")
    s = carried_in(Scenario(name, hands={0: hand}, stock="5c", upcard=upcard(name)),
                   (target // 2, 0))
    s.draw().meld("8c 8d 8h")  # 30 points
    if name not in ("classic", "biriba", "bossa-nova"):
        s.discard("5c")
        return
    refused(s, "vulnerable.opening_too_low", ("75", "30"), "discard", "5c")
    s.retract()
    s.meld("Kc Kd Kh").meld("Qc Qd Qh")  # 60: short of the 90 now asked
    refused(s, "vulnerable.opening_too_low", ("90", "60"), "discard", "5c")
    s.retract()
    s.meld("Kc Kd Kh").meld("Qc Qd Qh").meld("8c 8d 8h").discard("5c")  # 90
    # one point below half the target: not vulnerable, 30 opens
    s2 = carried_in(Scenario(name, hands={0: hand}, stock="5c", upcard=upcard(name)),
                    (target // 2 - 1, 0))
    s2.draw().meld("8c 8d 8h").discard("5c")
    # exactly 75 opens a vulnerable side
    s3 = carried_in(Scenario(name, hands={0: "Kc Kd Kh 8c 8d 8h 5s 5d 5h 3s 4d"}, stock="7c"),
                    (target // 2, 0))
    s3.draw().meld("Kc Kd Kh").meld("8c 8d 8h").meld("5s 5d 5h")  # 30 + 30 + 15
    s3.discard("7c")


# ------------------------------------------------------------------ §10: the match target

TARGET = {"classic": 1500, "biriba": 1500, "bossa-nova": 1500, "thirteen": 2005,
          "thirteen-quick": 1005, "burraco": 2005, "mega": 3000, "burako": 3000}


@pytest.mark.parametrize("name", PRESETS)
@pytest.mark.parametrize("short", [0, 1])
def test_the_hand_that_reaches_the_target_ends_the_match(name: str, short: int) -> None:
    """RULES.md §10: the match ends after the hand in which a side reaches its target
    (`target_score`, the table above written from RULES.md) with the highest total; one
    point short, it plays on."""
    assert preset(name).target_score == TARGET[name]
    want = OUT_SCORES[(name, "meld")]
    s = carried_in(out_hand(name, "meld"), (TARGET[name] - want[0] - short, 0))
    s.draw().meld(RUN)
    if name == "classic":
        s.meld("Qc Qd Qs Qh Qs").go_out()
    elif name == "burako":
        s.meld("Qc Qd Qs Qh").discard("Qs").morto(direct=False)
        s.draw().discard("6d")
        s.draw().meld("Jc Jd Jh Js").meld("8c 8d 8s 8h").meld("4s 4d 4c 4h").go_out()
    else:
        s.meld("Qc Qd Qs Qh Qc Qd Qs" if name in THIRTEEN else "Qc Qd Qs Qh Qs")
        s.morto(direct=True)
        s.meld("Jc Jd Jh Js").meld("8c 8d 8s").meld("4s 4d 4c 4h").go_out()
    s.end_hand("went_out", want)
    totals = (TARGET[name] - short, want[1])
    assert s.state.totals == totals
    if short:
        refused(s, "match.not_over", (), "end_match")
        assert s.state.phase == "between"
        return
    assert s.state.winner == 0
    refused(s, "match.wrong_winner", (), "end_match", winner=1)
    s.end_match(winner=0, totals=totals)


# ------------------------------------------------------------------ §2, §9: three sides

SEAT2 = "Ah Kh 6s 8c Tc Qd 4h 6h 8h Th Jd"  # 15 + 10 + 5 + 10 + 10 + 10 + 5 + 5 + 10 + 10 + 10


@pytest.mark.parametrize("name", ["classic", "biriba", "bossa-nova"])
def test_three_players_are_three_sides(name: str) -> None:
    """RULES.md §2: with 3 players each is a side, with a morto each (§3); the one who goes
    out scores as in the two-player hand above, each other side pays its own hand and, with
    a morto, its 100."""
    assert spec_points(name, SEAT2) == 100
    s = Scenario(name, 3, hands={0: f"{RUN} Qc Qd Qs Qh", 1: SEAT1, 2: SEAT2},
                 mortos={0: "Jc Jd Jh Js 8c 8d 8s 4s 4d 4c 6c"} if name != "classic" else None,
                 stock="Qs")
    s.draw().meld(RUN).meld("Qc Qd Qs Qh Qs")
    if name != "classic":
        s.morto(direct=True)
        s.meld("Jc Jd Jh Js").meld("8c 8d 8s").meld("4s 4d 4c").discard("6c")
    s.go_out()
    # OUT_SCORES' hands for seat 0; seats 1 and 2 their hands, and their mortos
    want = (445, -90, -100) if name == "classic" else (530, -90 - 100, -100 - 100)
    refused(s, "score.mismatch", ("side 2",), "end_hand", "went_out", (*want[:2], want[2] + 100))
    s.end_hand("went_out", want)


# ------------------------------------------------------------------ §9: wilds on the table
#
# Seat 0 lays 3♥..9♥ with a wild at an end (eight cards: a dirty canastra, semi-clean in
# burraco, seven naturals in a row beside it) and A♠ 2♠ 3♠ 4♠, its 2 natural; with a morto it
# then lays J x4, 8 x3, 4♣ 4♦ 4♥ and throws the 6♣ (burako: the 4♠ thrown for the morto,
# next turn J x4, 8 x4 with the 8♥ drawn, 4 x3). Thirteen holds K♣ K♦ more and draws K♠.
# A card counts its own value where it stands (RULES.md §9; docs: a wild counts as itself).
#   run 45; the wild: 2♣ 10, joker 50 (burraco 30); A♠ 2♠ 3♠ 4♠ 15 + 10 + 5 + 5 = 35
#   (burraco's 2 is 20: 45; burako and thirteen without the 4♠: 30); morto 40 + 30 + 15 = 85
#   (burako 95)
#   classic    45 + 10 + 35 = 90 + dirty 100 + out 50 + relancinho 100 = 340
#   biriba,    90 + 85 = 175 + 100 + 50 + 100 = 425
#   bossa-nova
#   thirteen   45 + 50 + 30 + 30 (kings) + 85 = 240 + 100 + 100 = 440
#   burraco    45 + 30 + 45 + 85 = 205 + semi-clean 150 + 100 = 455
#   mega       45 + 50 + 35 + 85 = 215 + 100 + 100 = 415
#   burako     45 + 50 + 30 + 95 = 220 + 100 + 100 = 420
WILD_SCORES = {"classic": (340, -90), "biriba": (425, -190), "bossa-nova": (425, -190),
               "thirteen": (440, -205), "thirteen-quick": (440, -205),
               "burraco": (455, -200), "mega": (415, -190), "burako": (420, -190)}


@pytest.mark.parametrize("name", PRESETS)
def test_wilds_and_a_natural_2_on_the_table_scored_by_hand(name: str) -> None:
    w = wild(name)
    thirteen = name in THIRTEEN
    s = Scenario(name, hands={0: f"{RUN} {w} As 2s 3s" + (" Kc Kd" if thirteen else ""),
                              1: SEAT1_13 if thirteen else SEAT1},
                 mortos={0: "Jc Jd Jh Js 8c 8d 8s 4c 4d 4h 6c"} if name in MORTO else None,
                 stock="Ks" if thirteen else "4s 6d 8h", upcard=upcard(name))
    s.draw().meld(f"{RUN} {w}")
    assert s.state.melds[0][0].canastra == ("semi_clean" if name == "burraco" else "dirty")
    if thirteen:
        s.meld("As 2s 3s").meld("Kc Kd Ks")
    elif name == "burako":
        s.meld("As 2s 3s").discard("4s").morto(direct=False)
        s.draw().discard("6d")
        s.draw().meld("8c 8d 8s 8h")
    else:
        s.meld("As 2s 3s 4s")
    assert wild_place(s.state.melds[0][1].cards, s.rules) is None  # the 2♠ is natural
    if name == "classic":
        s.go_out()
    else:
        if name != "burako":
            s.morto(direct=True).meld("8c 8d 8s")
        s.meld("Jc Jd Jh Js").meld("4c 4d 4h").discard("6c").go_out()
    want = WILD_SCORES[name]
    seat1 = SEAT1_13 if thirteen else SEAT1
    assert want[1] == -spec_points(name, seat1) - (100 if name in MORTO else 0)
    refused(s, "score.mismatch", ("side 0",), "end_hand", "went_out", (want[0] - 1, want[1]))
    s.end_hand("went_out", want)


# ------------------------------------------------------------------ §4: no frozen pile, no 3s


@pytest.mark.parametrize("name", PRESETS)
def test_a_wild_or_a_three_on_the_pile_freezes_nothing(name: str) -> None:
    """RULES.md §4 knows two pickup rules and no frozen pile, and §9 no red or black threes:
    a wild thrown on the pile leaves it free to take (under must-use-top, with its top used),
    and threes of any colour are 5-point cards that meld like any other."""
    w = wild(name)
    s = Scenario(name, hands={0: f"{w} 3h 3d 3c 5s", 1: "7c 7d 3s"}, stock="9s Kd",
                 upcard=upcard(name))
    s.draw().meld("3h 3d 3c").discard(w)
    assert s.state.pile[-1] == parse_cards(w)[0]
    s.take_pile()
    if name in THIRTEEN:
        s.meld(f"7c 7d {w}")
    assert s.state.pile == ()
    assert spec_points(name, "3h 3d 3c") == 15


def test_six_players_score_by_sides_of_three() -> None:
    """RULES.md §2, §9: at six the seats 0, 2, 4 and 1, 3, 5 are the two sides; a side's
    score takes off the cards left in all three of its hands. Seat 0 goes out at once as in
    OUT_SCORES' classic hand (445 before the partners' hands)."""
    s = Scenario("classic", 6, hands={0: f"{RUN} Qc Qd Qs Qh"}, stock="Qs")
    s.draw().meld(RUN).meld("Qc Qd Qs Qh Qs").go_out()
    side0 = spec_points("classic", (*s.hand(2), *s.hand(4)))
    side1 = spec_points("classic", (*s.hand(1), *s.hand(3), *s.hand(5)))
    assert side0 > 0 and side1 > 0
    refused(s, "score.mismatch", ("side 0",), "end_hand", "went_out", (445, -side1))
    s.end_hand("went_out", (445 - side0, -side1))


@pytest.mark.parametrize("name", THIRTEEN)
def test_the_stock_out_under_must_use_top_when_the_top_is_of_no_use(name: str) -> None:
    """RULES.md §8 (`001`): with the stock gone and a top card the player to move cannot use
    (A♥ to a hand whose K♥ has no Q♥ and no wild beside it; 9♥ to a hand with one nine and
    no heart near it), the hand ends: each side pays its hand and its morto."""
    hands = {0: "Kc Kd 3c 5c 7c 9c Jc 4d 6d 8d Td Qd Ah",
             1: "Ks Kh 4s 6s 8s Ts Qs 3h 5h 7h 9h Jh 3d"}
    s = Scenario(name, hands=hands, upcard="Ad")
    while len(s.state.stock) > 1:
        s.pass_turn()
    throw = "Ah" if s.turn == 0 else "9h"
    s.draw().discard(throw)
    want = tuple(-spec_points(name, s.hand(seat)) - 100 for seat in (0, 1))
    s.end_hand("stock_out", want)
    assert s.state.results[0].reason == "stock_out"
