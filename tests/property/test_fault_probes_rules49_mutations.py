"""Legal logs with one event changed, as a cheater or a careless scorer would change it.

The logs: the simulated matches of every preset and seat count (``examples/sim``), the golden
JSON Lines logs (``examples/golden``), the legal referee goldens (``tests/golden``) and, in the
slow run, random matches of every preset and seat count. Each mutation class
changes ONE event (or, for the order class, swaps two), and the engine must refuse the log at
that event's seq with the rule a referee expects. The expected rule of each class is written
here from RULES.md (and docs/rules.md where it settles which rule comes first), never read
back from the engine's answer.

The default run checks a few mutations of each class in each log, from the state just before
the changed event; the slow run checks up to 60 of each class in each log, replaying each
mutated log whole from its first event, over random matches too.
"""

from __future__ import annotations

import glob
import random
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec
import pytest

from buraco_log.cards import RANK, SUIT, deck
from buraco_log.errors import IllegalMoveError
from buraco_log.events import (
    AnyEvent,
    CardDiscarded,
    CardDrawn,
    CardsLaidOff,
    FirstDrawRejected,
    HandEnded,
    MatchEnded,
    MatchStarted,
    MeldLaid,
    MortoTaken,
    OpeningRetracted,
    PileTaken,
    WentOut,
)
from buraco_log.jsonl import read_jsonl
from buraco_log.log import read_events
from buraco_log.reducer import Replayer
from buraco_log.rules import PRESETS, Rules, derive
from buraco_log.state import State
from tests.play import random_match

ROOT = Path(__file__).resolve().parents[2]
MOVES = (
    CardDrawn,
    FirstDrawRejected,
    PileTaken,
    MeldLaid,
    CardsLaidOff,
    OpeningRetracted,
    CardDiscarded,
    MortoTaken,
    WentOut,
)


@dataclass(frozen=True)
class Log:
    name: str
    events: tuple[AnyEvent, ...]
    before: tuple[State, ...]  # before[i]: the state just before events[i]

    @property
    def rules(self) -> Rules:
        start = self.events[0]
        assert isinstance(start, MatchStarted)
        return start.rules


def _load(name: str, events: Sequence[AnyEvent]) -> Log:
    rep = Replayer()
    before = []
    for ev in events:
        before.append(rep.state())
        rep.step(ev)  # every source log is legal as it stands
    return Log(name, tuple(events), tuple(before))


def _sources(randoms: int) -> list[Log]:
    logs = [
        _load(Path(p).stem, read_events(p))
        for p in sorted(glob.glob(str(ROOT / "examples/sim/*.blog")))
    ]
    logs += [
        _load(f"golden-{Path(p).stem}", read_jsonl(p))
        for p in sorted(glob.glob(str(ROOT / "examples/golden/*.jsonl")))
    ]
    logs += [
        _load(f"golden-{name}", read_events(ROOT / "tests/golden" / f"{name}.log"))
        for name in ("burako", "fair-thirteen")
    ]  # the referee goldens that are legal
    for name, rules in sorted(PRESETS.items()):
        for players in rules.player_counts:
            for seed in range(randoms):
                evs = random_match(name, players, seed, max_hands=2, eager=True)
                logs.append(_load(f"random-{name}-{players}p-{seed}", evs))
    return logs


_CACHE: dict[int, list[Log]] = {}


def sources(randoms: int) -> list[Log]:
    if randoms not in _CACHE:
        _CACHE[randoms] = _sources(randoms)
    return _CACHE[randoms]


# --------------------------------------------------------------- judging a mutated log
Refusal = tuple[int, str] | None


def refusal_from(log: Log, at: int, events: Sequence[AnyEvent], whole: bool) -> Refusal:
    """The first refusal (seq, rule) of ``events`` (the log with position ``at`` onwards
    changed), replayed whole or from the state before position ``at``."""
    if whole:
        rep, tail = Replayer(), events
    else:
        rep, tail = Replayer(log.before[at]), events[at : at + 3]
    try:
        for ev in tail:
            rep.step(ev)
    except IllegalMoveError as exc:
        assert exc.seq is not None
        return exc.seq, exc.rule
    return None


