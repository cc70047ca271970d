"""A referee's scenarios of RULES.md §7 (the morto and going out), for every preset.

Each statement of §7 is played accepted and refused in every preset it concerns: the direct
morto (taken at once, the turn goes on without a draw), the indirect one (the turn ends, the
morto is played from the next turn), burako's indirect-only morto, bossa-nova's canastra,
partnerships (only the first partner takes it, the second goes out), going out before the
morto, going out by a meld or by a discard, the canastra going out needs, and the empty hand
that cannot discard. Every refusal is checked for its rule id, its seq and the words of its
message; every score is added up by hand from RULES.md §9's tables (tests/spec_points.py).
"""

from __future__ import annotations

import pytest

from buraco_log.cards import parse_cards
from buraco_log.events import CardDiscarded, HandStarted
from tests.scenario import Scenario, refused
from tests.spec_points import spec_points

# RULES.md §11 and §7, written out by hand (never read from the engine's presets).
ALL = ("classic", "biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
       "burako")
MORTO_PRESETS = ALL[1:]
DIRECT = ("biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega")  # not burako
NEEDS_CANASTRA_TO_GO_OUT = ("bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
                            "burako")
GOING_OUT = {"classic": 50, "biriba": 50, "bossa-nova": 50, "thirteen": 100,
             "thirteen-quick": 100, "burraco": 100, "mega": 100, "burako": 100}
MORTO_NOT_TAKEN = 100  # every morto preset (RULES.md §9)
CLEAN = 200

MORTO = "Th Ts Td Tc Kh Ks Kd Qh Qs Qd Qc"  # three sets (and nothing wild): 110 points


def run_of(name: str) -> str:
    """A clean run of hearts, a canastra in every preset: 7 cards, 9 with 13-card hands."""
    return "3h 4h 5h 6h 7h 8h 9h" + (" Th Jh" if name.startswith("thirteen") else "")


def down_hand(name: str) -> str:
    """The run and four jacks: the whole hand (11 or 13 cards) goes down in one turn."""
    return f"{run_of(name)} Js Jd Jc Js"



def emptied_by_meld(name: str, players: int = 2) -> Scenario:
    """Seat 0 draws J♥ and lays the run and five jacks: the hand is empty, no discard."""
    s = Scenario(name, players, hands={0: down_hand(name)}, stock="Jh", mortos={0: MORTO})
    s.draw("Jh").meld(run_of(name)).meld("Js Jd Jc Js Jh")
    return s


def emptied_by_discard(name: str, players: int = 2, stock: str = "") -> Scenario:
    """Seat 0 draws K♦, lays the run and four jacks and throws the K♦: the hand is empty."""
    s = Scenario(name, players, hands={0: down_hand(name)}, stock=f"Kd {stock}".strip(),
                 mortos={0: MORTO})
    s.draw("Kd").meld(run_of(name)).meld("Js Jd Jc Js").discard("Kd")
    return s


# -- direct: "the player takes the morto at once and continues the same turn without drawing"


@pytest.mark.parametrize("name", DIRECT)
def test_the_direct_morto_is_taken_at_once_and_the_turn_goes_on_without_a_draw(
    name: str
) -> None:
    s = emptied_by_meld(name)
    assert (s.state.phase, s.state.emptied_by, s.hand(0)) == ("emptied", "meld", ())
    # The empty hand has no card to throw; going out comes after the morto; emptied by
    # melding, the morto is the direct one.
    refused(s, "turn.hand_emptied", ("empty", "taking the morto comes next"), "discard", "Jh")
    refused(s, "go_out.morto_first", ("morto",), "go_out")
    refused(s, "morto.wrong_kind", ("directly",), "morto", direct=False)
    s.morto(direct=True)
    assert sorted(s.hand(0)) == sorted(parse_cards(MORTO))
    assert (s.turn, s.state.phase, s.state.morto_taken) == (0, "play", (True, False))
    assert s.state.morto_pending == (None, None)  # a direct morto is never voided
    # "sendo-lhe vedada a compra de qualquer carta": no draw, no pile.
    refused(s, "turn.already_drew", ("already drew",), "draw")
    if s.state.pile:
        refused(s, "turn.already_drew", ("already drew",), "take_pile")
    # The morto is played at once, and the turn ends with a discard.
    s.meld("Th Ts Td Tc").meld("Kh Ks Kd")
    s.discard("Qc")
    assert s.turn == 1 and len(s.hand(0)) == 3


