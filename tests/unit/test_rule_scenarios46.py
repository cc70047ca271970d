"""RULES.md read again for what the section-by-section scenarios (test_rule_scenarios45) and the
hand-written logs (tests/outside) leave out: each preset's refusals met where they were not,
with an accepted move beside each, and hands scored by hand from RULES.md §9 for the bonuses,
penalties and hand-end reasons no scenario scored yet.
"""

from __future__ import annotations

import msgspec
import pytest

from buraco_log.cards import format_cards, parse_cards
from buraco_log.errors import IllegalMoveError
from buraco_log.events import (
    AnyEvent,
    CardDrawn,
    HandStarted,
    MatchEnded,
    PileTaken,
    TotalsCarried,
)
from buraco_log.moves import legal_moves, pile_options, quick_moves
from buraco_log.reducer import Replayer, step
from buraco_log.rules import preset
from tests.play import start
from tests.scenario import Scenario
from tests.spec_points import spec_points

PRESETS = ("classic", "biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
           "burako")
UPCARD = ("thirteen", "thirteen-quick", "burraco", "mega")
NO_UPCARD = ("classic", "biriba", "bossa-nova", "burako")


def upcard(name: str) -> str | None:
    return "Td" if name in UPCARD else None


# ------------------------------------------------------------------ §4 an empty pile
# Every turn but a hand's first ends in a discard (or the hand's end), so the pile is empty at
# a draw only before the first discard of a preset without an upcard (RULES.md §3).


@pytest.mark.parametrize("name", NO_UPCARD)
@pytest.mark.parametrize("top", ["Kh", "#0", "JK", "#99"])
def test_an_empty_pile_is_pile_empty_whatever_top_the_pickup_names(name: str, top: str) -> None:
    """There is no top to name: the code standing in for it (a card, a code that is no card,
    a joker of a preset without them) is not what is wrong with the pickup."""
    s = Scenario(name)
    code = int(top[1:]) if top.startswith("#") else parse_cards(top)[0]
    for count in (0, 1):
        with s.illegal("pile.empty"):
            s.push(PileTaken(0, count, code, seq=2))
        assert "the discard pile is empty" in str(s.last_error), str(s.last_error)
        assert s.last_error.seat == 0
    opts = pile_options(s.state)
    assert not opts.may_take and "empty" in opts.reason
    assert all(not isinstance(m, PileTaken) for m in legal_moves(s.state))
    s.draw()  # the stock is the way: accepted


@pytest.mark.parametrize("name", UPCARD)
def test_a_table_built_with_an_empty_pile_is_pile_empty_under_every_pickup_rule(
        name: str) -> None:
    """An upcard preset's pile is never empty at a draw in play, but a State built by hand can
    hold one: the must-use-top check has no top to judge and never runs (no IndexError)."""
    s = Scenario(name, upcard=upcard(name))
    empty = msgspec.structs.replace(s.state, pile=())
    with pytest.raises(IllegalMoveError) as info:
        step(empty, PileTaken(0, 0, 0, seq=2))
    assert info.value.rule == "pile.empty", str(info.value)
    assert not pile_options(empty).may_take
    moves = quick_moves(empty)
    assert [type(m) for m in moves] == [CardDrawn]


# ------------------------------------------------------------------ the public entries


@pytest.mark.parametrize("entry", [quick_moves, pile_options, legal_moves])
@pytest.mark.parametrize("wrong", [None, "state", {}, 3])
def test_a_wrong_type_at_a_moves_entry_is_a_type_error_naming_it(entry: object,
                                                                 wrong: object) -> None:
    name = getattr(entry, "__name__", "")
    with pytest.raises(TypeError, match=f"^{name} takes a State, not {type(wrong).__name__}$"):
        entry(wrong)  # type: ignore[operator]


def test_the_states_stock_is_drawn_from_its_first_card_and_turns_count_from_zero() -> None:
    """state.py: ``stock[0]`` is the top (as HandStarted deals it), ``turns`` the turns ended."""
    s = Scenario("classic", hands={0: "Kc"}, stock="Kh 3c")
    first = s.state
    assert first.stock[:2] == parse_cards("Kh 3c") == s.events[1].stock[:2]
    assert first.turns == 0
    s.draw()
    assert s.state.hands[0][-1] == first.stock[0] and s.state.turns == 0
    s.discard("Kc")
    assert s.state.turns == 1 and s.state.stock[0] == parse_cards("3c")[0]


