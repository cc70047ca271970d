"""The searching player ``expert``: determinized Monte Carlo over what one seat could see.

Perfect-information Monte Carlo (PIMC): at each decision the expert draws complete tables that
agree with everything its seat has seen (its hand, the melds, the open pile, how many cards
each hand, the stock and each morto hold, and the cards each other player picked up with the
pile and has not shown since), plays every candidate move forward in each of those tables with
the heuristic bot in every seat until the hand ends, and chooses the move with the best mean
hand-score difference (its side's hand score minus the mean of the other sides'). The same
sampled tables serve every candidate (common random numbers), so the difference between two
candidates is measured sample by sample, with a standard error.

Information discipline: :func:`decide` takes an :class:`ExpertView`, a value that holds no
card the seat could not see (the other hands, the stock and the untaken mortos are counts
only); :class:`Tracker` builds the "picked up and not shown since" lists from public facts
only. Two tables the seat cannot tell apart give equal views, so equal decisions for a seed.

Deterministic for a seed and a sample budget; an optional wall-clock cap (``Budget.ms``) trades
that for a bounded time. Core module: stdlib and msgspec only.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
import time
from collections.abc import Iterable, Sequence
from typing import Final

import msgspec

from buraco_log.bots import HeuristicBot, MeldKnowledge
from buraco_log.cards import JOKER, deck
from buraco_log.errors import IllegalMoveError
from buraco_log.events import (
    AnyEvent,
    CardDiscarded,
    CardDrawn,
    CardsLaidOff,
    Event,
    FirstDrawRejected,
    HandEnded,
    HandStarted,
    MatchStarted,
    MeldLaid,
    OpeningRetracted,
    PileTaken,
    tag_of,
)
from buraco_log.moves import quick_moves
from buraco_log.reducer import Replayer
from buraco_log.rules import Rules
from buraco_log.state import State

EXPERT_VERSION = 1
"""Bump when the expert's search changes (its decisions for a seed change)."""

SWITCH_Z = 1.5
"""The expert leaves the heuristic's choice only for a candidate better by this many standard
errors of the paired difference."""

MAX_ROLLOUT_EVENTS = 5_000
"""A rollout still going after this many events is cut and scored as it stands."""


def _count(n: int, word: str) -> str:
    """ "1 sample", "3 samples"."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


class Budget(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """How much the expert searches per decision.

    ``samples``: sampled tables (every candidate is played out once in each);
    ``candidates``: at most this many moves are searched, the heuristic's favourites of each
    kind first; ``rounds``: how far each play-out goes, in rounds of turns (one turn per seat)
    after the decision, before the table is scored as the hand would score if it ended there
    (0: to the real end of the hand; far noisier, see docs/review.md); ``ms``: stop sampling
    after this many milliseconds (at least two samples are always taken). With ``ms`` the result
    depends on the machine's speed: not reproducible."""

    samples: int = 96
    candidates: int = 5
    rounds: int = 3
    ms: int | None = None

    def __post_init__(self) -> None:
        # Budget(samples=0) stopped the search on a ZeroDivisionError, candidates=0 on an
        # IndexError, deep inside; rounds=-1 played to the end of the hand as r0 does
        if (self.samples < 1 or self.candidates < 1 or self.rounds < 0
                or (self.ms is not None and self.ms < 1)):
            raise ValueError(f"budget {self.text()}: samples, candidates and a time cap are "
                             "at least 1, rounds at least 0 (0: to the end of the hand)")

    def describe(self) -> str:
        cap = f", at most {self.ms} ms" if self.ms is not None else ""
        ahead = f"{_count(self.rounds, 'round')} ahead" if self.rounds else "to the end of the hand"
        search = f"{_count(self.samples, 'sample')} x {_count(self.candidates, 'candidate')}"
        return f"{search}, {ahead}{cap}"

    def text(self) -> str:
        """The form :func:`parse_budget` reads back."""
        cap = f"/{self.ms}ms" if self.ms is not None else ""
        return f"{self.samples}x{self.candidates}r{self.rounds}{cap}"


DEFAULT_BUDGET = Budget()