def test_burako_refuses_the_meld_that_would_take_the_morto_directly() -> None:
    s = Scenario("burako", hands={0: down_hand("burako")}, stock="Jh", mortos={0: MORTO})
    s.draw("Jh").meld(run_of("burako"))
    refused(s, "morto.indirect_only", ("indirect", "discard"), "meld", "Js Jd Jc Js Jh")
    # Four jacks leave the J♥ to throw: the indirect morto.
    s.meld("Js Jd Jc Js").discard("Jh")
    refused(s, "morto.wrong_kind", ("indirectly",), "morto", direct=True)
    s.morto(direct=False)
    assert s.turn == 1 and s.state.morto_pending == (0, None)


# -- indirect: "the player takes the morto and the turn ends; it is played from the next turn"


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_the_indirect_morto_ends_the_turn_and_is_played_from_the_next(name: str) -> None:
    s = emptied_by_discard(name)
    assert (s.state.phase, s.state.emptied_by, s.state.pile[-1]) == (
        "emptied", "discard", parse_cards("Kd")[0])
    refused(s, "morto.wrong_kind", ("indirectly",), "morto", direct=True)
    refused(s, "go_out.morto_first", ("morto",), "go_out")
    s.morto(direct=False)
    assert sorted(s.hand(0)) == sorted(parse_cards(MORTO))
    assert (s.turn, s.state.phase, s.state.morto_pending) == (1, "draw", (0, None))
    # The taker may not play the morto in the opponent's turn.
    refused(s, "turn.not_your_turn", ("turn",), "draw", seat=0)
    s.pass_turn()
    # Seat 0's own turn has begun: the morto stands, drawn to like any hand.
    assert (s.turn, s.state.morto_pending) == (0, (None, None))
    s.draw().meld("Th Ts Td Tc")
    assert len(s.hand(0)) == 8


# -- the morto is taken once per side; in partnerships by the first partner to empty ------


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_the_morto_is_the_sides_once_the_second_emptying_goes_out(name: str) -> None:
    s = emptied_by_discard(name, stock="5c Kc")
    s.morto(direct=False)
    s.pass_turn()
    # Seat 0 lays its morto down in its next turn: with the K♣ drawn, four tens, four queens
    # and four kings. The hand is empty for the second time: that is going out.
    s.draw("Kc").meld("Th Ts Td Tc").meld("Qh Qs Qd Qc").meld("Kh Ks Kd Kc")
    assert s.state.phase == "emptied"
    refused(s, "morto.not_available", ("already", "morto"), "morto", direct=True)
    s.go_out()
    assert s.state.phase == "out" and s.state.went_out == 0


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_four_players_only_the_first_partner_takes_the_morto(name: str) -> None:
    # Seat 0 takes side 0's morto indirectly; seat 1 plays; seat 2 (seat 0's partner) then
    # lays the whole hand: side 0's morto is taken, so that is going out (the side has the
    # run, a canastra), not a second morto.
    size = 13 if name.startswith("thirteen") else 11
    sets = ("3s 3d 3c 3h 4s 4d 4c 5s 5d 5c 6s 6d 6h" if size == 13
            else "3s 3d 3c 4s 4d 4c 5s 5d 5c 6s 6d")
    s = Scenario(name, 4, hands={0: down_hand(name), 2: sets}, stock="Kd 8c 6c",
                 mortos={0: MORTO})
    s.draw("Kd").meld(run_of(name)).meld("Js Jd Jc Js").discard("Kd").morto(direct=False)
    s.pass_turn()
    assert s.turn == 2
    s.draw("6c")
    melds = (["3s 3d 3c 3h", "4s 4d 4c", "5s 5d 5c", "6s 6d 6h 6c"] if size == 13
             else ["3s 3d 3c", "4s 4d 4c", "5s 5d 5c", "6s 6d 6c"])
    for m in melds:
        s.meld(m)
    refused(s, "morto.not_available", ("already", "morto"), "morto", direct=True)
    s.go_out().end_hand()
    side0, side1 = s.state.results[0].scores
    # Side 0: the run, four jacks and the sets on the table; clean canastra; going out. Seat
    # 0's morto stands (a partner went out), and stands as the taker's hand: 110 in hand.
    table = spec_points(name, run_of(name)) + 40 + spec_points(name, sets) + 5
    assert side0.table_points == table and side0.canastras == {"clean": 1}
    assert (side0.going_out, side0.morto_penalty) == (GOING_OUT[name], 0)
    hand1 = spec_points(name, s.hand(1)) + spec_points(name, s.hand(3))
    assert side0.hand_penalty == 110
    # Biriba and bossa-nova: each partner laid the whole hand in one turn, a relancinho each.
    relancinho = 200 if name in ("biriba", "bossa-nova") else 0
    assert side0.relancinho == relancinho
    assert side0.total == table + CLEAN + GOING_OUT[name] + relancinho - 110
    assert side1.total == -hand1 - MORTO_NOT_TAKEN