# ------------------------------------------------------------------ §2, §3, §10: the envelope
# Each preset's match start, deal and hand order, refused with its rule id and accepted beside
# (earlier scenarios met most of these in classic only, or not through a played table).


def _after_start(name: str, players: int = 2) -> tuple[Replayer, HandStarted]:
    s = Scenario(name, upcard=upcard(name))
    rep = Replayer()
    rep.step(s.events[0])
    deal = s.events[1]
    assert isinstance(deal, HandStarted)
    return rep, deal


def _refuses(rep: Replayer, ev: AnyEvent, rule: str) -> str:
    before = rep.state()
    with pytest.raises(IllegalMoveError) as info:
        rep.step(ev)
    assert info.value.rule == rule, str(info.value)
    assert info.value.seq == ev.seq
    assert rep.state() == before
    return str(info.value)


@pytest.mark.parametrize("name", PRESETS)
def test_each_presets_deal_is_refused_off_its_sizes_and_material(name: str) -> None:
    rep, deal = _after_start(name)
    r = preset(name)
    hands = [list(h) for h in deal.hands]
    stock = list(deal.stock)
    # §3 hand size: one card of seat 0's hand back on the stock
    short = msgspec.structs.replace(deal, hands=(tuple(hands[0][1:]), deal.hands[1]),
                                    stock=(hands[0][0], *stock))
    assert f"gets {r.hand_size}" in _refuses(rep, short, "deal.hand_size")
    # §3 the morto: 11 cards per side with one, none without
    if r.morto:
        mortos = (deal.mortos[0][1:], deal.mortos[1])
        bad = msgspec.structs.replace(deal, mortos=mortos, stock=(deal.mortos[0][0], *stock))
    else:
        bad = msgspec.structs.replace(deal, mortos=(tuple(stock[:11]), tuple(stock[11:22])),
                                      stock=tuple(stock[22:]))
    _refuses(rep, bad, "deal.morto_size")
    # §3 the upcard: turned up in 001-003's presets only
    if r.initial_upcard:
        assert deal.upcard is not None
        bad = msgspec.structs.replace(deal, upcard=None, stock=(deal.upcard, *stock))
    else:
        bad = msgspec.structs.replace(deal, upcard=stock[0], stock=tuple(stock[1:]))
    _refuses(rep, bad, "deal.upcard")
    # §1 the material: a third copy of a card in place of another
    third = next(c for c in stock if stock.count(c) == 2 and c != stock[0])
    bad = msgspec.structs.replace(deal, stock=(third, *stock[1:]))
    assert "extra" in _refuses(rep, bad, "deal.material")
    # and the hand's number and the deal itself, accepted as dealt
    _refuses(rep, msgspec.structs.replace(deal, hand=1), "hand.number")
    rep.step(deal)
    assert rep.phase == "draw"


@pytest.mark.parametrize("name", PRESETS)
def test_each_presets_hand_and_match_order(name: str) -> None:
    """A second deal, a second match start, a seq out of order, a code that is no card, an
    end of the match before it is decided, totals carried in after the deal: each refused with
    its rule id in every preset; the move after each is accepted."""
    s = Scenario(name, upcard=upcard(name))
    rep = s.rep
    deal = s.events[1]
    seq = rep.seq + 1
    _refuses(rep, msgspec.structs.replace(deal, seq=seq), "hand.not_expected")
    _refuses(rep, msgspec.structs.replace(s.events[0], seq=seq), "match.already_started")
    _refuses(rep, TotalsCarried((0, 0), seq=seq), "match.carried_totals")
    _refuses(rep, MatchEnded(seq=seq), "match.not_over")
    top = s.rep._t.stock[-1]
    _refuses(rep, CardDrawn(0, top, seq=seq + 1), "seq.out_of_order")
    _refuses(rep, CardDrawn(0, 99, seq=seq), "event.invalid")
    s.draw()
    assert s.state.hands[0][-1] == top


@pytest.mark.parametrize("name", PRESETS)
def test_each_presets_match_start_is_checked(name: str) -> None:
    r = preset(name)
    players = max(r.player_counts)
    good = start(r, players)
    for bad, rule in (
        (msgspec.structs.replace(good, first_dealer=players), "match.first_dealer"),
        (msgspec.structs.replace(good, sides=tuple(sorted(good.sides))), "match.sides"),
        (start(r, 5), "match.rules"),  # no preset seats five
    ):
        _refuses(Replayer(), bad, rule)
    _refuses(Replayer(), msgspec.structs.replace(_after_start(name)[1], seq=0),
             "match.not_started")
    rep = Replayer()
    rep.step(good)
    assert rep.phase == "between"


