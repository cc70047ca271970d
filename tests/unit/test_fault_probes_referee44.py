"""Fault probes of the referee's view (round 44): one match, one story.

- A morto taken indirectly and then voided (an opponent went out before its taker played
  again, RULES.md §7) was shown "morto taken" by `replay` and `explain`, beside the score line
  "morto not taken -100". The timeline's :class:`SideView` now says the morto's state
  (``waiting``, ``taken``, ``voided``), from the score that charges the penalty.
- `mega` ends a hand with 2 cards still in the stock (RULES.md §8), yet `moves` offered "end the
  hand: the stock is out" and `replay` said "the stock ran out". Both now say "the stock is
  down to its last 2 cards", in words of one function.
- The audit's hint for a wrong score never named the relancinho (RULES.md §7, §9).
- The hint never named the voided morto's slips: letting it stand (its cards charged as
  cards in hand, no penalty), or voiding one that stands (a partner went out, the stock ended).
- A match carried in (`TotalsCarried`): `replay` said "h0: 255/-105  total: 955/295" and
  `show` ran hand 0's 255 to a total of 955, neither naming the 700 carried in.
- `explain` described `hand.not_over` as "the stock is exhausted at the start of a turn":
  mega's floor is 2 cards, and the pile may still be taken (RULES.md §8).
- Probe: over every example log (a log per preset and player count), every view's totals
  equal the state's, every hand end's explained score lines equal the recomputed score, and
  the morto's state agrees with the morto penalty.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from buraco_log import audit
from buraco_log.audit.scores import _hint, _scoring
from buraco_log.cards import format_card
from buraco_log.events import AnyEvent, CardDrawn, HandEnded
from buraco_log.options import moves_at
from buraco_log.rules import PRESETS
from buraco_log.scoring import score_hand
from buraco_log.state import SideScore
from buraco_log.timeline import Timeline, describe_event, morto_states, stock_end
from cli.dispute_cmd import render_table
from tests.scenario import Scenario, carried_in

ROOT = Path(__file__).resolve().parents[2]
SIM = ROOT / "examples" / "sim"
EXAMPLES = sorted(SIM.glob("*.blog")) + sorted((ROOT / "examples" / "golden").glob("*.jsonl"))
VOIDED = SIM / "biriba-3p-000000.blog"  # hand 2: side 1 takes its morto at seq 299 by a
# discard, and seat 2 goes out at seq 303 before seat 1 plays again; the hand ends at 304
MEGA = SIM / "mega-4p-000000.blog"  # hand ends by the stock at seqs 1126 and 1782

SETS_11 = "7h 7s 7d 8c 8d 8s 9h 9s 9d Kc Kd"
HAND_11 = "3h 3s 3d 4h 4s 4d 5h 5s 5d 5c 5h"
MORTO_11 = "Jh Js Jd Jc Qh Qs Qd Qc Th Ts Td"


def _side_line(view_lines: list[str], side: int) -> str:
    return next(line for line in view_lines if line.lstrip().startswith(f"side {side} ("))


# -- 1. the voided morto --------------------------------------------------------------------


@pytest.mark.parametrize("seq", [303, 304])  # a player went out; the hand ended
def test_a_morto_voided_by_an_opponent_going_out_is_shown_voided_not_taken(seq: int) -> None:
    tl = Timeline(audit.load(VOIDED))
    view = tl.view(seq)
    assert [s.morto_state for s in view.sides] == ["waiting", "voided", "taken"]
    assert view.sides[1].morto_taken  # the fact kept as it was: the side did take it
    line = _side_line(list(render_table(view)), 1)
    assert "morto taken" not in line and "morto voided" in line
    # the score says the same: side 1 pays for a morto not taken, side 2 does not
    scores = tl.state_at(304).results[-1].scores
    assert (scores[1].morto_penalty, scores[2].morto_penalty) == (100, 0)


def test_explain_of_the_hand_end_shows_the_voided_morto_beside_its_penalty() -> None:
    x = audit.explain_event(audit.load(VOIDED), 304)
    side1 = next(f for f in x.facts if f.startswith("side 1 recomputed score"))
    assert "morto not taken -100" in side1
    assert x.before.sides[1].morto_state == "voided"
    assert "morto taken" not in _side_line(list(render_table(x.before)), 1)


def _mega_taken_then_stock_out(voided_by: str) -> Scenario:
    """Seat 0 takes its morto by a discard; seat 1 then finds the stock at mega's floor."""
    s = Scenario("mega", hands={0: HAND_11}, mortos={0: MORTO_11}, morto_voided_by=voided_by)
    t = s.rep._t
    while not (len(t.stock) == 3 and s.turn == 0):
        s.pass_turn()
    s.draw().meld("3h 3s 3d").meld("4h 4s 4d").meld("5h 5s 5d 5c 5h")
    drawn = t.drawn
    assert drawn is not None
    s.discard(format_card(drawn))
    return s.morto(direct=False)


