"""One log in, rows out: check a match log fully and flatten it into the archive's tables.

The check is one validating replay (:meth:`Replayer.step`), which covers legality and every
recorded score and total; integrity comes from reading the log and deal provenance from
:mod:`buraco_log.dealer`. A log passes when the audit (:func:`buraco_log.audit.audit_events`)
would find nothing: for the rare log that fails, the full audit verdict is computed and stored
with the error, so the archive explains every rejection the way ``buraco-log audit`` does.
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from typing import Any

import msgspec
import pyarrow as pa  # type: ignore[import-untyped]

from buraco_log import audit
from buraco_log.errors import IllegalMoveError, ReplayError
from buraco_log.events import (
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
    WentOut,
    tag_of,
)
from buraco_log.melds import canastra_bonus
from buraco_log.reducer import Replayer
from buraco_log.state import Meld

from .schema import CANASTRA_CLASSES, EVENTS, HANDS, KINDS, MATCHES, MELDS, PLAYERS

KIND_CODE: dict[str, int] = {k: i for i, k in enumerate(KINDS)}
_KIND_VALUES = pa.array(KINDS, pa.string())
_SAFE = re.compile(r"[^A-Za-z0-9_.+-]")


def game_id_of(digest: str) -> int:
    """The 63-bit game id of a head digest (non-negative, so it sorts the same everywhere)."""
    return int(digest[:16], 16) >> 1


def partition_value(text: str) -> str:
    """A Hive partition value safe in any file system: other characters become ``_``."""
    return _SAFE.sub("_", text) or "_"


def month_of(at_ms: int | None) -> str:
    if at_ms is None:
        return "unknown"
    return datetime.fromtimestamp(at_ms / 1000, UTC).strftime("%Y-%m")


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


class Rows:
    """Column lists for the five per-match tables of one partition, filled match by match."""

    def __init__(self) -> None:
        self.matches: dict[str, list[Any]] = {f.name: [] for f in MATCHES}
        self.hands: dict[str, list[Any]] = {f.name: [] for f in HANDS}
        self.events: dict[str, list[Any]] = {f.name: [] for f in EVENTS}
        self.melds: dict[str, list[Any]] = {f.name: [] for f in MELDS}
        self.players: dict[str, list[Any]] = {f.name: [] for f in PLAYERS}
        self.n_events = 0
        self.n_matches = 0

    def tables(self) -> dict[str, pa.Table]:
        ev = dict(self.events)
        kind = pa.DictionaryArray.from_arrays(pa.array(ev.pop("kind"), pa.int8()), _KIND_VALUES)
        arrays = {**{k: pa.array(v, EVENTS.field(k).type) for k, v in ev.items()}, "kind": kind}
        out = {"events": pa.Table.from_arrays([arrays[f.name] for f in EVENTS], schema=EVENTS)}
        for name, schema in (("matches", MATCHES), ("hands", HANDS), ("melds", MELDS),
                             ("players", PLAYERS)):
            cols: dict[str, list[Any]] = getattr(self, name)
            out[name] = pa.Table.from_pydict(cols, schema=schema)
        return out


def error_row(path: str, sha: str, size: int | None, code: str, rule: str, message: str, *,
              seq: int | None = None, match_id: str | None = None, digest: str | None = None,
              verdict: audit.Verdict | None = None) -> dict[str, Any]:
    return {
        "file_sha256": sha, "source_path": path, "file_bytes": size, "code": code, "rule": rule,
        "message": message, "seq": seq, "match_id": match_id, "digest": digest,
        "verdict_json": msgspec.json.encode(verdict).decode() if verdict is not None else None,
    }


def _reject_with_audit(path: str, sha: str, size: int, events: list[AnyEvent],
                       integrity: audit.Integrity, fallback: tuple[str, str, str, int | None]
                       ) -> Rejected:
    """The audit's verdict for a log the fast pass refused, as an errors-table row."""
    try:
        verdict: audit.Verdict | None = audit.audit_events(events, integrity, path)
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


