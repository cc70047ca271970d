"""RULES.md read sentence by sentence where house options meet: each knob has its own test
(test_scenarios_presets_knobs.py), and these hold what two of them say together, each with
the move accepted, the move refused (its exact rule id) and, where a hand ends, the score
worked out by hand from RULES.md §9's tables (`spec_points`, never the engine's presets).
"""

from __future__ import annotations

import pytest

from buraco_log.cards import parse_cards
from buraco_log.melds import MeldError, read_meld
from buraco_log.moves import pile_options
from buraco_log.rules import derive
from tests.scenario import Scenario, refused
from tests.spec_points import spec_points

# ----------------------------------------------------- §7 relancinho with an indirect morto only

ELEVEN = "5c 5d 5s 5h 6c 6d 6s 8c 8d 8s 8h"  # three sets, the whole hand


def test_a_relancinho_under_an_indirect_only_morto_ends_with_a_discard() -> None:
    """§7: `burako` takes its morto only indirectly (`morto_direct` off); the relancinho is
    "the whole hand down in one turn", and "a final discard is allowed" (`000`: eleven of the
    twelve combined). Over `biriba` the two meet: the emptying meld is refused
    (`morto.indirect_only`), laying eleven and throwing the twelfth takes the morto
    indirectly and notes the +100 at once."""
    s = Scenario("biriba", hands={0: ELEVEN}, stock="6h", morto_direct=False)
    s.draw().meld("5c 5d 5s 5h").meld("8c 8d 8s 8h")
    refused(s, "morto.indirect_only", ("indirect",), "meld", "6c 6d 6s 6h")
    s.meld("6c 6d 6s").discard("6h")
    refused(s, "morto.wrong_kind", (), "morto", True)
    s.morto(direct=False)
    assert s.state.relancinho == (1, 0)  # "logo anotados": noted at once
    assert s.state.morto_pending == (0, None) and s.turn == 1  # played from the next turn
    # the same whole hand with the morto taken directly is biriba's own reading
    d = Scenario("biriba", hands={0: ELEVEN}, stock="6h")
    d.draw().meld("5c 5d 5s 5h").meld("8c 8d 8s 8h").meld("6c 6d 6s 6h").morto(direct=True)
    assert d.state.relancinho == (1, 0) and d.turn == 0 and d.state.phase == "play"


# ----------------------------------------------------- §6 + §7 sets as canastras in mega

KINGS = "Kc Kd Kh Ks Kc Kd Kh"
MEGA_HAND = f"{KINGS} 3h 4h 5h 6h"
MEGA_MORTO = "Qc Qd Qh 4c 5c 6c 7c Jd Jh Js 9d"


def mega_to_the_morto(**knobs: object) -> Scenario:
    s = Scenario("mega", hands={0: MEGA_HAND, 1: "3s 4d 6d 8d 9s Tc Jc Qs As Ac 3d"},
                 mortos={0: MEGA_MORTO}, stock="7h", upcard="Td", **knobs)
    s.draw().meld("3h 4h 5h 6h 7h").meld(KINGS)  # the hand emptied by melding: direct
    s.morto(direct=True)
    s.meld("Qc Qd Qh").meld("4c 5c 6c 7c")
    return s


def test_mega_seven_kings_are_no_canastra_and_leave_no_card_to_throw() -> None:
    """§6 `canastra_from_sets` off in `mega` (`003`: "Canastra - Jogo de sete cartas ou mais
    em sequencia do mesmo naipe"), §7 going out needs a canastra: seven kings leave the side
    without one, so the jacks that would keep only the 9♦ to throw are refused."""
    s = mega_to_the_morto()
    assert s.state.melds[0][1].canastra is None
    # the refusal says why the seven kings on the table are none (a referee asks)
    refused(s, "go_out.needs_canastra", ("9d", "a canastra is a run, and no set is one: meld 1, "
                                         "7 cards"), "meld", "Jd Jh Js")
    s.discard("9d")  # the jacks kept: the turn ends as usual
    # a set of seven laid by the refused move itself is named too
    t = Scenario("mega", hands={0: MEGA_HAND}, mortos={0: "Jc Jd Jh Js Jc Jd Jh 9d 4c 5c 6c"},
                 stock="7h", upcard="Td")
    t.draw().meld("3h 4h 5h 6h 7h").meld(KINGS).morto(direct=True).meld("4c 5c 6c")
    refused(t, "go_out.needs_canastra", ("meld 1, 7 cards; the set laid now, 7 cards",),
            "meld", "Jc Jd Jh Js Jc Jd Jh")


