"""One log in, rows out: check a match log fully and flatten it into the archive's tables.

The check is one validating replay (:class:`Replayer`), which covers legality and every
recorded score and total; integrity comes from reading the log and deal provenance from
:mod:`buraco_log.dealer`. A log passes when the audit (:func:`buraco_log.audit.audit_events`)
would find nothing: for the rare log that fails, the full audit verdict is computed and stored
with the error, so the archive explains every rejection the way ``buraco-log audit`` does.
"""

from __future__ import annotations

import hashlib
import json
import re
from array import array
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache
from itertools import accumulate, chain, repeat
from operator import attrgetter
from typing import Any, NamedTuple

import msgspec
import pyarrow as pa  # type: ignore[import-untyped]
from msgspec.structs import astuple

from buraco_log import audit
from buraco_log.columns import NULL, Columns, replay_columns
from buraco_log.errors import IllegalMoveError, ReplayError
from buraco_log.events import AnyEvent, MatchStarted
from buraco_log.melds import canastra_bonus
from buraco_log.signing.check import check as signing_check
from buraco_log.state import Meld

from .schema import (
    CANASTRA_CLASSES,
    EVENTS,
    HANDS,
    KINDS,
    MATCHES,
    MELDS,
    PLAYERS,
    storable,
)


@cache
def _kind_values() -> pa.Array:
    """The kind column's dictionary, built on first use: pyarrow imports pandas (where it is
    installed) for pa.array over a list, 0.2 s that query, report and verify never need."""
    return pa.array(KINDS, pa.string())


_MELD_FIELDS = ("id", "side", "cards", "kind", "canastra", "laid_by")
if Meld.__struct_fields__ != _MELD_FIELDS:  # the melds table unpacks them by position
    raise ImportError(f"state.Meld fields changed to {Meld.__struct_fields__}: update flatten")
_CARDS = attrgetter("cards")
_CLASS = attrgetter("canastra")
_SAFE = re.compile(r"[^A-Za-z0-9_.+-]")
Reader = Callable[[str], tuple[list[AnyEvent], audit.Integrity, audit.Signed]]
"""Reads the log named by a path: its intact events and how its bytes held up."""


def game_id_of(digest: str) -> int:
    """The 63-bit game id of a head digest (non-negative, so it sorts the same everywhere)."""
    return int(digest[:16], 16) >> 1


def partition_value(text: str) -> str:
    """A Hive partition value safe in any file system: other characters become ``_``."""
    return _SAFE.sub("_", text) or "_"


# The times the archive stores (started_at, ended_at) as datetimes: years 1 to 9999 UTC.
AT_MIN = int(datetime(1, 1, 1, tzinfo=UTC).timestamp()) * 1000
AT_MAX = int(datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp()) * 1000 + 999


def at_problem(event: AnyEvent) -> str | None:
    """Why the event's ``at`` cannot be stored as a time (None: it can, or there is none)."""
    at = event.at
    if at is None or AT_MIN <= at <= AT_MAX:
        return None
    return (f"{type(event).__name__} at {at} ms is outside the times the archive stores "
            "(years 1 to 9999 UTC)")


def month_of(at_ms: int | None) -> str:
    if at_ms is None:
        return "unknown"
    d = datetime.fromtimestamp(at_ms / 1000, UTC)
    return f"{d.year:04d}-{d.month:02d}"  # strftime's %Y gives "1", not "0001", on glibc


def file_sha256(path: str) -> tuple[str, int]:
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
            size += len(chunk)
    return h.hexdigest(), size


class Rejected(Exception):
    """The log failed a check: ``row`` is its errors-table row."""

    def __init__(self, row: dict[str, Any]) -> None:
        super().__init__(row["message"])
        self.row = row


