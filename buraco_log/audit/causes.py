"""Several faults in one log: which finding follows from an earlier one, and what the first
illegal event leaves unchecked.

A replay stops at the first illegal event: the table after it is unknown. The audit said
"0 hands; recorded scores agree" of a log whose hands all end after it, and named an illegal
discard as a cause of its own when the deal before it had been changed (the player discarded
a card the seeds dealt them). Here the audit finds, for the referee, what depends on what.
"""

from __future__ import annotations

from collections.abc import Sequence

from buraco_log.audit.deals import Provenance, _Derived
from buraco_log.audit.findings import NO_SNAPSHOTS, Finding
from buraco_log.dealer import DEAL_EVENTS
from buraco_log.errors import BuracoLogError
from buraco_log.events import (
    AnyEvent,
    HandEnded,
    HandStarted,
    MatchEnded,
    MatchStarted,
    TotalsCarried,
)
from buraco_log.timeline import Timeline


def _position(events: Sequence[AnyEvent], seq: int) -> int | None:
    return next((i for i, e in enumerate(events) if e.seq == seq), None)


def deal_behind(events: Sequence[AnyEvent], prov: Provenance, seq: int) -> int | None:
    """The seq of the changed deal (``deal.mismatch``) the illegal event at ``seq`` follows
    from: the deal of its hand is not the one its seeds give, and with the seeds' deal in its
    place the hand replays legally through ``seq`` (the player held what the seeds dealt).
    None when the event is illegal whatever the deal."""
    changed = {f.seq for f in prov.findings if f.rule == "deal.mismatch" and f.seq is not None}
    at = _position(events, seq)
    if not changed or at is None:
        return None
    deal = next((i for i in range(at - 1, -1, -1) if type(events[i]) is HandStarted), None)
    if deal is None or events[deal].seq not in changed:
        return None
    marks = [e for e in events[:at + 1] if type(e) in DEAL_EVENTS]
    start = next((e for e in marks if isinstance(e, MatchStarted)), None)
    end = next((e for e in events if isinstance(e, MatchEnded)), None)  # its seed reveal
    try:
        seeds = _Derived(marks, start, end).derived(events[deal].seq)
        if seeds is None:
            return None
        tl = Timeline([*events[:deal], seeds, *events[deal + 1:at + 1]],
                      snapshot_every=NO_SNAPSHOTS)
    except (BuracoLogError, ValueError, IndexError, KeyError, TypeError):
        return None
    return events[deal].seq if tl.illegal is None else None


def after_illegal(events: Sequence[AnyEvent], seq: int) -> tuple[int, ...]:
    """The seqs of the hand ends and the match end recorded after the illegal event at
    ``seq``: their scores (and the winner) cannot be recomputed, the table being unknown."""
    at = _position(events, seq)
    if at is None:
        return ()
    return tuple(e.seq for e in events[at + 1:] if type(e) in (HandEnded, MatchEnded))


def sheet_findings(events: Sequence[AnyEvent], seq: int,
                   recomputed: Sequence[Sequence[int]] = ()) -> list[Finding]:
    """The score sheet checked against itself, where the illegal event at ``seq`` stops the
    recomputation; that needs no table, so it is checked all the same. The match totals
    recorded after it must be the carried totals plus every hand's score, and the recorded
    winner the side with the highest total (RULES.md §10). ``recomputed``: the scores of the
    hands ended before ``seq``, counted in place of the recorded ones (a wrong one is already
    its own ``score.mismatch``, not to be found again in the totals). Wrong totals with a
    winner wrong by the sheet are one ``score.mismatch`` naming both, as when recomputed."""
    at = _position(events, seq)
    end = next((i for i, e in enumerate(events) if isinstance(e, MatchEnded)), None)
    if at is None or end is None or end <= at:
        return []
    me = events[end]
    assert isinstance(me, MatchEnded)
    if me.totals is None:
        return []
    sums = _sheet(events[:end], len(me.totals), recomputed)
    if sums is None:
        return []
    why = (f"the table after the illegal event at seq {seq} is unknown, so the scores "
           "recorded after it are added as recorded")
    leader = _leader(sums)
    if sums != list(me.totals):
        also = (f"; the recorded winner, side {me.winner}, is wrong too: by the hand scores, "
                f"side {leader} won" if me.winner is not None and leader is not None
                and leader != me.winner else "")
        return [Finding("scoring", "score.mismatch",
                        f"match totals: recorded {list(me.totals)}, but the hand scores (and "
                        f"any carried totals) add up to {sums}{also} ({why})", seq=me.seq)]
    if me.winner is not None and leader is not None and leader != me.winner:
        return [Finding("legality", "match.wrong_winner",
                        f"recorded winner side {me.winner}, but the recorded totals "
                        f"{list(me.totals)} make side {leader} the winner, the highest total "
                        f"({why})", seq=me.seq)]
    return []


def _sheet(events: Sequence[AnyEvent], sides: int, recomputed: Sequence[Sequence[int]]
           ) -> list[int] | None:
    """The carried totals plus every hand's score (the first ones ``recomputed``); None where
    they do not add up to one sheet (a hand with no score, scores of another shape, another
    match run in)."""
    start = events[0] if events and isinstance(events[0], MatchStarted) else None
    sums = [0] * sides
    hands = 0
    for e in events:
        if type(e) is MatchStarted and e is not start:
            return None
        scores: Sequence[int] | None = ()
        if isinstance(e, TotalsCarried):
            scores = e.totals
        elif isinstance(e, HandEnded):
            scores = recomputed[hands] if hands < len(recomputed) else e.scores
            hands += 1
        if scores is None or (scores and len(scores) != sides):
            return None
        for i, x in enumerate(scores):
            sums[i] += x
    return sums


def _leader(totals: Sequence[int]) -> int | None:
    """The side with the highest total; None on a tie (another hand is played)."""
    if not totals:
        return None
    top = max(totals)
    leaders = [i for i, t in enumerate(totals) if t == top]
    return leaders[0] if len(leaders) == 1 else None


def unchecked_note(events: Sequence[AnyEvent], seq: int, after: Sequence[int]) -> str:
    """The note of a verdict whose hands (or match end) were recorded after its first illegal
    event: what the scoring section did not recompute, so that its silence about them is not
    read as "the scores agree"."""
    seqs = set(after)
    ends = [e for e in events if isinstance(e, MatchEnded) and e.seq in seqs]
    hands = len(after) - len(ends)
    what = []
    if hands:
        first, last = after[0], max(s for s in after if not ends or s != ends[0].seq)
        where = f"seq {first}" if hands == 1 else f"seq {first} to {last}"
        what.append(f"{hands} hand end{'s' if hands != 1 else ''} ({where})")
    if ends:
        what.append(f"the match end (seq {ends[0].seq}: its totals and winner)")
    checked = (" (the recorded totals and winner were checked against the recorded hand "
               "scores)" if ends else "")
    one = len(after) == 1
    return (f"scoring: the {' and '.join(what)} recorded after the first illegal event, at seq "
            f"{seq}, {'was' if one else 'were'} not recomputed: the table after it is unknown, "
            f"so {'its scores are' if one else 'those scores are'} not checked{checked}")
