"""The referee's library: audit a match log, summarize it, compare two copies, explain a move.

:func:`audit_log` never raises for a bad log: whatever is wrong becomes a :class:`Finding` in the
returned :class:`Verdict`, in four sections:

- integrity: ``sealed``, ``unsealed``, ``torn`` (tail at an offset) or ``broken`` (at record N,
  byte offset, seq), or ``unreadable``. The later sections check the events read before damage.
- provenance: the deals re-derived from committed (or plain) seeds (:mod:`buraco_log.dealer`).
- legality: the first illegal event, with seq, rule id, seat, cards and the table just before.
- scoring: each hand's recorded score against the recomputed one, line by line.

Every rule id is documented in :mod:`buraco_log.ruleids`. Results are frozen msgspec structs:
``msgspec.to_builtins(verdict)`` is the stable JSON form ``buraco-log audit --format json``
prints. Core module: stdlib and msgspec only.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Literal

import msgspec

from buraco_log import log
from buraco_log.cards import Style
from buraco_log.dealer import check_deals
from buraco_log.errors import BuracoLogError, IllegalMoveError, LogFormatError, ReplayError
from buraco_log.events import (
    AnyEvent,
    CardsLaidOff,
    HandEnded,
    HandStarted,
    MatchEnded,
    MatchStarted,
    MeldLaid,
)
from buraco_log.melds import MeldError, read_meld
from buraco_log.reducer import apply, validate
from buraco_log.ruleids import describe
from buraco_log.rules import PRESETS, Rules
from buraco_log.scoring import explain_difference
from buraco_log.state import SideScore, State
from buraco_log.timeline import (
    TableView,
    Timeline,
    card_style,
    cards_text,
    describe_event,
    table_view,
)


def to_dict(event: AnyEvent) -> dict[str, Any]:
    """An event as a readable object with cards as text (the JSON Lines form)."""
    # Imported here: building the JSON Lines line decoder is slow, and a binary audit
    # (in every worker process) never needs it.
    from buraco_log.jsonl import event_to_json

    return event_to_json(event)


NO_SNAPSHOTS = 1 << 30
"""Snapshot spacing for one-pass replays that never jump."""

# -- results ----------------------------------------------------------------------------------

IntegrityStatus = Literal["sealed", "unsealed", "torn", "broken", "unreadable"]


class Finding(msgspec.Struct, frozen=True):
    """One problem: its section, stable rule id (see ``ruleids``), where, and one line."""

    section: Literal["integrity", "provenance", "legality", "scoring"]
    rule: str
    message: str
    seq: int | None = None
    offset: int | None = None  # byte offset in the file (integrity findings)


class Integrity(msgspec.Struct, frozen=True):
    """How the log's bytes held up. ``record`` counts records (segments) from 0."""

    status: IntegrityStatus
    format: Literal["binary", "jsonl"]
    events: int  # events read intact
    records: int  # intact records (segments; lines for JSON Lines)
    head: str  # head digest of the intact events
    offset: int | None = None  # where the damage or torn tail starts
    record: int | None = None  # which record is damaged or torn
    seq: int | None = None  # first seq not read
    kind: str | None = None  # the reader's kind of damage (rule id ``log.<kind>``)
    message: str | None = None


class Provenance(msgspec.Struct, frozen=True):
    """Where the deals came from. ``status``: committed, plain_seeds, mixed or none."""

    status: Literal["committed", "plain_seeds", "mixed", "none"]
    commitment: str | None
    revealed: bool  # the server seed was revealed at the match end
    deals: int
    findings: tuple[Finding, ...]


class IllegalEvent(msgspec.Struct, frozen=True):
    """The first illegal event and the table just before it."""

    seq: int
    tag: str | None
    rule: str
    description: str  # the rule in plain language (``ruleids``)
    message: str  # what happened, naming seat and cards
    seat: int | None
    cards: tuple[str, ...]
    event: dict[str, Any]
    before: TableView


class Legality(msgspec.Struct, frozen=True):
    events_checked: int  # events replayed legally
    complete: bool  # the match reached its end (MatchEnded)
    first_illegal: IllegalEvent | None


class ScoreLine(msgspec.Struct, frozen=True):
    item: str
    points: int


