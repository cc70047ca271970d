"""Two copies of one match compared event by event."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import msgspec

from buraco_log.audit.files import AnyPath, path_text
from buraco_log.audit.findings import to_dict
from buraco_log.audit.integrity import (
    Integrity,
    IntegrityStatus,
    LogStream,
    not_started_count,
)
from buraco_log.cards import Style, format_card, is_card
from buraco_log.errors import LogFormatError
from buraco_log.events import (
    CARD_FIELDS,
    AnyEvent,
    MatchStarted,
)
from buraco_log.events import to_dict as raw_dict
from buraco_log.safetext import apart, lookalike
from buraco_log.signing.record import SignedHead
from buraco_log.timeline import (
    card_style,
    describe_event,
)


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
    # Signature records (docs/signing.md) in each copy, and whether both hold the same ones.
    # Copies with the same events are not identical when they do not: one lost or had
    # stripped the site's signatures, or holds records the other does not.
    signatures_a: int = 0
    signatures_b: int = 0
    signatures_equal: bool = True
    # Each copy a match not started (no event, a header alone or one cut short: the predicate
    # `audit` and `verify` use): two such copies have no event to compare.
    not_started_a: bool = False
    not_started_b: bool = False
    # Where each damaged copy stops being readable ("byte 2135", or "line 151" of a JSON Lines
    # copy), None for a whole copy: a copy damaged in the middle reads as a prefix of the
    # other, and is not one.
    damage_a: str | None = None
    damage_b: str | None = None
    # A and B name one file (the same path, a hard or symbolic link): "identical" then says
    # nothing about two copies, and a referee must be told so.
    same_file: bool = False
    # The first head whose signature records differ between the copies, and how (None when
    # they hold the same): "A and B hold different signatures" left a referee to find which.
    signatures_differ_at: int | None = None
    signatures_difference: str | None = None


def diff_events(a: Iterable[AnyEvent], b: Iterable[AnyEvent], style: Style = "ascii"
                ) -> tuple[int | None, tuple[str, ...], Literal["a", "b"] | None]:
    """First diverging seq, what differs there, and which list is a strict prefix.
    ``style``: how the differences name cards (``tiles`` for Burako: 'tile: 2y vs 8b')."""
    a = a if isinstance(a, Sequence) else list(a)  # len() below: an iterator has none
    b = b if isinstance(b, Sequence) else list(b)
    shown = to_dict if not style.startswith("tiles") else lambda e: _in_tiles(e, style)
    for x, y in zip(a, b, strict=False):
        if x != y:
            return x.seq, _field_diffs(shown(x), shown(y)), None
    if len(a) == len(b):
        return None, (), None
    shorter: Literal["a", "b"] = "a" if len(a) < len(b) else "b"
    n = min(len(a), len(b))
    longer = b if shorter == "a" else a
    return longer[n].seq, (f"copy {shorter} ends after {n} events; the other goes on",), shorter


# A Burako event's card fields, named as its tiles are (RULES.md §1: only the rendering differs).
_TILE_KEYS = {"card": "tile", "cards": "tiles", "upcard": "turned up"}


def _in_tiles(event: AnyEvent, style: Style) -> dict[str, Any]:
    """The event's fields with its cards drawn as tiles, under tile words."""
    obj = raw_dict(event)
    fields = CARD_FIELDS.get(obj["t"], ())

    def tiles(v: Any) -> Any:
        if isinstance(v, list | tuple):
            return [tiles(x) for x in v]
        return format_card(v, style) if isinstance(v, int) and is_card(v) else v

    return {(_TILE_KEYS.get(k, k) if k in fields else k): (tiles(v) if k in fields else v)
            for k, v in obj.items()}


def _field_diffs(x: dict[str, Any], y: dict[str, Any]) -> tuple[str, ...]:
    if x.get("t") != y.get("t"):
        return (f"event type: {x.get('t')} vs {y.get('t')}",)
    out: list[str] = []
    for k in list(dict.fromkeys([*x, *y])):
        _leaf_diffs(k, x.get(k), y.get(k), out)
    return tuple(out)


