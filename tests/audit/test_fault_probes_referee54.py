"""A referee's three questions checked against the engine, event by event: `explain --at N`
("why was this legal or not"), `moves --at N` ("what else could they have done") and the
JSON of both.

Differential: simulated matches of every preset and table size, and the same logs with one
move changed to a near miss (a card not held, a meld one card short, another seat, the stock's
second card, a pile count off by one, a hand end for the other reason, a wrong score, events
dropped, repeated or swapped). For each:

- `explain` of a refused event names the rule and the seq the reducer refused it with; of an
  accepted event it says legal;
- `moves` after a seq lists exactly `legal_moves` (each one accepted by the reducer), the move
  actually played among them, and a near miss listed if and only if the reducer accepts it;
  the pile answer agrees with whether taking the pile is listed;
- the text of both says what their JSON says.

The default run checks one stored match in process (well under a second); the seeded loops
and the real processes are slow-marked."""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import msgspec
import pytest

from buraco_log import audit
from buraco_log.errors import IllegalMoveError
from buraco_log.events import (
    AnyEvent,
    CardDiscarded,
    CardDrawn,
    CardsLaidOff,
    FirstDrawRejected,
    HandEnded,
    MatchEnded,
    MeldLaid,
    MortoTaken,
    OpeningRetracted,
    PileTaken,
    WentOut,
)
from buraco_log.jsonl import event_to_json
from buraco_log.moves import legal_moves, pile_options
from buraco_log.options import moves_at
from buraco_log.reducer import Replayer, validate
from buraco_log.rules import PRESETS, derive
from buraco_log.simulate import simulate_match, write_match
from buraco_log.state import State
from buraco_log.timeline import Timeline
from cli.dispute_cmd import render_explanation
from cli.moves_cmd import render_moves
from tests.cli.probes import ROOT, cli_batch

SIZES = {"classic": (2, 3, 4, 6), "biriba": (2, 3, 4), "bossa-nova": (2, 3, 4),
         "burako": (2, 4), "burraco": (2, 4), "mega": (2, 4), "thirteen": (2, 4),
         "thirteen-quick": (2, 4)}
TABLES = [(name, n) for name, sizes in SIZES.items() for n in sizes]
CHOICES = (CardDrawn, PileTaken, MeldLaid, CardsLaidOff, CardDiscarded, MortoTaken, WentOut,
           FirstDrawRejected, OpeningRetracted, HandEnded, MatchEnded)
"""The events a player (or the table, at a hand's or the match's end) chooses."""
RARE = (PileTaken, MortoTaken, WentOut, FirstDrawRejected, OpeningRetracted, HandEnded,
        MatchEnded)
STORED = ROOT / "examples" / "sim" / "thirteen-quick-4p-000000.blog"
R = msgspec.structs.replace


def _refusal(events: Sequence[AnyEvent]) -> tuple[str, int] | None:
    """The rule and seq the reducer refuses the first illegal event with, as a replay reads a
    log (a card code that is no card is ``event.invalid``)."""
    rep = Replayer()
    for ev in events:
        try:
            rep.step(ev)
        except IllegalMoveError as exc:
            return exc.rule, ev.seq
        except (IndexError, KeyError, TypeError, ValueError):
            return "event.invalid", ev.seq
    return None


def _key(ev: AnyEvent) -> AnyEvent:
    """An event as a move: its cards as a multiset (a meld is listed once, in card order), no
    time or note, no seed revealed at the match's end."""
    ev = R(ev, at=None, note=None)
    if isinstance(ev, MeldLaid | CardsLaidOff | OpeningRetracted):
        ev = R(ev, cards=tuple(sorted(ev.cards)))
    if isinstance(ev, MatchEnded):
        ev = R(ev, server_seed=None)
    return ev