@dataclass(frozen=True)
class Mutation:
    at: int  # position of the first changed event
    build: Callable[[], tuple[AnyEvent, ...]]  # the mutated log, made only when checked
    expect: Refusal  # None: the change is legal, and the log is refused nowhere at ``at``
    what: str
    header: bool = False  # the rules header is what changed

    @property
    def events(self) -> tuple[AnyEvent, ...]:
        return self.build()


def _with(events: Sequence[AnyEvent], at: int, new: AnyEvent) -> tuple[AnyEvent, ...]:
    return (*events[:at], new, *events[at + 1 :])


def _one(log: Log, at: int, new: AnyEvent) -> Callable[[], tuple[AnyEvent, ...]]:
    """The log with the event at ``at`` replaced by ``new``, built when called."""
    return lambda: _with(log.events, at, new)


def _fixed(events: tuple[AnyEvent, ...]) -> Callable[[], tuple[AnyEvent, ...]]:
    return lambda: events


def _renumbered(events: Sequence[AnyEvent], start: int) -> tuple[AnyEvent, ...]:
    head = list(events[:start])
    seq = head[-1].seq + 1
    for ev in events[start:]:
        head.append(msgspec.structs.replace(ev, seq=seq))
        seq += 1
    return tuple(head)


def _side(state: State, seat: int) -> int:
    return state.sides[seat]


def _has_canastra(state: State, side: int) -> bool:
    return any(len(m.cards) >= 7 for m in state.melds[side])  # RULES.md §6: 7+ cards


# --------------------------------------------------------------- the mutation classes
def card_not_held(log: Log) -> Iterator[Mutation]:
    """A card of a meld, lay-off or discard swapped for one the player does not hold; a draw
    recorded as another card than the stock's top."""
    material = sorted(set(deck(log.rules.jokers)))
    by_rank: dict[int, list[int]] = {}
    for c in material:
        by_rank.setdefault(RANK[c], []).append(c)
    for i, ev in enumerate(log.events):
        if not isinstance(ev, (MeldLaid, CardsLaidOff, CardDiscarded, CardDrawn)):
            continue
        hand = Counter(log.before[i].hands[ev.seat])
        if isinstance(ev, CardDrawn):
            top = log.before[i].stock[0]
            other = next(c for c in material if c != top)
            yield Mutation(
                i,
                _one(log, i, msgspec.structs.replace(ev, card=other)),
                (ev.seq, "draw.wrong_card"),
                "drawn card is not the stock's top",
            )
            continue
        cards = (ev.card,) if isinstance(ev, CardDiscarded) else ev.cards
        first = cards[0]
        # Same rank, other suit first: a set stays a set, so only the holding is wrong.
        same_rank = [c for c in by_rank[RANK[first]] if SUIT[c] != SUIT[first]]
        for x in (*same_rank, *material):
            new = (x, *cards[1:])
            if Counter(new)[x] > hand[x]:
                break
        else:
            continue
        if isinstance(ev, CardDiscarded):
            yield Mutation(
                i,
                _one(log, i, msgspec.structs.replace(ev, card=x)),
                (ev.seq, "discard.card_not_in_hand"),
                "discard of a card not held",
            )
        else:
            yield Mutation(
                i,
                _one(log, i, msgspec.structs.replace(ev, cards=new)),
                (ev.seq, "meld.cards_not_in_hand"),
                "meld card not held",
            )


def seat_swapped(log: Log) -> Iterator[Mutation]:
    """A move recorded under the next seat, or under the partner's (RULES.md §2/§4: only the
    seat to move moves; partners share melds and morto, never a turn)."""
    for i, ev in enumerate(log.events):
        if isinstance(ev, MOVES):
            n = len(log.before[i].players)
            for step in (1, 2) if n >= 4 else (1,):
                new = msgspec.structs.replace(ev, seat=(ev.seat + step) % n)
                what = "seat swapped" if step == 1 else "partner's seat"
                yield Mutation(i, _one(log, i, new), (ev.seq, "turn.not_your_turn"), what)


