"""Write the hand-made scenario logs of tests/outside/scenarios/ and their expected outcomes.

The logs are written as a person would write them from docs/log-format.md alone: plain JSON
Lines, cards as text, the rules pasted from `buraco-log rules show NAME --format json`, every
deal written out card by card, every score worked out by hand from RULES.md §9 (the numbers
below, with their sums in comments). Nothing here imports buraco_log.

Run: python -m tests.outside.make_scenarios   (rewrites the directory; review the diff)
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent / "scenarios"
PRESETS = ("classic", "biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
           "burako")
RANKS = "A23456789TJQK"
TILE = {"c": "y", "d": "b", "h": "r", "s": "k"}  # Burako tile colours, as docs/log-format.md
Ev = dict[str, Any]


def rules_of(name: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "cli", "rules", "show", name, "--format",
                          "json"], check=True, capture_output=True, text=True).stdout
    rules: dict[str, Any] = json.loads(out)
    return rules


def deck(jokers: int) -> list[str]:
    return [r + s for s in "cdhs" for r in RANKS] * 2 + ["JK"] * jokers


def cards(text: str) -> list[str]:
    return text.split()


def dr(seat: int, card: str) -> Ev:
    return {"t": "dr", "seat": seat, "card": card}


def dc(seat: int, card: str) -> Ev:
    return {"t": "dc", "seat": seat, "card": card}


def ml(seat: int, text: str) -> Ev:
    return {"t": "ml", "seat": seat, "cards": cards(text)}


def lo(seat: int, meld: int, text: str) -> Ev:
    return {"t": "lo", "seat": seat, "meld": meld, "cards": cards(text)}


def mt(seat: int, direct: bool) -> Ev:
    return {"t": "mt", "seat": seat, "direct": direct}


def pt(seat: int, count: int, top: str) -> Ev:
    return {"t": "pt", "seat": seat, "count": count, "top": top}


def wo(seat: int) -> Ev:
    return {"t": "wo", "seat": seat}


def he(reason: str, scores: list[int]) -> Ev:
    return {"t": "he", "reason": reason, "scores": scores}


# Seat 1's hand, never played: 2c 10, 3c 4d 5d 6s 5 each, 8h Th Jh Qs 10 each, Ad As 15 each:
# 100 (110 in burraco, where a 2 is 20). Thirteen cards add 7s 9s: 115.
SEAT1_11 = "2c 3c 4d 5d 6s 8h Th Jh Qs Ad As"
SEAT1_13 = SEAT1_11 + " 7s 9s"
# The same morto for seat 0 in every "no canastra" hand: 4d 5d 6d, 8c 8d 8s, Tc Td Ts, Qh, 9s.
MORTO_NC = "4d 5d 6d 8c 8d 8s Tc Td Ts Qh 9s"


class Deal:
    """One hand's deal, seat 0 to play first (the last seat deals); two players unless
    ``more`` gives the hands of seats 2 and on (no morto then)."""

    def __init__(self, preset: str, hand0: str, seat1: str, stock_top: str,
                 morto0: str = "", upcard: str | None = None, more: tuple[str, ...] = (),
                 morto1: str = "") -> None:
        self.rules = rules_of(preset)
        r = self.rules
        self.hands = [cards(hand0), cards(seat1), *map(cards, more)]
        assert all(len(h) == r["hand_size"] for h in self.hands), preset
        rest = Counter(deck(r["jokers"]))
        used = [c for h in self.hands for c in h] + cards(morto0) + cards(morto1)
        used += [upcard] if upcard else []
        rest.subtract(Counter(used))
        assert min(rest.values()) >= 0, (preset, +Counter({k: -v for k, v in rest.items()}))
        pool = sorted(rest.elements(), key=lambda c: (c == "JK", "cdhs".find(c[-1]), c))
        top = cards(stock_top)
        for c in top:
            pool.remove(c)
        self.mortos: list[list[str]] = []
        if r["morto"]:
            m1 = cards(morto1) or pool[: r["morto_size"]]
            pool = pool if morto1 else pool[r["morto_size"]:]
            self.mortos = [cards(morto0), m1]
            assert len(self.mortos[0]) == r["morto_size"], preset
        self.stock = top + pool
        self.upcard = upcard

    def start(self, name: str) -> list[Ev]:
        n = len(self.hands)
        names = ["ana", "bia", "caio", "dora", "edu", "fia"][:n]
        ms: Ev = {"t": "ms", "match_id": name, "rules": self.rules,
                  "players": [{"name": x} for x in names],
                  "sides": list(range(n)) if n <= 3 else [i % 2 for i in range(n)],
                  "first_dealer": n - 1}
        hs: Ev = {"t": "hs", "hand": 0, "dealer": n - 1, "hands": self.hands,
                  "stock": self.stock}
        if self.mortos:
            hs["mortos"] = self.mortos
        if self.upcard:
            hs["upcard"] = self.upcard
        return [ms, hs]


def write(name: str, preset: str, events: list[Ev], expect: dict[str, Any],
          table: dict[str, Any]) -> None:
    tiles = preset == "burako"
    lines = []
    for e in events:
        lines.append(json.dumps(_tiles(e) if tiles else e, separators=(",", ":"),
                                ensure_ascii=False))
    (HERE / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    table[name] = expect


def _tiles(e: Any, key: str = "") -> Any:
    """Burako logs are written in tile numbers and colours (12r), as a Burako table says them."""
    if isinstance(e, dict):
        return {k: (v if k == "rules" else _tiles(v, k)) for k, v in e.items()}
    if isinstance(e, list):
        return [_tiles(v, key) for v in e]
    if isinstance(e, str) and key in ("card", "top", "cards", "hands", "mortos", "stock",
                                      "upcard") and e != "JK":
        return f"{RANKS.index(e[0]) + 1}{TILE[e[1]]}"
    return e


OK: dict[str, Any] = {"exit": 0, "rule": None, "seq": None}


def bad(rule: str, seq: int) -> dict[str, Any]:
    return {"exit": 1, "rule": rule, "seq": seq}


def main() -> None:
    HERE.mkdir(exist_ok=True)
    for old in HERE.glob("*.jsonl"):
        old.unlink()
    table: dict[str, Any] = {}

    # ---- classic: no morto, going out needs no canastra, relancinho 100, going out 50.
    p = "classic"
    d = Deal(p, "3h 4h 5h 7c 7d 7s 9c 9d 9s Kc Kd", SEAT1_11, "Ks 6c Kh")
    went = [dr(0, "Ks"), ml(0, "3h 4h 5h"), dc(0, "Kd"), dr(1, "6c"), dc(1, "6c"),
            dr(0, "Kh"), ml(0, "7c 7d 7s"), ml(0, "9c 9d 9s"), ml(0, "Kc Ks Kh"), wo(0)]
    # seat 0: 3h4h5h 15 + 7c7d7s 15 + 9c9d9s 30 + KcKsKh 30 = 90, going out 50: 140.
    # seat 1: the 11 cards it holds: -100.
    going_out(p, d, went, [140, -100], table)
    spellings(d, [*went, he("went_out", [140, -100])], table)
    # Hand 0 left in hand at a stock-out: 3h4h5h 15, 777 15, 999 30, Kc Kd 20: 80.
    common(p, d, seat0_left=80, seat1_left=100, morto_penalty=0, table=table,
           bad_meld="3h 4h Kc", bad_meld_rule="meld.not_a_meld", run="3h 4h 5h",
           off_run="Kc", off_run_rule="meld.not_a_meld",
           pile=(pt(0, 1, "Ks"), "pile.empty"), morto_rule="morto.not_available")
    # Emptying the hand by melding with no canastra goes out in classic: QQQ 30 KKK 30 JJJ 30
    # 5c6c7c 15 = 105, going out 50, relancinho 100 (the whole hand in one turn): 255.
    nc = Deal(p, "Qc Qd Qs Kc Kd Ks Jc Jd Js 5c 6c", SEAT1_11, "7c")
    write(f"{p}-out-without-canastra", p, [
        *nc.start(f"{p}-nc"), dr(0, "7c"), ml(0, "Qc Qd Qs"), ml(0, "Kc Kd Ks"),
        ml(0, "Jc Jd Js"), ml(0, "5c 6c 7c"), wo(0), he("went_out", [255, -100])], OK, table)

    # ---- biriba: morto (direct), going out needs no canastra, morto not taken -100.
    p = "biriba"
    d = Deal(p, "3h 4h 5h 7c 7d 7s 9c 9d 9s Kc Kd", SEAT1_11, "Ks",
             morto0="4c 5c 6c 8c 8d 8s Jc Jd Js Kh Qd")
    went = [dr(0, "Ks"), ml(0, "3h 4h 5h"), ml(0, "7c 7d 7s"), ml(0, "9c 9d 9s"),
            ml(0, "Kc Kd Ks"), mt(0, True), ml(0, "4c 5c 6c"), ml(0, "8c 8d 8s"),
            ml(0, "Jc Jd Js"), lo(0, 3, "Kh"), dc(0, "Qd"), wo(0)]
    # seat 0: 345h 15, 777 15, 999 30, KKKK 40, 456c 15, 888 30, JJJ 30 = 175; going out 50;
    # relancinho 100 (the whole hand laid in the first turn, taking the morto): 325.
    # seat 1: -100 in hand, -100 morto never taken: -200.
    going_out(p, d, went, [325, -200], table)
    common(p, d, seat0_left=80, seat1_left=100, morto_penalty=100, table=table,
           bad_meld="3h 4h Kc", bad_meld_rule="meld.not_a_meld", run="3h 4h 5h",
           off_run="Kc", off_run_rule="meld.not_a_meld",
           pile=(pt(0, 1, "Ks"), "pile.empty"), morto_rule="turn.wrong_phase")
    # No canastra needed to go out: QQQ 30 KKK 30 JJJ 30 567c 15, the morto's 456d 15 888 30
    # TTT 30 and Qh 10 = 190; going out 50; relancinho 100: 340. Seat 1: -200.
    nc = Deal(p, "Qc Qd Qs Kc Kd Ks Jc Jd Js 5c 6c", SEAT1_11, "7c", morto0=MORTO_NC)
    write(f"{p}-out-without-canastra", p, nc.start(f"{p}-nc") + no_canastra_turn(11) + [
        wo(0), he("went_out", [340, -200])], OK, table)

    # ---- bossa-nova: the morto and going out both need a canastra.
    bossa_nova(table)

    # ---- thirteen and thirteen-quick: 13 cards, upcard, must-use-top, canastra to go out.
    for p in ("thirteen", "thirteen-quick"):
        d = Deal(p, "3h 4h 5h 6h 7h 8h 9h Qc Qd Qs Kc Kd Ks", SEAT1_13, "Kh", upcard="Tc",
                 morto0="4c 5c 6c 7c Jc Jd Js 5d 5s 5h Ad")
        went = [dr(0, "Kh"), ml(0, "3h 4h 5h 6h 7h 8h 9h"), ml(0, "Qc Qd Qs"),
                ml(0, "Kc Kd Ks"), lo(0, 2, "Kh"), mt(0, True), ml(0, "4c 5c 6c 7c"),
                ml(0, "Jc Jd Js"), ml(0, "5d 5s 5h"), dc(0, "Ad"), wo(0)]
        # seat 0: run 3h..9h 25+20 = 45, QQQ 30, KKKK 40, 4567c 20, JJJ 30, 555 15 = 180;
        # clean canastra 200; going out 100: 480. seat 1: -115 in hand, -100 morto: -215.
        going_out(p, d, went, [480, -215], table)
        # Hand 0 at a stock-out: run 45, QQQ 30, KKK 30 = 105; -100 morto: -205.
        common(p, d, seat0_left=105, seat1_left=115, morto_penalty=100, table=table,
               bad_meld="3h 4h Kc", bad_meld_rule="meld.not_a_meld",
               run="3h 4h 5h 6h 7h 8h 9h", off_run="Kc",
               off_run_rule="meld.not_a_meld",
               pile=(pt(0, 1, "Tc"), "pile.must_use_top"), morto_rule="turn.wrong_phase")
        nc = Deal(p, "Qc Qd Qs Kc Kd Ks Jc Jd Js 5c 6c 7c 8c", SEAT1_13, "9c", upcard="Tc",
                  morto0=MORTO_NC)
        # After the morto's three melds, Qh 9s are left: laying off the Qh would leave the 9s,
        # which no side without a canastra may throw (RULES.md §7, docs/rules.md).
        write(f"{p}-out-without-canastra", p, nc.start(f"{p}-nc") + no_canastra_turn(13),
              bad("go_out.needs_canastra", 11), table)

    # ---- burraco: semi-clean canastras, a 2 is 20, a joker 30, going out 100.
    p = "burraco"
    d = Deal(p, "3h 4h 5h 6h 7h 8h 9h JK Qc Qd Qs", SEAT1_11, "Qh", upcard="Tc",
             morto0="3c 4c 5c 6d 6s 6c Jd Js Jc 2h Kc")
    went = [dr(0, "Qh"), ml(0, "3h 4h 5h 6h 7h 8h 9h JK"), ml(0, "Qc Qd Qs Qh"), mt(0, True),
            ml(0, "3c 4c 5c"), ml(0, "6d 6s 6c"), ml(0, "Jd Js Jc"), lo(0, 0, "2h"),
            dc(0, "Kc"), wo(0)]
    # seat 0: run 2h..9h + JK: 2h 20 (a natural 2 is still a 2), 3..7 25, 8 9 20, JK 30 = 95;
    # QQQQ 40, 345c 15, 666 15, JJJ 30 = 195 on the table; the run holds 8 unbroken naturals
    # and one wild beside them: semi-clean 150; going out 100: 445.
    # seat 1: 110 in hand (2c is 20), morto -100: -210.
    going_out(p, d, went, [445, -210], table)
    # Hand 0 at a stock-out: run 45, JK 30, QQQ 30 = 105; -100: -205.
    common(p, d, seat0_left=105, seat1_left=110, morto_penalty=100, table=table,
           bad_meld="3h 4h Qc", bad_meld_rule="meld.not_a_meld", run="3h 4h 5h",
           off_run="Qc", off_run_rule="meld.not_a_meld",
           pile=(pt(0, 2, "Tc"), "pile.whole_pile"), morto_rule="turn.wrong_phase")
    nc = Deal(p, "Qc Qd Qs Kc Kd Ks Jc Jd Js 5c 6c", SEAT1_11, "7c", upcard="Tc",
              morto0=MORTO_NC)
    write(f"{p}-out-without-canastra", p, nc.start(f"{p}-nc") + no_canastra_turn(11),
          bad("go_out.needs_canastra", 11), table)

    # ---- mega: canastras are runs only, one set per rank, the stock stops at 2 cards.
    p = "mega"
    d = Deal(p, "3h 4h 5h 6h 7h 8h 9h Qc Qd Qs Th", SEAT1_11, "Jh", upcard="Tc",
             morto0="4c 5c 6c 7d 8d 9d Kc Kd Ks Qh 5s")
    went = [dr(0, "Jh"), ml(0, "3h 4h 5h 6h 7h 8h 9h"), lo(0, 0, "Th Jh"), ml(0, "Qc Qd Qs"),
            mt(0, True), ml(0, "4c 5c 6c"), ml(0, "7d 8d 9d"), ml(0, "Kc Kd Ks"),
            lo(0, 0, "Qh"), dc(0, "5s"), wo(0)]
    # seat 0: run 3h..Qh 25+50 = 75, QQQ 30, 456c 15, 789d 25, KKK 30 = 175; clean canastra
    # 200; going out 100: 475. seat 1: -100, morto -100: -200.
    going_out(p, d, went, [475, -200], table)
    # Hand 0 at a stock-out: run 45, QQQ 30, Th 10 = 85; -100: -185.
    common(p, d, seat0_left=85, seat1_left=100, morto_penalty=100, table=table,
           bad_meld="3h 4h Qc", bad_meld_rule="meld.not_a_meld", run="3h 4h 5h",
           off_run="Qc", off_run_rule="meld.not_a_meld",
           pile=(pt(0, 2, "Tc"), "pile.whole_pile"), morto_rule="turn.wrong_phase")
    nc = Deal(p, "Qc Qd Qs Kc Kd Ks Jc Jd Js 5c 6c", SEAT1_11, "7c", upcard="Tc",
              morto0=MORTO_NC)
    write(f"{p}-out-without-canastra", p, nc.start(f"{p}-nc") + no_canastra_turn(11),
          bad("go_out.needs_canastra", 11), table)

    # ---- burako: tiles, the morto only by a discard, a canastra to go out.
    p = "burako"
    d = Deal(p, "3h 4h 5h 6h 7h 8h 9h Qc Qd Qs 5c", SEAT1_11, "Th 2c Qh",
             morto0="4c 5c 6c 8d 8s 8c Jc Jd Js Jh Ac")
    went = [dr(0, "Th"), ml(0, "3h 4h 5h 6h 7h 8h 9h"), ml(0, "Qc Qd Qs"), lo(0, 0, "Th"),
            dc(0, "5c"), mt(0, False), dr(1, "2c"), dc(1, "2c"), dr(0, "Qh"),
            ml(0, "4c 5c 6c"), ml(0, "8d 8s 8c"), ml(0, "Jc Jd Js"), lo(0, 0, "Jh Qh"),
            dc(0, "Ac"), wo(0)]
    # seat 0: run 3..Q of red 25+50 = 75, QQQ 30, 456 yellow 15, 888 30, JJJ 30 = 180;
    # clean canastra 200; going out 100: 480. seat 1: -100, morto -100: -200.
    going_out(p, d, went, [480, -200], table)
    # Hand 0 at a stock-out: run 45, QQQ 30, 5 yellow 5 = 80; -100: -180.
    common(p, d, seat0_left=80, seat1_left=100, morto_penalty=100, table=table,
           bad_meld="3h 4h Qc", bad_meld_rule="meld.not_a_meld", run="3h 4h 5h",
           off_run="Qc", off_run_rule="meld.not_a_meld",
           pile=(pt(0, 1, "Th"), "pile.empty"), morto_rule="turn.wrong_phase")
    nc = Deal(p, "Qc Qd Qs Kc Kd Ks Jc Jd Js 5c 6c", SEAT1_11, "7c", morto0=MORTO_NC)
    # Burako takes its morto only by a discard: emptying the hand by melding is refused.
    write(f"{p}-out-without-canastra", p, nc.start(f"{p}-nc") + no_canastra_turn(11)[:5],
          bad("morto.indirect_only", 6), table)

    extras(table)
    redraws(table)
    partners(table)
    deals_and_names(table)
    more_rules(table)
    must_use_top(table)
    set_canastras(table)
    several_hands(table)
    (HERE / "expected.json").write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")


def extras(table: dict[str, Any]) -> None:
    """RULES.md read line by line: wilds (§5), three players (§2), the match end (§10)."""
    p = "burraco"
    d = Deal(p, "Ks As 2s 3s JK JK 2c 2d 2h 5h 6h", SEAT1_11, "9c", upcard="Tc",
             morto0=MORTO_NC)
    start = [*d.start("wilds"), dr(0, "9c")]
    for name, meld, want in (
            # K-A-2 reads the 2 as the wild standing for the queen: Q-K-A (§5).
            ("k-a-2", "Ks As 2s", OK),
            # K-A-2-3 wraps whatever the 2 is read as.
            ("k-a-2-3", "Ks As 2s 3s", bad("meld.run_wraps", 3)),
            # A-2-3 with the 2 in its own place: natural, a clean run.
            ("a-2-3", "As 2s 3s", OK),
            ("two-wilds", "5h 6h JK JK", bad("meld.too_many_wilds", 3)),
            ("two-twos", "5h 6h 2c 2d", bad("meld.too_many_wilds", 3)),
            ("set-of-twos", "2c 2d 2h", bad("meld.set_of_twos", 3)),
            # 2h beside 5h 6h: not its own place (no 3h, 4h), so the wild for the 4h or 7h.
            ("dirty-run", "5h 6h 2h", OK)):
        write(f"burraco-wilds-{name}", p, [*start, ml(0, meld)], want, table)

    # Three players in classic: each a side. Seat 0 lays its whole hand and goes out:
    # QQQ 30 KKK 30 JJJ 30 567c 15 = 105, going out 50, relancinho 100: 255. Seat 1 -100;
    # seat 2 holds 3d 4c 5c 6d 7d 25 and 8d 9h Tc Jc Qh Kh 60: -85.
    p = "classic"
    d = Deal(p, "Qc Qd Qs Kc Kd Ks Jc Jd Js 5c 6c", SEAT1_11, "7c",
             more=("3d 4c 5c 6d 7d 8d 9h Tc Jc Qh Kh",))
    turn = [dr(0, "7c"), ml(0, "Qc Qd Qs"), ml(0, "Kc Kd Ks"), ml(0, "Jc Jd Js"),
            ml(0, "5c 6c 7c"), wo(0)]
    write("classic-three-players", p, [*d.start("three"), *turn,
                                       he("went_out", [255, -100, -85])], OK, table)

    # The match end (§10): carried totals 1450 and 0; side 0 is vulnerable (at least 750), its
    # first melds of the hand total 105 (at least 75), and the hand's 255 takes it to 1705.
    d = Deal(p, "Qc Qd Qs Kc Kd Ks Jc Jd Js 5c 6c", SEAT1_11, "7c")
    hand = [*d.start("match-end")]
    hand.insert(1, {"t": "tc", "totals": [1450, 0]})
    played = [*hand, *turn, he("went_out", [255, -100])]
    write("classic-match-end", p, [*played, {"t": "me", "totals": [1705, -100], "winner": 0}],
          OK, table)
    write("classic-match-wrong-winner", p,
          [*played, {"t": "me", "totals": [1705, -100], "winner": 1}],
          bad("match.wrong_winner", len(played)), table)
    # A vulnerable side's first melds of 15 points, then a discard: short of 75.
    d = Deal(p, "3h 4h 5h 7c 7d 7s 9c 9d 9s Kc Kd", SEAT1_11, "Ks 6c Kh")
    short = [*d.start("short-opening")]
    short.insert(1, {"t": "tc", "totals": [1450, 0]})
    write("classic-vulnerable-short-opening", p,
          [*short, dr(0, "Ks"), ml(0, "3h 4h 5h"), dc(0, "Kd")],
          bad("vulnerable.opening_too_low", 5), table)


def redraws(table: dict[str, Any]) -> None:
    """RULES.md §4: the first player may refuse the first card drawn, once, in the first turn."""
    p = "classic"
    d = Deal(p, "3h 4h 5h 7c 7d 7s 9c 9d 9s Kc Kd", SEAT1_11, "Ks 6c Kh")
    start = d.start("redraw")
    rj = {"t": "rj", "seat": 0, "card": "Ks"}
    write("classic-redraw", p, [*start, dr(0, "Ks"), rj, dr(0, "6c"), dc(0, "6c"),
                                dr(1, "Kh"), dc(1, "Kh")], OK, table)
    write("classic-redraw-then-pile", p, [*start, dr(0, "Ks"), rj, pt(0, 1, "Ks")],
          bad("draw.redraw_from_stock", 4), table)
    write("classic-redraw-late", p, [*start, dr(0, "Ks"), dc(0, "Kd"), dr(1, "6c"),
                                     {"t": "rj", "seat": 1, "card": "6c"}],
          bad("draw.redraw_only_first", 5), table)
    p = "thirteen"
    d = Deal(p, "3h 4h 5h 6h 7h 8h 9h Qc Qd Qs Kc Kd Ks", SEAT1_13, "Kh", upcard="Tc",
             morto0="4c 5c 6c 7c Jc Jd Js 5d 5s 5h Ad")
    write("thirteen-redraw", p, [*d.start("redraw"), dr(0, "Kh"),
                                 {"t": "rj", "seat": 0, "card": "Kh"}],
          bad("draw.redraw_not_allowed", 3), table)


def set_canastras(table: dict[str, Any]) -> None:
    """A set of seven is a canastra except in mega (§6 `canastra_from_sets`). Seat 0 lays seven
    8s and 3h 4h 5h, keeps the Kd, and both seats draw and throw back to the stock-out."""
    for p, bonus in (("mega", 0), ("burraco", 200)):
        d = Deal(p, "8c 8c 8d 8d 8h 8s 8s 3h 4h 5h Kd", SEAT1_11, "", upcard="Tc",
                 morto0="4d 5d 6d 9c 9d 9s Td Ts Qh Jh 7s")
        first = d.stock[0]
        events = [*d.start(f"{p}-set-of-seven"), dr(0, first), ml(0, "8c 8c 8d 8d 8h 8s 8s"),
                  ml(0, "3h 4h 5h"), dc(0, first)]
        floor = d.rules["stock_floor"]
        for i, c in enumerate(d.stock[1: len(d.stock) - floor]):
            events += [dr((i + 1) % 2, c), dc((i + 1) % 2, c)]
        # seat 0: seven 8s 70 and 3h4h5h 15 on the table, the set's bonus, -10 for the Kd,
        # -100 for the morto: -25 in mega, 175 in burraco. seat 1: -100 (-110 in burraco)
        # and -100.
        s1 = 110 if p == "burraco" else 100
        write(f"{p}-set-of-seven", p,
              [*events, he("stock_out", [70 + 15 + bonus - 10 - 100, -s1 - 100])], OK, table)


def second_deal(d: Deal, hand: int, dealer: int) -> Ev:
    """``d``'s deal written as hand ``hand`` of the match, dealt by ``dealer``."""
    return {**d.start("")[1], "hand": hand, "dealer": dealer}


