"""Fault probes of the example server (examples/server), round 57: a live site at its resource
limits.

``--max-tables`` bounded the tables of one connection only: many connections, or one client
that reconnected, started tables without bound, each held in the recorder's memory (about
11 kB) until its match ends, whether or not its players were still there. The server now holds
at most ``--max-live-tables`` tables at once; at that limit it lets go of the tables idle for
``--forget-idle`` seconds (their logs stay; their next move reads them again), and otherwise
answers the first move of one more table ``["refused", TABLE, "full", ...]``, nothing
recorded, the connection kept. And a move the server failed on (``MemoryError`` under a limit
on memory, a defect) got no answer at all, its client waiting for ever: now ``["refused",
TABLE, "error", ...]``.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import socket
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

from buraco_log import events as ev
from buraco_log import log
from buraco_log.recorder import Recorder
from tests.recorder.serverclient import SERVER, ask, frame, receive, sources, start, stop


@functools.cache
def _matches() -> dict[str, list[ev.AnyEvent]]:
    return sources(6, "server57", "s")


def _play(sock: socket.socket, table: str, seq: int) -> list[Any]:
    event = _matches()[table][seq]
    sock.sendall(frame(["play", table, msgspec.Raw(ev.encode(event))]))
    return receive(sock)


@pytest.mark.slow  # (a server process: 0.7 to 1.7 s)
def test_one_table_past_max_live_tables_from_any_connection_is_refused_full(
        tmp_path: Path) -> None:
    server, port = start(tmp_path, "--max-live-tables", "3")
    try:
        with (socket.create_connection(("127.0.0.1", port), timeout=30) as a,
              socket.create_connection(("127.0.0.1", port), timeout=30) as b):
            assert _play(a, "s0", 0) == ["ok", "s0", 0]
            assert _play(a, "s1", 0) == ["ok", "s1", 0]
            assert _play(b, "s2", 0) == ["ok", "s2", 0]
            # one more table, from another connection (its own --max-tables is far off)
            reply = _play(b, "s3", 0)
            assert reply[:3] == ["refused", "s3", "full"], reply
            assert "at most 3 (--max-live-tables)" in reply[3] and "send it again" in reply[3]
            assert _play(b, "s2", 1) == ["ok", "s2", 1]  # the connection goes on
        with socket.create_connection(("127.0.0.1", port), timeout=30) as c:  # reconnected
            assert _play(c, "s3", 0)[:3] == ["refused", "s3", "full"]
            assert ask(port, ["next", "s3", None]) == ["next", "s3", 0]  # nothing recorded
            assert _play(c, "s0", 1) == ["ok", "s0", 1]  # a held table's moves go on
        stats = ask(port, ["stats", "", None])[2]
        assert stats["tables"] == 3 and stats["full"] == 2, stats
    finally:
        stop(server)
    held = {t: len(log.read_events(tmp_path / f"{t}.blog")) for t in ("s0", "s1", "s2")}
    assert held == {"s0": 2, "s1": 1, "s2": 2}
    assert not (tmp_path / "s3.blog").exists()


@pytest.mark.slow
def test_at_max_live_tables_the_tables_idle_past_forget_idle_are_let_go_and_read_again(
        tmp_path: Path) -> None:
    server, port = start(tmp_path, "--max-live-tables", "3", "--forget-idle", "0.4")
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as a:
            for table in ("s0", "s1", "s2"):
                assert _play(a, table, 0) == ["ok", table, 0]
            assert _play(a, "s3", 0)[:3] == ["refused", "s3", "full"]
            time.sleep(0.5)  # all three idle past --forget-idle
            assert _play(a, "s2", 1) == ["ok", "s2", 1]
            assert _play(a, "s3", 0) == ["ok", "s3", 0]  # s0 let go to make room
            assert _play(a, "s0", 1) == ["ok", "s0", 1]  # read again from its log (s1 let go)
            assert _play(a, "s1", 1)[:3] == ["refused", "s1", "full"]  # s2, s3, s0 not idle
            stats = ask(port, ["stats", "", None])[2]
            assert stats["tables"] == 3 and stats["let_go"] == 2 and stats["full"] == 2, stats
    finally:
        stop(server)
    held = {t: len(log.read_events(tmp_path / f"{t}.blog")) for t in ("s0", "s1", "s2", "s3")}
    assert held == {"s0": 2, "s1": 1, "s2": 2, "s3": 1}


class _OutOfMemory(Recorder):
    """A recorder whose appends of table "boom" meet a process out of memory."""

    async def append_async(self, match: str, event: ev.AnyEvent) -> int:
        if match == "boom":
            raise MemoryError
        return await super().append_async(match, event)


def test_a_move_the_server_fails_on_is_answered_and_the_connection_goes_on(
        tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("example_server57", SERVER)
    assert spec is not None and spec.loader is not None
    server_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(server_module)

    async def probe() -> list[list[Any]]:
        recorder = _OutOfMemory(tmp_path, sync="journal")
        server = server_module.Server(recorder)
        port = server.listen(0)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            for table in ("boom", "s0"):
                event = _matches()[table if table != "boom" else "s1"][0]
                writer.write(frame(["play", table, msgspec.Raw(ev.encode(event))]))
            replies = []
            for _ in range(2):
                size = int.from_bytes(await asyncio.wait_for(reader.readexactly(4), 5), "big")
                replies.append(msgspec.msgpack.decode(await reader.readexactly(size)))
            writer.close()
            return replies
        finally:
            server.close_listener()
            await server.stop_clients()
            server.loaders.shutdown()
            recorder.close()

    replies = asyncio.run(probe())
    assert sorted(r[:3] for r in replies) == [["ok", "s0", 0], ["refused", "boom", "error"]]
    message = next(r[3] for r in replies if r[0] == "refused")
    assert "MemoryError" in message and "next" in message, message
