"""`buraco-log show|replay|audit|diff|explain`: the dispute workflow.

Each command reads the log, calls one library function (``buraco_log.audit`` or
``buraco_log.timeline``) and formats the result: plain text tables for people, and with
``--format json`` exactly what the library returned (``msgspec.to_builtins``).
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer

from buraco_log import audit
from buraco_log.audit.integrity import no_event_received
from buraco_log.audit.settings import require_commitment as site_require_commitment
from buraco_log.cards import counted
from buraco_log.errors import BuracoLogError, LogFormatError, ReplayError
from buraco_log.events import AnyEvent, MatchStarted
from buraco_log.forensic import Salvage, read_anyway
from buraco_log.log import FIRST_SEQ
from buraco_log.safetext import lookalike, quoted
from buraco_log.signing.check import HeldReceipt
from buraco_log.signing.keys import SigningError
from buraco_log.timeline import (
    PastIllegalError,
    Streamed,
    TableView,
    Timeline,
    name_or_seat,
    names_a_tile,
    past_damage,
    seat_named,
    with_symbols,
)
from cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    Cards,
    CardsOpt,
    Format,
    cyclic_gc,
    emit_json,
    error_object,
    fail,
    from_stdin,
    guarded,
    log_rule_of,
    note,
    progress_shown,
    symbols_shown,
    warn_at_end,
)
from cli.paths import named_path, output_path, special_file, why_missing
from cli.safetext import columns, pad, terminal_safe

LogArg = Annotated[Path, typer.Argument(help="A match log (binary, or .jsonl).",
                                        show_default=False, parser=named_path)]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="table for people, json for "
                                           "programs.")]


_symbols = [False]
"""Whether this command's text writes cards with suit symbols (``--cards symbols``)."""


def _cards_as(cards: Cards) -> None:
    _symbols[0] = symbols_shown(cards)


def _echo(line: str = "", tiles: bool | None = None, names: Sequence[str] = ()) -> None:
    if _symbols[0]:  # the text only: JSON keeps the cards as the log writes them
        line = with_symbols(line, tiles, names)
    typer.echo(terminal_safe(line))  # names and notes come from the log


def _echo_all(lines: Iterable[str], names: Sequence[str] = ()) -> None:
    """Lines of one log, cards or tiles: a Burako joker (JK) in a line naming no other tile
    is a tile all the same. ``names``: the players', never taken for cards (JK, Ah)."""
    block = list(lines)
    tiles = any(names_a_tile(line) for line in block)
    for line in block:
        _echo(line, tiles, names)


def _replay_error(path: Path, exc: BuracoLogError, as_json: bool = False) -> typer.Exit:
    """Name the file in errors that come from replay (the log reader names it already)."""
    text = str(exc)
    if getattr(exc, "path", None) is None:  # `-f json`'s `path`: the file the line names
        exc.path = str(path)  # type: ignore[attr-defined]
    return fail(text if text.startswith(str(path)) else f"{path}: {text}",
                getattr(exc, "exit_status", EXIT_FINDINGS), as_json=as_json, error=exc)


AtOpt = Annotated[int | None, typer.Option(
    "--at", min=0, help="Show the table right after this seq.")]
HandOpt = Annotated[int | None, typer.Option(
    "--hand", min=0, help="Show the table after this hand's deal (hands count from 0).")]
TurnOpt = Annotated[int | None, typer.Option(
    "--turn", min=0, help="With --hand: the table just before this turn of the hand (from 0).")]
SeatOpt = Annotated[int | None, typer.Option(
    "--seat", min=0, help="Only what this seat could see.")]
StepOpt = Annotated[bool, typer.Option(
    "--step", help="Step through the match from its first event (or --at/--hand): n/Enter next, "
    "p previous, a number jumps to that "
    "seq, h2 to hand 2's deal, q quits.")]
IgnoreIntegrityOpt = Annotated[bool, typer.Option(
    "--ignore-integrity", help="Forensics: read a log whose checksum or integrity chain fails "
    "as far as its records decode; the output then starts with a warning saying where it "
    "failed (exit 1 all the same: the log is not sound, whatever seq is shown).")]
ExplainIgnoreIntegrityOpt = Annotated[bool, typer.Option(
    "--ignore-integrity", help="Forensics: read a log whose checksum or integrity chain fails "
    "as far as its records decode; the output then starts with a warning saying where it "
    "failed (exit 0 when the event is explained, as for an illegal event: it answered).")]
RecentOpt = Annotated[int, typer.Option(
    "--recent", min=0, help="How many recent events to list.")]


# -- rendering ----------------------------------------------------------------------------------


def _cards(cards: Sequence[str] | None, count: int = 0) -> str:
    if cards is None:
        return f"({count} hidden)"
    return " ".join(cards) or "-"


def render_table(v: TableView, indent: str = "", unit: str = "card") -> Iterator[str]:
    """A table view as text lines; ``unit``: ``tile`` for a table drawn in tiles (Burako)."""
    names = {s.seat: s.name for s in v.seats}
    # hand -1 is the state's "none dealt yet": said in words, and no dealer (the state's 0 is
    # no seat's deal; the first hand's dealer is the match start's first_dealer)
    dealt = v.hand >= 0
    yield (f"{indent}seq {v.seq}  {f'hand {v.hand}' if dealt else 'no hand dealt yet'}  "
           f"phase {v.phase}  turn: {seat_named(v.turn, v.turn_name)}"
           + (f"  dealer: seat {v.dealer}" if dealt else "")
           + (f"  view of {seat_named(v.viewer, names.get(v.viewer, '?'))}"
              if v.viewer is not None else ""))
    pile = " ".join(v.pile) + " <top" if v.pile else "empty"
    yield f"{indent}stock {v.stock}  pile ({len(v.pile)}): {pile}"
    for side in v.sides:
        who = ", ".join(name_or_seat(s, names[s]) for s in side.seats)
        morto = _morto_text(side.morto_state, side.morto, unit)
        flags = ("  vulnerable" if side.vulnerable else "") + (
            "  opened" if side.opened else "")
        yield (f"{indent}side {side.side} ({who})  match score {side.total}  "
               f"on the table {side.table_points}{morto}{flags}")
        for m in side.melds:
            badge = f"  [{m.canastra.replace('_', '-')} canastra]" if m.canastra else ""
            wild = f"  ({m.wild})" if m.wild else ""
            yield f"{indent}  #{m.id} {m.kind:<3} {' '.join(m.cards)}{wild}{badge}"
        if not side.melds:
            yield f"{indent}  no melds"
    yield f"{indent}hands"
    for s in v.seats:
        yield f"{indent}  seat {s.seat} {s.name} ({s.count}): {_cards(s.cards, s.count)}"
    carried = carried_totals(v.totals, v.hand_scores)
    if v.hand_scores or any(carried):
        # a match carried in: its totals ran on from the carried ones, said, or the hands
        # would not add up to the total
        parts = ([f"carried: {'/'.join(map(str, carried))}"] if any(carried) else []) + [
            f"h{i}: {'/'.join(map(str, sc))}" for i, sc in enumerate(v.hand_scores)]
        yield f"{indent}scores  {'  '.join(parts)}  total: {'/'.join(map(str, v.totals))}"
    if v.recent:
        yield f"{indent}recent"
        for line in v.recent:
            yield f"{indent}  {line}"


def carried_totals(totals: Sequence[int], hand_scores: Sequence[Sequence[int]]
                   ) -> tuple[int, ...]:
    """The totals a match carried in (``TotalsCarried``) started from: the match totals less
    every hand's score (zeros for a match played from its start)."""
    return tuple(t - sum(h[i] for h in hand_scores if i < len(h)) for i, t in enumerate(totals))


def _morto_text(state: str, cards: int, unit: str) -> str:
    """A side's morto as its score counts it: a voided one is not called taken (the score
    lines beside it charge the penalty for a morto not taken)."""
    if state == "taken":
        return "  morto taken"
    if state == "voided":
        return "  morto voided (taken, but counts as not taken)"
    return f"  morto {counted(cards, unit)}" if cards else ""


def _overrides(o: dict[str, Any]) -> str:
    return ", ".join(f"{k}={plain(v)}" for k, v in o.items()) or "none"