def _leaf_diffs(name: str, a: Any, b: Any, out: list[str]) -> None:
    """Each differing field under ``name``, down to the one that differs: a match start's
    rules or players are structures, and their whole text cut at 120 characters hid what
    was changed ("rules: {'name': 'thirteen-quick', ...' vs ..." of a changed target score).
    A list of plain values (cards) is said whole."""
    if a == b:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in dict.fromkeys([*a, *b]):
            _leaf_diffs(f"{name}.{k}", a.get(k), b.get(k), out)
        return
    if (isinstance(a, list | tuple) and isinstance(b, list | tuple) and len(a) == len(b)
            and any(isinstance(v, dict) for v in (*a, *b))):
        for i, (u, v) in enumerate(zip(a, b, strict=True)):
            _leaf_diffs(f"{name}[{i}]", u, v, out)
        return
    if (isinstance(a, list | tuple) and isinstance(b, list | tuple)
            and max(len(repr(a)), len(repr(b))) > 120):
        # whole, and where they part: cut at 120 characters, two stocks that differ at their
        # 58th card read the same
        at = next((i for i, (u, v) in enumerate(zip(a, b, strict=False)) if u != v),
                  min(len(a), len(b)))
        here = f"{_short(a[at]) if at < len(a) else '(none)'} vs " \
               f"{_short(b[at]) if at < len(b) else '(none)'}"
        out.append(f"{name}[{at}]: {here}; {name}: {a!r} vs {b!r}")
        return
    if isinstance(a, str) and isinstance(b, str) and lookalike(a, b):
        # a name changed to a lookalike ("José vs José", NFC against NFD; a zero-width
        # space; a Cyrillic letter) read as no change at all: said with the escapes
        a, b = apart(a, b)
    out.append(f"{name}: {_short(a)} vs {_short(b)}")


def _short(v: Any) -> str:
    if v is None:  # "note: None vs agreed" read as a note saying "None"
        return "(none)"
    if isinstance(v, str) and not v.strip():  # a blank name: "name:  vs ana" read as nothing
        return "(blank)" if v else "(empty)"
    text = v if isinstance(v, str) else repr(v)
    return text if len(text) <= 120 else text[:117] + "..."


def diff_logs(a: AnyPath, b: AnyPath) -> Diff:
    """Compare two copies of a match: first divergence, prefix relation, head digests.

    Both copies are read side by side, once, and never held: the first events (the match
    start), the pair where they part, and the counts, heads and signature records (two
    lists of 20 million events were 4.3 GB)."""
    a, b = path_text(a), path_text(b)  # a bytes path names the file, not "b'...'"
    stream_a, stream_b = LogStream(a), LogStream(b)
    read_a, read_b = iter(stream_a), iter(stream_b)
    firsts: tuple[AnyEvent | None, AnyEvent | None] = (None, None)
    parted: tuple[int, AnyEvent | None, AnyEvent | None] | None = None  # index, A's, B's
    for k, (x, y) in enumerate(itertools.zip_longest(read_a, read_b)):
        if k == 0:
            firsts = (x, y)
        if x != y:  # None: that copy ended
            parted = (k, x, y)
            break
    for _ in read_a:  # on to the end of each: its count, head and integrity
        pass
    for _ in read_b:
        pass
    ia, ib = stream_a.integrity, stream_b.integrity
    sa, sb = stream_a.signed, stream_b.signed
    for p, count, integ in ((a, stream_a.count, ia), (b, stream_b.count, ib)):
        if integ.status == "unreadable":  # the audit's "skipped" is no word for a refusal
            message = (integ.message or "cannot read").replace(": skipped, never opened",
                                                               ": not read as a log")
            raise LogFormatError(message, path=str(p), kind="unreadable")
        if not count and integ.status == "broken":  # nothing to compare
            raise _unreadable(p, integ)
    start = next((e for e in firsts if isinstance(e, MatchStarted)), None)
    players = start.players if start is not None else ()
    rules = start.rules if start is not None else None
    style = card_style(rules)
    shown = to_dict if not style.startswith("tiles") else lambda e: _in_tiles(e, style)
    seq: int | None = None
    diffs: tuple[str, ...] = ()
    prefix: Literal["a", "b"] | None = None
    x = y = None  # the events where the copies part (the reader gives seq FIRST_SEQ + index)
    if parted is not None:
        n, x, y = parted
        if x is not None and y is not None:
            seq, diffs = x.seq, _field_diffs(shown(x), shown(y))
        else:
            prefix = "a" if x is None else "b"
            seq = (y if x is None else x).seq  # type: ignore[union-attr]
            diffs = (f"copy {prefix} ends after {n} events; the other goes on",)

    def words(event: AnyEvent | None) -> str | None:
        return None if event is None else describe_event(event, players, style, rules=rules)

    empty_a = not_started_count(stream_a.count, ia)
    empty_b = not_started_count(stream_b.count, ib)
    return Diff(
        a=str(a), b=str(b), events_a=stream_a.count, events_b=stream_b.count,
        # Identical copies are whole ones: two copies damaged alike are not "identical". Two
        # matches not started are, in either form: an empty binary file is no damage (`verify`
        # and `audit` say NOT STARTED, exit 0), and two empty JSON Lines files were identical.
        identical=seq is None and ia.head == ib.head and sa.signatures == sb.signatures
        and (ia.status in ("sealed", "unsealed") or empty_a)
        and (ib.status in ("sealed", "unsealed") or empty_b),
        diverge_seq=seq,
        event_a=to_dict(x) if x is not None else None,
        event_b=to_dict(y) if y is not None else None,
        words_a=words(x), words_b=words(y),
        differences=diffs, prefix=prefix, head_a=ia.head, head_b=ib.head,
        heads_equal=ia.head == ib.head, integrity_a=ia.status, integrity_b=ib.status,
        signatures_a=len(sa.signatures), signatures_b=len(sb.signatures),
        signatures_equal=sa.signatures == sb.signatures,
        not_started_a=empty_a, not_started_b=empty_b,
        damage_a=_where(ia), damage_b=_where(ib), same_file=_same_file(a, b),
        **_signature_divergence(sa.signatures, sb.signatures),
    )