def _near_misses(ev: AnyEvent, s: State, rng: random.Random) -> Iterator[AnyEvent]:
    """Moves a hair from ``ev``, the event played after ``s``: some legal, most not."""
    seats = len(s.players)
    hand = list(s.hands[s.turn]) if s.players and s.phase in ("draw", "play", "emptied") else []
    if isinstance(ev, CardDiscarded):
        yield R(ev, card=rng.choice([c for c in range(108) if c not in hand]))
        if len(set(hand)) > 1:
            yield R(ev, card=rng.choice(sorted(set(hand) - {ev.card})))
        yield R(ev, seat=(ev.seat + 1) % seats)
    elif isinstance(ev, MeldLaid):
        yield R(ev, cards=ev.cards[:-1])
        yield R(ev, meld=(ev.meld or 0) + 1)
        rest = [c for c in hand if c not in ev.cards]
        if rest:
            yield R(ev, cards=(*ev.cards[:-1], rng.choice(rest)))
    elif isinstance(ev, CardsLaidOff):
        yield R(ev, meld=ev.meld + 1)
        rest = [c for c in hand if c not in ev.cards]
        if rest:
            yield R(ev, cards=(*ev.cards, rng.choice(rest)))
    elif isinstance(ev, CardDrawn) and len(s.stock) > 1:
        yield R(ev, card=s.stock[-2])
    elif isinstance(ev, PileTaken):
        yield R(ev, count=ev.count + 1)
    elif isinstance(ev, MortoTaken):
        yield R(ev, direct=not ev.direct)
    elif isinstance(ev, WentOut | FirstDrawRejected):
        yield R(ev, seat=(ev.seat + 1) % seats)
    elif isinstance(ev, OpeningRetracted):
        yield R(ev, cards=ev.cards[:-1])
    elif isinstance(ev, HandEnded):
        yield R(ev, reason="went_out" if ev.reason == "stock_out" else "stock_out")
        yield R(ev, scores=tuple(x + 10 for x in ev.scores or (0,)))
    elif isinstance(ev, MatchEnded):
        yield R(ev, winner=0 if ev.winner != 0 else 1)
        yield R(ev, totals=tuple(x + 5 for x in ev.totals or (0,)))
    # another kind of move in the same spot
    if hand and not isinstance(ev, CardDiscarded):
        yield CardDiscarded(s.turn, rng.choice(hand), seq=ev.seq)
    if s.stock and not isinstance(ev, CardDrawn):
        yield CardDrawn(s.turn, s.stock[-1], seq=ev.seq)
    if s.players and not isinstance(ev, WentOut | HandEnded | MatchEnded):
        yield WentOut(s.turn, seq=ev.seq)


def _states(events: Sequence[AnyEvent]) -> list[State]:
    """The state before each event."""
    rep = Replayer()
    out = []
    for ev in events:
        out.append(rep.state())
        rep.step(ev)
    return out


def _moves_disagree(i: int, events: Sequence[AnyEvent], s: State) -> Iterator[str]:
    """(b) and (c) of `moves` after the event before ``events[i]``."""
    ev = events[i]
    moves = legal_moves(s)
    keys = [_key(m) for m in moves]
    if _key(ev) not in keys:
        yield f"seq {ev.seq}: the move played, {ev!r}, is not among the {len(moves)} listed"
    for m in moves:
        try:
            validate(s, m)
        except IllegalMoveError as exc:
            yield f"seq {ev.seq}: listed {m!r} is refused [{exc.rule}]"
    got = moves_at(s)
    listed = [mv.event for g in got.groups for mv in g.moves]
    if got.count != len(moves) or sorted(map(_dumps, listed)) != sorted(
            _dumps(event_to_json(m)) for m in moves):
        yield f"seq {ev.seq}: `moves` lists {got.count}, the engine {len(moves)}"
    if s.phase == "draw":
        may = any(isinstance(m, PileTaken) for m in moves)
        if got.pile is None or got.pile.may_take != may or pile_options(s).may_take != may:
            yield f"seq {ev.seq}: the pile answer {got.pile} disagrees: PileTaken listed: {may}"
    text = list(render_moves(got))
    if f"{got.count} legal move(s)" not in text[0]:
        yield f"seq {ev.seq}: the text says {text[0]!r} of {got.count} moves"
    shown = [line[2:] for line in text if line.startswith("  ") and not line.startswith("  - ")]
    if shown != [mv.text for g in got.groups for mv in g.moves]:
        yield f"seq {ev.seq}: the text lists other moves than the JSON"


def _dumps(value: object) -> str:
    return json.dumps(value, sort_keys=True)


