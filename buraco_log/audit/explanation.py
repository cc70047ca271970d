"""Why an event was or was not legal, and the facts of the table that decided it."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import msgspec

from buraco_log.audit.files import path_text
from buraco_log.audit.findings import Finding, to_dict
from buraco_log.audit.integrity import load
from buraco_log.audit.scores import score_lines
from buraco_log.cards import Style, counted
from buraco_log.errors import BuracoLogError, IllegalMoveError, PositionError, position
from buraco_log.events import (
    AnyEvent,
    CardsLaidOff,
    HandEnded,
    HandStarted,
    MeldLaid,
)
from buraco_log.melds import MeldError, read_meld
from buraco_log.reducer import apply, validate
from buraco_log.ruleids import describe
from buraco_log.rules import Rules
from buraco_log.state import State
from buraco_log.timeline import (
    TableView,
    Timeline,
    describe_event,
    seat_named,
    table_view,
)


class Explanation(msgspec.Struct, frozen=True):
    """Why the event at ``seq`` was or was not legal, and the facts that decided it."""

    path: str
    seq: int
    event: str  # the event in words
    data: dict[str, Any]
    legal: bool
    rule: str | None
    description: str | None
    message: str | None
    facts: tuple[str, ...]
    before: TableView
    note: str | None  # e.g. an earlier illegal event, explained instead
    # What the audit finds about this event besides its legality: a deal its committed seeds
    # do not give (``deal.mismatch``) is legal by the rules of play, and was said only "LEGAL:
    # every rule for this event is met" to a referee asking whether the deal was rigged.
    findings: tuple[Finding, ...] = ()


def explain_event(events: Iterable[AnyEvent], seq: int, *, path: str = "",
                  timeline: Timeline | None = None) -> Explanation:
    """Explain the event at ``seq`` against the table just before it. ``timeline``: the one
    of these very events, when the caller has it (`explain` asks it of a later illegal event
    too: building it twice doubled the command's time on a long log)."""
    seq = position(seq, "seq")  # True is no seq 1, nor '3' seq 3
    # read twice below: an iterator (a Reader) was used up by the first read, and the
    # timeline then held no event ("the log has no seq 4")
    events = events if isinstance(events, Sequence) else list(events)
    if _last_of(events, seq) is None:
        if not events:
            # a match not started (as `replay` and `view` say it): no seq to explain (2)
            raise PositionError(f"the log holds no events yet (a match not started): there is "
                                f"no seq {seq} [log.empty]", seq=seq)
        raise PositionError(f"the log has no seq {seq} (seqs 0 to {events[-1].seq})", seq=seq)
    tl = timeline if timeline is not None else Timeline(events)
    note = None
    if tl.illegal is not None and tl.illegal.seq is not None and tl.illegal.seq < seq:
        note = (f"seq {seq} follows an illegal event at seq {tl.illegal.seq}; the table after "
                f"it is unknown, so that event is explained instead")
        seq = tl.illegal.seq
    ev = _last_of(events, seq)
    assert ev is not None  # held: the seq asked for, or the illegal event's
    # The table before the first illegal event is the one it was refused against, even
    # when that event does not follow the legal ones by seq (a log starting at seq 100).
    before = (tl.before_illegal if tl.illegal is not None and tl.illegal.seq == seq
              and tl.before_illegal is not None else tl.state_at(seq - 1))
    style = tl.style
    rule = message = None
    try:
        try:
            validate(before, ev)
        except (IndexError, KeyError, TypeError, ValueError) as bad:
            raise IllegalMoveError("event.invalid", f"unreadable event: {bad}", seq=seq) from None
    except IllegalMoveError as exc:
        rule, message = exc.rule, exc.explanation
    return Explanation(
        path=path, seq=seq, event=describe_event(ev, tl.players, style, rules=tl.rules),
        data=to_dict(ev),
        legal=rule is None, rule=rule,
        description=describe(rule, tiles=style == "tiles") if rule else None,
        message=message, facts=tuple(_facts(before, ev, style)),
        before=table_view(before, recent=tl.recent(before.seq)), note=note,
        findings=_deal_findings(events, ev, illegal=rule is not None),
    )


def _last_of(events: Sequence[AnyEvent], seq: int) -> AnyEvent | None:
    """The last event of ``seq``, as a dict of the events by seq gives it, without the dict
    (32 bytes an event: 650 MB at 20 million); from the end, where `--at` mostly points."""
    return next((e for e in reversed(events) if e.seq == seq), None)


def _deal_findings(events: Sequence[AnyEvent], ev: AnyEvent, *, illegal: bool = False
                   ) -> tuple[Finding, ...]:
    """The provenance findings of a deal (a hand start), re-derived from the log's seeds; of
    an illegal event, the changed deal it follows from (``audit``'s legality line says it:
    with the deal its seeds give, the hand replays legally through it)."""
    if not isinstance(ev, HandStarted) and not illegal:
        return ()
    from buraco_log.audit.deals import provenance

    prov = provenance(events)
    if isinstance(ev, HandStarted):
        return tuple(f for f in prov.findings if f.seq == ev.seq)
    from buraco_log.audit.causes import deal_behind

    cause = deal_behind(events, prov, ev.seq)
    return tuple(f for f in prov.findings if cause is not None and f.seq == cause
                 and f.rule == "deal.mismatch")


def explain(path: str | os.PathLike[str], seq: int) -> Explanation:
    """Read a log strictly and explain the event at ``seq``."""
    path = path_text(path)
    return explain_event(load(path), seq, path=path)


def _meld_reading(s: State, ev: MeldLaid | CardsLaidOff, r: Rules,
                  cs: Callable[[Iterable[int]], str]) -> Iterator[str]:
    """How the cards the event puts on the table read as a meld, or why they do not."""
    cards: tuple[int, ...] = ev.cards
    if isinstance(ev, CardsLaidOff):
        side = s.sides[ev.seat] if 0 <= ev.seat < len(s.sides) else None
        if side is None or not 0 <= ev.meld < len(s.melds[side]):
            return
        cards = s.melds[side][ev.meld].cards + ev.cards
    try:
        reading = read_meld(cards, r)
    except MeldError as exc:
        # the cards are named once, in the rules' rendering (tiles for Burako): the detail only
        yield f"{cs(cards)} do not form a meld [{exc.rule}]: {exc.detail}"
        return
    except (IndexError, ValueError):
        return
    wild = f", wild {cs((reading.wild,))}" if reading.wild is not None else ""
    badge = f", a {reading.canastra.replace('_', '-')} canastra" if reading.canastra else ""
    unit = "tiles" if r.rendering == "tiles" else "cards"  # Burako's tiles (RULES.md §1)
    yield f"{cs(cards)} read as a {reading.kind} of {reading.size} {unit}{wild}{badge}"


def _facts(s: State, ev: AnyEvent, style: Style) -> Iterator[str]:
    """The facts of the table the rules look at for this kind of event."""
    from buraco_log.cards import format_cards

    def cs(cards: Iterable[int]) -> str:
        try:
            return format_cards(cards, style) or "none"
        except BuracoLogError:
            return repr(tuple(cards))

    r = s.rules
    # A table drawn in tiles (Burako) is told in tiles: RULES.md §1, only the rendering differs.
    unit = "tile" if style.startswith("tiles") else "card"
    yield f"phase before the event: {s.phase}; last seq {s.seq}"
    if r is None or not s.players:
        return
    yield f"rules: {r.name}"
    if s.phase in ("new", "between", "over", "decided"):
        yield (f"hands played: {len(s.results)}; match totals {list(s.totals)}; target "
               f"{r.target_score}" + (f"; side {s.winner} has won" if s.winner is not None
                                      else ""))
        if isinstance(ev, HandStarted):
            n = len(s.players)
            hand = len(s.results)
            yield (f"next deal: hand {hand}, dealt by seat {(s.first_dealer + hand) % n}; "
                   f"{r.hand_size} {unit}s to each of {n} players"
                   + (f", {s.n_sides} mortos of {r.morto_size}" if r.morto else ", no morto")
                   + ((", one upcard" if r.initial_upcard else ", no upcard") if unit == "card"
                      else (", one tile turned up" if r.initial_upcard else ", none turned up"))
                   + (f"; material: two decks and {r.jokers} jokers" if unit == "card"
                      else f"; material: two sets of tiles and {r.jokers} jokers"))
        return
    yield f"turn: {seat_named(s.turn, s.players[s.turn].name)}, turn {s.turns} of hand {s.hand}"
    seat = getattr(ev, "seat", None)
    if seat is not None and seat != s.turn:
        yield f"the event is by seat {seat}, but it is seat {s.turn}'s turn"
    if seat is not None and 0 <= seat < len(s.players):
        side = s.sides[seat]
        yield f"seat {seat} holds {counted(len(s.hands[seat]), unit)}: {cs(s.hands[seat])}"
        melds = "; ".join(f"#{m.id} {cs(m.cards)}" + (f" [{m.canastra}]" if m.canastra else "")
                          for m in s.melds[side]) or "none"
        yield f"side {side} melds: {melds}"
        canastras = sum(1 for m in s.melds[side] if m.canastra)
        yield f"side {side} canastras: {canastras}"
        if r.morto:
            yield (f"side {side} morto: {'taken' if s.morto_taken[side] else 'not taken'}; "
                   f"preset: morto {'direct or indirect' if r.morto_direct else 'indirect only'}"
                   f"{', needs a canastra' if r.morto_needs_canastra else ''}")
        if r.go_out_needs_canastra:
            yield "preset: going out needs a canastra"
        if s.vulnerable and s.vulnerable[side]:
            yield (f"side {side} is vulnerable: opening minimum {s.opening_min[side]}, "
                   f"opened: {s.opened[side]}, points laid this turn {s.opening_points}")
    yield (f"stock: {counted(len(s.stock), unit)} (floor {r.stock_floor})"
           + (f", top {cs(s.stock[:1])}" if s.stock else ""))
    yield f"pile: {counted(len(s.pile), unit)}, top {cs(s.pile[-1:])}; pickup rule {r.pile_pickup}"
    if s.pile_top is not None:
        yield f"the pile's top {unit} {cs((s.pile_top,))} must still be used this turn"
    if s.drawn is not None:
        yield f"{unit} drawn this turn: {cs((s.drawn,))}"
    if s.laid_this_turn:
        yield f"laid this turn: {cs(s.laid_this_turn)}"
    if isinstance(ev, MeldLaid | CardsLaidOff):
        yield from _meld_reading(s, ev, r, cs)
        ace, rank = ("ace", "rank") if unit == "card" else ("1", "number")
        yield (f"meld rules: at least 3 {unit}s, at most one wild, at least two naturals; runs "
               f"up to {r.max_run()} {unit}s ({ace} at both ends: "
               f"{'yes' if r.ace_both_ends else 'no'}); sets per {rank} per side: "
               f"{r.max_sets_per_rank or 'any'}; canastra from {r.canastra_size} {unit}s"
               + ("" if r.canastra_from_sets else ", runs only"))
    if isinstance(ev, HandEnded):
        try:
            after = apply(s, ev)
        except (BuracoLogError, IndexError, KeyError, TypeError, ValueError):
            return  # nothing to score: the facts above say why
        for sc in after.results[-1].scores:
            items = ", ".join(f"{x.item} {x.points:+d}"
                              for x in score_lines(sc, tiles=unit == "tile"))
            yield f"side {sc.side} recomputed score {sc.total}: {items}"
