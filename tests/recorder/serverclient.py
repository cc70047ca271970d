"""A client of the example server (examples/server/server.py) for tests: start it, frame
requests, read answers."""

from __future__ import annotations

import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgspec

from buraco_log import events as ev
from buraco_log.rules import preset
from buraco_log.simulate import simulate_match

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "examples" / "server" / "server.py"


def start(directory: Path, *flags: str) -> tuple[subprocess.Popen[str], int]:
    """The server on ``directory`` (``sync="journal"`` unless ``flags`` say), and its port."""
    server = subprocess.Popen([sys.executable, str(SERVER), str(directory), "--sync", "journal",
                               *flags], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    assert server.stdout is not None
    first = server.stdout.readline().split()
    assert first[:2] == ["listening", "127.0.0.1"], first
    return server, int(first[2])


def stop(server: subprocess.Popen[str]) -> str:
    """SIGTERM; the server must stop cleanly, with nothing on stderr. Returns stdout."""
    server.send_signal(signal.SIGTERM)
    out, err = server.communicate(timeout=60)
    assert server.returncode == 0 and out.startswith("stopped"), (server.returncode, out, err)
    assert err == "", err
    return out


def frame(message: list[Any]) -> bytes:
    body = msgspec.msgpack.encode(message)
    return struct.pack(">I", len(body)) + body


def receive(sock: socket.socket) -> list[Any]:
    head = sock.recv(4, socket.MSG_WAITALL)
    assert len(head) == 4, "the server hung up"
    size = struct.unpack(">I", head)[0]
    reply: list[Any] = msgspec.msgpack.decode(sock.recv(size, socket.MSG_WAITALL))
    return reply


def ask(port: int, message: list[Any]) -> list[Any]:
    """One request on a connection of its own; its answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(frame(message))
        return receive(sock)


def sources(tables: int, seed: str, prefix: str = "f") -> dict[str, list[ev.AnyEvent]]:
    """``tables`` matches: four simulated ones, each played again under other match ids (the
    server refuses a match id another live table plays; simulating each costs 30 ms)."""
    played = [simulate_match(preset("classic"), 2, seed=seed, index=i) for i in range(4)]
    out = {}
    for i in range(tables):
        events = played[i % 4]
        first = msgspec.structs.replace(events[0], match_id=f"{seed}-{prefix}{i}")
        out[f"{prefix}{i}"] = [first, *events[1:]]
    return out


def send_for(sock: socket.socket, data: bytes, seconds: float) -> int:
    """Send as much of ``data`` as the server takes within ``seconds``; the bytes sent."""
    sock.settimeout(min(0.2, seconds))
    sent, deadline = 0, time.monotonic() + seconds
    while sent < len(data) and time.monotonic() < deadline:
        try:
            sent += sock.send(data[sent:sent + 65536])
        except TimeoutError:
            continue
        except ConnectionError:
            break
    return sent