def layoff_on_opponents_meld(log: Log) -> Iterator[Mutation]:
    """A lay-off sent to a meld number only the opponents have (RULES.md §4: onto the side's
    own melds, never an opponent's)."""
    for i, ev in enumerate(log.events):
        if not isinstance(ev, CardsLaidOff):
            continue
        st = log.before[i]
        own = len(st.melds[_side(st, ev.seat)])
        if any(len(st.melds[s]) > own for s in range(st.n_sides) if s != _side(st, ev.seat)):
            new = msgspec.structs.replace(ev, meld=own)
            yield Mutation(
                i,
                _one(log, i, new),
                (ev.seq, "layoff.no_such_meld"),
                "lay-off onto an opponents' meld",
            )


def top_thrown_back(log: Log) -> Iterator[Mutation]:
    """The move after a pile pickup becomes the discard of the top card just taken: refused
    under must-use-top (RULES.md §4), legal under a free pile (docs/rules.md: the card just
    taken may be thrown back)."""
    must = log.rules.pile_pickup == "must_use_top"
    for i, ev in enumerate(log.events[:-1]):
        nxt = log.events[i + 1]
        if not isinstance(ev, PileTaken) or getattr(nxt, "seat", None) != ev.seat:
            continue
        new = CardDiscarded(ev.seat, ev.top, seq=nxt.seq)
        if new == nxt:
            continue
        yield Mutation(
            i + 1,
            _one(log, i + 1, new),
            (nxt.seq, "pile.must_use_top") if must else None,
            "pile's top thrown back",
        )


def _relabelled(log: Log, **knobs: object) -> tuple[AnyEvent, ...]:
    start = log.events[0]
    assert isinstance(start, MatchStarted)
    return (msgspec.structs.replace(start, rules=derive(log.rules, **knobs)), *log.events[1:])


def _first_bare_emptying(log: Log, morto_taken: bool) -> int | None:
    """The first move that empties a hand, or lays down all but the card to throw, on a side
    with no canastra on its table after the move: after its morto (``morto_taken``), or
    before. RULES.md §7; docs/rules.md: nobody is left holding a card they may not throw."""
    for i, ev in enumerate(log.events[:-1]):
        if not isinstance(ev, (MeldLaid, CardsLaidOff, CardDiscarded)):
            continue
        st, after = log.before[i], log.before[i + 1]
        side = _side(st, ev.seat)
        if after.phase in ("between", "new") or after.hand != st.hand:
            continue
        if st.rules is not None and st.rules.morto and st.morto_taken[side] != morto_taken:
            continue
        left = len(after.hands[ev.seat])
        if (left == 0 or (left == 1 and not isinstance(ev, CardDiscarded))) and not _has_canastra(
            after, side
        ):
            return i
    return None


def bare_going_out(log: Log) -> Iterator[Mutation]:
    """The log's rules header says a canastra is needed to go out (RULES.md §7,
    ``go_out_needs_canastra``), but a side went out without one."""
    if log.rules.go_out_needs_canastra:
        return
    i = _first_bare_emptying(log, morto_taken=True)
    events = _relabelled(log, go_out_needs_canastra=True)
    expect = None if i is None else (log.events[i].seq, "go_out.needs_canastra")
    yield Mutation(
        i if i is not None else 0, _fixed(events), expect, "went out with no canastra", True
    )


