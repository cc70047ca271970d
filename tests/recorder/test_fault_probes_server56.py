"""Fault probes of the example server (examples/server), round 56: one slow table must not slow
the others.

The recorder reads a table's log at its first use, replaying it whole, and an ended table's at
each use (it keeps no ended table). The server did that in its event loop: a client asking
again and again of a sealed log of 43,000 events (65 ms a read) held every other table's moves,
50 players' p50 going from 16 ms to 5.1 s (p99 12 s); a damaged long log, read to its damage
each time, the same; players resuming long matches after a restart held the others while each
was read. The server now reads logs on a few threads (``--loaders``), one request at a time a
connection, a table's requests in the order they came. Also: one connection could start tables
without bound, each held in the recorder's memory until it ends; now at most ``--max-tables``
(10,000) at a time, one more refused in one line naming the flag.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import statistics
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from buraco_log import events as ev
from buraco_log import log
from buraco_log.rules import preset
from buraco_log.simulate import simulate_match
from tests.recorder.serverclient import frame, sources, start, stop

_LEN = struct.Struct(">I")


@functools.cache
def _long_match() -> list[ev.AnyEvent]:
    """A classic match played to a target of 100,000 points: 42,944 events (3.5 s to play)."""
    rules = msgspec.structs.replace(preset("classic"), target_score=100_000)
    return simulate_match(rules, 2, seed="long56", index=0, max_hands=10_000)


def _renamed(events: list[ev.AnyEvent], match_id: str) -> list[ev.AnyEvent]:
    return [msgspec.structs.replace(events[0], match_id=match_id), *events[1:]]


async def _receive(reader: asyncio.StreamReader) -> list[Any]:
    (size,) = _LEN.unpack(await reader.readexactly(4))
    reply: list[Any] = msgspec.msgpack.decode(await reader.readexactly(size))
    return reply


def _play(table: str, event: ev.AnyEvent) -> bytes:
    return frame(["play", table, msgspec.Raw(ev.encode(event))])


async def _player(port: int, table: str, events: list[ev.AnyEvent],
                  waits: list[float]) -> None:
    """Play ``events`` one at a time, each only once the last one is acknowledged."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    for event in events:
        sent = time.perf_counter()
        writer.write(_play(table, event))
        reply = await _receive(reader)
        waits.append(time.perf_counter() - sent)
        assert reply == ["ok", table, event.seq], reply
    writer.close()