class _EventCols:
    """The events table of one partition as flat typed columns (NULL, NULL8: a missing value).

    Typed arrays and byte strings all the way: a match's columns are appended with one copy
    each, and become Arrow arrays on the same memory.
    """

    __slots__ = ("cards", "count", "direct", "game_id", "hand", "kind", "lens", "meld", "seat",
                 "seq", "stock")

    def __init__(self) -> None:
        self.game_id = array("q")
        self.seq = array("i")
        self.hand = array("h")
        self.kind = bytearray()
        self.seat = bytearray()
        self.cards = bytearray()  # every card of every event, in order
        self.lens = array("i")  # how many of them each event has (NULL: no cards column)
        self.meld = bytearray()
        self.count = array("h")
        self.direct = bytearray()
        self.stock = array("h")

    def table(self) -> pa.Table:
        import pyarrow.compute as pc  # type: ignore[import-untyped]  # here: a query never needs it
        n = len(self.seq)
        lens = _ints(self.lens, pa.int32())
        offsets = pc.cumulative_sum(pc.fill_null(lens, 0)).buffers()[1]
        offsets = pa.py_buffer(array("i", [0]).tobytes() + offsets.to_pybytes())
        cards = pa.Array.from_buffers(pa.binary(), n, [lens.buffers()[0], offsets,
                                                       pa.py_buffer(self.cards)])
        kind = pa.DictionaryArray.from_arrays(_bytes(self.kind, False), _kind_values())
        cols = {
            "game_id": _ints(self.game_id, pa.int64(), False),
            "seq": _ints(self.seq, pa.int32(), False),
            "hand": _ints(self.hand, pa.int16(), False),
            "kind": kind,
            "seat": _bytes(self.seat),
            "cards": cards,
            "meld": _bytes(self.meld),
            "count": _ints(self.count, pa.int16()),
            "direct": _bytes(self.direct).cast(pa.bool_()),
            "stock": _ints(self.stock, pa.int16()),
        }
        return pa.Table.from_arrays([cols[f.name] for f in EVENTS], schema=EVENTS)


class _MeldCols:
    """The melds table of one partition: the final melds as they stand, plus what each match
    adds (game id, hand, card points, bonus); the columns are cut from the melds in bulk."""

    __slots__ = ("bonus", "game_id", "hand", "melds", "points")

    def __init__(self) -> None:
        self.game_id = array("q")
        self.hand = array("h")
        self.melds: list[Meld] = []
        self.points = array("h")
        self.bonus = array("h")

    def table(self) -> pa.Table:
        n = len(self.melds)
        if n:  # a Meld's fields in their declared order (_MELD_FIELDS)
            ids, sides, cards, kinds, classes, laid_by = zip(*map(astuple, self.melds),
                                                             strict=True)
        else:
            ids = sides = cards = kinds = classes = laid_by = ()
        lengths = array("i", map(len, cards))
        offsets = array("i", [0])
        offsets.extend(accumulate(lengths))
        flat = bytes(chain.from_iterable(cards))
        cols = {
            "game_id": _ints(self.game_id, pa.int64(), False),
            "hand": _ints(self.hand, pa.int16(), False),
            "side": pa.array(sides, pa.int8()),
            "meld": pa.array(ids, pa.int8()),
            "kind": pa.array(kinds, pa.string()),
            "length": pa.array(lengths, pa.int8()),
            "canastra": pa.array(classes, pa.string()),
            "laid_by": pa.array(laid_by, pa.int8()),
            "points": _ints(self.points, pa.int16(), False),
            "bonus": _ints(self.bonus, pa.int16(), False),
            "cards": pa.ListArray.from_arrays(
                pa.Array.from_buffers(pa.int32(), n + 1, [None, pa.py_buffer(offsets)]),
                pa.Array.from_buffers(pa.uint8(), len(flat), [None, pa.py_buffer(flat)])),
        }
        return pa.Table.from_arrays([cols[f.name] for f in MELDS], schema=MELDS)


_COUNTING = array("i", range(4096))


def _counting(n: int) -> array[int]:
    """``0, 1, ..., n-1`` as an int32 array: a slice of one kept array (a copy in C), where
    extending from ``range(n)`` makes and converts every int one by one."""
    global _COUNTING
    if n > len(_COUNTING):
        _COUNTING = array("i", range(2 * n))
    return _COUNTING[:n]