def plain(value: Any) -> str:
    """A value as a person reads it: yes/no, 2/3/4, never a Python repr."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return "/".join(plain(v) for v in value) or "none"
    if value is None:
        return "none"
    return str(value)


def _under(file: str, directory: Path) -> bool:
    """Whether ``file`` (as the walk of ``directory`` names it) lies in ``directory``."""
    top = os.path.join(str(directory), "")
    return file.startswith(top) or file == str(directory)


def _integrity_line(i: audit.Integrity, path: str = "") -> str:
    base = f"{i.status}, {counted(i.events, 'event')} in {counted(i.records, 'record')}"
    if i.status == "torn" and audit.not_started((), i):  # as verify and audit say it
        if empty_stdin(path):  # no file whose header was cut short
            return f"not started: {EMPTY_STDIN}"
        return f"not started: no whole header ({i.message}) and no event"
    # the rule as the JSON finding and `rules` name it (log.damage; it said [damage], and
    # a torn tail said neither its seq nor its rule)
    if i.status == "torn":
        seq = f", seq {i.seq}" if i.seq is not None else ""
        unit = "line" if i.format == "jsonl" else "record"
        record = f" ({unit} {i.record})" if i.record is not None else ""  # a signature's: none
        return (f"{base}; torn tail at byte {i.offset}{record}{seq} "
                f"[log.{i.kind}]: {i.message}")
    if i.status == "broken":
        unit = "line" if i.format == "jsonl" else "record"
        where = [f"{unit} {i.record}"] if i.record is not None else []
        where += [f"byte {i.offset}"] if i.offset is not None else []
        where += [f"seq {i.seq}"] if i.seq is not None else []
        return f"{base}; BROKEN at {', '.join(where)} [log.{i.kind}]: {i.message}"
    if i.status == "unreadable":  # the rule, as for damage (a dead worker's is said below)
        return f"unreadable: {i.message}" if i.kind == "error" else (
            f"unreadable [log.{i.kind}]: {i.message}")
    return f"{base}; head {i.head}"


def render_summary(s: audit.Summary) -> Iterator[str]:
    if s.match_id is None:  # no MatchStarted read: none intact, or the log opens otherwise
        intact = s.integrity is not None and audit.not_started((), s.integrity)
        yield ("match     unknown: the log does not open with the match start" if s.events
               else "match     unknown: the log holds no events" if intact
               else "match     unknown: the log's first event could not be read")
        yield "rules     unknown"
    else:
        yield f"match     {s.match_id}"
        named = (f"{s.preset} (no preset of this name: its knobs told against {s.nearest}, "
                 "the nearest)") if s.nearest is not None else s.preset
        yield f"rules     {named}; house rules: {_overrides(s.overrides)}"
    if s.integrity is not None:
        yield f"log       {s.path}: {_integrity_line(s.integrity, s.path)}"
    yield "players"
    for p in s.players:
        yield f"  seat {p.seat}  {pad(p.name, 16)} side {p.side}" + (f"  id {p.id}" if p.id else "")
    sides = range(s.sides)
    alike = [p.name for p in s.players]  # two players of one name: told apart by seat
    names = {p.seat: name_or_seat(p.seat, p.name) if alike.count(p.name) == 1 or
             not p.name.strip() else f"{p.name} (seat {p.seat})" for p in s.players}
    w = max([8, *(columns(n) for n in names.values())]) + 2  # name columns fit the longest
    head = (f"  hand  {'dealer':<{w}}{'ended':<11}{'went out':<{w}}"
            + "".join(f"side {i:<4}" for i in sides) + "".join(f"total {i:<4}" for i in sides)
            + "canastras")
    carried = carried_totals(s.totals, [h.scores for h in s.hands])
    if any(carried):  # the hands' running totals start from these, not from 0
        yield "carried   " + "  ".join(f"side {i}: {t}" for i, t in enumerate(carried))
    yield "hands"
    yield head.rstrip()
    for h in s.hands:
        ended = "went out" if h.reason == "went_out" else _stock_column(s.stock_floor)
        out = h.went_out_name or "-"
        canastras = "; ".join(
            f"{i}: " + (", ".join(f"{k.replace('_', '-')} {n}" for k, n in sorted(c.items()))
                        or "-")
            for i, c in enumerate(h.canastras))
        mark = "" if h.recorded in (None, h.scores) else "  (recorded " + "/".join(
            map(str, h.recorded or ())) + ")"
        yield (f"  {h.hand:<5} {pad(names.get(h.dealer, '?'), w)}{ended:<11}{pad(out, w)}"
               + "".join(f"{x:<9}" for x in h.scores)
               + "".join(f"{x:<10}" for x in h.cumulative) + canastras + mark)
    if not s.hands:
        yield "  no hand finished"
    if _stock_column(s.stock_floor) != "stock out":  # not an empty stock: say what it is
        for words in dict.fromkeys(h.ended for h in s.hands if h.reason != "went_out"):
            yield f"  stock end: hand ended ({words})"  # replay's words
    yield "totals    " + "  ".join(f"side {i}: {t}" for i, t in enumerate(s.totals))
    yield "canastras " + ("; ".join(
        f"side {i}: " + (", ".join(f"{k.replace('_', '-')} {n}" for k, n in sorted(c.items()))
                         or "none") for i, c in enumerate(s.canastras)) or "none")
    yield "went out  " + (", ".join(f"{n} x{k}" for n, k in s.went_out.items()) or "nobody")
    if s.winner is not None:
        who = ", ".join(name_or_seat(p.seat, p.name) for p in s.players if p.side == s.winner)
        unlogged = "" if s.complete else ", match end not logged"
        yield f"winner    side {s.winner} ({who}){unlogged}"
    elif s.first_illegal:  # a match end recorded past it is not read as "not finished"
        yield "winner    unknown: the summary stops before the first illegal event"
    else:
        yield "winner    none yet: the match is not finished"
    if s.first_illegal:
        yield f"ILLEGAL   {s.first_illegal} (run `buraco-log audit` for details)"


def _stock_column(floor: int | None) -> str:
    """The "ended" column of a hand ended by the stock: "stock out" only where the stock is
    then empty; mega's hand ends with 2 cards in it (RULES.md §8), said below the table."""
    return "stock out" if floor == 0 else "stock end"


EMPTY_STDIN = "standard input was empty (0 bytes): no log and so no event"
"""What `show`, `audit` and `verify` say of ``-`` given nothing: no file to delete."""


def empty_stdin(path: str | Path) -> bool:
    """Whether ``path`` holds a log read from standard input that gave no byte."""
    try:
        return from_stdin(path) and os.path.getsize(path) == 0
    except OSError:
        return False


def _stdin_notes(v: audit.Verdict) -> audit.Verdict:
    """A log not started read from standard input: nothing was a file, so nothing is to be
    deleted (the note said "file header cut short (0 of 20 bytes); delete the file")."""
    if not (v.not_started and from_stdin(v.path)) or v.integrity.status in _WHOLE:
        return v
    if empty_stdin(v.path):
        first = f"not started: {EMPTY_STDIN}"
    else:
        first = v.notes[0].replace("; delete the file: no event is in it", "") if v.notes else ""
    return msgspec.structs.replace(v, notes=(first, *v.notes[1:]) if first else v.notes)


def render_verdict(v: audit.Verdict, *, continues: Path | None = None) -> Iterator[str]:
    if v.not_started:  # issue 20: a match that never received an event is no failure
        yield f"{v.path}: NOT STARTED"
        for note in v.notes:
            yield f"  note        {note}"
        return
    state = "OK" if v.ok else f"FINDINGS ({len(v.findings)})"
    yield (f"{v.path}: {state}  match {v.match_id or 'unknown'}  rules {v.rules or 'unknown'}  "
           f"{counted(v.events, 'event')}")
    # The library's note of what a damaged log's sections cover goes below them.
    damage = audit.damage_note(v.events, v.integrity, v.signing)
    for note in v.notes:  # what an OK does not prove, next to the OK
        if note != damage:
            yield f"  note        {note}"
    yield f"  integrity   {_integrity_line(v.integrity)}"
    for f in v.findings:  # the one integrity finding the line above does not say
        if f.rule == "log.head_changed":
            yield f"    [{f.rule}] {f.message}"
    if v.integrity.kind == "error":  # not audited: its rule and why (a dead worker, a defect)
        for f in v.findings:
            yield f"    [{f.rule}] {f.message}"
    if damage == audit.NOTHING_READ_NOTE:
        # Nothing was read (not a log, unreadable, cut inside its first record): the other
        # sections would only report on nothing ("0 events legal", "scores agree").
        yield from _signing_lines(v)  # a receipt still proves the site signed events
        yield f"  note        {damage}"
        return
    p = v.provenance
    if p.status == "none":
        prov = "no committed or plain seeds: nothing to re-derive"
    else:
        prov = (f"{p.status.replace('_', ' ')}; "
                f"seed {'revealed' if p.revealed else 'not revealed'}; {counted(p.deals, 'deal')}")
        if not p.findings:  # say what was checked: a deal no revealed seed backs was not
            checked = p.deals - p.unchecked
            prov += ("; all re-derived and equal" if not p.unchecked
                     else "; none re-derived (not checked)" if not checked
                     else f"; {checked} re-derived and equal, {p.unchecked} not checked")
    yield f"  provenance  {prov}"
    for f in p.findings:
        yield f"    seq {'-' if f.seq is None else f.seq} [{f.rule}] {f.message}"
    lg = v.legality
    if lg.first_illegal is None:
        yield (f"  legality    {counted(lg.events_checked, 'event')} legal"
               + ("; match complete" if lg.complete else "; match not finished"))
        for f in v.findings:
            if f.section == "legality":
                yield f"    seq {'-' if f.seq is None else f.seq} [{f.rule}] {f.message}"
    else:
        il = lg.first_illegal
        yield f"  legality    first illegal event at seq {il.seq} [{il.rule}]"
        yield f"    what      {il.message}"
        yield f"    rule      {il.description}"
        yield f"    seat      {il.seat if il.seat is not None else '-'}"
        unit = "tile" if il.rendering == "tiles" else "card"  # Burako's tiles (RULES.md §1)
        yield f"    {unit}s     {' '.join(il.cards) or '-'}"
        if il.follows_from is not None:  # a consequence, not a cause of its own
            yield (f"    follows   from the changed deal at seq {il.follows_from} "
                   "[deal.mismatch]: with the deal its seeds give, the hand replays legally "
                   "through it")
        yield "    table just before:"
        yield from render_table(il.before, indent="      ", unit=unit)
        for f in v.findings:  # what the recorded sheet shows past it (a wrong winner)
            if f.section == "legality" and f.seq != il.seq:
                yield f"    seq {'-' if f.seq is None else f.seq} [{f.rule}] {f.message}"
    yield from _signing_lines(v)
    sc = v.scoring
    bad = [h for h in sc.hands if not h.ok]
    totals_wrong = (sc.totals_recorded is not None
                    and sc.totals_recorded != sc.totals_recomputed)
    before = after = ""
    if sc.after_illegal and lg.first_illegal is not None:
        # what lies past the first illegal event was not recomputed: "0 hands; recorded
        # scores agree" read as every score checked
        n = len(sc.after_illegal)
        before = f" before the first illegal event (seq {lg.first_illegal.seq})"
        after = (f"; {n} hand or match end{'s' if n != 1 else ''} recorded after it not "
                 "recomputed (see the note)")
    if before and not sc.hands:  # nothing recomputed: "agree" would be of nothing
        yield f"  scoring     no hand ended{before}{after}"
    else:
        yield (f"  scoring     {counted(len(sc.hands), 'hand')}{before}; "
               + ("recorded scores agree with the recomputed ones"
                  if not bad and not totals_wrong
                  else "recorded hand scores agree with the recomputed ones" if not bad
                  else f"{len(bad)} with a wrong recorded score")
               + ("; the recorded match totals do not" if totals_wrong else "") + after)
    # Every scoring finding, as the other sections print theirs (seq, rule, message); a side's
    # wrong score with its recomputation line by line under it. A count of scores that does
    # not fit the sides, or wrong match totals, has no side lines but is a finding all the same.
    detail = {(h.end_seq, f"hand {h.hand}, side {side.side}: "): side
              for h in bad for side in h.sides if side.difference}
    for f in v.findings:
        if f.section != "scoring":
            continue
        yield f"    seq {'-' if f.seq is None else f.seq} [{f.rule}] {f.message}"
        side = next((d for (seq, head), d in detail.items()
                     if seq == f.seq and f.message.startswith(head)), None)
        if side is not None:
            for line in side.explanation:
                yield f"      {line}"
            if side.hint:
                yield f"      {side.hint}"
    if continues is not None:
        yield from _continuation_lines(v, continues)
    if damage is not None:
        yield f"  note        {damage}"