# ------------------------------------------------------------------ §7, §8, §9: a stock-out
# Seat 0 lays its whole hand in its first turn (a clean run 3♥..9♥ and a set of queens) and
# throws the card drawn: its morto is taken indirectly (bossa-nova's needs the canastra it
# has). Its next turn comes, so the morto stands (RULES.md §7); it lays a canastra of the
# morto's spades (dirty; semi-clean in burraco, 3♠..9♠ unbroken) and keeps four cards. Nobody
# goes out: the stock runs out (§8). By §9, with the card table of tests/spec_points:
#   side 0: run 3♥..9♥ 45 + queens (x4; x6 in 13-card) 40 / 60 + spades + clean 200 + dirty
#           100 (semi-clean 150) + relancinho 100 (biriba, bossa-nova) - the four cards kept
#           (J♦ J♣ J♥ 9♣, 40): no going out, no morto penalty (it was taken and stands)
#   side 1: - its hand - morto penalty 100 (never taken)

MORTO = PRESETS[1:]
THIRTEEN = ("thirteen", "thirteen-quick")


def _spades(name: str) -> str:
    if name == "burraco":
        return "3s 4s 5s 6s 7s 8s 9s JK"  # seven naturals unbroken beside the wild
    return "3s 4s 5s 6s 7s 8s " + ("JK" if name in UPCARD or name == "burako" else "2c")


def _floor(s: Scenario, name: str) -> None:
    """Pass turns (each player throws the card drawn) until the stock is at its floor."""
    floor = 2 if name == "mega" else 0
    while len(s.state.stock) > floor:
        s.pass_turn()


@pytest.mark.parametrize("name", MORTO)
def test_a_stock_out_with_a_standing_morto_and_canastras_scored_by_hand(name: str) -> None:
    queens = "Qs Qd Qc Qh Qs Qd" if name in THIRTEEN else "Qs Qd Qc Qh"
    spades = _spades(name)
    kept = "Jd Jc Jh 9c"
    # Under must-use-top the hand ends at the floor only if the pile's top is of no use to
    # the player to move (RULES.md §8): seat 1 holds no heart, jack or wild, and seat 0, who
    # draws the last card, throws the J♥.
    hands = {0: f"3h 4h 5h 6h 7h 8h 9h {queens}"}
    if name in THIRTEEN:
        hands[1] = "3d 4c 5d 6c 7d 8c 9d Td Kd Ad 4s 6s 8s"
    s = Scenario(name, hands=hands, stock="Kh",
                 mortos={0: f"{spades} {kept}" if name != "burraco" else f"{spades} Jd Jc Jh"},
                 upcard=upcard(name))
    if name == "burraco":
        kept = "Jd Jc Jh"  # the semi-clean run takes one card more
    s.draw().meld("3h 4h 5h 6h 7h 8h 9h").meld(queens).discard("Kh").morto(direct=False)
    s.pass_turn()
    s.draw().meld(spades)
    s.discard(format_cards(_last_drawn(s), "ascii"))
    assert sorted(s.hand(0)) == sorted(parse_cards(kept))
    if name in THIRTEEN:
        while len(s.state.stock) > 1:
            s.pass_turn()
        assert s.turn == 0
        s.draw().discard("Jh")
        assert not pile_options(s.state).may_take
        kept = format_cards(s.hand(0), "ascii")  # J♦ J♣ 9♣ and the last card of the stock
    _floor(s, name)
    s.end_hand("stock_out")
    result = s.state.results[0]
    assert result.reason == "stock_out" and result.went_out is None
    side0, side1 = result.scores
    spade_points = spec_points(name, spades)
    queen_points = 60 if name in THIRTEEN else 40
    semi = name == "burraco"
    relancinho = 100 if name in ("biriba", "bossa-nova") else 0
    want0 = (45 + queen_points + spade_points + 200 + (150 if semi else 100) + relancinho
             - spec_points(name, kept))
    assert side0.canastras == ({"clean": 1, "semi_clean": 1} if semi
                               else {"clean": 1, "dirty": 1})
    assert (side0.going_out, side0.morto_penalty, side0.relancinho) == (0, 0, relancinho)
    assert side0.total == want0, (side0, want0)
    assert side1.total == -spec_points(name, s.hand(1)) - 100
    assert side1.morto_penalty == 100 and side1.canastra_bonus == 0


def _last_drawn(s: Scenario) -> tuple[int, ...]:
    card = s.rep._t.drawn
    assert card is not None
    return (card,)


