"""Fault probes of the example server (examples/server), round 43b.

The server process is killed (SIGKILL) at a random moment while a client plays several tables,
and started again on the same directory: every move it acknowledged is in its log once, and the
client resumes each table from the seq the server asks for. A client still connected when the
server is stopped (SIGTERM) got its answers, but the server printed a traceback per such
client (asyncio's stream callback met the cancelled connection task); it now stops them itself.
"""

from __future__ import annotations

import random
import signal
import socket
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from buraco_log import events as ev
from buraco_log import log
from buraco_log.rules import preset
from buraco_log.simulate import simulate_match

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "examples" / "server" / "server.py"
TABLES = [f"k{i}" for i in range(4)]
MOVES = 40


def _source(table: str) -> list[ev.AnyEvent]:
    return simulate_match(preset("classic"), 2, seed="kill", index=int(table[1:]))[:MOVES]


def _start(directory: Path, sync: str) -> tuple[subprocess.Popen[str], socket.socket]:
    server = subprocess.Popen([sys.executable, str(SERVER), str(directory), "--sync", sync],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    assert server.stdout is not None
    first = server.stdout.readline().split()
    assert first[:2] == ["listening", "127.0.0.1"], first
    return server, socket.create_connection(("127.0.0.1", int(first[2])), timeout=30)


def _send(sock: socket.socket, message: list[Any]) -> None:
    body = msgspec.msgpack.encode(message)
    sock.sendall(struct.pack(">I", len(body)) + body)


def _receive(sock: socket.socket) -> list[Any]:
    head = sock.recv(4, socket.MSG_WAITALL)
    assert len(head) == 4, "the server hung up"
    size = struct.unpack(">I", head)[0]
    reply: list[Any] = msgspec.msgpack.decode(sock.recv(size, socket.MSG_WAITALL))
    return reply


def _play(sock: socket.socket, sources: dict[str, list[ev.AnyEvent]], start: dict[str, int],
          replies: int, acked: dict[str, int]) -> None:
    """Play every table from ``start`` (one move in flight per table) until ``replies`` answers
    came (each must be ok) or the tables are done; ``acked`` gets each table's last ok seq."""
    live = [t for t in TABLES if start[t] < MOVES]
    for table in live:
        _send(sock, ["play", table, msgspec.Raw(ev.encode(sources[table][start[table]]))])
    while live and replies:
        kind, table, seq, *rest = _receive(sock)
        assert kind == "ok", (kind, table, seq, rest)
        replies -= 1
        acked[table] = seq
        if seq + 1 == MOVES:
            live.remove(table)
        else:
            _send(sock, ["play", table, msgspec.Raw(ev.encode(sources[table][seq + 1]))])


def _resume(sock: socket.socket, acked: dict[str, int]) -> dict[str, int]:
    start = {}
    for table in TABLES:
        _send(sock, ["next", table, None])
        kind, name, seq = _receive(sock)
        assert (kind, name) == ("next", table)
        assert seq > acked.get(table, -1), (table, seq, acked)  # no acknowledged move lost
        start[table] = seq
    return start


def _kill_run(directory: Path, sync: str, rng: random.Random, kills: int) -> None:
    """Kill the server ``kills`` times after a random number of answers, restart it, resume;
    then play every table to its end and check each log holds every move once, in order."""
    sources = {t: _source(t) for t in TABLES}
    acked: dict[str, int] = {}
    for _ in range(kills):
        server, sock = _start(directory, sync)
        try:
            _play(sock, sources, _resume(sock, acked), rng.randint(1, 30), acked)
        finally:
            server.kill()  # SIGKILL: moves in flight may or may not be kept, none acked lost
            server.communicate(timeout=30)
            sock.close()
    server, sock = _start(directory, sync)
    try:
        _play(sock, sources, _resume(sock, acked), 10**6, acked)
    finally:
        sock.close()
        server.send_signal(signal.SIGTERM)
        out, err = server.communicate(timeout=60)
    assert server.returncode == 0 and out.startswith("stopped") and err == ""
    for table in TABLES:  # every move once, in order (a strict read)
        assert log.read_events(directory / f"{table}.blog") == sources[table]


@pytest.mark.parametrize("sync", ["journal", "fsync"])
def test_a_server_killed_at_random_moments_keeps_every_acknowledged_move_once(
        tmp_path: Path, sync: str) -> None:
    _kill_run(tmp_path, sync, random.Random(f"server43-{sync}"), 3)


@pytest.mark.slow
@pytest.mark.parametrize("sync", ["journal", "fsync", "syncfs"])
def test_a_server_killed_at_60_random_moments(tmp_path: Path, sync: str) -> None:
    rng = random.Random(f"server43-slow-{sync}")
    for run in range(15):
        directory = tmp_path / f"run{run}"
        directory.mkdir()
        _kill_run(directory, sync, rng, 4)


def test_a_client_connected_when_the_server_stops_gets_its_answers_and_no_traceback(
        tmp_path: Path) -> None:
    server, sock = _start(tmp_path, "journal")
    source = _source("k0")
    try:
        for event in source[:3]:
            _send(sock, ["play", "k0", msgspec.Raw(ev.encode(event))])
        assert [_receive(sock)[2] for _ in range(3)] == [0, 1, 2]
        _send(sock, ["play", "k0", msgspec.Raw(ev.encode(source[2]))])  # a seq again
        assert _receive(sock)[:3] == ["refused", "k0", "seq"]  # one refusal, it goes on
        _send(sock, ["play", "k0", msgspec.Raw(ev.encode(source[3]))])
        assert _receive(sock) == ["ok", "k0", 3]
        server.send_signal(signal.SIGTERM)  # the client is still connected
        out, err = server.communicate(timeout=60)
        assert _receive(sock)[:3] == ["refused", "", "stopping"]  # told why (server58)
        assert sock.recv(1) == b""  # the server closed the connection
    finally:
        sock.close()
        if server.poll() is None:
            server.kill()
    assert server.returncode == 0 and out.startswith("stopped")
    assert err == "", err  # it printed "Exception in callback ... CancelledError" and a trace
    assert log.read_events(tmp_path / "k0.blog") == source[:4]


def test_a_second_table_starting_a_match_another_table_plays_is_refused(tmp_path: Path) -> None:
    # docs/recorder.md: a game server passes unique_match_ids; the example did not, and two
    # tables recorded one match id in two logs
    server, sock = _start(tmp_path, "journal")
    source = _source("k0")
    try:
        _send(sock, ["play", "k0", msgspec.Raw(ev.encode(source[0]))])
        assert _receive(sock) == ["ok", "k0", 0]
        _send(sock, ["play", "copy", msgspec.Raw(ev.encode(source[0]))])
        kind, table, rule, message = _receive(sock)
        assert (kind, table, rule) == ("refused", "copy", "duplicate")
        assert "already held by live table 'k0'" in message and "\n" not in message
        _send(sock, ["play", "k0", msgspec.Raw(ev.encode(source[1]))])  # the table goes on
        assert _receive(sock) == ["ok", "k0", 1]
        _send(sock, [1] * 10)  # not a request: one refusal, the connection goes on
        assert _receive(sock) == ["refused", "", "frame", "not a request"]
        sock.sendall(struct.pack(">I", (1 << 20) + 1))  # a frame past the limit: why, then bye
        kind, table, rule, message = _receive(sock)
        assert (kind, rule) == ("refused", "frame") and "at most 1048576" in message
        assert sock.recv(1) == b""
    finally:
        sock.close()
        server.send_signal(signal.SIGTERM)
        out, err = server.communicate(timeout=60)
    assert server.returncode == 0 and out.startswith("stopped") and err == ""
    assert log.read_events(tmp_path / "k0.blog") == source[:2]
    assert not (tmp_path / "copy.blog").exists()
