"""One root error, subclasses by cause. Each class has a stable ``code`` for JSON and archives."""

from __future__ import annotations

import copy
import errno
import operator
import re
from typing import Any, SupportsIndex


class BuracoLogError(Exception):
    """Root of every error buraco_log raises on purpose."""

    code = "error"

    def __reduce__(self) -> str | tuple[Any, ...]:
        # Sent from a pool's worker to its parent (pickled), it is rebuilt from its args and
        # attributes, not by calling __init__ with ``args``: most subclasses take other
        # arguments (IllegalMoveError's rule and message), and one that could not be rebuilt
        # broke the pool, said as "a worker process ended abruptly (killed, or out of memory)".
        if isinstance(self, OSError):  # its errno and file name are no attributes of __dict__
            return super().__reduce__()
        return _rebuilt, (type(self), self.args), self.__dict__


def _rebuilt(cls: type[BuracoLogError], args: tuple[object, ...]) -> BuracoLogError:
    """An instance of ``cls`` holding ``args``, without calling its ``__init__``."""
    error = cls.__new__(cls)
    error.args = args
    return error


class CardParseError(BuracoLogError, ValueError):
    """Text that is not a card."""

    code = "card.parse"


class RulesError(BuracoLogError, ValueError):
    """An impossible or malformed rules value. ``field`` names the knob at fault."""

    code = "rules.invalid"

    def __init__(self, field: str, message: str, path: str | None = None) -> None:
        where = f"{path}: " if path else ""  # a house-rules file, when one is at fault
        super().__init__(f"{where}rules field {field!r}: {message}")
        self.field = field
        self.detail = message
        self.path = path


class LogFormatError(BuracoLogError):
    """Bytes or text that are not a valid log. Carries the path and byte offset or line."""

    code = "log.format"

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        offset: int | None = None,
        line: int | None = None,
        seq: int | None = None,
        kind: str = "format",
    ) -> None:
        self.message = message
        self.path = path
        self.offset = offset
        self.line = line
        self.seq = seq
        self.kind = kind
        super().__init__(self._render())

    UNREADABLE_KINDS = frozenset({"filetype", "version", "io", "unreadable", "usage"})
    """Kinds that mean the input cannot be read as a log at all (not a regular file, a format
    version newer than this reader; ``usage``: a call no log allows, such as a binary log
    named .jsonl): the CLI exits 2 for them, as for a usage error, instead of 1. So does a
    file that does not begin with the log's magic (kind ``header`` at byte 0): it is not a
    log, where a damaged log is a finding (1). An event past the header holding an integer
    outside the signed 64-bit range (``range``) is damage like any other undecodable record:
    `show` and `audit` call the log broken, and so every command exits 1 for it."""

    @property
    def exit_status(self) -> int:
        if self.kind in self.UNREADABLE_KINDS or (self.kind == "header" and self.offset == 0):
            return 2
        return 1

    def named(self, path: str) -> LogFormatError:
        """This error (its class and every attribute) naming ``path``: the name the user
        gave, where the error named the file it led to. Built as ``type(self)(...)``, a
        subclass that takes other arguments (NotDurableError) raised TypeError instead."""
        other = copy.copy(self)
        other.path = path
        other.args = (other._render(),)
        return other

    def _render(self) -> str:
        where = []
        if self.path is not None:
            where.append(self.path)
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.offset is not None:
            where.append(f"byte {self.offset}")
        if self.seq is not None:
            where.append(f"seq {self.seq}")
        prefix = ": ".join([", ".join(where)]) + ": " if where else ""
        return f"{prefix}{self.message}"


WRITE_FAILURES = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})
"""Errnos of a write, fsync or create that the file system refused for want of room (a full
disk, a quota, a file size limit) or by failing (EIO): no fault of the log read, nor of the
name given (a name that cannot be written at all, EACCES or ENOENT, stays a usage error)."""