@pytest.mark.parametrize(("voided_by", "after"), [("any_end", "voided"),
                                                 ("opponent_out", "taken")])
def test_a_stock_end_voids_the_morto_only_under_the_old_reading_and_the_view_says_so(
        voided_by: str, after: str) -> None:
    s = _mega_taken_then_stock_out(voided_by)
    assert morto_states(s.state) == ("taken", "waiting")  # not over yet: the hand goes on
    s.end_hand("stock_out")
    assert morto_states(s.state) == (after, "waiting")
    assert bool(s.state.results[0].scores[0].morto_penalty) == (after == "voided")


def test_a_preset_without_morto_and_a_match_not_dealt_have_no_morto_state() -> None:
    s = Scenario("classic", hands={0: SETS_11}, stock="Ks")
    assert morto_states(s.state) == ("none", "none")
    tl = Timeline(audit.load(VOIDED))
    assert [x.morto_state for x in tl.view(0).sides] == ["none"] * 3  # the match start


# -- 2. mega's stock end, in the same words everywhere -----------------------------------------


def test_mega_ends_the_hand_with_two_cards_left_and_replay_and_moves_say_so_alike() -> None:
    events = audit.load(MEGA)
    tl = Timeline(events)
    end = next(e for e in tl.events if isinstance(e, HandEnded) and e.reason == "stock_out")
    before = tl.state_at(end.seq - 1)
    assert len(before.stock) == 2  # RULES.md §8: mega's floor
    words = "the stock is down to its last 2 cards"
    assert stock_end(tl.rules) == words
    assert tl.recent(end.seq, 1)[0].startswith(f"seq {end.seq}: hand ended ({words})")
    offers = [m.text for g in moves_at(before).groups if g.group == "end" for m in g.moves]
    assert offers == [f"end the hand: {words}"]
    # explain and diff word the event as replay does
    assert audit.explain_event(events, end.seq).event == tl.recent(end.seq, 1)[0]


def test_the_stock_end_words_follow_the_floor_and_the_unit() -> None:
    assert stock_end(PRESETS["classic"]) == "the stock ran out"
    assert stock_end(PRESETS["burako"], "tile") == "the stock ran out"
    floor1 = msgspec.structs.replace(PRESETS["burako"], stock_floor=1)
    assert stock_end(floor1, "tile") == "the stock is down to its last 1 tile"
    assert stock_end(None) == "the stock reached its floor"  # no rules: no floor to name
    ev = HandEnded("stock_out", None, seq=9)
    assert describe_event(ev, rules=PRESETS["mega"]).endswith(
        "(the stock is down to its last 2 cards)")


# -- 3. the relancinho in the audit's hint ----------------------------------------------------


def _relancinho_hand(recorded_delta: int) -> list[AnyEvent]:
    """Classic: seat 0 lays the whole hand in one turn (relancinho, +100) and goes out; the
    hand end records side 0's score off by ``recorded_delta``."""
    s = Scenario("classic", hands={0: SETS_11}, stock="Ks")
    s.draw().meld("7h 7s 7d").meld("8c 8d 8s").meld("9h 9s 9d").meld("Kc Kd Ks").go_out()
    t = s.rep._t
    right = tuple(x.total for x in score_hand(
        s.rules, t.sides, t.n_sides, t.hands, t.melds, t.morto_taken, t.morto_pending,
        t.went_out, t.relancinho))
    wrong = (right[0] + recorded_delta, *right[1:])
    return [*s.events, HandEnded("went_out", wrong, seq=len(s.events))]