def bare_morto(log: Log) -> Iterator[Mutation]:
    """The header says the morto needs a canastra (``morto_needs_canastra``, bossa-nova), but a
    side took it without one."""
    if not log.rules.morto or log.rules.morto_needs_canastra:
        return
    i = _first_bare_emptying(log, morto_taken=False)
    events = _relabelled(log, morto_needs_canastra=True)
    expect = None if i is None else (log.events[i].seq, "morto.needs_canastra")
    yield Mutation(
        i if i is not None else 0, _fixed(events), expect, "morto with no canastra", True
    )


def morto_twice(log: Log) -> Iterator[Mutation]:
    """A side takes its morto a second time: the going out recorded as a morto taking
    (RULES.md §7: one morto per side; `morto.not_available`), or a second taking recorded
    right after the first (docs/rules.md, which rule first: the hand now holds the morto, so
    it is a move of the wrong phase; after an indirect taking the turn has passed)."""
    if not log.rules.morto:
        return
    for i, ev in enumerate(log.events):
        if isinstance(ev, WentOut):
            direct = not isinstance(log.events[i - 1], CardDiscarded)
            new = MortoTaken(ev.seat, direct, seq=ev.seq)
            yield Mutation(
                i,
                _one(log, i, new),
                (ev.seq, "morto.not_available"),
                "going out recorded as a second morto",
            )
        if isinstance(ev, MortoTaken):
            again = msgspec.structs.replace(ev, seq=ev.seq + 1, count=None)
            rule = "turn.wrong_phase" if ev.direct else "turn.not_your_turn"
            yield Mutation(
                i + 1,
                lambda i=i, again=again: _renumbered(
                    (*log.events[: i + 1], again, *log.events[i + 1 :]), i + 1
                ),
                (ev.seq + 1, rule),
                "morto taken twice in a row",
            )


def score_off_by_one(log: Log) -> Iterator[Mutation]:
    """A recorded hand score, a recorded match total one point off, or the wrong winner
    (RULES.md §9, §10)."""
    for i, ev in enumerate(log.events):
        if isinstance(ev, HandEnded) and ev.scores is not None:
            for side in range(len(ev.scores)):
                for d in (1, -1):
                    scores = tuple(s + d * (k == side) for k, s in enumerate(ev.scores))
                    yield Mutation(
                        i,
                        _one(log, i, msgspec.structs.replace(ev, scores=scores)),
                        (ev.seq, "score.mismatch"),
                        "hand score one point off",
                    )
            if len(set(ev.scores)) > 1:
                swapped = tuple(reversed(ev.scores))
                yield Mutation(
                    i,
                    _one(log, i, msgspec.structs.replace(ev, scores=swapped)),
                    (ev.seq, "score.mismatch"),
                    "scores written for the wrong sides",
                )
        if isinstance(ev, MatchEnded) and ev.totals is not None:
            totals = (ev.totals[0] + 1, *ev.totals[1:])
            yield Mutation(
                i,
                _one(log, i, msgspec.structs.replace(ev, totals=totals)),
                (ev.seq, "score.mismatch"),
                "match total one point off",
            )
            if ev.winner is not None:
                other = (ev.winner + 1) % len(ev.totals)
                yield Mutation(
                    i,
                    _one(log, i, msgspec.structs.replace(ev, winner=other)),
                    (ev.seq, "match.wrong_winner"),
                    "wrong winner",
                )


def _top_unlaid(events: Sequence[AnyEvent], i: int) -> bool:
    """Did the turn of ``events[i]`` take the pile, its top not laid before position ``i``?"""
    seat = getattr(events[i], "seat", None)
    laid: list[int] = []
    for ev in reversed(events[:i]):
        if getattr(ev, "seat", None) != seat:
            return False
        if isinstance(ev, PileTaken):
            return ev.top not in laid
        if isinstance(ev, CardDrawn):
            return False
        if isinstance(ev, (MeldLaid, CardsLaidOff)):
            laid.extend(ev.cards)
    return False