def test_mega_with_sets_as_canastras_goes_out_on_seven_kings() -> None:
    """The same hand with `canastra_from_sets` on (house rules): the seven kings are a clean
    canastra (200), and the side goes out by throwing the 9♦ (100). Side 0: kings 70,
    3♥..7♥ 25, queens 30, 4♣..7♣ 20, jacks 30 = 175 + 200 + 100; side 1 keeps its eleven
    cards and pays its morto (100)."""
    s = mega_to_the_morto(canastra_from_sets=True)
    assert s.state.melds[0][1].canastra == "clean"
    s.meld("Jd Jh Js").discard("9d").go_out()
    seat1 = spec_points("mega", s.hand(1))
    want = (175 + 200 + 100, -seat1 - 100)
    refused(s, "score.mismatch", ("side 0",), "end_hand", "went_out", (want[0] - 200, want[1]))
    s.end_hand("went_out", want)
    assert s.state.results[0].scores[0].canastras == {"clean": 1}


# ----------------------------------------------------- §5 + §4 one set per rank, must use top

MUST_USE = {"pile_pickup": "must_use_top"}


def test_one_set_per_rank_when_the_pile_top_must_be_used() -> None:
    """§5 `max_sets_per_rank = 1` (`mega`, `003`: "Não pode baixar dois jogos de trincas do
    mesmo valor") with §4 must-use-top (house rules): a top 7♦ is used on the side's sevens;
    a second set of sevens made with it is refused."""
    s = Scenario("mega", hands={0: "7c 7d 7s 7h 7c Th 3c 4s Kd Qs 5d", 1: "7d"},
                 stock="9c", upcard="Td", **MUST_USE)
    s.draw().meld("7c 7d 7s").discard("9c")
    s.draw().discard("7d")
    s.take_pile()
    # the refusal names the set the side has, where the 7♦ may go instead
    refused(s, "meld.second_set_of_rank", ("a set of that rank (meld 0: 7c 7d 7s)",
                                           "at most 1 set of one rank"), "meld", "7h 7c 7d")
    refused(s, "pile.must_use_top", ("7d",), "discard", "3c")
    s.layoff(0, "7d").discard("3c")


@pytest.mark.parametrize("limit", [1, 0])
def test_a_wild_on_top_whose_only_use_is_a_second_set_cannot_be_taken(limit: int) -> None:
    """The side's sevens hold their wild (7♣ 7♦ 2♣), so a joker on top fits them no more
    (§5: one wild a meld); the hand's only use for it is 7♠ 7♥ JK, a second set of sevens:
    with one set a rank the pickup is refused (`pile.must_use_top`), with no limit it is
    taken and laid so."""
    s = Scenario("mega", hands={0: "7c 7d 2c 7s 7h Th 3c 4s Kd Qs 5d", 1: "JK"},
                 stock="9c", upcard="Td", max_sets_per_rank=limit, **MUST_USE)
    s.draw().meld("7c 7d 2c").discard("9c")
    s.draw().discard("JK")
    if limit:
        # the refusal names the meld that would be one set too many: the pair in the hand
        # would use the joker but for the limit
        refused(s, "pile.must_use_top", ("JK", "(7h 7s JK would be one set of that rank too "
                                         "many)"), "take_pile")
        answer = pile_options(s.state)  # what a referee asks: "could they take the pile?"
        assert not answer.may_take and answer.reason.endswith(
            "; 7h 7s JK would be one set of that rank too many"), answer.reason
        s.draw()  # the stock instead
        return
    s.take_pile().meld("7s 7h JK").discard("3c")
    assert [m.kind for m in s.state.melds[0]] == ["set", "set"]


# ----------------------------------------------------- §5 + §6 royal canastras, one ace or two

SPADES = "As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks"


