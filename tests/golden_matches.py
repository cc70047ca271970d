"""The hand-built golden matches of examples/golden/, one per preset, move by move.

Each match is one hand under its preset with the target lowered (a house rule recorded in the
log) so that the hand decides the match. The scores written into HandEnded and MatchEnded are
the ones worked out by hand in examples/golden/NOTES.md; replay checks them.

Regenerate the JSON Lines files with ``python -m tests.golden_matches``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from buraco_log.events import AnyEvent
from buraco_log.jsonl import dump
from tests.scenario import Scenario

OUT = Path(__file__).resolve().parent.parent / "examples" / "golden"


def classic() -> Scenario:
    s = Scenario(
        "classic",
        match_id="golden-classic",
        hands={0: "7h 7s 7d 8c 8d 8s 9h 9s 9d Kc Kd", 1: "3h 4h 5h Qs Qd Qc Jh Jd 6c 6d Ah"},
        stock="4c Qh 6h Ks",
        target_score=200,
    )
    s.draw("4c").reject("4c").draw("Qh").discard("Qh")
    s.draw("6h").meld("3h 4h 5h 6h").meld("Qs Qd Qc").discard("Ah")
    s.draw("Ks").meld("7h 7s 7d").meld("8c 8d 8s").meld("9h 9s 9d").meld("Kc Kd Ks")
    s.go_out().end_hand(scores=(255, 20)).end_match(totals=(255, 20), winner=0)
    return s


def biriba() -> Scenario:
    s = Scenario(
        "biriba",
        match_id="golden-biriba",
        hands={0: "7h 7s 7d 8c 8d 8s 9h 9s 9d Kc Kd", 1: "3h 4h 5h Qs Qd Qc Jh Jd 6c 6d Ah"},
        mortos={0: "3c 3d 3s 4c 4d 4s 5c 5d 5s Tc Td"},
        stock="Jc 6h Ks 7c 3h",
        target_score=300,
    )
    s.draw("Jc").discard("Jc")
    s.draw("6h").meld("3h 4h 5h 6h").meld("Qs Qd Qc").discard("Ah")
    s.draw("Ks").meld("7h 7s 7d").meld("8c 8d 8s").meld("9h 9s 9d").meld("Kc Kd Ks")
    s.morto(direct=True).meld("3c 3d 3s").meld("4c 4d 4s").meld("5c 5d 5s").discard("Td")
    s.draw("7c").discard("7c")
    s.draw("3h").layoff(4, "3h").discard("Tc").go_out()
    s.end_hand(scores=(305, -80)).end_match(totals=(305, -80), winner=0)
    return s


def bossa_nova() -> Scenario:
    s = Scenario(
        "bossa-nova",
        match_id="golden-bossa-nova",
        hands={0: "3h 4h 5h 6h 7h 8h 9h Kc Kd Qc Qd", 1: "3s 4s 5s Js Jd Jh Tc Td 6c 6d Ad"},
        mortos={0: "3c 3d 3s 4c 4d 4s 5c 5d 5s Ac Ad"},
        stock="Jc 6s Ks 7c Th 2d Ah",
        target_score=400,
    )
    s.draw("Jc").discard("Jc")
    s.draw("6s").meld("3s 4s 5s 6s").meld("Js Jd Jh").discard("Ad")
    s.draw("Ks").meld("3h 4h 5h 6h 7h 8h 9h").meld("Kc Kd Ks").discard("Qd")
    s.draw("7c").discard("7c")
    s.draw("Th").layoff(0, "Th").discard("Qc").morto(direct=False)
    s.draw("2d").discard("2d")
    s.draw("Ah").meld("3c 3d 3s").meld("4c 4d 4s").meld("5c 5d 5s").meld("Ac Ad Ah").go_out()
    s.end_hand(scores=(425, -80)).end_match(totals=(425, -80), winner=0)
    return s


def thirteen() -> Scenario:
    s = Scenario(
        "thirteen",
        match_id="golden-thirteen",
        hands={
            0: "3h 4h 5h 6h 7h 8h Kc Kd Ks Qc Qd Qs JK",
            1: "6c 7c 8c Jh Jd Js Ac Ad 9c 9d Tc Th 2s",
        },
        mortos={0: "3c 3d 3s 4c 4d 4s 5c 5d 5s Tc Td"},
        upcard="9h",
        stock="5c Kh",
        target_score=500,
    )
    s.take_pile(1, "9h").meld("3h 4h 5h 6h 7h 8h 9h").meld("Kc Kd Ks").meld("Qc Qd Qs JK")
    s.morto(direct=True).meld("3c 3d 3s").meld("4c 4d 4s").meld("5c 5d 5s").discard("Td")
    s.draw("5c").meld("5c 6c 7c 8c").meld("Jh Jd Js").discard("2s")
    s.draw("Kh").layoff(1, "Kh").discard("Tc").go_out()
    s.end_hand(scores=(510, -115)).end_match(totals=(510, -115), winner=0)
    return s


def thirteen_quick() -> Scenario:
    s = Scenario(
        "thirteen-quick",
        4,
        match_id="golden-thirteen-quick",
        hands={
            0: "3d 4d 5d 6d 7d 8d 9d Jc Jd Js Qc Qd Qs",
            1: "3c 3s 4c 4s 5c 5s 7c 7s 8c 8s Tc Ts Kh",
            2: "3h 4h 5h 6h 7h 8h 9h Kc Kd Ks Ac Ad As",
            3: "3c 3s 4c 4s 5c 5s 7c 7s 8c 8s Tc Ts Kh",
        },
        mortos={0: "9c 9s 9c 9s Jh Jh Qh Qh 6c 6s 2c"},
        upcard="5h",
        stock="6h 7h Th 8h Td",
        target_score=700,
    )
    s.draw("6h").discard("6h")
    s.draw("7h").discard("7h")
    s.draw("Th").meld("3h 4h 5h 6h 7h 8h 9h Th").meld("Kc Kd Ks").meld("Ac Ad As")
    s.morto(direct=True).meld("9c 9s 9c 9s").discard("6s")
    s.draw("8h").discard("8h")
    s.draw("Td").meld("3d 4d 5d 6d 7d 8d 9d Td").meld("Jc Jd Js").meld("Qc Qd Qs").go_out()
    s.end_hand(scores=(730, -280)).end_match(totals=(730, -280), winner=0)
    return s


def burraco() -> Scenario:
    s = Scenario(
        "burraco",
        match_id="golden-burraco",
        hands={0: "Ah 2s 3h 4h 5h 6h 7h 8h 9h Kc Kd", 1: "3h 4s 6s 7s 8s 9s Js Qs Qd Jd Tc"},
        mortos={0: "3c 3d 3s 4c 4d 4s 5c 5d 5s JK Td"},
        upcard="Ks",
        target_score=400,
    )
    s.take_pile(1, "Ks").meld("Ah 2s 3h 4h 5h 6h 7h 8h 9h").meld("Kc Kd Ks")
    s.morto(direct=True).meld("3c 3d 3s").meld("4c 4d 4s").meld("5c 5d 5s JK")
    s.discard("Td").go_out()
    s.end_hand(scores=(435, -190)).end_match(totals=(435, -190), winner=0)
    return s


def mega() -> Scenario:
    s = Scenario(
        "mega",
        match_id="golden-mega",
        hands={0: "3s 4s 5s 6s 7s 8s 9s Qc Qd Qh 2c", 1: "Jc Jd Jh Js 6h 6d 6c 8h 8d 8c Ah"},
        mortos={0: "Kc Kd Kh Ks Kc 5c 5d 5h JK 4d 4c"},
        upcard="Ts",
        stock="9h Kd",
        target_score=500,
    )
    s.take_pile(1, "Ts").meld("3s 4s 5s 6s 7s 8s 9s Ts").meld("Qc Qd Qh 2c")
    s.morto(direct=True).meld("Kc Kd Kh Ks Kc").meld("5c 5d 5h JK").discard("4c")
    s.draw("9h").discard("9h")
    s.draw("Kd").layoff(2, "Kd").discard("4d").go_out()
    s.end_hand(scores=(520, -200)).end_match(totals=(520, -200), winner=0)
    return s


def burako() -> Scenario:
    s = Scenario(
        "burako",
        match_id="golden-burako",
        hands={0: "Ah 2h 3h 4h 5h 6h JK 9s 9d 9c Ts", 1: "3c 3d 4c 4d 6c 6d 8c 8d Tc Td Ac"},
        mortos={0: "Jc Jd Js Qc Qd Qs Kc Kd Ks 5c 5d"},
        stock="7h 7c 5s",
        target_score=400,
    )
    s.draw("7h").meld("Ah 2h 3h 4h 5h 6h 7h JK").meld("9s 9d 9c").discard("Ts")
    s.morto(direct=False)
    s.draw("7c").discard("7c")
    s.draw("5s").meld("Jc Jd Js").meld("Qc Qd Qs").meld("Kc Kd Ks").meld("5c 5d 5s").go_out()
    s.end_hand(scores=(435, -185)).end_match(totals=(435, -185), winner=0)
    return s


GOLDEN: dict[str, Callable[[], Scenario]] = {
    "classic": classic,
    "biriba": biriba,
    "bossa-nova": bossa_nova,
    "thirteen": thirteen,
    "thirteen-quick": thirteen_quick,
    "burraco": burraco,
    "mega": mega,
    "burako": burako,
}


def events(name: str) -> list[AnyEvent]:
    return GOLDEN[name]().events


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name in GOLDEN:
        path = OUT / f"{name}.jsonl"
        with path.open("w", encoding="utf-8") as f:
            dump(iter(events(name)), f, sealed=False)
        print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
