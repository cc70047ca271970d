"""Review of RULES.md §9 (scoring) and §10 (the match, vulnerability, recorded scores).

The expected values here are copied from RULES.md's tables, not from the engine's presets.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from buraco_log import audit
from buraco_log.cards import JOKER, RANK, deck, parse_cards
from buraco_log.errors import IllegalMoveError
from buraco_log.events import AnyEvent, CardDiscarded, HandEnded, MatchEnded
from buraco_log.melds import canastra_bonus, read_meld
from buraco_log.moves import legal_moves
from buraco_log.reducer import Replayer, replay, step, validate
from buraco_log.rules import derive, preset
from buraco_log.scoring import match_decided
from tests import brokenlogs as bl
from tests.scenario import Scenario, build_deal

# ------------------------------------------------------------------ RULES.md §9, first table
# card -> points, per column of the card table
_CARD_COLUMNS = {
    "classic": {"joker": 10, "two": 10, "ace": 15, "high": 10, "low": 5},
    "thirteen": {"joker": 50, "two": 10, "ace": 15, "high": 10, "low": 5},
    "burraco": {"joker": 30, "two": 20, "ace": 15, "high": 10, "low": 5},
    "mega": {"joker": 50, "two": 10, "ace": 15, "high": 10, "low": 5},
    "burako": {"joker": 50, "two": 10, "ace": 15, "high": 10, "low": 5},
}
_COLUMN_OF = {
    "classic": "classic",
    "biriba": "classic",
    "bossa-nova": "classic",
    "thirteen": "thirteen",
    "thirteen-quick": "thirteen",
    "burraco": "burraco",
    "mega": "mega",
    "burako": "burako",
}
ALL_PRESETS = tuple(_COLUMN_OF)
MORTO_PRESETS = ("biriba", "bossa-nova", "thirteen", "burraco", "mega", "burako")


def spec_points(name: str, card: int) -> int:
    """A card's points as RULES.md §9's card table gives them for preset ``name``."""
    col = _CARD_COLUMNS[_COLUMN_OF[name]]
    if card == JOKER:
        return col["joker"]
    r = RANK[card]
    if r == 2:
        return col["two"]
    if r in (1, 14):
        return col["ace"]
    return col["high"] if r >= 8 else col["low"]


def spec_sum(name: str, cards: tuple[int, ...] | list[int]) -> int:
    return sum(spec_points(name, c) for c in cards)


# ----------------------------------------------------------------- RULES.md §9, second table
# None: the row's "–" (the bonus does not exist in that preset)
_BONUS_TABLE: dict[str, dict[str, int | None]] = {
    "classic": dict(clean=200, semi_clean=None, dirty=100, royal=None, ace_to_ace=None,
                    going_out=50, relancinho=100, morto_not_taken=None),
    "biriba": dict(clean=200, semi_clean=None, dirty=100, royal=None, ace_to_ace=None,
                   going_out=50, relancinho=100, morto_not_taken=100),
    "bossa-nova": dict(clean=200, semi_clean=None, dirty=100, royal=None, ace_to_ace=None,
                       going_out=50, relancinho=100, morto_not_taken=100),
    "thirteen": dict(clean=200, semi_clean=None, dirty=100, royal=None, ace_to_ace=None,
                     going_out=100, relancinho=None, morto_not_taken=100),
    "burraco": dict(clean=200, semi_clean=150, dirty=100, royal=None, ace_to_ace=None,
                    going_out=100, relancinho=None, morto_not_taken=100),
    "mega": dict(clean=200, semi_clean=None, dirty=100, royal=None, ace_to_ace=None,
                 going_out=100, relancinho=None, morto_not_taken=100),
    "burako": dict(clean=200, semi_clean=None, dirty=100, royal=500, ace_to_ace=1000,
                   going_out=100, relancinho=None, morto_not_taken=100),
}
_BONUS_TABLE["thirteen-quick"] = _BONUS_TABLE["thirteen"]

_TARGETS = {
    "classic": 1500, "biriba": 1500, "bossa-nova": 1500, "thirteen": 2005,
    "thirteen-quick": 1005, "burraco": 2005, "mega": 3000, "burako": 3000,
}


# ------------------------------------------------------------------------------- helpers
def with_totals(s: Scenario, totals: tuple[int, ...]) -> Scenario:
    """Restart the scenario's hand 0 as if the match totals before it were ``totals``."""
    rep = Replayer()
    rep.step(s.events[0])
    start = msgspec.structs.replace(rep.state(), totals=totals)
    s.rep = Replayer(start=start)
    s.rep.step(s.events[1])
    return s


