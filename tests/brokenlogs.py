"""Test helpers: legal match logs and deliberately broken ones, written with the log module."""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

import msgspec

from buraco_log import log
from buraco_log.events import AnyEvent, CardDiscarded, HandEnded, decode_many, encode_many
from buraco_log.reducer import Replayer
from tests.play import random_match

HEADER = 20
SEG_HEAD = 16  # length, count, first_seq
DIGEST = 32
TAIL = 8  # payload crc, header crc


def match(preset: str = "biriba", players: int = 4, seed: int = 1,
          max_hands: int = 2) -> list[AnyEvent]:
    return random_match(preset, players, seed, max_hands=max_hands)


def write(path: Path | str, events: list[AnyEvent], *, sealed: bool = True,
          segment: int = 0) -> Path:
    """Write ``events`` unvalidated; ``segment`` > 0 puts that many events in each record."""
    path = Path(path)
    if segment:
        with log.Writer(path, sealed=sealed, validate=False, batched=True,
                        batch_events=segment) as w:
            w.append_many(events)
    else:
        log.write_log(path, events, sealed=sealed, validate=False)
    return path


def with_illegal_discard(events: list[AnyEvent]) -> tuple[list[AnyEvent], int]:
    """The first discard after seq 20 names a card the player does not hold."""
    rep = Replayer()
    out = list(events)
    for i, ev in enumerate(events):
        if isinstance(ev, CardDiscarded) and ev.seq > 20:
            hand = rep.state().hands[ev.seat]
            card = next(c for c in range(1, 64) if (c & 15) and (c & 15) <= 13 and c not in hand)
            out[i] = msgspec.structs.replace(ev, card=card)
            return out, ev.seq
        rep.step(ev)
    raise AssertionError("no discard to break")


def with_wrong_score(events: list[AnyEvent], delta: int = 100) -> tuple[list[AnyEvent], int]:
    """The first hand's recorded score of side 0 is off by ``delta``."""
    out = list(events)
    for i, ev in enumerate(events):
        if isinstance(ev, HandEnded) and ev.scores is not None:
            scores = (ev.scores[0] + delta, *ev.scores[1:])
            out[i] = msgspec.structs.replace(ev, scores=scores)
            return out, ev.seq
    raise AssertionError("no hand end with scores")


def segment_offsets(path: Path | str) -> list[tuple[int, int, int]]:
    """(offset, header size, payload length) of each record of a log."""
    data = Path(path).read_bytes()
    sealed = struct.unpack_from("<I", data, 12)[0] & 1
    hsize = SEG_HEAD + (DIGEST if sealed else 0) + TAIL
    out = []
    off = HEADER
    while off < len(data):
        length = struct.unpack_from("<I", data, off)[0]
        out.append((off, hsize, length))
        off += hsize + length
    return out


def tamper(path: Path | str, record: int) -> int:
    """Change one discarded card inside ``record`` and fix its checksums (not the chain):
    what a careful forger does. Returns the record's byte offset."""
    p = Path(path)
    data = bytearray(p.read_bytes())
    off, hsize, length = segment_offsets(p)[record]
    start = off + hsize
    events = decode_many(bytes(data[start : start + length]))
    i = next(i for i, e in enumerate(events) if isinstance(e, CardDiscarded))
    ev = events[i]
    assert isinstance(ev, CardDiscarded)
    events[i] = msgspec.structs.replace(ev, card=ev.card ^ 1 if ev.card ^ 1 else 2)
    payload = encode_many(events)
    assert len(payload) == length
    data[start : start + length] = payload
    head = bytearray(data[off : start])
    head[-8:-4] = zlib.crc32(payload).to_bytes(4, "little")
    head[-4:] = zlib.crc32(bytes(head[:-4])).to_bytes(4, "little")
    data[off:start] = head
    p.write_bytes(bytes(data))
    return off


def tear(path: Path | str, cut: int = 7) -> int:
    """Cut the last ``cut`` bytes (a crash mid-append). Returns the torn record's offset."""
    p = Path(path)
    last = segment_offsets(p)[-1][0]
    size = os.path.getsize(p)
    with open(p, "r+b") as f:
        f.truncate(size - cut)
    return last


def fair_match(preset: str = "thirteen-quick", players: int = 2, seed: int = 1,
               *, max_events: int = 20000) -> list[AnyEvent]:
    """A complete match dealt by the fairness protocol (commitment, reveal), played by a
    random player who lays cards down whenever it can, so hands end by going out."""
    import random

    from buraco_log.dealer import FairDealer
    from buraco_log.events import (
        CardDrawn,
        CardsLaidOff,
        MatchEnded,
        MatchStarted,
        MeldLaid,
        MortoTaken,
        Player,
        WentOut,
    )
    from buraco_log.moves import legal_moves
    from buraco_log.rules import preset as get_preset
    from buraco_log.rules import side_of

    rules = get_preset(preset)
    rng = random.Random(seed)
    dealer = FairDealer(f"server-{seed}", (f"p0-{seed}", f"p1-{seed}"))
    start = MatchStarted(
        f"fair-{preset}-{seed}", rules,
        tuple(Player(n) for n in ("ana", "bruno", "carla", "davi")[:players]),
        tuple(side_of(s, players) for s in range(players)),
        commitment=dealer.commitment, player_seeds=dealer.player_seeds, seq=0,
    )
    events: list[AnyEvent] = [start]
    rep = Replayer()
    rep.step(start)
    while len(events) < max_events:
        st = rep.state()
        if st.phase == "over":
            break
        ev: AnyEvent
        if st.phase == "between":
            hand = len(st.results)
            ev = dealer.deal(rules, players, hand, (st.first_dealer + hand) % players,
                             seq=st.seq + 1)
        else:
            moves = legal_moves(st)
            if isinstance(moves[0], MatchEnded):
                ev = msgspec.structs.replace(moves[0], server_seed=dealer.server_seed)
            else:
                laying = [m for m in moves
                          if isinstance(m, MeldLaid | CardsLaidOff | MortoTaken | WentOut)]
                if st.pile_top is not None:  # like the bots, lay a must-use-top card first
                    laying = [m for m in laying if st.pile_top in getattr(m, "cards", ())]
                draws = [m for m in moves if isinstance(m, CardDrawn)]
                if laying:
                    ev = rng.choice(laying)
                elif draws and rng.random() < 0.7:
                    ev = draws[0]
                else:
                    ev = rng.choice(moves)
        rep.step(ev)
        events.append(ev)
    return events