def several_hands(table: dict[str, Any]) -> None:
    """Matches of more than one hand (RULES.md §2, §10): the deal passes to the next seat and
    the seat after it plays first; the totals add up hand by hand; a side's total makes it
    vulnerable in the next hand; the target, pasted into the rules as house rules would, ends
    the match after the hand that reaches it, and nothing before it does."""
    p = "classic"
    hand0, seat1 = "3h 4h 5h 7c 7d 7s 9c 9d 9s Kc Kd", SEAT1_11
    d = Deal(p, hand0, seat1, "Ks 6c Kh")

    def went(a: int, b: int) -> list[Ev]:
        """Seat ``a`` goes out in its second turn, seat ``b`` throws back what it draws:
        345h 15, 777 15, 999 30, KKK 30 = 90, going out 50: 140; the other -100."""
        return [dr(a, "Ks"), ml(a, "3h 4h 5h"), dc(a, "Kd"), dr(b, "6c"), dc(b, "6c"),
                dr(a, "Kh"), ml(a, "7c 7d 7s"), ml(a, "9c 9d 9s"), ml(a, "Kc Ks Kh"), wo(a)]

    first = [*d.start("two-hands"), *went(0, 1), he("went_out", [140, -100])]
    # Hand 1: seat 1 holds the same cards, dealt by seat 0; seat 1 plays first and goes out.
    swapped = Deal(p, seat1, hand0, "Ks 6c Kh")
    hs1 = second_deal(swapped, 1, 0)
    both = [*first, hs1, *went(1, 0), he("went_out", [-100, 140])]
    write("classic-two-hands", p, both, OK, table)
    # 140 - 100 = 40 each: far below 1500, and a tie; the match plays on.
    write("classic-two-hands-early-end", p, [*both, {"t": "me", "totals": [40, 40]}],
          bad("match.not_over", len(both)), table)
    write("classic-second-hand-wrong-dealer", p, [*first, {**hs1, "dealer": 1}],
          bad("deal.dealer_rotation", len(first)), table)
    write("classic-second-hand-out-of-turn", p, [*first, hs1, dr(0, "Ks")],
          bad("turn.not_your_turn", len(first) + 1), table)

    # Carried in at 700, side 0 goes out for 140: 840, at least half of 1500, so in hand 1
    # its first melds of the hand must total 75 (§10). Seat 1 plays first and throws its 6c.
    carried = [*first]
    carried.insert(1, {"t": "tc", "totals": [700, 0]})
    again = Deal(p, hand0, seat1, "6c Ks Kh")
    second = [*carried, second_deal(again, 1, 0), dr(1, "6c"), dc(1, "6c"), dr(0, "Ks")]
    write("classic-vulnerable-second-hand", p, [*second, ml(0, "3h 4h 5h"), dc(0, "Kd")],
          bad("vulnerable.opening_too_low", len(second) + 1), table)
    # 777 15 + 999 30 + Kc Kd Ks 30 = 75: enough.
    write("classic-vulnerable-second-hand-75", p,
          [*second, ml(0, "7c 7d 7s"), ml(0, "9c 9d 9s"), ml(0, "Kc Kd Ks"), dc(0, "3h")],
          OK, table)

    # burraco with the target pasted as 500 or 1000: seat 0 goes out in both hands (in hand 1
    # after seat 1 has thrown its 5s): 445 each time, seat 1 -210 (see the burraco hand above).
    p = "burraco"
    hand0 = "3h 4h 5h 6h 7h 8h 9h JK Qc Qd Qs"
    morto0 = "3c 4c 5c 6d 6s 6c Jd Js Jc 2h Kc"
    out = [dr(0, "Qh"), ml(0, "3h 4h 5h 6h 7h 8h 9h JK"), ml(0, "Qc Qd Qs Qh"), mt(0, True),
           ml(0, "3c 4c 5c"), ml(0, "6d 6s 6c"), ml(0, "Jd Js Jc"), lo(0, 0, "2h"),
           dc(0, "Kc"), wo(0), he("went_out", [445, -210])]
    for target in (500, 1000):
        d = Deal(p, hand0, SEAT1_11, "Qh", upcard="Tc", morto0=morto0)
        d.rules = {**d.rules, "name": f"burraco-{target}", "target_score": target}
        later = Deal(p, hand0, SEAT1_11, "5s Qh", upcard="Tc", morto0=morto0)
        events = [*d.start(f"burraco-{target}"), *out, second_deal(later, 1, 0),
                  dr(1, "5s"), dc(1, "5s"), *out]
        end = {"t": "me", "totals": [890, -420], "winner": 0}  # 445 + 445, -210 - 210
        if target == 500:
            write("burraco-500-two-hands", p, [*events, end], OK, table)
            third = Deal(p, hand0, SEAT1_11, "Qh", upcard="Tc", morto0=morto0)
            write("burraco-500-third-hand", p, [*events, second_deal(third, 2, 1)],
                  bad("match.decided", len(events)), table)
        else:
            write("burraco-1000-two-hands", p, [*events, end], bad("match.not_over",
                                                                      len(events)), table)


