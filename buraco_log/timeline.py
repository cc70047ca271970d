"""A match laid out in time: jump to any seq, see the table, describe events in words.

:class:`Timeline` replays a match once, validating every event and keeping frozen snapshots
every ``snapshot_every`` events; a jump then starts from the nearest snapshot and applies at
most ``snapshot_every - 1`` trusted events, so any point of a long match is milliseconds away.
:func:`table_view` turns a state into :class:`TableView`, the stable, printable picture used by
``buraco-log replay`` (cards as text, in the rules' rendering, hidden cards masked for a seat).

Core module: stdlib and msgspec only.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Literal

import msgspec

from buraco_log import watch
from buraco_log.cards import Card, Style, counted, format_card, is_card
from buraco_log.errors import (
    BuracoLogError,
    IllegalMoveError,
    PositionError,
    ReplayError,
    position,
)
from buraco_log.events import (
    CARD_FIELDS,
    AnyEvent,
    CardDiscarded,
    CardDrawn,
    CardsLaidOff,
    FirstDrawRejected,
    HandEnded,
    HandStarted,
    MatchEnded,
    MatchStarted,
    MeldLaid,
    MortoTaken,
    OpeningRetracted,
    PileTaken,
    Player,
    TotalsCarried,
    WentOut,
)
from buraco_log.reducer import Replayer
from buraco_log.rules import Rules
from buraco_log.scoring import score_hand
from buraco_log.state import SideScore, State
from buraco_log.wilds import describe_wild

SNAPSHOT_EVERY = 64
"""Snapshot spacing: a jump applies at most this many events minus one."""

RECENT = 6
"""How many recent events a table view describes in words."""


NO_RULES_NAME = "rules with no name"
"""How a rules value whose name is empty (or blanks) is named in the lines of a log."""

def card_style(rules: Rules | None) -> Style:
    """The text style the rules call for: Burako tiles, otherwise cards."""
    return "tiles" if rules is not None and rules.rendering == "tiles" else "ascii"


def cards_text(cards: Sequence[Card], style: Style) -> tuple[str, ...]:
    return tuple(format_card(c, style) for c in cards)


# A card as the log writes it (7h Th JK; Burako's 12r), standing alone: not inside a word, a
# path (/tmp/2c/x.log, 3d.log), a digest or a number (#3d).
_LETTER_CARD = re.compile(
    r"(?<![\w#@./\\:-])(?:([2-9TJQKA])([cdhs])|(1[0-3]|[1-9])([ybrk])|(JK))"
    r"(?![\w/\\-]|\.\w)")
_SEAT_BEFORE = re.compile(r"\bseat \d+ +$")  # "seat 0 ana (11): ...", "seat 0  ana  side 0"
# Where a word that looks like a card is something else. A match id ("match 10s started"), a
# name or id field of `diff` ("players[0].name: Kh vs p0"), a list of names ("(classic; Kh,
# As)"), and a sentence's first word ("As the rules say", "2s alone are not a meld").
_ID_BEFORE = re.compile(r"\bmatch +$")
# `diff`'s line of a field that differs: "  players[0].name: Kh vs p0", "  card: Ac vs 5d"
_FIELD_LINE = re.compile(r"^ *([a-z_]+)(?:\[\d+\]|\.\w+)*: .* vs ")
_CARD_FIELDS = frozenset({name for names in CARD_FIELDS.values() for name in names}
                         | {"tile", "tiles", "turned up"})
_LISTED = re.compile(r"[(,;] *$")
_SENTENCE_START = re.compile(r"(?:^[ -]*|[.:!?] +)$")
_WORD_AFTER = re.compile(r" +(?!vs\b)[a-z]")  # "Ah vs Kh": two cards compared
# A card named alone right after these words is a card even where a player has its name:
# "seat 0 (Kh) discarded Kh".
_CARD_CUE = re.compile(r"(?:\b(?:drew|discarded|discard|draw|top|off|hold|holds|wild|card|"
                       r"tile|cards|tiles|is|was|vs|named|rejected|back|missing|extra)|\)|:) +$")
_SUIT_SYMBOL = dict(zip("cdhs", "\u2663\u2666\u2665\u2660", strict=True))
_TILE_SYMBOL = dict(zip("ybrk", "\U0001f7e1\U0001f535\U0001f534\u26ab", strict=True))


def _in_a_run(text: str, m: re.Match[str]) -> bool:
    """Whether the card-like word ``m`` stands beside another, one space apart (``7h 7s 7d``):
    a meld, a hand or a pile, whatever its cards might also name."""
    before = _LETTER_CARD.search(text, max(0, m.start() - 4), m.start())
    if before is not None and text[before.end():m.start()] == " ":
        return True
    after = _LETTER_CARD.match(text, m.end() + 1) if text[m.end():m.end() + 1] == " " else None
    return after is not None


def _is_a_card(text: str, m: re.Match[str], names: Collection[str]) -> bool:
    """Whether the card-like word ``m`` of ``text`` stands where a card stands, not a player's
    name, a match id or an English word."""
    if _in_a_run(text, m):
        return True
    a, b = m.start(), m.end()
    before, after = text[:a], text[b:]
    if (text[a - 1:a], after[:1]) == ("(", ")") or _SEAT_BEFORE.search(before):
        return False  # a seat's player, as a seat is named: "seat 1 (JK)", "seat 0  Kh"
    if _ID_BEFORE.search(before):
        return False
    if _LISTED.search(before) and after[:1] in (",", ")"):
        return False
    if _SENTENCE_START.search(before) and _WORD_AFTER.match(after):
        return False
    return m.group(0) not in names or _CARD_CUE.search(before) is not None


def _cards_in(text: str, names: Collection[str] = ()) -> Iterator[re.Match[str]]:
    """The words of ``text`` written as the log writes cards, in a card's place."""
    field = _FIELD_LINE.match(text)
    if field is not None and field.group(1) not in _CARD_FIELDS:
        return iter(())  # a name, an id, a rule or a note that differs: no card in it
    return (m for m in _LETTER_CARD.finditer(text) if _is_a_card(text, m, names))