# -- going out needs the morto first, and (but in biriba) a canastra ------------------------


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_emptying_the_hand_before_the_morto_is_no_going_out(name: str) -> None:
    s = emptied_by_discard(name)
    refused(s, "go_out.morto_first", ("morto",), "go_out")
    assert s.state.went_out is None
    refused(s, "hand.not_over", ("nobody went out",), "end_hand", "went_out")


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_after_the_morto_only_biriba_goes_out_without_a_canastra(name: str) -> None:
    # Seat 0 empties with sets only (no canastra) and throws the K♣ drawn: 3s 3d 3c, 4s 4d 4c
    # and five 5s (13-card hands: four 3s, four 4s, five 5s). Bossa-nova may not even take
    # its morto so: the last meld, which leaves one card to throw, is refused.
    if name.startswith("thirteen"):
        sets = ["3s 3d 3c 3h", "4s 4d 4c 4h", "5s 5d 5c 5h 5s"]
    else:
        sets = ["3s 3d 3c", "4s 4d 4c", "5s 5d 5c 5h 5s"]
    s = Scenario(name, hands={0: " ".join(sets)}, stock="Kc 6c 8c", mortos={0: MORTO})
    s.draw("Kc").meld(sets[0]).meld(sets[1])
    if name == "bossa-nova":
        refused(s, "morto.needs_canastra", ("canastra", "morto"), "meld", sets[2])
        return
    s.meld(sets[2]).discard("Kc").morto(direct=False)
    s.pass_turn()
    # The morto: tens, queens and kings as sets, no canastra; the last meld would leave the
    # 8♣ drawn alone, whose discard would go out.
    s.draw("8c").meld("Th Ts Td Tc").meld("Qh Qs Qd Qc")
    if name in NEEDS_CANASTRA_TO_GO_OUT:
        refused(s, "go_out.needs_canastra", ("canastra",), "meld", "Kh Ks Kd")
        s.discard("8c")  # keeping the kings, the turn ends as any other
        assert s.turn == 1
        return
    s.meld("Kh Ks Kd").discard("8c").go_out().end_hand()
    side0 = s.state.results[0].scores[0]
    assert side0.canastras == {} and side0.going_out == GOING_OUT[name]