class LogWriteError(LogFormatError):
    """A new or rewritten log (convert's output, seal's sealed copy, a writer's appends,
    repair's backup) could not be written: exit 1, as every output that cannot be written
    (`view`'s page, `audit --html`), not 2, which says the input is not readable as a log.
    Kind ``io``, code ``log.io``; the file asked for is named, never its temporary."""

    code = "log.io"

    def __init__(self, message: str, *, path: str | None = None, offset: int | None = None,
                 line: int | None = None, seq: int | None = None, kind: str = "io") -> None:
        super().__init__(message, path=path, offset=offset, line=line, seq=seq, kind=kind)

    @property
    def exit_status(self) -> int:
        return 1


class ReplayError(BuracoLogError):
    """An event stream that cannot be replayed. Carries the seq and event tag."""

    code = "replay"
    exit_status = 1  # a finding about the log (its subclass PositionError: 2)

    def __init__(
        self, message: str, *, seq: int | None = None, tag: str | None = None,
        match_id: str | None = None,
    ) -> None:
        self.message = message
        self.seq = seq
        self.tag = tag
        self.match_id = match_id
        # a message that names its seq already ("seq 30 is past ...", "the log has no seq 999")
        # is not prefixed with it again ("seq 999: the log has no seq 999")
        named = seq is None or re.search(rf"\bseq {seq}\b", message) is not None
        super().__init__(message if named else f"seq {seq}: {message}")


class PositionError(ReplayError):
    """A seq, hand, turn or seat the match does not have: the caller asked for it, so it is not
    a finding about the log; the CLI exits 2 for it as for a usage error."""

    exit_status = 2


def position(value: object, what: str) -> int:
    """``value`` as a seq, hand, turn, seat or count a caller asked for: a whole number (an
    ``int``, not a bool, a float or a string). Anything else is the caller's mistake, a
    :class:`PositionError` naming it, not a TypeError from deep inside (``True`` read as
    seq 1, ``3.0`` failed in a slice, ``'3'`` was "the log has no seq 3")."""
    if type(value) is int:  # the usual case, without a Protocol's slow isinstance
        return value
    if not isinstance(value, bool) and isinstance(value, SupportsIndex):
        try:
            return operator.index(value)  # an int, or a NumPy integer from a referee's table
        except TypeError:  # numpy.bool_ has an __index__ that refuses
            pass
    raise PositionError(f"a {what} is a whole number, not {value!r} ({type(value).__name__})")


class IllegalMoveError(ReplayError):
    """An event the rules forbid. ``rule`` is a stable id documented in ``buraco_log.ruleids``."""

    code = "illegal"

    def __init__(
        self,
        rule: str,
        message: str,
        *,
        seq: int | None = None,
        tag: str | None = None,
        seat: int | None = None,
        cards: tuple[int, ...] = (),
        path: str | None = None,
        table: str | None = None,
        line: int | None = None,
    ) -> None:
        self.rule = rule
        self.seat = seat
        self.cards = cards
        self.path = path  # the log refused into, when a recorder or writer refused it
        self.table = table  # the recorder's name of the table (its match)
        self.line = line  # the JSON Lines line of the event, when one was read from it
        super().__init__(f"[{rule}] {message}", seq=seq, tag=tag)
        self.explanation = message
        if path is not None or table is not None:  # one line naming the table and its log
            where = ", ".join(part for part in (
                f"table {table!r}" if table is not None else None, path,
                f"line {line}" if line is not None and path is not None else None,
                f"seq {seq}" if seq is not None else None) if part)
            self.args = (f"{where}: [{rule}] {message}",)


class DealError(BuracoLogError, ValueError):
    """An argument the dealer cannot deal from (``buraco_log.dealer``): a seed that is no
    text, a dealer seat the table does not have, a hand number no deal key can hold."""

    code = "deal.invalid"


class ArchiveError(BuracoLogError):
    """A problem with an archive directory or a query over it."""

    code = "archive"
