"""Fault probes of the example server (examples/server), round 44.

A client that sent moves and never read its answers made the server hold every move it read:
its play tasks wrote their answers without waiting for the client to take them, and nothing
bounded how many moves one connection had in flight (120,000 moves took the server from 26 MB
to 160 MB). A connection now holds at most ``--max-in-flight`` unanswered moves (the server
stops reading it past that), and a client that does not take an answer within
``--drain-timeout`` seconds is dropped. Also: clients that hang up in the middle of a frame or
with moves in flight, and garbage of every shape, leave the server serving the others, with no
traceback.
"""

from __future__ import annotations

import random
import socket
import struct
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

from buraco_log import events as ev
from buraco_log import log
from buraco_log.rules import preset
from buraco_log.simulate import simulate_match
from tests.recorder.serverclient import ask as _ask
from tests.recorder.serverclient import frame as _frame
from tests.recorder.serverclient import receive as _receive
from tests.recorder.serverclient import send_for as _send_for
from tests.recorder.serverclient import sources as _sources
from tests.recorder.serverclient import start as _start
from tests.recorder.serverclient import stop as _stop


def _rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _flood(sources: dict[str, list[ev.AnyEvent]]) -> bytes:
    """Every move of every table, interleaved, as one stream of play frames."""
    out = []
    for j in range(max(map(len, sources.values()))):
        for table, events in sources.items():
            if j < len(events):
                out.append(_frame(["play", table, msgspec.Raw(ev.encode(events[j]))]))
    return b"".join(out)


def _prefix_of_source(directory: Path, sources: dict[str, list[ev.AnyEvent]]) -> int:
    """Each log that exists reads strictly and is a prefix of its table's moves; their sum."""
    total = 0
    for table, events in sources.items():
        path = directory / f"{table}.blog"
        if path.exists():
            got = log.read_events(path)
            assert got == events[:len(got)], table
            total += len(got)
    return total


# -- 1: a client that never reads holds a bounded number of moves -----------------------------

def test_a_client_that_sends_moves_and_never_reads_keeps_the_server_bounded(
        tmp_path: Path) -> None:
    # a slow disk (a round every 0.2 s) and a client that sends 60 tables' whole matches at
    # once: before, the server read them all while the rounds waited (and held each)
    sources = _sources(200, "flood44")
    data = _flood(sources)
    server, port = _start(tmp_path, "--window", "0.2", "--max-in-flight", "256")
    try:
        before = _rss_kb(server.pid)
        peak = before
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            deadline = time.monotonic() + 2  # (2 s: enough for the old server to grow 40 MB)
            sent = 0
            while time.monotonic() < deadline:
                sent += _send_for(sock, data[sent:], 0.05)
                peak = max(peak, _rss_kb(server.pid))
            stats = _ask(port, ["stats", "", None])[2]
        # the server's own memory (its buffers and moves held), not the kernel's socket
        # buffers: before, it grew by 40 MB here (26 to 66 MB); now by about 5 MB
        assert peak - before < 15_000, (before, peak, sent)
        assert 0 < stats["in_flight_peak"] <= 256, stats
    finally:
        _stop(server)
    assert _prefix_of_source(tmp_path, sources) > 0


def test_a_client_that_never_takes_its_answers_is_dropped_and_the_others_go_on(
        tmp_path: Path) -> None:
    server, port = _start(tmp_path, "--drain-timeout", "0.5", "--max-in-flight", "64")
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            # the small receive buffer is set before the connection, so the window is small
            # from the start (set after, an autotuned window of up to net.ipv4.tcp_rmem's
            # maximum, 32 MB on some hosts, took every answer of a fixed number of asks)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.settimeout(30)
            sock.connect(("127.0.0.1", port))
            # stats answers (about 700 bytes each) fill the socket's buffers, then the
            # server's; asks are sent for as long as the server reads them, so whatever the
            # kernel's buffers hold, the server's own buffer fills and its wait runs out
            asks = _frame(["stats", "", None]) * 4_000
            sent, deadline = 0, time.monotonic() + 40  # a loaded host answers slowly
            while time.monotonic() < deadline:
                sent += _send_for(sock, asks[sent % len(asks):], 1)
                stats = _ask(port, ["stats", "", None])[2]
                if stats["dropped"]:
                    break
                time.sleep(0.1)
            assert stats["dropped"] == 1, (stats, sent)
            # the dropped client's connection is gone: reading it ends (a reset, or the end
            # after what the kernel held; an answer may be cut: it was dropped mid-answer)
            sock.settimeout(10)
            with pytest.raises(ConnectionResetError):
                while sock.recv(1 << 16):
                    pass
                raise ConnectionResetError("the end")
        source = simulate_match(preset("classic"), 2, seed="other44", index=0)
        assert _ask(port, ["play", "t", msgspec.Raw(ev.encode(source[0]))]) == ["ok", "t", 0]
    finally:
        _stop(server)


# -- 2: hang-ups and garbage ------------------------------------------------------------------