def _explain_disagrees(events: Sequence[AnyEvent], seq: int,
                       want: tuple[str, int] | None) -> Iterator[str]:
    """(a) and (c) of `explain --at seq`; ``want``: the reducer's refusal, None if accepted."""
    got = audit.explain_event(events, seq)
    rule, at = want if want is not None else (None, seq)
    if got.seq != at or got.rule != rule or got.legal != (rule is None):
        yield (f"seq {seq}: explain says seq {got.seq} [{got.rule}], the reducer seq {at} "
               f"[{rule}]")
    text = list(render_explanation(got))
    said = "LEGAL: every rule for this event is met at this point" if got.legal else \
        f"ILLEGAL [{got.rule}]"
    if said not in text:
        yield f"seq {seq}: the text does not say {said!r}"
    as_json = json.loads(msgspec.json.encode(got))
    if (as_json["seq"], as_json["rule"], as_json["legal"]) != (got.seq, got.rule, got.legal):
        yield f"seq {seq}: the JSON says {as_json['seq']} [{as_json['rule']}]"


def disagreements(events: list[AnyEvent], picks: Sequence[int], rng: random.Random
                  ) -> list[str]:
    """Every disagreement at the events ``picks`` (indexes) and their near misses."""
    states = _states(events)
    timeline = Timeline(events)  # the tables `moves` and `explain` read, from its snapshots
    found: list[str] = []
    for i in picks:
        ev, s = events[i], states[i]
        if timeline.state_at(ev.seq - 1) != s:
            found.append(f"seq {ev.seq}: the timeline's table before it is not the replay's")
        found += _moves_disagree(i, events, s)
        found += _explain_disagrees(events, ev.seq, None)
        keys = [_key(m) for m in legal_moves(s)]
        for miss in _near_misses(ev, s, rng):
            changed = [*events[:i], miss]
            want = _refusal(changed)
            found += (f"{miss!r}: {x}" for x in _explain_disagrees(changed, miss.seq, want))
            if (_key(miss) in keys) != (want is None):
                found.append(f"{miss!r}: listed {_key(miss) in keys}, refused {want}")
    return found


def _reordered(events: list[AnyEvent], i: int) -> Iterator[list[AnyEvent]]:
    """The log with event ``i`` dropped, repeated, swapped with the next (seqs and all), and
    swapped with it but numbered in order."""
    a, b = events[i], events[i + 1]
    yield events[:i] + events[i + 1:]
    yield [*events[:i + 1], a, *events[i + 1:]]
    yield [*events[:i], b, a, *events[i + 2:]]
    yield [*events[:i], R(b, seq=a.seq), R(a, seq=b.seq), *events[i + 2:]]


def order_disagreements(events: list[AnyEvent], picks: Sequence[int]) -> list[str]:
    found: list[str] = []
    for i in picks:
        for changed in _reordered(events, i):
            want = _refusal(changed)
            if want is not None:
                found += _explain_disagrees(changed, want[1], want)
    return found


def _choices(events: Sequence[AnyEvent], kinds: tuple[type, ...] = CHOICES) -> list[int]:
    return [i for i, ev in enumerate(events) if isinstance(ev, kinds)]


def test_a_stored_match_and_its_near_misses_agree_with_the_engine() -> None:
    """The default twin: ten moves of a stored 4-player match, each with its near misses."""
    events = list(audit.load(STORED))
    rng = random.Random(54)
    picks = rng.sample(_choices(events), 8) + _choices(events, (PileTaken, MatchEnded))[:2]
    assert disagreements(events, picks, rng) == []


def test_a_stored_match_reordered_is_explained_at_the_reducers_refusal() -> None:
    events = list(audit.load(STORED))
    assert order_disagreements(events, [1, 40, 90, len(events) - 2]) == []


