"""A head digest published for a match (on a scoreboard, in a result e-mail): is it the log's?

An unsigned sealed log edited with its chain recomputed reads as intact: only a head digest
kept elsewhere tells it from the log that was played. A referee given that digest checks it
here instead of comparing 64 hex digits by eye."""

from __future__ import annotations

from collections.abc import Sequence

from buraco_log import events as ev
from buraco_log import log
from buraco_log.audit.findings import Finding

SHORTEST = 16
"""Hex digits a published head may be cut to (sites print heads short); fewer could match
another log's head by chance."""


def published_head_problem(text: str) -> str | None:
    """Why ``text`` cannot be a published head digest, or None."""
    if not SHORTEST <= len(text) <= 64 or any(c not in "0123456789abcdefABCDEF" for c in text):
        return (f"a head digest is {SHORTEST} to 64 hex digits (as `show` and `verify` print "
                f"it, or its start), not {text[:70]!r}")
    return None


def check_published_head(events: Sequence[ev.AnyEvent], version: int,
                         published: str) -> tuple[Finding | None, str | None]:
    """``(finding, note)`` for a head digest published for the match of ``events``.

    The log's own head: neither. The log's head after an earlier seq (the log went on after it
    was published): a note saying where. Nowhere in the log: the ``log.head_changed`` finding,
    its events changed, cut or replaced since."""
    want = published.lower()
    chain = log.chain_start(version)
    held = 0 if chain.hexdigest().startswith(want) else None  # events the head covers
    for i, e in enumerate(events, 1):
        chain.update(ev.encode(e) if version == ev.FORMAT_VERSION else ev.encode_as(e, version))
        if chain.hexdigest().startswith(want):
            held = i
    head = chain.hexdigest()
    shown = want if len(want) <= SHORTEST else want[:SHORTEST] + "..."
    if head.startswith(want):
        return None, None
    if held is not None:
        after = len(events) - held
        where = "before its first event" if not held else f"after seq {events[held - 1].seq}"
        # the events after it are the log's own word: an edit there (a changed score, a
        # move) with the chain recomputed passes this check, so the note says so
        them = "it" if after == 1 else "them"
        return None, (f"head {shown}, the one published, is this log's {where}: the log goes "
                      f"on for {after} more event{'' if after == 1 else 's'} after it, and "
                      f"the published head vouches for none of {them} (a change there is "
                      "found only by the other sections)")
    return Finding("integrity", "log.head_changed",
                   f"the head digest published for this match, {shown}, is not this log's "
                   f"({head[:SHORTEST]}...) nor its head after any earlier event: its events "
                   "were changed, cut or replaced since it was published"), None
