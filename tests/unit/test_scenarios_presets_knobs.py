"""Rule scenarios for the knobs: each knob's other value switched on (or off) over a preset
that has the first, accepted where the knob allows a move and refused by its exact rule id where
it does not (RULES.md §4–§10 describe every knob; docs/rules.md lists them)."""

from __future__ import annotations

import msgspec
import pytest

from buraco_log.cards import parse_cards
from buraco_log.errors import IllegalMoveError
from buraco_log.events import CardDiscarded, MortoTaken, TotalsCarried
from buraco_log.melds import MeldError, read_meld
from buraco_log.reducer import Replayer
from buraco_log.rules import derive, preset
from tests.play import start
from tests.scenario import Scenario, build_deal

MORTO = "Th Ts Td Tc Kh Ks Kd Qh Qs Qd Qc"


def refused(s: Scenario, rule: str, move: str, *args: object, **kw: object) -> None:
    seq = s.rep.seq + 1
    with s.illegal(rule):
        getattr(s, move)(*args, **kw)
    assert s.last_error.seq == seq


def carried(s: Scenario, totals: tuple[int, ...]) -> Scenario:
    rep = Replayer()
    first, deal = s.events[0], msgspec.structs.replace(s.events[1], seq=2)
    tc = TotalsCarried(totals, seq=1)
    for ev in (first, tc, deal):
        rep.step(ev)
    s.rep, s.events = rep, [first, tc, deal]
    return s


def reading(name: str, text: str, **knobs: object) -> tuple[str, int, str | None] | str:
    try:
        r = read_meld(parse_cards(text), derive(name, **knobs) if knobs else preset(name))
    except MeldError as exc:
        return exc.rule
    return (r.kind, r.size, r.canastra)


# -- vulnerability: half the target (RULES.md §10) -----------------------------------------


@pytest.mark.parametrize("name", ["thirteen", "thirteen-quick", "burraco", "mega", "burako"])
def test_vulnerability_switched_on_is_at_half_the_presets_target(name: str) -> None:
    # thirteen 2005 -> 1003, thirteen-quick 1005 -> 503, burraco 2005 -> 1003, mega and burako
    # 3000 -> 1500: the same as when the target is named too (it used to stay at 750).
    half = (preset(name).target_score + 1) // 2
    r = derive(name, vulnerability=True)
    assert r.vulnerable_at == half
    assert derive(name, vulnerability=True, target_score=r.target_score) == r
    assert derive(name, vulnerability=True, vulnerable_at=750).vulnerable_at == 750


@pytest.mark.parametrize("below", [True, False])
def test_thirteen_with_vulnerability_asks_75_from_half_its_target(below: bool) -> None:
    rules = derive("thirteen", vulnerability=True)
    total = 1002 if below else 1003
    s = carried(Scenario(rules, hands={0: "3h 3s 3d 9c"}, stock="4c"), (total, 0))
    s.draw("4c").meld("3h 3s 3d")
    if below:
        s.discard("4c")
        return
    refused(s, "vulnerable.opening_too_low", "discard", "4c")
    s.retract()
    refused(s, "vulnerable.retract_not_needed", "retract", "3h 3s 3d")


@pytest.mark.parametrize(("name", "knobs", "ok"), [
    ("classic", {"opening_min": 50, "opening_min_after_retract": 60}, True),
    ("classic", {"opening_min": 55, "opening_min_after_retract": 60}, False),
])
def test_the_opening_minimum_is_a_knob(name: str, knobs: dict[str, int], ok: bool) -> None:
    # Kh Ks Kd (30) + 3h 3s 3d 3c (20) = 50 card points.
    s = carried(Scenario(name, hands={0: "Kh Ks Kd 3h 3s 3d 3c 9c"}, stock="4c", **knobs),
                (750, 0))
    s.draw("4c").meld("Kh Ks Kd").meld("3h 3s 3d 3c")
    if ok:
        s.discard("4c")
        return
    refused(s, "vulnerable.opening_too_low", "discard", "4c")
    s.retract()
    assert s.state.opening_min == (60, 55)


# -- the morto: direct or indirect, and the canastra it needs (RULES.md §7) -----------------

# Seat 0 lays 3-3-3, 4-4-4 and five 5s: with the drawn 5s a sixth 5 empties the hand by
# melding; with 9d the hand keeps 9d, and throwing it empties it by a discard.
SETS = "3h 3s 3d 4h 4s 4d 5h 5s 5d 5c 5h"


def _to_the_last_meld(name: str, drawn: str, **knobs: object) -> Scenario:
    s = Scenario(name, hands={0: SETS}, stock=drawn, mortos={0: MORTO}, **knobs)
    s.draw(drawn).meld("3h 3s 3d").meld("4h 4s 4d")
    return s


