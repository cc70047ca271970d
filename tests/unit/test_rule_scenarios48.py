"""The original Portuguese texts (``seeds/``) read sentence by sentence, for the sentences the
earlier scenario files leave out (``test_scenarios_probe41c_seed_quotes`` took the seeds' meld
examples, seat counts and morto sentences; 45-47 RULES.md section by section). Each test names
its seed and quotes its sentence; where the seed and RULES.md differ, RULES.md decides and the
docstring says so. Expected scores are summed by hand as RULES.md §9 adds them.

Also: a JSON Lines pile take written without its ``top`` (read as code 0) on a pile that is not
empty is refused as ``event.invalid`` saying the take names no top card, not "#0 is no card".
"""

from __future__ import annotations

import pytest

from buraco_log.events import PileTaken
from buraco_log.jsonl import PILE_TOP_MISSING, event_from_json
from tests.scenario import Scenario, carried_in, refused

SEAT1 = "3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Kc"  # 5 x5 + 6 x10 = 85 points left in hand


# ------------------------------------------------------------- 000: vulnerable relancinho
# 000: "quando ele alcançar 750 pontos (metade da partida), ficará vulnerável e só poderá baixar
# as primeiras cartas quando elas somarem 75 pontos, ou mais", read with "O relancinho acontece
# quando onze cartas são combinadas na mão de algum jogador, sem descida parcelada": a relancinho
# is an opening like any other (RULES.md §7, §10).


def test_000_a_vulnerable_relancinho_of_75_or_more_stands() -> None:
    """000 "só poderá baixar as primeiras cartas quando elas somarem 75 pontos, ou mais":
    the whole hand laid at once, 135 points, is the side's opening and a relancinho."""
    s = carried_in(Scenario("classic", hands={0: "Kh Kc Kd Qh Qc Qd Jh Jc Jd Ah As", 1: SEAT1},
                            stock="Ad"), (750, 0))
    s.draw("Ad").meld("Kh Kc Kd").meld("Qh Qc Qd").meld("Jh Jc Jd").meld("Ah As Ad").go_out()
    # K 30 + Q 30 + J 30 + A 45 = 135, going out 50, relancinho 100; seat 1: -85
    s.end_hand("went_out", (135 + 50 + 100, -85))


@pytest.mark.parametrize("last", ["meld", "discard"])
def test_000_a_vulnerable_relancinho_under_75_is_refused(last: str) -> None:
    """000 "só poderá baixar as primeiras cartas quando elas somarem 75 pontos": laying the
    whole hand (all of it, or all but a last discard) for 60 or 55 points does not excuse the
    minimum: going out (or the last discard) is refused, and the cards are taken back."""
    s = carried_in(Scenario("classic", hands={0: "3h 4h 5h 6h 7h 3c 4c 5c 3d 4d 5d", 1: SEAT1},
                            stock="6d" if last == "meld" else "Kd"), (750, 0))
    s.draw().meld("3h 4h 5h 6h 7h").meld("3c 4c 5c")
    if last == "meld":
        s.meld("3d 4d 5d 6d")  # the turn's end is where the opening is weighed
        refused(s, "vulnerable.opening_too_low", ("75", "60"), "go_out")
        s.retract()
        assert len(s.hand(0)) == 12
    else:
        s.meld("3d 4d 5d")
        refused(s, "vulnerable.opening_too_low", ("75", "55"), "discard", "Kd")


# ------------------------------------------------------------- 000: the one redraw


def test_000_the_first_player_rejects_one_card_only() -> None:
    """000 "Ele tem o direito de comprar uma segunda carta, caso a primeira não lhe sirva,
    exceção essa que só se aplica a ele, e somente na primeira jogada": one rejection, then the
    second card is kept (RULES.md §4.1)."""
    s = Scenario("classic", stock="Kd Qs 9h")
    s.draw("Kd").reject("Kd").draw("Qs")
    refused(s, "draw.redraw_only_first", ("first card",), "reject", "Qs")
    s.discard("Qs")
    s.draw("9h")
    refused(s, "draw.redraw_only_first", (), "reject", "9h")  # nor the next player


# ------------------------------------------------------------- 001: the longest run


FULL = "Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh"


def test_001_a_run_of_thirteen_reaches_ace_to_king() -> None:
    """001 "Uma sequência pode chegar a 14 cartas" against its table ("Ás baixo (A-2-3) ou
    alto (Q-K-A), nunca os dois") and FAQ: RULES.md §5 lets the FAQ win, so A..K (13) stands
    in ``thirteen``, a clean canastra."""
    s = Scenario("thirteen", hands={0: FULL}, stock="Ah")
    s.draw("Ah").meld(FULL)
    assert [m.canastra for m in s.state.melds[0]] == ["clean"]


@pytest.mark.parametrize("how", ["meld", "layoff"])
def test_001_a_fourteen_card_run_is_refused_in_thirteen(how: str) -> None:
    """001 "Uma sequência pode chegar a 14 cartas": not in ``thirteen`` (RULES.md §5: max 13,
    the ace never low and high in one run), laid at once or the second ace laid off."""
    s = Scenario("thirteen", hands={0: FULL}, stock="Ah")
    s.draw("Ah")
    if how == "meld":
        refused(s, "meld.duplicate_in_run", ("one ace",), "meld", f"{FULL} Ah")
    else:
        s.meld(FULL)
        refused(s, "meld.duplicate_in_run", ("one ace",), "layoff", 0, "Ah")


# ------------------------------------------------------------- a take that names no top


def _pile_of_one(name: str = "classic") -> Scenario:
    s = Scenario(name, stock="Kd")
    return s.draw("Kd").discard("Kd")


@pytest.mark.parametrize("name", ["classic", "burako"])
def test_a_take_without_its_top_says_it_names_no_top_card(name: str) -> None:
    """A hand-written ``pt`` line without ``top`` reads as code 0; on a pile that is not empty
    the refusal says the take names no top card, and which card the top is, not "#0 is no
    card" (a card the user never wrote)."""
    s = _pile_of_one(name)
    ev = event_from_json({"t": "pt", "seq": s.rep.seq + 1, "seat": 1, "count": 1})
    assert isinstance(ev, PileTaken) and ev.top == PILE_TOP_MISSING
    card = "tile" if name == "burako" else "card"
    top = s.text("Kd")
    with s.illegal("event.invalid"):
        s.push(ev)
    text = str(s.last_error)
    assert f"names no top {card}" in text and top in text, text
    assert "#0" not in text, text


def test_a_take_naming_a_wrong_top_or_an_empty_pile_keeps_its_own_rule() -> None:
    """The no-top wording is for code 0 on a pile that has a top: a take naming another card
    is ``pile.wrong_top``, and a take of an empty pile is ``pile.empty`` as before."""
    s = _pile_of_one()
    refused(s, "pile.wrong_top", ("named top Qs", "the top is Kd"), "take_pile", top="Qs")
    assert "names no top" not in str(s.last_error)
    empty = Scenario("classic", stock="Kd")
    with empty.illegal("pile.empty"):
        empty.push(PileTaken(0, 0, PILE_TOP_MISSING, seq=empty.rep.seq + 1))
