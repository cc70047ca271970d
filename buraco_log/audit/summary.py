"""What ``buraco-log show`` prints: a match at a glance."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from buraco_log.audit.files import AnyPath, path_text
from buraco_log.audit.findings import NO_SNAPSHOTS
from buraco_log.audit.integrity import Integrity, LogStream, not_started_count, read_log
from buraco_log.errors import LogFormatError
from buraco_log.events import (
    AnyEvent,
    MatchStarted,
)
from buraco_log.rules import PRESETS, Rules
from buraco_log.timeline import (
    MeldView,
    Streamed,
    Timeline,
    card_style,
    name_or_seat,
    stock_end,
    table_view,
)


class SeatLine(msgspec.Struct, frozen=True):
    """A seat of the match: who sat there, and their side."""

    seat: int
    name: str
    id: str | None
    side: int


class HandSummary(msgspec.Struct, frozen=True):
    """One hand as `show` lists it: dealer, how it ended, who went out, the scores."""

    hand: int
    dealer: int
    reason: str
    went_out: int | None  # seat that went out
    went_out_name: str | None
    scores: tuple[int, ...]  # recomputed, per side
    recorded: tuple[int, ...] | None
    cumulative: tuple[int, ...]
    canastras: tuple[dict[str, int], ...]  # per side, by class
    turns: int
    # why the hand ended in `replay`'s words: "a player went out", or the stock's end as the
    # rules have it ("the stock ran out"; mega: "the stock is down to its last 2 cards")
    ended: str = ""


class ScoreMismatch(msgspec.Struct, frozen=True):
    """A recorded score (a hand's, or the match totals) that differs from the recomputed one:
    the replay goes on with the recomputed score, so the summary shows it, and this says it."""

    seq: int | None
    rule: str  # score.mismatch
    message: str  # the reducer's: "hand 0: side 0: recorded 440, recomputed 340 (+100)"


class SideMelds(msgspec.Struct, frozen=True):
    side: int
    melds: tuple[MeldView, ...]


class TableMelds(msgspec.Struct, frozen=True):
    """The melds on the table when the last hand read ended (or where the log stops), each
    with where its wild stands: what ``show`` prints below the summary."""

    hand: int
    seq: int
    sides: tuple[SideMelds, ...]


class Summary(msgspec.Struct, frozen=True):
    """What ``buraco-log show`` prints: the match at a glance."""

    path: str
    match_id: str | None
    preset: str | None
    overrides: dict[str, Any]  # house-rule knobs that differ from the preset
    players: tuple[SeatLine, ...]
    sides: int
    events: int
    hands: tuple[HandSummary, ...]
    totals: tuple[int, ...]
    canastras: tuple[dict[str, int], ...]  # per side, whole match
    went_out: dict[str, int]  # player name -> hands gone out
    winner: int | None
    complete: bool
    first_illegal: str | None
    integrity: Integrity | None
    # a log of a match that never received an event (as `audit` says it): no finding
    not_started: bool = False
    # recorded scores that differ from the recomputed ones (hands and match totals), in seq
    # order: findings, as `audit` reports them (the table shows only the recomputed score)
    score_mismatches: tuple[ScoreMismatch, ...] = ()
    # the melds on the table at the last event read; None: no meld on it (``-f json`` of
    # `show` had none of what its table prints)
    melds: TableMelds | None = None
    # the rules' stock floor (RULES.md §8): a hand ends "stock_out" with this many cards left
    # in the stock (mega: 2); None when the rules are unknown
    stock_floor: int | None = None
    # the rules' name is no preset's: the preset the overrides are told against, the nearest
    # (``rule_base``); None when the name says which
    nearest: str | None = None


def rule_base(rules: Rules) -> tuple[str, bool]:
    """The preset a rules value's knobs are told against, and whether its name says so: the
    preset of that name, or the one a house-rules name starts from (``classic+house``). A name
    that is no preset's (house rules named freely, ``name = "turbo"``, or a preset of a newer
    release) is only a label: the match is played by the knobs the log records, every one of
    which this release knows. They are told against the preset they differ from least (False):
    every knob was listed as a house rule, the preset's own among them."""
    for name in (rules.name, rules.name.split("+", 1)[0]):
        if name in PRESETS:
            return name, True
    mine = _knobs(rules)

    def differing(name: str) -> int:
        theirs = _knobs(PRESETS[name])
        return sum(k != "name" and theirs.get(k) != v for k, v in mine.items())

    return min(PRESETS, key=differing), False  # a tie: the first preset in PRESETS


def rule_overrides(rules: Rules) -> dict[str, Any]:
    """Knobs that differ from the preset of the same name, or the preset a house-rules name
    starts from (``classic+house``), or, for a name that is no preset's, the nearest preset
    (:func:`rule_base`)."""
    theirs = _knobs(PRESETS[rule_base(rules)[0]])
    mine = _knobs(rules)
    return {k: v for k, v in mine.items() if k != "name" and theirs.get(k) != v}


def _knobs(rules: Rules) -> dict[str, Any]:
    """Every knob by its dotted name, as the rules read it: a log written before
    ``morto_voided_by`` holds none and is played as "any_end" (every preset says
    "opponent_out"), which was no house rule of a "classic" log from then."""
    return {**_flat(msgspec.to_builtins(rules)), "morto_voided_by": rules.morto_voiding()}


def _nearest(rules: Rules) -> str | None:
    base, named = rule_base(rules)
    return None if named else base


