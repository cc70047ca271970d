"""Fault probes of the example server (examples/server), round 51: clients that send moves and
never read their answers, at ``--max-in-flight``'s default (4,096).

Each move whose answer found the connection's buffer full waited in its own task (with a timer
and two more tasks) for the client to take it: such a client held 4,096 of them until
``--drain-timeout`` dropped it, 27 to 38 MB of the server's memory a client (100 such clients:
up to 3.8 GB). And every one of them that timed out in the same turn counted the client as
dropped again (20 to 401 drops for one client). The connection's reader now waits instead (it
reads no more requests until the client takes its answers), and drops the client once.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import msgspec
import pytest

from buraco_log import events as ev
from buraco_log import log
from tests.recorder.serverclient import ask, frame, receive, sources, start, stop


def _rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.slow  # (4 to 6 s: the client is dropped 2 s after the buffers fill)
def test_a_client_that_never_reads_holds_no_move_waiting_and_is_dropped_once(
        tmp_path: Path) -> None:
    source = sources(1, "noread51", "p")["p0"]
    # a name no file takes: each move is refused at once with a long answer (1.3 kB), so the
    # socket's buffers fill within a second and every later answer waits for the client
    bad = frame(["play", "x/" * 300, msgspec.Raw(ev.encode(source[0]))]) * 100
    server, port = start(tmp_path, "--drain-timeout", "2")
    stop_at = threading.Event()

    def flood() -> None:
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before the connect
            sock.settimeout(0.1)
            sock.connect(("127.0.0.1", port))
            while not stop_at.is_set():
                try:
                    sock.send(bad)
                except TimeoutError:
                    continue
                except OSError:  # dropped
                    break
            stop_at.wait()

    flooder = threading.Thread(target=flood)
    try:
        before = peak = _rss_kb(server.pid)
        flooder.start()
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            for event in source[:40]:  # another client plays meanwhile, served
                sock.sendall(frame(["play", "p0", msgspec.Raw(ev.encode(event))]))
                assert receive(sock) == ["ok", "p0", event.seq]
                peak = max(peak, _rss_kb(server.pid))
                time.sleep(0.02)
        deadline = time.monotonic() + 20
        while (stats := ask(port, ["stats", "", None])[2])["dropped"] == 0:
            assert time.monotonic() < deadline, stats
            peak = max(peak, _rss_kb(server.pid))
            time.sleep(0.05)
        time.sleep(0.3)  # every move it had read answered (before: each counted a drop)
        stats = ask(port, ["stats", "", None])[2]
    finally:
        stop_at.set()
        flooder.join(30)
        stop(server)
    # before: 36 MB more (2,961 moves in flight), dropped 401 times; now 1.7 MB, once
    assert peak - before < 12_000, (before, peak)
    assert stats["dropped"] == 1, stats
    assert log.read_events(tmp_path / "p0.blog") == source[:40]