def _ints(values: array[int], type_: pa.DataType, nullable: bool = True) -> pa.Array:
    """An Arrow integer array on a typed array's memory (NULL entries become nulls)."""
    return _nulls(pa.Array.from_buffers(type_, len(values), [None, pa.py_buffer(values)]),
                  nullable)


def _bytes(values: bytearray, nullable: bool = True) -> pa.Array:
    """An Arrow int8 array on a byte column's buffer (NULL8 entries become nulls)."""
    return _nulls(pa.Array.from_buffers(pa.int8(), len(values), [None, pa.py_buffer(values)]),
                  nullable)


def _nulls(out: pa.Array, nullable: bool) -> pa.Array:
    import pyarrow.compute as pc  # here: a query never needs it
    if nullable:
        valid = pc.not_equal(out, pa.scalar(NULL, out.type))
        out = pa.Array.from_buffers(out.type, len(out), [valid.buffers()[1], out.buffers()[1]])
    return out


class Rows:
    """Column lists for the five per-match tables of one partition, filled match by match."""

    def __init__(self) -> None:
        # Rows as tuples in the order of each table's schema, except the events' and melds'
        # columns.
        self.matches: list[tuple[Any, ...]] = []
        self.hands: list[tuple[Any, ...]] = []
        self.events = _EventCols()
        self.melds = _MeldCols()
        self.players: list[tuple[Any, ...]] = []
        self.n_events = 0
        self.n_matches = 0

    def tables(self) -> dict[str, pa.Table]:
        out = {"events": self.events.table(), "melds": self.melds.table()}
        for name, schema in (("matches", MATCHES), ("hands", HANDS), ("players", PLAYERS)):
            rows: list[tuple[Any, ...]] = getattr(self, name)
            cols = list(zip(*rows, strict=True)) if rows else [()] * len(schema)
            out[name] = pa.Table.from_arrays(
                [pa.array(c, f.type) for c, f in zip(cols, schema, strict=True)], schema=schema)
        return out


def error_row(path: str, sha: str, size: int | None, code: str, rule: str, message: str, *,
              seq: int | None = None, match_id: str | None = None, digest: str | None = None,
              verdict: audit.Verdict | None = None) -> dict[str, Any]:
    return {
        "file_sha256": sha, "source_path": path, "file_bytes": size, "code": code, "rule": rule,
        "message": message, "seq": seq, "match_id": match_id, "digest": digest,
        "verdict_json": _verdict_json(verdict) if verdict is not None else None,
    }


def _verdict_json(verdict: audit.Verdict) -> str:
    """The verdict as JSON; one naming a file that is not UTF-8 with that name's undecodable
    bytes escaped (msgspec cannot encode them)."""
    try:
        return msgspec.json.encode(verdict).decode()
    except UnicodeEncodeError:
        return json.dumps(msgspec.to_builtins(verdict), separators=(",", ":"))


def _reject_with_audit(path: str, sha: str, size: int, events: list[AnyEvent],
                       integrity: audit.Integrity, fallback: tuple[str, str, str, int | None],
                       require_commitment: bool = False, signed: audit.Signed | None = None
                       ) -> Rejected:
    """The audit's verdict for a log the fast pass refused, as an errors-table row."""
    try:
        verdict: audit.Verdict | None = audit.audit_events(
            events, integrity, path, require_commitment=require_commitment, signed=signed)
    except Exception:  # an auditor defect must not hide the log's own fault
        verdict = None
    code, rule, message, seq = fallback
    if verdict is not None and verdict.findings:
        first = verdict.findings[0]
        code, rule, message, seq = first.section, first.rule, first.message, first.seq
    start = events[0] if events and isinstance(events[0], MatchStarted) else None
    return Rejected(error_row(path, sha, size, code, rule, message, seq=seq,
                              match_id=start.match_id if start else None,
                              digest=integrity.head, verdict=verdict))