def check_and_flatten(path: str, sha: str, size: int, rows_for: Any,
                      seen: set[str] | None = None) -> tuple[str, int, int, bool]:
    """Check one log; on success append its rows to ``rows_for(preset, month)``.

    Returns ``(digest, game_id, events, fresh)``; raises :class:`Rejected` with the error row.
    A log whose digest is in ``seen`` (the same match, already flattened into these rows) is
    not replayed again and adds no rows: ``fresh`` is False.
    """
    events, integrity = audit.read_log(path)
    if integrity.status not in ("sealed", "unsealed"):
        raise _reject_with_audit(path, sha, size, events, integrity,
                                 ("integrity", f"log.{integrity.kind}",
                                  integrity.message or "damaged log", integrity.seq))
    if not events or not isinstance(events[0], MatchStarted):
        raise _reject_with_audit(path, sha, size, events, integrity,
                                 ("legality", "match.not_started",
                                  "the log does not open with MatchStarted", 0))
    start = events[0]
    digest = integrity.head
    gid = game_id_of(digest)
    if seen is not None and digest in seen:
        return digest, gid, len(events), False
    try:
        flat = _replay(events, gid)
    except (IllegalMoveError, ReplayError, IndexError, KeyError, TypeError, ValueError) as exc:
        seq = getattr(exc, "seq", None)
        rule = getattr(exc, "rule", "event.invalid")
        raise _reject_with_audit(path, sha, size, events, integrity,
                                 ("legality", rule, str(exc), seq)) from None
    if flat is None:
        raise Rejected(error_row(
            path, sha, size, "incomplete", "archive.incomplete",
            f"the log ends at seq {events[-1].seq} before MatchEnded: only finished matches "
            "are archived", seq=events[-1].seq, match_id=start.match_id, digest=digest))
    prov = audit.provenance(events)  # the same deal check the audit makes
    if prov.findings:
        raise _reject_with_audit(path, sha, size, events, integrity,
                                 ("provenance", prov.findings[0].rule,
                                  prov.findings[0].message, prov.findings[0].seq))
    rows: Rows = rows_for(partition_value(start.rules.name), month_of(start.at))
    flat.emit(rows, start, events, digest, sha, size, path, integrity, prov.status)
    if seen is not None:
        seen.add(digest)
    return digest, gid, len(events), True


