"""Provenance: where the deals came from, re-derived by :mod:`buraco_log.dealer`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import msgspec

from buraco_log.audit.findings import Finding
from buraco_log.dealer import check_deals
from buraco_log.errors import BuracoLogError
from buraco_log.events import (
    AnyEvent,
    HandStarted,
    MatchEnded,
    MatchStarted,
)


class Provenance(msgspec.Struct, frozen=True):
    """Where the deals came from. ``status``: committed, plain_seeds, mixed or none."""

    status: Literal["committed", "plain_seeds", "mixed", "none"]
    commitment: str | None
    revealed: bool  # the server seed was revealed at the match end
    deals: int
    findings: tuple[Finding, ...]
    unchecked: int = 0  # deals not re-derived: no seed backs them, or the seed is not revealed
    # The seq of a start of another match, if the log holds one: the deals after it belong to
    # that match, whose seeds the first start's commitment says nothing about (checked
    # against it, they were "deal.mismatch" and "deal.seed_mismatch" findings blaming the site
    # for a reveal that is the other match's). Legality names the second start itself.
    second_start: int | None = None
    after_second: int = 0  # deals recorded after it, not checked


_DEAL_EVENTS = frozenset((MatchStarted, HandStarted, MatchEnded))


def provenance(events: Sequence[AnyEvent], require_commitment: bool = False) -> Provenance:
    """Deal provenance: every recorded deal re-derived from its committed or plain seeds.

    A second match start of another match id begins another match (two logs run together):
    the deals after it are counted in ``after_second``, not checked against the first start's
    commitment. One of the same match id (a commitment swapped mid-match) leaves every deal
    this match's, checked against the first commitment."""
    # One pass picks the few events provenance reads (exact types: final classes); an ingest
    # checks every match's deals, and a second pass over all events cost a fifth of the check.
    marks = [e for e in events if type(e) in _DEAL_EVENTS]
    starts = [e for e in marks if type(e) is MatchStarted]
    other = next((e for e in starts[1:] if e.match_id != starts[0].match_id), None)
    if other is not None:
        second = next(i for i, e in enumerate(events) if e is other)
        mark = next(i for i, e in enumerate(marks) if e is other)
        first = _provenance(events[:second], require_commitment, marks[:mark])
        return msgspec.structs.replace(
            first, second_start=other.seq,
            after_second=sum(1 for e in marks[mark:] if type(e) is HandStarted))
    return _provenance(events, require_commitment, marks)


def _provenance(events: Sequence[AnyEvent], require_commitment: bool,
                marks: Sequence[AnyEvent]) -> Provenance:
    start: MatchStarted | None = None
    end: MatchEnded | None = None
    deals = 0
    plain = 0
    for e in marks:
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
        if end is None and not require_commitment:
            # The seed is revealed at the match end: not yet, in an unfinished (or cut) log.
            # The verdict says so in a note; a site that requires commitments gets a finding.
            found = [f for f in found if f.rule != "deal.not_revealed"]
    except (BuracoLogError, ValueError, IndexError, KeyError, TypeError) as exc:
        found = []
        extra = [Finding("provenance", "deal.mismatch", f"cannot check the deals: {exc}")]
    else:
        extra = []
    revealed = end is not None and end.server_seed is not None
    if commitment is None:
        unchecked = deals - plain  # plain seeds are re-derived; nothing backs the others
    elif revealed and not any(f.rule == "deal.seed_mismatch" for f in found):
        unchecked = plain  # committed deals re-derived; a plain one in a committed match is not
    else:
        unchecked = deals
    return Provenance(
        status=status, commitment=commitment, revealed=revealed, deals=deals,
        unchecked=unchecked,
        findings=tuple(Finding("provenance", f.rule, f.message, seq=_seq_of(f.rule, f.seq,
                                                                          events))
                       for f in found) + tuple(extra),
    )


def _seq_of(rule: str, seq: int | None, events: Sequence[AnyEvent]) -> int | None:
    """A finding's seq; a reveal missing because the log ends before MatchEnded is named at
    the last event, where the log ends (as ``sign.end_missing`` is), not at no seq ("seq -")."""
    if seq is None and rule == "deal.not_revealed" and events:
        return events[-1].seq
    return seq
