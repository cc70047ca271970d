"""A move-by-move review of one seat's decisions in a logged match.

For every choice the seat made (draw or take the pile, each meld and lay-off, the discard,
the rest), the expert (:mod:`buraco_log.expert`) searches the seat's view just before it,
with the played move among the candidates, and the review reports the move played, the best
alternative found, and the estimated cost of the move played in hand points with a 95%
interval. Half the samples choose the best candidate, the other half measure the cost (the
best candidate's mean hand-score difference minus the played move's, over the same sampled
tables): a cost measured on the samples that chose the best was biased upward, since noise
only ever added to it. A move costing at least ``threshold`` points, with its interval above
0, is flagged as a mistake; flagged costs are summed per hand.

Only what the seat could see enters a decision (the same :class:`~buraco_log.expert.ExpertView`
the expert plays from), and every decision is seeded from the review's seed and the decision's
seq, so a review is the same for a seed and budget in any process and with any ``jobs``.

Stdlib and msgspec only.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

import msgspec

from buraco_log.cards import Style, format_card
from buraco_log.errors import IllegalMoveError, ReplayError
from buraco_log.events import (
    AnyEvent,
    CardDiscarded,
    CardDrawn,
    CardsLaidOff,
    Event,
    FirstDrawRejected,
    HandEnded,
    HandStarted,
    MatchEnded,
    MatchStarted,
    MeldLaid,
    MortoTaken,
    OpeningRetracted,
    PileTaken,
    WentOut,
)
from buraco_log.expert import (
    DEFAULT_BUDGET,
    EXPERT_VERSION,
    Budget,
    Decision,
    ExpertView,
    blind,
    decision_seed,
    judge,
    views,
)
from buraco_log.ruleids import describe
from buraco_log.rules import Rules
from buraco_log.safetext import pad, terminal_safe
from buraco_log.timeline import NO_RULES_NAME, card_style, stock_end

if TYPE_CHECKING:  # the page is drawn by the viewer, imported when a page is asked for
    from buraco_log.view import Banner, Mark

REVIEW_VERSION = 2
"""Version of the review's JSON layout and of its page's data. 2: costs measured on samples
that did not choose the best move (unbiased, may be below 0), ``low`` and ``high`` (a 95%
interval) and ``measured`` on each move; in 1 the costs were measured on the samples that
chose the best move and biased upward."""

LEVEL = 0.95
"""The confidence of a cost's interval."""

DEFAULT_THRESHOLD = 25.0
"""Points of hand score: a move that costs at least this much (and two standard errors) is a
mistake."""

ALTERNATIVES = 4
"""How many candidates each reviewed move lists (best first)."""


class Alternative(msgspec.Struct, frozen=True):
    move: str
    event: dict[str, Any]
    mean: float  # mean hand-score difference of the seat's side after this move
    cost: float  # against the best candidate (on the measuring samples: may be below 0)
    se: float


class ReviewedMove(msgspec.Struct, frozen=True):
    """One decision of the seat."""

    seq: int
    hand: int
    turn: int  # turns begun in the hand when the decision came
    kind: str  # "draw", "meld", "layoff", "discard" or "other"
    played: str
    best: str
    cost: float  # estimated hand points the played move gave up against the best found
    se: float  # standard error of ``cost``
    flagged: bool
    played_event: dict[str, Any]
    best_event: dict[str, Any]
    samples: int
    alternatives: tuple[Alternative, ...]
    low: float = 0.0  # ``cost``'s 95% interval (``LEVEL``)
    high: float = 0.0
    measured: int = 0  # the samples that measured ``cost`` (the others chose the best)


class HandReview(msgspec.Struct, frozen=True):
    hand: int
    decisions: int
    mistakes: int
    lost: float  # sum of the flagged costs
    lost_se: float  # its standard error (independent decisions)
    cost: float  # sum of every decision's cost


class Review(msgspec.Struct, frozen=True):
    """The review of one seat: reproducible from ``seed`` and ``budget``."""

    version: int
    expert_version: int
    match_id: str
    rules: str
    seat: int
    player: str
    side: int
    seed: str
    budget: Budget
    threshold: float
    moves: tuple[ReviewedMove, ...]
    hands: tuple[HandReview, ...]
    decisions: int
    mistakes: int
    lost: float
    note: str | None = None  # why the review stops short (an illegal event); wrong scores
    # hands dealt (before any illegal event) in which the seat had no move with an
    # alternative: no turn, or only forced moves (the text said nothing of them)
    hands_without_decision: tuple[int, ...] = ()