def _signing_lines(v: audit.Verdict) -> Iterator[str]:
    """The signing section: shown for a signed log, or when signatures or receipts were
    checked (an unsigned log audited without them says nothing new)."""
    sg = v.signing
    problems = [f for f in v.findings if f.section == "signing"]
    if not (sg.signatures or sg.receipts or sg.required or problems):
        return
    if sg.signatures:
        line = (f"{counted(sg.signatures, 'signature')} {sg.by_whom()}, the last after seq "
                f"{sg.last_signed_seq}; "
                + {None: "not verified (no trusted keys)", True: "verified",
                   False: "NOT verified"}[sg.verified])
    else:
        line = "unsigned"
    if sg.receipts:
        line += f"; {counted(sg.receipts, 'receipt')} checked"
    yield f"  signing     {line}"
    for f in problems:
        yield f"    seq {'-' if f.seq is None else f.seq} [{f.rule}] {f.message}"


def render_explanation(e: audit.Explanation) -> Iterator[str]:
    if e.note:
        yield f"note: {e.note}"
    yield e.event
    if e.legal and e.findings:  # legal play, yet the audit finds against the event itself
        yield "LEGAL by the rules of play, but the audit finds:"
        for found in e.findings:
            yield f"  [{found.rule}] {found.message}"
    elif e.legal:
        yield "LEGAL: every rule for this event is met at this point"
    else:
        yield f"ILLEGAL [{e.rule}]"
        yield f"  rule: {e.description}"
        yield f"  here: {e.message}"
        for found in e.findings:  # the changed deal it follows from, as `audit` says it
            yield (f"  follows from the changed deal at seq {found.seq} [{found.rule}]: with "
                   "the deal its seeds give, the hand replays legally through it")
    yield "facts of the table just before:"
    for f in e.facts:
        yield f"  - {f}"


_WHOLE = ("sealed", "unsealed")


def _verify_says(*statuses: str) -> str:
    """Where `verify` sends the reader of a copy that is not whole: a torn tail (a live log's
    record being written, or a crash's) is no damage."""
    torn = all(s in (*_WHOLE, "torn") for s in statuses)
    return f"`buraco-log verify` says {'where its tail is torn' if torn else 'what is damaged'}"


def render_diff(d: audit.Diff) -> Iterator[str]:
    signed = d.signatures_a or d.signatures_b
    for label, path, status, events, head, sigs in (
            ("A", d.a, d.integrity_a, d.events_a, d.head_a, d.signatures_a),
            ("B", d.b, d.integrity_b, d.events_b, d.head_b, d.signatures_b)):
        yield (f"{label}  {path}: {status}, {counted(events, 'event')}"
               + (f", {counted(sigs, 'signature')}" if signed else "") + f", head {head}")
    if d.same_file:  # it said "identical" of a file and a link to it, as of two copies
        yield ("note: A and B are the same file: it was compared with itself, not with "
               "another copy")
    cut = [label for label, status in (("A", d.integrity_a), ("B", d.integrity_b))
           if status not in _WHOLE]
    if d.identical and cut:  # matches not started, one with no whole header: nothing
        # differs (exit 0), as `verify` and `audit` say NOT STARTED of each, exit 0
        yield ("identical: both copies are matches not started, no event in either "
               f"({' and '.join(cut)} {'has' if len(cut) == 1 else 'have'} no whole header: "
               f"delete {'that file' if len(cut) == 1 else 'the files'})")
        return
    if d.identical:
        yield "identical: same events, same head digest" + (
            ", same signatures" if signed else "")
        return
    if d.diverge_seq is None and d.heads_equal and not d.signatures_equal:
        yield ("same events, same head digest; the signatures differ: " + (
            f"A holds {d.signatures_a}, B {d.signatures_b}" if d.signatures_a != d.signatures_b
            else "the copies hold different signature records")
            + (f"; first after seq {d.signatures_differ_at}: {d.signatures_difference}"
               if d.signatures_differ_at is not None else "")
            + ("" if (d.signatures_difference or "").startswith("both hold") else
               " (a copy lost or had stripped the site's signatures, or holds records the "
               "other does not)"))
        return
    yield "head digests " + ("equal" if d.heads_equal else "differ")
    if d.not_started_a and d.not_started_b:  # no event in either (it said "the copies agree
        # on all 0 events read intact, but A is torn and B is torn")
        yield ("both copies are matches not started: no event to compare"
               + (f" ({' and '.join(cut)} {'has' if len(cut) == 1 else 'have'} no whole "
                  f"header: delete {'that file' if len(cut) == 1 else 'the files'})"
                  if cut else "")
               # no event differs: the header's version does, which the head digest covers
               + ("; only their log-format versions differ" if not d.heads_equal else ""))
        return
    if d.diverge_seq is None and d.prefix is None:  # the same events, one copy damaged
        # (it said "first divergence at seq None")
        hurt = [f"{label} is {status}" + (f" at {at}" if at is not None else "")
                for label, status, at in (("A", d.integrity_a, d.damage_a),
                                          ("B", d.integrity_b, d.damage_b))
                if status not in _WHOLE]
        if not hurt:  # both whole, every event equal: the framing differs, never an event
            # (it sent the reader to `verify`, which finds nothing in either)
            yield (f"the copies hold the same {counted(d.events_a, 'event')}, both whole; only "
                   "their log-format versions differ (a converted copy), and the head digest "
                   "covers the version: no event differs")
            return
        yield (f"the copies agree on all {counted(d.events_a, 'event')} read intact, but "
               f"{' and '.join(hurt)}: {_verify_says(d.integrity_a, d.integrity_b)}")
        return
    if d.prefix is not None:
        other = "B" if d.prefix == "a" else "A"
        if not (d.diverge_seq or 0):  # the shorter copy holds no event at all
            yield (f"{d.prefix.upper()} holds no events intact; {other} has "
                   f"{max(d.events_a, d.events_b)}")
        elif (status := d.integrity_a if d.prefix == "a" else d.integrity_b) not in _WHOLE:
            # damaged (in the middle, or cut): its events stop where it is damaged, which
            # does not make it a prefix of the other (it said "B is a prefix of A")
            at = d.damage_a if d.prefix == "a" else d.damage_b
            yield (f"{d.prefix.upper()} is {status}" + (f" at {at}" if at is not None
                                                        else "")
                   + f": its events read intact agree with {other} up to seq "
                   f"{(d.diverge_seq or 0) - 1}, and {other} goes on from seq "
                   f"{d.diverge_seq}; {_verify_says(status)}")
        else:
            yield (f"{d.prefix.upper()} is a prefix of {other}: they agree up to seq "
                   f"{(d.diverge_seq or 0) - 1}; {other} goes on from seq {d.diverge_seq}")
        return
    yield f"first divergence at seq {d.diverge_seq}"
    for label, words in (("A", d.words_a), ("B", d.words_b)):
        yield f"  {label}: {words or '(no event)'}"
    for line in d.differences:
        yield f"  {line}"


# -- commands ------------------------------------------------------------------------------------