def run_out_stock(s: Scenario, *, scores: tuple[int, ...] | None = None) -> Scenario:
    """Everybody draws and discards the drawn card until the stock is at the floor."""
    t = s.rep._t
    while len(t.stock) > s.rules.stock_floor + 1:
        s.pass_turn()
    if len(t.stock) > s.rules.stock_floor:
        # The last turn throws a card the next player cannot use: under must-use-top a usable
        # top refuses the stock-out (stock.pile_can_be_taken), and that is not under test here.
        s.draw()
        for card in sorted(set(s.hand(s.turn))):
            after = step(s.state, CardDiscarded(s.turn, card, seq=s.rep.seq + 1))
            try:
                validate(after, HandEnded("stock_out", None, seq=after.seq + 1))
            except IllegalMoveError:
                continue
            s.push(CardDiscarded(s.turn, card, seq=s.rep.seq + 1))
            break
        else:
            s.push(CardDiscarded(s.turn, t.drawn or 0, seq=s.rep.seq + 1))
    return s.end_hand("stock_out", scores)


def next_hand(s: Scenario, hands: dict[int, str], stock: str = "") -> Scenario:
    hs = build_deal(s.rules, s.players, hands, stock, {}, None, hand_no=len(s.state.results))
    return s.push(msgspec.structs.replace(hs, seq=s.rep.seq + 1))


def phase_of(s: Scenario) -> str:
    return s.state.phase


SETS_11 = "7h 7s 7d 8c 8d 8s 9h 9s 9d Kc Kd"  # + Ks drawn: four sets, 105 points


def classic_relancinho(s: Scenario) -> Scenario:
    """Seat to move lays SETS_11 + Ks in one turn and goes out (classic: 105 + 50 + 100)."""
    s.draw().meld("7h 7s 7d").meld("8c 8d 8s").meld("9h 9s 9d").meld("Kc Kd Ks")
    return s.go_out()


# ================================================================ §9: the two tables
@pytest.mark.parametrize("name", ALL_PRESETS)
def test_every_card_scores_as_rules_md_card_table(name: str) -> None:
    rules = preset(name)
    table = rules.point_table()
    cards = sorted(set(deck(4)))
    assert len(cards) == 53
    wrong = {c: (rules.card_points(c), spec_points(name, c)) for c in cards
             if rules.card_points(c) != spec_points(name, c) or table[c] != spec_points(name, c)}
    assert wrong == {}


def test_the_classic_family_jokers_are_worth_10_when_a_house_rule_adds_them() -> None:
    # RULES.md §11: classic family "0 (2 'family')" jokers, joker column 10.
    for name in ("classic", "biriba", "bossa-nova"):
        r = derive(name, jokers=2)
        assert r.card_points(JOKER) == 10 and r.point_table()[JOKER] == 10


@pytest.mark.parametrize("name", ALL_PRESETS)
def test_every_bonus_is_as_rules_md_bonus_table(name: str) -> None:
    rules = preset(name)
    want = _BONUS_TABLE[name]
    b = rules.bonuses
    got: dict[str, int | None] = {
        "clean": b.clean,
        "semi_clean": b.semi_clean if rules.semi_clean else None,
        "dirty": b.dirty,
        "royal": b.royal if rules.royal_canastras else None,
        "ace_to_ace": b.ace_to_ace if rules.royal_canastras else None,
        "going_out": b.going_out,
        "relancinho": b.relancinho if rules.relancinho else None,
        "morto_not_taken": b.morto_not_taken if rules.morto else None,
    }
    assert got == want


# Canastra classes read from real melds, with the bonus each preset pays for them.
_SEMI = "Ah 2c 3h 4h 5h 6h 7h 8h 9h"  # 3..9 unbroken: semi-clean in burraco
_DIRTY_GAP = "3h 4h 5h 6h 2c 8h 9h Th"  # the wild interrupts: dirty everywhere
_CLEAN = "3h 4h 5h 6h 7h 8h 9h"
_ROYAL = "Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh"
_ACE_TO_ACE = _ROYAL + " Ah"
_SET7 = "9h 9s 9d 9c 9h 9s 9d"