class Tail(NamedTuple):
    """What a copy of a match holds after its events: two copies of one match (one head
    digest) differ only here. Of two copies, ingest keeps the stronger (:meth:`rank`), and
    names a copy it cannot keep that holds more (docs/archive.md, "A stronger copy")."""

    match_id: str
    sealed: bool  # the JSON Lines end line, or a binary log's seal, is there
    signatures: int  # signature records, each checked against the chain

    def rank(self) -> tuple[bool, int]:
        """Sealed first, then more signature records: the copy ingest keeps of two."""
        return self.sealed, self.signatures


def check_and_flatten(path: str, sha: str, size: int, rows_for: Any,
                      seen: set[str] | None = None, read: Reader | None = None, *,
                      require_commitment: bool = False) -> tuple[str, int, int, bool, Tail]:
    """Check one log; on success append its rows to ``rows_for(preset, month)``.

    Returns ``(digest, game_id, events, fresh, tail)``; raises :class:`Rejected` with the error row.
    A log whose digest is in ``seen`` (the same match, already flattened into these rows) is
    not replayed again and adds no rows: ``fresh`` is False. ``read`` reads the log named
    ``path`` and its signature records (default :func:`buraco_log.audit.read_log_signed`;
    Spark passes one over bytes it holds).
    ``require_commitment``: a deal no commitment backs is a finding (the archive's setting).
    """
    events, integrity, signed = (read or audit.read_log_signed)(path)
    if audit.not_started(events, integrity):
        # As the audit says: no event, so no seq to name, and no damage (an empty file was
        # refused as a torn log at seq 0, a header alone as an illegal seq 0)
        verdict = audit.audit_events(events, integrity, path, signed=signed)
        raise Rejected(error_row(
            path, sha, size, "incomplete", "archive.not_started",
            f"{verdict.notes[0]}; only finished matches are archived", verdict=verdict))
    if integrity.status not in ("sealed", "unsealed"):
        raise _reject_with_audit(path, sha, size, events, integrity,
                                 ("integrity", f"log.{integrity.kind}",
                                  integrity.message or "damaged log", integrity.seq),
                                 signed=signed)
    if not events or not isinstance(events[0], MatchStarted):
        raise _reject_with_audit(path, sha, size, events, integrity,
                                 ("legality", "match.not_started",
                                  "the log does not open with MatchStarted", 0), signed=signed)
    start = events[0]
    digest = integrity.head
    gid = game_id_of(digest)
    tail = Tail(start.match_id, integrity.status == "sealed", integrity.signatures)
    if seen is not None and digest in seen:
        return digest, gid, len(events), False, tail
    try:
        flat = replay_columns(events, gid)
    except (IllegalMoveError, ReplayError, IndexError, KeyError, TypeError, ValueError) as exc:
        seq = getattr(exc, "seq", None)
        rule = getattr(exc, "rule", "event.invalid")
        raise _reject_with_audit(path, sha, size, events, integrity,
                                 ("legality", rule, str(exc), seq), signed=signed) from None
    if flat is None:
        raise Rejected(error_row(
            path, sha, size, "incomplete", "archive.incomplete",
            f"the log ends at seq {events[-1].seq} before MatchEnded: only finished matches "
            "are archived", seq=events[-1].seq, match_id=start.match_id, digest=digest))
    for stamped in (start, events[-1]):  # the times stored: started_at, ended_at
        problem = at_problem(stamped)
        if problem is not None:  # a data error with its own reason, not an internal one
            raise Rejected(error_row(path, sha, size, "range", "archive.at_range", problem,
                                     seq=stamped.seq, match_id=start.match_id, digest=digest))
    # The same deal check the audit makes, on the only events it reads (the replay kept them).
    prov = audit.provenance(flat.deal_events, require_commitment)
    if prov.findings:
        raise _reject_with_audit(path, sha, size, events, integrity,
                                 ("provenance", prov.findings[0].rule,
                                  prov.findings[0].message, prov.findings[0].seq),
                                 require_commitment, signed)
    # What the audit finds in the signature records without keys (a record by another key
    # than the start records, a copied record): such a log was archived as signed and OK.
    if signed.signatures:
        _, problems = signing_check(events, signed.signatures, version=signed.version)
        if problems:
            raise _reject_with_audit(path, sha, size, events, integrity,
                                     ("signing", problems[0].rule, problems[0].message,
                                      problems[0].seq), require_commitment, signed)
    rows: Rows = rows_for(partition_value(start.rules.name), month_of(start.at))
    _emit(flat, rows, start, events, digest, sha, size, path, integrity, prov.status)
    if seen is not None:
        seen.add(digest)
    return digest, gid, len(events), True, tail