@pytest.mark.parametrize(("delta", "words"), [
    (100, "the relancinho bonus (100) counted twice"),
    (-100, "the relancinho bonus (100) left out"),
])
def test_a_score_off_by_the_relancinho_is_hinted_as_such(delta: int, words: str) -> None:
    tl = Timeline(_relancinho_hand(delta))
    scoring, findings = _scoring(tl)
    side0 = scoring.hands[0].sides[0]
    assert side0.difference == delta and findings
    assert side0.hint is not None and words in side0.hint


def test_the_relancinho_hints_of_a_side_with_none_and_of_two_partners() -> None:
    classic = PRESETS["classic"]
    none = SideScore(0, 100, {}, 0, 0, 0, 10, 0, 90)
    assert "a relancinho bonus (100) counted though not earned" in (_hint(100, none, classic)
                                                                   or "")
    two = SideScore(0, 100, {}, 0, 50, 200, 0, 0, 350)  # two partners, one each (§7)
    assert "the relancinho bonus (200) counted twice" in (_hint(200, two, classic) or "")
    assert "one relancinho bonus (100) left out" in (_hint(-100, two, classic) or "")
    assert "one relancinho bonus (100) too many" in (_hint(100, two, classic) or "")
    thirteen = PRESETS["thirteen"]  # no relancinho in these rules: never guessed
    assert "relancinho" not in (_hint(100, none, thirteen) or "")


# -- probe: every view agrees with the state and the score ------------------------------------


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_hand_end_agrees_across_view_explain_summary_and_score(path: Path) -> None:
    events = audit.load(path)
    tl = Timeline(events)
    summary = audit.summarize(events, path=str(path))
    assert summary.totals == tl.final.totals
    assert [h.scores for h in summary.hands] == [
        tuple(s.total for s in r.scores) for r in tl.final.results]
    ends = [e.seq for e in tl.events if isinstance(e, HandEnded)]
    assert ends, "every example ends a hand"
    for seq in ends:
        state = tl.state_at(seq)
        view = tl.view(seq)
        assert view.totals == state.totals == tuple(s.total for s in view.sides)
        scores = state.results[-1].scores
        rules = state.rules
        assert rules is not None
        for s in scores:
            taken = state.morto_taken[s.side]
            want = ("none" if not rules.morto else "waiting" if not taken
                    else "voided" if s.morto_penalty else "taken")
            assert view.sides[s.side].morto_state == want, (seq, s.side)
        x = audit.explain_event(events, seq)
        lines = [f for f in x.facts if " recomputed score " in f]
        assert lines == [f"side {s.side} recomputed score {s.total}: " + ", ".join(
            f"{i.item} {i.points:+d}" for i in audit.score_lines(s, tl.style == "tiles"))
            for s in scores]
        assert x.before == tl.view(seq - 1)  # explain's table is replay's


@pytest.mark.parametrize("path", [VOIDED, MEGA], ids=lambda p: p.name)
def test_at_every_seq_the_totals_agree_and_a_seat_sees_no_other_hand(path: Path) -> None:
    tl = Timeline(audit.load(path))
    seats = len(tl.players)
    for seq in range(tl.last_seq + 1):
        state = tl.state_at(seq)
        view = tl.view(seq, seat=seq % seats)  # each seat's view in turn
        assert view.totals == state.totals == tuple(s.total for s in view.sides)
        assert all((h.cards is None) == (h.seat != view.viewer) for h in view.seats)
        ev = tl.events[seq]
        if isinstance(ev, CardDrawn) and ev.seat != view.viewer:
            assert view.recent[-1].endswith("drew a card"), view.recent[-1]