_BUDGET = re.compile(r"(\d+)(?:x(\d+))?(?:r(\d+))?(?:/(\d+)ms)?", re.ASCII)

MAX_WORK: Final = 50 * 96 * 5 * 3
"""The most search a budget may ask per decision, in play-out rounds (samples x candidates x
rounds, a play-out to the end of the hand counted as :data:`END_ROUNDS`): 50 times the default
budget's, so a review of a whole match ends in minutes to an hour, never runs for days."""

END_ROUNDS: Final = 8
"""What a play-out to the end of the hand (``r0``) costs, in rounds: about what it measured."""

MAX_MS: Final = 10_000
"""The longest time cap per decision, in milliseconds."""


def budget_work(b: Budget) -> int:
    """The most search ``b`` asks per decision, in play-out rounds (see :data:`MAX_WORK`); with
    a time cap, that of the two samples always taken (the cap bounds the rest)."""
    samples = b.samples if b.ms is None else min(b.samples, 2)
    return samples * b.candidates * min(b.rounds or END_ROUNDS, END_ROUNDS)


def parse_budget(text: str) -> Budget:
    """``SAMPLES[xCANDIDATES][rROUNDS][/MSms]``: ``"32"``, ``"32x5"``, ``"32x5r0"`` (play
    out to the end of the hand), ``"64/300ms"`` (a time cap); the parts left out keep their
    defaults."""
    m = _BUDGET.fullmatch(text.strip().lower())
    if m is None:
        raise ValueError(f"budget {text!r}: expected SAMPLES[xCANDIDATES][rROUNDS][/MSms], "
                         "e.g. 32, 32x5, 32x5r3, 64/300ms")
    samples, cands, rounds, ms = m.groups()
    d = DEFAULT_BUDGET
    try:
        b: Budget | None = Budget(
            samples=int(samples), candidates=int(cands) if cands else d.candidates,
            rounds=int(rounds) if rounds else d.rounds, ms=int(ms) if ms else None)
    except ValueError:  # below Budget's least: refused in the words of every range
        b = None
    if (b is None or not 1 <= b.samples <= 100_000 or not 1 <= b.candidates <= 1000
            or not 0 <= b.rounds <= 1000 or (b.ms is not None and not 1 <= b.ms <= MAX_MS)):
        raise ValueError(f"budget {text!r}: samples 1-100000, candidates 1-1000, rounds "
                         f"0-1000, ms 1-{MAX_MS}")
    if budget_work(b) > MAX_WORK:
        # 100000x1000r1000 was taken, and would have searched for years
        raise ValueError(
            f"budget {text!r}: samples x candidates x rounds (r0 counts as {END_ROUNDS}) is "
            f"{budget_work(b):,}, more than {MAX_WORK:,} (50 times the default "
            f"{DEFAULT_BUDGET.text()}): the search would run for hours")
    return b


# -- what one seat knows ------------------------------------------------------------------


class Tracker:
    """Follows a match through public facts only: the open pile, and for every seat the cards
    it picked up with the pile (or took back from a retracted opening) and has not laid or
    discarded since. It never reads a deal's hands or stock, nor the card a draw names."""

    def __init__(self) -> None:
        self.pile: list[int] = []
        self.shown: list[list[int]] = []

    @property
    def known(self) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(sorted(k)) for k in self.shown)

    def observe(self, ev: AnyEvent) -> None:
        if isinstance(ev, HandStarted):
            self.pile = [ev.upcard] if ev.upcard is not None else []  # turned face up
            self.shown = [[] for _ in ev.hands]  # only the number of seats is read
        elif isinstance(ev, (CardDiscarded, FirstDrawRejected)):
            self.pile.append(ev.card)
            if isinstance(ev, CardDiscarded):
                self._used(ev.seat, (ev.card,))
        elif isinstance(ev, PileTaken):
            self.shown[ev.seat].extend(self.pile)
            self.pile = []
        elif isinstance(ev, (MeldLaid, CardsLaidOff)):
            self._used(ev.seat, ev.cards)
        elif isinstance(ev, OpeningRetracted):
            self.shown[ev.seat].extend(ev.cards)

    def _used(self, seat: int, cards: Iterable[int]) -> None:
        mine = self.shown[seat]
        for c in cards:
            if c in mine:
                mine.remove(c)