@pytest.mark.parametrize(("name", "knobs", "direct_ok"), [
    ("biriba", {"morto_direct": False}, False),
    ("burako", {}, False),
    ("burako", {"morto_direct": True}, True),
    ("biriba", {}, True),
])
def test_morto_direct_is_the_knob_that_lets_melding_take_the_morto(
    name: str, knobs: dict[str, bool], direct_ok: bool
) -> None:
    s = _to_the_last_meld(name, "5s", **knobs)
    if not direct_ok:
        refused(s, "morto.indirect_only", "meld", "5h 5s 5d 5c 5h 5s")
        # Keeping a card to throw is the indirect way, always open.
        s.meld("5h 5s 5d 5c 5h").discard("5s").morto(direct=False)
        assert s.turn == 1
        return
    s.meld("5h 5s 5d 5c 5h 5s").morto(direct=True)
    assert s.state.phase == "play" and s.turn == 0 and len(s.hand(0)) == 11


@pytest.mark.parametrize(("name", "knobs", "needs"), [
    ("biriba", {"morto_needs_canastra": True}, True),
    ("bossa-nova", {}, True),
    ("bossa-nova", {"morto_needs_canastra": False}, False),
    ("biriba", {}, False),
])
def test_morto_needs_canastra_is_the_knob_of_bossa_nova(
    name: str, knobs: dict[str, bool], needs: bool
) -> None:
    s = _to_the_last_meld(name, "9d", **knobs)
    if needs:  # keeping 9d alone would take the morto by its discard: no canastra
        refused(s, "morto.needs_canastra", "meld", "5h 5s 5d 5c 5h")
        return
    s.meld("5h 5s 5d 5c 5h").discard("9d").morto(direct=False)


@pytest.mark.parametrize(("name", "knobs", "needs"), [
    ("mega", {}, True),
    ("mega", {"go_out_needs_canastra": False}, False),
    ("biriba", {"go_out_needs_canastra": True}, True),
    ("biriba", {}, False),
])
def test_go_out_needs_canastra_is_a_knob(name: str, knobs: dict[str, bool], needs: bool) -> None:
    # No canastra on the table: the first hand goes down in sets, the morto too.
    s = _to_the_last_meld(name, "9d", **knobs)
    s.meld("5h 5s 5d 5c 5h").discard("9d").morto(direct=False)
    s.pass_turn()
    s.draw().meld("Th Ts Td Tc").meld("Qh Qs Qd Qc")
    kings = "Kh Ks Kd"
    if needs:
        refused(s, "go_out.needs_canastra", "meld", kings)  # would keep one card
        return
    s.meld(kings)
    s.push(CardDiscarded(0, s.hand(0)[0], seq=s.rep.seq + 1))  # the card drawn
    s.go_out().end_hand()
    assert s.state.results[0].scores[0].canastras == {}


def test_classic_with_go_out_needs_canastra_refuses_the_last_meld() -> None:
    s = Scenario("classic", hands={0: "3h 4h 5h 7c 7d 7s 9s 9d 9h Qc Qd"}, stock="Qs",
                 go_out_needs_canastra=True)
    s.draw("Qs").meld("3h 4h 5h").meld("7c 7d 7s").meld("9s 9d 9h")
    refused(s, "go_out.needs_canastra", "meld", "Qc Qd Qs")


@pytest.mark.parametrize(("name", "knobs", "counts"), [
    ("bossa-nova", {"canastra_from_sets": False}, False),
    ("bossa-nova", {}, True),
    ("mega", {}, False),
    ("mega", {"canastra_from_sets": True}, True),
])
def test_canastra_from_sets_decides_whether_seven_of_a_rank_is_a_canastra(
    name: str, knobs: dict[str, bool], counts: bool
) -> None:
    # Seven 5s, four 3s, and the drawn 9d thrown: the morto needs a canastra in bossa-nova;
    # mega's going out needs one (its morto does not), so mega is tested at its going out.
    s = Scenario(name, hands={0: "5h 5s 5d 5c 5h 5s 5d 3h 3s 3d 3c"}, stock="9d 4c Kc",
                 mortos={0: MORTO}, **knobs)
    s.draw("9d").meld("5h 5s 5d 5c 5h 5s 5d")
    assert s.state.melds[0][0].canastra == ("clean" if counts else None)
    if name == "bossa-nova" and not counts:
        refused(s, "morto.needs_canastra", "meld", "3h 3s 3d 3c")
        return
    s.meld("3h 3s 3d 3c").discard("9d").morto(direct=False)
    if name == "bossa-nova":
        return
    s.pass_turn()
    s.draw("Kc").meld("Th Ts Td Tc").meld("Qh Qs Qd Qc")
    if not counts:
        refused(s, "go_out.needs_canastra", "meld", "Kh Ks Kd Kc")
        return
    s.meld("Kh Ks Kd Kc").go_out()