@guarded
def show(path: LogArg, format: FormatOpt = Format.table, cards: CardsOpt = Cards.letters
         ) -> None:
    """A match summary: rules, players, each hand's result and scores, canastras, integrity.

    A damaged log, or one with an illegal event, is summed up to where that starts, said on
    stderr, exit 1. A recorded score that differs from the recomputed one (a hand's, or the
    match totals) is shown beside it and said on stderr too, exit 1. A log of a match that
    never received an event (an empty file) is no finding."""
    _cards_as(cards)
    if (special := special_file(path)) is not None:
        raise fail(f"{path}: {special}", EXIT_USAGE, as_json=format is Format.json)
    try:
        stream = audit.LogStream(path)  # read once, never held: 20 million events were 3 GB
        summary = audit.summarize_stream(stream)
        integrity, signed = stream.integrity, stream.signed
    except ReplayError as exc:
        raise _replay_error(path, exc, format is Format.json) from None
    if _not_a_log(integrity):  # not the summary of an empty match: an error (exit 2)
        raise _unreadable_log(path, integrity)
    repeat = (audit.repeated_signature(path, signed.signatures)
              if integrity.status in _WHOLE else None)
    if repeat is not None:  # the integrity line said "sealed" of what `verify` refuses
        summary = msgspec.structs.replace(summary, integrity=_repeated(integrity, repeat[1]))
    if format is Format.json:
        emit_json(summary)
    else:
        # the hands' table names players in its columns; the melds name cards only
        tiles = any(names_a_tile(line) for line in render_last_melds(summary))
        for line in render_summary(summary):
            _echo(line, tiles, [p.name for p in summary.players])
        for line in render_last_melds(summary):
            _echo(line, tiles)
    # a wrong recorded score is a finding (the summary shows the recomputed one, with the
    # recorded one beside it): said, exit 1, as `audit` and `view` do; a referee's script read
    # the exit status 0 as clean
    stops = mismatch_lines(path, summary.score_mismatches)
    if integrity.status in ("broken", "torn") and not audit.not_started((), integrity):
        # a finding: the summary covers the intact part (an empty file is a match not
        # started, as `audit` says: no event was lost)
        rule = log_rule_of(integrity.kind)
        stops.append(f"{path}{_place(integrity)}: {integrity.status}: {integrity.message} (the "
                     f"summary covers the {integrity.events} events before it)"
                     + (f" [{rule}]" if rule else ""))  # as every damaged log's line ends
    elif repeat is not None:
        stops.append(f"{repeat[1]} (the summary covers all {integrity.events} events: the copy "
                     "holds none)")
    elif summary.first_illegal:  # a finding too, as damage is: the summary stops before it
        stops.append(f"{path}: {summary.first_illegal} (the summary covers the events before "
                     "it; `buraco-log audit` for details)")
    if stops:
        raise said(stops)


def _repeated(integrity: audit.Integrity, refusal: LogFormatError) -> audit.Integrity:
    """A whole log holding a repeated signature record, as `verify` judges it: broken at the
    copy's byte, in its words (every event was read: the copy holds none)."""
    return msgspec.structs.replace(integrity, status="broken", offset=refusal.offset,
                                   record=refusal.line, seq=refusal.seq, kind=refusal.kind,
                                   message=refusal.message)  # line: a JSON Lines log's


def mismatch_lines(path: Path, mismatches: Iterable[audit.ScoreMismatch]) -> list[str]:
    """A recorded score that differs from the recomputed one, a line each, as the reducer
    words it: ``FILE: seq 126 [score.mismatch] hand 0: side 0: recorded 440, recomputed 340
    (+100)``."""
    return [f"{path}: seq {'-' if m.seq is None else m.seq} [{m.rule}] {m.message}"
            for m in mismatches]


def said(lines: Sequence[str], error: BaseException | None = None) -> typer.Exit:
    """Each finding its own error line on stderr, in order; the Exit (1) to raise. ``error``:
    the last line's (``--debug`` shows its traceback)."""
    for line in lines[:-1]:
        fail(line)
    return fail(lines[-1], error=error)


def render_last_melds(summary: audit.Summary) -> Iterator[str]:
    """The melds on the table when the last hand read ended (or where the log stops), each
    with where its wild stands: what `show` adds below the summary (its ``melds``)."""
    view = summary.melds
    if view is None:
        return
    yield f"melds     hand {view.hand}, at seq {view.seq}"
    for side in view.sides:
        for m in side.melds:
            wild = f"  ({m.wild})" if m.wild else ""
            badge = f"  [{m.canastra.replace('_', '-')} canastra]" if m.canastra else ""
            yield f"  side {side.side} #{m.id} {m.kind:<3} {' '.join(m.cards)}{wild}{badge}"


@guarded
def replay(
    path: LogArg,
    at: AtOpt = None,
    hand: HandOpt = None,
    turn: TurnOpt = None,
    seat: SeatOpt = None,
    format: FormatOpt = Format.table,
    step: StepOpt = False,
    recent: RecentOpt = 6,
    ignore_integrity: IgnoreIntegrityOpt = False,
    cards: CardsOpt = Cards.letters,
) -> None:
    """The table at any point of a match (the end, by default).

    The end of a log with an illegal event is the table before it, shown, then said on stderr
    (exit 1); so is every recorded score that differs from the recomputed one, when the end is
    shown (the table holds the recomputed score); a table before the end (--at, --hand) notes
    those up to it. A log with no event (a match not started) has no table (exit 2)."""
    _cards_as(cards)
    js = format is Format.json
    if at is not None and hand is not None:
        raise fail("use either --at or --hand, not both", EXIT_USAGE, as_json=js)
    if turn is not None and hand is None:
        raise fail("--turn needs --hand", EXIT_USAGE, as_json=js)
    if step and ignore_integrity:
        raise fail("--step does not combine with --ignore-integrity", EXIT_USAGE, as_json=js)
    if step and from_stdin(path):  # the log used up standard input: the prompt read no key
        # and quit at once, silently
        raise fail("--step reads its keys from standard input, which holds the log: give the "
                   "log's path", EXIT_USAGE, as_json=js)
    if step and js:  # a table per key press: several documents, no longer one JSON
        raise fail("--step is for people and does not combine with --format json; ask for "
                   "each seq with --at N -f json", EXIT_USAGE, as_json=js)
    try:
        # read once and never held, unless --step walks to and fro, or the log is read
        # anyway (the forensic reader gathers what decodes): 20 million events were 3 GB
        streamed = None if step or ignore_integrity else Streamed(
            at=at, recent=max(0, recent), hand=hand if at is None else None, turn=turn)
        tl, warning = load_timeline(path, ignore_integrity, as_json=js, streamed=streamed)
        if tl.illegal is not None and tl.last_seq < 0:  # not an empty table at "seq -1" (exit 0)
            raise fail(f"{path}: seq {tl.illegal.seq} is illegal [{tl.illegal.rule}]: "
                       f"{tl.illegal.explanation}; no event before it: there is no table to show",
                       as_json=js, error=tl.illegal)
        if at is not None:
            seq = at
        elif hand is not None:
            seq = tl.seq_of(hand, turn)
        elif step:  # stepping starts where the match does, not at its end
            seq = 0
        else:
            seq = tl.last_seq
        view = tl.view(seq, seat=seat, recent=recent)
        # after the view: a seq past the illegal event is one error line, not a note and an
        # error; the end asked for (no --at, --hand or --step) stops short of it: a finding,
        # said after the table (exit 1), as `show` and `view` say it
        end = at is None and hand is None and not step
        short = tl.illegal is not None and tl.illegal.seq is not None and end
        if tl.illegal is not None and tl.illegal.seq is not None and not short:
            note(f"{path}: seq {tl.illegal.seq} is illegal [{tl.illegal.rule}]; the table is "
                 f"known up to seq {tl.last_seq}")
    except ReplayError as exc:
        raise _replay_error(path, exc, js) from None
    # the end asked for: a recorded score the replay corrected is a finding, said after the
    # table as the illegal event is (exit 1); a table before the end notes those up to it
    wrong = [m for m in tl.score_mismatches if end or m.seq is None or m.seq <= view.seq]
    if js and end and (wrong or (tl.illegal is not None and tl.illegal.seq is not None)):
        # a program reading stdout gets the findings stderr says, as `audit` words them
        data = view_json(view, tl)
        data["findings"] = [{"message": m.explanation, "rule": m.rule, "seq": m.seq}
                            for m in wrong]
        if tl.illegal is not None and tl.illegal.seq is not None:
            data["findings"].append({"message": tl.illegal.explanation,
                                     "rule": tl.illegal.rule, "seq": tl.illegal.seq})
        emit_json(data if warning is None else with_warning(data, warning))
    elif warning is not None and format is Format.json:
        emit_json(with_warning(view_json(view, tl), warning))
    elif step:
        if warning is not None:
            _echo(warning)
        _step(tl, view, seat, format, recent)
        return
    else:
        if warning is not None:
            _echo(warning)
        _print_view(view, format, tl)
    stops = mismatch_lines(path, (audit.ScoreMismatch(m.seq, m.rule, m.explanation)
                                  for m in wrong))
    if not end:
        for line in stops:
            note(f"{line} (the table holds the recomputed score)")
        unsound(warning)
        return
    if tl.illegal is not None and tl.illegal.seq is not None:
        stops.append(f"{path}: seq {tl.illegal.seq} is illegal [{tl.illegal.rule}]; the table "
                     f"is known up to seq {tl.last_seq}")
    if stops:
        raise said(stops, error=tl.illegal)
    unsound(warning)


def unsound(warning: str | None) -> None:
    """A log that failed its integrity check, read anyway, is a finding (exit 1) whatever seq
    is shown, as `view` says it: a script must not take the table of a changed log for a sound
    one. The warning itself is said on stderr as the command ends."""
    if warning is not None:
        raise typer.Exit(EXIT_FINDINGS)


