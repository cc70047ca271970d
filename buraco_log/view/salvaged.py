"""The page of a damaged log read anyway (``buraco-log view --ignore-integrity``).

A log whose checksum or integrity chain fails gives, strictly read, the page of its intact
prefix. A referee who must see what the flagged records say reads it as ``replay
--ignore-integrity`` does: every record that still decodes (:func:`buraco_log.forensic.
read_anyway`), with a banner that names the damage and how many of the events shown are not
vouched for.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from buraco_log.audit import SigningOptions, read_log_signed
from buraco_log.errors import PositionError, ReplayError
from buraco_log.forensic import read_anyway
from buraco_log.view import _damage, damage_mark, page_for_log
from buraco_log.view.page import Banner, LogHead, Mark, Page, build_page
from buraco_log.view.signature import signature_status


def page_anyway(path: str | os.PathLike[str], *, seat: int | None = None,
                at: int | None = None,
                marks: Mapping[int, Sequence[Mark]] | None = None,
                signing: SigningOptions | None = None) -> Page:
    """The page of every event of ``path`` that still decodes, past a failed checksum or
    chain, with a banner saying where the log failed and how many events past it are shown.
    A log that passes its check, or one of which nothing more decodes (a torn tail), gets
    :func:`~buraco_log.view.page_for_log`'s page. ``signing``: as ``page_for_log`` takes it."""
    intact, integ, signed = read_log_signed(path)
    if integ.status not in ("broken", "torn"):
        return page_for_log(path, seat=seat, at=at, marks=marks, signing=signing)
    salvage = read_anyway(path)
    events = salvage.events
    if len(events) <= len(intact):  # nothing past the damage decodes: the strict page
        return page_for_log(path, seat=seat, at=at, marks=marks, signing=signing)
    unvouched = len(events) - len(intact)
    banner = Banner(
        kind="damaged", seq=integ.seq, rule=f"log.{integ.kind}" if integ.kind else None,
        offset=integ.offset,
        text=(f"The log {_damage(integ, seat)}. Read anyway (--ignore-integrity): "
              f"{len(events)} events decode; the last {unvouched} of them, from seq "
              f"{events[len(intact)].seq} on, are not vouched for."))
    if at is not None and at > events[-1].seq:
        if salvage.read_to_end:  # every record read: a seq the log does not hold (2), as
            # replay --ignore-integrity says it
            raise PositionError(f"--at {at}: the log has no seq {at} (seqs 0 to "
                                f"{events[-1].seq})", seq=at)
        raise ReplayError(f"--at {at}: the page holds seqs 0 to {events[-1].seq}, the events "
                          f"that decode; the log {_damage(integ, seat)}", seq=at)
    if intact:  # where the vouched-for part ends, at its table (a header damaged: none)
        marks = damage_mark(marks, intact[-1].seq, integ,
                            f"The events from seq {events[len(intact)].seq} on are read anyway "
                            "(--ignore-integrity), not vouched for.", seat=seat)
    # the head the log's intact part has, as show and verify print it: what decodes past the
    # damage is not vouched for
    # and the signatures of that part, as the audit checks them (those past it vouch nothing)
    return build_page(events, seat=seat, at=at, banners=(banner,), marks=marks,
                      head=LogHead(integ.head, integ.events),
                      signing=signature_status(os.fspath(path), intact, integ, signed, signing))


__all__ = ["page_anyway"]