@pytest.mark.parametrize(
    ("name", "cards", "cls", "bonus"),
    [
        ("burraco", _SEMI, "semi_clean", 150),
        ("thirteen", _SEMI, "dirty", 100),
        ("mega", _SEMI, "dirty", 100),
        ("burako", _SEMI, "dirty", 100),
        ("biriba", _SEMI, "dirty", 100),
        ("classic", _SEMI, "dirty", 100),
        ("burraco", _DIRTY_GAP, "dirty", 100),
        ("burraco", _CLEAN, "clean", 200),
        ("burako", _ROYAL, "royal", 500),
        ("burako", _ACE_TO_ACE, "ace_to_ace", 1000),
        ("burraco", _ROYAL, "clean", 200),
        ("thirteen", _ROYAL, "clean", 200),
        ("mega", _ROYAL, "clean", 200),
        ("classic", _SET7, "clean", 200),
        ("burako", _SET7, "clean", 200),
        ("mega", _SET7, None, 0),  # mega: only runs are canastras
    ],
)
def test_each_canastra_class_earns_its_presets_bonus(
    name: str, cards: str, cls: str | None, bonus: int
) -> None:
    rules = preset(name)
    reading = read_meld(parse_cards(cards), rules)
    assert reading.canastra == cls
    assert canastra_bonus(reading.canastra, rules) == bonus


def test_the_match_targets_and_vulnerability_knobs_are_as_rules_md() -> None:
    for name in ALL_PRESETS:
        r = preset(name)
        assert r.target_score == _TARGETS[name], name
        classic_family = name in ("classic", "biriba", "bossa-nova")
        assert r.vulnerability is classic_family, name
        if classic_family:
            assert r.vulnerable_at * 2 == r.target_score  # "half the target (750)"
            assert (r.opening_min, r.opening_min_after_retract) == (75, 90)


def test_vulnerability_follows_half_of_an_overridden_target() -> None:
    assert derive("classic", target_score=2000).vulnerable_at == 1000
    assert derive("biriba", target_score=2005).vulnerable_at == 1003  # "at least half"
    assert derive("classic").vulnerable_at == 750
    # Set by hand, it stays as given.
    assert derive("classic", target_score=2000, vulnerable_at=900).vulnerable_at == 900


# ====================================================== §9: whole hands scored, per preset
# Seat 0 lays a clean 8-card run and a set, discards, takes the morto (indirectly), and on
# its next turn lays the morto down and goes out. Seat 1 only draws and discards.
_FIRST_MELDS = {
    "default": ("3h 4h 5h 6h 7h 8h 9h 5c Kc Kd Ks", ("3h 4h 5h 6h 7h 8h 9h Th", "Kc Kd Ks")),
    "thirteen": (
        "3h 4h 5h 6h 7h 8h 9h 5c Kc Kd Ks Kh Kh",
        ("3h 4h 5h 6h 7h 8h 9h Th", "Kc Kd Ks Kh Kh"),
    ),
}
_MORTO0 = "Jc Jd Js Qc Qd Qs 4c 4d 4s Jh Ah"