def _emit(flat: Columns, rows: Rows, start: MatchStarted, events: list[AnyEvent], digest: str,
          sha: str, size: int, path: str, integrity: audit.Integrity, prov: str) -> None:
    gid = flat.gid
    n = len(events)
    e = rows.events
    e.game_id.extend(array("q", [gid]) * n)
    e.seq += _counting(n)  # the replay accepted them: seq is 0, 1, 2, ...
    e.hand += flat.hand
    e.kind += flat.kind
    e.seat += flat.seat
    e.cards += flat.cards
    e.lens += flat.lens
    e.meld += flat.meld
    e.count += flat.count
    e.direct += flat.direct
    e.stock += flat.stock
    rows.hands += flat.hand_rows
    rules = start.rules
    bonus = {cls: canastra_bonus(cls, rules)
             for cls in (*CANASTRA_CLASSES, None)}
    m = rows.melds
    melds = flat.melds
    m.game_id.extend(array("q", [gid]) * len(melds))
    m.hand.extend(flat.meld_hand)
    m.melds += melds
    # Bulk, no per-meld bytecode: each meld's card points summed, each class's bonus.
    cards = list(map(_CARDS, melds))
    m.points.extend(map(sum, map(map, repeat(rules.point_table().__getitem__), cards)))
    m.bonus.extend(map(bonus.__getitem__, map(_CLASS, melds)))
    n_players = len(start.players)
    rows.players += [
        (gid, seat, flat.sides[seat], pl.name, pl.id, pl.id or pl.name,
         flat.sides[seat] == flat.winner, flat.totals[flat.sides[seat]],
         seat == flat.first_player, n_players)
        for seat, pl in enumerate(start.players)
    ]
    end = events[-1]
    others = [t for s, t in enumerate(flat.totals) if s != flat.winner]
    mrow: dict[str, Any] = {
        "game_id": gid, "match_id": start.match_id, "digest": digest, "file_sha256": sha,
        "source_path": storable(path), "file_bytes": size, "log_format": integrity.format,
        "rules_name": rules.name, "rules_json": msgspec.json.encode(rules).decode(),
        "n_players": n_players, "n_sides": flat.n_sides,
        "players": [pl.name for pl in start.players], "first_dealer": start.first_dealer,
        "first_player": flat.first_player, "winner_side": flat.winner,
        "totals": list(flat.totals),
        "margin": flat.totals[flat.winner] - max(others) if others else 0,
        "hands": flat.hands, "events": len(events), "started_at": start.at,
        "ended_at": end.at, "verdict": "ok", "integrity": integrity.status,
        "provenance": prov, "generator": start.metadata.get("generator"),
        "ingested_at": 0, "batch": "",  # filled at commit
        "signed": integrity.signatures > 0, "key_id": start.key_id,
    }
    rows.matches.append(tuple(mrow[name] for name in MATCHES.names))
    rows.n_events += n
    rows.n_matches += 1


def check_file(path: str, sha: str, size: int, rows_for: Any, seen: set[str] | None = None,
               read: Reader | None = None, *, require_commitment: bool = False
               ) -> tuple[str, int, int, bool, Tail] | dict[str, Any]:
    """Check and flatten one file: ``(digest, game_id, events, fresh, tail)``, or its error
    row."""
    try:
        return check_and_flatten(path, sha, size, rows_for, seen, read,
                                 require_commitment=require_commitment)
    except Rejected as rej:
        return rej.row
    except Exception as exc:  # a defect must not stop the run: record it with the file
        return error_row(path, sha, size, "internal", "archive.internal",
                         f"{type(exc).__name__}: {exc}")