def load_timeline(path: Path, ignore_integrity: bool, *, as_json: bool = False,
                  not_started_ok: bool = False, streamed: Streamed | None = None
                  ) -> tuple[Timeline, str | None]:
    """The match replayed, and (with ``ignore_integrity``) the warning every output must start
    with when the log failed its integrity check (None when it passed, or strictly read).
    ``not_started_ok``: a match not started is an empty timeline, not refused (the caller
    asks only for the table before the start). ``streamed``: the log strictly read once and
    never held (not with ``ignore_integrity``), keeping the tables it says."""
    if streamed is not None and not ignore_integrity:
        try:
            tl = Timeline(audit.load_iter(path), stream=streamed)
        except LogFormatError as exc:
            raise _strictly(exc) from None
        if not tl.count and not not_started_ok:
            raise fail(f"{path}: the log holds no events yet (a match not started): no table "
                       "to show [log.empty]", EXIT_USAGE, as_json=as_json)
        return tl, None
    salvage = _load_salvage(path, ignore_integrity)
    events, warning = salvage.events, salvage.warning
    tl = Timeline(events, damage=damage_rule(salvage))
    if not tl.recorded and salvage.kind == "damage":
        # damaged before its first event: no intact event, which is no match not started (a
        # tail torn in the file header is a crash creating it: a match not started, as `audit`)
        raise fail(f"{path}: the log has no intact event: it is damaged {_damaged_at(salvage)}"
                   f" before its first event [{salvage.rule}]: no table to show",
                   as_json=as_json)  # the reader's rule, as `verify` names it
    if not tl.recorded and salvage.torn and not _not_started(salvage):
        # torn at the first event's record: an event may be lost (`audit` finds it), no match
        # not started (it said "the log holds no events yet", exit 2)
        raise fail(f"{path}: the log has no intact event: it is torn {_damaged_at(salvage)}, "
                   "at its first event's record [log.torn]: no table to show", as_json=as_json)
    if not tl.recorded and not not_started_ok:  # as `view` says it (`audit`: NOT STARTED)
        raise fail(f"{path}: the log holds no events yet (a match not started): no table to "
                   "show [log.empty]", EXIT_USAGE, as_json=as_json)
    return tl, warning


def damage_rule(salvage: Salvage) -> str | None:
    """The rule of the damage of a log read anyway (None: it passed its integrity check): a
    position past the events read is then a finding (1), as `view` says it, not one the log
    does not hold (2)."""
    if salvage.failure is None or salvage.read_to_end:
        # every record to the end of the file was read: a change, nothing lost, so a seq
        # past the events is one the log does not hold (it said the damage may hold seq
        # 9999 of a match read to its end)
        return None
    return salvage.rule  # the reader's own rule, as `verify` names it


def _damaged_at(salvage: Salvage) -> str:
    """Where a salvaged log first failed: its byte (binary) or line (JSON Lines)."""
    if salvage.offset is not None:
        return f"at byte {salvage.offset}"
    return f"at line {salvage.line}" if salvage.line is not None else "(place unknown)"


def _load_salvage(path: Path, ignore_integrity: bool) -> Salvage:
    """The events of ``path``: strictly read, or (``ignore_integrity``) as far as they decode,
    the warning said on stderr."""
    if not ignore_integrity:
        try:
            return Salvage(str(path), audit.load(path))
        except LogFormatError as exc:
            raise _strictly(exc) from None
    salvage = read_anyway(path)
    # said once on stderr, with the error or note if there is one; not of a file torn before
    # its first event (a match not started, as `audit` says: no damage to warn of)
    if salvage.warning is not None and not _not_started(salvage):
        warn_at_end(salvage.warning)
    return salvage


def _strictly(exc: LogFormatError) -> LogFormatError:
    """The error of a log strictly read: a damaged one's says what can still be read."""
    if exc.exit_status != 1:  # not a damaged log: nothing to read anyway
        return exc
    return LogFormatError(  # the referee's next step: what can still be read
        f"{_intact_before(exc)} (--ignore-integrity reads it as far as its records decode)",
        path=exc.path, offset=exc.offset, line=exc.line, seq=exc.seq, kind=exc.kind)


TORN_ADVICE = "the events before it are intact"
"""How the log reader's torn-tail error goes on (buraco_log.log's ``_stop_torn``), said of a
tail torn at the first event's record too, where no event comes before it."""


def _intact_before(exc: LogFormatError) -> str:
    """``exc``'s message, saying of a tail torn at the first event's record (its seq the first
    of every log) that no event is intact, and that `repair` then needs ``--force`` (it
    refuses to leave no event); else unchanged."""
    if exc.kind != "torn" or exc.seq != FIRST_SEQ:
        return exc.message
    return (exc.message
            .replace(f"{TORN_ADVICE} (`buraco-log repair` cuts it off)",
                     "no event before it is intact (`buraco-log repair --force` cuts it off, "
                     "leaving a log of no events)")
            .replace(TORN_ADVICE, "no event before it is intact"))


def _not_started(salvage: Salvage) -> bool:
    """A salvaged log of a match not started, as `audit` says it: no event, and torn (if at
    all) in the file header, a crash creating the file. A tail torn at the first event's
    record may have lost that event: a damaged log, not a match not started."""
    return (salvage.torn and salvage.offset is not None
            and no_event_received(len(salvage.events), salvage.offset))


def load_events(path: Path, ignore_integrity: bool, at: int | None = None
                ) -> tuple[list[AnyEvent], str | None]:
    """The events of ``path`` and the warning (see :func:`load_timeline`); ``at`` past the
    events read from a damaged log is :class:`PastDamageError`, as the timeline says it."""
    salvage = _load_salvage(path, ignore_integrity)
    rule = damage_rule(salvage)
    last = max((e.seq for e in salvage.events), default=-1)
    if rule is not None and at is not None and at > last and not _not_started(salvage):
        raise past_damage(f"seq {at}", last, rule, at)
    return salvage.events, salvage.warning


def with_warning(data: Any, warning: str | None) -> Any:
    """JSON output made from a log that failed its integrity check: the warning comes first
    (``integrity_warning`` sorts before ``result``), the library's result beside it."""
    return data if warning is None else {"integrity_warning": warning, "result": data}


def view_json(view: TableView, tl: Timeline) -> dict[str, Any]:
    """A table view for programs: the recent events as objects (seq, event, seat, text), not
    sentences. The text is the one people read, as the viewing seat may know it."""
    data: dict[str, Any] = msgspec.to_builtins(view)
    recent = []
    for sentence in view.recent:
        head, _, text = sentence.partition(": ")
        seq = int(head.removeprefix("seq "))
        event = tl.event(seq)
        recent.append({"seq": seq, "event": type(event).__name__ if event else None,
                       "seat": getattr(event, "seat", None), "text": text})
    data["recent"] = recent
    # what makes the exit status 1 (filled where the end is shown): the key is there in
    # every table, so a program's `.findings | length` never meets a key that is missing
    data["findings"] = []
    return data


def _print_view(view: TableView, format: Format, tl: Timeline) -> None:
    if format is Format.json:
        emit_json(view_json(view, tl))
    else:
        tiles = tl.style == "tiles"
        for line in render_table(view, unit="tile" if tiles else "card"):
            _echo(line, tiles)


def _number(text: str) -> bool:
    """Plain ASCII digits, any number of them (``isdigit`` also takes ``²``): a number too
    big for any log is still a number, out of range, not an unknown key."""
    return text.isascii() and text.isdigit()


def _shown(number: str) -> str:
    """A number typed at the prompt as echoed back: clipped (the line may hold 4,095 digits)."""
    return number if len(number) <= 24 else f"{number[:20]}..."


_MAX_DIGITS = 18
"""More digits than this (leading zeros aside) is past the end of any log, and int() of a
line of 4,095 digits is not cheap."""


_MAX_KEY_LINE = 4096


def _await_a_typed_line() -> None:
    """At a terminal, wait for a line in slices of a quarter second: a Ctrl-C that came just
    before the read began left the read blocked until the next key (the signal is acted on
    only between Python steps). A terminal gives one line a read, so nothing waits in
    Python's buffer meanwhile; files and pipes are read as they are."""
    if sys.stdin is None or not sys.stdin.isatty():
        return
    fd = sys.stdin.fileno()
    while not select.select([fd], [], [], 0.25)[0]:
        pass


def _step(tl: Timeline, view: TableView, seat: int | None, format: Format, recent: int) -> None:
    """Read keys from stdin, one command a line; the table goes to stdout after each."""
    seq = view.seq
    _print_view(view, format, tl)
    while True:
        try:  # the prompt's write too: a Ctrl-C typed as it appears is raised at its end
            typer.echo(f"[seq {seq}/{tl.last_seq}] n next, p previous, <seq> or h<hand> jump, "
                       "q quit> ",
                       err=True, nl=False)
            _await_a_typed_line()
            # bounded: a stream with no line end (/dev/zero) was read into memory without end
            line = sys.stdin.readline(_MAX_KEY_LINE) if sys.stdin is not None else ""
        except KeyboardInterrupt:  # Ctrl-C: "interrupted" on a line of its own, not the prompt's
            typer.echo("", err=True)
            raise
        if not line:  # end of input (Ctrl-D; None: closed): end the prompt's line, which the
            typer.echo("", err=True)  # shell's own prompt took up after
            break
        if len(line) == _MAX_KEY_LINE and not line.endswith("\n"):
            raise fail(f"--step: an input line longer than {_MAX_KEY_LINE} characters is no key "
                       "(is standard input a file of keys?)", EXIT_USAGE)
        key = line.strip().lower()
        if key in ("q", "quit"):
            break
        if key in ("", "n", "next"):
            target = seq + 1
        elif key in ("p", "prev", "previous"):
            target = seq - 1
        elif _number(key.removeprefix("-")):  # lstrip took "--5" too, and int() raised
            if len(key.removeprefix("-").lstrip("0")) > _MAX_DIGITS:
                typer.echo(f"no seq {_shown(key)} (0 to {tl.last_seq})", err=True)
                continue
            target = int(key)
        elif key.startswith("h") and _number(key[1:].strip()):
            hand = key[1:].strip()
            if len(hand.lstrip("0")) > _MAX_DIGITS:
                typer.echo(f"the log has no hand {_shown(hand)} ({tl.hands_known()})", err=True)
                continue
            try:
                target = tl.seq_of(int(hand))
            except ReplayError as exc:
                typer.echo(exc.message, err=True)
                continue
        else:
            # a key is echoed clipped, and never as terminal controls
            typer.echo(f"unknown key '{terminal_safe(key[:40])}'", err=True)
            continue
        if not 0 <= target <= tl.last_seq:
            typer.echo(f"no seq {target} (0 to {tl.last_seq})", err=True)
            continue
        seq = target
        _print_view(tl.view(seq, seat=seat, recent=recent), format, tl)


