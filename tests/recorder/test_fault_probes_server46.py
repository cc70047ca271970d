"""Fault probes of the example server (examples/server), round 46: SIGTERM with a client that
does not read its answers.

Its moves were durable, but the answers waited for the client to take them, up to
``--drain-timeout`` seconds each: the server stopped that long after its last table was
durable. Now a stop answers without waiting; every acknowledged move is in its log.
"""

from __future__ import annotations

import signal
import socket
import time
from pathlib import Path

import msgspec

from buraco_log import events as ev
from buraco_log import log
from tests.recorder.serverclient import frame as _frame
from tests.recorder.serverclient import receive as _receive
from tests.recorder.serverclient import send_for as _send_for
from tests.recorder.serverclient import sources as _sources
from tests.recorder.serverclient import start as _start


def test_sigterm_stops_once_the_moves_are_durable_not_at_the_drain_timeout(
        tmp_path: Path) -> None:
    server, port = _start(tmp_path, "--drain-timeout", "60")
    try:
        played = _sources(2, "stop46")
        acked = {}
        with socket.create_connection(("127.0.0.1", port), timeout=30) as reading:
            for event in played["f0"][:20]:  # a client that reads: its moves are acknowledged
                reading.sendall(_frame(["play", "f0", msgspec.Raw(ev.encode(event))]))
                answer = _receive(reading)
                assert answer == ["ok", "f0", event.seq], answer
                acked["f0"] = event.seq
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as flood:
            # a small window from the start (see test_fault_probes_server44); then moves the
            # rules refuse, each answered with a line the client never takes, until the
            # server's own buffer is full and it stops reading (every slot waits)
            flood.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            flood.connect(("127.0.0.1", port))
            start = played["f1"][0]
            wrong = _frame(["play", "f1", msgspec.Raw(ev.encode(played["f1"][5]))])
            _send_for(flood, _frame(["play", "f1", msgspec.Raw(ev.encode(start))]), 5)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and _send_for(flood, wrong * 20_000, 1.0):
                pass
            assert time.monotonic() < deadline, "the server never stopped reading"
            began = time.monotonic()
            server.send_signal(signal.SIGTERM)
            out, err = server.communicate(timeout=120)
            took = time.monotonic() - began
        assert server.returncode == 0 and out.startswith("stopped") and err == "", (out, err)
        assert took < 15, f"the stop took {took:.1f} s (the drain timeout is 60 s)"
        assert log.read_events(tmp_path / "f0.blog") == list(played["f0"][:acked["f0"] + 1])
        assert log.read_events(tmp_path / "f1.blog") == [start]  # the refused moves: none
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