def _flat(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def summarize(events: Iterable[AnyEvent], *, path: str = "",
              integrity: Integrity | None = None) -> Summary:
    """A match summary (replays up to the first illegal event, if any)."""
    events = events if isinstance(events, Sequence) else list(events)  # a Reader, say
    return summarize_timeline(Timeline(events, snapshot_every=NO_SNAPSHOTS), path=path,
                              integrity=integrity)


def summarize_stream(stream: LogStream) -> Summary:
    """:func:`summarize` of a log read once and never held (the summary needs no event
    twice): memory bounded by the table, where the list of 20 million events was 3 GB. The
    stream's integrity and signatures are known when it returns. Raises
    :class:`LogFormatError` for a file that is no log at all (as :func:`read_and_summarize`)."""
    tl = Timeline(stream, stream=Streamed(recent=0))
    integrity = stream.integrity
    if integrity.status == "unreadable":
        raise LogFormatError(integrity.message or "cannot read", path=stream.path,
                             kind="unreadable")
    return summarize_timeline(tl, path=stream.path, integrity=integrity)


def summarize_timeline(tl: Timeline, *, path: str = "", integrity: Integrity | None = None
                       ) -> Summary:
    """The summary of a match already replayed (a timeline of a list, or a streamed one)."""
    state = tl.final
    start = tl.first if isinstance(tl.first, MatchStarted) else None
    players = state.players
    # A match carried in (TotalsCarried) runs on from its carried totals, so the last hand's
    # running total is the match total (it ran from 0, short by the carried totals).
    cumulative = [t - sum(r.scores[i].total for r in state.results)
                  for i, t in enumerate(state.totals)] or [0] * state.n_sides
    hands = []
    whole: list[dict[str, int]] = [{} for _ in range(state.n_sides)]
    went_out: dict[str, int] = {}
    # Two players of one name (two Anas, two bots alike) must not merge into one: their seat
    # tells them apart wherever the summary names a player by name alone.
    names = [p.name for p in players]
    label = [name_or_seat(i, n) if names.count(n) == 1 or not n.strip() else f"{n} (seat {i})"
             for i, n in enumerate(names)]
    for r in state.results:
        cumulative = [a + s.total for a, s in zip(cumulative, r.scores, strict=True)]
        for s in r.scores:
            for cls, n in s.canastras.items():
                whole[s.side][cls] = whole[s.side].get(cls, 0) + n
        name = label[r.went_out] if r.went_out is not None else None
        if name is not None:
            went_out[name] = went_out.get(name, 0) + 1
        hands.append(HandSummary(
            hand=r.hand, dealer=r.dealer, reason=r.reason, went_out=r.went_out,
            went_out_name=name, scores=tuple(s.total for s in r.scores), recorded=r.recorded,
            cumulative=tuple(cumulative), canastras=tuple(dict(s.canastras) for s in r.scores),
            turns=r.turns, ended=_ended(r.reason, tl.rules),
        ))
    illegal = None
    if tl.illegal is not None:
        illegal = f"seq {tl.illegal.seq} [{tl.illegal.rule}] {tl.illegal.explanation}"
    return Summary(
        path=path,
        match_id=start.match_id if start is not None else None,
        preset=start.rules.name if start is not None else None,
        overrides=rule_overrides(start.rules) if start is not None else {},
        nearest=_nearest(start.rules) if start is not None else None,
        players=tuple(SeatLine(i, p.name, p.id, state.sides[i]) for i, p in enumerate(players)),
        sides=state.n_sides,
        events=tl.count,
        hands=tuple(hands),
        totals=state.totals,
        canastras=tuple(whole),
        went_out=went_out,
        winner=state.winner,
        complete=state.phase == "over",
        first_illegal=illegal,
        integrity=integrity,
        not_started=integrity is not None and not_started_count(tl.count, integrity),
        score_mismatches=tuple(ScoreMismatch(m.seq, m.rule, m.explanation)
                               for m in tl.score_mismatches),
        melds=_table_melds(tl) if tl.checked else None,
        stock_floor=tl.rules.stock_floor if tl.rules is not None else None,
    )


def _ended(reason: str, rules: Rules | None) -> str:
    """Why a hand ended, as `replay` says it (``describe_event``'s hand end)."""
    if reason == "went_out":
        return "a player went out"
    return stock_end(rules, "tile" if card_style(rules) == "tiles" else "card")


def _table_melds(tl: Timeline) -> TableMelds | None:
    """The melds of the last state read (the final one: no second replay)."""
    view = table_view(tl.final)
    if not any(side.melds for side in view.sides):
        return None
    return TableMelds(view.hand, view.seq,
                      tuple(SideMelds(side.side, side.melds) for side in view.sides))


def show_log(path: AnyPath) -> Summary:
    """Read a log (tolerating damage, reported in ``integrity``) and summarize it."""
    return read_and_summarize(path)[0]


def read_and_summarize(path: AnyPath) -> tuple[Summary, list[AnyEvent]]:
    """:func:`show_log`, and the events it read: a caller that shows more of the match reads
    the log once (a log of a million events took as long again to read twice)."""
    path = path_text(path)  # a bytes path names the file, not "b'...'"
    events, integrity = read_log(path)
    if integrity.status == "unreadable":
        raise LogFormatError(integrity.message or "cannot read", path=path,
                             kind="unreadable")
    return summarize(events, path=path, integrity=integrity), events