class SideCheck(msgspec.Struct, frozen=True):
    side: int
    recorded: int | None
    recomputed: int
    difference: int | None  # recorded - recomputed
    lines: tuple[ScoreLine, ...]  # the recomputed score line by line
    explanation: tuple[str, ...]  # filled when recorded and recomputed differ
    hint: str | None  # a line item the difference equals, when one does


class HandCheck(msgspec.Struct, frozen=True):
    hand: int
    end_seq: int
    reason: str
    went_out: int | None
    ok: bool
    sides: tuple[SideCheck, ...]


class Scoring(msgspec.Struct, frozen=True):
    hands: tuple[HandCheck, ...]
    totals_recorded: tuple[int, ...] | None
    totals_recomputed: tuple[int, ...]
    ok: bool


class Verdict(msgspec.Struct, frozen=True):
    """One log's audit. ``ok`` is True when there are no findings (exit status 0)."""

    path: str
    match_id: str | None
    rules: str | None
    players: tuple[str, ...]
    events: int
    ok: bool
    findings: tuple[Finding, ...]
    integrity: Integrity
    provenance: Provenance
    legality: Legality
    scoring: Scoring


# -- reading ----------------------------------------------------------------------------------


def is_log_file(path: str | os.PathLike[str]) -> bool:
    """A binary log (by its magic bytes or its ``.blog`` name) or a JSON Lines log (by its
    ``.jsonl`` name). A ``.blog`` file whose header is damaged is still a log, so that checking
    a directory reports it instead of passing over it."""
    p = str(path)
    if p.endswith((".jsonl", ".blog")):
        return True
    try:
        with open(p, "rb") as f:
            return f.read(len(log.MAGIC)) == log.MAGIC
    except OSError:
        return False


_BACKUP = re.compile(r"\.bak(\.\d+)?$")  # copies `log.repair` keeps of the damaged bytes