@guarded
def audit_cmd(
    paths: Annotated[list[Path], typer.Argument(help="Logs, or directories of logs.",
                                                parser=named_path,
                                                show_default=False)],
    format: FormatOpt = Format.table,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=0, help="Processes (0: one per CPU, "
                                      "at most 8).")] = 0,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Table: only logs with findings "
                                        "and the summary.")] = False,
    html: Annotated[Path | None, typer.Option(
        "--html", help="Also write the log's replay page (as `view` does), opened at the first "
        "finding. One log only.", show_default=False, parser=output_path)] = None,
    require_commitment: Annotated[bool | None, typer.Option(
        "--require-commitment/--no-require-commitment",
        help="Deals no committed or plain seed backs, and a committed match whose seed is not "
        "revealed (a log cut before its end), are findings. Default: the site setting "
        "(BURACO_LOG_REQUIRE_COMMITMENT, or [audit] require_commitment in the config file: "
        "BURACO_LOG_CONFIG, else ~/.config/buraco-log/config.toml, then "
        "/etc/buraco-log/config.toml; see docs/audit-settings.md), else off.",
        show_default=False)
    ] = None,
    keys: Annotated[list[Path] | None, typer.Option(
        "--keys", help="The site's trusted public keys: a directory of .pub files (and a "
        "'revoked' list), or a key file; verifies every signature (docs/signing.md). Default: "
        "BURACO_LOG_KEYS, or [audit] keys in the config file.", show_default=False,
        parser=named_path)] = None,
    receipt: Annotated[list[Path] | None, typer.Option(
        "--receipt", help="A player's signed receipt (JSON; repeat the option): the log must "
        "extend it. Needs --keys.", show_default=False, parser=named_path)] = None,
    require_signatures: Annotated[bool | None, typer.Option(
        "--require-signatures/--no-require-signatures",
        help="A log must be signed by a trusted key up to its last event, end with MatchEnded "
        "and commit its deals. Default: the site setting (BURACO_LOG_REQUIRE_SIGNATURES, or "
        "[audit] require_signatures in the config file), else off.", show_default=False)
    ] = None,
    continues: Annotated[Path | None, typer.Option(
        "--continues", help="The log this one goes on from (a match resumed in a new log): its "
        "carried totals must be the totals that log reached, between hands, with the same "
        "rules and seats. One log only.", show_default=False, parser=named_path)] = None,
    head: Annotated[str | None, typer.Option(
        "--head", metavar="DIGEST", help="The head digest published for the match (a "
        "scoreboard, a result e-mail; 16 to 64 hex digits): the log must hold it, as its head "
        "or after an earlier event (then a note says where). Catches an unsigned log edited "
        "with its chain recomputed. One log only.", show_default=False)] = None,
    cards: CardsOpt = Cards.letters,
    progress: Annotated[bool | None, typer.Option(
        "--progress/--no-progress",
        help="Progress of several logs on stderr: a bar on a terminal, plain lines elsewhere "
        "(a cron job's log, CI; default: only when stderr is a terminal, not TERM=dumb).")
    ] = None,
) -> None:
    """Audit logs: integrity, deal provenance, legality, scoring. Exit 1 if anything is found.

    A log of a match that never received an event is reported NOT STARTED (exit 0), unless a
    receipt given for it shows the site signed events it no longer holds. Notes say what an OK
    does not prove (an unsealed log, a reveal that is missing, events no signature covers).
    Several logs exit with the worst entry's status: 2 if any is no log or could not be read."""
    _cards_as(cards)
    try:
        required = site_require_commitment(require_commitment).value
        signing = audit.signing_options(
            [str(k) for k in keys or ()], [str(r) for r in receipt or ()], require_signatures,
            by_match=len(paths) > 1 or paths[0].is_dir())  # one log: all receipts are for it
    except (audit.SettingsError, SigningError) as exc:
        raise fail(str(exc), EXIT_USAGE, as_json=format is Format.json, error=exc) from None
    for p in paths:
        # A link that leads nowhere (dangling, or a loop) too: the report said FINDINGS of
        # it and exited 2, the status of a path that cannot be opened (README's exit table).
        if not p.exists():
            raise fail(f"{p}: {why_missing(p)}", EXIT_USAGE,  # as every command says it
                       as_json=format is Format.json)
    if html is not None:  # the page's module only for a page (a start of every command)
        from cli.view_cmd import audit_html_usage

        audit_html_usage(html, paths, as_json=format is Format.json)
    _continues_usage(continues, paths, as_json=format is Format.json)
    _head_usage(head, paths, as_json=format is Format.json)
    _refuse_evidence_as_page(html, [str(r) for r in receipt or ()], [str(k) for k in keys or ()],
                             as_json=format is Format.json)
    links: list[str] = []
    passed: list[str] = []  # every file given is counted: audited, or said passed over
    files = audit.find_logs(paths, links=links, passed=passed)
    if passed and files:  # none: "no logs found" is the one line
        from cli.audit_batch import passed_note

        typer.echo(terminal_safe(passed_note(passed)), err=True)
    if links:  # their logs are not audited: said, not passed over
        shown = ", ".join(links[:3]) + (f" and {len(links) - 3} more" if len(links) > 3 else "")
        typer.echo(terminal_safe(
            f"buraco-log: note: {shown}: "
            + ("a link to a directory" if len(links) == 1 else "links to directories")
            + ", not followed (a link may lead back up, a loop): give "
            + ("its target" if len(links) == 1 else "their targets")
            + " to audit the logs there"), err=True)
    folders = [p for p in paths if p.is_dir()]
    if folders:  # the recorder's module (asyncio) only where a journal may be: 0.2 of `audit
        from buraco_log.recorder import journal_notes  # LOG`'s start, for a log given alone

        for p in folders:
            for note in journal_notes(p):
                typer.echo(f"buraco-log: note: {note}", err=True)
    if not files:
        raise fail(f"{', '.join(map(str, paths))}: no logs found", EXIT_USAGE,
                   as_json=format is Format.json)
    for p in paths:  # one of several paths that gave nothing: said, not passed over
        if p.is_dir() and not any(_under(f, p) for f in files):
            typer.echo(terminal_safe(f"buraco-log: note: {p}: no logs in this directory"),
                       err=True)
    workers = jobs if jobs > 0 else min(8, os.cpu_count() or 1)
    workers = min(workers, max(1, len(files) // 4))
    show = _stderr_is_terminal() if progress is None else progress
    aliases = audit.same_files(files)
    single = len(paths) == 1 and not paths[0].is_dir()  # a FIFO given by name is one log too
    if not single and not (signing is not None and signing.receipts):
        # each verdict as it is ready (a receipt no log holds needs the whole batch)
        raise typer.Exit(_stream_batch(files, workers, required, signing, aliases,
                                       as_json=format is Format.json, quiet=quiet, show=show))
    batch = _audit_with_progress(files, workers, required, signing, show)
    verdicts = [_stdin_notes(v) for v in _with_aliases(batch, aliases)]
    if continues is not None:
        verdicts[0] = _with_continuation(verdicts[0], continues, as_json=format is Format.json)
    if head is not None and not _not_a_log(verdicts[0].integrity):
        verdicts[0] = _with_published_head(verdicts[0], head)
    # the library's: a receipt of a log of the batch renamed is that log's finding
    orphans = batch.unmatched
    orphan = None
    if orphans:  # the match's log is missing, or cut so that no event names its match
        held = orphans[0]
        more = len(orphans) - 1
        # a log whose match id looks the same (NFC/NFD, a zero-width space) is named with
        # both written escaped: "for match 'café', which none of the logs holds" beside a
        # log of match 'café' read as a contradiction
        alike = next((v for v in verdicts if v.match_id is not None
                      and lookalike(held.receipt.match_id, v.match_id)), None)
        theirs = (repr(held.receipt.match_id) if alike is None or alike.match_id is None
                  else quoted(held.receipt.match_id, alike.match_id)[0])
        orphan = (f"{held.source}: the receipt is for match {theirs}, which "
                  "none of the logs audited holds"
                  + ("" if alike is None or alike.match_id is None else
                     f" ({alike.path} holds match "
                     f"{quoted(held.receipt.match_id, alike.match_id)[1]}, another id that "
                     "looks the same)")
                  + (f" (and {more} more receipt{'s' if more > 1 else ''} for matches no log "
                     "holds)" if more else ""))
    if html is not None and not _not_a_log(verdicts[0].integrity):
        # Before the report: a page that cannot be written is the one error on stdout, never
        # a second document after the report.
        from cli.view_cmd import audit_html

        audit_html(html, paths[0], verdicts[0])
    if format is Format.json:
        if orphan is not None:
            # one JSON document: the error object as before, and every log's verdict beside
            # it (the verdicts were dropped for the error)
            error = {**error_object(orphan, EXIT_FINDINGS),
                     "receipts": [_receipt_json(h) for h in orphans]}
            emit_json({"error": error, "verdicts": verdicts})
        else:
            if single:
                emit_json(verdicts[0])
            else:
                _emit_json_list(verdicts)
    else:
        for v in verdicts:
            if quiet and v.ok:
                continue
            _echo_all(render_verdict(v, continues=continues))
        if not single:
            _echo(_batch_summary(verdicts))
    # the worst status of the batch's entries, as `verify` of several logs gives it: an entry
    # that is no log, or that could not be read, is exit 2 as that file audited alone is
    worst = (EXIT_USAGE if any(_not_a_log(v.integrity) for v in verdicts) else
             EXIT_OK if all(v.ok for v in verdicts) else EXIT_FINDINGS)
    if orphan is not None:  # after the report: the other logs' verdicts are not lost
        raise fail(orphan, max(worst, EXIT_FINDINGS))
    if batch.deaths:  # after the report too: the batch went on, and says so
        left_out = ({v.path: "NOT STARTED" if v.not_started else "OK" for v in verdicts if v.ok}
                    if quiet and format is not Format.json else {})
        raise fail(_deaths_line(batch.deaths, left_out), max(worst, EXIT_FINDINGS))
    if single and _not_a_log(verdicts[0].integrity) and html is not None:
        # asked for, and not written: say so (it was silent)
        typer.echo(terminal_safe(f"buraco-log: error: {html}: no page written: "
                                 f"{paths[0]} is not a log"), err=True)
    raise typer.Exit(worst)


def _stream_batch(files: list[str], workers: int, required: bool,
                  signing: audit.SigningOptions | None, aliases: dict[str, str], *,
                  as_json: bool, quiet: bool, show: bool) -> int:
    """Audit a batch writing each verdict as it is ready, in the order of ``files``, then the
    summary line (table); the exit status (the worst entry's, as the whole batch gives it)."""
    from cli.audit_batch import AGAIN, SameMatch, stream

    deaths: list[tuple[str | None, int | None]] = []
    tally = _tally()
    again: dict[str, str] = {}  # the logs a worker died on, audited again: their verdicts

    def each(v: audit.Verdict) -> None:
        if v.ok and any(n.startswith(AGAIN) for n in v.notes):
            again[v.path] = "NOT STARTED" if v.not_started else "OK"

    names = SameMatch(aliases)
    with _progress(len(files), show) as advance, cyclic_gc():
        verdicts = (_stdin_notes(names(v)) for v in audit.audit_iter(
            files, workers=workers, require_commitment=required, signing=signing,
            deaths=deaths, on_no_pool=_no_pool))
        stream(map(advance, verdicts), as_json=as_json, quiet=quiet, tally=tally,
               show=lambda v: _echo_all(render_verdict(v)), on_each=each)
    if not as_json:
        _echo(tally.line())
    worst = (EXIT_USAGE if tally.no_log or tally.unread else
             EXIT_OK if not tally.bad else EXIT_FINDINGS)
    if deaths:  # after the report: the batch went on, and says so
        raise fail(_deaths_line(deaths, again if quiet and not as_json else {}),
                   max(worst, EXIT_FINDINGS))
    return worst


def _no_pool(exc: OSError) -> None:
    typer.echo(f"buraco-log: note: worker processes could not be started ({exc.strerror or exc}"
               "): the logs are audited in this process, as with -j 1", err=True)


@contextlib.contextmanager
def _progress(total: int, show: bool) -> Iterator[Callable[[audit.Verdict], audit.Verdict]]:
    """Progress of the logs on stderr when ``show``: a bar on a terminal (the verdicts print
    above it), else plain lines (``--progress`` in a cron job's log: there was no way to
    have any); a function each verdict passes through."""
    if not show:
        yield lambda v: v
        return
    from cli.progress import progress

    with progress("audit", "logs", total) as update:
        done = 0

        def advance(v: audit.Verdict) -> audit.Verdict:
            nonlocal done
            done += 1
            update(done)
            return v

        yield advance


def _emit_json_list(items: Sequence[Any]) -> None:
    """``emit_json(items)``, the same bytes, written an item at a time: the whole list as
    Python objects and one string took some 125 kB a log (254 MB of memory for 2,000 logs,
    where the table took 54 MB), so a year of a club's matches ran out of memory. Cut by an
    interrupt, it ends with the error's object and parses, as a streamed batch's list does
    (:class:`cli.audit_batch.JsonList`)."""
    from cli.audit_batch import JsonList

    out = JsonList()
    for item in items:
        out.add(item)
    out.close()


def _continues_usage(continues: Path | None, paths: Sequence[Path], *, as_json: bool) -> None:
    """``--continues`` names one earlier log for the one log audited."""
    if continues is None:
        return
    if len(paths) != 1 or paths[0].is_dir():
        raise fail("--continues checks one log against the log it goes on from: name one log",
                   EXIT_USAGE, as_json=as_json)
    try:  # not Path.exists(): a name too long for a file raised, and the error lost the option
        os.stat(continues)
    except OSError:
        raise fail(f"--continues {continues}: {why_missing(continues)}", EXIT_USAGE,
                   as_json=as_json) from None
    if _same(continues, paths[0]):
        raise fail(f"--continues {continues}: is the log being audited; name the log it goes "
                   "on from", EXIT_USAGE, as_json=as_json)


def _with_continuation(v: audit.Verdict, earlier: Path, *, as_json: bool) -> audit.Verdict:
    """The verdict with the ``continuation.*`` findings of the log it goes on from."""
    from buraco_log.audit.continuation import check_continuation

    before, integrity = audit.read_log(earlier)
    if _not_a_log(integrity):  # named by the user, and nothing of a log in it
        raise fail(f"--continues {earlier}: not a log: {integrity.message}", EXIT_USAGE,
                   as_json=as_json)
    after, _ = audit.read_log(v.path)
    found = check_continuation(before, after, earlier_integrity=integrity)
    if not found:
        return v
    return msgspec.structs.replace(v, findings=(*v.findings, *found), ok=False)


def _head_usage(head: str | None, paths: Sequence[Path], *, as_json: bool) -> None:
    """``--head`` is one match's published digest, for the one log audited."""
    if head is None:
        return
    from buraco_log.audit.heads import published_head_problem

    if len(paths) != 1 or paths[0].is_dir():
        raise fail("--head checks one match's published head digest: name one log",
                   EXIT_USAGE, as_json=as_json)
    problem = published_head_problem(head)
    if problem is not None:
        raise fail(f"--head: {problem}", EXIT_USAGE, as_json=as_json)


def _with_published_head(v: audit.Verdict, head: str) -> audit.Verdict:
    """The verdict with ``log.head_changed`` when the log holds the published head nowhere,
    or a note saying after which event it holds it when the log went on past it."""
    from buraco_log.audit.heads import check_published_head

    events, _, signed = audit.read_log_signed(v.path)
    finding, note = check_published_head(events, signed.version, head)
    if finding is not None:  # under integrity, first, as the text prints it
        return msgspec.structs.replace(v, findings=audit.ordered((*v.findings, finding)),
                                       ok=False)
    if note is not None:
        return msgspec.structs.replace(v, notes=(*v.notes, note))
    return v


def _continuation_lines(v: audit.Verdict, earlier: Path) -> Iterator[str]:
    problems = [f for f in v.findings if f.section == "continuation"]
    yield (f"  continues   {earlier}: "
           + ("goes on from where it stopped (the totals it reached, the same rules and seats)"
              if not problems else counted(len(problems), "problem")))
    for f in problems:
        yield f"    seq {'-' if f.seq is None else f.seq} [{f.rule}] {f.message}"


def _same(a: Path | str, b: Path | str) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # one of them does not exist: not the same file
        return False


def _refuse_evidence_as_page(html: Path | None, receipts: list[str], keys: list[str], *,
                             as_json: bool) -> None:
    """``--html`` must not name a receipt or a trusted key being read, nor a file in a trusted
    keys directory: the page is renamed over it, and a player's receipt is the one proof
    against the log's keeper (a page named ``x.pub`` among the keys breaks every later
    audit)."""
    if html is None:
        return
    from buraco_log.audit import settings

    trusted = list(settings.keys(keys).value)
    for path, what in [*((r, "a receipt") for r in receipts),
                       *((k, "a trusted key") for k in trusted if not os.path.isdir(k))]:
        if _same(html, path):
            raise fail(f"{html}: is {what} being read ({path}); name another file for the page",
                       EXIT_USAGE, as_json=as_json)
    for d in (k for k in trusted if os.path.isdir(k)):
        if _same(html.parent, d):
            raise fail(f"{html}: is in the trusted keys directory {d}; name a file elsewhere for "
                       "the page", EXIT_USAGE, as_json=as_json)


def _place(integrity: audit.Integrity) -> str:
    """Where a log's damage starts, as the reader's errors say it: the line and seq of a JSON
    Lines log (its reader gives no offset, so `show` named no place at all), else the byte and
    seq (it named no seq, where `replay` of the same log does)."""
    seq = f", seq {integrity.seq}" if integrity.seq is not None else ""
    if integrity.format == "jsonl" and integrity.record is not None:
        return f", line {integrity.record}{seq}"
    return f", byte {integrity.offset}{seq}" if integrity.offset is not None else seq


def _unreadable_log(path: Path, integrity: audit.Integrity) -> LogFormatError:
    """The error `show` raises for a file it cannot read as a log, placed as `verify` places
    it: a JSON Lines log by line and seq (its reader gives no byte offset; it said "byte 0"
    for the version on line 1), a binary log by the byte of the field at fault."""
    message = integrity.message or "not a buraco-log file"
    kind = integrity.kind or "header"
    if integrity.format == "jsonl" and integrity.record is not None:
        return LogFormatError(message, path=str(path), line=integrity.record,
                              seq=integrity.seq, kind=kind)
    return LogFormatError(message, path=str(path), offset=integrity.offset or 0, kind=kind)


def _not_a_log(integrity: audit.Integrity) -> bool:
    """A file this buraco_log cannot read as a log at all (not a regular file, no log magic at
    byte 0, a format version newer than this reader): given by name, exit 2 as every other
    command does (LogFormatError.exit_status), not a finding about a log (1)."""
    return integrity.events == 0 and (
        integrity.kind in LogFormatError.UNREADABLE_KINDS
        or (integrity.kind == "header" and integrity.offset == 0))


def _stderr_is_terminal() -> bool:
    """A progress bar only where someone watches: never in pipes, files or CI logs."""
    return progress_shown()


def _receipt_json(held: HeldReceipt) -> dict[str, Any]:
    """A receipt no log of the batch holds, in the JSON error: its file and what it signs."""
    r = held.receipt
    return {"path": held.source, "match_id": r.match_id, "seq": r.seq, "seat": r.seat,
            "key_id": r.key_id}


def _audit_with_progress(files: list[str], workers: int, require_commitment: bool,
                         signing: audit.SigningOptions | None = None,
                         show: bool = False) -> audit.Verdicts:
    with _progress(len(files), show and len(files) > 1) as advance, \
            cyclic_gc() if len(files) > 1 else contextlib.nullcontext():

        def done(v: audit.Verdict) -> None:
            advance(v)

        return audit.audit_many(files, workers=workers, on_done=done, on_no_pool=_no_pool,
                                require_commitment=require_commitment, signing=signing)


def _deaths_line(deaths: Sequence[tuple[str | None, int | None]],
                 left_out: dict[str, str] | None = None) -> str:
    """The line of a batch during which worker processes died (killed, out of memory): how
    many, how, on which logs, and that the batch went on (it ended with that line alone).
    ``left_out``: the verdicts --quiet did not show (path: OK or NOT STARTED), said here for
    a log a worker died on (the line said "see its verdict" of a verdict not shown)."""
    how = sorted({audit.signal_text(status) for _, status in deaths})
    logs = list(dict.fromkeys(path for path, _ in deaths if path is not None))
    named = _named(logs)
    one = len(deaths) == 1
    hidden = [p for p in logs if p in (left_out or {})]
    shown = [p for p in logs if p not in hidden]
    found = " or ".join(sorted({(left_out or {})[p] for p in hidden}))
    again = ""
    if logs and not hidden:
        again = " (each log a worker died on was audited again alone: see its verdict)"
    elif logs and not shown:
        again = f" (each log a worker died on was audited again alone, and found {found})"
    elif logs:
        again = (" (each log a worker died on was audited again alone: see the verdict of "
                 f"{_named(shown)}; {_named(hidden)} {'was' if len(hidden) == 1 else 'were'} "
                 f"found {found})")
    if left_out and again:  # after the parenthesis on --quiet: a clause, not a second one
        again = f"; {again[2:-1]}"
    return (("a worker process died" if one else f"{len(deaths)} worker processes died")
            + f" during the audit ({'; '.join(how)}: killed, or out of memory)"
            + (f", on {named}" if logs else ", between logs")
            + "; the batch went on: every log has its verdict"
            + (", counted in the summary above (--quiet shows only those with findings)"
               if left_out else " above") + again)


def _named(paths: Sequence[str]) -> str:
    """The first three of ``paths``, and how many more."""
    return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def _with_aliases(verdicts: list[audit.Verdict], aliases: dict[str, str]) -> list[audit.Verdict]:
    """Say of a log audited under a second name (a hard or symbolic link) that it is the same
    file as the first (two verdicts, one match: it was counted as two, unsaid), and of a log
    whose match an earlier log of the batch holds too which log that is."""
    from cli.audit_batch import SameMatch

    return list(map(SameMatch(aliases), verdicts))


def _unsigned_events(v: audit.Verdict) -> bool:
    """A signed log (or one whose start records a key) that is OK though events at its end are
    covered by no signature: its note says so, and a batch run with --quiet shows no note."""
    sg = v.signing
    if sg.required or v.not_started or v.integrity.status not in ("sealed", "unsealed"):
        return False
    if not sg.signatures:  # audited with --keys, a log with no key nor signature too
        return v.events > 0 and (sg.key_id is not None or any(
            n.startswith(audit.NO_SIGNATURE_NOTE) for n in v.notes))
    return sg.last_signed_seq is not None and sg.last_signed_seq < v.events - 1


def _tally() -> Any:
    from cli.audit_batch import Tally

    return Tally(_not_a_log, _unsigned_events)


def _batch_summary(verdicts: Iterable[audit.Verdict]) -> str:
    tally = _tally()
    for v in verdicts:
        tally.add(v)
    return str(tally.line())


@guarded
def diff(
    a: Annotated[Path, typer.Argument(help="One copy of the match.", show_default=False,
                                      parser=named_path)],
    b: Annotated[Path, typer.Argument(help="The other copy.", show_default=False,
                                      parser=named_path)],
    format: FormatOpt = Format.table,
    cards: CardsOpt = Cards.letters,
) -> None:
    """Compare two copies of a match: first divergence, prefix, head digests. Exit 1 if they
    differ."""
    _cards_as(cards)
    if a == b and from_stdin(a):  # one stream, read once: it would always be "identical"
        raise fail("standard input holds one log: give '-' for one of A and B only",
                   EXIT_USAGE, as_json=format is Format.json)
    for path in (a, b):
        if (special := special_file(path)) is not None:
            raise fail(f"{path}: {special}", EXIT_USAGE, as_json=format is Format.json)
    result = audit.diff_logs(a, b)
    if format is Format.json:
        emit_json(result)
    else:
        _echo_all(render_diff(result))
    raise typer.Exit(EXIT_OK if result.identical else EXIT_FINDINGS)


def _past_illegal(at: int, result: audit.Explanation) -> ReplayError:
    """A seq asked for past the first illegal event: a finding (exit 1) in the words of
    `replay` and `moves`, not an explanation of another event exiting 0; its JSON names the
    rule, as every error naming one does."""
    return PastIllegalError(f"seq {at} is past the first illegal event, seq {result.seq} "
                            f"[{result.rule}]: the table is known up to seq "
                            f"{result.before.seq}; `explain --at {result.seq}` explains it",
                            seq=at, rule=result.rule or "")


def _note_later_illegal(path: Path, tl: Timeline, at: int) -> None:
    """A seq before the first illegal event is explained (exit 0), the event noted on stderr,
    as `replay --at` and `moves --at` note it."""
    if tl.illegal is not None and tl.illegal.seq is not None and tl.illegal.seq > at:
        note(f"{path}: seq {tl.illegal.seq} is illegal [{tl.illegal.rule}]; the table is "
             f"known up to seq {tl.last_seq}")


@guarded
def explain(
    path: LogArg,
    at: Annotated[int, typer.Option("--at", min=0, help="The seq of the event to explain.",
                                    show_default=False)],
    format: FormatOpt = Format.table,
    ignore_integrity: ExplainIgnoreIntegrityOpt = False,
    cards: CardsOpt = Cards.letters,
) -> None:
    """Why the event at a seq was, or was not, legal: the rule and the facts that decided it.

    A seq after the first illegal event is a finding (exit 1): the table after that event is
    unknown, so nothing there can be judged; explain the illegal event itself instead. A seq
    before it is explained (exit 0), the illegal event noted on stderr; a seq the log does not
    hold is a usage error (exit 2), whatever else the log holds."""
    _cards_as(cards)
    try:
        # the whole log, held: the deal's provenance (of a hand start, or the deal behind an
        # illegal event) reads the seeds and deals of every hand before it
        events, warning = load_events(path, ignore_integrity, at)  # as audit.explain reads it
        # one replay for the explanation and the note (two doubled the time on a long log);
        # none for a seq the log does not hold, refused at once as before
        held = any(e.seq == at for e in reversed(events))
        tl = Timeline(events) if held else None
        result = audit.explain_event(events, at, path=str(path), timeline=tl)
        if result.seq != at:  # the library explains the illegal event before it instead
            raise _past_illegal(at, result)
        if result.legal and tl is not None:  # an illegal event later in the log is noted
            _note_later_illegal(path, tl, at)
    except ReplayError as exc:
        raise _replay_error(path, exc, format is Format.json) from None
    if format is Format.json:
        emit_json(with_warning(result, warning))
        return
    if warning is not None:
        _echo(warning)
    first = events[0] if events else None  # the rules' rendering: Burako's tiles
    tiles = isinstance(first, MatchStarted) and first.rules.rendering == "tiles"
    for line in render_explanation(result):
        _echo(line, tiles)
    _echo("table just before:")
    for line in render_table(result.before, indent="  ", unit="tile" if tiles else "card"):
        _echo(line, tiles)


def register(app: typer.Typer) -> None:
    """Add these commands to the top level of ``app``."""
    for command in (show, replay, diff, explain):
        app.command()(command)
    app.command("audit")(audit_cmd)
