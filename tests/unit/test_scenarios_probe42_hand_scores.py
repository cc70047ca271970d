"""Probe 42, end-of-hand scores and whole matches in every preset, against RULES.md §9–10
written out here (the card and bonus tables, the targets), not against `Rules.point_table`.

One hand, the same in every preset: the first player lays a 7-card run and four kings, and
empties the hand (by melding where the morto is direct, by a discard in `burako`), plays the
morto down and goes out; the other seat never lays a card and never takes its morto. Its
table is a clean canastra or, with a wild in the run, a dirty one only (RULES.md §7: going out
needs "a canastra of any kind"). A match is that hand dealt over and over, the deal rotating,
until a side is at its target: the match is decided exactly then, with the winner the totals
say, and not a hand earlier.
"""

from __future__ import annotations

import msgspec
import pytest

from buraco_log.cards import format_cards, parse_cards
from buraco_log.errors import IllegalMoveError
from buraco_log.events import CardDiscarded
from buraco_log.reducer import validate
from buraco_log.rules import preset
from tests.scenario import Scenario, build_deal
from tests.unit.hand_scores import MORTO_NOT_TAKEN, PRESETS, points

FAMILY = ("classic", "biriba", "bossa-nova")

# RULES.md §9, second table, and §10's targets.
GOING_OUT = {name: 50 if name in FAMILY else 100 for name in PRESETS}
RELANCINHO = {name: 100 if name in FAMILY else 0 for name in PRESETS}
TARGET = {"classic": 1500, "biriba": 1500, "bossa-nova": 1500, "thirteen": 2005,
          "thirteen-quick": 1005, "burraco": 2005, "mega": 3000, "burako": 3000}
CLEAN, DIRTY = 200, 100

# The other seat's hand: 11 cards (13 with the two more of the 13-card presets).
LOSER = "Ac Ad 2d 3c 4c 3d 4d 8c 9c 8s 9s"
LOSER_13 = LOSER + " JK Tc"


def thirteen_cards(name: str) -> bool:
    return name.startswith("thirteen")


def plan(name: str, dirty: bool) -> dict[str, str]:
    """The first seat's hand, the cards it lays off on its run, its morto (the last card of
    which, 7c, it throws to go out) and the other seat's hand."""
    run = "3h 4h 5h 6h 7h 8h " + ("2s" if dirty else "9h")
    if thirteen_cards(name):  # 13 cards: the run goes on to the queen at once
        return {"run": run, "hand": f"{run} Kc Kd Ks Kh Th Jh", "draw": "Qh",
                "first_layoff": "Th Jh Qh", "morto": "Qc Qd Qs 5c 5d 5s 6c 6d 6s Kc 7c",
                "morto_layoff": "Kc", "loser": LOSER_13}
    return {"run": run, "hand": f"{run} Kc Kd Ks Kh", "draw": "Th", "first_layoff": "Th",
            "morto": "Qc Qd Qs 5c 5d 5s 6c 6d 6s Jh 7c", "morto_layoff": "Jh",
            "loser": LOSER}


def expected(name: str, dirty: bool) -> tuple[int, int]:
    """(the first seat's side, the other side) by RULES.md §9."""
    p = plan(name, dirty)
    laid = f"{p['hand']} {p['draw']}"
    if name != "classic":
        laid += " " + p["morto"].replace(" 7c", "")  # 7c is thrown to go out
    won = points(name, laid) + (DIRTY if dirty else CLEAN) + GOING_OUT[name]
    won += RELANCINHO[name]  # the whole hand down in one turn, nothing laid before, once
    lost = -points(name, p["loser"]) - MORTO_NOT_TAKEN[name]
    return won, lost


def deal(name: str, dirty: bool, first: int) -> dict[str, object]:
    p = plan(name, dirty)
    # burako: the first seat draws 4s and throws it (its morto comes by a discard), the
    # other seat draws 9d and throws it, then the first seat draws Th.
    stock = "4s 9d Th" if name == "burako" else p["draw"]
    return {"hands": {first: p["hand"], 1 - first: p["loser"]},
            "mortos": {} if name == "classic" else {first: p["morto"]}, "stock": stock}


def play_hand(s: Scenario, name: str, dirty: bool, first: int,
              vulnerable: bool = False) -> None:
    """Play the planned hand once dealt: ``first`` goes out, the other seat never lays.
    ``vulnerable``: the first seat's side must open with 75 (RULES.md §10): the run alone
    (45) may not end a turn, the run and the kings (85) may."""
    p = plan(name, dirty)
    s.draw(seat=first)
    s.meld(p["run"])
    short = CardDiscarded(first, parse_cards("Kc")[0], seq=s.rep.seq + 1)
    try:
        validate(s.state, short)
        refused = None
    except IllegalMoveError as exc:
        refused = exc.rule
    assert refused == ("vulnerable.opening_too_low" if vulnerable else None)
    s.meld("Kc Kd Ks Kh")
    if name == "burako":  # the morto only by a discard (RULES.md §7), played a turn later
        s.discard("4s").morto(direct=False)
        s.pass_turn()
        s.draw("Th").layoff(0, "Th Jh")
    else:
        s.layoff(0, p["first_layoff"])
        assert s.state.phase == "emptied"
        if name == "classic":  # no morto: emptying the hand is going out
            s.go_out()
            return
        s.morto(direct=True).layoff(1 if thirteen_cards(name) else 0, p["morto_layoff"])
    s.meld("Qc Qd Qs").meld("5c 5d 5s").meld("6c 6d 6s")
    s.discard("7c").go_out()


