"""The engine's hand scores against an independent scorer written from RULES.md §9
(tests/property/scoring_oracle.py): simulated hands of every preset and player count, house-rule
combinations, the golden and example logs, and hands built to reach what play seldom does
(royal and ace-to-ace canastras, a voided morto, relancinhos)."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from buraco_log.cards import JOKER, NATURALS, RANK, format_cards
from buraco_log.errors import IllegalMoveError, RulesError
from buraco_log.events import AnyEvent, HandEnded
from buraco_log.jsonl import read_jsonl
from buraco_log.log import read_events
from buraco_log.melds import MeldError, read_meld
from buraco_log.rules import PRESETS, Rules, derive
from buraco_log.simulate import SimulationError, simulate_match
from tests.play import random_match
from tests.property.replays import rules_for
from tests.property.scoring_oracle import (
    SPEC,
    Values,
    canastra_class,
    compare_match,
    disagreements,
    house_values,
)
from tests.scenario import Scenario

ROOT = Path(__file__).resolve().parents[2]


def test_every_preset_states_the_spec_tables() -> None:
    """The numbers of each preset are RULES.md §9's column ("–": the kind is off)."""
    for name, rules in PRESETS.items():
        assert house_values(rules) == SPEC[name], name


def _preset_hands(matches: int, bots: tuple[str, ...], target: int | None) -> Counter[str]:
    compared: Counter[str] = Counter()
    for name, rules in PRESETS.items():
        for players in rules.player_counts:
            for i in range(matches):
                r = rules_for(name, target)
                if bots == ("random",):
                    events = random_match(r, players, i, max_hands=4)
                else:
                    events = simulate_match(r, players, seed="oracle", index=i, bots=bots,
                                            max_hands=60)
                hands = compare_match(events, SPEC[name])
                assert not disagreements(hands), (name, players, i, disagreements(hands)[:3])
                compared[name] += len(hands)
    return compared


def test_preset_hands_score_as_the_oracle_says() -> None:
    compared = _preset_hands(1, ("heuristic",), 300)
    assert all(compared[name] >= 2 for name in PRESETS), compared


@pytest.mark.slow
def test_preset_hands_score_as_the_oracle_says_many() -> None:
    heuristic = _preset_hands(30, ("heuristic",), None)
    random_bot = _preset_hands(6, ("random",), None)
    print("hands compared per preset:", dict(heuristic + random_bot))
    assert all(heuristic[name] >= 100 for name in PRESETS), heuristic


KNOBS: dict[str, tuple[Any, ...]] = {
    "jokers": (0, 2, 4), "hand_size": (9, 11, 13, 15), "morto": (True, False),
    "morto_size": (9, 11, 13), "morto_direct": (True, False),
    "morto_needs_canastra": (True, False), "go_out_needs_canastra": (True, False),
    "initial_upcard": (True, False), "pile_pickup": ("free", "must_use_top"),
    "first_turn_redraw": (True, False), "ace_both_ends": (True, False),
    "max_sets_per_rank": (0, 1, 2), "canastra_size": (5, 6, 7, 8),
    "canastra_from_sets": (True, False), "semi_clean": (True, False),
    "royal_canastras": (True, False), "relancinho": (True, False), "stock_floor": (0, 2, 10),
    "morto_voided_by": ("any_end", "opponent_out"),
    "bonuses": ({"going_out": 70, "relancinho": 40, "morto_not_taken": 30, "semi_clean": 120},),
    "points": ({"joker": 25, "two": 15, "ace": 20},),
}


def _house_hands(combos: int, seed: int) -> tuple[int, Counter[str]]:
    rng = random.Random(seed)
    hands = 0
    seen: Counter[str] = Counter()
    done = 0
    while done < combos:
        base = rng.choice(sorted(PRESETS))
        overrides = {k: rng.choice(v) for k, v in KNOBS.items() if rng.random() < 0.4}
        overrides.update(target_score=rng.choice((600, 1500)), vulnerability=False)
        try:
            rules = derive(base, **overrides)
        except RulesError:
            continue
        done += 1
        players = rng.choice(rules.player_counts)
        if rng.random() < 0.3:
            events = random_match(rules, players, rng.randrange(2**32), max_hands=3)
        else:
            try:
                events = simulate_match(rules, players, seed=str(rng.random()), max_hands=40)
            except SimulationError:
                continue  # a target the bots never reach (minus scores each hand): no matter
        compared = compare_match(events)
        assert not disagreements(compared), (base, players, overrides, disagreements(compared))
        hands += len(compared)
        for c in compared:
            for side in c.oracle:
                seen.update(side.canastras)
                seen["relancinho"] += bool(side.relancinho)
    return hands, seen