def test_the_hand_not_over_rule_names_the_floor_and_the_pile_not_an_exhausted_stock() -> None:
    """`explain` of a stock end refused in mega described the rule as "the stock is
    exhausted", the very claim mega's floor of 2 makes false (RULES.md §8)."""
    s = Scenario("mega", hands={0: HAND_11})
    t = s.rep._t
    while len(t.stock) > 3:
        s.pass_turn()
    early = HandEnded("stock_out", None, seq=len(s.events))
    x = audit.explain_event([*s.events, early], early.seq)
    assert (x.legal, x.rule) == (False, "hand.not_over")
    assert x.description is not None and "exhausted" not in x.description
    assert "floor" in x.description and "2 left in mega" in x.description
    assert "take the pile" in x.description


# -- the voided morto in the audit's hint ------------------------------------------------------


def _with_recorded(events: list[AnyEvent], seq: int, side: int, delta: int) -> list[AnyEvent]:
    """``events`` with the hand end at ``seq`` recording ``side``'s score off by ``delta``."""
    out = []
    for e in events:
        if isinstance(e, HandEnded) and e.seq == seq:
            scores = list(e.scores or ())
            scores[side] += delta
            e = msgspec.structs.replace(e, scores=tuple(scores))
        out.append(e)
    return out


def test_a_voided_morto_scored_as_standing_is_hinted() -> None:
    """Side 1's morto (seat 1 holds its 11 cards, 90 points) is voided by seat 2 going out:
    a recorder who let it stand charged 90 in hand and no 100 penalty: +10."""
    events = _with_recorded(audit.load(VOIDED), 304, 1, 10)
    scoring, _ = _scoring(Timeline(events))
    side1 = scoring.hands[2].sides[1]
    assert side1.difference == 10
    assert side1.hint is not None and "the voided morto scored as standing (its 90 points" \
        in side1.hint


def test_a_standing_morto_scored_as_voided_is_hinted() -> None:
    """Mega, RULES.md §7: the stock's end does not void a morto (110 points in hand stand); a
    recorder who voided it charged the 100 penalty instead: +10 against the recomputed."""
    s = _mega_taken_then_stock_out("opponent_out").end_hand("stock_out")
    end = s.events[-1]
    assert isinstance(end, HandEnded)
    scores = s.state.results[0].scores
    assert (scores[0].morto_penalty, scores[0].hand_penalty) == (0, 110)
    wrong = HandEnded("stock_out", (scores[0].total + 10, scores[1].total), seq=end.seq)
    scoring, _ = _scoring(Timeline([*s.events[:-1], wrong]))
    side0 = scoring.hands[0].sides[0]
    assert side0.difference == 10
    assert side0.hint is not None and (
        "the morto scored as voided though it stands (a 100 penalty instead of its 110 points"
        in side0.hint)


# -- a match carried in: the hands add up to the total ----------------------------------------


def test_replay_of_a_match_carried_in_says_the_carried_totals_its_hands_add_to() -> None:
    """`replay` said "h0: 255/-105  total: 955/295": 255 is no 955 without the 700 carried."""
    s = carried_in(Scenario("classic", hands={0: SETS_11}, stock="Ks"), (700, 400))
    s.draw().meld("7h 7s 7d").meld("8c 8d 8s").meld("9h 9s 9d").meld("Kc Kd Ks").go_out()
    s.end_hand("went_out")
    tl = Timeline(s.events)
    end = [line for line in render_table(tl.view(tl.last_seq)) if line.startswith("scores")]
    assert end == ["scores  carried: 700/400  h0: 255/-105  total: 955/295"]
    start = [line for line in render_table(tl.view(1)) if line.startswith("scores")]
    assert start == ["scores  carried: 700/400  total: 700/400"]  # before any hand ended
    played = Timeline(audit.load(VOIDED)).view(304)  # from the start: no carried totals
    assert [line for line in render_table(played) if line.startswith("scores")] == [
        "scores  h0: -85/395/-10  h1: 300/295/260  h2: 20/20/460  total: 235/710/710"]
