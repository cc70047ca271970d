"""The event vocabulary: a msgspec tagged union covering a whole match.

Tags are promises to every log ever written: they never change once shipped (class names may).
Events are encoded as arrays (``array_like``): the move's own fields first, then the envelope
(``seq``, ``at``, ``note``). New fields are only ever appended, with defaults, and bump
``FORMAT_VERSION``; older records are upcast in ``upcast`` before the typed decode.
"""

from __future__ import annotations

import re
from typing import Any, Literal, TypeAlias

import msgspec

# defined in the package itself, where `buraco-log --version` reads it without msgspec
from buraco_log import FORMAT_VERSION as FORMAT_VERSION
from buraco_log.cards import format_card, is_card
from buraco_log.rules import Rules


class Event(
    msgspec.Struct,
    tag_field="t",
    frozen=True,
    gc=False,  # events hold no reference cycles; skipping GC tracking halves decode cost
    array_like=True,
    forbid_unknown_fields=True,
    kw_only=True,
):
    """Envelope shared by every event. ``at`` and ``note`` never affect replay."""

    seq: int
    at: int | None = None  # wall-clock time, milliseconds since the Unix epoch (UTC)
    note: str | None = None  # free annotation, e.g. a referee's remark

    def __repr__(self) -> str:
        """Cards by name, as people write them: ``MeldLaid(seat=1, cards=(Qs, 8h, Qs), ...)``
        (the log stores their codes; ``cards.parse_cards`` reads the names back)."""
        parts = []
        for name in self.__struct_fields__:
            value = getattr(self, name)
            shown = _card_repr(value) if name in _CARD_NAMES else repr(value)
            parts.append(f"{name}={shown}")
        return f"{type(self).__name__}({', '.join(parts)})"


_CARD_NAMES = frozenset({"card", "cards", "top", "hands", "mortos", "stock", "upcard"})
"""The fields that hold card codes (a card, a tuple of cards, or tuples of them)."""


def _card_repr(value: Any) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(_card_repr(v) for v in value) + ")"
    if isinstance(value, int) and not isinstance(value, bool) and is_card(value):
        return format_card(value)
    return repr(value)


