"""Probe 41, the last card when going out needs a canastra (RULES.md §7; `001`: "o jogo não
deixa baixar nem descartar de um jeito que o deixe sem carta para jogar fora").

After the morto, with no canastra on the side's table, seat 0 holds K♠ K♦ K♣ 9♥ beside its
run 3♥..8♥. The 9♥ laid off first makes the run a canastra, and the kings then empty the hand:
going out. The kings first would keep the 9♥ alone, a card that cannot be thrown (going out
needs a canastra): refused at that lay (`go_out.needs_canastra`), though the 9♥ could still
be laid. The order is the player's to choose; the engine holds it to the one that never leaves
a card it cannot throw, as it does for a must-use-top pickup (probe 39).
"""

from __future__ import annotations

import pytest

from tests.scenario import Scenario, refused

PRESETS = ("thirteen", "burraco", "mega")  # going out needs a canastra, the morto direct
RUN = "3h 4h 5h 6h 7h 8h"  # six: no canastra yet
MORTO = "Ks Kd Kc 9h Js Jd Jc Jh Qs Qd Qc"


def _after_the_morto(name: str) -> Scenario:
    """Seat 0 empties its hand by melding (the morto, directly), lays the jacks and queens of
    the morto: K♠ K♦ K♣ 9♥ are left, the side has no canastra."""
    t13 = name == "thirteen"
    hand = f"{RUN} 4s 4d 4c 5d 5c" + (" 4s 5s" if t13 else "")
    s = Scenario(name, hands={0: hand}, stock="5s", mortos={0: MORTO})
    s.draw("5s").meld(RUN).meld("4s 4d 4c" + (" 4s" if t13 else ""))
    s.meld("5s 5d 5c" + (" 5s" if t13 else "")).morto(direct=True)
    s.meld("Js Jd Jc Jh").meld("Qs Qd Qc")
    assert not any(m.canastra for m in s.state.melds[0])
    return s


@pytest.mark.parametrize("name", PRESETS)
def test_the_card_that_makes_the_canastra_first_then_out(name: str) -> None:
    s = _after_the_morto(name)
    s.layoff(0, "9h")
    assert s.state.melds[0][0].canastra == "clean"
    s.meld("Ks Kd Kc").go_out()
    assert s.state.phase == "out"


@pytest.mark.parametrize("name", PRESETS)
def test_a_lay_that_keeps_a_card_that_cannot_be_thrown_is_refused(name: str) -> None:
    s = _after_the_morto(name)
    refused(s, "go_out.needs_canastra", ("would keep one card that cannot be discarded",
                                         "canastra"), "meld", "Ks Kd Kc")
    # The turn goes on: throwing a king keeps three cards, as any turn may.
    s.discard("Ks")
    assert s.state.turn == 1 and len(s.hand(0)) == 3