def order_swapped(log: Log) -> Iterator[Mutation]:
    """Two neighbouring events in the other order: records moved with their seqs
    (``seq.out_of_order``), or renumbered so the seqs still follow (the rule of the turn
    that is broken: RULES.md §4 draw, meld, discard)."""
    events = log.events
    must = log.rules.pile_pickup == "must_use_top"
    for i in range(2, len(events) - 1):
        a, b = events[i], events[i + 1]
        if not (isinstance(a, MOVES) and isinstance(b, MOVES)):
            continue

        def kept(i: int = i, a: AnyEvent = a, b: AnyEvent = b) -> tuple[AnyEvent, ...]:
            return (*events[:i], b, a, *events[i + 2 :])

        def swapped(
            i: int = i, kept: Callable[[], tuple[AnyEvent, ...]] = kept
        ) -> tuple[AnyEvent, ...]:
            return _renumbered(kept(), i)

        yield Mutation(i, kept, (b.seq, "seq.out_of_order"), "two records swapped")
        st = log.before[i]
        if (
            isinstance(a, (CardDrawn, PileTaken))
            and isinstance(b, (MeldLaid, CardsLaidOff, CardDiscarded))
            and a.seat == b.seat
        ):
            yield Mutation(i, swapped, (a.seq, "turn.must_draw_first"), "move before the draw")
        elif (
            isinstance(a, CardDiscarded)
            and isinstance(b, (CardDrawn, PileTaken))
            and a.seat != b.seat
        ):
            yield Mutation(i, swapped, (a.seq, "turn.not_your_turn"), "draw before the discard")
        elif (
            isinstance(a, (MeldLaid, CardsLaidOff))
            and isinstance(b, CardDiscarded)
            and a.seat == b.seat
        ):
            side = _side(st, a.seat)
            if st.vulnerable[side] and not st.opened[side]:
                continue  # a vulnerable opening: its own rule (§10), not this class
            if must and _top_unlaid(events, i):
                yield Mutation(
                    i, swapped, (a.seq, "pile.must_use_top"), "discard before laying the pile's top"
                )
            else:
                yield Mutation(i, swapped, (b.seq, "turn.not_your_turn"), "meld after the discard")
        elif (
            isinstance(a, (MeldLaid, CardsLaidOff, CardDiscarded))
            and isinstance(b, (MortoTaken, WentOut))
            and a.seat == b.seat
        ):
            # docs/rules.md, which rule first: taking the morto or going out while the hand
            # still holds cards is a move of the wrong phase of the turn
            yield Mutation(i, swapped, (a.seq, "turn.wrong_phase"), "morto or going out first")


def careless_record(log: Log) -> Iterator[Mutation]:
    """A field of a legal move written wrong: the morto's count or kind (RULES.md §7), part of
    the pile or the wrong top card (§4: the whole pile), a meld's number, the reason a hand
    ended (§7, §8)."""
    for i, ev in enumerate(log.events):
        r: AnyEvent
        if isinstance(ev, MortoTaken):
            r = msgspec.structs.replace(
                ev, count=len(log.before[i].mortos[_side(log.before[i], ev.seat)]) + 1
            )
            yield Mutation(i, _one(log, i, r), (ev.seq, "morto.wrong_count"), "morto count")
            r = msgspec.structs.replace(ev, direct=not ev.direct)
            yield Mutation(i, _one(log, i, r), (ev.seq, "morto.wrong_kind"), "morto kind")
        elif isinstance(ev, PileTaken):
            if ev.count > 1:
                r = msgspec.structs.replace(ev, count=ev.count - 1)
                yield Mutation(i, _one(log, i, r), (ev.seq, "pile.whole_pile"), "part of the pile")
            other = next(c for c in sorted(set(deck(log.rules.jokers))) if c != ev.top)
            r = msgspec.structs.replace(ev, top=other)
            yield Mutation(i, _one(log, i, r), (ev.seq, "pile.wrong_top"), "wrong top")
        elif isinstance(ev, MeldLaid) and ev.meld is not None:
            r = msgspec.structs.replace(ev, meld=ev.meld + 1)
            yield Mutation(i, _one(log, i, r), (ev.seq, "meld.wrong_id"), "meld number")
        elif isinstance(ev, HandEnded):
            other_reason = "stock_out" if ev.reason == "went_out" else "went_out"
            r = msgspec.structs.replace(ev, reason=other_reason)
            yield Mutation(i, _one(log, i, r), (ev.seq, "hand.not_over"), "hand end reason")