class Player(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: str
    id: str | None = None


class MatchStarted(Event, tag="ms", kw_only=False, frozen=True):
    """The match: rules in full, players in seat order, sides, and how deals are derived."""

    match_id: str
    rules: Rules
    players: tuple[Player, ...]
    sides: tuple[int, ...]  # side of each seat; must agree with the rules' seating
    first_dealer: int = 0
    version: int = FORMAT_VERSION
    commitment: str | None = None  # sha256 hex of the secret server seed, published first
    player_seeds: tuple[str, ...] = ()
    metadata: dict[str, str] = {}
    key_id: str | None = None  # the site key that signs this log's heads (format version 2)


class TotalsCarried(Event, tag="tc", kw_only=False, frozen=True):
    """The match goes on from these side totals (a tournament match resumed in a new log, or
    one transcribed from partway through). Only right after ``MatchStarted``; a log without it
    starts from zero. Vulnerability and the match end follow from the totals."""

    totals: tuple[int, ...]


class HandStarted(Event, tag="hs", kw_only=False, frozen=True):
    """The complete deal. ``stock[0]`` is the top card. Chance is data: replay needs no RNG."""

    hand: int
    dealer: int
    hands: tuple[tuple[int, ...], ...]
    mortos: tuple[tuple[int, ...], ...] = ()
    stock: tuple[int, ...] = ()
    upcard: int | None = None
    shuffle: str | None = None  # id of the shuffle algorithm the deal came from
    seed: str | None = None  # a plain (not committed) seed, when one was used


class CardDrawn(Event, tag="dr", kw_only=False, frozen=True):
    """The player drew the top stock card, named for cross-checking."""

    seat: int
    card: int


class FirstDrawRejected(Event, tag="rj", kw_only=False, frozen=True):
    """First turn only (``first_turn_redraw``): the drawn card goes face up onto the pile."""

    seat: int
    card: int


class PileTaken(Event, tag="pt", kw_only=False, frozen=True):
    """The player took the whole discard pile: ``count`` cards with ``top`` on top."""

    seat: int
    count: int
    top: int


class MeldLaid(Event, tag="ml", kw_only=False, frozen=True):
    """A new meld from the hand. ``meld`` is its index among the side's melds this hand."""

    seat: int
    cards: tuple[int, ...]
    meld: int | None = None


class CardsLaidOff(Event, tag="lo", kw_only=False, frozen=True):
    """Cards from the hand added to one of the side's own melds."""

    seat: int
    meld: int
    cards: tuple[int, ...]


class OpeningRetracted(Event, tag="rt", kw_only=False, frozen=True):
    """A vulnerable side laid too little: the player takes this turn's melds back."""

    seat: int
    cards: tuple[int, ...]


class CardDiscarded(Event, tag="dc", kw_only=False, frozen=True):
    seat: int
    card: int


class MortoTaken(Event, tag="mt", kw_only=False, frozen=True):
    """The side's morto goes to the player. Direct: emptied by melding, the turn goes on."""

    seat: int
    direct: bool
    count: int | None = None


class WentOut(Event, tag="wo", kw_only=False, frozen=True):
    """The player emptied the hand with going out allowed: the hand ends."""

    seat: int


HandEndReason: TypeAlias = Literal["went_out", "stock_out"]


class HandEnded(Event, tag="he", kw_only=False, frozen=True):
    """End of a hand. ``scores``: what the table recorded per side (checked against replay)."""

    reason: HandEndReason
    scores: tuple[int, ...] | None = None


class MatchEnded(Event, tag="me", kw_only=False, frozen=True):
    """End of the match. ``server_seed`` reveals the seed behind ``commitment``."""

    totals: tuple[int, ...] | None = None
    winner: int | None = None  # winning side
    server_seed: str | None = None


AnyEvent: TypeAlias = (
    MatchStarted
    | TotalsCarried
    | HandStarted
    | CardDrawn
    | FirstDrawRejected
    | PileTaken
    | MeldLaid
    | CardsLaidOff
    | OpeningRetracted
    | CardDiscarded
    | MortoTaken
    | WentOut
    | HandEnded
    | MatchEnded
)

EVENT_TYPES: tuple[type[Event], ...] = (
    MatchStarted, HandStarted, CardDrawn, FirstDrawRejected, PileTaken, MeldLaid, CardsLaidOff,
    OpeningRetracted, CardDiscarded, MortoTaken, WentOut, HandEnded, MatchEnded, TotalsCarried,
)
TAGS: dict[str, type[Event]] = {
    t.__struct_config__.tag: t for t in EVENT_TYPES  # type: ignore[misc]
}
# Fields that hold cards, by tag: the JSON Lines form writes these as text.
CARD_FIELDS: dict[str, tuple[str, ...]] = {
    "hs": ("hands", "mortos", "stock", "upcard"),
    "dr": ("card",), "rj": ("card",), "pt": ("top",), "ml": ("cards",), "lo": ("cards",),
    "rt": ("cards",), "dc": ("card",),
}

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(AnyEvent)
_list_decoder = msgspec.msgpack.Decoder(list[AnyEvent])


def tag_of(event: Event) -> str:
    return type(event).__struct_config__.tag  # type: ignore[return-value]


def encode(event: Event) -> bytes:
    return _encoder.encode(event)


def decode(data: bytes) -> AnyEvent:
    return _decoder.decode(data)


def encode_many(events: list[AnyEvent] | tuple[AnyEvent, ...]) -> bytes:
    return _encoder.encode(events)


def decode_many(data: bytes) -> list[AnyEvent]:
    return _list_decoder.decode(data)


def from_record(record: Any) -> AnyEvent:
    """A decoded record (``[tag, field, ...]``) as its typed event. Converting to the tagged
    class itself is about 50 times faster than to the union :data:`AnyEvent` (msgspec builds the
    union's type information on every call); an unknown tag, or no tag, goes through the union
    for its error message."""
    cls = TAGS.get(record[0]) if isinstance(record, list) and record and isinstance(
        record[0], str) else None
    return msgspec.convert(record, cls if cls is not None else AnyEvent)  # type: ignore[return-value]


def to_dict(event: Event) -> dict[str, Any]:
    """The readable object form (tag ``t`` first), used by JSON Lines and ``--format json``."""
    out: dict[str, Any] = {"t": tag_of(event)}
    for name in event.__struct_fields__:
        value = getattr(event, name)
        if name in ("at", "note") and value is None:
            continue
        out[name] = msgspec.to_builtins(value)
    return out


_FIELDS: dict[type, dict[str, msgspec.structs.FieldInfo]] = {}


def _fields_of(cls: type) -> dict[str, msgspec.structs.FieldInfo]:
    """An event class's fields by name, looked up once: msgspec evaluates the class's
    annotations on every call, which made reading a JSON Lines log of a million lines take
    minutes."""
    found = _FIELDS.get(cls)
    if found is None:
        found = _FIELDS[cls] = {f.name: f for f in msgspec.structs.fields(cls)}
    return found


def from_dict(data: dict[str, Any]) -> AnyEvent:
    """Inverse of :func:`to_dict`: a readable object to a typed event (validated by msgspec)."""
    tag = data.get("t")
    cls = TAGS.get(tag) if isinstance(tag, str) else None
    if cls is None:
        if "t" not in data:
            raise msgspec.ValidationError("the object has no 't' (its event type, e.g. \"dr\")")
        raise msgspec.ValidationError(f"unknown event type {tag!r}")
    fields = cls.__struct_fields__
    unknown = sorted(set(data) - set(fields) - {"t"})
    if unknown:
        raise msgspec.ValidationError(f"unknown field(s) {', '.join(unknown)} for event {tag!r}")
    row: list[Any] = [tag]
    defaults = _fields_of(cls)
    for name in fields:
        if name in data:
            row.append(data[name])
        elif defaults[name].required:
            raise msgspec.ValidationError(f"event {tag!r} is missing required field {name!r}")
        else:
            row.append(msgspec.to_builtins(defaults[name].default)
                       if defaults[name].default is not msgspec.NODEFAULT
                       else defaults[name].default_factory())
    try:
        event = from_record(row)
    except msgspec.ValidationError as exc:
        raise msgspec.ValidationError(name_field(tag, str(exc))) from None
    return event


_ITEM = re.compile(r"`\$\[(\d+)\]")


def name_field(tag: Any, message: str) -> str:
    """A decode error about an event array (``... - at `$[3]```) with the field named instead
    of its position (``... - at `seq```): the position means nothing to whoever reads it."""
    cls = TAGS.get(tag) if isinstance(tag, str) else None
    found = _ITEM.search(message)
    if cls is None or found is None:
        return message
    index = int(found.group(1)) - 1  # item 0 is the tag
    fields = cls.__struct_fields__
    if not 0 <= index < len(fields):
        return message
    return f"{message[:found.start()]}`{fields[index]}{message[found.end():]}"


_V1_MS_KEY_ID = 10  # where version 2 put MatchStarted.key_id: after the tag and 9 fields


def upcast_v1_v2(record: Any) -> Any:
    """Version 2 added ``MatchStarted.key_id`` (before the envelope): a v1 start has none."""
    if isinstance(record, list) and record and record[0] == "ms":
        record = [*record[:_V1_MS_KEY_ID], None, *record[_V1_MS_KEY_ID:]]
    return record


_UPCASTERS = {1: upcast_v1_v2}

FAST_VERSIONS: frozenset[int] = frozenset({1, FORMAT_VERSION})
"""Versions whose records the typed decoder may read as they are. Version 1 differs from 2
only in ``MatchStarted``, and a v1 start never decodes as a v2 one (its 11th item is the
integer ``seq`` where v2 has ``key_id``, text or null): a v1 segment holding one fails the
fast decode and is read again through the upcaster."""


def upcast(record: Any, version: int) -> Any:
    """Bring a raw decoded record from ``version`` to ``FORMAT_VERSION``, one step at a time."""
    if not 1 <= version <= FORMAT_VERSION:
        raise msgspec.ValidationError(
            f"log format version {version} is not known to this buraco_log"
        )
    for step in range(version, FORMAT_VERSION):
        record = _UPCASTERS[step](record)
    return record


def encode_as(event: AnyEvent, version: int) -> bytes:
    """The bytes ``event`` has in a log of format ``version``: the chain of an older log (a
    JSON Lines file that says its version) is over those, so its head digest still matches."""
    data = encode(event)
    if version == FORMAT_VERSION or not isinstance(event, MatchStarted):
        return data
    if version == 1 and event.key_id is None:
        items = msgspec.msgpack.decode(data, type=list[msgspec.Raw])
        del items[_V1_MS_KEY_ID]
        return _encoder.encode(items)
    raise ValueError(f"this match start cannot be written in log format version {version}")


def schema() -> dict[str, Any]:
    """JSON Schema of the event union, binary form (schema/LOG_FORMAT.md covers JSON Lines)."""
    return msgspec.json.schema(AnyEvent)
