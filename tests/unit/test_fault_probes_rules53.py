"""A match end, at every preset's target, as a referee meets it in a disputed log.

RULES.md §10: the match "ends after the hand in which a side reaches `target_score`"; "Highest
total wins; a tie plays another hand". A `MatchEnded` claims that end. Its `totals` and `winner`
are optional in the format (docs/log-format.md: `totals` = null, `winner` = null): the rules,
not the log, give the totals and the winner, so a bare `MatchEnded` claims the end alone, and
is accepted exactly when the rules give that end. A match end the rules do not give (a point
short of the target), totals off by one point or with a side too many or too few, and a winner
who is not the leader are refused with their rule ids, bare or not, in every preset.

The hand is one side closing in a single turn (two in `burako`), carried in just below or at
the target; its scores are worked out by hand in tests/unit/closing_hands.py (RULES.md §9).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from buraco_log.events import MatchEnded
from buraco_log.jsonl import dump
from buraco_log.timeline import Timeline
from tests.scenario import Scenario, refused
from tests.unit.closing_hands import SIDE0, closing_hand

TARGETS = {"classic": 1500, "biriba": 1500, "bossa-nova": 1500, "thirteen": 2005,
           "thirteen-quick": 1005, "burraco": 2005, "mega": 3000, "burako": 3000}


def ended_hand(name: str, short: int) -> tuple[Scenario, tuple[int, int]]:
    """The closing hand played and ended; side 0 ends ``short`` points below the target, side
    1 a point below the target before the hand (so below it after: its hand scores less than
    zero). Returns the scenario and the totals worked out by hand."""
    target = TARGETS[name]
    s, scores = closing_hand(name, (target - SIDE0[name] - short, target - 1))
    assert scores[1] < 0  # side 1 holds its hand: it ends below where it started
    s.end_hand("went_out", scores)
    return s, (target - short, target - 1 + scores[1])


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_a_bare_match_end_is_accepted_when_a_side_reached_the_target(name: str) -> None:
    s, totals = ended_hand(name, 0)
    assert s.state.totals == totals
    s.end_match()
    assert s.state.phase == "over" and s.state.winner == 0


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_a_match_end_one_point_short_of_the_target_is_refused_bare_or_with_totals(
        name: str) -> None:
    target = TARGETS[name]
    s, totals = ended_hand(name, 1)
    assert s.state.totals == totals and s.state.phase == "between"
    # Bare, with the true totals, with the leader named: the rules give no end, whatever it says.
    refused(s, "match.not_over", (f"target {target}", "another hand"), "end_match")
    refused(s, "match.not_over", (f"target {target}",), "end_match", totals=totals)
    refused(s, "match.not_over", (f"target {target}",), "end_match", totals=totals, winner=0)


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_a_match_end_whose_totals_differ_from_the_hands_scores_is_refused(name: str) -> None:
    s, (a, b) = ended_hand(name, 0)
    wrong = [(a + 1, b), (a, b - 1), (a, b, 0), (a,), (b, a)]
    for totals in wrong:
        refused(s, "score.mismatch", (f"recomputed ({a}, {b})",), "end_match", totals=totals)
        refused(s, "score.mismatch", (), "end_match", totals=totals, winner=0)
    s.end_match(totals=(a, b), winner=0)
    assert s.state.phase == "over"


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_a_match_end_naming_a_winner_who_is_not_the_leader_is_refused(name: str) -> None:
    s, totals = ended_hand(name, 0)
    for winner in (1, 2, -1):
        refused(s, "match.wrong_winner", (f"side {winner}", "side 0 won"), "end_match",
                winner=winner)
        refused(s, "match.wrong_winner", (), "end_match", totals=totals, winner=winner)
    s.end_match(winner=0)
    assert s.state.phase == "over"


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_totals_and_winner_both_wrong_name_the_winner_where_the_replay_goes_on(
        name: str) -> None:
    """Totals are refused first (`score.mismatch`, §9 before §10). A replay for people (show,
    replay, view, review) notes a score mismatch and goes on with the recomputed score, so the
    wrong winner beside wrong totals must be said in that refusal, or no one hears of it."""
    s, (a, b) = ended_hand(name, 0)
    inflated = (a - 200, b + 200)  # side 1 ahead in the recorded totals, and named winner
    refused(s, "score.mismatch", (f"recomputed ({a}, {b})", "recorded winner, side 1",
                                  "side 0 won"), "end_match", totals=inflated, winner=1)
    seq = s.rep.seq + 1
    line = Timeline([*s.events, MatchEnded(inflated, 1, seq=seq)]).score_mismatches
    assert [(m.rule, m.seq) for m in line] == [("score.mismatch", seq)]
    assert "side 1, is wrong too: side 0 won" in str(line[0])
    # The totals alone wrong, the winner right or not said: no word of the winner.
    for winner in (0, None):
        refused(s, "score.mismatch", (), "end_match", totals=(a + 1, b), winner=winner)
        assert "winner" not in str(s.last_error)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli", *args], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.slow  # a real command over logs on disk (match ends in-process: the default run's)
def test_the_audit_of_disputed_match_ends_names_each_rule_at_the_match_end(
        tmp_path: Path) -> None:
    """Real JSON Lines logs through the command line: a bare end at the target is an intact
    log; an end a point short, totals a point off and the trailing side as winner are each
    one finding with its rule at the match end's seq."""
    want: dict[str, tuple[str, int] | None] = {}
    for name in ("classic", "burako"):
        for kind, short, kw in (("bare", 0, {}), ("short", 1, {}),
                                ("totals", 0, {"totals": "off"}), ("winner", 0, {"winner": 1})):
            s, (a, b) = ended_hand(name, short)
            events = list(s.events)
            if kw.get("totals") == "off":
                end: dict[str, object] = {"totals": (a + 1, b)}
            else:
                end = dict(kw)
            seq = s.rep.seq + 1
            events.append(MatchEnded(seq=seq, **end))  # type: ignore[arg-type]
            with open(tmp_path / f"{name}-{kind}.jsonl", "w", encoding="utf-8") as f:
                dump(iter(events), f, sealed=True)
            want[f"{name}-{kind}"] = {
                "bare": None, "short": ("match.not_over", seq),
                "totals": ("score.mismatch", seq), "winner": ("match.wrong_winner", seq),
            }[kind]
    out = cli("audit", "-f", "json", "-j", "1", str(tmp_path))
    assert out.returncode == 1, out.stderr
    got = {Path(log["path"]).stem: log for log in json.loads(out.stdout)}
    assert set(got) == set(want)
    for stem, expect in want.items():
        findings = [(f["rule"], f["seq"]) for f in got[stem]["findings"]]
        if expect is None:
            assert got[stem]["ok"] and findings == [], (stem, findings)
        else:
            assert findings[:1] == [expect], (stem, findings)
