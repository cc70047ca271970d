"""Whether one log goes on from another: a resumed match's carried totals against where the
earlier log stopped.

A match resumed in a new log records its side totals in ``TotalsCarried`` (docs/rules.md, "A
match that starts from carried-over totals"). Alone, a log cannot show those totals are right:
nothing in it names the log it continues. Given both logs, a referee can check them: the
earlier log intact and legal, stopped between hands with the match undecided, the same rules,
players and seats, the deal passed on to the next dealer, and the totals carried equal to the
totals it reached.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from buraco_log.audit.findings import Finding
from buraco_log.audit.integrity import Integrity, read_log
from buraco_log.errors import ReplayError
from buraco_log.events import AnyEvent, MatchStarted, TotalsCarried
from buraco_log.reducer import Replayer

_INTACT = ("sealed", "unsealed")


def check_continuation(earlier: Sequence[AnyEvent], later: Sequence[AnyEvent], *,
                       earlier_integrity: Integrity | None = None) -> list[Finding]:
    """Findings (rule ids ``continuation.*``) on ``later`` as the resumption of ``earlier``.

    ``earlier_integrity``: how the earlier log's bytes held up (None: events not read from a
    file). Damaged, its totals are those of an intact prefix, and that is a finding of its own,
    since a referee cannot take them as where the match stopped.
    """
    found: list[Finding] = []
    if not earlier or type(earlier[0]) is not MatchStarted:
        return [Finding("continuation", "continuation.earlier_log",
                        "the earlier log holds no match start: nothing to go on from")]
    if not later or type(later[0]) is not MatchStarted:
        return [Finding("continuation", "continuation.earlier_log",
                        "the later log holds no match start: it goes on from nothing")]
    first: MatchStarted = earlier[0]
    resumed: MatchStarted = later[0]
    if earlier_integrity is not None and earlier_integrity.status not in _INTACT:
        found.append(Finding("continuation", "continuation.earlier_log",
                             f"the earlier log is {earlier_integrity.status}: where it "
                             f"stopped is known only up to seq {earlier[-1].seq}"))
    r = Replayer()
    try:
        r.run(earlier)
    except ReplayError as exc:
        return [*found, Finding("continuation", "continuation.earlier_log",
                                f"the earlier log is illegal at seq {exc.seq}: {exc.message}; "
                                "its totals cannot be carried")]
    stopped = r.state()
    if stopped.phase in ("decided", "over"):
        found.append(Finding("continuation", "continuation.ended",
                             "the earlier log's match is "
                             + ("over" if stopped.phase == "over" else "decided")
                             + f" (totals {_totals(stopped.totals)}): there is nothing to "
                             "resume"))
    elif stopped.phase != "between":
        found.append(Finding("continuation", "continuation.mid_hand",
                             f"the earlier log stops in the middle of hand {stopped.hand} "
                             f"(seq {stopped.seq}): totals carry over between hands only"))
    if resumed.rules != first.rules:
        found.append(Finding("continuation", "continuation.rules",
                             f"the rules differ: {first.rules.name} in the earlier log, "
                             f"{resumed.rules.name} in the later"
                             + ("" if first.rules.name != resumed.rules.name
                                else " (same name, other knobs)"), seq=resumed.seq))
    if (resumed.players, resumed.sides) != (first.players, first.sides):
        found.append(Finding("continuation", "continuation.players",
                             f"the seats differ: {_seats(first)} in the earlier log, "
                             f"{_seats(resumed)} in the later", seq=resumed.seq))
    played = len(stopped.results)
    dealer = (first.first_dealer + played) % max(1, len(first.players))
    if stopped.phase == "between" and resumed.first_dealer != dealer:
        found.append(Finding("continuation", "continuation.dealer",
                             f"the later log's first dealer is seat {resumed.first_dealer}, but "
                             f"after {played} hand{'s' if played != 1 else ''} the deal passes to "
                             f"seat {dealer}", seq=resumed.seq))
    carried = next((e for e in later[1:2] if type(e) is TotalsCarried), None)
    totals = tuple(carried.totals) if carried is not None else (0,) * len(stopped.totals)
    if stopped.phase == "between" and totals != tuple(stopped.totals):
        where = (f"carries {_totals(totals)}" if carried is not None
                 else f"carries no totals (starts from {_totals(totals)})")
        found.append(Finding("continuation", "continuation.totals",
                             f"the later log {where}, but the earlier log stopped at "
                             f"{_totals(stopped.totals)} after {played} "
                             f"hand{'s' if played != 1 else ''}",
                             seq=carried.seq if carried is not None else resumed.seq))
    return found


def continuation(earlier: str | os.PathLike[str], later: str | os.PathLike[str]
                 ) -> list[Finding]:
    """:func:`check_continuation` of two log files (either form)."""
    before, integrity = read_log(earlier)
    after, _ = read_log(later)
    return check_continuation(before, after, earlier_integrity=integrity)


def _totals(totals: Sequence[int]) -> str:
    return ", ".join(map(str, totals))


def _seats(start: MatchStarted) -> str:
    return "; ".join(f"{p.name} (side {s})" for p, s in zip(start.players, start.sides,
                                                             strict=False))