@pytest.mark.parametrize(
    ("name", "expected0", "relancinho"),
    [
        # run 55 + kings 30 (50 in thirteen) + jacks 50 + queens 30 + fours 15 on the table
        ("biriba", 180 + 200 + 50 + 100, 100),
        ("bossa-nova", 180 + 200 + 50 + 100, 100),
        ("thirteen", 200 + 200 + 100, 0),
        ("burraco", 180 + 200 + 100, 0),
        ("mega", 180 + 200 + 100, 0),
        ("burako", 180 + 200 + 100, 0),
    ],
)
def test_a_whole_morto_hand_is_scored_per_side(
    name: str, expected0: int, relancinho: int
) -> None:
    hand0, melds = _FIRST_MELDS["thirteen" if name.startswith("thirteen") else "default"]
    opp = "JK 2c 2d Ac 7c" if preset(name).jokers else "2c 2d Ac 7c"
    s = Scenario(name, hands={0: hand0, 1: opp}, stock="Th 8c Jh", mortos={0: _MORTO0})
    s.draw()
    for m in melds:
        s.meld(m)
    s.discard("5c").morto(direct=False)
    s.pass_turn()
    s.draw("Jh").meld("Jc Jd Js Jh Jh").meld("Qc Qd Qs").meld("4c 4d 4s").discard("Ah")
    s.go_out()
    pen1 = spec_sum(name, s.hand(1))
    s.end_hand("went_out", (expected0, -pen1 - 100))
    side0, side1 = s.state.results[0].scores
    assert side0.canastras == {"clean": 1} and side0.canastra_bonus == 200
    assert side0.going_out == _BONUS_TABLE[name]["going_out"]
    assert side0.relancinho == relancinho
    assert (side0.hand_penalty, side0.morto_penalty, side0.total) == (0, 0, expected0)
    assert (side1.going_out, side1.relancinho, side1.morto_penalty) == (0, 0, 100)
    assert side1.hand_penalty == pen1 and side1.total == -pen1 - 100
    assert s.state.totals == (expected0, -pen1 - 100)


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_a_hand_ended_by_the_stock_charges_both_untaken_mortos(name: str) -> None:
    # Filler hands can use any top card here; the pile rule is not what this is about.
    s = Scenario(name, hands={0: "Ah 2c", 1: "2d"}, pile_pickup="free")
    run_out_stock(s)
    for side, seat in ((0, 0), (1, 1)):
        sc = s.state.results[0].scores[side]
        pen = spec_sum(name, s.hand(seat))
        assert (sc.table_points, sc.canastra_bonus, sc.going_out) == (0, 0, 0)
        assert (sc.hand_penalty, sc.morto_penalty) == (pen, 100)
        assert sc.total == -pen - 100


def test_classic_has_no_morto_penalty_when_the_stock_runs_out() -> None:
    s = Scenario("classic", hands={0: "Ah 2c"})
    run_out_stock(s)
    side0, side1 = s.state.results[0].scores
    assert side0.morto_penalty == side1.morto_penalty == 0
    assert side0.total == -spec_sum("classic", s.hand(0))
    assert side1.total == -spec_sum("classic", s.hand(1))


@pytest.mark.parametrize(
    ("name", "table", "cls", "bonus"),
    [
        # A 2c 3..9: 15 + two + 25 + 20
        ("burraco", 15 + 20 + 25 + 20, "semi_clean", 150),
        ("thirteen", 15 + 10 + 25 + 20, "dirty", 100),
        ("mega", 15 + 10 + 25 + 20, "dirty", 100),
        ("biriba", 15 + 10 + 25 + 20, "dirty", 100),
    ],
)
def test_wild_cards_on_the_table_and_the_canastra_class_are_scored(
    name: str, table: int, cls: str, bonus: int
) -> None:
    s = Scenario(name, hands={0: "Ah 2c 3h 4h 5h 6h 7h 8h 9h Kc Kd"}, stock="Qs")
    s.draw().meld(_SEMI).discard("Qs")
    run_out_stock(s)
    side0 = s.state.results[0].scores[0]
    pen = spec_sum(name, s.hand(0))
    assert side0.table_points == table
    assert side0.canastras == {cls: 1} and side0.canastra_bonus == bonus
    assert side0.total == table + bonus - pen - 100


@pytest.mark.parametrize(("name", "joker"), [("burraco", 30), ("thirteen", 50), ("mega", 50)])
def test_a_joker_in_a_dirty_canastra_counts_its_own_points(name: str, joker: int) -> None:
    s = Scenario(name, hands={0: "3h 4h 5h 6h JK 8h 9h Th Kc Kd"}, stock="Qs")
    s.draw().meld("3h 4h 5h 6h JK 8h 9h Th").discard("Qs")
    run_out_stock(s)
    side0 = s.state.results[0].scores[0]
    assert side0.table_points == 20 + joker + 30
    assert side0.canastras == {"dirty": 1} and side0.canastra_bonus == 100


@pytest.mark.parametrize(
    ("lay", "cls", "bonus", "table"),
    [
        ("Qh Kh", "royal", 500, 110),
        ("Qh Kh Ah", "ace_to_ace", 1000, 125),
    ],
)
def test_burako_royal_and_ace_to_ace_canastras_score_500_and_1000(
    lay: str, cls: str, bonus: int, table: int
) -> None:
    s = Scenario(
        "burako",
        hands={0: "Ah 2h 3h 4h 5h 6h 7h 8h 9h Th 5c"},
        stock="Jh 8c 7s",
        mortos={0: "Qh Kh Ah 3c 3d 3s 9c 9d 9s 5d 6d"},
    )
    s.draw().meld("Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Jh").discard("5c").morto(direct=False)
    s.pass_turn()
    s.draw("7s").layoff(0, lay).discard("7s")
    assert s.state.melds[0][0].canastra == cls
    run_out_stock(s)
    side0 = s.state.results[0].scores[0]
    assert side0.canastras == {cls: 1}
    assert (side0.table_points, side0.canastra_bonus, side0.morto_penalty) == (table, bonus, 0)
    assert side0.total == table + bonus - spec_sum("burako", s.hand(0))