@pytest.mark.parametrize(("base", "knobs", "royal", "second_ace"), [
    ("burako", {}, "royal", "ace_to_ace"),
    ("burako", {"ace_both_ends": False}, "royal", None),
    ("classic", {"royal_canastras": True}, "royal", None),
    ("classic", {"ace_both_ends": True}, "clean", "clean"),
    ("thirteen", {"ace_both_ends": True, "royal_canastras": True}, "royal", "ace_to_ace"),
])
def test_royal_and_both_aces_are_two_knobs(base: str, knobs: dict[str, bool], royal: str,
                                           second_ace: str | None) -> None:
    """§6: royal is a clean run A..K, ace-to-ace A..K..A (`royal_canastras`); §5: both aces
    in one run only with `ace_both_ends` (else `meld.duplicate_in_run`, "never both"). Either
    knob without the other keeps its own meaning: a royal with one ace, a fourteen-card run
    that is only clean."""
    rules = derive(base, **knobs)
    assert read_meld(parse_cards(SPADES), rules).canastra == royal
    both = parse_cards(f"{SPADES} As")
    if second_ace is None:
        with pytest.raises(MeldError) as info:
            read_meld(both, rules)
        assert info.value.rule == "meld.duplicate_in_run"
    else:
        assert read_meld(both, rules).canastra == second_ace


# ----------------------------------------------------- §4 the redraw meets the pile's rules


NO_USE_FOR_9D = "3s 4c 6h 7s Jc Qh Kc 5d 3h Ah 5s"  # no 9, no diamond near it, no wild


@pytest.mark.parametrize("seat1", ["9c 9s", NO_USE_FOR_9D])
def test_a_rejected_first_card_under_a_pile_that_must_be_used(seat1: str) -> None:
    """§4 `first_turn_redraw` ("The rejected card cannot be taken back that turn") with
    must-use-top (house rules over `classic`): the first player may not take the rejected
    K♥ back, though K♣ K♦ in hand would use it (`draw.redraw_from_stock`); the next player
    takes it with the whole pile only when the top, the first player's 9♦, can be used."""
    s = Scenario("classic", hands={0: "Kc Kd", 1: seat1}, stock="Kh 9d", **MUST_USE)
    s.draw("Kh").reject("Kh")
    refused(s, "draw.redraw_from_stock", (), "take_pile")
    s.draw("9d").discard("9d")
    assert s.state.pile == parse_cards("Kh 9d")
    if seat1 == NO_USE_FOR_9D:
        refused(s, "pile.must_use_top", ("9d",), "take_pile")
        return
    s.take_pile()
    assert parse_cards("Kh")[0] in s.hand(1)
    refused(s, "pile.must_use_top", ("9d",), "discard", "Kh")
    s.meld("9c 9s 9d").discard("Kh")  # the card just taken may be thrown back, once used


def test_a_rejected_first_card_lies_on_the_upcard_and_goes_with_the_whole_pile() -> None:
    """§3 `initial_upcard` with §4 `first_turn_redraw` (house rules over `classic`): the
    rejected card goes onto the upcard; the next player takes the upcard, the rejected card
    and the discard together, never part of them (`pile.whole_pile`)."""
    s = Scenario("classic", upcard="Qd", stock="Kh 9d", initial_upcard=True)
    s.draw("Kh").reject("Kh")
    refused(s, "draw.redraw_from_stock", (), "take_pile")
    s.draw("9d").discard("9d")
    assert s.state.pile == parse_cards("Qd Kh 9d")
    refused(s, "pile.whole_pile", (), "take_pile", 1)
    s.take_pile()
    assert len(s.hand(1)) == 11 + 3


# ----------------------------------------------------- §5 one set a rank + §10 a short opening


def test_a_set_taken_back_with_a_short_opening_is_no_set_of_the_side() -> None:
    """§5 `max_sets_per_rank = 1` (`mega`) with §10's vulnerability (house rules, vulnerable
    from the first deal): the sevens and kings of a 45-point opening are taken back
    ("terá de recolher suas cartas"); laid again within a 90-point opening they are the
    side's first set of each rank, not a second one. Once laid, a second set of sevens is
    refused."""
    s = Scenario("mega", hands={0: "7c 7d 7s Kc Kd Ks Ac Ad As 7h 7c"}, stock="7d",
                 upcard="Td", vulnerability=True, vulnerable_at=0)
    s.draw().meld("7c 7d 7s").meld("Kc Kd Ks")
    refused(s, "vulnerable.opening_too_low", ("75",), "discard", "7h")
    s.retract()
    assert s.state.melds[0] == () and s.state.opening_min[0] == 90
    s.meld("7c 7d 7s").meld("Kc Kd Ks")
    refused(s, "vulnerable.opening_too_low", ("90",), "discard", "7h")
    s.meld("Ac Ad As")  # 15 + 30 + 45 = 90
    refused(s, "meld.second_set_of_rank", (), "meld", "7h 7c 7d")
    s.discard("7h")
    assert [m.kind for m in s.state.melds[0]] == ["set"] * 3
