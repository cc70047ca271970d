"""Probe 37, the 2s (RULES.md §1, §5): a 2 is wild, except a 2 of a run's own suit standing
in its natural place, which is natural whenever the meld is valid read that way; at most one
wild per meld; no set of 2s.

- Two 2s of spades and the 3 of spades: one 2 natural (2-3), the other the meld's one wild
  (the ace or the 4), in every preset; with a third 2 it is two wilds.
- A♠ 2♠ 4♠ needs both the 2 and the 3 filled: refused however the 2 is read; A♠ 2♥ 3♠ is
  A-2-3 with the 2♥ as the 2.
- `burako` alone holds both aces: A♠, the 2♥ standing for the 2, 3♠..K♠ and the second A♠
  make fourteen cards, dirty (not ace-to-ace); elsewhere the second ace is refused.
- `burraco`: 2♠ 3♠ .. 8♠ and a joker: seven naturals in a row, the joker at an end, a
  semi-clean canastra (150); the same cards are dirty (100) in `mega`, `thirteen` and
  `thirteen-quick`. The hand is scored at the stock-out by RULES.md §9's tables, worked out
  by hand.
"""

from __future__ import annotations

import pytest

from tests.scenario import Scenario, refused
from tests.spec_points import spec_points

ALL = ("classic", "biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
       "burako")
# Harmless padding: no two of these share a meld with each other or with the tests' cards.
PAD = "4d 6c 8c Th Qd 3c Jh Kh 9d 5h 7d Qc 3h"


def _hand(name: str, cards: str) -> str:
    size = 13 if name.startswith("thirteen") else 11
    have = cards.split()
    return " ".join(have + PAD.split()[: size - len(have)])


@pytest.mark.parametrize("name", ALL)
def test_two_twos_of_spades_and_the_three_one_natural_one_wild(name: str) -> None:
    s = Scenario(name, hands={0: _hand(name, "2s 2s 3s 2d")}, stock="Kc")
    s.draw("Kc")
    refused(s, "meld.too_many_wilds", ("wild",), "meld", "2s 2s 3s 2d")
    s.meld("2s 2s 3s")
    m = s.state.melds[0][0]
    assert (m.kind, m.canastra) == ("run", None)
    # The meld has its one wild already: the 2d may not join it.
    refused(s, "meld.too_many_wilds", ("wild",), "layoff", 0, "2d")


@pytest.mark.parametrize("name", ALL)
def test_no_set_of_twos_however_many_suits(name: str) -> None:
    s = Scenario(name, hands={0: _hand(name, "2s 2s 2h")}, stock="Kc")
    s.draw("Kc")
    refused(s, "meld.set_of_twos", ("2s",), "meld", "2s 2s 2h")
    assert s.state.melds[0] == ()


@pytest.mark.parametrize("name", ALL)
def test_ace_two_four_is_no_run_ace_wild_three_is(name: str) -> None:
    s = Scenario(name, hands={0: _hand(name, "As 2s 4s 3s 2h 2d")}, stock="Kc")
    s.draw("Kc")
    refused(s, "meld.run_not_consecutive", ("consecutive",), "meld", "As 2s 4s")
    s.meld("As 2h 3s")  # the 2h stands for the 2
    assert s.state.melds[0][0].kind == "run"
    s.layoff(0, "4s")
    # The 2s goes home to the 2's place, and the 2h moves to the end (A-2-3-4-W): one wild.
    s.layoff(0, "2s")
    assert len(s.state.melds[0][0].cards) == 5
    refused(s, "meld.too_many_wilds", ("wild",), "layoff", 0, "2d")


@pytest.mark.parametrize("name", ALL)
def test_both_aces_around_a_wild_two_only_in_burako(name: str) -> None:
    run = "As 2h 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks As"
    # House rules deal fourteen cards, so that the whole run is in hand (the rule under test
    # is ace_both_ends, RULES.md §5).
    s = Scenario(name, hands={0: run}, stock="Kc", hand_size=14)
    s.draw("Kc")
    if name == "burako":
        s.meld(run)
        assert s.state.melds[0][0].canastra == "dirty"  # a wild in it: not ace-to-ace
    else:
        refused(s, "meld.duplicate_in_run", ("ace",), "meld", run)
        s.meld("As 2h 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks")  # one ace: 13 cards, the 2h a wild
        # 3..K is eleven naturals in a row: semi-clean where there is such a class.
        want = "semi_clean" if name == "burraco" else "dirty"
        assert s.state.melds[0][0].canastra == want


@pytest.mark.parametrize(("name", "cls", "bonus"), [
    ("burraco", "semi_clean", 150), ("mega", "dirty", 100),
])
def test_a_natural_two_heads_seven_in_a_row_and_a_joker_at_the_end(
    name: str, cls: str, bonus: int
) -> None:
    run = "2s 3s 4s 5s 6s 7s 8s JK"
    s = Scenario(name, hands={0: _hand(name, run)}, stock="Kc")
    s.draw("Kc").meld(run).discard("Kc")
    assert s.state.melds[0][0].canastra == cls
    while len(s.state.stock) > s.rules.stock_floor:
        s.pass_turn()
    joker, two = (30, 20) if name == "burraco" else (50, 10)
    table = two + 5 * 5 + 10 + joker  # the 2s natural still scores as a 2
    assert table == spec_points(name, run)
    side0 = table + bonus - spec_points(name, s.hand(0)) - 100
    side1 = -spec_points(name, s.hand(1)) - 100
    refused(s, "score.mismatch", ("side 0",), "end_hand", "stock_out",
            (side0 + (150 if bonus == 100 else -50), side1))
    s.end_hand("stock_out", (side0, side1))


@pytest.mark.parametrize("name", ["thirteen", "thirteen-quick"])
def test_the_same_run_is_dirty_where_there_is_no_semi_clean(name: str) -> None:
    run = "2s 3s 4s 5s 6s 7s 8s JK"
    s = Scenario(name, hands={0: _hand(name, f"{run} 9s")}, stock="Kc")
    s.draw("Kc").meld(run)
    assert s.state.melds[0][0].canastra == "dirty"
    s.layoff(0, "9s")  # 2..9: eight naturals, the joker still at an end: still dirty here
    assert s.state.melds[0][0].canastra == "dirty"