def names_a_tile(text: str, names: Collection[str] = ()) -> bool:
    """Whether ``text`` names a Burako tile as the log writes it (``12r``), in a tile's place
    (a match id ``3b`` is none)."""
    return any(m.group(3) for m in _cards_in(text, names))


def with_symbols(text: str, tiles: bool | None = None, names: Collection[str] = ()) -> str:
    """``text`` with each card written as the log writes it (``7h Th JK``, Burako's ``12r``)
    in suit symbols, as ``format_card`` writes them (``7\u2665 10\u2665 \U0001f0cf``,
    ``12\U0001f534``): only where a card stands (:func:`_is_a_card`), so a player named
    ``Kh``, a match id ``Ah`` or a sentence's ``As`` keeps its letters. ``tiles``: the text is of
    tiles (a Burako joker keeps ``JK``, it has no symbol); None: it is if it names a tile.
    ``names``: the players', left as they are where they stand alone, not after a word that
    names a card (a column of names)."""
    if tiles is None:
        tiles = names_a_tile(text, names)
    out: list[str] = []
    at = 0
    for m in _cards_in(text, names):
        rank, suit, number, colour, joker = m.groups()
        if joker:
            shown = m.group(0) if tiles else "\U0001f0cf"
        elif number:
            shown = number + _TILE_SYMBOL[colour]
        else:
            shown = ("10" if rank == "T" else rank) + _SUIT_SYMBOL[suit]
        out += (text[at:m.start()], shown)
        at = m.end()
    out.append(text[at:])
    return "".join(out)


# -- describing events ------------------------------------------------------------------------


def stock_end(rules: Rules | None, unit: str = "card") -> str:
    """Why a hand ends without going out (RULES.md §8), in the same words wherever it is said
    (``replay``'s hand end, ``moves``' offer to end the hand): ``mega`` ends the hand with two
    cards still in the stock, so "the stock ran out" is said only where the floor is 0."""
    floor = rules.stock_floor if rules is not None else None
    if floor == 0:
        return "the stock ran out"
    if floor is None:  # the rules are unknown: say nothing the floor might contradict
        return "the stock reached its floor"
    return f"the stock is down to its last {counted(floor, unit)}"


def seat_named(seat: int, name: str) -> str:
    """A seat as every line names it, ``seat 2 (ana)``; a player with no name (blank in the
    log, as a site may leave it) is ``seat 2``: it read "seat 2 ()"."""
    return f"seat {seat} ({name})" if name.strip() else f"seat {seat}"


def name_or_seat(seat: int, name: str) -> str:
    """A player named alone (a column of names, a side's players): the name, or ``seat 2``
    for a player with no name (an empty column read as nobody)."""
    return name if name.strip() else f"seat {seat}"


