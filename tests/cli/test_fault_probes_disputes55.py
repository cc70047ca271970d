"""The three disputes the tool exists for, enacted on simulated matches of every preset and
table size as the cheating or mistaken party would write them, and settled by `audit`,
`explain --at SEQ` and `show`:

- "he went out without a canastra": a hand after the match's first in which one seat lays
  its whole hand down with no canastra and goes out (or takes the morto with none where the
  preset needs one), or writes its going out where the morto had to be taken;
- "that score is wrong": one hand's score, the match totals, the winner, or the totals and
  the winner swapped together (the chain recomputed, so only the rules can catch it);
- "the log was edited": an event deleted or two swapped (renumbered, the chain recomputed),
  a hand of another match spliced in, one record changed without the chain.

Each must give one rule at one seq: the audit's first finding, `explain` of that seq and the
reducer's refusal agree, no other finding contradicts it at that seq, and a section that
lists a finding does not call its events legal. The default run settles one small match in
process; the seeded sweep of every preset and the real commands are slow-marked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from buraco_log import audit
from buraco_log.cards import parse_cards
from buraco_log.errors import IllegalMoveError
from buraco_log.events import (
    AnyEvent,
    CardDiscarded,
    HandEnded,
    HandStarted,
    MatchEnded,
    MeldLaid,
    MortoTaken,
    WentOut,
)
from buraco_log.reducer import Replayer
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match
from cli.dispute_cmd import render_verdict
from tests.brokenlogs import tamper, write
from tests.cli.probes import cli_batch
from tests.scenario import Scenario, build_deal

SIZES = {"classic": (2, 3, 4, 6), "biriba": (2, 3, 4), "bossa-nova": (2, 3, 4),
         "thirteen": (2, 4), "thirteen-quick": (2, 4), "burraco": (2, 4), "mega": (2, 4),
         "burako": (2, 4)}
CHEATS = {"go_out.needs_canastra", "morto.needs_canastra", "go_out.morto_first"}
R = msgspec.structs.replace

Expect = tuple[str, int]


def refusal(events: list[AnyEvent]) -> Expect | None:
    """The rule and seq the reducer refuses first, or None."""
    rep = Replayer()
    for e in events:
        try:
            rep.step(e)
        except IllegalMoveError as x:
            assert x.seq is not None
            return x.rule, x.seq
    return None


def renumbered(events: list[AnyEvent]) -> list[AnyEvent]:
    return [R(e, seq=i) for i, e in enumerate(events)]


def cheated_hand(events: list[AnyEvent], *, skip_morto: bool, plain: bool) -> list[AnyEvent]:
    """The match's first hand, then a second dealt so that the first seat to play lays its
    whole hand down in sets (no canastra) and empties it by a discard. With ``skip_morto`` it
    writes its going out at once; else it takes the morto (indirectly, as every preset allows),
    and on its next turn lays the morto down and goes out the same way. Events the rules
    refuse are written all the same, as the cheating party would. ``plain``: the match
    published no commitment (a kitchen-table log)."""
    end = next(i for i, e in enumerate(events) if isinstance(e, HandEnded))
    pre = list(events[: end + 1])
    if plain:
        pre = [R(pre[0], commitment=None, player_seeds=())] + [
            R(e, seed=None) if isinstance(e, HandStarted) else e for e in pre[1:]]
    first = pre[1]
    assert isinstance(first, HandStarted)
    rules = PRESETS[pre[0].rules.name]  # type: ignore[attr-defined]
    players = len(first.hands)
    dealer = (first.dealer + 1) % players
    seat = (dealer + 1) % players
    if rules.hand_size == 13:
        hand, sets = ("7h 7s 7d 7c 8h 8s 8d 9h 9s 9d Th Ts Td",
                      ("7h 7s 7d 7c", "8h 8s 8d", "9h 9s 9d", "Th Ts Td"))
    else:
        hand, sets = "7h 7s 7d 7c 8h 8s 8d 8c 9h 9s 9d", ("7h 7s 7d 7c", "8h 8s 8d 8c", "9h 9s 9d")
    s = Scenario.__new__(Scenario)  # the scenario's moves, on top of the simulated hand
    s.rules, s.players, s.events, s.rep = rules, players, list(pre), Replayer()
    for e in pre:
        s.rep.step(e)
    mortos = {s.state.side_of(seat): "Jh Js Jd Jc Qh Qs Qd Qc Kh Ks Kd"} if rules.morto else {}
    s.push(R(build_deal(rules, players, {seat: hand}, "5h", mortos, None, hand_no=1,
                        dealer=dealer), seq=s.rep.seq + 1))
    s.draw()
    raw: list[AnyEvent] = []

    def play(make: type, *args: object) -> None:
        ev = make(*args, seq=len(s.events) + len(raw))
        if not raw:
            try:
                s.push(ev)
                return
            except IllegalMoveError:
                pass
        raw.append(ev)

    def lay_down(cards: tuple[str, ...], last: int) -> None:
        for m in cards:
            play(MeldLaid, seat, parse_cards(m), None)
        play(CardDiscarded, seat, last)

    lay_down(sets, parse_cards("5h")[0])
    if rules.morto and not skip_morto:
        play(MortoTaken, seat, False)
        if not raw:
            while s.turn != seat:
                s.pass_turn()
            s.draw()
            drawn = s.rep._t.drawn
            assert drawn is not None
            lay_down(("Jh Js Jd Jc", "Qh Qs Qd Qc", "Kh Ks Kd"), drawn)
    if not raw or not isinstance(raw[-1], MortoTaken):
        play(WentOut, seat)
    play(HandEnded, "went_out", (0,) * rules.sides(players))
    return s.events + raw


def disputes(preset: str, players: int, seed: str) -> Iterator[tuple[str, list[AnyEvent],
                                                                      Expect | None]]:
    """(name, events, the rule and seq that settle it) for each dispute of one match."""
    rules = PRESETS[preset]
    ev = simulate_match(rules, players, seed=seed)
    if rules.go_out_needs_canastra or rules.morto:
        variants = [(False, True), (False, False)] if rules.go_out_needs_canastra else []
        variants += [(True, True)] if rules.morto else []
        for skip, plain in variants:
            bad = cheated_hand(ev, skip_morto=skip, plain=plain)
            got = refusal(bad)
            assert got is not None and got[0] in CHEATS, got
            yield f"cheat-{'nomorto' if skip else 'nocanastra'}-{plain}", bad, got
    ends = [i for i, e in enumerate(ev) if isinstance(e, HandEnded) and e.scores]
    for k, delta in ((0, 100), (len(ends) - 1, -5)):
        e = ev[ends[k]]
        assert isinstance(e, HandEnded) and e.scores is not None
        scores = list(e.scores)
        scores[k % len(scores)] += delta
        yield f"score{k}", [*ev[:ends[k]], R(e, scores=tuple(scores)),
                            *ev[ends[k] + 1:]], ("score.mismatch", e.seq)
    me = ev[-1]
    assert isinstance(me, MatchEnded) and me.totals is not None and me.winner is not None
    loser = (me.winner + 1) % len(me.totals)
    totals = list(me.totals)
    totals[loser] += 100
    yield "totals", [*ev[:-1], R(me, totals=tuple(totals))], ("score.mismatch", me.seq)
    yield "winner", [*ev[:-1], R(me, winner=loser)], ("match.wrong_winner", me.seq)
    swapped = list(me.totals)
    swapped[me.winner], swapped[loser] = me.totals[loser], me.totals[me.winner]
    # the totals and the winner edited together: the totals come first (RULES.md §9, §10)
    yield "swapped", [*ev[:-1], R(me, totals=tuple(swapped), winner=loser)], \
        ("score.mismatch", me.seq)
    mid = len(ev) // 2
    for name, bad in (("deleted", renumbered(ev[:mid] + ev[mid + 1:])),
                      ("swapped-events",
                       renumbered([*ev[:mid], ev[mid + 1], ev[mid], *ev[mid + 2:]]))):
        yield name, bad, refusal(bad)  # None: the two events commute, nothing to find
    other = simulate_match(rules, players, seed=seed + "-other")
    deals = [i for i, e in enumerate(ev) if isinstance(e, HandStarted)]
    theirs = [i for i, e in enumerate(other) if isinstance(e, HandStarted)]
    if len(deals) > 2 and len(theirs) > 2:
        at, upto, oat, oupto = deals[1], deals[2], theirs[1], theirs[2]
        start = ev[at]
        assert isinstance(start, HandStarted)
        spliced = renumbered([*ev[:at], R(other[oat], hand=start.hand, dealer=start.dealer),
                              *other[oat + 1:oupto], *ev[upto:]])
        yield "spliced", spliced, ("deal.mismatch", start.seq)


def settle(path: Path, expect: Expect | None) -> None:
    """The audit, `explain` and `show` of one disputed log name ``expect`` alike."""
    v = audit.audit_log(path)
    found = [(f.rule, f.seq) for f in v.findings]
    if expect is None:
        assert v.ok and not found, found
        return
    rule, seq = expect
    assert found[:1] == [expect], (path.name, found)
    # nothing else said of that seq under another rule: one event, one verdict
    assert all(r == rule for r, s in found if s == seq), (path.name, found)
    text = list(render_verdict(v))
    legal_line = next(line for line in text if line.startswith("  legality"))
    if any(f.section == "legality" for f in v.findings):
        assert " legal;" not in legal_line, (path.name, legal_line, found)
        assert v.legality.first_illegal is not None
    why = audit.explain(path, seq)
    if rule.startswith("deal."):
        assert why.legal and [(f.rule, f.seq) for f in why.findings][:1] == [expect]
    else:
        assert (why.legal, why.rule, why.seq) == (False, rule, seq), (path.name, why.rule)
    if rule == "score.mismatch":
        shown = audit.show_log(path)
        assert [(m.rule, m.seq) for m in shown.score_mismatches][:1] == [expect]


def test_one_small_match_settles_every_dispute(tmp_path: Path) -> None:
    """thirteen-quick at two: every dispute, in process."""
    for name, events, expect in disputes("thirteen-quick", 2, "d55"):
        settle(write(tmp_path / f"{name}.blog", events), expect)


def test_totals_and_winner_swapped_is_one_scoring_finding_naming_the_winner(
        tmp_path: Path) -> None:
    """Recorded totals swapped and the winner with them: the audit says what `explain` and
    `show` say, `score.mismatch` at the match end, the wrong winner in the same line; not a
    legality finding under a line calling every event legal."""
    ev = simulate_match(PRESETS["thirteen-quick"], 2, seed="d55")
    me = ev[-1]
    assert isinstance(me, MatchEnded) and me.totals is not None and me.winner is not None
    loser = 1 - me.winner
    p = write(tmp_path / "swapped.blog",
              [*ev[:-1], R(me, totals=me.totals[::-1], winner=loser)])
    v = audit.audit_log(p)
    assert [(f.section, f.rule, f.seq) for f in v.findings] == [
        ("scoring", "score.mismatch", me.seq)]
    assert (f"the recorded winner, side {loser}, is wrong too: side {me.winner} won"
            in v.findings[0].message)


@pytest.mark.slow
@pytest.mark.parametrize("preset", sorted(SIZES))
def test_every_preset_and_table_size_settles_every_dispute(preset: str, tmp_path: Path) -> None:
    for players in SIZES[preset]:
        for seed in ("d55", "e55"):
            for name, events, expect in disputes(preset, players, seed):
                settle(write(tmp_path / f"{players}-{seed}-{name}.blog", events), expect)


@pytest.mark.slow
def test_the_real_commands_name_the_rule_at_the_seq(tmp_path: Path) -> None:
    """`audit` (text and JSON), `explain --at SEQ` and `show` as processes, and a record
    changed without its chain: `audit` and `verify` name `log.chain`, exit 1."""
    cases = {name: (write(tmp_path / f"{name}.blog", events), expect)
             for name, events, expect in disputes("burako", 2, "d55")
             if name in ("cheat-nocanastra-True", "swapped", "winner")}
    chained = write(tmp_path / "chained.blog", simulate_match(PRESETS["burako"], 2, seed="d55"),
                    segment=50)
    tamper(chained, 3)
    runs: list[list[object]] = []
    for path, expect in cases.values():
        assert expect is not None
        runs += [["audit", path], ["audit", "-f", "json", path],
                 ["explain", path, "--at", expect[1]], ["show", path]]
    runs += [["audit", chained], ["verify", chained]]
    done = cli_batch(runs)
    for i, (_, expect) in enumerate(cases.values()):
        assert expect is not None
        rule, seq = expect
        text, js, why, shown = done[4 * i: 4 * i + 4]
        assert text.returncode == 1 and js.returncode == 1, (text.stderr, js.stderr)
        first = next(line for line in text.stdout.splitlines() if f"[{rule}]" in line)
        assert f"seq {seq} [{rule}]" in first, text.stdout
        assert [(f["rule"], f["seq"]) for f in json.loads(js.stdout)["findings"]][:1] == [
            (rule, seq)]
        assert why.returncode == 0 and f"ILLEGAL [{rule}]" in why.stdout, why.stdout
        if rule == "score.mismatch":
            assert shown.returncode == 1 and f"seq {seq}:" in shown.stderr
            assert shown.stderr.count("\n") == 1 and f"[{rule}]" in shown.stderr
    for out in done[-2:]:
        assert out.returncode == 1 and "Traceback" not in out.stderr
        assert "[log.chain]" in out.stdout + out.stderr, (out.stdout, out.stderr)