def _unreadable(path: str | os.PathLike[str], integ: Integrity) -> LogFormatError:
    """A copy of which no event reads, named as `verify` names it: the byte (or line), the
    seq and what is wrong there. Only a file that is no log (its first bytes are not a log
    header: exit 2) is "not a readable log"; a log damaged in its first record is a log, and
    was called none, with no seq."""
    not_a_log = integ.kind == "header" and integ.offset == 0
    message = integ.message or "cannot read"
    return LogFormatError(
        f"not a readable log: {message}" if not_a_log
        else f"{message}; no event of this copy reads intact, so there is nothing to compare",
        path=str(path), offset=integ.offset, seq=None if not_a_log else integ.seq,
        kind=integ.kind or "damage", line=integ.record if integ.format == "jsonl" else None)


def _by_head(signatures: Sequence[SignedHead]) -> dict[int, list[SignedHead]]:
    out: dict[int, list[SignedHead]] = {}
    for signed in signatures:
        out.setdefault(signed.seq, []).append(signed)
    return out


def _records(label: str, records: list[SignedHead]) -> str:
    if not records:
        return f"{label} holds none"
    keys = ", ".join(dict.fromkeys(r.key_id for r in records))
    many = f"{len(records)} records" if len(records) > 1 else "one"
    return f"{label} holds {many} by key {keys}"


def _same_key(ra: list[SignedHead], rb: list[SignedHead]) -> str:
    """Records by the same key at one head that differ: in their match id, or in their bytes
    (Ed25519 signs a message one way only, so at most one of two such is the key's)."""
    keys = ", ".join(dict.fromkeys(r.key_id for r in ra))
    many = f"{len(ra)} records" if len(ra) > 1 else "one"
    ids_a, ids_b = [r.match_id for r in ra], [r.match_id for r in rb]
    if ids_a != ids_b:
        return (f"both hold {many} by key {keys}, for match {ids_a[0]!r} in A and "
                f"{ids_b[0]!r} in B")
    return (f"both hold {many} by key {keys}, with different signature bytes: a key signs a "
            "head one way only, so at most one is the key's (`audit --keys` says which)")


def _signature_divergence(a: Sequence[SignedHead], b: Sequence[SignedHead]
                          ) -> dict[str, Any]:
    """The first head (by seq) whose signature records differ between the copies, in words:
    which copy holds a record there, by which key (a record by another key, or one the other
    copy lacks, is what a referee asks about first)."""
    ha, hb = _by_head(a), _by_head(b)
    for seq in sorted(ha.keys() | hb.keys()):
        ra, rb = ha.get(seq, []), hb.get(seq, [])
        if ra == rb:
            continue
        if ra and rb and [r.key_id for r in ra] == [r.key_id for r in rb]:
            text = _same_key(ra, rb)
        else:
            text = f"{_records('A', ra)}, {_records('B', rb)}"
        return {"signatures_differ_at": seq, "signatures_difference": text}
    return {}


_WHOLE = ("sealed", "unsealed")


def _same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    if os.fspath(a) == "-" or os.fspath(b) == "-":  # standard input is no file to compare
        return False
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def _where(i: Integrity) -> str | None:
    """Where a damaged copy stops being readable, as `verify` names it; None for a whole one."""
    if i.status in _WHOLE:
        return None
    if i.format == "jsonl" and i.record is not None:
        return f"line {i.record}"
    return None if i.offset is None else f"byte {i.offset}"