CLASSES: dict[str, Callable[[Log], Iterator[Mutation]]] = {
    "card_not_held": card_not_held,
    "careless_record": careless_record,
    "seat_swapped": seat_swapped,
    "layoff_on_opponents_meld": layoff_on_opponents_meld,
    "top_thrown_back": top_thrown_back,
    "bare_going_out": bare_going_out,
    "bare_morto": bare_morto,
    "morto_twice": morto_twice,
    "score_off_by_one": score_off_by_one,
    "order_swapped": order_swapped,
}


def _judge(log: Log, m: Mutation, whole: bool) -> str | None:
    """What is wrong with the engine's answer to ``m`` (None: it answered as expected)."""
    got = refusal_from(log, m.at, m.events, whole or m.header)
    if m.header:  # the rules header changed: the whole log is judged
        if got != m.expect:
            return f"{log.name} {m.what}: expected {m.expect}, got {got}"
        return None
    seq_at = m.events[m.at].seq
    if m.expect is None:
        if got is not None and got[0] <= seq_at:
            return f"{log.name} {m.what} at seq {seq_at}: refused {got}, expected accepted"
        return None
    if got != m.expect:
        return f"{log.name} {m.what}: expected {m.expect}, got {got}"
    return None


def _sample(ms: list[Mutation], k: int) -> list[Mutation]:
    if len(ms) <= k:
        return ms
    step = len(ms) / k
    return [ms[int(j * step)] for j in range(k)]


@pytest.mark.parametrize("cls", sorted(CLASSES))
def test_one_changed_event_is_refused_at_its_seq_with_the_referees_rule(cls: str) -> None:
    wrong, checked = [], 0
    for log in sources(0):
        for m in _sample(list(CLASSES[cls](log)), 2):
            checked += 1
            why = _judge(log, m, whole=False)
            if why:
                wrong.append(why)
    assert checked > 0, f"no {cls} mutation in any source log"
    assert not wrong, "\n".join(wrong[:10])


def test_every_class_meets_every_preset() -> None:
    """The mutations reach every preset (a class silently finding no candidate proves
    nothing)."""
    seen: dict[str, set[str]] = {cls: set() for cls in CLASSES}
    for log in sources(0):
        for cls, make in CLASSES.items():
            if next(make(log), None) is not None:
                seen[cls].add(log.rules.name)
    everywhere = (
        "card_not_held",
        "seat_swapped",
        "score_off_by_one",
        "order_swapped",
        "careless_record",
    )
    for cls in everywhere:
        assert seen[cls] >= set(PRESETS), (cls, set(PRESETS) - seen[cls])
    assert {"thirteen", "thirteen-quick"} <= seen["top_thrown_back"]
    assert {"classic", "biriba"} <= seen["top_thrown_back"]
    assert seen["morto_twice"] >= set(PRESETS) - {"classic"}
    assert seen["layoff_on_opponents_meld"]
    assert {"classic", "biriba"} <= seen["bare_going_out"]


@pytest.mark.slow
@pytest.mark.parametrize("cls", sorted(CLASSES))
def test_every_candidate_mutation_replayed_whole(cls: str) -> None:
    wrong, checked = [], 0
    rng = random.Random(49)
    for log in sources(3):
        ms = list(CLASSES[cls](log))
        if len(ms) > 60:
            ms = rng.sample(ms, 60)
        for m in ms:
            checked += 1
            why = _judge(log, m, whole=True)
            if why:
                wrong.append(why)
    assert checked > 0
    assert not wrong, f"{len(wrong)} of {checked}:\n" + "\n".join(wrong[:15])