def deals_and_names(table: dict[str, Any]) -> None:
    """A deal short of one card, a hand dealt by the wrong seat, a draw naming another card
    than the stock's top, a pile taken under a top it does not have, a meld of cards not held
    (classic)."""
    p = "classic"
    d = Deal(p, "3h 4h 5h 7c 7d 7s 9c 9d 9s Kc Kd", SEAT1_11, "Ks 6c Kh")
    ms, hs = d.start("names")
    write("classic-deal-incomplete", p, [ms, {**hs, "stock": hs["stock"][:-1]}],
          bad("deal.material", 1), table)
    write("classic-wrong-dealer", p, [ms, {**hs, "dealer": 0}], bad("deal.dealer_rotation", 1),
          table)
    write("classic-pile-wrong-top", p, [ms, hs, dr(0, "Ks"), dc(0, "Kd"), pt(1, 1, "Qh")],
          bad("pile.wrong_top", 4), table)
    write("classic-draw-wrong-card", p, [ms, hs, dr(0, "Qh")], bad("draw.wrong_card", 2),
          table)
    # An integer code that is no card (docs/log-format.md: codes are suit x 16 + rank, 1..13).
    write("classic-draw-not-a-card", p, [ms, hs, {"t": "dr", "seat": 0, "card": 0}],
          bad("event.invalid", 2), table)
    write("classic-meld-not-held", p, [ms, hs, dr(0, "Ks"), ml(0, "Qh Qd Qc")],
          bad("meld.cards_not_in_hand", 3), table)