def test_house_rule_hands_score_as_the_oracle_says() -> None:
    hands, _ = _house_hands(6, 52)
    assert hands >= 6


@pytest.mark.slow
def test_house_rule_hands_score_as_the_oracle_says_many() -> None:
    hands, seen = _house_hands(400, 5252)
    print("house-rule hands compared:", hands, dict(seen))
    assert seen["semi_clean"] and seen["relancinho"] and seen["dirty"], seen


def _logs() -> list[Path]:
    return sorted([*ROOT.glob("examples/golden/*.jsonl"), *ROOT.glob("examples/sim/*.blog"),
                   *ROOT.glob("examples/disputes/*.log"), *ROOT.glob("tests/golden/*.log")])


def _read(path: Path) -> list[AnyEvent]:
    return read_jsonl(path) if path.suffix == ".jsonl" else read_events(path)


def _values(rules: Rules) -> Values:
    base = PRESETS.get(rules.name)
    # A log of a preset is scored by the spec's column; a house log by its own numbers.
    same = base is not None and replace(rules, morto_voided_by=base.morto_voided_by) == base
    return SPEC[rules.name] if same else house_values(rules)


def test_golden_and_example_logs_score_as_the_oracle_says() -> None:
    compared = 0
    for path in _logs():
        if path.stem in ("illegal", "tampered", "wrong-score"):
            continue  # refused by the reader or the referee: each has its own test
        events = _read(path)
        hands = compare_match(events, _values(events[0].rules))  # type: ignore[union-attr]
        assert hands, path
        assert not disagreements(hands), (path, disagreements(hands))
        for c in hands:
            if c.recorded is not None:
                assert tuple(side.total for side in c.oracle) == c.recorded, (path, c.hand)
        compared += len(hands)
    assert compared >= 100


def test_the_oracle_finds_the_wrong_score_the_referee_refuses() -> None:
    """wrong-score.log records 440 for side 0 of hand 0: the engine refuses it, and the oracle
    scores that hand 340 with its recorded scores left out."""
    events = read_events(ROOT / "tests/golden/wrong-score.log")
    with pytest.raises(IllegalMoveError, match=r"score\.mismatch"):
        compare_match(events)
    end = next(i for i, e in enumerate(events) if isinstance(e, HandEnded))
    recorded = events[end].scores  # type: ignore[union-attr]
    unrecorded = [*events[:end], replace(events[end], scores=None)]
    (hand,) = compare_match(unrecorded)
    assert not disagreements([hand])
    assert recorded is not None and recorded[0] == 440 and hand.oracle[0].total == 340


# --- Hands built to reach what play seldom does --------------------------------------------


def _royal_hand(last: str, morto: str) -> Scenario:
    """Burako: seat 0 lays A..J of spades and takes the morto by its discard, then lays off
    ``last`` from it and goes out."""
    s = Scenario("burako", hands={0: "As 2s 3s 4s 5s 6s 7s 8s 9s Ts 3h"}, stock="Js 4h Tc",
                 mortos={0: morto})
    s.draw().meld("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js").discard("3h").morto(direct=False)
    s.pass_turn()
    s.draw().meld("5h 5d 5c").meld("9h 9d 9c").meld("Th Td Tc").layoff(0, last)
    return s


@pytest.mark.parametrize(("last", "morto", "cls", "bonus"), [
    ("Qs Ks", "Qs Ks 5h 5d 5c 9h 9d 9c Th Td Jh", "royal", 500),
    ("Qs Ks As", "Qs Ks As 5h 5d 5c 9h 9d 9c Th Td", "ace_to_ace", 1000),
])
def test_royal_and_ace_to_ace_hands_score_as_the_oracle_says(
        last: str, morto: str, cls: str, bonus: int) -> None:
    s = _royal_hand(last, morto)
    if s.hand(0):
        s.discard("Jh")
    s.go_out().end_hand()
    (hand,) = compare_match(s.events, SPEC["burako"])
    assert not disagreements([hand])
    assert hand.oracle[0].canastras == {cls: 1} and hand.oracle[0].canastra_bonus == bonus
    # By hand: A..K of spades (and the second ace), then 5-5-5, 9-9-9 and T-T-T.
    run = 15 * last.count("A") + 15 + 10 + 5 * 5 + 10 * 6
    assert hand.oracle[0].table_points == run + 15 + 30 + 30
    assert hand.oracle[0].going_out == 100 and hand.oracle[0].morto_penalty == 0