def test_clients_hanging_up_mid_frame_or_with_moves_in_flight_leave_the_server_serving(
        tmp_path: Path) -> None:
    source = simulate_match(preset("classic"), 2, seed="hangup44", index=0)
    server, port = _start(tmp_path)
    try:
        whole = _frame(["play", "h", msgspec.Raw(ev.encode(source[0]))])
        for cut in (1, 3, 4, 5, len(whole) - 1):  # inside the length, inside the body
            with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
                sock.sendall(whole[:cut])
        # nothing of those half frames was recorded: the table still expects seq 0
        assert _ask(port, ["next", "h", None]) == ["next", "h", 0]
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(b"".join(_frame(["play", "h", msgspec.Raw(ev.encode(e))])
                                  for e in source[:50]))
            sock.shutdown(socket.SHUT_RDWR)  # gone before any answer
        deadline = time.monotonic() + 10
        while (seq := _ask(port, ["next", "h", None])[2]) < 50 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert seq == 50  # the moves it had read were recorded; the rest of the table goes on
        assert _ask(port, ["play", "h", msgspec.Raw(ev.encode(source[50]))]) == ["ok", "h", 50]
    finally:
        _stop(server)
    assert log.read_events(tmp_path / "h.blog") == source[:51]


def test_garbage_of_every_shape_is_refused_in_one_line_and_nothing_is_written(
        tmp_path: Path) -> None:
    rng = random.Random("garbage44")
    source = simulate_match(preset("classic"), 2, seed="garbage44", index=0)
    server, port = _start(tmp_path)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            shapes: list[tuple[bytes, str]] = [
                (_frame([1, 2, 3]), "frame"),
                (_frame(["play"]), "frame"),
                (struct.pack(">I", 0), "frame"),  # an empty body
                (_frame(["play", 7, None]), "frame"),
                (_frame(["play", "g", msgspec.Raw(b"\xc1")]), "frame"),  # never valid msgpack
                (_frame(["play", "g", msgspec.Raw(msgspec.msgpack.encode({"x": 1}))]),
                 "event"),
                (_frame(["play", "../g", msgspec.Raw(ev.encode(source[0]))]), "validate"),
                (_frame(["nope", "g", None]), "op"),
            ]
            for _ in range(40):
                body = rng.randbytes(rng.randint(1, 200))
                shapes.append((struct.pack(">I", len(body)) + body, ""))
            for data, rule in shapes:
                sock.sendall(data)
                reply = _receive(sock)
                assert reply[0] == "refused", (data, reply)
                if rule:
                    assert reply[2] == rule, (data, reply)
                assert all("\n" not in str(part) for part in reply)
            sock.sendall(_frame(["play", "g", msgspec.Raw(ev.encode(source[0]))]))
            assert _receive(sock) == ["ok", "g", 0]  # the same connection goes on
    finally:
        _stop(server)
    assert log.read_events(tmp_path / "g.blog") == source[:1]
    assert sorted(p.name for p in tmp_path.glob("*.blog")) == ["g.blog"]


@pytest.mark.slow
def test_many_clients_flooding_hanging_up_and_sending_garbage_at_once(tmp_path: Path) -> None:
    """Twelve rounds of four clients at once: one floods and never reads, one hangs up
    mid-frame, one sends garbage, one plays its table properly; the player's every move is
    acknowledged and in its log, the server's memory stays bounded, nothing on stderr."""
    import threading

    rng = random.Random("soak44")
    server, port = _start(tmp_path, "--drain-timeout", "1", "--max-in-flight", "128")
    errors: list[BaseException] = []
    before = _rss_kb(server.pid)
    peak = before

    def guard(fn: Any, *args: Any) -> None:
        try:
            fn(*args)
        except BaseException as exc:  # reported below
            errors.append(exc)

    def flooder(n: int) -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            _send_for(sock, _flood(_sources(8, "soak", f"z{n}-")), 2)

    def hanger(n: int) -> None:
        data = _frame(["play", f"h{n}", msgspec.Raw(ev.encode(
            simulate_match(preset("classic"), 2, seed="h", index=n)[0]))])
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(data[:rng.randint(1, len(data) - 1)])

    def garbage(n: int) -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            for _ in range(100):
                body = rng.randbytes(rng.randint(1, 100))
                sock.sendall(struct.pack(">I", len(body)) + body)
                assert _receive(sock)[0] == "refused"

    def player(n: int) -> None:
        source = simulate_match(preset("classic"), 2, seed="p", index=n)[:100]
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            for event in source:
                sock.sendall(_frame(["play", f"p{n}", msgspec.Raw(ev.encode(event))]))
                assert _receive(sock) == ["ok", f"p{n}", event.seq]

    try:
        for n in range(12):
            threads = [threading.Thread(target=guard, args=(fn, n))
                       for fn in (flooder, hanger, garbage, player)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)
                peak = max(peak, _rss_kb(server.pid))
        assert not errors, errors
        assert peak - before < 60_000, (before, peak)
    finally:
        _stop(server)
    for n in range(12):
        assert log.read_events(tmp_path / f"p{n}.blog") == simulate_match(
            preset("classic"), 2, seed="p", index=n)[:100]
