"""Probe 35, `burraco`'s semi-clean canastra measured stretch by stretch (RULES.md §6: "one
wild, but the run still holds 7+ consecutive naturals (the wild lies outside that stretch)";
`002`: "uma carta wild que interrompe a sequência faz dele sujo").

Each run is laid whole in one meld and classified by hand:

- 3..9 unbroken, the joker as the 10, then J Q: seven in a row before the wild: semi-clean.
- The joker as the 6 of 3..Q: 3..5 and 7..Q (six): dirty; as the 7: 3..6 and 8..Q: dirty.
- 2..7 of hearts with the 2d as the 8 and a 9: six in a row: dirty.
- A..7 of hearts and the second 2h as the 8: the first 2h is natural, A..7 is seven: semi-clean.
- A..K with the 2d standing for the 2: 3..K is eleven in a row: semi-clean.
The same runs in `thirteen` (no semi-clean) are all dirty.
"""

from __future__ import annotations

import pytest

from tests.scenario import Scenario

RUNS = [
    ("3h 4h 5h 6h 7h 8h 9h JK Jh Qh", "semi_clean"),
    ("3h 4h 5h JK 7h 8h 9h Th Jh Qh", "dirty"),
    ("3h 4h 5h 6h JK 8h 9h Th Jh Qh", "dirty"),
    ("2h 3h 4h 5h 6h 7h 2d 9h", "dirty"),
    ("Ah 2h 2h 3h 4h 5h 6h 7h", "semi_clean"),
    ("Ah 2d 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh", "semi_clean"),
]


@pytest.mark.parametrize(("run", "cls"), RUNS)
@pytest.mark.parametrize("name", ["burraco", "thirteen"])
def test_the_stretch_of_naturals_decides_semi_clean(name: str, run: str, cls: str) -> None:
    s = Scenario(name, hands={0: run + " 4c 5d"}, stock="Kc", hand_size=len(run.split()) + 2)
    s.draw("Kc").meld(run).discard("Kc")
    assert s.state.melds[0][0].canastra == (cls if name == "burraco" else "dirty")