def describe_event(
    event: AnyEvent, players: Sequence[Player] = (), style: Style = "ascii",
    seat: int | None = None, rules: Rules | None = None,
) -> str:
    """One event in words, e.g. ``seq 41: seat 2 (ana) discarded 7h``. For ``seat``'s view,
    another seat's draw from the stock names no card: that seat alone saw it. ``rules``: the
    match's, to say how a hand ended by the stock (mega's floor is 2 cards, not 0)."""

    def who(seat: int) -> str:
        return seat_named(seat, players[seat].name if 0 <= seat < len(players) else "")

    def cs(cards: Sequence[Card]) -> str:
        # a code that is no card (a tampered or hand-written log) is named as the refusal
        # names it, #0, not as a tuple: "drew (0,)"
        return " ".join(format_card(c, style) if is_card(c) else f"#{c}" for c in cards)

    e = event
    unit = "tile" if style.startswith("tiles") else "card"  # Burako's tiles (RULES.md §1)
    if isinstance(e, MatchStarted):
        # an empty id and empty names were "match  started (classic; , )"
        names = ", ".join(p.name if p.name.strip() else f"seat {i}"
                          for i, p in enumerate(e.players))
        named = e.rules.name if e.rules.name.strip() else NO_RULES_NAME  # was "( ; ana, bo)"
        text = (f"match {e.match_id if e.match_id.strip() else 'with no id'} started "
                f"({named}; {names})")
    elif isinstance(e, TotalsCarried):
        text = f"the match goes on from carried-over totals {', '.join(map(str, e.totals))}"
    elif isinstance(e, HandStarted):
        text = f"hand {e.hand} dealt by {who(e.dealer)}"
    elif isinstance(e, CardDrawn):
        hidden = seat is not None and e.seat != seat
        text = f"{who(e.seat)} drew {f'a {unit}' if hidden else cs((e.card,))}"
    elif isinstance(e, FirstDrawRejected):
        text = f"{who(e.seat)} rejected the first draw {cs((e.card,))}"
    elif isinstance(e, PileTaken):
        cards = f"{e.count} {unit}{'s' if e.count != 1 else ''}"
        text = f"{who(e.seat)} took the pile ({cards}, top {cs((e.top,))})"
    elif isinstance(e, MeldLaid):
        text = f"{who(e.seat)} laid {cs(e.cards)}"
    elif isinstance(e, CardsLaidOff):
        text = f"{who(e.seat)} laid off {cs(e.cards)} on meld {e.meld}"
    elif isinstance(e, OpeningRetracted):
        text = f"{who(e.seat)} took back the opening {cs(e.cards)}"
    elif isinstance(e, CardDiscarded):
        text = f"{who(e.seat)} discarded {cs((e.card,))}"
    elif isinstance(e, MortoTaken):
        how = "directly" if e.direct else "indirectly"
        text = f"{who(e.seat)} took the morto {how}"
    elif isinstance(e, WentOut):
        text = f"{who(e.seat)} went out"
    elif isinstance(e, HandEnded):
        why = "a player went out" if e.reason == "went_out" else stock_end(rules, unit)
        scores = f"; recorded scores {', '.join(map(str, e.scores))}" if e.scores else ""
        text = f"hand ended ({why}){scores}"
    elif isinstance(e, MatchEnded):
        text = "match ended" + (f"; winner side {e.winner}" if e.winner is not None else "")
    else:  # pragma: no cover - the union is closed
        text = type(e).__name__
    return f"seq {e.seq}: {text}"


# -- the table at one moment ------------------------------------------------------------------


class SeatHand(msgspec.Struct, frozen=True):
    """One seat's hand. ``cards`` is None when the viewing seat may not see it."""

    seat: int
    name: str
    side: int
    count: int
    cards: tuple[str, ...] | None


class MeldView(msgspec.Struct, frozen=True):
    id: int
    kind: str
    cards: tuple[str, ...]
    canastra: str | None  # canastra class badge, None below seven cards
    laid_by: int
    wild: str | None = None  # where its wild stands, in words ("2♠ as the 6"); None: no wild


MortoState = Literal["none", "waiting", "taken", "voided"]
"""A side's morto: ``none`` (the rules deal none, or no hand is dealt), ``waiting`` (not
taken), ``taken``, or ``voided``: taken indirectly, but an opponent went out (or, under the old
reading, the hand ended) before its taker played again, so it counts as not taken and the
side pays the morto penalty (RULES.md §7, §9)."""


