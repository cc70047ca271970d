"""Fault probes of the example server, the operator's day: a restart during play.

SIGTERM to the server with 100 clients each waiting for the answer to a move: every move
answered "ok" must be on disk, every client told, the server must exit 0, and the next start
must find nothing to repair. The clients were not told: each connection was closed with the
client's last request unread, and the kernel reset it (or cut it), without a word; now every
connection ends with ``["refused", "", "stopping", ...]`` after the answers of the moves the
server received, and the server takes what the client still sends before it closes, so the
close is no reset.
"""

from __future__ import annotations

import asyncio
import signal
import struct
from pathlib import Path
from typing import Any

import msgspec
import pytest

from buraco_log import events as ev
from buraco_log import log
from buraco_log.recorder import Recorder, journal_notes
from tests.recorder.serverclient import frame, sources, start


async def _player(port: int, table: str, moves: list[ev.AnyEvent],
                  acked: list[int]) -> tuple[str, Any]:
    """Play ``table`` a move at a time until the end, a refusal or a closed connection."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for event in moves:
            writer.write(frame(["play", table, msgspec.Raw(ev.encode(event))]))
            await writer.drain()
            head = await reader.readexactly(4)
            reply = msgspec.msgpack.decode(await reader.readexactly(
                struct.unpack(">I", head)[0]))
            if reply[0] != "ok":
                return "answer", reply
            acked.append(reply[2])
        return "done", None
    except (asyncio.IncompleteReadError, ConnectionError) as exc:
        return "cut", repr(exc)
    finally:
        writer.close()


@pytest.mark.slow
@pytest.mark.parametrize("sync", ["journal", "fsync"])
def test_sigterm_with_100_clients_mid_move_tells_each_and_loses_no_acknowledged_move(
        tmp_path: Path, sync: str) -> None:
    played = sources(100, "term")
    server, port = start(tmp_path, "--sync", sync)
    acked: dict[str, list[int]] = {t: [] for t in played}

    async def play() -> list[tuple[str, Any]]:
        players = [asyncio.create_task(_player(port, t, played[t], acked[t])) for t in played]
        while sum(map(len, acked.values())) < 1000:  # every table mid-match
            await asyncio.sleep(0.01)
        server.send_signal(signal.SIGTERM)
        return await asyncio.gather(*players)

    try:
        ends = asyncio.run(play())
        out, err = server.communicate(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert server.returncode == 0 and out.startswith("stopped") and err == "", (out, err)
    untold = [(t, end) for t, end in zip(played, ends, strict=True)
              if end[0] != "answer" or end[1][:3] != ["refused", "", "stopping"]]
    assert untold == [], untold[:3]
    assert "is recorded, and no other" in ends[0][1][3]
    for table, moves in played.items():  # what was answered "ok" is there, and no other
        assert log.read_events(tmp_path / f"{table}.blog") == moves[:len(acked[table])]
    assert journal_notes(tmp_path) == []
    with Recorder(tmp_path, sync=sync) as again:  # nothing for the next start to repair
        for table in played:
            assert again.next_seq(table) == len(acked[table])
        stats = again.stats()
    assert (stats.recovered, stats.torn_cut, stats.swept, stats.journal_conflicts) == (
        0, 0, 0, 0), stats