async def _asker(port: int, table: str, done: asyncio.Event, asked: list[int]) -> None:
    """Ask ``table``'s next seq over and over, 16 requests at a time, until ``done``."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while not done.is_set():
            writer.write(frame(["next", table, None]) * 16)
            for _ in range(16):
                await _receive(reader)
                asked[0] += 1
    finally:
        writer.close()


async def _resume(port: int, table: str, event: ev.AnyEvent) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(_play(table, event))
    assert await _receive(reader) == ["ok", table, event.seq]
    writer.close()


def _figures(waits: list[float]) -> dict[str, float]:
    q = statistics.quantiles(waits, n=100)
    return {"moves": len(waits), "p50_ms": round(q[49] * 1e3, 1),
            "p99_ms": round(q[98] * 1e3, 1), "max_ms": round(max(waits) * 1e3, 1)}


async def _round(port: int, players: dict[str, list[ev.AnyEvent]], *, ask: str = "",
                 resume: dict[str, ev.AnyEvent] | None = None) -> dict[str, float]:
    """The players' waits while (``ask``) a client asks of one table over and over, or
    (``resume``) clients each play one move of another table, once 0.2 s in."""
    waits: list[float] = []
    done, asked = asyncio.Event(), [0]
    playing = [asyncio.create_task(_player(port, t, events, waits))
               for t, events in players.items()]
    others = []
    if ask:
        others.append(asyncio.create_task(_asker(port, ask, done, asked)))
    if resume:
        await asyncio.sleep(0.2)
        others += [asyncio.create_task(_resume(port, t, e)) for t, e in resume.items()]
    await asyncio.gather(*playing)
    done.set()
    await asyncio.gather(*others)
    return {**_figures(waits), "asked": asked[0]}


@pytest.mark.slow
def test_fifty_players_wait_no_longer_while_long_logs_are_read(tmp_path: Path) -> None:
    """50 players, each on its own table, one move at a time; meanwhile a client asks again and
    again of a sealed log of 42,944 events, of a damaged one, and 8 clients resume long
    matches (20,000 events each) at once. The players' p99 stays within a few ms of theirs
    alone (before: 5.1 s p50, 12 s p99 while the sealed log was asked of)."""
    long = _long_match()
    log.write_log(tmp_path / "sealed.blog", _renamed(long, "sealed"), sealed=True, validate=False)
    damaged = tmp_path / "damaged.blog"
    log.write_log(damaged, _renamed(long, "damaged"), sealed=True, validate=False)
    data = bytearray(damaged.read_bytes())
    data[-200] ^= 0xFF  # a flipped bit near the end: read whole up to it each time
    damaged.write_bytes(bytes(data))
    resume = {}
    for i in range(8):
        log.write_log(tmp_path / f"long{i}.blog", _renamed(long, f"long{i}")[:20_000],
                      sealed=False, validate=False)
        resume[f"long{i}"] = long[20_000]
    players = sources(50, "fair56", "p")
    # SERVER56_FLAGS: the server's flags to compare (e.g. "--read-rest 0 --loaders 4")
    server, port = start(tmp_path, *os.environ.get("SERVER56_FLAGS", "").split())
    try:
        alone = asyncio.run(_round(port, {t: e[:120] for t, e in players.items()}))
        sealed = asyncio.run(_round(port, {t: e[120:240] for t, e in players.items()},
                                    ask="sealed"))
        broken = asyncio.run(_round(port, {t: e[240:360] for t, e in players.items()},
                                    ask="damaged"))
        resumed = asyncio.run(_round(port, {t: e[360:480] for t, e in players.items()},
                                     resume=resume))
        again = asyncio.run(_round(port, {t: e[480:600] for t, e in players.items()}))
    finally:
        stop(server)
    print("alone", alone, "sealed", sealed, "damaged", broken, "resumed", resumed,
          "alone again", again)
    assert sealed["asked"] >= 16 and broken["asked"] >= 16  # the long logs were read meanwhile
    calm = max(alone["p99_ms"], again["p99_ms"])
    for busy in (sealed, broken, resumed):
        assert busy["p99_ms"] < 2 * calm + 30, (calm, busy)
    for i in range(8):  # each resumed match took its move, after its 20,000
        assert len(log.read_events(tmp_path / f"long{i}.blog")) == 20_001


@pytest.mark.slow
def test_a_stop_waits_for_no_read_that_records_nothing(tmp_path: Path) -> None:
    """SIGTERM while three clients ask again and again of a sealed log of 42,944 events and one
    sends 50 moves at once to a match of 30,000: the server stops within seconds (25 s before:
    it read the log for each of the 96 requests already received, 32 a client), and every
    move it acknowledged is in the log, no other."""
    long = _long_match()
    log.write_log(tmp_path / "sealed.blog", _renamed(long, "sealed"), sealed=True, validate=False)
    log.write_log(tmp_path / "half.blog", _renamed(long, "half")[:30_000], sealed=False,
                  validate=False)
    server, port = start(tmp_path)

    async def probe() -> list[list[Any]]:
        done, asked = asyncio.Event(), [0]
        askers = [asyncio.create_task(_asker(port, "sealed", done, asked)) for _ in range(3)]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"".join(_play("half", event) for event in long[30_000:30_050]))
        await asyncio.sleep(0.5)
        server.send_signal(signal.SIGTERM)
        answers = []
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                answers.append(await _receive(reader))
        writer.close()
        done.set()
        await asyncio.gather(*askers, return_exceptions=True)
        return answers

    began = time.monotonic()
    answers = asyncio.run(probe())
    out, err = server.communicate(timeout=120)
    took = time.monotonic() - began
    assert server.returncode == 0 and out.startswith("stopped") and err == "", (out, err)
    assert took < 8, took
    acknowledged = [a[2] for a in answers if a[0] == "ok"]
    assert [a for a in answers if a[0] != "ok"] == []
    kept = log.read_events(tmp_path / "half.blog")
    assert acknowledged == list(range(30_000, len(kept)))
    assert kept == _renamed(long, "half")[:len(kept)]


@functools.cache
def _match() -> list[ev.AnyEvent]:
    return simulate_match(preset("classic"), 2, seed="server56", index=0)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int]]:
    """A server playing at most 3 tables a connection, with an ended match's log, ``ended``,
    and one of a match halfway, ``half``."""
    directory = tmp_path_factory.mktemp("served")
    log.write_log(directory / "ended.blog", _match(), sealed=True, validate=False)
    log.write_log(directory / "half.blog", _renamed(_match(), "half")[:300], sealed=False,
                  validate=False)
    server, port = start(directory, "--max-tables", "3")
    try:
        yield directory, port
    finally:
        stop(server)


def test_a_table_being_read_holds_up_no_other_table_of_its_connection(
        served: tuple[Path, int]) -> None:
    """One connection asks 20 times of an ended match's log (read again each time: the
    recorder keeps no ended table), then plays a move of another table: the move is
    acknowledged long before the 20 answers are all in. Before, every read was done in the
    event loop ahead of the move, whose "ok" came last."""
    game = _renamed(_match(), "g")[:2]

    async def probe() -> list[list[Any]]:
        reader, writer = await asyncio.open_connection("127.0.0.1", served[1])
        writer.write(_play("g", game[0]))
        assert await _receive(reader) == ["ok", "g", 0]
        writer.write(frame(["next", "ended", None]) * 20 + _play("g", game[1]))
        replies = [await _receive(reader) for _ in range(21)]
        writer.close()
        return replies

    replies = asyncio.run(probe())
    assert replies.count(["next", "ended", len(_match())]) == 20
    assert replies.index(["ok", "g", 1]) < 10, replies.index(["ok", "g", 1])


def test_a_connection_plays_at_most_max_tables_tables_at_a_time(
        served: tuple[Path, int]) -> None:
    """With ``--max-tables 3`` the first move of a fourth table is refused in one line naming
    the flag, and nothing of it is written; once one of the three ends, a new one is taken;
    another connection counts its own. Before, a connection could start tables without bound
    (each held in memory until it ends)."""
    directory, port = served
    played = {f"c{i}": _renamed(_match(), f"cap-c{i}") for i in range(5)}

    async def probe() -> tuple[list[Any], list[Any], list[Any]]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for table in ("c0", "c1"):
            writer.write(_play(table, played[table][0]))
            assert await _receive(reader) == ["ok", table, 0]
        writer.write(_play("x", played["c2"][1]))  # refused: it does not count
        assert (await _receive(reader))[:3] == ["refused", "x", "seq"]
        writer.write(_play("c2", played["c2"][0]))
        assert await _receive(reader) == ["ok", "c2", 0]
        writer.write(_play("c3", played["c3"][0]))
        over = await _receive(reader)
        rest = played["c0"][1:]  # c0 to its end, without waiting between moves
        writer.write(b"".join(_play("c0", event) for event in rest))
        assert [(await _receive(reader))[0] for _ in rest] == ["ok"] * len(rest)
        writer.write(_play("c4", played["c4"][0]))
        after = await _receive(reader)
        other_reader, other = await asyncio.open_connection("127.0.0.1", port)
        other.write(_play("c3", played["c3"][0]))
        elsewhere = await _receive(other_reader)
        writer.close()
        other.close()
        return over, after, elsewhere

    over, after, elsewhere = asyncio.run(probe())
    assert over == ["refused", "c3", "tables",
                    "this connection plays 3 tables, at most 3 (--max-tables): end one first"]
    assert after == ["ok", "c4", 0]
    assert elsewhere == ["ok", "c3", 0]
    assert log.read_events(directory / "c3.blog") == played["c3"][:1]


def test_moves_sent_while_their_table_is_read_are_taken_in_order(
        served: tuple[Path, int]) -> None:
    """The first of 40 moves sent at once to a match halfway has its log read on a loader;
    the 39 behind it wait for it, and each is recorded once, in order (with the moves behind
    it taken in the loop meanwhile, a server built so refused them, kind ``seq``)."""
    directory, port = served
    moves = _renamed(_match(), "half")[300:340]

    async def probe() -> list[list[Any]]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"".join(_play("half", event) for event in moves))
        replies = [await _receive(reader) for _ in moves]
        writer.close()
        return replies

    assert asyncio.run(probe()) == [["ok", "half", event.seq] for event in moves]
    assert log.read_events(directory / "half.blog") == _renamed(_match(), "half")[:340]