# -- going out by a meld or by a discard: both end the hand with the bonus ----------------


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("by", ["meld", "discard"])
def test_going_out_by_the_last_meld_or_the_last_discard(name: str, by: str) -> None:
    # Seat 0 holds the run and four jacks. With a morto it takes the morto indirectly first
    # (every morto preset allows that), then lays the morto down: tens, queens, kings.
    if name == "classic":
        drawn = "Kd" if by == "discard" else "Jh"
        s = Scenario(name, hands={0: down_hand(name)}, stock=drawn)
        s.draw(drawn).meld(run_of(name))
        if by == "discard":
            s.meld("Js Jd Jc Js").discard("Kd")
        else:
            s.meld("Js Jd Jc Js Jh")
        laid = spec_points(name, run_of(name)) + (40 if by == "discard" else 50)
    else:
        last = "Kc" if by == "meld" else "8c"
        s = emptied_by_discard(name, stock=f"5c {last}")
        s.morto(direct=False).pass_turn()
        s.draw(last).meld("Th Ts Td Tc").meld("Qh Qs Qd Qc")
        if by == "meld":
            refused(s, "turn.wrong_phase", ("still holds",), "go_out")
            s.meld("Kh Ks Kd Kc")
        else:
            s.meld("Kh Ks Kd").discard("8c")
        laid = spec_points(name, run_of(name)) + 40 + 40 + 40 + (40 if by == "meld" else 30)
    assert s.state.phase == "emptied" and s.state.emptied_by == by
    s.go_out()
    refused(s, "hand.over", ("after seat 0", "went out"), "discard", "Kd")
    s.end_hand()
    side0 = s.state.results[0].scores[0]
    assert side0.table_points == laid and side0.going_out == GOING_OUT[name]
    assert side0.hand_penalty == 0 and side0.morto_penalty == 0


# -- classic: there is no morto, the first emptying goes out ------------------------------


@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_classic_has_no_morto_the_first_emptying_goes_out(players: int) -> None:
    s = Scenario("classic", players, hands={0: down_hand("classic")}, stock="Jh")
    s.draw("Jh").meld(run_of("classic")).meld("Js Jd Jc Js Jh")
    refused(s, "morto.not_available", ("no morto",), "morto", direct=True)
    refused(s, "turn.hand_emptied", ("empty", "going out comes next"), "discard", "Jh")
    s.go_out().end_hand()
    res = s.state.results[0]
    assert res.went_out == 0 and res.reason == "went_out"
    sides = 3 if players == 3 else 2
    assert len(res.scores) == sides
    # 3h..7h 25, 8h 9h 20, five jacks 50; a clean canastra; going out; the relancinho (the
    # whole hand in one turn, nothing laid before); less the partners' hands (seats 2, 4).
    partners = sum(spec_points("classic", s.hand(p)) for p in range(2, players, 2)) \
        if players in (4, 6) else 0
    assert res.scores[0].total == 25 + 20 + 50 + CLEAN + GOING_OUT["classic"] + 100 - partners


# -- a stock-out does not void an indirect morto (RULES.md §7, §8) ----------------------------

RELANCINHO = {"biriba": 100, "bossa-nova": 100}
FREE_MORTO = ("biriba", "bossa-nova", "burraco", "mega", "burako")
FLOOR = {"mega": 2}


@pytest.mark.parametrize("name", FREE_MORTO)
def test_a_stock_out_before_the_takers_next_turn_keeps_the_indirect_morto(name: str) -> None:
    # Both players hold a clean run and four of a kind and only draw and throw until the
    # stock is one card above its floor. The player to move then draws the last card, lays
    # both melds, throws the card drawn and takes the morto indirectly; the other player
    # cannot draw and ends the hand. The morto stands (only an opponent going out voids it)
    # and is the taker's hand: its cards count as cards left in hand.
    floor = FLOOR.get(name, 0)
    down = {0: ("3h 4h 5h 6h 7h 8h 9h", "Js Jd Jc Js"), 1: ("3s 4s 5s 6s 7s 8s 9s", "Ad Ac Ah Ah")}
    s = Scenario(name, hands={p: " ".join(m) for p, m in down.items()}, mortos={0: MORTO})
    t = s.rep._t
    while len(t.stock) > floor + 1:
        s.pass_turn()
    taker = s.turn
    s.draw()
    drawn = t.drawn
    assert drawn is not None
    run, four = down[taker]
    s.meld(run).meld(four).push(CardDiscarded(taker, drawn, seq=s.rep.seq + 1))
    s.morto(direct=False)
    assert s.state.morto_pending[taker] == taker and len(s.state.stock) == floor
    refused(s, "stock.floor_reached", ("floor",), "draw", "4c")
    s.end_hand("stock_out")
    res = s.state.results[0]
    other = 1 - taker
    taker_score, other_score = res.scores[taker], res.scores[other]
    laid = spec_points(name, f"{run} {four}")
    morto_points = spec_points(name, s.hand(taker))
    assert sorted(s.hand(taker)) == sorted(res_morto(s, taker))
    assert (taker_score.morto_penalty, taker_score.hand_penalty) == (0, morto_points)
    assert taker_score.total == laid + CLEAN + RELANCINHO.get(name, 0) - morto_points
    assert other_score.total == -spec_points(name, s.hand(other)) - MORTO_NOT_TAKEN