def more_rules(table: dict[str, Any]) -> None:
    """A relancinho gone out by a discard (classic), a dirty run in burraco, the morto refused
    for want of a canastra (bossa-nova), a set of eight that is no canastra to go out (mega)."""
    p = "classic"
    d = Deal(p, "Qc Qd Qs Kc Kd Ks 5c 6c 7c 8c 9c", SEAT1_11, "Jh")
    # QQQ 30 KKK 30 5c6c7c 15 8c 9c 20 = 95; relancinho 100; going out 50: 245. Seat 1 -100.
    write("classic-relancinho-by-discard", p, [
        *d.start("relancinho"), dr(0, "Jh"), ml(0, "Qc Qd Qs"), ml(0, "Kc Kd Ks"),
        ml(0, "5c 6c 7c 8c 9c"), dc(0, "Jh"), wo(0), he("went_out", [245, -100])], OK, table)

    p = "burraco"
    d = Deal(p, "3h 4h 5h JK 7h 8h 9h Th Kd Qc Js", SEAT1_11, "", upcard="Tc",
             morto0="4d 5d 6d 9c 9d 9s Td Ts Qh Jh 7s")
    first = d.stock[0]
    events = [*d.start("dirty-run"), dr(0, first), ml(0, "3h 4h 5h JK 7h 8h 9h Th"),
              dc(0, first)]
    for i, c in enumerate(d.stock[1:]):
        events += [dr((i + 1) % 2, c), dc((i + 1) % 2, c)]
    # The joker fills the 6: no seven naturals in a row, a dirty canastra (100), not
    # semi-clean. 3h 4h 5h 15, JK 30, 7h 5, 8h 9h Th 30 = 80; +100; Kd Qc Js -30; morto -100:
    # 50. Seat 1: -110 and -100.
    write("burraco-dirty-run", p, [*events, he("stock_out", [50, -210])], OK, table)

    p = "bossa-nova"
    d = Deal(p, "3h 4h 5h 6h 7h 7c 7d 7s 9c 9d 9s", SEAT1_11, "Qh", morto0=MORTO_NC)
    # The third meld would leave the Qh, whose discard takes the morto with no canastra.
    write("bossa-nova-morto-by-discard-without-canastra", p, [
        *d.start("no-canastra"), dr(0, "Qh"), ml(0, "3h 4h 5h 6h 7h"), ml(0, "7c 7d 7s"),
        ml(0, "9c 9d 9s")], bad("morto.needs_canastra", 5), table)

    p = "mega"
    d = Deal(p, "8c 8c 8d 8d 8h 8s 8s 3h 4h 5h 6h", SEAT1_11, "7h", upcard="Tc",
             morto0="4d 5d 6d 9c 9d 9s Tc Td Ts Qh 9h")
    # Seven 8s are no canastra in mega: with the morto laid, keeping the Qh alone is refused.
    write("mega-set-is-no-canastra-to-go-out", p, [
        *d.start("set-no-canastra"), dr(0, "7h"), ml(0, "8c 8c 8d 8d 8h 8s 8s"),
        ml(0, "3h 4h 5h 6h 7h"), mt(0, True), ml(0, "4d 5d 6d"), ml(0, "9c 9d 9s"),
        ml(0, "Tc Td Ts"), lo(0, 3, "9h")], bad("go_out.needs_canastra", 9), table)