class _Flat:
    """What one validating replay collected, before it is appended to a partition's rows."""

    def __init__(self, gid: int) -> None:
        self.gid = gid
        self.seq: list[int] = []
        self.hand: list[int] = []
        self.kind: list[int] = []
        self.seat: list[int | None] = []
        self.card: list[int | None] = []
        self.cards: list[tuple[int, ...] | None] = []
        self.meld: list[int | None] = []
        self.count: list[int | None] = []
        self.direct: list[bool | None] = []
        self.stock: list[int] = []
        self.pile: list[int] = []
        self.hand_rows: list[dict[str, Any]] = []
        self.meld_rows: list[tuple[int, Meld]] = []
        self.first_player = 0
        self.winner = 0
        self.totals: tuple[int, ...] = ()
        self.sides: tuple[int, ...] = ()
        self.n_sides = 0
        self.hands = 0

    def emit(self, rows: Rows, start: MatchStarted, events: list[AnyEvent], digest: str,
             sha: str, size: int, path: str, integrity: audit.Integrity, prov: str) -> None:
        gid = self.gid
        n = len(self.seq)
        e = rows.events
        e["game_id"].extend([gid] * n)
        for name in ("seq", "hand", "kind", "seat", "card", "cards", "meld", "count", "direct",
                     "stock", "pile"):
            e[name].extend(getattr(self, name))
        h = rows.hands
        for row in self.hand_rows:
            for k, v in row.items():
                h[k].append(v)
        rules = start.rules
        points = rules.point_table()
        m = rows.melds
        for hand, meld in self.meld_rows:
            cls = meld.canastra
            for k, v in (("game_id", gid), ("hand", hand), ("side", meld.side),
                         ("meld", meld.id), ("kind", meld.kind), ("length", len(meld.cards)),
                         ("canastra", cls), ("laid_by", meld.laid_by),
                         ("points", sum(points[c] for c in meld.cards)),
                         ("bonus", canastra_bonus(cls, rules)),  # type: ignore[arg-type]
                         ("cards", meld.cards)):
                m[k].append(v)
        p = rows.players
        for seat, pl in enumerate(start.players):
            side = self.sides[seat]
            for k, v in (("game_id", gid), ("seat", seat), ("side", side), ("name", pl.name),
                         ("player_id", pl.id), ("player", pl.id or pl.name),
                         ("won", side == self.winner), ("total", self.totals[side]),
                         ("first", seat == self.first_player),
                         ("n_players", len(start.players))):
                p[k].append(v)
        end = events[-1]
        others = [t for s, t in enumerate(self.totals) if s != self.winner]
        mrow: dict[str, Any] = {
            "game_id": gid, "match_id": start.match_id, "digest": digest, "file_sha256": sha,
            "source_path": path, "file_bytes": size, "log_format": integrity.format,
            "rules_name": rules.name, "rules_json": msgspec.json.encode(rules).decode(),
            "n_players": len(start.players), "n_sides": self.n_sides,
            "players": [pl.name for pl in start.players], "first_dealer": start.first_dealer,
            "first_player": self.first_player, "winner_side": self.winner,
            "totals": list(self.totals),
            "margin": self.totals[self.winner] - max(others) if others else 0,
            "hands": self.hands, "events": len(events), "started_at": start.at,
            "ended_at": end.at, "verdict": "ok", "integrity": integrity.status,
            "provenance": prov, "generator": start.metadata.get("generator"),
            "ingested_at": 0, "batch": "",  # filled at commit
        }
        for k, v in mrow.items():
            rows.matches[k].append(v)
        rows.n_events += n
        rows.n_matches += 1


_CARD1 = (CardDrawn, CardDiscarded, FirstDrawRejected)


def _replay(events: list[AnyEvent], gid: int) -> _Flat | None:
    """Validate every event and collect the rows; None when the match never finished."""
    r = Replayer()
    t = r.table  # read-only: per-event stock/pile sizes, hand, turn
    f = _Flat(gid)
    seq_l, hand_l, kind_l, seat_l = f.seq, f.hand, f.kind, f.seat
    card_l, cards_l, meld_l, count_l = f.card, f.cards, f.meld, f.count
    direct_l, stock_l, pile_l = f.direct, f.stock, f.pile
    hand_start = 0
    morto: dict[int, tuple[int, int, bool]] = {}
    pickups: dict[int, list[int]] = {}
    first_player: int | None = None
    for ev in events:
        tp = type(ev)
        seat: int | None = None
        card: int | None = None
        cards: tuple[int, ...] | None = None
        meld: int | None = None
        count: int | None = None
        direct: bool | None = None
        if tp in _CARD1:
            r.step(ev)
            seat, card = ev.seat, ev.card  # type: ignore[union-attr]
        elif tp is PileTaken:
            r.step(ev)
            assert isinstance(ev, PileTaken)
            seat, card, count = ev.seat, ev.top, ev.count
            pickups.setdefault(t.sides[seat], []).append(ev.count)
        elif tp is MeldLaid:
            r.step(ev)
            assert isinstance(ev, MeldLaid)
            seat, cards = ev.seat, ev.cards
            meld = t.melds[t.sides[seat]][-1].id
        elif tp is CardsLaidOff:
            r.step(ev)
            assert isinstance(ev, CardsLaidOff)
            seat, cards, meld = ev.seat, ev.cards, ev.meld
        elif tp is OpeningRetracted:
            r.step(ev)
            assert isinstance(ev, OpeningRetracted)
            seat, cards = ev.seat, ev.cards
        elif tp is MortoTaken:
            assert isinstance(ev, MortoTaken)
            turn = t.turns
            r.step(ev)
            seat, direct = ev.seat, ev.direct
            count = len(t.hands[seat])
            morto[t.sides[seat]] = (ev.seq, turn, ev.direct)
        elif tp is WentOut:
            r.step(ev)
            seat = ev.seat  # type: ignore[union-attr]
        elif tp is HandStarted:
            r.step(ev)
            assert isinstance(ev, HandStarted)
            card = ev.upcard
            hand_start = ev.seq
            morto = {}
            pickups = {}
            if first_player is None:
                first_player = t.turn
        elif tp is HandEnded:
            final = [list(side) for side in t.melds]  # melds are reset for the next hand
            r.step(ev)
            _hand_rows(f, t, final, hand_start, morto, pickups)
        else:
            r.step(ev)
        seq_l.append(ev.seq)
        hand_l.append(t.hand)
        kind_l.append(KIND_CODE[tag_of(ev)])
        seat_l.append(seat)
        card_l.append(card)
        cards_l.append(cards)
        meld_l.append(meld)
        count_l.append(count)
        direct_l.append(direct)
        stock_l.append(len(t.stock))
        pile_l.append(len(t.pile))
    if t.phase != "over" or not isinstance(events[-1], MatchEnded):
        return None
    f.first_player = first_player or 0
    f.winner = t.winner if t.winner is not None else -1
    f.totals = tuple(t.totals)
    f.sides = tuple(t.sides)
    f.n_sides = t.n_sides
    f.hands = len(t.results)
    return f