@pytest.mark.parametrize("name", ["thirteen", "burraco", "mega", "burako"])
def test_presets_without_relancinho_pay_none_for_a_whole_hand_in_one_turn(name: str) -> None:
    hand0, melds = _FIRST_MELDS["thirteen" if name.startswith("thirteen") else "default"]
    s = Scenario(name, hands={0: hand0}, stock="Th")
    s.draw()
    for m in melds:
        s.meld(m)
    s.discard("5c").morto(direct=False)
    run_out_stock(s)
    assert s.state.relancinho == (0, 0)
    assert s.state.results[0].scores[0].relancinho == 0


def test_classic_relancinho_ending_with_a_discard_earns_100_and_the_going_out_bonus() -> None:
    s = Scenario("classic", hands={0: "7h 7s 7d 7c 8c 8d 8s 9h 9s 9d Kd"}, stock="9c")
    s.draw().meld("7h 7s 7d 7c").meld("8c 8d 8s").meld("9h 9s 9d 9c").discard("Kd")
    s.go_out().end_hand("went_out", (90 + 50 + 100, -spec_sum("classic", s.hand(1))))
    side0 = s.state.results[0].scores[0]
    assert (side0.table_points, side0.going_out, side0.relancinho) == (90, 50, 100)
    assert side0.total == 240


def test_bossa_nova_relancinho_takes_the_morto_and_notes_only_the_100() -> None:
    s = Scenario("bossa-nova", hands={0: "3h 4h 5h 6h 7h 8h 9h 5c Kc Kd Ks"}, stock="Th")
    s.draw().meld("3h 4h 5h 6h 7h 8h 9h Th").meld("Kc Kd Ks").discard("5c")
    s.morto(direct=False)
    assert s.state.phase == "draw" and s.turn == 1  # the hand goes on
    assert s.state.relancinho == (1, 0)
    run_out_stock(s)
    side0 = s.state.results[0].scores[0]
    assert (side0.relancinho, side0.going_out, side0.morto_penalty) == (100, 0, 0)
    assert side0.total == 85 + 200 + 100 - spec_sum("bossa-nova", s.hand(0))


def test_partners_hands_are_both_subtracted_from_their_side() -> None:
    s = Scenario("classic", 4, hands={0: SETS_11, 1: "Ah As 2c", 2: "Ad 2d", 3: "3c"},
                 stock="Ks")
    classic_relancinho(s).end_hand()
    side0, side1 = s.state.results[0].scores
    assert side0.hand_penalty == spec_sum("classic", s.hand(2)) > 0
    assert side0.total == 105 + 50 + 100 - side0.hand_penalty
    assert side1.hand_penalty == spec_sum("classic", s.hand(1) + s.hand(3))
    assert side1.total == -side1.hand_penalty


def test_three_players_are_three_sides_each_paying_its_own_morto() -> None:
    s = Scenario("biriba", 3, hands={0: "Ah", 1: "2c", 2: "Kd"})
    run_out_stock(s)
    scores = s.state.results[0].scores
    assert len(scores) == 3 and len(s.state.totals) == 3
    for seat, sc in enumerate(scores):
        assert sc.side == seat and sc.morto_penalty == 100
        assert sc.total == -spec_sum("biriba", s.hand(seat)) - 100


# ============================================================= §10: the end of the match
def test_reaching_exactly_the_target_ends_the_match_after_that_hand() -> None:
    s = with_totals(Scenario("classic", hands={0: SETS_11}, stock="Ks"), (1245, 0))
    classic_relancinho(s).end_hand()
    assert s.state.totals[0] == 1500
    assert s.state.phase == "decided" and s.state.winner == 0
    with s.illegal("match.decided"):
        next_hand(s, {})
    s.end_match(totals=s.state.totals, winner=0)
    assert phase_of(s) == "over"