class SideView(msgspec.Struct, frozen=True):
    side: int
    seats: tuple[int, ...]
    melds: tuple[MeldView, ...]
    morto: int  # cards still in the side's morto
    morto_taken: bool  # the side took its morto this hand (it may since be voided)
    opened: bool
    vulnerable: bool
    table_points: int  # points of the cards in the side's melds so far this hand
    total: int  # match score before the current hand
    morto_state: MortoState = "none"  # what the morto counts as in the score


class TableView(msgspec.Struct, frozen=True):
    """The table after event ``seq``, as printed by ``buraco-log replay``."""

    match_id: str
    rules: str
    seq: int
    phase: str
    hand: int
    dealer: int
    turn: int  # seat to move
    turn_name: str
    viewer: int | None  # the seat whose view this is; None: the referee's view (all cards)
    seats: tuple[SeatHand, ...]
    sides: tuple[SideView, ...]
    stock: int
    pile: tuple[str, ...]  # bottom first; the last is the top card
    hand_scores: tuple[tuple[int, ...], ...]  # recomputed score per side of each ended hand
    totals: tuple[int, ...]
    recent: tuple[str, ...]  # the last few events in words, oldest first


def table_view(state: State, *, seat: int | None = None, recent: Sequence[str] = ()) -> TableView:
    """The printable table of ``state``: everything, or only what ``seat`` could see."""
    if seat is not None:
        seat = position(seat, "seat")
    if seat is not None and not 0 <= seat < len(state.players):
        # the match has no such seat at any seq: no seq is named
        raise PositionError(f"no seat {seat} in a {len(state.players)}-player match")
    style = card_style(state.rules)
    points = state.rules.point_table() if state.rules is not None else [0] * 65
    mortos = morto_states(state)
    seats = tuple(
        SeatHand(
            seat=i, name=p.name, side=state.sides[i],
            count=len(state.hands[i]) if state.hands else 0,
            cards=(cards_text(state.hands[i], style) if state.hands else ())
            if seat is None or seat == i else None,
        )
        for i, p in enumerate(state.players)
    )
    sides = tuple(
        SideView(
            side=s,
            seats=tuple(i for i, x in enumerate(state.sides) if x == s),
            melds=tuple(
                MeldView(id=m.id, kind=m.kind, cards=cards_text(m.cards, style),
                         canastra=m.canastra, laid_by=m.laid_by,
                         wild=_wild_text(m.cards, state.rules, style))
                for m in (state.melds[s] if state.melds else ())
            ),
            morto=len(state.mortos[s]) if state.mortos else 0,
            morto_taken=bool(state.morto_taken and state.morto_taken[s]),
            morto_state=mortos[s],
            opened=bool(state.opened and state.opened[s]),
            vulnerable=bool(state.vulnerable and state.vulnerable[s]),
            table_points=sum(points[c] for m in (state.melds[s] if state.melds else ())
                             for c in m.cards),
            total=state.totals[s] if state.totals else 0,
        )
        for s in range(state.n_sides)
    )
    players = state.players
    return TableView(
        match_id=state.match_id,
        rules=state.rules.name if state.rules is not None else "",
        seq=state.seq,
        phase=state.phase,
        hand=state.hand,
        dealer=state.dealer,
        turn=state.turn,
        turn_name=players[state.turn].name if players else "",
        viewer=seat,
        seats=seats,
        sides=sides,
        stock=len(state.stock),
        pile=cards_text(state.pile, style),
        hand_scores=tuple(tuple(s.total for s in r.scores) for r in state.results),
        totals=state.totals,
        recent=tuple(recent),
    )


def morto_states(state: State) -> tuple[MortoState, ...]:
    """Each side's morto as the score counts it: a morto taken indirectly and voided by the
    end of the hand is ``voided``, not ``taken``, from the moment the hand is over (a player
    went out) until the next deal."""
    r = state.rules
    if r is None or not r.morto or state.hand < 0 or not state.morto_taken:
        none: MortoState = "none"
        return (none,) * state.n_sides
    scores = _hand_over_scores(state)
    return tuple(_morto_state(taken, scores is not None and bool(scores[side].morto_penalty))
                 for side, taken in enumerate(state.morto_taken))


def _morto_state(taken: bool, penalised: bool) -> MortoState:
    if not taken:
        return "waiting"
    return "voided" if penalised else "taken"  # taken, yet the score charges the penalty