def must_use_top(table: dict[str, Any]) -> None:
    """thirteen-quick: the upcard Kh is taken (the whole pile, one card) and used at once with
    three kings of the hand; the hand then goes as in thirteen-quick-went-out, same scores."""
    p = "thirteen-quick"
    d = Deal(p, "3h 4h 5h 6h 7h 8h 9h Qc Qd Qs Kc Kd Ks", SEAT1_13, "", upcard="Kh",
             morto0="4c 5c 6c 7c Jc Jd Js 5d 5s 5h Ad")
    write(f"{p}-pile-used", p, [
        *d.start("pile-used"), pt(0, 1, "Kh"), ml(0, "3h 4h 5h 6h 7h 8h 9h"),
        ml(0, "Qc Qd Qs"), ml(0, "Kc Kd Ks Kh"), mt(0, True), ml(0, "4c 5c 6c 7c"),
        ml(0, "Jc Jd Js"), ml(0, "5d 5s 5h"), dc(0, "Ad"), wo(0),
        he("went_out", [480, -215])], OK, table)


def partners(table: dict[str, Any]) -> None:
    """RULES.md §7 at four (biriba): seat 0 takes its morto by a discard; an opponent going out
    before seat 0 plays again voids it, the partner going out does not."""
    p = "biriba"
    d = Deal(p, "3h 4h 5h 6h 7h 7c 7d 7s 9c 9d 9s", "Qc Qd Qs Jc Jd Js 8c 8d 8s 6c 6d",
             "Qh 6s 3s", morto0="4c 4d 5c 6c 7c 8c 9c Tc Jc Qc Kc",
             morto1="Tc Td Ts 4c 4d 4s Ac Ad As Qh 2d",
             more=("Kc Kd Ks 5c 5d 5s 8h 9h Th 3c 3d", "2c 4h 6s 7s Kh Ah 9h Th 5h 6h 7h"))
    opening = [dr(0, "Qh"), ml(0, "3h 4h 5h 6h 7h"), ml(0, "7c 7d 7s"), ml(0, "9c 9d 9s"),
               dc(0, "Qh"), mt(0, False)]
    # Seat 1 (the other side) lays its hand, takes its morto directly and goes out with it.
    # side 0: 3h..7h 25, 777 15, 999 30 = 70; seat 0's relancinho 100 stands; its morto counts
    # as not taken, -100; seat 2 holds KKK 30 555 15 8h 9h Th 30 3c 3d 10: -85. Total -15.
    # side 1: QQQ 30 JJJ 30 888 30 666 15 TTT 30 444 15 AAA 45 Qh 10 = 205; going out 50;
    # relancinho 100; seat 3 holds 2c 10, 4h 6s 7s 5h 6h 7h 30, Kh 9h Th 30, Ah 15: -85. 270.
    write("biriba-four-opponent-out", p, [*d.start("four-opponent"), *opening,
          dr(1, "6s"), ml(1, "Qc Qd Qs"), ml(1, "Jc Jd Js"), ml(1, "8c 8d 8s"),
          ml(1, "6c 6d 6s"), mt(1, True), ml(1, "Tc Td Ts"), ml(1, "4c 4d 4s"),
          ml(1, "Ac Ad As"), lo(1, 0, "Qh"), dc(1, "2d"), wo(1),
          he("went_out", [-15, 270])], OK, table)
    # Seat 2 (the partner) goes out instead: seat 0's morto stands and is its hand.
    # side 0: 70 + seat 2's KKK 30 555 15 8h9hTh 30 333 15 = 160; going out 50; two
    # relancinhos 200; the morto in seat 0's hand: 4c 4d 5c 6c 7c 25, 8c..Kc 60 = -85. 325.
    # side 1: seat 1 holds QQQ JJJ 888 90 and 6c 6d 10: -100; seat 3 -85; morto -100. -285.
    write("biriba-four-partner-out", p, [*d.start("four-partner"), *opening,
          dr(1, "6s"), dc(1, "6s"), dr(2, "3s"), ml(2, "Kc Kd Ks"), ml(2, "5c 5d 5s"),
          ml(2, "8h 9h Th"), ml(2, "3c 3d 3s"), wo(2), he("went_out", [325, -285])],
          OK, table)