def test_one_point_short_of_the_target_plays_another_hand() -> None:
    s = with_totals(Scenario("classic", hands={0: SETS_11}, stock="Ks"), (1244, 0))
    classic_relancinho(s).end_hand()
    assert s.state.totals[0] == 1499
    assert s.state.phase == "between" and s.state.winner is None
    with s.illegal("match.not_over"):
        s.end_match()
    next_hand(s, {})
    assert s.state.hand == 1 and s.state.totals[0] == 1499


@pytest.mark.parametrize(("name", "target"), [("thirteen-quick", 1005), ("burraco", 2005)])
def test_each_presets_own_target_decides(name: str, target: int) -> None:
    for above in (0, -1):
        # The hand costs side 0 its hand cards and the 100 of the untaken morto: start so
        # that it ends exactly at the target, or one point below.
        probe = Scenario(name, hands={0: "Kc"})
        run_out_stock(probe)
        lost = -probe.state.results[0].scores[0].total
        assert lost == spec_sum(name, probe.hand(0)) + 100
        start, decided = target + lost + above, above == 0
        s = with_totals(Scenario(name, hands={0: "Kc"}), (start, 0))
        run_out_stock(s)
        assert s.state.totals[0] == start - lost
        assert (s.state.phase == "decided") is decided, (start, lost)
        assert s.state.winner == (0 if decided else None)


def test_a_tie_at_the_target_plays_another_hand_which_then_decides() -> None:
    s = Scenario("classic", hands={0: SETS_11, 1: "Ah As Ad"}, stock="Ks")
    pen1 = spec_sum("classic", s.hand(1))
    with_totals(s, (1500, 1755 + pen1))  # side 0 scores 255 and side 1 -pen1: 1755 each
    classic_relancinho(s).end_hand()
    assert s.state.totals == (1755, 1755)
    assert s.state.phase == "between" and s.state.winner is None
    with s.illegal("match.not_over"):
        s.end_match()
    # Hand 1: the dealer is seat 0, so seat 1 plays first.
    next_hand(s, {0: SETS_11}, stock="4c Ks")
    assert s.turn == 1
    s.pass_turn()
    classic_relancinho(s).end_hand()
    assert s.state.totals[0] == 1755 + 255 > s.state.totals[1]
    assert phase_of(s) == "decided" and s.state.winner == 0


@pytest.mark.parametrize(
    ("totals", "winner"),
    [
        ((1005, 1004), 0),
        ((1004, 1004), None),
        ((1004, -20), None),
        ((1100, 1100), None),
        ((1100, 1100, 1200), 2),
        ((1100, 1100, 900), None),
        ((-50, 1005), 1),
    ],
)
def test_the_unique_highest_total_at_the_target_wins(
    totals: tuple[int, ...], winner: int | None
) -> None:
    assert match_decided(preset("thirteen-quick"), totals) == winner


# ======================================================================= §10: vulnerability
def test_a_side_at_exactly_half_the_target_is_vulnerable_and_one_point_less_is_not() -> None:
    s = with_totals(Scenario("classic", hands={0: "7h 7s 7d 4c", 1: "8h 8s 8d 4d"}), (750, 749))
    assert s.state.vulnerable == (True, False)
    s.draw().meld("7h 7s 7d")
    with s.illegal("vulnerable.opening_too_low"):
        s.discard("4c")
    s.retract("7h 7s 7d").discard("4c")
    assert s.state.opening_min == (90, 75) and s.state.melds[0] == ()
    s.draw().meld("8h 8s 8d").discard("4d")  # side 1 (749) opens with 30
    assert s.state.opened == (False, True)


@pytest.mark.parametrize("name", ["biriba", "bossa-nova"])
def test_the_classic_family_with_morto_is_vulnerable_too(name: str) -> None:
    s = with_totals(Scenario(name, hands={0: "7h 7s 7d 4c"}), (750, 0))
    assert s.state.vulnerable == (True, False)
    s.draw().meld("7h 7s 7d")
    with s.illegal("vulnerable.opening_too_low"):
        s.discard("4c")


@pytest.mark.parametrize("name", ["thirteen", "burraco", "mega", "burako"])
def test_other_presets_are_never_vulnerable(name: str) -> None:
    s = with_totals(Scenario(name, hands={0: "7h 7s 7d 4c"}), (1900, 1900))
    assert s.state.vulnerable == (False, False)
    s.draw().meld("7h 7s 7d").discard("4c")
    assert s.state.opened == (True, False)


