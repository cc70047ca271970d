"""The referee's question "what else could they have done?": the legal moves of the player to
move, grouped and described in words, with cards as text.

``moves_at(state)`` groups :func:`buraco_log.moves.legal_moves` (complete) by what a player
would call the choice: draw, take the pile (with every way its top card can be used under
must-use-top), end the hand, lay a new meld, lay off on meld #n, discard, and the rest. Each
move keeps its event in JSON Lines form (cards as text), so a program can record it as is. The
words write cards as the log does (``7h``), or with suit symbols when asked.
Core module: stdlib and msgspec only.
"""

from __future__ import annotations

import msgspec

from buraco_log.cards import Card, Style, counted, format_card
from buraco_log.events import (
    AnyEvent,
    CardDiscarded,
    CardDrawn,
    CardsLaidOff,
    FirstDrawRejected,
    HandEnded,
    MatchEnded,
    MeldLaid,
    MortoTaken,
    OpeningRetracted,
    PileTaken,
    WentOut,
)
from buraco_log.jsonl import event_to_json
from buraco_log.melds import MeldError, cache_for
from buraco_log.moves import PileOptions, legal_moves, pile_options
from buraco_log.rules import Rules
from buraco_log.state import State
from buraco_log.timeline import card_style, stock_end
from buraco_log.wilds import describe_wild


class MoveText(msgspec.Struct, frozen=True):
    """One legal move: in words, and as the event a recorder would write (cards as text)."""

    text: str
    event: dict[str, object]


class MoveGroup(msgspec.Struct, frozen=True):
    """Moves of one kind (``group``), under a heading in words."""

    group: str
    heading: str
    moves: tuple[MoveText, ...]


class PileAnswer(msgspec.Struct, frozen=True):
    """:class:`buraco_log.moves.PileOptions` with its cards as text."""

    may_take: bool
    pickup: str
    reason: str
    top: str | None
    count: int
    uses: tuple[str, ...]


class MovesAt(msgspec.Struct, frozen=True):
    """The legal moves right after event ``seq``."""

    seq: int
    phase: str
    seat: int | None
    name: str | None
    count: int  # legal moves in all
    pile: PileAnswer | None  # the draw phase only
    groups: tuple[MoveGroup, ...]


_ORDER = ("draw", "pile", "end", "reject", "meld", "layoff", "retract", "discard", "morto",
          "out", "match")


def moves_at(state: State, symbols: bool = False) -> MovesAt:
    """Every legal move of the player to move after ``state``, grouped and in words. Cards are
    written as the log and every other command writes them (``7h``, ``12r``); ``symbols``:
    with suit symbols (``7♥``, ``12🔴``)."""
    rules = state.rules
    style: Style = card_style(rules)
    if symbols:
        style = "unicode" if style == "ascii" else "tiles-unicode"
    moves = legal_moves(state)
    playing = state.phase in ("draw", "play", "emptied", "out", "decided")
    seat = state.turn if playing and state.players else None
    groups: dict[str, list[MoveText]] = {}
    headings: dict[str, str] = {}

    def cs(cards: tuple[Card, ...] | list[Card]) -> str:
        return " ".join(format_card(c, style) for c in cards)

    for move in moves:
        key, heading, text = _describe(move, state, rules, style, cs)
        groups.setdefault(key, []).append(MoveText(text, event_to_json(move)))
        headings.setdefault(key, heading)
    pile = None
    if state.phase == "draw":
        pile = _pile_answer(pile_options(state), state, cs)
    ordered = sorted(groups, key=lambda k: (_ORDER.index(k.split(":")[0]), k))
    return MovesAt(
        seq=state.seq,
        phase=state.phase,
        seat=seat,
        name=state.players[seat].name if seat is not None else None,
        count=len(moves),
        pile=pile,
        groups=tuple(MoveGroup(k, headings[k], tuple(groups[k])) for k in ordered),
    )