class ExpertView(msgspec.Struct, frozen=True):
    """One seat's view of the table at its decision: no card it could not see.

    ``table`` is the state with the other hands, the stock and the mortos emptied (and the
    drawn card hidden outside the seat's turn); the counts say how many cards each holds.
    ``known``: per seat, the cards it is known to hold (picked up with the pile, taken back)."""

    seat: int
    table: State
    hand_counts: tuple[int, ...]
    stock_count: int
    morto_counts: tuple[int, ...]
    known: tuple[tuple[int, ...], ...]


def seat_view(state: State, seat: int, known: Sequence[Sequence[int]] = ()) -> ExpertView:
    """The :class:`ExpertView` of ``seat`` in ``state``; ``known`` from a :class:`Tracker`."""
    if not 0 <= seat < len(state.players):
        raise ValueError(f"no seat {seat} in a {len(state.players)}-player match")
    n = len(state.hands)
    known_t = tuple(
        tuple(sorted(known[s])) if s != seat and s < len(known) else () for s in range(n)
    )
    masked = msgspec.structs.replace(
        state,
        hands=tuple(h if s == seat else () for s, h in enumerate(state.hands)),
        stock=(),
        mortos=tuple(() for _ in state.mortos),
        drawn=state.drawn if state.turn == seat else None,
    )
    return ExpertView(
        seat=seat,
        table=masked,
        hand_counts=tuple(len(h) for h in state.hands),
        stock_count=len(state.stock),
        morto_counts=tuple(len(m) for m in state.mortos),
        known=known_t,
    )


def views(events: Iterable[AnyEvent], seat: int) -> Iterable[tuple[ExpertView, AnyEvent]]:
    """For every event the seat chose (its draws, pile pickups, melds, lay-offs, discards, and
    the rest of its moves), the seat's view just before it and the event."""
    r = Replayer()
    tracker = Tracker()
    for ev in events:
        t = r.table
        view = (seat_view(r.state(), seat, tracker.known)
                if t.phase in ("draw", "play", "emptied") and t.turn == seat and _is_choice(ev)
                else None)
        r.step(ev)  # an illegal event stops here: it is no decision to review
        if isinstance(ev, MatchStarted) and not 0 <= seat < len(ev.players):
            # as review_events says it: a seat the match lacks has no decisions to yield
            raise ValueError(f"no seat {seat} in a {len(ev.players)}-player match")
        if view is not None:
            yield view, ev
        tracker.observe(ev)


def _is_choice(ev: AnyEvent) -> bool:
    return not isinstance(ev, (HandStarted,)) and tag_of(ev) not in ("ms", "tc", "me")


# -- moves as the seat names them --------------------------------------------------------------

Key = tuple[object, ...]


def move_key(ev: Event) -> Key:
    """A move as the seat can name it before making it: a draw without its (hidden) card, a
    stock-out end without its scores, meld cards in sorted order."""
    if isinstance(ev, CardDrawn):
        return ("dr", ev.seat)
    if isinstance(ev, HandEnded):
        return ("he", ev.reason)
    if isinstance(ev, MeldLaid):
        return ("ml", ev.seat, tuple(sorted(ev.cards)))
    if isinstance(ev, CardsLaidOff):
        return ("lo", ev.seat, ev.meld, tuple(sorted(ev.cards)))
    if isinstance(ev, OpeningRetracted):
        return ("rt", ev.seat, tuple(sorted(ev.cards)))
    skip = ("seq", "at", "note")
    return (tag_of(ev), *(getattr(ev, f) for f in ev.__struct_fields__ if f not in skip))


def blind(ev: AnyEvent) -> AnyEvent:
    """``ev`` without what the seat could not know when choosing it (a draw's card, a
    stock-out's scores): the form evaluations carry."""
    if isinstance(ev, CardDrawn):
        return msgspec.structs.replace(ev, card=-1, at=None, note=None)
    if isinstance(ev, HandEnded):
        return msgspec.structs.replace(ev, scores=None, at=None, note=None)
    return msgspec.structs.replace(ev, at=None, note=None)