def res_morto(s: Scenario, side: int) -> tuple[int, ...]:
    """The morto dealt to ``side`` (from the deal event)."""
    deal = s.events[1]
    assert isinstance(deal, HandStarted)
    return deal.mortos[side]


# -- a damaged log: an event of the emptied phase naming a seat that does not exist -----------


@pytest.mark.parametrize("seat", [99, 2, -1])
def test_a_retraction_or_morto_by_a_seat_not_at_the_table_is_refused_when_the_hand_is_empty(
    seat: int
) -> None:
    # A log's OpeningRetracted with seat 99 while the hand was emptied raised IndexError
    # (the check for a short opening read the seat's side before the seat was checked).
    s = emptied_by_meld("biriba")
    for move, kw in (("retract", {"cards": "Jh"}), ("morto", {"direct": True}),
                     ("go_out", {})):
        refused(s, "turn.no_such_seat", (f"no seat {seat}",), move, seat=seat, **kw)
    refused(s, "turn.not_your_turn", ("seat 1", "seat 0"), "morto", direct=True, seat=1)
    s.morto(direct=True)


# -- only the indirect morto is voided: a direct one stands whoever goes out ------------------


@pytest.mark.parametrize("name", DIRECT)
def test_an_opponent_going_out_at_once_does_not_void_a_morto_taken_directly(name: str) -> None:
    # Seat 0 takes its morto directly, lays four tens from it and throws Q♣. Seat 1 lays its
    # whole hand, takes its own morto directly, lays it and goes out by throwing K♣, before
    # seat 0 plays again. RULES.md §7 voids only the indirect morto: seat 0's stands, and the
    # six cards it kept count in its hand.
    thirteen = name.startswith("thirteen")
    run1 = "2s 3s 4s 5s 6s 7s 8s 9s Ts" if thirteen else "3s 4s 5s 6s 7s 8s 9s"
    morto1 = "5c 5d 5s 6c 6d 6s 7c 7d 7s 7h Kc"
    s = Scenario(name, hands={0: down_hand(name), 1: f"{run1} Ad Ac Ah Ah"}, stock="Jh Ad",
                 mortos={0: MORTO, 1: morto1})
    s.draw("Jh").meld(run_of(name)).meld("Js Jd Jc Js Jh").morto(direct=True)
    s.meld("Th Ts Td Tc").discard("Qc")
    s.draw("Ad").meld(run1).meld("Ad Ac Ah Ah Ad").morto(direct=True)
    s.meld("5c 5d 5s").meld("6c 6d 6s").meld("7c 7d 7s 7h").discard("Kc").go_out().end_hand()
    side0, side1 = s.state.results[0].scores
    relancinho = 100 if name in ("biriba", "bossa-nova") else 0
    kept = spec_points(name, "Kh Ks Kd Qh Qs Qd")
    laid0 = spec_points(name, f"{run_of(name)} Js Jd Jc Js Jh Th Ts Td Tc")
    assert (side0.morto_penalty, side0.hand_penalty) == (0, kept)
    assert side0.total == laid0 + CLEAN + relancinho - kept
    laid1 = spec_points(name, f"{run1} Ad Ac Ah Ah Ad 5c 5d 5s 6c 6d 6s 7c 7d 7s 7h")
    assert side1.total == laid1 + CLEAN + GOING_OUT[name] + relancinho