def _pile_answer(o: PileOptions, state: State, cs: object) -> PileAnswer:
    assert callable(cs)
    uses = []
    for u in o.uses:
        if u.meld is None:
            uses.append(f"lay {cs(u.cards)} as a new meld")
        else:
            side = state.sides[state.turn]
            meld = next(m for m in state.melds[side] if m.id == u.meld)
            uses.append(f"lay off {cs(u.cards)} on meld #{u.meld} ({cs(meld.cards)})")
    return PileAnswer(o.may_take, o.pickup, o.reason,
                      cs((o.top,)) if o.top is not None else None, o.count, tuple(uses))


def _describe(
    move: AnyEvent, state: State, rules: Rules | None, style: Style, cs: object
) -> tuple[str, str, str]:
    """(group key, group heading, the move in words)."""
    assert callable(cs)
    unit = "tile" if style.startswith("tiles") else "card"  # Burako's tiles (RULES.md §1)
    if isinstance(move, CardDrawn):
        return "draw", "draw", f"draw the top {unit} of the stock ({cs((move.card,))})"
    if isinstance(move, PileTaken):
        return ("pile", "take the discard pile",
                f"take the whole pile ({counted(move.count, unit)}, top {cs((move.top,))})")
    if isinstance(move, HandEnded):
        if move.reason == "stock_out":
            return "end", "end the hand", f"end the hand: {stock_end(rules, unit)}"
        return "end", "end the hand", "end the hand: a player went out"
    if isinstance(move, FirstDrawRejected):
        return ("reject", f"reject the first {unit}",
                f"reject {cs((move.card,))}: it goes face up on the pile, draw again")
    if isinstance(move, MeldLaid):
        return "meld", "lay a new meld", _meld_words(move.cards, rules, style, cs)
    if isinstance(move, CardsLaidOff):
        side = state.sides[move.seat]
        meld = next(m for m in state.melds[side] if m.id == move.meld)
        grown = _meld_words(meld.cards + move.cards, rules, style, cs, kind_only=True)
        return (f"layoff:{move.meld:04d}",
                f"lay off on meld #{move.meld} ({cs(meld.cards)})",
                f"{cs(move.cards)}" + (f" -> {grown}" if grown else ""))
    if isinstance(move, OpeningRetracted):
        return ("retract", "take back the opening",
                f"take back {cs(move.cards)}: the vulnerable opening is short")
    if isinstance(move, CardDiscarded):
        return "discard", "discard (ends the turn)", f"discard {cs((move.card,))}"
    if isinstance(move, MortoTaken):
        how = "directly, and play on without drawing" if move.direct else (
            "indirectly: it is played from the next turn")
        many = f" ({counted(move.count, unit)})" if move.count is not None else ""
        return "morto", "take the morto", f"take the morto{many} {how}"
    if isinstance(move, WentOut):
        return "out", "go out", "go out: the hand ends"
    if isinstance(move, MatchEnded):
        return "match", "end the match", f"end the match; side {move.winner} wins"
    return "match", "other", type(move).__name__  # pragma: no cover - the union is closed


def _meld_words(cards: tuple[Card, ...], rules: Rules | None, style: Style, cs: object,
                kind_only: bool = False) -> str:
    """A meld in words: its cards (unless ``kind_only``), kind, canastra class, wild."""
    assert callable(cs)
    if rules is None:
        return "" if kind_only else cs(cards)
    try:
        reading = cache_for(rules).read(cards)
    except MeldError:
        return "" if kind_only else cs(cards)
    kind = "set" if reading.kind == "set" else "run"
    parts = [f"{kind} of {reading.size}"]
    if reading.canastra:
        cls = reading.canastra.replace("_", "-")
        # RULES.md §1: Burako's tile 1 is the ace; its canastra from 1 to 1 is "1-to-1".
        parts.append(f"{'1-to-1' if cls == 'ace-to-ace' and style.startswith('tiles') else cls}"
                     " canastra")
    wild = describe_wild(cards, rules, style)
    if wild:
        parts.append(wild)
    words = ", ".join(parts)
    return words if kind_only else f"{cs(cards)} ({words})"