# -- sampling what the seat cannot see -------------------------------------------------------


def determinize(view: ExpertView, rng: random.Random) -> State:
    """One complete table that agrees with ``view``: the unseen cards dealt at random to the
    other hands (beside the cards each is known to hold), the untaken mortos and the stock."""
    t = view.table
    rules = t.rules
    assert rules is not None
    counts = [0] * (JOKER + 1)
    for c in deck(rules.jokers):
        counts[c] += 1
    seen: list[Iterable[int]] = [t.hands[view.seat], t.pile]
    seen.extend(m.cards for side in t.melds for m in side)
    seen.extend(k for s, k in enumerate(view.known) if s != view.seat)
    for part in seen:
        for c in part:
            counts[c] -= 1
    unseen = [c for c in range(JOKER + 1) for _ in range(max(0, counts[c]))]
    rng.shuffle(unseen)
    pos = 0
    hands: list[tuple[int, ...]] = []
    for s, n in enumerate(view.hand_counts):
        if s == view.seat:
            hands.append(t.hands[s])
            continue
        k = view.known[s][:n]
        need = n - len(k)
        hands.append((*k, *unseen[pos:pos + need]))
        pos += need
    mortos: list[tuple[int, ...]] = []
    for n in view.morto_counts:
        mortos.append(tuple(unseen[pos:pos + n]))
        pos += n
    stock = tuple(unseen[pos:pos + view.stock_count])
    pos += view.stock_count
    if pos != len(unseen) or len(stock) != view.stock_count:
        raise ValueError(
            f"seq {t.seq}: the view does not add up ({len(unseen)} unseen cards, {pos} placed)"
        )
    return msgspec.structs.replace(t, hands=tuple(hands), mortos=tuple(mortos), stock=stock)


# -- the search -----------------------------------------------------------------------------


class Evaluation(msgspec.Struct, frozen=True):
    """One candidate: the move (as :func:`blind` gives it), its mean hand-score difference,
    and its cost against the best candidate with the standard error of that cost (paired over
    the same sampled tables)."""

    move: AnyEvent
    mean: float
    cost: float
    se: float


class Decision(msgspec.Struct, frozen=True):
    """The expert's search at one decision: candidates best first. ``choice`` is the index of
    the move the expert plays: the heuristic bot's own choice unless the best candidate beats it
    by more than ``SWITCH_Z`` standard errors (a noisy search should not undo a sound habit)."""

    seq: int
    seat: int
    phase: str
    seed: int
    samples: int
    evaluations: tuple[Evaluation, ...]
    choice: int = 0
    measured: int = 0  # :func:`judge`: the samples that measured the costs (0: all of them)

    @property
    def best(self) -> AnyEvent:
        """The best candidate found (the review's yardstick)."""
        return self.evaluations[0].move

    @property
    def chosen(self) -> AnyEvent:
        """The move the expert plays."""
        return self.evaluations[self.choice].move

    def find(self, ev: Event) -> Evaluation | None:
        key = move_key(ev)
        for e in self.evaluations:
            if move_key(e.move) == key:
                return e
        return None


def decision_seed(seed: int | str, seq: int) -> int:
    """The sampling seed of the decision at ``seq`` (any process, any order of work)."""
    h = hashlib.sha256(f"buraco_log/expert/v{EXPERT_VERSION}\x00{seed}\x00{seq}".encode())
    return int.from_bytes(h.digest()[:8], "big")


_CACHES: dict[Rules, MeldKnowledge] = {}


def _cache(rules: Rules) -> MeldKnowledge:
    got = _CACHES.get(rules)
    if got is None:
        if len(_CACHES) > 8:
            _CACHES.clear()
        got = _CACHES[rules] = MeldKnowledge()
    return got


