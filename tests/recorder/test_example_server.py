"""The example server (examples/server) records bot tables over a loopback socket."""

from __future__ import annotations

import json
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
SERVER = ROOT / "examples" / "server"


def _ask(sock: socket.socket, message: list[Any]) -> list[Any]:
    body = msgspec.msgpack.encode(message)
    sock.sendall(struct.pack(">I", len(body)) + body)
    size = struct.unpack(">I", sock.recv(4, socket.MSG_WAITALL))[0]
    reply: list[Any] = msgspec.msgpack.decode(sock.recv(size, socket.MSG_WAITALL))
    return reply


@pytest.mark.parametrize("sync", ["fsync", "journal"])
def test_the_example_server_records_bot_tables_and_refuses_illegal_moves(
    tmp_path: Path, sync: str
) -> None:
    extra = ["--gc-freeze", "0.05", "--gc-young", "50000"] if sync == "journal" else []
    server = subprocess.Popen(
        [sys.executable, str(SERVER / "server.py"), str(tmp_path), "--sync", sync, *extra],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        first = server.stdout.readline().split()
        assert first[:2] == ["listening", "127.0.0.1"]
        port = int(first[2])
        bots = subprocess.run(
            [
                sys.executable,
                str(SERVER / "bots.py"),
                str(port),
                "--tables",
                "8",
                "--moves",
                "120",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        summary = json.loads(bots.stdout)
        assert summary == {**summary, "tables": 8, "moves": 8 * 120, "refused": []}
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            match = simulate_match(preset("classic"), 2, seed="other", index=0)
            raw = msgspec.Raw(ev.encode(match[0]))
            assert _ask(sock, ["play", "x", raw]) == ["ok", "x", 0]
            again = _ask(sock, ["play", "x", raw])  # seq 0 again: refused, nothing written
            assert again[:3] == ["refused", "x", "seq"]
            assert _ask(sock, ["next", "x", None]) == ["next", "x", 1]
            assert _ask(sock, ["play", "x", msgspec.Raw(ev.encode(match[1]))]) == ["ok", "x", 1]
            stolen = simulate_match(preset("classic"), 2, seed="third", index=0)[2]
            illegal = _ask(sock, ["play", "x", msgspec.Raw(ev.encode(stolen))])
            assert illegal[:3] == ["refused", "x", "draw.wrong_card"]
            assert _ask(sock, ["play", "../evil", raw])[0] == "refused"
            # The same name, or a damaged log, asked for its next seq: refused, and the
            # connection goes on (it used to end it, with a traceback on the server's stderr).
            assert _ask(sock, ["next", "../evil", None])[:3] == ["refused", "../evil", "validate"]
            (tmp_path / "bad.blog").write_bytes(b"not a log at all")
            assert _ask(sock, ["next", "bad", None])[:2] == ["refused", "bad"]
            assert _ask(sock, ["next", "x", None]) == ["next", "x", 2]
    finally:
        server.send_signal(signal.SIGTERM)
        out, _ = server.communicate(timeout=60)
    assert server.returncode == 0
    assert out.startswith("stopped")
    stats = json.loads(out.split(None, 1)[1])
    assert (stats["journal_syncs"] > 0) == (sync == "journal")
    assert not list(tmp_path.glob(".recorder.journal-*"))  # retired at close
    names = sorted(p.name for p in tmp_path.glob("*.blog"))
    assert names == ["bad.blog"] + [f"t{i}.blog" for i in range(8)] + ["x.blog"]
    for i in range(8):
        expected = simulate_match(preset("classic"), 2, seed="bots", index=i)[:120]
        assert log.read_events(tmp_path / f"t{i}.blog") == expected
        assert log.verify(tmp_path / f"t{i}.blog").sealed
    assert len(log.read_events(tmp_path / "x.blog")) == 2