def test_the_checks_catch_an_explanation_and_a_list_that_disagree(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The differential fails when one side is wrong: an `explain` that names another rule,
    a `moves` that leaves out the move played."""
    events = list(audit.load(STORED))
    i = _choices(events, (CardDiscarded,))[3]
    discard = events[i]
    assert isinstance(discard, CardDiscarded)
    real = audit.explain_event

    def other_rule(evs: Sequence[AnyEvent], seq: int, path: str = "") -> audit.Explanation:
        got = real(evs, seq, path=path)
        return got if got.legal else R(got, rule="no.such_rule")

    monkeypatch.setattr(audit, "explain_event", other_rule)
    miss = R(discard, seat=(discard.seat + 1) % 4)
    assert any("explain says" in x for x in _explain_disagrees(
        [*events[:i], miss], miss.seq, _refusal([*events[:i], miss])))
    monkeypatch.undo()
    engine: Callable[[State], list[AnyEvent]] = legal_moves
    monkeypatch.setattr(sys.modules[__name__], "legal_moves",
                        lambda s: [m for m in engine(s) if _key(m) != _key(events[i])])
    assert any("is not among" in x for x in _moves_disagree(i, events, _states(events)[i]))


@pytest.mark.slow
@pytest.mark.parametrize(("preset", "players"), TABLES)
def test_simulated_matches_and_near_misses_agree_with_the_engine(preset: str, players: int
                                                                 ) -> None:
    for seed in range(3):
        events = simulate_match(PRESETS[preset], players, seed=f"referee-{seed}")
        rng = random.Random(f"{preset}/{players}/{seed}")
        choices = _choices(events)
        rare = _choices(events, RARE)
        picks = sorted(set(rng.sample(choices, min(60, len(choices)))
                           + rng.sample(rare, min(30, len(rare)))))
        assert disagreements(events, picks, rng) == [], (preset, players, seed)
        order = rng.sample(range(1, len(events) - 1), 12)
        assert order_disagreements(events, order) == [], (preset, players, seed)


@pytest.mark.slow
@pytest.mark.parametrize(("preset", "players", "house"), [
    ("classic", 4, {"vulnerable_at": 0}),  # an opening taken back in this match
    ("classic", 2, {"vulnerable_at": 0}),  # first cards rejected
    ("mega", 4, {"vulnerable_at": 0, "first_turn_redraw": True}),
])
def test_house_rules_of_openings_and_first_draws_agree_with_the_engine(
        preset: str, players: int, house: dict[str, object]) -> None:
    events = simulate_match(derive(preset, name="house", **house), players, seed="house54")
    rng = random.Random(preset)
    choices = _choices(events)
    rare = _choices(events, RARE)
    scarce = _choices(events, (OpeningRetracted, FirstDrawRejected))
    assert scarce or preset == "mega"  # the events these rules add, each one checked
    picks = sorted(set(rng.sample(choices, 40) + rng.sample(rare, min(30, len(rare)))
                       + scarce))
    assert disagreements(events, picks, rng) == []


@pytest.mark.slow
def test_explain_and_moves_in_real_processes_say_in_text_what_their_json_says(
        tmp_path: Path) -> None:
    """One changed log per preset: `explain` of the refused seq and of an earlier accepted
    one, `moves` before each, text and JSON, against the engine."""
    runs: list[list[object]] = []
    cases = []
    for preset in SIZES:
        events = simulate_match(PRESETS[preset], 2, seed="referee-cli")
        states = _states(events)
        rng = random.Random(preset)
        while True:
            i = rng.choice(_choices(events)[10:])
            misses = [m for m in _near_misses(events[i], states[i], rng)
                      if (r := _refusal([*events[:i], m])) is not None and r[1] == m.seq]
            if misses:
                break
        miss = misses[0]
        refused = _refusal([*events[:i], miss])
        assert refused is not None
        log = tmp_path / f"{preset}.blog"
        write_match(log, [*events[:i], miss, *events[i + 1:]])
        j = rng.choice(_choices(events)[:i])
        for seq in (miss.seq, events[j].seq):
            for fmt in ("table", "json"):
                runs.append(["explain", log, "--at", seq, "-f", fmt])
                runs.append(["moves", log, "--at", seq - 1, "-f", fmt])
        cases.append((refused[0], miss.seq, legal_moves(states[i]), events[j],
                      legal_moves(states[j])))
    done = iter(cli_batch(runs, timeout=300))
    for rule, seq, moves_i, played, moves_j in cases:
        for want, at, moves in ((rule, seq, moves_i), (None, played.seq, moves_j)):
            et, mt, ej, mj = next(done), next(done), next(done), next(done)
            assert (et.returncode, mt.returncode, ej.returncode, mj.returncode) == (0,) * 4, (
                et.stderr, mt.stderr)
            said = f"ILLEGAL [{want}]" if want else "LEGAL: every rule for this event is met"
            assert said in et.stdout.splitlines()[1], et.stdout
            got = json.loads(ej.stdout)
            assert (got["seq"], got["rule"], got["legal"]) == (at, want, want is None)
            listed = json.loads(mj.stdout)
            events_listed = [mv["event"] for g in listed["groups"] for mv in g["moves"]]
            assert sorted(map(_dumps, events_listed)) == sorted(
                _dumps(event_to_json(m)) for m in moves)
            count = re.search(r"; (\d+) legal move\(s\)", mt.stdout)
            assert count is not None and int(count.group(1)) == listed["count"] == len(moves)
            texts = [line[2:] for line in mt.stdout.splitlines()
                     if line.startswith("  ") and not line.startswith("  - ")]
            assert texts == [mv["text"] for g in listed["groups"] for mv in g["moves"]]
            if want is None:
                assert _key(played) in [_key(m) for m in moves]



ILLEGAL = ROOT / "examples" / "disputes" / "illegal.log"  # seq 23: a card not held discarded


@pytest.mark.slow
def test_moves_at_or_past_the_illegal_event_names_the_seq_that_lists_its_alternatives(
) -> None:
    """`moves --at 23` of the refused seq 23 said only that the table is known up to seq 22;
    `explain` names the command that answers instead, and so now does `moves`: the
    alternatives to the refused move are after seq 22. Real processes (about 3 s)."""
    at23, at30, at30_json, at22 = cli_batch([
        ["moves", ILLEGAL, "--at", 23], ["moves", ILLEGAL, "--at", 30],
        ["moves", ILLEGAL, "--at", 30, "-f", "json"], ["moves", ILLEGAL, "--at", 22, "-f", "json"]])
    hint = ("`moves --at 22` lists what could have been played in place of seq 23 "
            "[discard.card_not_in_hand]")
    for done in (at23, at30):
        assert done.returncode == 1 and done.stdout == ""
        assert done.stderr.count("\n") == 1 and done.stderr.endswith(hint + "\n"), done.stderr
    assert json.loads(at30_json.stdout)["error"]["message"].endswith(hint)
    events = list(audit.load(ILLEGAL))
    assert _refusal(events) == ("discard.card_not_in_hand", 23)
    # what it points to answers: the table's moves, the refused discard not among them
    rep = Replayer()
    rep.run(events[:23])
    moves = legal_moves(rep.state())
    got = json.loads(at22.stdout)
    assert at22.returncode == 0 and got["count"] == len(moves) > 0
    assert _key(events[23]) not in [_key(m) for m in moves]


def test_moves_json_writes_cards_as_the_log_does_when_the_text_has_symbols(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`moves -f json --cards symbols` wrote "take the whole pile (7 cards, top 3♠)" and the
    pile's top "3♠" beside the same move's event holding "3s": its JSON told another card
    text than the events in it, than `explain`'s JSON and than the log. Now the symbols are
    the text's alone, as the other commands have them."""
    from cli.common import Cards, Format
    from cli.moves_cmd import moves

    monkeypatch.setenv("LANG", "C.UTF-8")
    for name in ("LC_ALL", "LC_CTYPE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    log = ROOT / "examples" / "sim" / "classic-2p-000000.blog"
    moves(log, at=30, format=Format.json, ignore_integrity=False, cards=Cards.symbols)
    got = json.loads(capsys.readouterr().out)
    events = list(audit.load(log))
    rep = Replayer()
    rep.run(events[:31])
    want = moves_at(rep.state())
    assert got == json.loads(msgspec.json.encode(want))  # letters: 3s, not 3♠
    assert got["pile"]["top"] == want.pile.top == "3s"  # type: ignore[union-attr]
    moves(log, at=30, format=Format.table, ignore_integrity=False, cards=Cards.symbols)
    text = capsys.readouterr().out
    assert "top 3♠" in text and "top 3s" not in text  # the text still has its symbols