def _candidates(
    world: State, budget: Budget, include: Event | None, cache: MeldKnowledge,
    no_opening: bool = False,
) -> list[AnyEvent]:
    moves = quick_moves(world)
    if no_opening:  # a short opening was taken back this turn: no second try (as the habit)
        moves = [m for m in moves if not isinstance(m, MeldLaid)] or moves
    by_key: dict[Key, AnyEvent] = {}
    for m in moves:
        by_key.setdefault(move_key(m), m)
    moves = list(by_key.values())
    if include is not None and move_key(include) not in by_key:
        moves.append(msgspec.structs.replace(include, seq=world.seq + 1))  # type: ignore[arg-type]
    if len(moves) <= budget.candidates:
        return moves
    # Too many: the heuristic's favourites of each kind (lay, discard, the rest), taken in
    # turn, so that a long list of melds does not crowd out every discard.
    bot = HeuristicBot(cache)
    ctx = bot._context(world, moves)
    groups: dict[str, list[tuple[float, int, AnyEvent]]] = {}
    for i, m in enumerate(moves):
        kind = ("lay" if isinstance(m, (MeldLaid, CardsLaidOff))
                else "discard" if isinstance(m, CardDiscarded) else "other")
        groups.setdefault(kind, []).append((-ctx.score(m), i, m))
    for g in groups.values():
        g.sort(key=lambda x: (x[0], x[1]))
    chosen: list[AnyEvent] = []
    keys: set[Key] = set()
    if include is not None:
        keys.add(move_key(include))
        chosen.append(by_key.get(move_key(include)) or moves[-1])
    order = [groups[k] for k in ("lay", "discard", "other") if k in groups]
    depth = 0
    while len(chosen) < budget.candidates and any(depth < len(g) for g in order):
        for g in order:
            if depth < len(g) and len(chosen) < budget.candidates:
                m = g[depth][2]
                if move_key(m) not in keys:
                    keys.add(move_key(m))
                    chosen.append(m)
        depth += 1
    return chosen


def _realize(move: AnyEvent, world: State) -> AnyEvent:
    if isinstance(move, CardDrawn):
        return msgspec.structs.replace(move, card=world.stock[0])
    return move


def _value(scores: Sequence[int], side: int) -> float:
    others = [s for i, s in enumerate(scores) if i != side]
    return scores[side] - (sum(others) / len(others) if others else 0.0)


def rollout(world: State, move: AnyEvent, side: int, cache: MeldKnowledge,
            rounds: int = 0) -> float:
    """Play ``move`` in ``world``, then the heuristic bot in every seat to the end of the hand,
    or for ``rounds`` rounds of turns; the hand-score difference of ``side`` then (a hand that
    has not ended is scored as if it ended there)."""
    r = Replayer(world)
    t = r.table
    if isinstance(move, HandEnded):
        return _value([s.total for s in t.score()], side)
    r.step(_realize(move, world))
    bots = [HeuristicBot(cache) for _ in t.players]
    rng = random.Random(0)  # the heuristic bot does not draw on it
    last_turn = world.turns + rounds * len(world.players) if rounds else -1
    for _ in range(MAX_ROLLOUT_EVENTS):
        phase = t.phase
        if phase not in ("draw", "play", "emptied"):
            break
        if phase == "draw" and t.turns >= last_turn >= 0:
            break
        bot = bots[t.turn]
        ev: AnyEvent | None = bot.fast_move(t, t.stock[-1] if t.stock else None,
                                            lambda: (0,))
        if isinstance(ev, HandEnded):
            break
        if ev is not None:
            try:
                r.step(ev)
                continue
            except IllegalMoveError:
                pass
        st = r.state()
        moves = quick_moves(st)
        if not moves:
            break
        ev = bot.choose(st, moves, rng)
        if isinstance(ev, HandEnded):
            break
        r.step(ev)
    if t.phase in ("between", "decided", "over") and t.results:
        return _value([s.total for s in t.results[-1].scores], side)
    return _value([s.total for s in t.score()], side)


def _search(
    view: ExpertView, budget: Budget, seed: int, include: Event | None, no_opening: bool,
) -> tuple[State, list[AnyEvent], list[list[float]], int, MeldKnowledge]:
    """Sample the tables and play every candidate out in each: the first table, the
    candidates, each candidate's values (one a sample, in the order sampled), the samples."""
    t = view.table
    rules = t.rules
    assert rules is not None
    cache = _cache(rules)
    rng = random.Random(seed)
    side = t.sides[view.seat]
    start = time.perf_counter()
    first = determinize(view, rng)
    cands = _candidates(first, budget, include, cache, no_opening)
    values: list[list[float]] = [[] for _ in cands]
    n = 0
    world = first
    if len(cands) > 1:
        while n < budget.samples:
            if n:
                world = determinize(view, rng)
            for i, m in enumerate(cands):
                values[i].append(rollout(world, m, side, cache, budget.rounds))
            n += 1
            if (budget.ms is not None and n >= 2
                    and (time.perf_counter() - start) * 1000 >= budget.ms):
                break
    else:
        values[0].append(0.0)
    return first, cands, values, n, cache