def find_logs(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """Files as given; directories searched recursively for logs, in name order (hidden
    files and the ``.bak`` copies that repair leaves are skipped)."""
    out: list[str] = []
    for p in paths:
        p = str(p)
        if os.path.isdir(p):
            found = []
            for root, dirs, files in os.walk(p):
                dirs.sort()
                found += [os.path.join(root, f) for f in sorted(files)
                          if not f.startswith(".") and not _BACKUP.search(f)
                          and is_log_file(os.path.join(root, f))]
            out += found
        else:
            out.append(p)
    return out


def read_log(path: str | os.PathLike[str]) -> tuple[list[AnyEvent], Integrity]:
    """The intact events of a log and its :class:`Integrity`. Never raises for bad bytes."""
    p = str(path)
    if p.endswith(".jsonl"):
        return _read_jsonl(p)
    events: list[AnyEvent] = []
    try:
        reader = log.Reader(p, allow_torn=True)
    except (OSError, LogFormatError) as exc:  # the reader reports OS failures as kind "io"
        return events, _unreadable(exc, "binary")
    with reader:
        try:
            for _, evs in reader.segments():
                events.extend(evs)
        except LogFormatError as exc:
            if exc.kind == "io":
                return events, _unreadable(exc, "binary")
            info = reader.info
            return events, Integrity(
                status="broken", format="binary", events=len(events), records=info.segments,
                head=info.head, offset=exc.offset,
                # The file header is no record: its damage names none.
                record=None if exc.kind == "header" or (exc.offset is not None
                                                        and exc.offset < log.HEADER_SIZE)
                else info.segments, seq=exc.seq, kind=exc.kind, message=exc.message,
            )
        except OSError as exc:
            return events, _unreadable(exc, "binary")
        info = reader.info
    if info.torn is not None:
        return events, Integrity(
            status="torn", format="binary", events=info.events, records=info.segments,
            head=info.head, offset=info.torn.offset, record=info.segments,
            seq=log.FIRST_SEQ + info.events, kind="torn", message=info.torn.reason,
        )
    return events, Integrity(
        status="sealed" if info.sealed else "unsealed", format="binary", events=info.events,
        records=info.segments, head=info.head,
    )


def _read_jsonl(path: str) -> tuple[list[AnyEvent], Integrity]:
    from buraco_log.jsonl import JsonlReader

    reader = JsonlReader(path)
    events: list[AnyEvent] = []
    try:
        for e in reader:
            events.append(e)
    except LogFormatError as exc:
        if exc.kind == "io":
            return events, _unreadable(exc, "jsonl")
        return events, Integrity(
            status="broken", format="jsonl", events=len(events), records=len(events),
            head=log.head_digest(events), record=exc.line, seq=exc.seq, kind=exc.kind,
            message=exc.message,
        )
    except OSError as exc:
        return events, _unreadable(exc, "jsonl")
    sealed = reader.end is not None and reader.end.get("head") is not None
    return events, Integrity(
        status="sealed" if sealed else "unsealed", format="jsonl", events=len(events),
        records=len(events), head=log.head_digest(events),
    )


def _unreadable(exc: OSError | LogFormatError, fmt: Literal["binary", "jsonl"]) -> Integrity:
    message = exc.message if isinstance(exc, LogFormatError) else exc.strerror or str(exc)
    return Integrity(status="unreadable", format=fmt, events=0, records=0,
                     head=log.head_digest(()), kind="unreadable", message=message)


def load(path: str | os.PathLike[str]) -> list[AnyEvent]:
    """Every event of a log, strictly: damage raises :class:`LogFormatError` naming the file
    and offset (for the commands that show a match rather than judge it)."""
    p = str(path)
    if p.endswith(".jsonl"):
        from buraco_log.jsonl import read_jsonl

        return read_jsonl(p)
    return log.read_events(p)


# -- the four sections -------------------------------------------------------------------------


def _integrity_findings(integ: Integrity) -> list[Finding]:
    if integ.status in ("sealed", "unsealed"):
        return []
    if integ.status == "torn":
        msg = f"torn tail at byte {integ.offset} (record {integ.record}): {integ.message}"
    elif integ.status == "unreadable":
        msg = f"cannot read the log: {integ.message}"
    else:
        unit = "line" if integ.format == "jsonl" else "record"
        where = f"{unit} {integ.record}" if integ.record is not None else ""
        if integ.offset is not None:
            where += f", byte {integ.offset}" if where else f"byte {integ.offset}"
        msg = f"broken at {where}: {integ.message}" if where else f"broken: {integ.message}"
    return [Finding("integrity", f"log.{integ.kind}", msg, seq=integ.seq, offset=integ.offset)]


_DEAL_EVENTS = frozenset((MatchStarted, HandStarted, MatchEnded))


def provenance(events: Sequence[AnyEvent], require_commitment: bool = False) -> Provenance:
    """Deal provenance: every recorded deal re-derived from its committed or plain seeds."""
    start: MatchStarted | None = None
    end: MatchEnded | None = None
    deals = 0
    plain = 0
    for e in [e for e in events if type(e) in _DEAL_EVENTS]:  # exact types: final classes
        tp = type(e)
        if tp is HandStarted:
            deals += 1
            plain += e.seed is not None  # type: ignore[union-attr]
        elif tp is MatchStarted:
            if start is None:
                start = e  # type: ignore[assignment]
        elif tp is MatchEnded and end is None:
            end = e  # type: ignore[assignment]
    commitment = start.commitment if start is not None else None
    status: Literal["committed", "plain_seeds", "mixed", "none"]
    if commitment is not None:
        status = "mixed" if plain else "committed"
    else:
        status = "plain_seeds" if plain else "none"
    # Deal provenance is checked where seeds were committed (or given); an uncommitted match
    # has nothing to re-derive, and that is its status, not a finding.
    try:
        found = check_deals(events, require_commitment=require_commitment)
        if end is None:
            # The seed is revealed at the match end: not yet, in an unfinished (or cut) log.
            found = [f for f in found if f.rule != "deal.not_revealed"]
    except (BuracoLogError, ValueError, IndexError, KeyError, TypeError) as exc:
        found = []
        extra = [Finding("provenance", "deal.mismatch", f"cannot check the deals: {exc}")]
    else:
        extra = []
    return Provenance(
        status=status, commitment=commitment,
        revealed=end is not None and end.server_seed is not None, deals=deals,
        findings=tuple(Finding("provenance", f.rule, f.message, seq=f.seq) for f in found)
        + tuple(extra),
    )


def _illegal(tl: Timeline) -> IllegalEvent | None:
    exc = tl.illegal
    if exc is None or exc.seq is None:
        return None
    ev = next((e for e in tl.recorded if e.seq == exc.seq), None)
    before = tl.before_illegal or State()
    try:
        cards = cards_text(exc.cards, tl.style)
    except BuracoLogError:
        cards = tuple(str(c) for c in exc.cards)
    return IllegalEvent(
        seq=exc.seq, tag=exc.tag, rule=exc.rule, description=describe(exc.rule),
        message=exc.explanation, seat=exc.seat, cards=cards,
        event=to_dict(ev) if ev is not None else {},
        before=table_view(before, recent=tl.recent(before.seq)),
    )


def score_lines(s: SideScore) -> tuple[ScoreLine, ...]:
    """A side's hand score line by line, signed (RULES.md §9)."""
    lines = [ScoreLine("cards on the table", s.table_points)]
    for cls, n in sorted(s.canastras.items()):
        lines.append(ScoreLine(f"canastras {cls} x{n}", 0))
    lines.append(ScoreLine("canastra bonuses", s.canastra_bonus))
    lines.append(ScoreLine("going out", s.going_out))
    if s.relancinho:
        lines.append(ScoreLine("relancinho", s.relancinho))
    lines.append(ScoreLine("cards left in hand", -s.hand_penalty))
    lines.append(ScoreLine("morto not taken", -s.morto_penalty))
    return tuple(x for x in lines if not x.item.startswith("canastras "))


def _hint(diff: int, s: SideScore, rules: Rules | None) -> str | None:
    """Name the usual scorekeeping slips whose size the difference equals (at most three)."""
    guesses: list[str] = []

    def bonus(item: str, actual: int, nominal: int) -> None:
        if actual and diff == actual:
            guesses.append(f"the {item} ({actual}) counted twice")
        elif actual and diff == -actual:
            guesses.append(f"the {item} ({actual}) left out")
        elif not actual and nominal and diff == nominal:
            guesses.append(f"a {item} ({nominal}) counted though not earned")

    def penalty(item: str, actual: int, nominal: int) -> None:
        if actual and diff == actual:
            guesses.append(f"the {item} ({actual}) not subtracted")
        elif actual and diff == 2 * actual:
            guesses.append(f"the {item} ({actual}) added instead of subtracted")
        elif actual and diff == -actual:
            guesses.append(f"the {item} ({actual}) subtracted twice")
        elif not actual and nominal and diff == -nominal:
            guesses.append(f"a {item} ({nominal}) charged though not due")

    b = rules.bonuses if rules is not None else None
    bonus("going-out bonus", s.going_out, b.going_out if b else 0)
    penalty("cards left in hand", s.hand_penalty, 0)
    penalty("morto penalty", s.morto_penalty, b.morto_not_taken if b and rules and rules.morto
            else 0)
    bonus("cards on the table", s.table_points, 0)
    if b is not None:
        for cls in ("clean", "dirty", "semi_clean", "royal", "ace_to_ace"):
            size = int(getattr(b, cls))
            name = cls.replace("_", "-")
            if size and diff == size:
                guesses.append(f"one {name} canastra bonus ({size}) too many")
            elif size and diff == -size and s.canastras.get(cls):
                guesses.append(f"one {name} canastra bonus ({size}) missing")
    if not guesses:
        return None
    return "the difference matches " + "; or ".join(guesses[:3])


def _scoring(tl: Timeline) -> tuple[Scoring, list[Finding]]:
    state = tl.final
    findings: list[Finding] = []
    hands = []
    for r in state.results:
        sides = []
        for s in r.scores:
            rec = r.recorded[s.side] if r.recorded is not None and s.side < len(r.recorded) \
                else None
            diff = None if rec is None else rec - s.total
            bad = diff is not None and diff != 0
            sides.append(SideCheck(
                side=s.side, recorded=rec, recomputed=s.total, difference=diff,
                lines=score_lines(s),
                explanation=tuple(explain_difference(rec, s)) if bad and rec is not None else (),
                hint=_hint(diff, s, state.rules) if bad and diff is not None else None,
            ))
            if bad:
                findings.append(Finding(
                    "scoring", "score.mismatch",
                    f"hand {r.hand}, side {s.side}: recorded {rec}, recomputed {s.total} "
                    f"(difference {diff:+d})", seq=r.end_seq))
        if r.recorded is not None and len(r.recorded) != len(r.scores):
            findings.append(Finding(
                "scoring", "score.mismatch",
                f"hand {r.hand}: {len(r.recorded)} scores recorded for {len(r.scores)} sides",
                seq=r.end_seq))
        hands.append(HandCheck(
            hand=r.hand, end_seq=r.end_seq, reason=r.reason, went_out=r.went_out,
            ok=all(x.difference in (None, 0) for x in sides)
            and (r.recorded is None or len(r.recorded) == len(r.scores)),
            sides=tuple(sides),
        ))
    end = next((e for e in tl.events if isinstance(e, MatchEnded)), None)
    recorded = end.totals if end is not None else None
    if recorded is not None and recorded != state.totals:
        findings.append(Finding(
            "scoring", "score.mismatch",
            f"match totals: recorded {list(recorded)}, recomputed {list(state.totals)}",
            seq=end.seq if end is not None else None))
    return Scoring(hands=tuple(hands), totals_recorded=recorded,
                   totals_recomputed=state.totals, ok=not findings), findings


# -- the audit ---------------------------------------------------------------------------------


def audit_events(events: Sequence[AnyEvent], integrity: Integrity, path: str = "", *,
                 require_commitment: bool = False) -> Verdict:
    """Audit events already read (``integrity`` says how the bytes held up).

    With ``require_commitment``, deals that no commitment or plain seed backs are findings
    (``deal.commitment_missing``), for sites where every deal must be provably fair.
    """
    findings = _integrity_findings(integrity)
    if not events and integrity.status in ("sealed", "unsealed"):
        findings.append(Finding("legality", "audit.empty", "the log holds no events"))
    prov = provenance(events, require_commitment)
    findings += prov.findings
    tl = Timeline(events, snapshot_every=NO_SNAPSHOTS)  # the audit never jumps back
    illegal = _illegal(tl)
    if illegal is not None:
        findings.append(Finding("legality", illegal.rule,
                                f"first illegal event: seq {illegal.seq}: {illegal.message}",
                                seq=illegal.seq))
    # A wrong winner is a legality matter the reducer meets only after the totals check.
    end = next((e for e in tl.events if isinstance(e, MatchEnded)), None)
    if (illegal is None and end is not None and end.winner is not None
            and end.winner != tl.final.winner and tl.final.winner is not None):
        findings.append(Finding("legality", "match.wrong_winner",
                                f"recorded winner side {end.winner}, but side "
                                f"{tl.final.winner} won", seq=end.seq))
    scoring, score_findings = _scoring(tl)
    findings += score_findings
    start = events[0] if events and isinstance(events[0], MatchStarted) else None
    return Verdict(
        path=path,
        match_id=start.match_id if start is not None else None,
        rules=start.rules.name if start is not None else None,
        players=tuple(p.name for p in start.players) if start is not None else (),
        events=len(events),
        ok=not findings,
        findings=tuple(findings),
        integrity=integrity,
        provenance=prov,
        legality=Legality(events_checked=len(tl.events), complete=tl.final.phase == "over",
                          first_illegal=illegal),
        scoring=scoring,
    )


def audit_log(path: str | os.PathLike[str], *, require_commitment: bool = False) -> Verdict:
    """Audit one log file (binary, or JSON Lines by its ``.jsonl`` name).

    Never raises for a bad log: unreadable files, damage, illegal moves and wrong scores all
    come back as findings. ``verdict.ok`` is True when there are none.
    """
    events, integrity = read_log(path)
    return audit_events(events, integrity, str(path), require_commitment=require_commitment)


def audit_many(
    paths: Sequence[str], *, workers: int = 1,
    on_done: Callable[[Verdict], None] | None = None, require_commitment: bool = False,
) -> list[Verdict]:
    """Audit many logs, in ``workers`` processes; results in the order of ``paths``.

    ``on_done`` is called in this process as each verdict arrives (for a progress bar).
    """
    if workers <= 1 or len(paths) <= 1:
        out = []
        for p in paths:
            v = _audit_safely(p, require_commitment)
            if on_done is not None:
                on_done(v)
            out.append(v)
        return out
    results: list[Verdict | None] = [None] * len(paths)
    chunk = max(1, min(64, len(paths) // (workers * 8)))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        flags = [require_commitment] * len(paths)
        for i, v in enumerate(pool.map(_audit_safely, paths, flags, chunksize=chunk)):
            results[i] = v
            if on_done is not None:
                on_done(v)
    return [v for v in results if v is not None]


def _audit_safely(path: str, require_commitment: bool = False) -> Verdict:
    """:func:`audit_log`, with a defect of the audit itself reported as a finding of that log
    (rule ``audit.error``) so that one log never stops a batch."""
    try:
        return audit_log(path, require_commitment=require_commitment)
    except Exception as exc:  # a defect in buraco_log, not in the log: keep the batch going
        integrity = Integrity(status="unreadable", format="binary", events=0, records=0,
                              head=log.head_digest(()), kind="error",
                              message=f"{type(exc).__name__}: {exc}")
        return Verdict(
            path=path, match_id=None, rules=None, players=(), events=0, ok=False,
            findings=(Finding("integrity", "audit.error",
                              f"the audit failed: {type(exc).__name__}: {exc}"),),
            integrity=integrity,
            provenance=Provenance("none", None, False, 0, ()),
            legality=Legality(0, False, None),
            scoring=Scoring((), None, (), True),
        )


# -- show ---------------------------------------------------------------------------------------


class SeatLine(msgspec.Struct, frozen=True):
    seat: int
    name: str
    id: str | None
    side: int


class HandSummary(msgspec.Struct, frozen=True):
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


def rule_overrides(rules: Rules) -> dict[str, Any]:
    """Knobs that differ from the preset of the same name (all knobs for an unknown name)."""
    base = PRESETS.get(rules.name)
    mine = _flat(msgspec.to_builtins(rules))
    if base is None:
        return {k: v for k, v in mine.items() if k != "name"}
    theirs = _flat(msgspec.to_builtins(base))
    return {k: v for k, v in mine.items() if theirs.get(k) != v}


def _flat(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def summarize(events: Sequence[AnyEvent], *, path: str = "",
              integrity: Integrity | None = None) -> Summary:
    """A match summary (replays up to the first illegal event, if any)."""
    tl = Timeline(events, snapshot_every=NO_SNAPSHOTS)
    state = tl.final
    start = events[0] if events and isinstance(events[0], MatchStarted) else None
    players = state.players
    cumulative = [0] * state.n_sides
    hands = []
    whole: list[dict[str, int]] = [{} for _ in range(state.n_sides)]
    went_out: dict[str, int] = {}
    for r in state.results:
        cumulative = [a + s.total for a, s in zip(cumulative, r.scores, strict=True)]
        for s in r.scores:
            for cls, n in s.canastras.items():
                whole[s.side][cls] = whole[s.side].get(cls, 0) + n
        name = players[r.went_out].name if r.went_out is not None else None
        if name is not None:
            went_out[name] = went_out.get(name, 0) + 1
        hands.append(HandSummary(
            hand=r.hand, dealer=r.dealer, reason=r.reason, went_out=r.went_out,
            went_out_name=name, scores=tuple(s.total for s in r.scores), recorded=r.recorded,
            cumulative=tuple(cumulative), canastras=tuple(dict(s.canastras) for s in r.scores),
            turns=r.turns,
        ))
    illegal = None
    if tl.illegal is not None:
        illegal = f"seq {tl.illegal.seq} [{tl.illegal.rule}] {tl.illegal.explanation}"
    return Summary(
        path=path,
        match_id=start.match_id if start is not None else None,
        preset=start.rules.name if start is not None else None,
        overrides=rule_overrides(start.rules) if start is not None else {},
        players=tuple(SeatLine(i, p.name, p.id, state.sides[i]) for i, p in enumerate(players)),
        sides=state.n_sides,
        events=len(events),
        hands=tuple(hands),
        totals=state.totals,
        canastras=tuple(whole),
        went_out=went_out,
        winner=state.winner,
        complete=state.phase == "over",
        first_illegal=illegal,
        integrity=integrity,
    )


def show_log(path: str | os.PathLike[str]) -> Summary:
    """Read a log (tolerating damage, reported in ``integrity``) and summarize it."""
    events, integrity = read_log(path)
    if integrity.status == "unreadable":
        raise LogFormatError(integrity.message or "cannot read", path=str(path),
                             kind="unreadable")
    return summarize(events, path=str(path), integrity=integrity)


# -- diff ---------------------------------------------------------------------------------------


class Diff(msgspec.Struct, frozen=True):
    """Two copies of one match compared event by event."""

    a: str
    b: str
    events_a: int
    events_b: int
    identical: bool
    diverge_seq: int | None  # first seq where the copies differ (or where the shorter ends)
    event_a: dict[str, Any] | None  # that event in each copy, None past the end
    event_b: dict[str, Any] | None
    words_a: str | None  # those events in words, cards in the rules' rendering
    words_b: str | None
    differences: tuple[str, ...]  # field by field
    prefix: Literal["a", "b"] | None  # which copy is a strict prefix of the other
    head_a: str
    head_b: str
    heads_equal: bool
    integrity_a: IntegrityStatus
    integrity_b: IntegrityStatus


def diff_events(a: Sequence[AnyEvent], b: Sequence[AnyEvent]) -> tuple[
        int | None, tuple[str, ...], Literal["a", "b"] | None]:
    """First diverging seq, what differs there, and which list is a strict prefix."""
    for x, y in zip(a, b, strict=False):
        if x != y:
            return x.seq, _field_diffs(to_dict(x), to_dict(y)), None
    if len(a) == len(b):
        return None, (), None
    shorter: Literal["a", "b"] = "a" if len(a) < len(b) else "b"
    n = min(len(a), len(b))
    longer = b if shorter == "a" else a
    return longer[n].seq, (f"copy {shorter} ends after {n} events; the other goes on",), shorter


def _field_diffs(x: dict[str, Any], y: dict[str, Any]) -> tuple[str, ...]:
    if x.get("t") != y.get("t"):
        return (f"event type: {x.get('t')} vs {y.get('t')}",)
    out = []
    for k in list(dict.fromkeys([*x, *y])):
        if x.get(k) != y.get(k):
            out.append(f"{k}: {_short(x.get(k))} vs {_short(y.get(k))}")
    return tuple(out)


def _short(v: Any) -> str:
    text = v if isinstance(v, str) else repr(v)
    return text if len(text) <= 120 else text[:117] + "..."


def diff_logs(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> Diff:
    """Compare two copies of a match: first divergence, prefix relation, head digests."""
    ea, ia = read_log(a)
    eb, ib = read_log(b)
    for p, events, integ in ((a, ea, ia), (b, eb, ib)):
        if integ.status == "unreadable":
            raise LogFormatError(integ.message or "cannot read", path=str(p), kind="unreadable")
        if not events and integ.status == "broken":  # not a log at all: nothing to compare
            raise LogFormatError(f"not a readable log: {integ.message}", path=str(p),
                                 offset=integ.offset, kind=integ.kind or "damage")
    seq, diffs, prefix = diff_events(ea, eb)
    i = None if seq is None else seq - log.FIRST_SEQ
    start = next((e for e in (*ea[:1], *eb[:1]) if isinstance(e, MatchStarted)), None)
    players = start.players if start is not None else ()
    style = card_style(start.rules if start is not None else None)

    def words(events: list[AnyEvent]) -> str | None:
        if i is None or i >= len(events):
            return None
        return describe_event(events[i], players, style)

    return Diff(
        a=str(a), b=str(b), events_a=len(ea), events_b=len(eb),
        # Identical copies are whole ones: two copies damaged alike are not "identical".
        identical=seq is None and ia.head == ib.head
        and ia.status in ("sealed", "unsealed") and ib.status in ("sealed", "unsealed"),
        diverge_seq=seq,
        event_a=to_dict(ea[i]) if i is not None and i < len(ea) else None,
        event_b=to_dict(eb[i]) if i is not None and i < len(eb) else None,
        words_a=words(ea), words_b=words(eb),
        differences=diffs, prefix=prefix, head_a=ia.head, head_b=ib.head,
        heads_equal=ia.head == ib.head, integrity_a=ia.status, integrity_b=ib.status,
    )


# -- explain ------------------------------------------------------------------------------------


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


def explain_event(events: Sequence[AnyEvent], seq: int, *, path: str = "") -> Explanation:
    """Explain the event at ``seq`` against the table just before it."""
    by_seq = {e.seq: e for e in events}
    if seq not in by_seq:
        if not events:
            raise ReplayError("the log holds no events", seq=seq)
        raise ReplayError(f"the log has no seq {seq} (seqs 0 to {events[-1].seq})", seq=seq)
    tl = Timeline(events)
    note = None
    if tl.illegal is not None and tl.illegal.seq is not None and tl.illegal.seq < seq:
        note = (f"seq {seq} follows an illegal event at seq {tl.illegal.seq}; the table after "
                f"it is unknown, so that event is explained instead")
        seq = tl.illegal.seq
    ev = by_seq[seq]
    before = tl.state_at(seq - 1)
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
        path=path, seq=seq, event=describe_event(ev, tl.players, style), data=to_dict(ev),
        legal=rule is None, rule=rule, description=describe(rule) if rule else None,
        message=message, facts=tuple(_facts(before, ev, style)),
        before=table_view(before, recent=tl.recent(seq - 1)), note=note,
    )


def explain(path: str | os.PathLike[str], seq: int) -> Explanation:
    """Read a log strictly and explain the event at ``seq``."""
    return explain_event(load(path), seq, path=str(path))


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
        yield f"{cs(cards)} do not form a meld [{exc.rule}]: {exc}"
        return
    except (IndexError, ValueError):
        return
    wild = f", wild {cs((reading.wild,))}" if reading.wild is not None else ""
    badge = f", a {reading.canastra.replace('_', '-')} canastra" if reading.canastra else ""
    yield f"{cs(cards)} read as a {reading.kind} of {reading.size} cards{wild}{badge}"


def _facts(s: State, ev: AnyEvent, style: Style) -> Iterator[str]:
    """The facts of the table the rules look at for this kind of event."""
    from buraco_log.cards import format_cards

    def cs(cards: Iterable[int]) -> str:
        try:
            return format_cards(cards, style) or "none"
        except BuracoLogError:
            return repr(tuple(cards))

    r = s.rules
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
                   f"{r.hand_size} cards to each of {n} players"
                   + (f", {s.n_sides} mortos of {r.morto_size}" if r.morto else ", no morto")
                   + (", one upcard" if r.initial_upcard else ", no upcard")
                   + f"; material: two decks and {r.jokers} jokers")
        return
    who = s.players[s.turn].name
    yield f"turn: seat {s.turn} ({who}), turn {s.turns} of hand {s.hand}"
    seat = getattr(ev, "seat", None)
    if seat is not None and seat != s.turn:
        yield f"the event is by seat {seat}, but it is seat {s.turn}'s turn"
    if seat is not None and 0 <= seat < len(s.players):
        side = s.sides[seat]
        yield f"seat {seat} holds {len(s.hands[seat])} cards: {cs(s.hands[seat])}"
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
    yield (f"stock: {len(s.stock)} cards (floor {r.stock_floor})"
           + (f", top {cs(s.stock[:1])}" if s.stock else ""))
    yield f"pile: {len(s.pile)} cards, top {cs(s.pile[-1:])}; pickup rule {r.pile_pickup}"
    if s.pile_top is not None:
        yield f"the pile's top card {cs((s.pile_top,))} must still be used this turn"
    if s.drawn is not None:
        yield f"card drawn this turn: {cs((s.drawn,))}"
    if s.laid_this_turn:
        yield f"laid this turn: {cs(s.laid_this_turn)}"
    if isinstance(ev, MeldLaid | CardsLaidOff):
        yield from _meld_reading(s, ev, r, cs)
        yield (f"meld rules: at least 3 cards, at most one wild, at least two naturals; runs up "
               f"to {r.max_run()} cards (ace at both ends: {'yes' if r.ace_both_ends else 'no'})"
               f"; sets per rank per side: {r.max_sets_per_rank or 'any'}; canastra from "
               f"{r.canastra_size} cards" + ("" if r.canastra_from_sets else ", runs only"))
    if isinstance(ev, HandEnded):
        try:
            after = apply(s, ev)
        except (BuracoLogError, IndexError, KeyError, TypeError, ValueError):
            return  # nothing to score: the facts above say why
        for sc in after.results[-1].scores:
            items = ", ".join(f"{x.item} {x.points:+d}" for x in score_lines(sc))
            yield f"side {sc.side} recomputed score {sc.total}: {items}"


__all__ = [
    "Diff",
    "Explanation",
    "Finding",
    "HandCheck",
    "HandSummary",
    "IllegalEvent",
    "Integrity",
    "Legality",
    "Provenance",
    "ScoreLine",
    "Scoring",
    "SeatLine",
    "SideCheck",
    "Summary",
    "Verdict",
    "audit_events",
    "audit_log",
    "audit_many",
    "diff_events",
    "diff_logs",
    "explain",
    "explain_event",
    "find_logs",
    "is_log_file",
    "load",
    "read_log",
    "rule_overrides",
    "score_lines",
    "show_log",
    "summarize",
    "to_dict",
]