@pytest.mark.parametrize("name", ["thirteen", "thirteen-quick"])
def test_must_use_top_a_stock_out_at_the_partners_turn_keeps_the_indirect_morto(
    name: str
) -> None:
    # Four players. The player to move at two stock cards holds the run and four jacks: it
    # draws, lays both, throws the card drawn and takes its morto indirectly. The next player
    # draws the last card and throws K♦; the taker's partner holds nothing that could use
    # the K♦ (no king, no diamond near it, no wild), so under must-use-top it cannot take
    # the pile and the hand ends (RULES.md §8) before the taker played again: the morto
    # stands, as the taker's hand (RULES.md §7).
    probe = Scenario(name, 4)
    taker = (len(probe.state.stock) - 2) % 4
    dead = "3c 4s 5h 6c 7s 8h 9c Ts Jh Qc 3s 4h 5c"  # nothing for K♦
    s = Scenario(name, 4, hands={taker: down_hand(name), (taker + 1) % 4: "Kd",
                                 (taker + 2) % 4: dead}, mortos={taker % 2: MORTO})
    t = s.rep._t
    while len(t.stock) > 2:
        s.pass_turn()
    assert s.turn == taker
    s.draw()
    drawn = t.drawn
    assert drawn is not None
    s.meld(run_of(name)).meld("Js Jd Jc Js").push(CardDiscarded(taker, drawn, seq=s.rep.seq + 1))
    s.morto(direct=False)
    s.draw().discard("Kd")
    assert s.turn == (taker + 2) % 4 and not s.state.stock
    refused(s, "pile.must_use_top", ("kd",), "take_pile")
    s.end_hand("stock_out")
    side = taker % 2
    mine, theirs = s.state.results[0].scores[side], s.state.results[0].scores[1 - side]
    partner = spec_points(name, s.hand((taker + 2) % 4))
    assert (mine.morto_penalty, mine.hand_penalty) == (0, 110 + partner)
    assert mine.total == spec_points(name, down_hand(name)) + CLEAN - 110 - partner
    opponents = sum(spec_points(name, s.hand((taker + k) % 4)) for k in (1, 3))
    assert theirs.total == -opponents - MORTO_NOT_TAKEN


# -- house rules: a morto of one card, taken directly, must leave a discard -------------------


@pytest.mark.parametrize(("name", "needs"), [("thirteen", True), ("mega", True),
                                             ("biriba", False)])
def test_a_one_card_morto_is_taken_directly_only_if_its_card_can_be_thrown(
    name: str, needs: bool
) -> None:
    # With morto_size = 1 the direct morto is the whole next hand: one card, whose discard
    # empties the hand again, which is going out. Where going out needs a canastra, a side
    # without one may not take such a morto by melding (it would be left with a card it can
    # neither throw nor lay: RULES.md §7, "the game does not let you"); with a canastra it may.
    thirteen = name.startswith("thirteen")
    sets = (["3s 3d 3c 3h 3s", "4s 4d 4c 4h", "5s 5d 5c 5h 5s"] if thirteen
            else ["3s 3d 3c 3s", "4s 4d 4c", "5s 5d 5c 5h 5s"])
    hand = " ".join(sets)
    hand = " ".join(hand.split()[1:])  # the first 3s is drawn
    s = Scenario(name, hands={0: hand}, stock="3s", mortos={0: "Kd"}, morto_size=1)
    s.draw("3s").meld(sets[0]).meld(sets[1])
    if needs:
        refused(s, "go_out.needs_canastra", ("one card", "canastra"), "meld", sets[2])
    else:
        s.meld(sets[2]).morto(direct=True)
        assert s.hand(0) == parse_cards("Kd")
        s.discard("Kd").go_out()
        assert s.state.phase == "out"
    # With a canastra on the table (the clean run) the one-card morto is taken directly and
    # thrown to go out.
    s = Scenario(name, hands={0: down_hand(name)}, stock="Jh", mortos={0: "Kd"}, morto_size=1)
    s.draw("Jh").meld(run_of(name)).meld("Js Jd Jc Js Jh").morto(direct=True)
    assert s.hand(0) == parse_cards("Kd") and s.turn == 0
    s.discard("Kd").go_out().end_hand()
    assert s.state.results[0].scores[0].going_out == GOING_OUT[name]
