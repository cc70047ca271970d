"""The replay page: one self-contained HTML file that shows a match event by event.

An edge of the library, like ``archive``: it reads a log, replays it with the reducer, and
writes the frames into a page (``template/``) that only draws them. Stdlib and msgspec only.

    from buraco_log.view import page_for_log, write_page
    page = page_for_log("match.blog", seat=0)      # a player's copy: no hidden card in it
    write_page("match.html", page.html)

Tools that add to the page (a review's marks on its moves) pass ``marks`` to
:func:`page_for_log` or :func:`build_page`: ``{seq: [Mark(kind, text, cards)]}``.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from buraco_log.audit import Integrity, SigningOptions, read_log_signed, repeated_signature
from buraco_log.errors import LogFormatError, ReplayError
from buraco_log.log import durable, temp_stem
from buraco_log.outpaths import no_directory, open_in_place, rename_target, written_in_place
from buraco_log.signing.record import SignedHead
from buraco_log.view.page import (
    PAGE_VERSION,
    Banner,
    LogHead,
    Mark,
    Page,
    build_page,
    page_data,
    render,
)
from buraco_log.view.signature import signature_status

__all__ = ["PAGE_VERSION", "Banner", "LogHead", "Mark", "Page", "build_page", "damage_banner",
           "damage_mark", "page_data", "page_for_log", "render", "said_on_a_seats_page",
           "write_page"]

FIFO_WAIT: float = 10.0
"""Seconds :func:`write_page` waits for a program to open a FIFO it is given for reading."""


def damage_banner(integ: Integrity, *, seat: int | None = None) -> Banner | None:
    """A banner naming the damage of a broken or torn log and where it starts; on ``seat``'s
    copy without the reader's words where they may quote the damaged event
    (:func:`said_on_a_seats_page`)."""
    if integ.status not in ("broken", "torn"):
        return None
    n = integ.events
    return Banner(
        kind="damaged", seq=integ.seq, rule=f"log.{integ.kind}" if integ.kind else None,
        offset=integ.offset,
        text=(f"The log {_damage(integ, seat)}. "
              f"The page shows the {n} event{'' if n == 1 else 's'} read intact."))


def _repeat_banner(path: str | os.PathLike[str], signatures: Sequence[SignedHead]
                   ) -> Banner | None:
    """A banner for a signature record that repeats the one before it: the integrity failure
    `verify` refuses and `show` names (the page looked whole, and `view` exited 0)."""
    repeat = repeated_signature(path, signatures)
    if repeat is None:
        return None
    seq, exc = repeat
    return Banner(kind="damaged", seq=seq, rule="sign.duplicate", offset=exc.offset,
                  text=f"The log is damaged: {exc.message}. The page shows every event: the "
                       "copy holds none.")


PLAIN_DAMAGE = frozenset((None, "damage", "torn", "chain", "seq", "version", "header"))
"""The kinds of damage whose reader's words quote nothing of the damaged event: a checksum, a
torn tail, a broken chain, a seq out of order. The others (a JSON line's field that is not a
card, an unknown field, a value out of range) quote what the line or record holds."""


def said_on_a_seats_page(integ: Integrity, seat: int | None) -> bool:
    """Whether a page for ``seat`` (None: the referee's) may quote the reader's words on the
    damage: a seat's copy did, and ``field 'card': ["8d"] is not a card`` named the card
    another seat drew, which that seat never saw."""
    return seat is None or integ.kind in PLAIN_DAMAGE


def _damage(integ: Integrity, seat: int | None = None) -> str:
    """What the damage of a broken or torn log is and where it starts: 'has a torn tail at
    byte 8554, record 1, seq 539: zero-filled tail (...)'. On ``seat``'s copy, the reader's
    words only where they quote nothing of the damaged event."""
    where: list[str] = []
    if integ.offset is not None:
        where.append(f"byte {integ.offset}")
    if integ.record is not None:
        where.append(f"{'line' if integ.format == 'jsonl' else 'record'} {integ.record}")
    if integ.seq is not None:
        where.append(f"seq {integ.seq}")
    # "is torn tail" and "damaged (damage)" read as a slip; a named kind (chain) tells more
    what = ("has a torn tail" if integ.status == "torn" else
            "is damaged" + (f" ({integ.kind})" if integ.kind not in (None, "damage") else ""))
    place = f"{what} at {', '.join(where) or 'an unknown place'}"
    if not said_on_a_seats_page(integ, seat):
        return (f"{place} (what was read there is left out of a player's copy: it may name a "
                "card this seat did not see)")
    return f"{place}: {integ.message}"


def page_for_log(path: str | os.PathLike[str], *, seat: int | None = None,
                 at: int | None = None,
                 marks: Mapping[int, Sequence[Mark]] | None = None,
                 signing: SigningOptions | None = None, signature: str | None = None) -> Page:
    """The page for the log at ``path``; a damaged log gives its intact prefix and a banner.
    ``marks``: per-event marks, as :func:`build_page` takes them. ``signing``: the trusted
    keys and receipts to check the signatures with, as ``audit`` checks them (None: no keys:
    the page says the signatures were not checked); ``signature``: the line already said
    (``audit --html`` says its own verdict's).

    Raises :class:`LogFormatError` when not one event could be read (nothing to show)."""
    events, integ, signed = read_log_signed(path)
    if integ.status not in ("broken", "torn", "unreadable") and not events:
        raise LogFormatError("the log holds no events yet (a match not started): no table to "
                             "show", path=os.fspath(path), kind="empty")
    if (integ.status in ("broken", "torn") and not events
            and not (integ.kind == "header" and not integ.offset)):  # a log, damaged: exit 1
        raise LogFormatError(
            f"{'torn tail' if integ.status == 'torn' else 'damaged'}: {integ.message}; no event "
            f"before it is intact: no table to show [log.{integ.kind or 'damage'}]",  # the rule,
            path=os.fspath(path), offset=integ.offset,  # as the page's banner names it
            line=integ.record if integ.format == "jsonl" else None,
            kind="torn" if integ.status == "torn" else "damage")
    if integ.status == "unreadable" or not events:
        raise LogFormatError("no event could be read"
                             + (f" ({integ.message})" if integ.message else "")
                             + (f" [log.{integ.kind}]" if integ.kind else ""),  # the rule
                             path=os.fspath(path), offset=integ.offset, kind="unreadable")
    banner = damage_banner(integ, seat=seat)
    if banner is not None:
        marks = damage_mark(marks, events[-1].seq, integ, "The page ends here.", seat=seat)
    else:
        banner = _repeat_banner(path, signed.signatures)
        if banner is not None and banner.seq is not None:  # said at the seq it signs, too
            marks = _with_mark(marks, banner.seq, Mark("damaged", banner.text))
    if banner is not None and at is not None and at > events[-1].seq:
        # a finding, as replay --at says it (it said only "the page holds seqs 0 to 4", exit 2)
        raise ReplayError(f"--at {at}: the page holds seqs 0 to {events[-1].seq}, the events "
                          f"read intact; the log {_damage(integ, seat)}", seq=at)
    if signature is None:
        signature = signature_status(os.fspath(path), events, integ, signed, signing)
    return build_page(events, seat=seat, at=at, banners=(banner,) if banner else (),
                      marks=marks, head=LogHead(integ.head, integ.events), signing=signature)


def damage_mark(marks: Mapping[int, Sequence[Mark]] | None, last: int, integ: Integrity,
                then: str, *, seat: int | None = None) -> dict[int, list[Mark]]:
    """``marks`` with one more at ``last``, the last event read whole: where the damage of a
    broken or torn log starts, said at the table a reader stepping through the match stands
    at (the banner alone, at the top of the page, was out of sight there)."""
    # a torn tail is no damage: a live log's record being written, or a crash's
    what = "stops" if integ.status == "torn" else "is damaged"
    return _with_mark(marks, last, Mark(
        "damaged", f"The log {what} after seq {last} [log.{integ.kind or 'damage'}]: it "
                   f"{_damage(integ, seat)}. {then}"))


def _with_mark(marks: Mapping[int, Sequence[Mark]] | None, seq: int, mark: Mark
               ) -> dict[int, list[Mark]]:
    """A copy of ``marks`` with ``mark`` added at ``seq``, after the caller's own."""
    out = {k: list(v) for k, v in (marks or {}).items()}
    out.setdefault(seq, []).append(mark)
    return out


def write_page(path: str | os.PathLike[str], html: str) -> None:
    """Write ``html`` at ``path`` whole or not at all: a temporary file beside it, fsync,
    rename, then its directory flushed (:func:`buraco_log.log.durable`). A path that is not a
    regular file (``/dev/null``, a FIFO), or that is or leads through a link into /dev, /proc
    or /sys (``/dev/stdout``), is written into as it is, never renamed over; a link to a
    regular file keeps being a link (the file it names is replaced)."""
    target = Path(path)
    if written_in_place(target):
        # /dev/stdout with stdout redirected to a file is a regular file through a link into
        # /proc: renamed over, it was /dev/stdout itself that became the page, for everyone
        try:
            with os.fdopen(_open_in_place(target), "wb") as out:
                out.write(html.encode("utf-8"))
        except OSError as exc:  # /dev/full: the error named no file
            raise OSError(exc.errno, exc.strerror, str(target)) from None
        return
    asked = str(target)  # errors name it, not the file a link leads to
    target = rename_target(target)  # a link to the page: write the file it names, keep it
    parent = target.parent or Path(".")
    if not parent.is_dir():  # name the file asked for, not the temporary beside it
        raise FileNotFoundError(errno.ENOENT, no_directory(parent), asked)
    try:
        # the name cut as the log writers cut it: a page named with 255 bytes is a valid name
        fd, tmp = tempfile.mkstemp(prefix=f".{temp_stem(target.name)}.", suffix=".tmp",
                                   dir=target.parent or Path("."))
    except OSError as exc:  # a directory not writable: name the file asked for
        raise OSError(exc.errno, exc.strerror, asked) from None
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)  # an ordinary file, as open() would make it
        with os.fdopen(fd, "wb") as f:
            f.write(html.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except OSError as exc:  # a full disk: name the file asked for, not the temporary one
        Path(tmp).unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror, asked) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    # the new name survives a power loss, as convert's and demo's files do ("wrote PAGE" said
    # of a page a crash could still take back)
    durable(str(target), "written", asked)


def _open_in_place(target: Path) -> int:
    """Open ``target`` (/dev/null, a FIFO, /dev/stdout) for writing, as
    :func:`buraco_log.outpaths.open_in_place` says: our own standard output where it stands, a
    FIFO no program reads refused after ``FIFO_WAIT`` seconds."""
    return open_in_place(target, FIFO_WAIT)