def _paired(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """The mean of ``a - b`` sample by sample, and its standard error (0 from one sample)."""
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    mean = sum(diffs) / len(diffs)
    if len(diffs) < 2:
        return mean, 0.0
    var = sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1)
    return mean, math.sqrt(var / len(diffs))


def _pooled_se(pa: Sequence[float], pb: Sequence[float], ma: Sequence[float],
               mb: Sequence[float]) -> float:
    """The standard error of the measuring half's mean of ``ma - mb`` from the spread of the
    paired differences within each half, pooled. A cost's differences are skewed (a canastra
    made in a few play-outs), and a half that missed those few has too small a spread: 48
    measuring samples all alike gave a cost of 0 ± 0 where the choosing half, and 960 samples
    of another seed, found the moves apart, and a 95% interval held the cost of ten times the
    samples in 92.3% of the decisions checked (seat 0's). The review's ``se`` is the larger of
    this one and the measuring half's own: 95.8% on the same decisions, and on seat 1's,
    checked after the choice, 94.7% (92.4% before); no play-out more."""
    def ss(a: Sequence[float], b: Sequence[float]) -> float:
        d = [x - y for x, y in zip(a, b, strict=True)]
        m = sum(d) / len(d)
        return sum((x - m) ** 2 for x in d)
    var = (ss(pa, pb) + ss(ma, mb)) / (len(pa) + len(ma) - 2)
    return math.sqrt(var / len(ma))


def decide(
    view: ExpertView,
    budget: Budget = DEFAULT_BUDGET,
    seed: int = 0,
    *,
    include: Event | None = None,
    no_opening: bool = False,
) -> Decision:
    """Search the seat's decision in ``view``: sample ``budget.samples`` tables, play every
    candidate out in each, and rank the candidates by mean hand-score difference. ``include``
    (a move that was played, for a review) is always among the candidates. ``no_opening``:
    the seat took back a short opening this turn, so no meld is a candidate (the heuristic
    bot's own rule: laying it again and taking it back again would never end the turn).

    The costs are measured on the samples that chose the best, so noise only adds to them:
    right for playing, biased for judging (:func:`judge` is the review's)."""
    first, cands, values, n, cache = _search(view, budget, seed, include, no_opening)
    t = view.table
    means = [sum(v) / len(v) for v in values]
    best = max(range(len(cands)), key=lambda i: (means[i], -i))
    evals = []
    for i, m in enumerate(cands):
        cost, se = _paired(values[best], values[i])
        evals.append(Evaluation(blind(m), round(means[i], 3), round(cost, 3), round(se, 3)))
    habit = evals[_habit(first, cands, cache)]
    evals.sort(key=lambda e: (e.cost, -e.mean))
    choice = 0
    if habit.cost <= SWITCH_Z * habit.se:
        choice = evals.index(habit)
    return Decision(seq=t.seq + 1, seat=view.seat, phase=t.phase, seed=seed,
                    samples=n, evaluations=tuple(evals), choice=choice)