def test_a_layoff_in_the_opening_turn_counts_toward_the_75() -> None:
    s = with_totals(Scenario("classic", hands={0: "7h 7s 7d Ah As Ad Ac 4c"}), (800, 0))
    s.draw().meld("7h 7s 7d").meld("Ah As Ad")  # 60
    with s.illegal("vulnerable.opening_too_low"):
        s.discard("4c")
    s.layoff(1, "Ac").discard("4c")  # 75
    assert s.state.opened == (True, False) and len(s.state.melds[0]) == 2


def test_after_a_retraction_the_partner_also_needs_90() -> None:
    s = with_totals(
        Scenario("classic", 4, hands={0: "7h 7s 7d 4c", 2: "Kh Ks Kd Ah As Ad 4d 8c 8s 8d"}),
        (800, 0),
    )
    s.draw().meld("7h 7s 7d").retract().discard("4c")
    s.pass_turn()
    s.draw().meld("Kh Ks Kd").meld("Ah As Ad")  # seat 2: 75, the side now needs 90
    with s.illegal("vulnerable.opening_too_low"):
        s.discard("4d")
    assert s.state.opening_min == (90, 75)
    s.meld("8c 8s 8d")  # 105
    s.discard("4d")
    assert s.state.opened == (True, False) and len(s.state.melds[0]) == 3


def test_the_90_lasts_only_for_that_hand() -> None:
    s = with_totals(Scenario("classic", hands={0: "7h 7s 7d 4c"}), (1000, 0))
    s.draw().meld("7h 7s 7d").retract().discard("4c")
    assert s.state.opening_min == (90, 75)
    run_out_stock(s)
    assert s.state.totals[0] >= 750  # still vulnerable in the next hand
    next_hand(s, {1: "8h 8s 8d 4d"})
    assert s.state.vulnerable == (True, False)
    assert s.state.opening_min == (75, 75) and s.state.opened == (False, False)


def test_a_short_opening_that_empties_the_hand_is_taken_back_and_the_turn_goes_on() -> None:
    """RULES.md §10: a vulnerable side that lays less "must take those cards back", even when
    those melds emptied the hand (README: decisions): going out is refused, the retraction
    is the move, and the player then discards."""
    s = with_totals(
        Scenario("classic", hands={0: "3h 3s 3d 4h 4s 4d 5h 5s 5d 6h 6s"}, stock="6d"),
        (800, 0),
    )
    s.draw().meld("3h 3s 3d").meld("4h 4s 4d").meld("5h 5s 5d").meld("6h 6s 6d")  # 60
    assert s.state.phase == "emptied"
    with s.illegal("vulnerable.opening_too_low"):
        s.go_out()
    assert [type(m).__name__ for m in legal_moves(s.state)] == ["OpeningRetracted"]
    s.retract()  # the 12 cards come back
    assert len(s.hand(0)) == 12 and s.state.melds[0] == ()
    assert s.state.opening_min == (90, 75) and s.state.phase == "play"
    s.discard("6s")
    assert s.state.turn == 1 and s.state.relancinho == (0, 0)


def test_a_short_opening_that_empties_the_hand_takes_no_morto_and_no_relancinho() -> None:
    s = with_totals(
        Scenario(
            "biriba",
            hands={0: "3h 3s 3d 4h 4s 4d 5h 5s 5d 6h 6s"},
            stock="6d",
            mortos={0: "Jh Js Jd Qh Qs Qd 4c 9c 9d 9s Tc"},
        ),
        (800, 0),
    )
    s.draw().meld("3h 3s 3d").meld("4h 4s 4d").meld("5h 5s 5d").meld("6h 6s 6d")  # 60
    with s.illegal("vulnerable.opening_too_low"):
        s.morto(direct=True)
    s.retract()  # the 12 cards laid this turn come back: nothing of the hand stays down
    assert s.state.melds[0] == () and len(s.hand(0)) == 12
    assert s.state.morto_taken == (False, False)
    s.discard("6s")
    run_out_stock(s)
    side0 = s.state.results[0].scores[0]
    assert s.state.relancinho == (0, 0)
    assert side0.relancinho == 0 and side0.morto_penalty == 100


# ================================================================= recorded-score checking
def _decided_hand() -> tuple[Scenario, int]:
    """Classic to 100: seat 0's relancinho (255) decides the match. Returns side 1's score."""
    s = Scenario("classic", hands={0: SETS_11, 1: "Ah As 2c"}, stock="Ks", target_score=100)
    classic_relancinho(s)
    return s, -spec_sum("classic", s.hand(1))