@pytest.mark.parametrize("dirty", [False, True], ids=["clean", "dirty"])
@pytest.mark.parametrize("name", PRESETS)
def test_a_hand_scores_as_the_tables_say(name: str, dirty: bool) -> None:
    s = Scenario(name, **deal(name, dirty, 0))  # type: ignore[arg-type]
    play_hand(s, name, dirty, 0)
    won, lost = expected(name, dirty)
    # A wrong recorded score is refused, and the one the tables give is accepted.
    with s.illegal("score.mismatch"):
        s.end_hand("went_out", (won + 5, lost))
    s.end_hand("went_out", (won, lost))
    assert s.state.totals == (won, lost)
    assert lost < 0  # a hand score below zero stays so (RULES.md §10, `000`)


def decided(name: str, totals: list[int]) -> int | None:
    """RULES.md §10: the match ends after the hand in which a side reaches the target; the
    highest total wins, a tie plays another hand."""
    best = max(totals)
    if best < TARGET[name] or totals.count(best) > 1:
        return None
    return totals.index(best)


@pytest.mark.parametrize("dirty", [False, True], ids=["clean", "dirty"])
@pytest.mark.parametrize("name", PRESETS)
def test_a_match_runs_hand_after_hand_to_its_target(name: str, dirty: bool) -> None:
    """The deal rotates (the seat after the dealer plays first, so the hand's winner
    alternates); the match is decided after exactly the hand the totals say."""
    s = Scenario(name, **deal(name, dirty, 0))  # type: ignore[arg-type]
    won, lost = expected(name, dirty)
    totals = [0, 0]
    vulnerable_hands = 0
    for hand_no in range(60):
        first = hand_no % 2
        if hand_no:
            assert s.state.phase == "between"
            with s.illegal("match.not_over"):
                s.end_match()
            d = deal(name, dirty, first)
            ev = build_deal(s.rules, 2, d["hands"], d["stock"], d["mortos"],  # type: ignore
                            None, hand_no=hand_no)
            s.push(msgspec.structs.replace(ev, seq=s.rep.seq + 1))
            assert s.state.turn == first
        # RULES.md §10: the classic family's side at half its target or more is vulnerable.
        vulnerable = name in FAMILY and totals[first] >= TARGET[name] / 2
        vulnerable_hands += vulnerable
        play_hand(s, name, dirty, first, vulnerable)
        scores = (won, lost) if first == 0 else (lost, won)
        s.end_hand("went_out", scores)
        totals = [t + x for t, x in zip(totals, scores, strict=True)]
        assert list(s.state.totals) == totals
        winner = decided(name, totals)
        if winner is not None:
            break
    assert winner is not None and s.state.phase == "decided"
    assert (vulnerable_hands > 0) == (name in FAMILY)
    assert max(totals) >= TARGET[name] > max(totals) - max(won, -lost) * 2
    with pytest.raises(IllegalMoveError) as info:
        s.end_match(totals=tuple(totals), winner=1 - winner)
    assert info.value.rule == "match.wrong_winner"
    s.end_match(totals=tuple(totals), winner=winner)
    assert s.state.phase == "over"


MANY = [(name, n) for name in PRESETS for n in preset(name).player_counts if n > 2]


@pytest.mark.parametrize(("name", "players"), MANY)
def test_a_hand_scores_by_sides_at_a_bigger_table(name: str, players: int) -> None:
    """RULES.md §2: with 3 players each is a side; with 4 and 6, partners on alternate seats
    share a side, its melds and its morto; §9: a side pays the cards left in all its players'
    hands, and its morto once. Seat 0 goes out as planned; nobody else lays a card."""
    p = plan(name, False)
    passes = " ".join(("9d", "8d", "7d")[: players - 1])
    stock = f"4s {passes} Th" if name == "burako" else p["draw"]
    s = Scenario(name, players, hands={0: p["hand"]}, stock=stock,
                 mortos={} if name == "classic" else {0: p["morto"]})
    if name == "burako":  # every other seat plays a turn before seat 0 plays its morto
        s.draw(seat=0).meld(p["run"]).meld("Kc Kd Ks Kh").discard("4s").morto(direct=False)
        for _ in range(players - 1):
            s.pass_turn()
        s.draw("Th").layoff(0, "Th Jh")
        s.meld("Qc Qd Qs").meld("5c 5d 5s").meld("6c 6d 6s").discard("7c").go_out()
    else:
        play_hand(s, name, False, 0)
    won, _ = expected(name, False)
    side = [seat if players <= 3 else seat % 2 for seat in range(players)]
    n_sides = max(side) + 1
    held = [sum(points(name, format_cards(h)) for seat, h in enumerate(s.state.hands)
                if side[seat] == k) for k in range(n_sides)]
    want = tuple((won if k == 0 else -MORTO_NOT_TAKEN[name]) - held[k] for k in range(n_sides))
    assert held[0] == 0 or players > 3  # seat 0's hand is empty; a partner's is not
    with s.illegal("score.mismatch"):
        s.end_hand("went_out", tuple(x + 1 for x in want))
    s.end_hand("went_out", want)
