"""Probe 32, turns and scores: what a referee tries that the other scenario files leave out.

- `mega` with partners (RULES.md §5, `003`: "Não pode baixar dois jogos de trincas do mesmo
  valor"): the limit is the side's, so a partner's set bars a second one of the rank, while the
  opponents keep their own.
- must-use-top with a 2 on top (RULES.md §4 and §5): the 2 of the suit may be used as itself in
  A-2-3, or as the wild of a set, or as itself beside another 2 standing as the wild.
- a `burraco` hand scored by RULES.md §9: a 2 standing in its own place is natural (the
  canastra is clean) and still counts 20, a pinella's value.
"""

from __future__ import annotations

import pytest

from buraco_log.cards import parse_cards
from buraco_log.moves import pile_options
from tests.scenario import Scenario, refused
from tests.spec_points import spec_points


def test_mega_the_partners_set_of_a_rank_bars_the_sides_second_and_not_the_opponents() -> None:
    s = Scenario("mega", 4, hands={0: "7s 7h 7d", 1: "7c 7d 2c", 2: "7c 7s 7h"},
                 stock="Kd 4c 9d 8c 3c")
    s.draw().meld("7s 7h 7d").discard("Kd")
    s.draw().meld("7c 7d 2c").discard("4c")  # side 1's own set of sevens
    s.draw()
    refused(s, "meld.second_set_of_rank", ("already has a set",), "meld", "7c 7s 7h")
    s.layoff(0, "7c 7s 7h")  # the partner's sevens go onto the side's one set
    assert [len(m.cards) for m in s.state.melds[0]] == [6]
    assert [m.kind for m in s.state.melds[1]] == ["set"]


@pytest.mark.parametrize("name", ["thirteen", "thirteen-quick"])
def test_must_use_top_a_2_on_top_is_taken_to_stand_as_itself_or_as_a_sets_wild(
    name: str,
) -> None:
    # The 2♥ with A♥ 3♥: A-2-3 with the 2 natural, a run with no wild.
    s = Scenario(name, hands={0: "Ah 3h"}, stock="Kd 4c", upcard="2h")
    s.take_pile().meld("Ah 2h 3h")
    assert s.state.melds[0][0].kind == "run" and s.state.pile_top is None
    # The 2♥ with two nines: the wild of a set.
    s = Scenario(name, hands={0: "9c 9d"}, stock="Kd 4c", upcard="2h")
    s.take_pile().meld("9c 9d 2h")
    assert s.state.melds[0][0].kind == "set"
    # Twelve ranks and the 2♣: no pair for a set, A♥ 4♥ leave a gap the 2♥ cannot bridge as
    # itself (A-2-_-4). Only the 2♣ as the wild next to the natural 2♥ takes it: A-2-(3), or
    # 2-(3)-4, or A-2-(3)-4. Exactly these three ways, and the pickup goes through.
    dead = "Ah 4h 8h Jh 2c 6c 9c Qc 3d 7d Td Kd 5s"
    s = Scenario(name, hands={0: dead}, stock="Kd 4c", upcard="2h")
    uses = {(u.meld, tuple(sorted(u.cards))) for u in pile_options(s.state).uses}
    assert uses == {(None, tuple(sorted(parse_cards(c))))
                    for c in ("Ah 2h 2c", "2h 2c 4h", "Ah 2h 2c 4h")}
    s.take_pile()
    refused(s, "pile.must_use_top", ("top card",), "discard", "5s")
    s.meld("2h 2c 4h")
    assert s.state.pile_top is None


MORTO = "Th Ts Td Tc Kh Ks Kd Qh Qs Qd Qc"


def test_burraco_a_natural_2_in_a_clean_canastra_counts_20_and_the_hand_adds_up() -> None:
    s = Scenario("burraco", hands={0: "Ah 2h 3h 4h 5h 6h 7h Kc Kd Ks Kh"}, stock="Qd 4c 8d",
                 mortos={0: MORTO})
    s.draw("Qd").meld("Ah 2h 3h 4h 5h 6h 7h").meld("Kc Kd Ks Kh").discard("Qd")
    assert s.state.melds[0][0].canastra == "clean"  # the 2♥ stands as itself
    s.morto(direct=False)
    s.pass_turn()
    s.draw("8d").meld("Th Ts Td Tc").layoff(1, "Kh Ks Kd").meld("Qh Qs Qd Qc").discard("8d")
    s.go_out().end_hand()
    side0, side1 = s.state.results[-1].scores
    table = spec_points("burraco", "Ah 2h 3h 4h 5h 6h 7h Kc Kd Ks Kh Kh Ks Kd "
                        "Th Ts Td Tc Qh Qs Qd Qc")
    assert spec_points("burraco", "2h") == 20
    # Clean run and seven kings: two clean canastras (200 each); going out 100.
    assert side0.total == table + 200 + 200 + 100
    assert side0.canastras == {"clean": 2}
    # Side 1 never took its morto (-100) and holds its hand.
    assert side1.total == -spec_points("burraco", s.hand(1)) - 100
