"""Probe 39, a canastra changing class as it grows, and the canastra size as a knob (RULES.md
§5, §6, §9):

- `burako`: one run grown card by card through every class it can hold: clean 3..J, clean 2..K
  (the 2♠ in its own place), royal A..K (500), ace-to-ace A..K..A (1000); a wild on top of the
  14 cards is one card too many, and the 1000 is paid in place of the clean 200 at going out.
- `burako`: a tatu laid off on a royal canastra (as the second ace) spoils it: dirty, 100.
- The same A..K run is a plain clean canastra (200) in every other preset, whose second ace
  is refused.
- `canastra_size` (house rules): sets and runs become canastras at that size, and `burraco`'s
  semi-clean stretch is that many naturals in a row (docs/rules.md, "Semi-clean with another
  canastra size").
"""

from __future__ import annotations

import pytest

from buraco_log.cards import parse_cards
from buraco_log.melds import MeldError, read_meld
from buraco_log.rules import derive
from tests.scenario import Scenario, refused
from tests.spec_points import spec_points

HAND0 = "3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks"
MORTO0 = "Ks As As JK 7h 7d 7c 9h 9d Qh Qd"


def test_burako_one_run_grows_clean_royal_then_ace_to_ace() -> None:
    s = Scenario("burako", hands={0: HAND0}, mortos={0: MORTO0}, stock="5d 4c 2s 4h Qc")
    s.draw("5d").meld("3s 4s 5s 6s 7s 8s 9s Ts Js").discard("5d")
    assert s.state.melds[0][0].canastra == "clean"
    s.pass_turn()
    s.draw("2s").layoff(0, "2s Qs")  # 2..Q of spades: the 2♠ in its own place, still clean
    assert s.state.melds[0][0].canastra == "clean"
    refused(s, "morto.indirect_only", ("indirect",), "layoff", 0, "Ks")
    s.discard("Ks").morto(direct=False)
    s.pass_turn()
    s.draw("Qc").layoff(0, "Ks")
    assert s.state.melds[0][0].canastra == "clean"  # 2..K, no ace: twelve cards
    s.layoff(0, "As")
    assert s.state.melds[0][0].canastra == "royal"
    s.layoff(0, "As")
    assert s.state.melds[0][0].canastra == "ace_to_ace"
    refused(s, "meld.run_too_long", ("at most 14",), "layoff", 0, "JK")
    s.meld("7h 7d 7c").meld("9h 9d JK").meld("Qh Qd Qc").go_out()
    run = "As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks As"
    table = spec_points("burako", run) + spec_points("burako", "7h 7d 7c 9h 9d JK Qh Qd Qc")
    assert table == 125 + 15 + 70 + 30
    side0 = table + 1000 + 100  # ace-to-ace in place of the clean 200; going out
    side1 = -spec_points("burako", s.hand(1)) - 100  # its morto never taken
    refused(s, "score.mismatch", ("side 0",), "end_hand", "went_out", (side0 + 200, side1))
    s.end_hand("went_out", (side0, side1))
    assert s.state.results[0].scores[0].canastras == {"ace_to_ace": 1}


def test_burako_a_tatu_on_a_royal_canastra_makes_it_dirty() -> None:
    s = Scenario("burako", hands={0: "As 2s 3s 4s 5s 6s 7s 8s 9s 4d 5c"},
                 mortos={0: "Qs Ks JK"}, stock="Ts 3c Js 3d 6h")
    s.draw("Ts").meld("As 2s 3s 4s 5s 6s 7s 8s 9s Ts").discard("4d")
    assert s.state.melds[0][0].canastra == "clean"
    s.pass_turn()
    s.draw("Js").layoff(0, "Js").discard("5c").morto(direct=False)
    s.pass_turn()
    s.draw("6h").layoff(0, "Qs")
    assert s.state.melds[0][0].canastra == "clean"  # A..Q: twelve, no king
    s.layoff(0, "Ks")
    assert s.state.melds[0][0].canastra == "royal"
    s.layoff(0, "JK")  # the tatu stands as the high ace: fourteen cards, one wild
    assert s.state.melds[0][0].canastra == "dirty"
    s.discard("6h")


OTHERS = ("classic", "biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega")


@pytest.mark.parametrize("name", OTHERS)
def test_outside_burako_a_to_k_is_a_clean_canastra_and_takes_no_second_ace(name: str) -> None:
    r = derive(name)
    run = parse_cards("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks")
    assert read_meld(run, r).canastra == "clean"
    with pytest.raises(MeldError) as info:
        read_meld((*run, parse_cards("As")[0]), r)
    assert info.value.rule == "meld.duplicate_in_run"
    assert r.bonuses.clean == 200


# -- canastra_size as house rules -----------------------------------------------------------

def _cls(cards: str, **knobs: object) -> str | None:
    return read_meld(parse_cards(cards), derive("burraco", **knobs)).canastra


@pytest.mark.parametrize(("cards", "size", "cls"), [
    ("3s 4s 5s 6s 7s JK", 5, "semi_clean"),  # 3..7 unbroken beside the wild
    ("3s 4s JK 6s 7s 8s", 5, "dirty"),  # the wild breaks it: 3 and 3 in a row
    ("3s 4s 5s 6s JK", 5, "dirty"),  # five cards, four naturals in a row
    ("3s 4s 5s 6s 7s", 5, "clean"),
    ("3s 4s 5s 6s", 5, None),
    ("7s 7h 7d 7c JK", 5, "dirty"),  # a set with a wild is never semi-clean
    ("3s 4s 5s 6s 7s 8s 9s JK", 8, "dirty"),  # seven in a row, the size asks eight
    ("3s 4s 5s 6s 7s 8s 9s Ts JK", 8, "semi_clean"),
    ("3s 4s 5s 6s 7s 8s 9s", 8, None),  # seven cards are no canastra of eight
    ("3s 4s 5s 6s 7s 8s 9s JK", 7, "semi_clean"),  # the preset, for contrast
])
def test_burraco_semi_clean_stretch_is_the_canastra_size(cards: str, size: int,
                                                          cls: str | None) -> None:
    assert _cls(cards, canastra_size=size) == cls


BOSSA = "9s 9h 9d 9c 9s 4c 4d 4s 6h 7h 8h"


@pytest.mark.parametrize(("size", "ok"), [(5, True), (7, False)])
def test_bossa_nova_five_nines_take_the_morto_only_where_five_make_a_canastra(
        size: int, ok: bool) -> None:
    s = Scenario("bossa-nova", hands={0: BOSSA}, stock="Kc", canastra_size=size)
    s.draw("Kc").meld("9s 9h 9d 9c 9s").meld("4c 4d 4s")
    assert s.state.melds[0][0].canastra == ("clean" if ok else None)
    if not ok:  # one card left that could not be thrown: no canastra, no morto
        refused(s, "morto.needs_canastra", ("canastra",), "meld", "6h 7h 8h")
        return
    s.meld("6h 7h 8h").discard("Kc").morto(direct=False)
    assert s.state.morto_taken == (True, False)