# ------------------------------------------------------------------ §10: a tie at the target
# Both sides carried in tied above the target: the match is not decided (a tie plays another
# hand). A stock-out costs both the same (mirror hands: the same ranks in other suits, and
# the morto penalty for both), so the tie stands and another hand is dealt; in that hand a
# stock-out that costs side 1 more decides the match for side 0, though both stay above it.

MIRROR = {  # no pair, no two cards of a suit within two ranks: no pile top is of use to either
    0: "3c 4d 5s 6h 7c 9d Ts Jh Qc Kd As",
    1: "3d 4c 5h 6s 7d 9c Th Js Qd Kc Ah",
}


def _mirror(name: str, extra: tuple[str, str] = ("", "")) -> dict[int, str]:
    hands = dict(MIRROR)
    if name in THIRTEEN:  # two more each, of equal points
        hands = {0: hands[0] + " 8h 8c", 1: hands[1] + " 8s 8d"}
    return {0: f"{hands[0]} {extra[0]}".strip(), 1: f"{hands[1]} {extra[1]}".strip()}


@pytest.mark.parametrize("name", PRESETS)
def test_a_tie_above_the_target_plays_another_hand_which_then_decides(name: str) -> None:
    from tests.scenario import build_deal, carried_in

    r = preset(name)
    high = r.target_score + 600
    s = carried_in(Scenario(name, hands=_mirror(name), upcard=upcard(name)), (high, high))
    assert s.state.phase == "draw"
    _floor(s, name)
    assert s.hand(0) != s.hand(1)
    s.end_hand("stock_out")
    penalty = 100 if r.morto else 0
    lost = spec_points(name, s.hand(0)) + penalty
    assert spec_points(name, s.hand(1)) + penalty == lost
    assert s.state.totals == (high - lost, high - lost)
    assert s.state.winner is None and s.state.phase == "between"
    with s.illegal("match.not_over"):
        s.end_match()
    # Another hand: seat 0 deals it, seat 1 plays first, and holds a king for a 3.
    hands = _mirror(name)
    hands[1] = hands[1].replace("3d", "Kh")
    deal = build_deal(r, 2, hands, "", {}, upcard(name), hand_no=1)
    s.push(msgspec.structs.replace(deal, seq=s.rep.seq + 1))
    assert s.state.dealer == 0 and s.turn == 1
    _floor(s, name)
    s.end_hand("stock_out")
    assert spec_points(name, s.hand(1)) == spec_points(name, s.hand(0)) + 5
    totals = (high - 2 * lost, high - 2 * lost - 5)
    assert s.state.totals == totals and min(totals) >= r.target_score
    assert s.state.winner == 0 and s.state.phase == "decided"
    with s.illegal("match.wrong_winner"):
        s.end_match(winner=1)
    s.end_match(winner=0, totals=totals)
    with s.illegal("match.over"):
        s.push(msgspec.structs.replace(deal, hand=2, seq=s.rep.seq + 1))


# ------------------------------------------------------------------ §10: no retraction unless
# a vulnerable side's opening is short, in every preset (a side at 0 is vulnerable nowhere)


@pytest.mark.parametrize("name", PRESETS)
def test_a_side_that_is_not_vulnerable_takes_nothing_back(name: str) -> None:
    s = Scenario(name, hands={0: "3h 4h 5h Kc"}, upcard=upcard(name))
    s.draw().meld("3h 4h 5h")
    assert not s.state.vulnerable[0]
    with s.illegal("vulnerable.retract_not_needed"):
        s.retract("3h 4h 5h")
    s.discard("Kc")  # the turn ends with the meld standing
    assert [m.cards for m in s.state.melds[0]] == [parse_cards("3h 4h 5h")]


def test_burako_holds_each_number_once_in_a_run() -> None:
    """RULES.md §5: `ace_both_ends` lets a run hold a 1 at each end (A..K..A); any other
    number twice is refused, the run without the repeat accepted and then grown."""
    s = Scenario("burako", hands={0: "Ah 2h 3h 4h 5h 6h 7h 5h 8h 9c Kc"})
    s.draw()
    with s.illegal("meld.duplicate_in_run"):
        s.meld("Ah 2h 3h 4h 5h 5h 6h")
    s.meld("Ah 2h 3h 4h 5h 6h 7h")
    with s.illegal("meld.duplicate_in_run"):
        s.layoff(0, "5h")
    s.layoff(0, "8h")
    assert s.state.melds[0][0].canastra == "clean"