def _voided_hand(voided_by: str, partner_out: bool) -> Scenario:
    """Biriba, four players: seat 0 lays a clean run of clubs (relancinho) and takes the morto
    by its discard; then an opponent (seat 1) or the partner (seat 2) goes out at once."""
    hands = {0: "3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Kc", 1: "3d 4d 5d 6d 7d 8d 9d Td Jd Qd Kd",
             2: "3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks"}
    s = Scenario("biriba", 4, hands=hands, stock="Ac Ad As",
                 mortos={0: "3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh",
                         1: "3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh"},
                 morto_voided_by=voided_by)
    s.draw().meld("3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Kc").discard("Ac").morto(direct=False)
    if partner_out:
        s.pass_turn()
        s.draw().meld("3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks As").go_out()
    else:
        s.draw().meld("3d 4d 5d 6d 7d 8d 9d Td Jd Qd Kd Ad").morto(direct=True)
        s.meld(" ".join(f"{r}{'h'}" for r in "3456789TJQK")).go_out()
    return s.end_hand()


@pytest.mark.parametrize(("voided_by", "partner_out", "voided"), [
    ("opponent_out", False, True), ("opponent_out", True, False),
    ("any_end", True, True), ("any_end", False, True),
])
def test_an_indirect_morto_voided_or_standing_scores_as_the_oracle_says(
        voided_by: str, partner_out: bool, voided: bool) -> None:
    s = _voided_hand(voided_by, partner_out)
    (hand,) = compare_match(s.events, house_values(s.rules))
    assert not disagreements([hand])
    side0 = hand.oracle[0]
    assert side0.relancinho == 100 + (100 if partner_out else 0)
    assert side0.morto_penalty == (100 if voided else 0)
    # Seat 2 holds its 11 spades unless it went out; seat 0 the morto unless it is void.
    eleven = 5 * 5 + 10 * 6
    assert side0.hand_penalty == eleven * (not partner_out) + eleven * (not voided)


# --- Meld classes, run by run --------------------------------------------------------------


def _random_meld(rng: random.Random, rules: Rules) -> tuple[int, ...]:
    wilds = [JOKER] * (rules.jokers > 0) + [c for c in NATURALS if RANK[c] == 2]
    if rng.random() < 0.25:
        rank = rng.choice(range(1, 14))
        same = [c for c in NATURALS if RANK[c] == rank] * 2
        cards = rng.sample(same, rng.randint(3, 8))
    else:
        suit = rng.randrange(4)
        length = rng.randint(3, rules.max_run())
        lo = rng.randint(1, rules.max_run() + 1 - length)
        cards = [suit * 16 + (r if r <= 13 else 1) for r in range(lo, lo + length)]
        if rng.random() < 0.6:
            cards[rng.randrange(len(cards))] = rng.choice(wilds)
    if rng.random() < 0.3:
        cards.append(rng.choice(wilds))
    rng.shuffle(cards)
    return tuple(cards)