def no_canastra_turn(size: int) -> list[Ev]:
    """Seat 0 lays its whole hand as three sets and a run, takes the morto directly, lays three
    of its melds and then tries to keep one card by laying off the Qh (thirteen: 13 cards)."""
    run = "5c 6c 7c" if size == 11 else "5c 6c 7c 8c 9c"
    return [dr(0, "7c" if size == 11 else "9c"), ml(0, "Qc Qd Qs"), ml(0, "Kc Kd Ks"),
            ml(0, "Jc Jd Js"), ml(0, run), mt(0, True), ml(0, "4d 5d 6d"),
            ml(0, "8c 8d 8s"), ml(0, "Tc Td Ts"), lo(0, 0, "Qh"), dc(0, "9s")]


def bossa_nova(table: dict[str, Any]) -> None:
    """bossa-nova: the morto and going out both need a canastra."""
    p = "bossa-nova"
    d = Deal(p, "8c 8c 8d 8d 8h 8s 8s 3h 4h 5h 6h", SEAT1_11, "Kd 2c Qh",
             morto0="4c 5c 6c Jc Jd Js Qc Qd Qs 7h 9d")
    went = [dr(0, "Kd"), ml(0, "8c 8c 8d 8d 8h 8s 8s"), ml(0, "3h 4h 5h 6h"), dc(0, "Kd"),
            mt(0, False), dr(1, "2c"), dc(1, "2c"), dr(0, "Qh"), ml(0, "4c 5c 6c"),
            ml(0, "Jc Jd Js"), ml(0, "Qc Qd Qs Qh"), lo(0, 1, "7h"), dc(0, "9d"), wo(0)]
    # seat 0: seven 8s 70, 3h..7h 25, 456c 15, JJJ 30, QQQQ 40 = 180; clean canastra 200;
    # going out 50; relancinho 100 (eleven of the twelve cards laid in the first turn): 530.
    # seat 1: -100 in hand, -100 morto never taken: -200.
    going_out(p, d, went, [530, -200], table)
    # Hand 0 at a stock-out: seven 8s 70, 3h..6h 20 = 90; -100: -190.
    common(p, d, seat0_left=90, seat1_left=100, morto_penalty=100, table=table,
           bad_meld="3h 4h 8s", bad_meld_rule="meld.not_a_meld", run="3h 4h 5h 6h",
           off_run="8s", off_run_rule="meld.not_a_meld",
           pile=(pt(0, 1, "Kd"), "pile.empty"), morto_rule="turn.wrong_phase")
    nc = Deal(p, "Qc Qd Qs Kc Kd Ks Jc Jd Js 5c 6c", SEAT1_11, "7c", morto0=MORTO_NC)
    # The fourth meld empties the hand, which would take the morto with no canastra.
    write(f"{p}-out-without-canastra", p, nc.start(f"{p}-nc") + no_canastra_turn(11)[:5],
          bad("morto.needs_canastra", 6), table)