def _hand_over_scores(state: State) -> tuple[SideScore, ...] | None:
    """The scores of a hand that is over: the reducer's once it ended, the scoring's while a
    player has gone out and the end is still to be recorded; None while it is being played."""
    if state.results and state.results[-1].hand == state.hand and state.phase in (
            "between", "decided", "over"):
        return state.results[-1].scores  # one source for the score and the morto's state
    if state.phase == "out" and state.rules is not None:
        return score_hand(state.rules, state.sides, state.n_sides, state.hands, state.melds,
                          state.morto_taken, state.morto_pending, state.went_out,
                          state.relancinho)
    return None


def _wild_text(cards: Sequence[Card], rules: Rules | None, style: Style) -> str | None:
    if rules is None:
        return None
    try:
        return describe_wild(cards, rules, style)  # in the style of the cards beside it
    except BuracoLogError:  # a tampered card code: the meld is shown, its wild is not read
        return None


# -- the timeline -----------------------------------------------------------------------------


class PastIllegalError(ReplayError):
    """A seq the log holds, asked for past its first illegal event: a finding about the log
    (exit 1). ``rule`` is that event's rule, so a JSON error names it as every error that
    names a rule does."""

    def __init__(self, message: str, *, seq: int, rule: str) -> None:
        super().__init__(message, seq=seq)
        self.rule = rule


def _positions(events: Sequence[AnyEvent]) -> tuple[dict[int, int], dict[int, list[int]]]:
    """Each hand's deal seq and each of its turns' first seq, as :class:`Timeline` finds them,
    of events not replayed (those after an illegal one, which may be anything): a hand dealt
    twice keeps its first deal."""
    deals: dict[int, int] = {}
    turns: dict[int, list[int]] = {}
    last_seat: int | None = None
    hand = -1
    for ev in events:
        if isinstance(ev, (CardDrawn, PileTaken)):
            if ev.seat != last_seat and hand in turns:
                turns[hand].append(ev.seq)
            last_seat = ev.seat
        elif isinstance(ev, HandStarted):
            if ev.hand in deals:
                hand = -1  # its draws are no turns of the first deal
                continue
            hand = ev.hand
            deals[hand] = ev.seq
            turns[hand] = []
            last_seat = None
        else:
            last_seat = getattr(ev, "seat", last_seat)
    return deals, turns


class PastDamageError(ReplayError):
    """A seq (or hand, or turn) past the events read from a log that failed its integrity check
    and was read anyway: the damaged part may hold it, so it is a finding about the log (exit
    1), as ``view`` says it, not one the log does not hold (2). ``rule``: the damage's."""

    def __init__(self, message: str, *, seq: int | None, rule: str) -> None:
        super().__init__(message, seq=seq)
        self.rule = rule


def past_damage(what: str, last: int, rule: str, seq: int | None = None) -> PastDamageError:
    """The error for ``what`` (``seq 200``, ``hand 5``) past the events read from a damaged
    log, the last of them ``last``."""
    read = f"seqs 0 to {last}" if last >= 0 else "no event"
    return PastDamageError(f"{what} is past the events read from the damaged log ({read}); the "
                           f"damage may hold it [{rule}]", seq=seq, rule=rule)


def _snapshot(rep: Replayer) -> tuple[State, int]:
    """The table now without its ended hands' results, and how many there are: the timeline
    adds them back from its final state on a jump. A frozen state copies every result, so
    snapshots every 64 events of a match of 100,000 hands held 64 bytes an event for each hand
    before it, quadratic: 551 MB for one million events, more than the memory for twenty."""
    table = rep.table
    results = table.results
    table.results = []
    try:
        return table.freeze(), len(results)
    finally:
        table.results = results


class Streamed(msgspec.Struct, frozen=True):
    """How a :class:`Timeline` reads a log it does not hold (an iterator, read once): memory
    bounded by the table, not by the number of events (a timeline of a list holds every event
    and a snapshot every 64: 3 GB at 20 million events). It keeps the table right after
    ``at`` (None: the end alone), the last ``recent`` legal events before it and before the
    end, and the turns of hand ``hand`` alone; no other seq can be asked of it. ``hand``
    (and ``turn``): the table :meth:`Timeline.seq_of` names, kept as the log is read."""

    at: int | None = None
    recent: int = RECENT
    hand: int | None = None  # keep the table after this hand's deal instead of ``at``'s
    turn: int | None = None  # ... or just before this turn of ``hand``