# -- words ------------------------------------------------------------------------------------


def move_text(ev: Event, style: Style = "ascii", rules: Rules | None = None) -> str:
    """A move in a few words, as the seat would name it before making it. ``rules``: the
    match's, to word the end of a hand at the stock as ``moves`` and ``replay`` do (mega's
    floor is 2 cards: "the stock is out" said of a stock of 2)."""

    def cs(cards: Iterable[int]) -> str:
        return " ".join(format_card(c, style) for c in cards)

    if isinstance(ev, CardDrawn):
        return "draw from the stock"
    unit = "tile" if style.startswith("tiles") else "card"  # Burako's tiles (RULES.md §1)
    if isinstance(ev, PileTaken):
        return f"take the pile ({ev.count} {unit}{'s' if ev.count != 1 else ''}, top " \
               f"{cs((ev.top,))})"
    if isinstance(ev, HandEnded):
        return f"end the hand: {stock_end(rules, unit)}"  # as `moves` offers it
    if isinstance(ev, MeldLaid):
        return f"meld {cs(ev.cards)}"
    if isinstance(ev, CardsLaidOff):
        return f"lay off {cs(ev.cards)} on meld {ev.meld}"
    if isinstance(ev, CardDiscarded):
        return f"discard {cs((ev.card,))}"
    if isinstance(ev, FirstDrawRejected):
        return f"reject the first draw {cs((ev.card,))}"
    if isinstance(ev, OpeningRetracted):
        return "take back the opening"
    if isinstance(ev, MortoTaken):
        return "take the morto"
    if isinstance(ev, WentOut):
        return "go out"
    return type(ev).__name__


def move_json(ev: Event, style: Style = "ascii") -> dict[str, Any]:
    """The move in JSON Lines form (cards as text); a draw names no card."""
    from buraco_log.jsonl import event_to_json

    if isinstance(ev, CardDrawn):
        return {"t": "dr", "seat": ev.seat, "seq": ev.seq}
    return event_to_json(msgspec.structs.replace(ev, at=None, note=None))


def kind_of(ev: Event) -> str:
    if isinstance(ev, (CardDrawn, PileTaken, HandEnded)):
        return "draw"
    if isinstance(ev, MeldLaid):
        return "meld"
    if isinstance(ev, CardsLaidOff):
        return "layoff"
    if isinstance(ev, CardDiscarded):
        return "discard"
    return "other"


# -- the review -----------------------------------------------------------------------------


class Task(msgspec.Struct, frozen=True):
    """One decision to search: what the seat saw, and what it played (blinded)."""

    view: ExpertView
    played: AnyEvent
    seed: int


def tasks(events: Sequence[AnyEvent], seat: int, seed: str,
          seqs: Collection[int] | None = None) -> tuple[list[Task], ReplayError | None]:
    """The decisions of ``seat`` in ``events`` (only those at ``seqs``, if given), and the
    error of the illegal event that stops them, if one does."""
    out: list[Task] = []
    try:
        for view, ev in views(events, seat):
            if seqs is None or ev.seq in seqs:
                out.append(Task(view, blind(ev), decision_seed(seed, ev.seq)))
    except ReplayError as exc:
        return out, exc
    return out, None


def evaluate(task: Task, budget: Budget) -> Decision:
    return judge(task.view, budget, task.seed, task.played)


def _evaluate_chunk(args: tuple[list[Task], Budget]) -> list[Decision]:
    chunk, budget = args
    return [evaluate(t, budget) for t in chunk]


def reviewed_move(task: Task, d: Decision, threshold: float, style: Style,
                  rules: Rules | None = None) -> ReviewedMove:
    t = task.view.table
    mine = d.find(task.played)
    assert mine is not None
    evals = list(d.evaluations)
    if evals[0] is mine:
        # The move played is the best found (a tie goes to it): named as played (the meld
        # played, Qs Qd Qh, was "best: Qd Qh Qs", the same meld in the search's order).
        evals[0] = msgspec.structs.replace(mine, move=task.played)
    best = evals[0]
    low, high = interval(mine.cost, mine.se, d.measured)
    alts = tuple(
        Alternative(move_text(e.move, style, rules), move_json(e.move, style), e.mean, e.cost,
                    e.se)
        for e in evals[:ALTERNATIVES]
    )
    return ReviewedMove(
        seq=task.played.seq, hand=t.hand, turn=t.turns, kind=kind_of(task.played),
        played=move_text(task.played, style, rules), best=move_text(best.move, style, rules),
        cost=mine.cost, se=mine.se,
        flagged=is_mistake(mine.cost, mine.se, threshold, d.measured),
        played_event=move_json(task.played, style), best_event=move_json(best.move, style),
        samples=d.samples, alternatives=alts, low=low, high=high, measured=d.measured,
    )