@pytest.mark.parametrize("n", [3000, pytest.param(60000, marks=pytest.mark.slow)])
def test_meld_classes_agree_with_the_oracle(n: int) -> None:
    rng = random.Random(n)
    houses = [derive("burraco", canastra_size=6), derive("burako", semi_clean=True),
              derive("classic", royal_canastras=True, ace_both_ends=True, canastra_size=5)]
    seen: Counter[str | None] = Counter()
    for rules in [*PRESETS.values(), *houses]:
        v = house_values(rules)
        for _ in range(n // 10):
            cards = _random_meld(rng, rules)
            try:
                reading = read_meld(cards, rules)
            except MeldError:
                continue
            kind = "set" if reading.kind == "set" else "run"
            assert canastra_class(rules, v, cards, kind) == reading.canastra, (rules.name, cards)
            seen[reading.canastra] += 1
    assert {"clean", "dirty", "semi_clean", "royal", "ace_to_ace", None} <= set(seen), seen


# --- More built hands: each scored by the oracle next to the engine, key lines by hand -----

CLUBS = "3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Kc"  # 5 x 5 + 6 x 10 = 85 points
HEARTS = "3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh"
DIAMONDS = "3d 4d 5d 6d 7d 8d 9d Td Jd Qd Kd"
SPADES = "3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks"


def _pile_relancinho() -> Scenario:
    """Classic: seat 0 takes the pile and lays everything down at once: a relancinho."""
    s = Scenario("classic", 2, hands={0: "3c 4c 5c 6c 7c 8c 9c Tc Jc Qc 5s"}, stock="5h 5d")
    s.draw().discard("5s").draw().discard("5d")
    return s.take_pile().meld("3c 4c 5c 6c 7c 8c 9c Tc Jc Qc").meld("5s 5d 5h").go_out()


def _earlier_meld() -> Scenario:
    """Classic: seat 0 laid a meld in an earlier turn: no relancinho when it goes out."""
    s = Scenario("classic", 2, hands={0: "3c 4c 5c 6c 7c 8c 9c Tc Jc Qc 5s"}, stock="5h 9d Kc")
    s.draw().meld("3c 4c 5c").discard("5s").pass_turn()
    return s.draw().layoff(0, "6c 7c 8c 9c Tc Jc Qc Kc").discard("5h").go_out()


def _retracted_then_all() -> Scenario:
    """Classic, vulnerable: an opening taken back in an earlier turn leaves the relancinho."""
    s = Scenario("classic", 2, hands={0: "3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Ac"}, stock="5h 9d Kc",
                 vulnerable_at=0)
    s.draw().meld("3c 4c 5c").retract().discard("5h").pass_turn()
    return s.draw().meld(f"{CLUBS} Ac").go_out()


def _three_players_voided() -> Scenario:
    """Biriba, 3 players: seat 0's indirect morto; seat 1 plays; seat 2 goes out: void."""
    s = Scenario("biriba", 3, hands={0: CLUBS, 2: DIAMONDS}, stock="Ac 5h Ad",
                 mortos={0: HEARTS, 2: SPADES})
    s.draw().meld(CLUBS).discard("Ac").morto(direct=False).pass_turn()
    return s.draw().meld(f"{DIAMONDS} Ad").morto(direct=True).meld(SPADES).go_out()


def _partner_turn_does_not_count() -> Scenario:
    """Biriba, 4 players: seat 0's indirect morto; its partner (seat 2) plays a turn; an
    opponent (seat 3) goes out before seat 0 plays again: the morto is void."""
    s = Scenario("biriba", 4, hands={0: CLUBS, 3: DIAMONDS}, stock="Ac 5h 6h Ad",
                 mortos={0: HEARTS, 1: SPADES})
    s.draw().meld(CLUBS).discard("Ac").morto(direct=False).pass_turn().pass_turn()
    return s.draw().meld(f"{DIAMONDS} Ad").morto(direct=True).meld(SPADES).go_out()


def _direct_morto_stands() -> Scenario:
    """Biriba: a morto taken directly stands when the opponent goes out next; its taker's
    cards (the morto less the discarded king) count against the side."""
    s = Scenario("biriba", 2, hands={0: CLUBS, 1: DIAMONDS}, stock="Ac Ad",
                 mortos={0: HEARTS, 1: SPADES})
    s.draw().meld(f"{CLUBS} Ac").morto(direct=True).discard("Kh")
    return s.draw().meld(f"{DIAMONDS} Ad").morto(direct=True).meld(SPADES).go_out()


def _stock_out(taker: int, voided_by: str) -> Scenario:
    """Biriba, 3 players, stock floor 29: ``taker`` takes its morto indirectly and the stock
    runs out before its next turn (taker 1) or as that turn begins (taker 0)."""
    s = Scenario("biriba", 3, hands={taker: CLUBS}, mortos={taker: HEARTS}, stock_floor=29,
                 morto_voided_by=voided_by)
    while not (s.turn == taker and len(s.state.stock) == 32 - taker):
        s.pass_turn()
    s.draw().meld(CLUBS)
    s.discard(format_cards(s.hand(taker))).morto(direct=False)
    while len(s.state.stock) > 29:
        s.pass_turn()
    return s


TAKEN = 85 + 200 + 100  # the clubs, their clean canastra, the relancinho


@pytest.mark.parametrize(("build", "side", "lines"), [
    # (relancinho, morto penalty, hand penalty, going out, total) of one side, by hand
    (_pile_relancinho, 0, (100, 0, 0, 50, 75 + 15 + 200 + 100 + 50)),
    (_earlier_meld, 0, (0, 0, 0, 50, 85 + 200 + 50)),
    (_retracted_then_all, 0, (100, 0, 0, 50, 100 + 200 + 100 + 50)),
    (_three_players_voided, 0, (100, 100, 0, 0, TAKEN - 100)),
    (_partner_turn_does_not_count, 0, (100, 100, None, 0, None)),
    (_direct_morto_stands, 0, (100, 0, 75, 0, 15 + TAKEN - 75)),
    (lambda: _stock_out(1, "any_end"), 1, (100, 100, 0, 0, TAKEN - 100)),
    (lambda: _stock_out(0, "any_end"), 0, (100, 0, 85, 0, TAKEN - 85)),
    (lambda: _stock_out(1, "opponent_out"), 1, (100, 0, 85, 0, TAKEN - 85)),
])
def test_built_hands_score_as_the_oracle_says(
        build: Any, side: int, lines: tuple[int | None, ...]) -> None:
    s = build()
    s.end_hand("went_out" if s.state.phase == "out" else "stock_out")
    (hand,) = compare_match(s.events, house_values(s.rules))
    assert not disagreements([hand])
    o = hand.oracle[side]
    got = (o.relancinho, o.morto_penalty, o.hand_penalty, o.going_out, o.total)
    assert all(want is None or want == g for want, g in zip(lines, got, strict=True)), got