def test_morto_size_is_dealt_and_counted() -> None:
    s = Scenario("biriba", hands={0: SETS}, stock="5s", morto_size=13)
    assert [len(m) for m in s.state.mortos] == [13, 13]
    s.draw("5s").meld("3h 3s 3d").meld("4h 4s 4d").meld("5h 5s 5d 5c 5h 5s")
    refused(s, "morto.wrong_count", "push", MortoTaken(0, True, 11, seq=s.rep.seq + 1))
    s.push(MortoTaken(0, True, 13, seq=s.rep.seq + 1))
    assert len(s.hand(0)) == 13


# -- the deal, the pile and the draw (RULES.md §3, §4, §8) -----------------------------------


def test_initial_upcard_on_starts_the_pile_and_the_first_player_may_take_it() -> None:
    s = Scenario("classic", upcard="Kh", initial_upcard=True)
    assert s.state.pile == parse_cards("Kh")
    s.take_pile()
    assert len(s.hand(0)) == 12
    refused(s, "draw.redraw_only_first", "reject", "Kh")  # no stock card was drawn


def test_initial_upcard_off_leaves_the_pile_empty_and_a_dealt_upcard_refused() -> None:
    rules = derive("thirteen", initial_upcard=False)
    s = Scenario(rules)
    assert s.state.pile == ()
    refused(s, "pile.empty", "take_pile", 0, "Kh")
    s.draw()
    # A deal with an upcard under these rules: refused.
    rep = Replayer()
    rep.step(s.events[0])
    with pytest.raises(IllegalMoveError) as info:
        rep.step(build_deal(preset("thirteen"), 2, {}, "", {}, None))
    assert info.value.rule == "deal.upcard"


# Seat 1 holds nothing that goes with Kh: no king, heart, 2 or joker.
DEAD_FOR_KH = "3c 4s 6c 8d 9s Tc Jd Qs 3d 4d 5s 7c 8s"


@pytest.mark.parametrize(("name", "knobs", "free"), [
    ("biriba", {"pile_pickup": "must_use_top"}, False),
    ("thirteen", {}, False),
    ("thirteen", {"pile_pickup": "free"}, True),
    ("biriba", {}, True),
])
def test_pile_pickup_free_or_only_to_use_its_top(
    name: str, knobs: dict[str, str], free: bool
) -> None:
    size = derive(name, **knobs).hand_size
    s = Scenario(name, hands={0: "Kh", 1: " ".join(DEAD_FOR_KH.split()[:size])},
                 stock="4c", **knobs)
    s.draw("4c").discard("Kh")
    if not free:
        refused(s, "pile.must_use_top", "take_pile")
        s.draw()
        return
    s.take_pile()
    assert parse_cards("Kh")[0] in s.hand(1)


@pytest.mark.parametrize(("name", "knobs", "redraw"), [
    ("thirteen", {"first_turn_redraw": True}, True),
    ("classic", {}, True),
    ("classic", {"first_turn_redraw": False}, False),
    ("mega", {}, False),
])
def test_first_turn_redraw_is_a_knob(name: str, knobs: dict[str, bool], redraw: bool) -> None:
    s = Scenario(name, stock="Kh 4c", **knobs)
    s.draw("Kh")
    if not redraw:
        refused(s, "draw.redraw_not_allowed", "reject", "Kh")
        return
    s.reject("Kh")
    assert s.state.pile[-1] == parse_cards("Kh")[0]
    refused(s, "draw.redraw_from_stock", "take_pile")
    s.draw("4c").discard("4c")


@pytest.mark.parametrize(("name", "knobs", "floor"), [
    ("classic", {"stock_floor": 2}, 2),
    ("mega", {}, 2),
    ("mega", {"stock_floor": 0}, 0),
])
def test_stock_floor_ends_the_hand_at_that_many_cards(
    name: str, knobs: dict[str, int], floor: int
) -> None:
    s = Scenario(name, **knobs)
    t = s.rep._t
    while len(t.stock) > floor + 1:
        s.pass_turn()
    refused(s, "hand.not_over", "end_hand", "stock_out")  # floor + 1 cards: play on
    s.pass_turn()
    assert len(t.stock) == floor
    refused(s, "stock.floor_reached", "draw", "4c")  # any card: the floor comes first
    s.end_hand("stock_out")
    assert s.state.results[0].reason == "stock_out"


# -- melds and canastras (RULES.md §5, §6) --------------------------------------------------