def spellings(d: Deal, went: list[Ev], table: dict[str, Any]) -> None:
    """The same classic hand with every optional form docs/log-format.md allows: the first
    line, a comment, a blank line, CR LF ends, explicit seqs, and cards as 7♥ and 10h."""
    suits = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}

    def spell(e: Any, key: str = "") -> Any:
        if isinstance(e, dict):
            return {k: (v if k == "rules" else spell(v, k)) for k, v in e.items()}
        if isinstance(e, list):
            return [spell(v, key) for v in e]
        if isinstance(e, str) and key in ("card", "top", "cards", "hands", "stock"):
            rank = "10" if e[0] == "T" else e[0]
            return rank + (suits[e[1]] if e[0] in "AJQK" else e[1])
        return e

    lines = ['{"log": "buraco-log", "version": 2, "sealed": false}', "# written by hand", ""]
    for seq, e in enumerate(d.start("classic-spellings") + went):
        lines.append(json.dumps({**spell(e), "seq": seq}, ensure_ascii=False))
    (HERE / "classic-went-out-spellings.jsonl").write_bytes(
        ("\r\n".join(lines) + "\r\n").encode("utf-8"))
    table["classic-went-out-spellings"] = OK


def going_out(p: str, d: Deal, went: list[Ev], scores: list[int],
              table: dict[str, Any]) -> None:
    events = d.start(f"{p}-out") + went
    write(f"{p}-went-out", p, [*events, he("went_out", scores)], OK, table)
    wrong = [scores[0] + 5, scores[1]]
    write(f"{p}-wrong-score", p, [*events, he("went_out", wrong)],
          bad("score.mismatch", len(events)), table)


