"""`buraco-log moves LOG --at SEQ`: what the player to move could have done at that point.

Reads the log, replays it to ``--at`` and calls :func:`buraco_log.options.moves_at`: every legal
move (complete), grouped and in words, cards as the log and every other command write them
(``--cards symbols``: with suit symbols); ``--format json`` prints exactly what the library
returned.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

import typer

from buraco_log.cards import counted
from buraco_log.errors import ReplayError
from buraco_log.options import MovesAt, moves_at
from buraco_log.timeline import PastIllegalError, seat_named
from cli.common import Cards, CardsOpt, Format, emit_json, fail, guarded, note, symbols_shown
from cli.dispute_cmd import (
    FormatOpt,
    IgnoreIntegrityOpt,
    LogArg,
    load_timeline,
    unsound,
    with_warning,
)
from cli.safetext import terminal_safe

_NO_MOVE = {
    "new": "the next event starts the match (its rules and players: no player's choice)",
    "between": "the next event is a deal (chance, not a choice)",
    "over": "the match is over",
}
"""Why no player has a move, by phase."""


def render_moves(m: MovesAt, unit: str = "card") -> Iterator[str]:
    """The moves for people; ``unit``: ``tile`` for a rules value drawn in tiles (Burako)."""
    who = seat_named(m.seat, m.name or "") if m.seat is not None else "nobody"
    yield f"after seq {m.seq}: phase {m.phase}; {who} to move; {m.count} legal move(s)"
    if m.pile is not None:
        p = m.pile
        verdict = "may take the pile" if p.may_take else "may not take the pile"
        top = f", top {p.top}" if p.top is not None else ""
        pickup = p.pickup.replace("_", "-")
        yield f"pile ({counted(p.count, unit)}{top}; {pickup}): {verdict}: {p.reason}"
        for use in p.uses:
            yield f"  - {use}"
    if not m.groups:  # "nothing follows phase new/over" said nothing of either
        yield "no move: " + _NO_MOVE.get(m.phase, f"nothing follows phase {m.phase}")
    for g in m.groups:
        yield f"{g.heading} ({len(g.moves)}):"
        for mv in g.moves:
            yield f"  {mv.text}"


@guarded
def moves(
    path: LogArg,
    at: Annotated[int | None, typer.Option("--at", min=-1, help="The seq after which to list "
                                           "the moves (default: the last event; -1: before "
                                           "the match start, where nobody moves yet).",
                                           show_default=False)] = None,
    format: FormatOpt = Format.table,
    ignore_integrity: IgnoreIntegrityOpt = False,
    cards: CardsOpt = Cards.letters,
) -> None:
    """Every legal move of the player to move after a seq, grouped and in words (a referee's
    "what else could they have done?")."""
    js = format is Format.json
    # before the start (-1) there is a table of a match not started too: nobody moves yet
    tl, damage = load_timeline(path, ignore_integrity, as_json=js, not_started_ok=at == -1)
    seq = tl.last_seq if at is None else at
    try:
        state = tl.state_at(seq)
    except ReplayError as exc:
        message = exc.message
        if isinstance(exc, PastIllegalError) and tl.illegal is not None \
                and tl.illegal.seq is not None:
            # the referee's next question, as `explain` names its command for the event
            message += (f"; `moves --at {tl.illegal.seq - 1}` lists what could have been "
                        f"played in place of seq {tl.illegal.seq}")
        if getattr(exc, "path", None) is None:  # `-f json`'s `path`: the file the line names
            exc.path = str(path)  # type: ignore[attr-defined]
        raise fail(f"{path}: {message}", exc.exit_status, as_json=js, error=exc) from None
    illegal = tl.illegal if tl.illegal is not None and tl.illegal.seq is not None else None
    if illegal is not None and at is not None:  # asked for a seq before it: said, as replay does
        note(f"{path}: seq {illegal.seq} is illegal [{illegal.rule}]; the table is known up "
             f"to seq {tl.last_seq}")
    # the JSON writes cards as the log does, whatever the text is asked for (as every command)
    result = moves_at(state, symbols=symbols_shown(cards) and not js)
    if format is Format.json:
        emit_json(with_warning(result, damage))
    else:
        if damage:
            typer.echo(terminal_safe(damage))
        unit = "tile" if tl.style == "tiles" else "card"
        for line in render_moves(result, unit):
            typer.echo(terminal_safe(line))  # names come from the log
    if illegal is None or at is not None:
        unsound(damage)  # a changed log read anyway: a finding whatever seq (as replay, view)
    if illegal is not None and at is None:
        # the last event was asked for, and the table stops short of it: the moves shown are
        # those after the last legal event, not after the log's end (it said nothing, exit 0)
        raise fail(f"{path}: seq {illegal.seq} is illegal [{illegal.rule}]; the table is known "
                   f"up to seq {tl.last_seq}: the moves shown are after it, not after the "
                   "log's last event", error=illegal)


def register(app: typer.Typer) -> None:
    app.command()(moves)