class Timeline:
    """A match replayed once, validated, with snapshots for fast jumps.

    Replay stops at the first illegal event (kept in :attr:`illegal`, with the state just
    before it in :attr:`before_illegal`); positions up to the event before it are reachable.
    A recorded score that differs from the recomputed one does not stop the timeline (the
    audit reports it): the recomputed score is what the state carries.

    ``damage``: the rule of the damage (``log.torn``, ``log.decode``, ...) when ``events`` were
    read anyway from a log that failed its integrity check; a position past them is then
    :class:`PastDamageError`, not :class:`PositionError`.
    """

    def __init__(self, events: Iterable[AnyEvent], *, snapshot_every: int = SNAPSHOT_EVERY,
                 damage: str | None = None, stream: Streamed | None = None) -> None:
        self.damage = damage
        self.stream = stream
        if stream is not None:  # read once, never held: see Streamed
            self.recorded: list[AnyEvent] = []
            self.events = self.recorded
            self._stream_init(events, stream)
            return
        self.recorded = list(events)  # every event given, legal or not
        # the legal prefix, the same list until an illegal event cuts it (a second copy of a
        # 20-million-event log was 160 MB of pointers)
        self.events = self.recorded
        self.count = len(self.recorded)
        self.every = max(1, position(snapshot_every, "snapshot spacing"))
        self.illegal: IllegalMoveError | None = None
        self.before_illegal: State | None = None
        self.score_mismatches: list[IllegalMoveError] = []
        self.deals: dict[int, int] = {}  # hand -> seq of its deal
        self.turn_starts: dict[int, list[int]] = {}  # hand -> seq of each turn's first event
        self.players: tuple[Player, ...] = ()
        self.rules: Rules | None = None
        rep = Replayer()  # its own snapshots would each copy every ended hand (see _snapshot)
        self._snapshots: dict[int, tuple[State, int]] = {}
        last_seat: int | None = None
        hand = -1
        watched, count = watch.active(), len(self.recorded)  # a bar: millions of events
        gap = watch.every(count, 1 << 14)
        for i, ev in enumerate(self.events):
            if watched and i % gap == 0 and i:
                watch.note("replaying", i, count, "events")
            refused = self._step(rep, ev)
            if refused is not None:
                self.illegal = refused
                self.before_illegal = rep.state()
                self.events = self.recorded[:i]
                break
            if ev.seq % self.every == 0:
                self._snapshots[ev.seq] = _snapshot(rep)
            if isinstance(ev, (CardDrawn, PileTaken)):  # the commonest events first
                if ev.seat != last_seat:
                    self.turn_starts[hand].append(ev.seq)
                last_seat = ev.seat
            elif isinstance(ev, MatchStarted):
                self.players = ev.players
                self.rules = ev.rules
            elif isinstance(ev, HandStarted):
                hand = ev.hand
                self.deals[hand] = ev.seq
                self.turn_starts[hand] = []
                last_seat = None
            else:
                last_seat = getattr(ev, "seat", last_seat)
        # the hands and turns the log holds, past an illegal event too (a position there is
        # a finding, as a seq there is)
        self._held = (self.deals, self.turn_starts) if self.illegal is None else \
            _positions(self.recorded)
        self.final = rep.state()
        self.last_seq = self.final.seq
        self.first: AnyEvent | None = self.recorded[0] if self.recorded else None
        self.checked = len(self.events)
        if watched:
            watch.note("replaying", count, count, "events")

    def _step(self, rep: Replayer, ev: AnyEvent) -> IllegalMoveError | None:
        """``rep`` stepped by ``ev``: a wrong recorded score is noted and the event applied as
        recorded (the table goes on, as every command reads it); any other refusal is returned,
        ``rep`` left before it."""
        try:
            try:
                rep.step(ev)
            except (IndexError, KeyError, TypeError, ValueError) as bad:
                # Values the engine cannot read (a card code that is no card, say).
                raise IllegalMoveError("event.invalid", f"unreadable event: {bad}",
                                       seq=ev.seq, seat=getattr(ev, "seat", None)) from None
        except IllegalMoveError as exc:
            if exc.rule == "score.mismatch" and isinstance(ev, HandEnded | MatchEnded):
                self.score_mismatches.append(exc)
                rep.apply(ev)
                return None
            return exc
        return None

    def _stream_init(self, events: Iterable[AnyEvent], stream: Streamed) -> None:
        """Replay ``events`` once, holding none of them: the state right after ``stream.at``
        and the final one, the last ``stream.recent`` legal events before each, each hand's
        deal and the turns of ``stream.turns_of``. Past an illegal event the log is read on
        (its last seq, its hands), as the list's timeline reads it."""
        self.every = 1
        self.illegal = None
        self.before_illegal = None
        self.score_mismatches = []
        self.players = ()
        self.rules = None
        self._snapshots = {}
        self.count = 0
        self._last_recorded = -1
        self._tail: deque[AnyEvent] = deque(maxlen=max(0, stream.recent))
        self._kept: tuple[State, tuple[AnyEvent, ...]] | None = None
        deals: dict[int, int] = {}
        turns: dict[int, list[int]] = {}
        last_seat: int | None = None
        hand = -1
        rep = Replayer()
        legal = True
        checked = 0
        self.first = None
        for ev in events:
            if not self.count:
                self.first = ev
            self.count += 1
            self._last_recorded = max(self._last_recorded, ev.seq)
            # hands and turns as _positions finds them, of every event (past an illegal one
            # too); the turns of one hand only: a list of every turn of 20 million events
            # was 360 MB
            turn_begins = False
            if isinstance(ev, (CardDrawn, PileTaken)):
                if ev.seat != last_seat and hand in turns:
                    turns[hand].append(ev.seq)
                    turn_begins = len(turns[hand]) - 1 == stream.turn
                last_seat = ev.seat
            elif isinstance(ev, HandStarted):
                if ev.hand in deals:
                    hand = -1
                else:
                    hand = ev.hand
                    deals[hand] = ev.seq
                    if hand == stream.hand:
                        turns[hand] = []
                    last_seat = None
            else:
                last_seat = getattr(ev, "seat", last_seat)
            if not legal:
                continue
            if turn_begins:  # the table just before the turn asked for
                self._kept = (rep.state(), tuple(self._tail))
            refused = self._step(rep, ev)
            if refused is not None:
                self.illegal = refused
                self.before_illegal = rep.state()
                legal = False
                continue
            checked += 1
            self._tail.append(ev)
            if isinstance(ev, MatchStarted):
                self.players = ev.players
                self.rules = ev.rules
            if ev.seq == stream.at or (stream.turn is None and hand == stream.hand
                                       and isinstance(ev, HandStarted)):
                self._kept = (rep.state(), tuple(self._tail))
        self.deals = deals
        self.turn_starts = turns
        self._held = (deals, turns)
        self.checked = checked
        self.final = rep.state()
        self.last_seq = self.final.seq

    def event(self, seq: int) -> AnyEvent | None:
        """The legal event ``seq``, if this timeline holds it (a streamed one holds the few
        before the seq it kept and the end)."""
        if self.stream is None:
            return self.events[seq] if 0 <= seq < len(self.events) else None
        held = list(self._tail) + list(self._kept[1] if self._kept is not None else ())
        return next((e for e in held if e.seq == seq), None)

    def _streamed_at(self, seq: int) -> tuple[State, Sequence[AnyEvent]]:
        """A streamed timeline's state after ``seq`` and the legal events up to it that it
        holds: the end's, or the seq it was told to keep."""
        if seq == self.last_seq:
            return self.final, self._tail
        if self._kept is not None and self._kept[0].seq == seq:
            return self._kept
        if seq == -1:
            return State(), ()
        raise ValueError(f"seq {seq}: a streamed timeline keeps only the table it was told "
                         "to keep and the end")

    @property
    def style(self) -> Style:
        return card_style(self.rules)

    def state_at(self, seq: int) -> State:
        """The state right after event ``seq`` (-1: before the first event)."""
        seq = self.reachable(seq)
        if self.stream is not None:
            return self._streamed_at(seq)[0]
        if seq == self.last_seq:
            return self.final
        if seq == -1:
            return State()
        base = (seq // self.every) * self.every
        kept = self._snapshots.get(base)
        start = None if kept is None else msgspec.structs.replace(
            kept[0], results=self.final.results[:kept[1]])
        rep = Replayer(start) if start is not None else Replayer()
        first = base + 1 if start is not None else 0
        for ev in self.events[first : seq + 1]:
            rep.apply(ev)
        return rep.state()

    def reachable(self, seq: object) -> int:
        """``seq`` when the table after it is known (-1: before the first event); else the
        caller asked for a seq the log does not hold (:class:`PositionError`, exit 2, whatever
        else the log holds), or one it holds past its first illegal event
        (:class:`PastIllegalError`: a finding about the log, exit 1), or one past the events
        read from a damaged log (:class:`PastDamageError`, exit 1)."""
        seq = position(seq, "seq")
        if not -1 <= seq <= self.last_seq:
            if self.illegal is not None and self.last_seq < seq <= self.last_recorded:
                raise PastIllegalError(self._beyond(seq), seq=seq, rule=self.illegal.rule)
            if self.damage is not None and seq > self.last_recorded:
                raise past_damage(f"seq {seq}", self.last_recorded, self.damage, seq)
            raise PositionError(self._beyond(seq), seq=seq)
        return seq

    @property
    def last_recorded(self) -> int:
        """The highest seq the log holds, legal or not (-1: no event)."""
        if self.stream is not None:
            return self._last_recorded
        return max((e.seq for e in self.recorded), default=-1)

    def _beyond(self, seq: int) -> str:
        if self.illegal is not None and self.last_seq < seq <= self.last_recorded:
            what = (f"seq {seq} is the first illegal event [{self.illegal.rule}]"
                    if seq == self.illegal.seq else  # not "past ... seq 23" of seq 23 itself
                    f"seq {seq} is past the first illegal event, seq {self.illegal.seq} "
                    f"[{self.illegal.rule}]")
            return f"{what}: the table is known up to seq {self.last_seq}"
        if self.last_recorded < 0:  # not "seqs 0 to -1"
            return f"the log has no seq {seq}: it holds no events"
        return f"the log has no seq {seq} (seqs 0 to {self.last_recorded})"

    def hands_known(self) -> str:
        """The hands the log holds, in words (``hands 0 to 3``, ``no hands``)."""
        deals = self._held[0]
        return f"hands 0 to {max(deals)}" if deals else "no hands"

    def seq_of(self, hand: int, turn: int | None = None) -> int:
        """The seq right after the deal of ``hand`` or, with ``turn``, just before that turn.
        A hand or turn the log holds past its first illegal event is
        :class:`PastIllegalError` (exit 1), as a seq there is, not one it does not hold."""
        hand = position(hand, "hand")
        deals, turns = self._held
        if hand not in deals:
            if self.damage is not None and hand > max(deals, default=-1):
                raise past_damage(f"hand {hand}", self.last_recorded, self.damage)
            raise PositionError(f"the log has no hand {hand} ({self.hands_known()})")
        seq, where = deals[hand], f"hand {hand}"
        if turn is not None:
            turn = position(turn, "turn")
            starts = turns[hand]
            if not 0 <= turn < len(starts):
                if self.damage is not None and turn >= len(starts) and hand == max(deals):
                    raise past_damage(f"hand {hand} turn {turn}", self.last_recorded,
                                      self.damage)
                known = f"turns 0 to {len(starts) - 1}" if starts else "no turn begun"
                raise PositionError(f"hand {hand} has no turn {turn} ({known})")
            seq, where = starts[turn] - 1, f"hand {hand} turn {turn}"
        if seq > self.last_seq and self.illegal is not None:
            raise PastIllegalError(f"{where}: {self._beyond(seq)}", seq=seq,
                                   rule=self.illegal.rule)
        return seq

    def recent(self, seq: int, count: int = RECENT, seat: int | None = None) -> tuple[str, ...]:
        """The last ``count`` events up to ``seq`` in words (as ``seat`` may know them)."""
        seq = self.reachable(seq)  # a negative seq sliced from the end of the list
        count = position(count, "count of recent events")
        if count < 0:
            raise PositionError(f"a count of recent events is 0 or more, not {count}")
        if seat is not None and not 0 <= position(seat, "seat") < len(self.players):
            raise PositionError(f"no seat {seat} in a {len(self.players)}-player match")
        lo = max(0, seq - count + 1)
        held = self.events[lo : seq + 1] if self.stream is None else [
            e for e in self._streamed_at(seq)[1] if e.seq >= lo]
        return tuple(describe_event(e, self.players, self.style, seat, self.rules)
                     for e in held)

    def view(self, seq: int, *, seat: int | None = None, recent: int = RECENT) -> TableView:
        """The table after ``seq`` (for ``seat``, or the referee's full view)."""
        return table_view(self.state_at(seq), seat=seat,
                          recent=self.recent(seq, recent, seat))