def common(p: str, d: Deal, *, seat0_left: int, seat1_left: int, morto_penalty: int,
           table: dict[str, Any], bad_meld: str, bad_meld_rule: str, run: str, off_run: str,
           off_run_rule: str, pile: tuple[Ev, str], morto_rule: str) -> None:
    start = d.start(p)
    first = d.stock[0]
    write(f"{p}-out-of-turn", p, [*start, dr(1, first)], bad("turn.not_your_turn", 2), table)
    write(f"{p}-discard-not-held", p, [*start, dr(0, first), dc(0, "As")],
          bad("discard.card_not_in_hand", 3), table)
    write(f"{p}-bad-meld", p, [*start, dr(0, first), ml(0, bad_meld)], bad(bad_meld_rule, 3),
          table)
    write(f"{p}-layoff-no-meld", p, [*start, dr(0, first), lo(0, 0, off_run)],
          bad("layoff.no_such_meld", 3), table)
    write(f"{p}-layoff-not-fitting", p, [*start, dr(0, first), ml(0, run), lo(0, 0, off_run)],
          bad(off_run_rule, 4), table)
    write(f"{p}-pile", p, [*start, pile[0]], bad(pile[1], 2), table)
    write(f"{p}-morto-too-early", p, [*start, dr(0, first), mt(0, False)],
          bad(morto_rule, 3), table)
    # Both seats draw and throw back the card drawn until the stock is at its floor.
    floor = d.rules["stock_floor"]
    loop: list[Ev] = []
    for i, c in enumerate(d.stock[: len(d.stock) - floor]):
        loop += [dr(i % 2, c), dc(i % 2, c)]
    seat = (len(d.stock) - floor) % 2
    left = d.stock[len(d.stock) - floor:]
    nxt = left[0] if left else d.stock[-1]
    write(f"{p}-draw-exhausted", p, start + loop + [dr(seat, nxt)],
          bad("stock.floor_reached", len(start) + len(loop)), table)
    scores = [-seat0_left - morto_penalty, -seat1_left - morto_penalty]
    # Under must-use-top the hand cannot end while the pile's top (here a joker, the stock's
    # last card) can be used (docs/rules.md, "no stock-out while the pile can be taken").
    ended = OK if d.rules["pile_pickup"] == "free" else bad("stock.pile_can_be_taken",
                                                             len(start) + len(loop))
    write(f"{p}-stock-out", p, start + loop + [he("stock_out", scores)], ended, table)


if __name__ == "__main__":
    main()