def judge(view: ExpertView, budget: Budget, seed: int, played: Event | None) -> Decision:
    """The review's search of the decision in which ``played`` was made: the samples of
    :func:`decide` (the same tables for a seed), split in two. The even-numbered samples (the
    first, third, ...) choose the best candidate (a tie goes to the move played); the others
    measure every candidate against it. A cost measured on the samples that chose the best is
    biased upward (the best of five noisy means is the luckiest of them): measured on samples
    that took no part in the choice, it is an unbiased estimate of what the move played gave
    up against the move named best, and may come out below 0. Candidates are listed best
    first in the choosing half's order; ``Decision.measured`` is the size of the measuring
    half. A cost's standard error is the measuring half's, or from 4 samples on, if larger,
    the one the two halves' spreads give pooled (:func:`_pooled_se`). With one sample there
    is no other half: the cost is that sample's, with no standard error. ``played`` None: the
    search of a seat about to choose (a tie goes to the first)."""
    _, cands, values, n, _ = _search(view, budget, seed, played, False)
    t = view.table
    key = move_key(played) if played is not None else None
    mine = next((i for i, m in enumerate(cands) if move_key(m) == key), -1)
    pick = [v[0::2] for v in values]
    meas = [v[1::2] for v in values] if n >= 2 else pick
    chosen = [sum(v) / len(v) for v in pick]
    order = sorted(range(len(cands)), key=lambda i: (-chosen[i], i != mine, i))
    best = order[0]
    evals = []
    for i in order:
        cost, se = _paired(meas[best], meas[i])
        if n >= 4:
            se = max(se, _pooled_se(pick[best], pick[i], meas[best], meas[i]))
        evals.append(Evaluation(blind(cands[i]), round(sum(meas[i]) / len(meas[i]), 3),
                                round(cost, 3), round(se, 3)))
    return Decision(seq=t.seq + 1, seat=view.seat, phase=t.phase, seed=seed, samples=n,
                    evaluations=tuple(evals), measured=len(meas[0]))


def _habit(world: State, cands: Sequence[AnyEvent], cache: MeldKnowledge) -> int:
    """The index of the heuristic bot's own choice among ``cands``."""
    if len(cands) == 1:
        return 0
    got = HeuristicBot(cache).choose(world, cands, random.Random(0))
    return next(i for i, m in enumerate(cands) if m is got)


# -- the player ----------------------------------------------------------------------------


STALL_DRAWS = 3
"""After this many of its draws in a row with the stock unchanged (it took the pile each time),
the expert leaves the pile: the heuristic bot's rule."""


class ExpertBot:
    """The searching player for :mod:`buraco_log.simulate`: it follows the match through
    :meth:`observe` (public facts only) and decides from its seat's view alone."""

    name = "expert"

    def __init__(self, budget: Budget = DEFAULT_BUDGET) -> None:
        self.budget = budget
        self.tracker = Tracker()
        self.decisions = 0
        self._retracted: tuple[int, int] = (-1, -1)  # (hand, turn) of its last retraction
        # Stall guard, the heuristic bot's: two experts passed a free pile's one card back and
        # forth with the stock unchanged, 10,000 turns of one hand, hours at the default budget.
        self._stock_seen: tuple[int, int] = (-1, -1)
        self._noted: tuple[int, int] = (-1, -1)  # (hand, seq) of the last draw counted
        self.stalled = 0

    def observe(self, ev: AnyEvent) -> None:
        self.tracker.observe(ev)

    def choose(self, state: State, moves: Sequence[AnyEvent], rng: random.Random) -> AnyEvent:
        move = self._choose(state, moves, rng)
        if isinstance(move, OpeningRetracted):  # chosen or forced: no second try this turn
            self._retracted = (state.hand, state.turns)
        return move

    def _choose(self, state: State, moves: Sequence[AnyEvent], rng: random.Random) -> AnyEvent:
        if state.phase == "draw":
            if self._noted != (state.hand, state.seq):  # asked again for one move: once
                self._noted = (state.hand, state.seq)
                seen = (state.hand, len(state.stock))
                self.stalled = self.stalled + 1 if seen == self._stock_seen else 0
                self._stock_seen = seen
            if self.stalled >= STALL_DRAWS:  # the stock, or the hand's end at its floor
                moves = [m for m in moves if not isinstance(m, PileTaken)] or moves
        if len(moves) == 1:
            return moves[0]
        view = seat_view(state, state.turn, self.tracker.known)
        no_opening = self._retracted == (state.hand, state.turns)
        d = decide(view, self.budget, rng.getrandbits(63), no_opening=no_opening)
        self.decisions += 1
        key = move_key(d.chosen)
        for m in moves:
            if move_key(m) == key:
                return m
        raise AssertionError(f"seq {state.seq + 1}: the expert chose a move not on the list")