_T = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776}  # Student's t at 97.5% (few degrees of freedom)


def t_quantile(df: int) -> float:
    """Student's t at (1 + ``LEVEL``) / 2 with ``df`` degrees of freedom: a cost's interval
    is its estimate ± this many standard errors (a mean of a few samples is no normal one).
    Beyond 4 degrees of freedom, the Cornish-Fisher series (Abramowitz & Stegun 26.7.5)."""
    if df in _T and LEVEL == 0.95:
        return _T[df]
    z = NormalDist().inv_cdf((1.0 + LEVEL) / 2.0)
    g = ((z ** 3 + z) / 4, (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96,
         (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384,
         (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160)
    return z + sum(gk / float(df) ** (k + 1) for k, gk in enumerate(g))


def interval(cost: float, se: float, measured: int) -> tuple[float, float]:
    """``cost``'s interval at ``LEVEL`` from ``measured`` paired samples: none (the cost
    itself) from fewer than two, which give no standard error."""
    if measured < 2:
        return cost, cost
    h = t_quantile(measured - 1) * se
    return round(cost - h, 3), round(cost + h, 3)


def is_mistake(cost: float, se: float, threshold: float, measured: int = 2) -> bool:
    """At least ``threshold`` points, and the whole interval above 0 (not noise); and a
    cost at all: with ``--threshold 0`` the best move found (cost 0 ± 0) was a "mistake".
    ``measured``: the samples that measured the cost; one gives no standard error (it reads
    0): every costly move was flagged on the noise of a single play-out, so with fewer than
    two nothing is."""
    return (measured >= 2 and cost > 0.0 and cost >= threshold
            and interval(cost, se, measured)[0] > 0.0)


def review_events(
    events: Sequence[AnyEvent],
    seat: int,
    *,
    budget: Budget = DEFAULT_BUDGET,
    seed: str = "0",
    threshold: float = DEFAULT_THRESHOLD,
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
    seqs: Collection[int] | None = None,
    partial: bool = False,
    on_no_pool: Callable[[OSError], None] | None = None,
) -> Review:
    """Review every decision of ``seat`` in ``events`` (a whole match or a prefix).

    ``progress(done, total)`` is called as decisions are searched. Decisions with only one
    legal move are no decisions and are left out. ``seqs``: review only the seat's moves at
    these seqs (each is searched exactly as in the whole review). An illegal event raises its
    :class:`~buraco_log.errors.IllegalMoveError` before any search, unless ``partial``: then
    the decisions before it are reviewed and ``note`` says where the review stops. A wrong
    recorded score is no move: the review goes on with the recomputed one, and ``note`` names
    it. ``jobs`` worker processes that cannot be started (``ulimit -n``): the decisions are
    searched in this process, the same review, and ``on_no_pool`` is told why."""
    if not events or not isinstance(events[0], MatchStarted):
        raise ReplayError("the log does not start with a match start", seq=0)
    start = events[0]
    if not 0 <= seat < len(start.players):
        raise ValueError(f"no seat {seat} in a {len(start.players)}-player match")
    style = card_style(start.rules)
    events, wrong, won = _recomputed(events)
    todo, error = tasks(events, seat, seed, seqs)
    note: str | None = None
    if error is not None:
        if not partial:
            raise error  # before any search: nothing is half done
        rule = getattr(error, "rule", None)
        # The rule, not the engine's explanation: that names cards the seat could not see (a
        # refused draw names the stock's top card), as a seat's page gives the rule only.
        why = describe(rule, tiles=style == "tiles").rstrip(".") if rule else \
            "it cannot be replayed"
        note = (f"seq {error.seq} is illegal{f' [{rule}]' if rule else ''}: {why}; "
                "the review covers the decisions before it")
    if wrong:
        # no move: the rule, not its explanation (a seat's review, as a seat's page says it)
        said = "; ".join(f"seq {m.seq} [{m.rule}]: {describe(m.rule, tiles=style == 'tiles')}"
                         .rstrip(".") + won.get(m.seq or 0, "") for m in wrong)
        note = "; ".join(filter(None, (
            f"{said}; the review goes on with the recomputed score"
            f"{'s' if len(wrong) > 1 else ''}", note)))
    decisions = _run(todo, budget, jobs, progress, on_no_pool)
    moves: list[ReviewedMove] = []
    for task, d in zip(todo, decisions, strict=True):
        if len(d.evaluations) > 1:
            moves.append(reviewed_move(task, d, threshold, style, start.rules))
    hands: list[HandReview] = []
    reviewed = {m.hand for m in moves}
    without: tuple[int, ...] = ()
    if seqs is None:  # a review of some seqs only says nothing of the other hands
        end = error.seq if error is not None else None
        without = tuple(dict.fromkeys(
            ev.hand for ev in events if isinstance(ev, HandStarted)
            and (end is None or ev.seq < end) and ev.hand not in reviewed))
    for h in sorted(reviewed):
        ms = [m for m in moves if m.hand == h]
        bad = [m for m in ms if m.flagged]
        hands.append(HandReview(
            hand=h, decisions=len(ms), mistakes=len(bad),
            lost=round(sum(m.cost for m in bad), 3),
            lost_se=round(math.sqrt(sum(m.se ** 2 for m in bad)), 3),
            cost=round(sum(m.cost for m in ms), 3)))
    return Review(
        version=REVIEW_VERSION, expert_version=EXPERT_VERSION, match_id=start.match_id,
        rules=start.rules.name, seat=seat, player=start.players[seat].name,
        side=start.sides[seat] if seat < len(start.sides) else seat, seed=seed, budget=budget,
        threshold=threshold, moves=tuple(moves), hands=tuple(hands), decisions=len(moves),
        mistakes=sum(h.mistakes for h in hands), lost=round(sum(h.lost for h in hands), 3),
        note=note, hands_without_decision=without,
    )


def _recomputed(events: Sequence[AnyEvent]) -> tuple[
        Sequence[AnyEvent], list[IllegalMoveError], dict[int, str]]:
    """``events`` with each wrong recorded score left out, the errors that say so, and by seq
    the words of a wrong recorded winner beside wrong totals. A hand end or match end that
    records a score other than the one recomputed is no move: the replay goes on with the
    recomputed score (as ``replay``, ``moves`` and ``view`` read it), where the review stopped
    there and dropped every decision after it."""
    from buraco_log.timeline import Timeline

    tl = Timeline(events)
    wrong = tl.score_mismatches
    if not wrong:
        return events, [], {}
    seqs = {m.seq for m in wrong}
    won = {ev.seq: f"; the recorded winner, side {ev.winner}, is wrong too: side "
                   f"{tl.final.winner} won" for ev in events
           if ev.seq in seqs and isinstance(ev, MatchEnded) and ev.winner is not None
           and tl.final.winner is not None and ev.winner != tl.final.winner}
    out: list[AnyEvent] = []
    for ev in events:
        if ev.seq in seqs and isinstance(ev, HandEnded):
            ev = msgspec.structs.replace(ev, scores=None)
        elif ev.seq in seqs and isinstance(ev, MatchEnded):
            # and its winner: a wrong winner beside wrong totals is part of the one mismatch
            # (the reducer says it there; replay, view and audit read on). Left in, it was
            # refused as illegal [match.wrong_winner]: a match a forgotten going-out bonus
            # gave to the other side was not reviewed at all without --partial
            ev = msgspec.structs.replace(ev, totals=None, winner=None)
        out.append(ev)
    return out, list(wrong), won


def _run(todo: list[Task], budget: Budget, jobs: int,
         progress: Callable[[int, int], None] | None,
         on_no_pool: Callable[[OSError], None] | None = None) -> list[Decision]:
    total = len(todo)
    if progress is not None:
        progress(0, total)
    if jobs <= 1 or total <= 1:
        return _run_here(todo, budget, progress)
    from buraco_log.audit.pool import NoWorkers

    try:
        return _run_pooled(todo, budget, jobs, progress)
    except NoWorkers as exc:  # no worker could be started (ulimit -n, ulimit -u): nothing
        why = OSError(exc.errno, exc.strerror)  # done yet; not its traceback: the pool
    # searched here, the half-made pool dropped: it was "LOG: Too many open files", exit 2,
    # the log blamed, where -j 1 worked. The same review: every decision has its own seed,
    # whatever process searches it
    import gc

    gc.collect()
    if on_no_pool is not None:
        on_no_pool(why)
    return _run_here(todo, budget, progress)


def _run_here(todo: list[Task], budget: Budget,
              progress: Callable[[int, int], None] | None) -> list[Decision]:
    out: list[Decision] = []
    for i, t in enumerate(todo):
        out.append(evaluate(t, budget))
        if progress is not None:
            progress(i + 1, len(todo))
    return out


def _run_pooled(todo: list[Task], budget: Budget, jobs: int,
                progress: Callable[[int, int], None] | None) -> list[Decision]:
    from concurrent.futures import as_completed

    from buraco_log.audit.pool import worker_pool

    total = len(todo)

    size = max(1, min(8, total // (jobs * 6)))
    chunks = [(i, todo[i:i + size]) for i in range(0, total, size)]
    results: list[Decision | None] = [None] * total
    done = 0
    with worker_pool(min(jobs, os.cpu_count() or 1, len(chunks))) as pool:
        futures = {pool.submit(_evaluate_chunk, (c, budget)): i for i, c in chunks}
        for fut in as_completed(futures):
            first = futures[fut]
            got = fut.result()
            results[first:first + len(got)] = got
            done += len(got)
            if progress is not None:
                progress(done, total)
    return [d for d in results if d is not None]


# -- output -------------------------------------------------------------------------------


def to_json(review: Review) -> dict[str, Any]:
    out: dict[str, Any] = msgspec.to_builtins(review)
    return out


def header(review: Review) -> str:
    b = review.budget
    # a player with no name, a match with no id: "review of seat 0 (, side 0) in match  (x)"
    who = f"{review.player}, " if review.player.strip() else ""
    match = f"match {review.match_id}" if review.match_id.strip() else "match with no id"
    # rules named by blanks: as the viewer says them (it said "( )")
    rules = review.rules if review.rules.strip() else NO_RULES_NAME
    return (f"review of seat {review.seat} ({who}side {review.side}) in {match} "
            f"({rules})\n"
            f"seed {review.seed!r}, budget {b.describe()} per decision, expert v"
            f"{review.expert_version}; half the samples choose the best move, the other half "
            f"measure the costs (± a 95% interval); a mistake costs at least "
            f"{review.threshold:g} points, its interval above 0"
            + (f"; with {_count(b.samples, 'sample')} the half that measures has 1 or none, so "
               "no cost has an interval and no move is flagged" if b.samples < 4 and
               b.ms is None else "")
            # it said "total: 0 decisions" with no word of why
            + ("; with 1 candidate only the move played is searched, so no decision is "
               "compared: give 2 or more" if b.candidates < 2 else ""))


def to_text(review: Review, *, all_moves: bool = True) -> str:
    """The review for people: each decision on a line (mistakes marked), a summary per hand."""
    lines = [header(review)]
    if review.note:
        lines.append(f"note: {review.note}")
    by_hand: dict[int, list[ReviewedMove]] = {}
    for m in review.moves:
        by_hand.setdefault(m.hand, []).append(m)
    # a review with no decision at all says so once, below
    quiet = set(review.hands_without_decision) if review.moves else set()
    blocks: list[HandReview | int] = [*review.hands, *quiet]
    for h in sorted(blocks, key=lambda b: b if isinstance(b, int) else b.hand):
        lines.append("")
        if isinstance(h, int):  # a hand of the match with no word in the review
            lines.append(f"hand {h}: no decision to review: seat {review.seat} had no move "
                         "with an alternative (no turn, or only forced moves)")
            continue
        lines.append(f"hand {h.hand}")
        for m in by_hand[h.hand]:
            if not all_moves and not m.flagged:
                continue
            mark = "MISTAKE" if m.flagged else ""
            # padded by terminal columns: a wide (CJK, emoji) name in a move took two each
            lines.append(f"  {'!' if m.flagged else ' '} seq {m.seq:<5d} {pad(m.kind, 8)} "
                         f"{pad(m.played, 34)} {pad(verdict_text(m), 40)} cost {m.cost:6.1f} "
                         f"{plus_minus(m)} {mark}".rstrip())
        lines.append(f"  hand {h.hand}: {h.decisions} decision{'' if h.decisions == 1 else 's'},"
                     f" {h.mistakes} mistake"
                     f"{'' if h.mistakes == 1 else 's'}, {h.lost:.0f} ± "
                     f"{_Z * h.lost_se:.0f} points lost to them (all decisions: {h.cost:.0f})")
    if not review.moves:  # it said "total: 0 decisions" with no word of why
        lines.append("")
        lines.append(f"seat {review.seat} had no decision to review: no move of it in the log "
                     "had an alternative searched (a match not dealt, a seat that has not "
                     "played yet, only forced moves, or a budget of 1 candidate)")
    lines.append("")
    mean = sum(m.cost for m in review.moves) / len(review.moves) if review.moves else 0.0
    lines.append(f"total: {review.decisions} decision{'' if review.decisions == 1 else 's'}, "
                 f"{review.mistakes} mistake"
                 f"{'' if review.mistakes == 1 else 's'}, {review.lost:.0f} points lost to them; "
                 f"mean cost per decision {mean:.1f}")
    short = _cut_short(review)
    if short:
        lines.append(short)
    return "\n".join(lines) + "\n"


_Z = NormalDist().inv_cdf((1.0 + LEVEL) / 2.0)  # a hand's sum of many costs: normal


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def verdict(m: ReviewedMove) -> str:
    """``best``: the move played is the best found; ``better``: the best found beats it, the
    whole interval above 0; ``even``: the interval holds 0 (a cost inside the noise names no
    better move: "best: X" told a player X was better, and a search of ten times the samples
    found X no better in most such decisions)."""
    if m.best == m.played:
        return "best"
    return "better" if m.measured >= 2 and m.low > 0.0 else "even"


def verdict_text(m: ReviewedMove) -> str:
    v = verdict(m)
    return "best" if v == "best" else f"best: {m.best}" if v == "better" else \
        f"about even with {m.best}"


def half_width(m: ReviewedMove) -> float:
    """The ± of the move's cost: half its 95% interval (not a standard error)."""
    return (m.high - m.low) / 2.0


def plus_minus(m: ReviewedMove) -> str:
    """``± 12.3``, or ``±   n/a`` where fewer than two samples measured the cost: ``± 0.0``
    read as a cost known exactly, where it is known least."""
    return f"± {half_width(m):5.1f}" if m.measured >= 2 else "±   n/a"


def _cut_short(review: Review) -> str:
    """The line saying how far a time cap cut the search short, or "" when it did not: the
    header names the samples asked for, and under load a decision may have searched 2 of 96."""
    b = review.budget
    done = sorted(m.samples for m in review.moves)
    cut = sum(1 for n in done if n < b.samples)
    if b.ms is None or not cut:
        return ""
    # under 4 samples, under 2 measure the cost: no interval, so no flag (said, not silent)
    bare = sum(1 for m in review.moves if m.measured < 2)
    return (f"time cap: {cut} of {len(done)} decision{'' if len(done) == 1 else 's'} searched "
            f"fewer than {b.samples} samples (fewest {done[0]}, median {done[len(done) // 2]}): "
            "their costs are noisier, and the review is not reproducible"
            + (f"; {bare} had fewer than 4 samples, so no interval and no flag" if bare else ""))


def review_page(events: Sequence[AnyEvent], review: Review, *,
                banners: Sequence[Banner] = (),
                marks: Mapping[int, Sequence[Mark]] | None = None) -> str:
    """The match viewer's page for the reviewed seat, with the review in it: the viewer's marks
    on the mistakes (the line flagged, the best move and its cards shown at that seq), and the
    review panel (``template/review.js``): each decision's cost in the move list, and on the
    table before a decision the move played, the alternatives, and the best one's cards
    outlined in the hand. ``banners``: what the caller knows of the log, as the viewer shows
    it (:func:`buraco_log.view.damage_banner` for the intact prefix of a damaged log);
    ``marks``: the caller's own marks at the table, after the review's
    (:func:`buraco_log.view.damage_mark` where the damage starts)."""
    from importlib import resources

    from buraco_log.view import Mark, build_page
    from buraco_log.view.frames import ID_SHOWN, NAME_IN_MOVES, cut
    from buraco_log.view.page import json_text

    shown = {m.seq: [Mark("mistake", f"Review: a mistake costing {m.cost:.0f} ± "
                                     f"{half_width(m):.0f} points (95%); best found: {m.best}",
                          tuple(_cards_of(m.best_event, events[0])))]
             for m in review.moves if m.flagged}
    for seq, theirs in (marks or {}).items():
        shown.setdefault(seq, []).extend(theirs)
    page = build_page(events, seat=review.seat, marks=shown, banners=banners)
    safe = msgspec.structs.replace(  # a newline in a name became the " · " between lines
        review, player=safe_or_none(review.player), match_id=safe_or_none(review.match_id),
        rules=safe_or_none(review.rules))  # a tab is blanks, not a name "\x09"
    # the match id, rules and name cut as the viewer cuts them (a 20,000-character id filled
    # the panel); whole in the heading's tooltip
    short = msgspec.structs.replace(
        safe, player=cut(safe.player, NAME_IN_MOVES), match_id=cut(safe.match_id, ID_SHOWN),
        rules=cut(safe.rules, ID_SHOWN))
    data = {
        "version": review.version,  # the layout of this data (REVIEW_VERSION)
        "seat": review.seat,
        "head": header(short).replace("\n", " · "),
        "parts": _head_parts(short),
        "whole": header(safe).replace("\n", " · "),
        "wparts": _head_parts(safe),  # the tooltip's, isolated as the heading's
        "summary": f"{review.decisions} decision{'' if review.decisions == 1 else 's'}, "
                   f"{review.mistakes} mistake{'' if review.mistakes == 1 else 's'}, "
                   f"{review.lost:.0f} points lost to them",
        "moves": {str(m.seq): {
            "played": m.played, "best": m.best, "cost": m.cost, "se": m.se, "flag": m.flagged,
            "low": m.low, "high": m.high, "pm": half_width(m), "verdict": verdict(m),
            "kind": m.kind,
            # under 2 the cost has no interval: the page says "± n/a", as the text does (the
            # stored pm, 0, read "± 0.0, 95%": a cost known exactly, where it is known least)
            "measured": m.measured,
            # each alternative's ± is its 95% interval's half, as the move's
            "alts": [[a.move, a.cost, t_quantile(m.measured - 1) * a.se if m.measured >= 2
                      else 0.0] for a in m.alternatives],
            "cards": _cards_of(m.best_event, events[0]),
        } for m in review.moves},
        "hands": [msgspec.to_builtins(h) for h in review.hands],
        # the text's last line when a time cap cut decisions short: the page said nothing of it
        "short": _cut_short(review),
    }
    blob = json_text(data)  # no "</script>", no raw control or bidi character
    folder = resources.files("buraco_log.view") / "template"
    css = (folder / "review.css").read_text("utf-8")
    js = (folder / "review.js").read_text("utf-8")
    extra = (f'<style>\n{css}</style>\n<script type="application/json" id="bl-review">{blob}'
             f"</script>\n<script>\n{js}</script>\n")
    html = page.html
    at = html.rfind("</body>")
    return html[:at] + extra + html[at:]


def safe_or_none(text: str) -> str:
    """``text`` as :func:`terminal_safe` shows it, or empty when it holds only blanks (a tab
    shown as ``\\x09`` read as a name, where :func:`header` names none)."""
    return terminal_safe(text) if text.strip() else ""


_SLOTS = {"\x00p\x00": "player", "\x00m\x00": "match_id", "\x00r\x00": "rules"}


def _head_parts(review: Review) -> list[str]:
    """The page's review heading in pieces, the odd ones the player's name, the match id and
    the rules' name, which the page isolates (``<bdi>``): a right-to-left id and rules' name
    ("in match ID (RULES)") were drawn as one right-to-left run, the rules first. Empty when
    the pieces would not make the heading exactly."""
    slotted = msgspec.structs.replace(  # a field left empty is not named: no slot for it
        review, **{v: k for k, v in _SLOTS.items() if getattr(review, v).strip()})
    parts = re.split("(" + "|".join(_SLOTS) + ")", header(slotted).replace("\n", " · "))
    parts[1::2] = [getattr(review, _SLOTS[p]) for p in parts[1::2]]
    return parts if "".join(parts) == header(review).replace("\n", " · ") else []


def _cards_of(event: dict[str, Any], start: AnyEvent) -> list[int]:
    """Card codes a move puts down (to pick them out in the hand on the page)."""
    from buraco_log.cards import parse_card

    cards: list[Any] = list(event.get("cards", ()))
    if "card" in event and event["t"] in ("dc", "rj"):
        cards.append(event["card"])
    out = []
    for c in cards:
        try:
            out.append(parse_card(c) if isinstance(c, str) else int(c))
        except Exception:
            continue
    return out