def _hand_rows(f: _Flat, t: Any, final: list[list[Meld]], start_seq: int,
               morto: dict[int, tuple[int, int, bool]], pickups: dict[int, list[int]]) -> None:
    res = t.results[-1]
    first_morto = min((m[0] for m in morto.values()), default=None)
    best = max(s.total for s in res.scores)
    went_side = t.sides[res.went_out] if res.went_out is not None else None
    for s in res.scores:
        mt = morto.get(s.side)
        row: dict[str, Any] = {
            "game_id": f.gid, "hand": res.hand, "side": s.side, "dealer": res.dealer,
            "reason": res.reason, "went_out_seat": res.went_out,
            "went_out": went_side == s.side, "turns": res.turns,
            "events": res.end_seq - start_seq + 1, "start_seq": start_seq,
            "end_seq": res.end_seq, "table_points": s.table_points,
            "canastra_bonus": s.canastra_bonus, "going_out": s.going_out,
            "relancinho": s.relancinho, "hand_penalty": s.hand_penalty,
            "morto_penalty": s.morto_penalty, "total": s.total,
            "morto_seq": mt[0] if mt else None, "morto_turn": mt[1] if mt else None,
            "morto_direct": mt[2] if mt else None, "hand_won": s.total == best,
            "first_to_morto": mt is not None and mt[0] == first_morto,
            "pile_pickups": pickups.get(s.side, []),
        }
        for c in CANASTRA_CLASSES:
            row[f"canastras_{c}"] = s.canastras.get(c, 0)
        f.hand_rows.append(row)
    for side in final:
        for m in side:
            f.meld_rows.append((res.hand, m))


def check_file(path: str, sha: str, size: int, rows_for: Any, seen: set[str] | None = None
               ) -> tuple[str, int, int, bool] | dict[str, Any]:
    """Check and flatten one file: ``(digest, game_id, events, fresh)``, or its error row."""
    try:
        return check_and_flatten(path, sha, size, rows_for, seen)
    except Rejected as rej:
        return rej.row
    except Exception as exc:  # a defect must not stop the run: record it with the file
        return error_row(path, sha, size, "internal", "archive.internal",
                         f"{type(exc).__name__}: {exc}")