def test_ace_both_ends_is_a_knob() -> None:
    both = "Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh Ah"
    assert reading("classic", both, ace_both_ends=True) == ("run", 14, "clean")
    assert reading("classic", both) == "meld.duplicate_in_run"
    assert reading("burako", both) == ("run", 14, "ace_to_ace")
    assert reading("burako", both, ace_both_ends=False) == "meld.duplicate_in_run"
    # Without it a run stops at 13 cards: A..K and a wild is one too many.
    full = "Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh JK"
    assert reading("burako", full) == ("run", 14, "dirty")
    assert reading("burako", full, ace_both_ends=False) == "meld.run_too_long"


def test_max_sets_per_rank_is_a_knob() -> None:
    for name, knobs, limit in (("classic", {"max_sets_per_rank": 1}, True), ("classic", {}, False),
                               ("mega", {}, True), ("mega", {"max_sets_per_rank": 0}, False)):
        s = Scenario(name, hands={0: "7h 7s 7d 7c 7h 7s 9c"}, stock="4c", **knobs)
        s.draw("4c").meld("7h 7s 7d")
        if limit:
            refused(s, "meld.second_set_of_rank", "meld", "7c 7h 7s")
            s.layoff(0, "7c 7h 7s")  # the same cards on the first set are fine
        else:
            s.meld("7c 7h 7s")
        s.discard("4c")


def test_semi_clean_is_a_knob() -> None:
    run = "3h 4h 5h 6h 7h 8h 9h JK"
    assert reading("mega", run, semi_clean=True) == ("run", 8, "semi_clean")
    assert reading("mega", run) == ("run", 8, "dirty")
    assert reading("burraco", run) == ("run", 8, "semi_clean")
    assert reading("burraco", run, semi_clean=False) == ("run", 8, "dirty")


def test_royal_canastras_is_a_knob() -> None:
    run = "Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh"
    assert reading("classic", run, royal_canastras=True) == ("run", 13, "royal")
    assert reading("classic", run) == ("run", 13, "clean")
    assert reading("burako", run) == ("run", 13, "royal")
    assert reading("burako", run, royal_canastras=False) == ("run", 13, "clean")


# -- relancinho, players, jokers (RULES.md §1, §2, §7) ---------------------------------------


@pytest.mark.parametrize(("name", "knobs", "bonus"), [
    ("thirteen", {"relancinho": True, "bonuses": {"relancinho": 100}}, 100),
    ("thirteen", {}, 0),
    ("biriba", {}, 100),
    ("biriba", {"relancinho": False}, 0),
])
def test_relancinho_is_a_knob(name: str, knobs: dict[str, object], bonus: int) -> None:
    # The whole first hand down in one turn, the drawn 4c thrown: the indirect morto.
    size = derive(name, **knobs).hand_size
    sets = ["Jc Jd Js", "Kc Kd Ks"] if size == 13 else ["Jc Jd Js Jh"]
    s = Scenario(name, hands={0: "3h 4h 5h 6h 7h 8h 9h " + " ".join(sets)}, stock="4c",
                 mortos={0: MORTO}, **knobs)
    s.draw("4c").meld("3h 4h 5h 6h 7h 8h 9h")
    for m in sets:
        s.meld(m)
    s.discard("4c").morto(direct=False)
    assert s.state.relancinho == ((1, 0) if bonus else (0, 0))
    assert s.rep._t.score()[0].relancinho == bonus  # what a hand end now would count


def test_player_counts_is_a_knob() -> None:
    rules = derive("thirteen", player_counts=(2, 3, 4))
    s = Scenario(rules, 3)
    assert [len(m) for m in s.state.mortos] == [11, 11, 11]
    rep = Replayer()
    with pytest.raises(IllegalMoveError) as info:
        rep.step(start("thirteen", 3))
    assert info.value.rule == "match.rules"


def test_jokers_in_the_classic_family_are_a_knob_worth_10() -> None:
    s = Scenario("classic", hands={0: "5h 5s JK 3h 4h 5h 6h 7h 8h 9h Th"}, stock="Kc",
                 jokers=2)
    assert s.state.card_count() == 106
    s.draw("Kc").meld("5h 5s JK")
    refused(s, "meld.not_a_meld", "layoff", 0, "Kc")
    s.meld("3h 4h 5h 6h 7h 8h 9h Th").discard("Kc").go_out().end_hand()
    side0 = s.state.results[0].scores[0]
    # 5 + 5 + 10 (the joker, RULES.md §9 classic column) + 25 + 30 (the run) = 75; a clean
    # canastra 200, going out 50, relancinho 100.
    assert side0.table_points == 75
    assert side0.total == 75 + 200 + 50 + 100
    # Under the preset (no jokers) a deal holding them holds codes that are no card of it.
    rep = Replayer()
    rep.step(Scenario("classic").events[0])
    with pytest.raises(IllegalMoveError) as info:
        rep.step(build_deal(derive("classic", jokers=2), 2, {}, "", {}, None))
    assert info.value.rule == "event.invalid"
    assert "#64 is no card of the classic preset (it has no jokers)" in str(info.value)