def test_a_wrong_score_of_the_losing_side_is_rejected_and_names_it() -> None:
    s, other = _decided_hand()
    with s.illegal("score.mismatch"):
        s.end_hand(scores=(255, other - 5))
    assert "side 1" in str(s.last_error) and "side 0" not in str(s.last_error)
    assert f"recorded {other - 5}, recomputed {other} (-5)" in str(s.last_error)
    for wrong in ((255,), (255, other, 0), (other, 255)):
        with s.illegal("score.mismatch"):
            s.end_hand(scores=wrong)
    s.end_hand(scores=(255, other))
    assert s.state.results[0].recorded == (255, other)
    assert s.state.totals == (255, other) and s.state.winner == 0


def test_replaying_a_log_with_a_wrong_hand_score_stops_there() -> None:
    s, other = _decided_hand()
    seq = s.rep.seq + 1
    events: list[AnyEvent] = [*s.events, HandEnded("went_out", (255, other + 10), seq=seq)]
    with pytest.raises(IllegalMoveError) as info:
        replay(events)
    assert (info.value.rule, info.value.seq) == ("score.mismatch", seq)
    good = [*s.events, HandEnded("went_out", (255, other), seq=seq),
            MatchEnded((255, other), 0, seq=seq + 1)]
    final = replay(good)
    assert final.phase == "over" and final.totals == (255, other) and final.winner == 0


def test_replaying_a_log_with_wrong_match_totals_is_refused() -> None:
    s, other = _decided_hand()
    seq = s.rep.seq + 1
    events: list[AnyEvent] = [*s.events, HandEnded("went_out", (255, other), seq=seq),
                              MatchEnded((255, other + 1), 0, seq=seq + 1)]
    with pytest.raises(IllegalMoveError) as info:
        replay(events)
    assert (info.value.rule, info.value.seq) == ("score.mismatch", seq + 1)


def test_the_audit_finds_a_wrong_hand_score_and_wrong_match_totals(tmp_path: Path) -> None:
    s, other = _decided_hand()
    seq = s.rep.seq + 1
    events: list[AnyEvent] = [*s.events, HandEnded("went_out", (255, other - 20), seq=seq),
                              MatchEnded((255, other - 20), 0, seq=seq + 1)]
    v = audit.audit_log(bl.write(tmp_path / "m.log", events))
    assert not v.ok
    scoring = [(f.rule, f.seq) for f in v.findings if f.section == "scoring"]
    assert scoring == [("score.mismatch", seq), ("score.mismatch", seq + 1)]
    assert v.legality.first_illegal is None
    hand = v.scoring.hands[0]
    assert not hand.ok and hand.end_seq == seq
    assert [(x.recorded, x.recomputed, x.difference) for x in hand.sides] == [
        (255, 255, 0), (other - 20, other, -20)]
    assert v.scoring.totals_recorded == (255, other - 20)
    assert v.scoring.totals_recomputed == (255, other)


def test_the_audit_finds_a_hand_scored_for_the_wrong_number_of_sides(tmp_path: Path) -> None:
    s, other = _decided_hand()
    seq = s.rep.seq + 1
    events: list[AnyEvent] = [*s.events, HandEnded("went_out", (255,), seq=seq),
                              MatchEnded((255, other), 0, seq=seq + 1)]
    v = audit.audit_log(bl.write(tmp_path / "m.log", events))
    found = [f for f in v.findings if f.section == "scoring"]
    assert [(f.rule, f.seq) for f in found] == [("score.mismatch", seq)]
    assert "1 scores recorded for 2 sides" in found[0].message
    assert not v.scoring.hands[0].ok and not v.ok


def test_the_audit_passes_a_correctly_scored_log(tmp_path: Path) -> None:
    s, other = _decided_hand()
    seq = s.rep.seq + 1
    events: list[AnyEvent] = [*s.events, HandEnded("went_out", (255, other), seq=seq),
                              MatchEnded((255, other), 0, seq=seq + 1)]
    v = audit.audit_log(bl.write(tmp_path / "m.log", events))
    assert [f for f in v.findings if f.section in ("scoring", "legality")] == []
    assert v.scoring.ok and v.scoring.hands[0].ok
    assert v.scoring.totals_recomputed == (255, other)
