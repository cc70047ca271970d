"""An example game server that records every move through ``buraco_log.recorder``.

    python examples/server/server.py LOGDIR [--port 0] [--window 0.002] [--max-open N]
        [--sync fsync|syncfs|journal] [--gc-freeze SECONDS] [--gc-young N]
        [--max-in-flight 4096] [--drain-timeout 10] [--max-clients N] [--frame-timeout 10]
        [--loaders 2] [--read-rest 1] [--switch-interval 0.001] [--max-tables 10000]
        [--max-live-tables 50000] [--forget-idle 600] [--sync-threads 16]

It listens on 127.0.0.1 only and hosts any number of tables. Players (here: bots, see
``bots.py``) send moves; the server validates each move by the rules, records it, and only once
the move is durable on disk answers "ok" (and could then show it to the other players). A move
the rules refuse is answered with the rule id and changes nothing. This is the documented way
a real game server uses buraco_log: one ``Recorder`` per process, ``await
recorder.append_async(table, event)`` per move, acknowledge after it returns.

Protocol: frames of a 4-byte big-endian length and a MessagePack array, both ways.
    -> ["play", TABLE, EVENT]      EVENT: the event exactly as in a log (``events.encode``)
    <- ["ok", TABLE, SEQ]          durable
    <- ["refused", TABLE, RULE, MESSAGE]   illegal move, wrong seq, bad event, a match id another
                                           live table plays (RULE "duplicate"), a table past
                                           the connection's --max-tables (RULE "tables"), a
                                           table past the server's --max-live-tables (RULE
                                           "full": send it again later): nothing recorded;
                                           RULE "error": the server failed (out of memory):
                                           ask "next" what the table holds
    -> ["next", TABLE, null]       <- ["next", TABLE, SEQ]: the seq the table expects (resume)
    -> ["stats", "", null]         <- ["stats", "", {counters}]  (the recorder's, and
                                   in_flight_peak, dropped: see below)
    <- ["refused", "", "stopping", MESSAGE]   the server stops (SIGTERM, SIGINT): the last
                                   frame of every connection, after the answers of the moves
                                   it received; a move sent and not answered was not recorded
A client may send moves of many tables without waiting; answers come as each move is durable
(a "next" whose table's log must be read first may be answered after later requests).
A connection holds at most ``--max-in-flight`` moves whose answer is not written yet (waiting
for the disk): past that the server stops reading it, and TCP holds the client back. Nor does
it read a connection whose client has not taken its earlier answers (the socket's buffers and
the server's past its high-water mark, 64 kB): an answer the client does not take within
``--drain-timeout`` seconds drops the client; its moves already received are still recorded,
and it resumes with "next". (Without either, a client that sent moves and never read its
answers made the server hold every move it sent: 120,000 moves took its memory from 26 MB to
160 MB. With each move waiting for its answer to be taken, such a client held
``--max-in-flight`` moves until it was dropped: 27 MB of the server's memory at 4,096.)
At most ``--max-clients`` connections at a time (by default the soft limit on open files less
the recorder's ``max_open`` and 32): one more is answered ``["refused", "", "busy", MESSAGE]``
and closed (a client that sent a request first may see the connection reset instead: the
kernel resets a connection closed with data unread). Without it, clients that connected and
sent nothing took every descriptor: a new table's log could not be opened, its first move was
refused "Too many open files", and asyncio's accept, failing, wrote 30 MB of tracebacks in
25 s (the server now accepts itself: see ``Server.accept``). A request begun must arrive whole
within ``--frame-timeout`` seconds, else the client is dropped (a client sending half a frame
and stalling held its connection for ever); between requests a client may wait as long as it
likes. The first line on stdout is ``listening 127.0.0.1 PORT``; SIGTERM or SIGINT stops the
server after the moves already received are durable.

A table's log is read (and replayed whole) at its first use, and an ended table's at each use
(the recorder keeps no ended table): the server does that on ``--loaders`` threads, never in its
event loop, one request at a time a connection, a table's requests in the order received (see
``Server.off_loop``); a move is still answered "ok" only once durable. In the loop, a client
asking over and over of a sealed log of 43,000 events (65 ms a read) held every other table's
moves: 50 players' p50 went from 16 ms to 5.1 s (p99 12 s). A thread reading holds Python's
lock on the interpreter for long stretches, so after each read its loader rests as long as the
read took (``--read-rest``, a multiple of it) and the interpreter switches threads every
``--switch-interval`` seconds (Python's 0.005): reading, the loop's every wait for the disk or a
socket cost it up to that long. A connection plays at most ``--max-tables`` tables at a time
(10,000; 0: no limit), each held in the recorder's memory until it ends: the first move of one
more is refused (RULE "tables") until one of them ends or the client reconnects. Without it one
client could start tables until the server ran out of memory.

The server as a whole holds at most ``--max-live-tables`` tables (50,000; 0: no limit) in the
recorder's memory, about 11 kB each: a table is held from its first move (or its resuming
"next") until its match ends, whether or not its players are still connected. At the limit,
the tables without a move for ``--forget-idle`` seconds (600; 0: never) are let go first
(``Recorder.forget``: their logs stay, and their next move reads them again); if none is that
idle, the first move of one more table is answered ``["refused", TABLE, "full", MESSAGE]``,
nothing recorded, and may be sent again later. (``--max-tables`` alone bounded one connection:
clients that reconnected, or many connections, started tables without bound; 5,000 tables took
54 MB, and under a limit on memory, ``ulimit -v``, the server failed instead of refusing.)

``--sync`` is the recorder's way of making a round durable (docs/recorder.md: ``journal`` for
thousands of tables). ``--gc-freeze S`` calls ``gc.freeze()`` every S seconds: with thousands
of tables, Python's full collections would otherwise walk every table's state in one pause
(about 15 ms per 1,000 tables), which is most of the p99 latency at 10,000 tables.
``--gc-young N`` sets the collector's youngest threshold (``gc.set_threshold``; Python's is
700): a move's objects live until its table's next move, seconds later, so the young
collections Python's thresholds run about 6 times a second scan thousands of them for nothing.
At 10,000 tables 200,000 took the p99 from 11.6-197 ms (median 29.5) to 9.1-53.5 ms
(median 12.2) (docs/recorder.md).

Under a limit on address space (``ulimit -v``) count the threads, not the tables: with
``--sync fsync`` the recorder runs ``--sync-threads`` (16) threads to write and sync logs side
by side, each reserving an 8 MiB stack and, at its first allocation, a C library arena of up
to 64 MiB: the server holding 500 tables took 35 MB of memory and 1.1 GB of address space
(186 MB with ``journal``, 3 threads; 244 MB with ``MALLOC_ARENA_MAX=2``). The recorder starts
its threads as it opens, and a server that cannot start them exits at once, in one line naming
the limit. (They were started at the first rounds: under ``ulimit -v 1000000`` every table of
those rounds was refused for good, "recorder error: RuntimeError("can't start new thread")" or
"MemoryError", 1,928 of 2,000 first moves.) A move the server fails on (out of memory) is
answered ``["refused", TABLE, "error", ...]``; a connection it fails on is told so before it
is closed.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import gc
import os
import resource
import signal
import socket
import struct
import sys
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

from buraco_log import events as ev
from buraco_log.errors import BuracoLogError, IllegalMoveError, LogFormatError
from buraco_log.recorder import Recorder

MAX_FRAME = 1 << 20
BACKLOG = 4096
ACCEPT_RETRY = 0.1
"""Seconds before accepting again once out of descriptors (asyncio's: 1)."""
"""Connections the kernel holds before the server accepts them (see ``Server.listen``)."""
YIELD_EVERY = 16
"""Requests read from one connection before the others get their turn. Reading a frame already
buffered does not give up the event loop: a client sending moves the server refuses at once
(a sealed table's, past its end) had up to a buffer's worth (about 1,300) taken and answered
in each turn, and another client's move waited 1 to 3 s. Every request: 20 to 50% fewer moves
a second from one client sending without waiting; every 16: the same as without."""
RESERVED_FDS = 32
"""Descriptors kept beside the recorder's and the clients' (stdio, the event loop's, the
listening socket, a busy client's refusal)."""
OFF_LOOP_PER_CONNECTION = 1
"""A connection's requests read on the loaders' threads at a time: one client asking of long
logs over and over takes one thread, not all of them."""
OFF_LOOP_QUEUED = 32
"""A connection's requests waiting for a loader, at most: past that the server stops reading
it (a client sending moves for a sealed table as fast as it could had 4,096 of them waiting,
19 MB of the server's memory; they had been refused at once, read in the loop)."""
REST_FROM = 0.002
"""Seconds a read takes before its loader rests (``--read-rest``): a shorter rest costs a turn
of the loop's timer, 1 ms at least, for a read that held the interpreter a moment."""
FORGET_AT_ONCE = 256
"""Idle tables let go in one look at the ``--max-live-tables`` limit (each a ``forget``, a
close of its log): the loop is not held for thousands at once."""
PRUNE_EVERY = 1.0
"""Seconds between looks, for a connection at its ``--max-tables``, for its tables ended by
another connection (each look costs a lookup a table)."""
_T = TypeVar("_T")
_LEN = struct.Struct(">I")
_request = msgspec.msgpack.Decoder(tuple[str, str, msgspec.Raw])
_encode = msgspec.msgpack.Encoder().encode


def frame(message: Any) -> bytes:
    body = _encode(message)
    return _LEN.pack(len(body)) + body


class _Tables:
    """The tables a connection plays: those with a move of its waiting for its answer, and
    those it had a move recorded in and has not seen end."""

    def __init__(self) -> None:
        self.waiting: dict[str, int] = {}
        self.live: set[str] = set()
        self.count = 0  # tables in either
        self.pruned = 0.0  # when the ended ones were last looked for (loop time)

    def __contains__(self, table: str) -> bool:
        return table in self.waiting or table in self.live

    def take(self, table: str) -> None:
        self.count += table not in self
        self.waiting[table] = self.waiting.get(table, 0) + 1

    def settle(self, table: str, recorded: bool, ended: bool) -> None:
        left = self.waiting[table] - 1
        if left:
            self.waiting[table] = left
        else:
            del self.waiting[table]
        if ended:
            self.live.discard(table)
        elif recorded:
            self.live.add(table)
        self.count -= table not in self

    def prune(self, keep: Callable[[str], bool]) -> None:
        """Let go of the live tables ``keep`` says are no longer held (ended elsewhere)."""
        gone = {t for t in self.live if not keep(t)}
        self.live -= gone
        self.count -= sum(1 for t in gone if t not in self.waiting)


class _Turn:
    """A request's place among its connection's: the connection's loader ``gate``, and its
    place in the connection's queue for the loaders (``queued``, None: taken in the loop)."""

    def __init__(self, gate: asyncio.Semaphore, queued: asyncio.Semaphore | None) -> None:
        self.gate = gate
        self.queued = queued
        self.admitted: Server | None = None  # counted in its ``admitting`` until done

    def done(self) -> None:
        """Its call on a loader is over (or it needed none)."""
        if self.queued is not None:
            self.queued.release()
            self.queued = None
        if self.admitted is not None:
            self.admitted.admitting -= 1
            self.admitted = None


class _Slots:
    """A connection's moves whose answer is not written yet: at most ``limit``."""

    def __init__(self, limit: int) -> None:
        self._free = asyncio.Semaphore(limit)
        self.held = 0

    async def take(self) -> None:
        await self._free.acquire()
        self.held += 1

    def give(self) -> None:
        self.held -= 1
        self._free.release()


def default_max_clients(recorder: Recorder) -> int:
    """The connections the descriptors left beside the recorder's allow."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft < 0:  # RLIM_INFINITY
        return 1 << 20
    return max(1, soft - recorder.max_open - RESERVED_FDS)


STOPPING = ("the server is stopping: every move answered \"ok\" is recorded, and no other: "
            "send the others again once it is back (\"next\" says where each table stands)")
"""The last frame of every connection open when the server stops (SIGTERM, SIGINT)."""


async def _read_to_end(reader: asyncio.StreamReader) -> None:
    """Take and drop what the client sends until it closes (see ``Server.hang_up``)."""
    with contextlib.suppress(OSError):
        while await reader.read(65536):
            pass


class Server:
    def __init__(self, recorder: Recorder, max_in_flight: int = 4096,
                 drain_timeout: float = 10.0, max_clients: int | None = None,
                 frame_timeout: float = 10.0, loaders: int = 2,
                 max_tables: int = 10_000, read_rest: float = 1.0,
                 max_live_tables: int = 50_000, forget_idle: float = 600.0) -> None:
        self.recorder = recorder
        self.max_live_tables = max(0, max_live_tables)
        self.forget_idle = max(0.0, forget_idle)
        self.admitting = 0  # requests of tables not held yet, reading their logs (off_loop)
        self.last_move: OrderedDict[str, float] = OrderedDict()  # held tables, by last move
        self.full = 0  # requests refused at max_live_tables
        self.let_go = 0  # idle tables let go at max_live_tables
        self.loaders = concurrent.futures.ThreadPoolExecutor(max(1, loaders),
                                                             thread_name_prefix="server-load")
        self.reading = asyncio.Semaphore(max(1, loaders))  # a loader is busy, or rests
        self.read_rest = max(0.0, read_rest)
        self.tails: dict[str, asyncio.Future[None]] = {}  # a table's last call off the loop
        self.max_tables = max(0, max_tables)
        self.off_loop_calls = 0  # requests that read a log on the loaders' threads
        self.over_tables = 0  # first moves refused past max_tables
        self.clients: set[asyncio.Task[None]] = set()
        self.max_in_flight = max(1, max_in_flight)
        self.drain_timeout = drain_timeout
        self.max_clients = (default_max_clients(recorder) if max_clients is None
                            else max(1, max_clients))
        self.frame_timeout = frame_timeout
        self.partial: dict[asyncio.WriteTransport, float] = {}  # mid-request since (loop time)
        self.in_flight_peak = 0  # the most moves one connection held unanswered
        self.dropped = 0  # clients dropped for not reading their answers
        self.turned_away = 0  # connections refused past max_clients
        self.stalled = 0  # clients dropped for a request not whole within frame_timeout
        self.accept_failures = 0  # accepts that failed (out of descriptors)
        self._accept_said = -1.0  # when the last accept failure was reported
        self.stopping = asyncio.Event()  # set at SIGTERM: no answer waits for its client

    def counters(self) -> dict[str, Any]:
        """The recorder's counters and the server's own."""
        counters: dict[str, Any] = msgspec.to_builtins(self.recorder.stats())
        counters.update(in_flight_peak=self.in_flight_peak, dropped=self.dropped,
                        connected=len(self.clients), turned_away=self.turned_away,
                        stalled=self.stalled,
                        accept_failures=self.accept_failures,
                        off_loop=self.off_loop_calls, over_tables=self.over_tables,
                        full=self.full, let_go=self.let_go)
        return counters

    def listen(self, port: int) -> int:
        """Listen on 127.0.0.1; return the port. A backlog of thousands (the kernel caps it at
        net.core.somaxconn): asyncio's 100 let the 101st client connecting at once lose its
        SYN, and wait 1 s (then 3 s) to retry."""
        self.listener = socket.create_server(("127.0.0.1", port), backlog=BACKLOG)
        self.listener.setblocking(False)
        asyncio.get_running_loop().add_reader(self.listener.fileno(), self.accept)
        port_: int = self.listener.getsockname()[1]
        return port_

    def accept(self) -> None:
        """Take the connections waiting: a client each while fewer than ``max_clients`` are
        connected, else answered "busy" and closed before the next is taken. asyncio's own
        accept took up to the backlog's 4,096 in one turn before any was closed (past
        ``max_clients`` they took the descriptors kept for the logs), and out of descriptors
        it logged a traceback for each of them, again every second (CPython gh-151615)."""
        loop = asyncio.get_running_loop()
        for _ in range(BACKLOG):
            try:
                conn, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue
            except OSError as exc:  # out of descriptors: one line a second, a retry soon
                self.accept_failures += 1
                if loop.time() - self._accept_said >= 1.0:
                    self._accept_said = loop.time()
                    print(f"server: a connection could not be accepted: {exc} "
                          f"({self.accept_failures} so far)", file=sys.stderr, flush=True)
                loop.remove_reader(self.listener.fileno())
                loop.call_later(ACCEPT_RETRY, self.resume_accepting)
                return
            if len(self.clients) >= self.max_clients:  # keep descriptors for the logs
                self.turned_away += 1
                with contextlib.suppress(OSError):  # a few bytes: the socket's buffer takes them
                    conn.setblocking(False)
                    conn.send(frame(["refused", "", "busy", f"{len(self.clients)} clients "
                                     f"connected, at most {self.max_clients}; try again later"]))
                conn.close()
                continue
            task = loop.create_task(self.connect(conn))
            self.clients.add(task)  # counted now: the next one accepted sees it

    def resume_accepting(self) -> None:
        if not self.stopping.is_set():
            asyncio.get_running_loop().add_reader(self.listener.fileno(), self.accept)

    def close_listener(self) -> None:
        asyncio.get_running_loop().remove_reader(self.listener.fileno())
        self.listener.close()

    async def connect(self, conn: socket.socket) -> None:
        """A client's streams, then ``handle``."""
        loop = asyncio.get_running_loop()
        try:
            reader = asyncio.StreamReader()
            protocol = asyncio.StreamReaderProtocol(reader)
            transport, _ = await loop.connect_accepted_socket(lambda: protocol, conn)
        except BaseException:  # a stop meanwhile, or the client gone
            self.clients.discard(asyncio.current_task())
            conn.close()
            return
        await self.handle(reader, asyncio.StreamWriter(transport, protocol, reader, loop))

    async def sweep(self) -> None:
        """Drop the clients whose request has not come whole within ``frame_timeout``."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(min(1.0, self.frame_timeout / 4))
            late = loop.time() - self.frame_timeout
            for transport, since in list(self.partial.items()):
                if since < late:
                    del self.partial[transport]
                    self.stalled += 1
                    transport.abort()  # its reader sees the end: its moves are answered

    @staticmethod
    def send(writer: asyncio.StreamWriter, message: Any) -> bool:
        """Write one answer, without waiting for the client to take it (the connection's reader
        waits, see ``taken``). False: the connection is gone."""
        if writer.is_closing():
            return False
        writer.write(frame(message))
        return True

    async def taken(self, writer: asyncio.StreamWriter) -> bool:
        """Before the next request is read: while the client has not taken earlier answers
        (the buffer is past its high-water mark), wait at most ``drain_timeout`` seconds, else
        drop the client. False: the connection is gone, or the server stops.

        The connection's reader waits, not each move's task: each move whose answer found the
        buffer full waited in its own task (with a timer and two more tasks), and a client
        that sent moves and never read held ``--max-in-flight`` of them until it was dropped,
        27 MB of the server's memory a client at 4,096 (100 such clients: 2.7 GB). The reader
        waiting, the buffer holds at most the answers of the moves already read past it."""
        if writer.is_closing():
            return False
        transport = writer.transport
        if transport.get_write_buffer_size() <= transport.get_write_buffer_limits()[1]:
            return True  # the common case: no wait (and no timer) per request
        if self.stopping.is_set():
            return False
        # Until the client takes it, the server stops, or the timeout. (A stop waited for
        # the timeout: a client that did not read kept a SIGTERM waiting --drain-timeout
        # seconds after its last move was durable.)
        drained = asyncio.ensure_future(writer.drain())
        stopped = asyncio.ensure_future(self.stopping.wait())
        try:
            done, _ = await asyncio.wait((drained, stopped), timeout=self.drain_timeout,
                                         return_when=asyncio.FIRST_COMPLETED)
        finally:
            drained.cancel()
            stopped.cancel()
        if drained in done:
            return not drained.cancelled() and drained.exception() is None  # ConnectionError
        if stopped in done:
            return False
        self.dropped += 1  # a client that never reads: its answers piled up here
        transport.abort()
        return False

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        pending: set[asyncio.Task[None]] = set()
        me = asyncio.current_task()
        assert me is not None
        self.clients.add(me)
        try:
            await self.serve_client(reader, writer, pending)
        except asyncio.CancelledError:
            # The server stops (``stop_clients``): the moves received get their answers. Not
            # raised on: a cancelled connection task made asyncio's stream callback print a
            # traceback (Python 3.11) for every client still connected at a SIGTERM.
            if pending:
                await asyncio.wait(pending)
        except Exception as exc:  # (out of memory, a defect): say so before hanging up; the
            # connection was closed without a word, its client waiting for answers
            self.send(writer, ["refused", "", "error", f"the server failed reading this "
                               f"connection ({type(exc).__name__}: {exc}); the moves "
                               "answered stand: reconnect and ask \"next\""])
            if pending:
                await asyncio.wait(pending)
        finally:
            self.clients.discard(me)
            if self.stopping.is_set() and self.send(writer, ["refused", "", "stopping",
                                                              STOPPING]):
                await self.hang_up(reader, writer)
            writer.close()

    @staticmethod
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """At a stop: end the connection's sending side after the last answers, and take
        what the client still sends (for a second at most) before it is closed. Closed at
        once, a client's unread request made the kernel reset the connection, and a client
        could lose the answers and the notice just sent: each of 100 clients playing when
        the server stopped saw its connection reset or cut, without a word."""
        with contextlib.suppress(OSError, RuntimeError):
            if writer.can_write_eof():
                writer.write_eof()
        drained = asyncio.ensure_future(_read_to_end(reader))
        try:
            await asyncio.wait((drained,), timeout=1.0)
        finally:
            drained.cancel()

    async def stop_clients(self) -> None:
        """Stop reading from every connected client; each answers the moves it received,
        without waiting for a client to take its answers (the moves are durable by then)."""
        self.stopping.set()
        for task in list(self.clients):
            task.cancel()
        await asyncio.gather(*self.clients, return_exceptions=True)

    async def serve_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                           pending: set[asyncio.Task[None]]) -> None:
        slots = _Slots(self.max_in_flight)
        mine = _Tables()
        gate = asyncio.Semaphore(OFF_LOOP_PER_CONNECTION)
        queued = asyncio.Semaphore(OFF_LOOP_QUEUED)
        transport = writer.transport
        clock = asyncio.get_running_loop().time
        taken = 0
        while True:
            taken += 1
            if not taken % YIELD_EVERY:  # let the other clients in (see YIELD_EVERY)
                await asyncio.sleep(0)
            if not await self.taken(writer):  # no more requests while answers pile up
                break
            try:
                head = await reader.readexactly(1)  # between requests: no time limit
                self.partial[transport] = clock()  # the rest within frame_timeout (sweep)
                (size,) = _LEN.unpack(head + await reader.readexactly(3))
                if size > MAX_FRAME:  # not our client: say why, and hang up
                    self.send(writer, ["refused", "", "frame", f"a frame of {size} "
                                       f"bytes: at most {MAX_FRAME}; hanging up"])
                    break
                body = await reader.readexactly(size)
                self.partial.pop(transport, None)
                op, table, raw = _request.decode(body)
            except (asyncio.IncompleteReadError, ConnectionError):
                break
            except msgspec.DecodeError:
                if not self.send(writer, ["refused", "", "frame", "not a request"]):
                    break
                continue
            if op == "play" and table not in mine and self.over(mine):
                self.over_tables += 1
                if not self.send(writer, [
                        "refused", table, "tables", f"this connection plays {mine.count} "
                        f"tables, at most {self.max_tables} (--max-tables): end one first"]):
                    break
                continue
            ready = self.ready(table)
            if (op == "play" or (op == "next" and not ready)) and self.at_limit(table):
                self.full += 1
                if not self.send(writer, [
                        "refused", table, "full", f"the server holds {self.recorder.held()} "
                        f"live tables, at most {self.max_live_tables} (--max-live-tables); "
                        "nothing was recorded: send it again later"]):
                    break
                continue
            if op == "play" or (op == "next" and not ready):
                # Validation happens now, in arrival order; the wait for the disk does not
                # hold up the next request. At most max_in_flight at a time: each holds its
                # move until its answer is written.
                if not ready:
                    await queued.acquire()
                await slots.take()
                if writer.is_closing():  # dropped meanwhile: this move is not taken
                    slots.give()
                    if not ready:
                        queued.release()
                    break
                turn = _Turn(gate, None if ready else queued)
                if not ready:  # counted as held until its log is read (see at_limit)
                    self.admitting += 1
                    turn.admitted = self
                if table in self.last_move:  # in use: not let go meanwhile (at_limit)
                    self.last_move.move_to_end(table)
                    self.last_move[table] = asyncio.get_running_loop().time()
                if op == "play":
                    mine.take(table)
                    work = self.play(writer, table, raw, slots, turn, mine)
                else:
                    work = self.ask_next(writer, table, slots, turn)
                task = asyncio.create_task(work)
                pending.add(task)
                task.add_done_callback(pending.discard)
                self.in_flight_peak = max(self.in_flight_peak, slots.held)
                continue
            if op == "next":
                try:  # a name that is no file name, or a log that cannot be read
                    reply: list[Any] = ["next", table, self.recorder.next_seq(table)]
                except LogFormatError as exc:
                    reply = ["refused", table, exc.kind, exc.message]
            elif op == "stats":
                reply = ["stats", "", self.counters()]
            else:
                reply = ["refused", table, "op", f"unknown op {op!r}"]
            if not self.send(writer, reply):
                break
        self.partial.pop(transport, None)
        if pending:
            await asyncio.wait(pending)

    def ready(self, table: str) -> bool:
        """A request of ``table`` reads no log: it may be taken in the loop. So is a new table's
        (no file at its name: one ``lstat``), or a name the recorder refuses at once: on the
        loaders' threads, a client naming new tables took 4 times as long (0.6 ms a name)."""
        if table in self.tails:
            return False  # after its earlier request, on a loader
        if self.recorder.loaded(table):
            return True
        try:
            path = self.recorder.path_of(table)
        except LogFormatError:
            return True
        return not os.path.lexists(path)

    def at_limit(self, table: str) -> bool:
        """A request of ``table`` would hold one more table than ``max_live_tables``, even
        after the tables idle for ``forget_idle`` seconds are let go."""
        if (not self.max_live_tables or table in self.tails
                or self.recorder.loaded(table)):
            return False
        if self.recorder.held() + self.admitting < self.max_live_tables:
            return False
        self.forget_idle_tables()
        return self.recorder.held() + self.admitting >= self.max_live_tables

    def forget_idle_tables(self) -> None:
        """Let go of the held tables without a move for ``forget_idle`` seconds (at most
        ``FORGET_AT_ONCE``): their logs stay, and their next move reads them again."""
        if not self.forget_idle:
            return
        before = asyncio.get_running_loop().time() - self.forget_idle
        for _ in range(FORGET_AT_ONCE):
            oldest = next(iter(self.last_move.items()), None)
            if oldest is None or oldest[1] > before:
                return
            table = oldest[0]
            del self.last_move[table]
            if table in self.tails or not self.recorder.loaded(table):
                continue  # a request of it reads its log now, or it is gone already
            self.recorder.forget(table)  # nothing of it unsettled: closes its log at once
            self.let_go += 1

    def moved(self, table: str, ended: bool) -> None:
        """A request of ``table`` was answered: it is held, and was used now (or it ended)."""
        if ended or not self.recorder.loaded(table):
            self.last_move.pop(table, None)
        else:
            self.last_move[table] = asyncio.get_running_loop().time()
            self.last_move.move_to_end(table)

    def over(self, mine: _Tables) -> bool:
        """A connection playing ``mine`` may start no other table (``max_tables``)."""
        if not self.max_tables or mine.count < self.max_tables:
            return False
        now = asyncio.get_running_loop().time()
        if now - mine.pruned >= PRUNE_EVERY:  # its tables another connection ended
            mine.pruned = now
            mine.prune(self.recorder.loaded)
        return mine.count >= self.max_tables

    async def off_loop(self, table: str, gate: asyncio.Semaphore,
                       call: Callable[..., _T], *args: Any, moves: bool = True) -> _T:
        """``call(*args)`` on a loaders' thread: it may read ``table``'s log. After the earlier
        calls of the table (the recorder takes a table's moves in the order they came), and
        one at a time a connection (``gate``). In the loop, reading a sealed log of 43,000
        events held every other table 65 ms, and a client asking of it again and again held
        them seconds (see the module's docstring). Once the server stops, a call that records
        no move (``moves=False``) is refused instead: a stop waited for every such request
        received, 25 s for three clients asking of a sealed log of 43,000 events."""
        loop = asyncio.get_running_loop()
        before = self.tails.get(table)
        turn: asyncio.Future[None] = loop.create_future()
        self.tails[table] = turn

        def next_call() -> None:  # the table's next call may go
            if not turn.done():
                turn.set_result(None)
            if self.tails.get(table) is turn:
                del self.tails[table]

        try:
            if before is not None:
                await asyncio.wait((before,))
            async with gate, self.reading:
                if not moves and self.stopping.is_set():
                    raise LogFormatError("the server is stopping", kind="closed")
                self.off_loop_calls += 1
                began = loop.time()
                running = loop.run_in_executor(self.loaders, call, *args)
                try:
                    return await asyncio.shield(running)
                except asyncio.CancelledError:  # the table's next call waits for this one
                    await asyncio.wait((running,))
                    raise
                finally:
                    next_call()
                    took = loop.time() - began
                    if (took >= REST_FROM and not running.cancelled()  # a loader, and the
                            and not self.stopping.is_set()):  # connection, rest
                        await asyncio.sleep(took * self.read_rest)
        finally:
            next_call()

    async def ask_next(self, writer: asyncio.StreamWriter, table: str, slots: _Slots,
                       turn: _Turn) -> None:
        try:
            try:  # a name that is no file name, or a log that cannot be read
                reply: list[Any] = [
                    "next", table, await self.off_loop(table, turn.gate, self.recorder.next_seq,
                                                       table, moves=False)]
            except LogFormatError as exc:
                reply = ["refused", table, exc.kind, exc.message]
            self.moved(table, False)
            self.send(writer, reply)
        finally:
            turn.done()
            slots.give()

    async def play(self, writer: asyncio.StreamWriter, table: str, raw: msgspec.Raw,
                   slots: _Slots, turn: _Turn, mine: _Tables) -> None:
        recorded = ended = False
        try:
            try:
                event = ev.decode(bytes(raw))
                if self.ready(table):  # in memory: validated here, at once
                    seq = await self.recorder.append_async(table, event)
                else:  # its log is read first: off the loop
                    try:
                        future = await self.off_loop(table, turn.gate, self.recorder.submit,
                                                     table, event)
                    finally:
                        turn.done()
                    seq = await asyncio.wrap_future(future)
                recorded, ended = True, isinstance(event, ev.MatchEnded)
            except IllegalMoveError as exc:
                reply: list[Any] = ["refused", table, exc.rule, exc.explanation]
            except LogFormatError as exc:
                reply = ["refused", table, exc.kind, exc.message]
            except (BuracoLogError, msgspec.DecodeError, msgspec.ValidationError) as exc:
                reply = ["refused", table, "event", str(exc)]
            except Exception as exc:  # out of memory, a defect: the move got no answer (the
                # task died, its exception logged), and its client waited for ever
                reply = ["refused", table, "error", f"the server could not take this move "
                         f"({type(exc).__name__}: {exc}); ask \"next\" what the table holds"]
            else:
                reply = ["ok", table, seq]
            self.moved(table, ended)
            self.send(writer, reply)
        finally:
            turn.done()
            mine.settle(table, recorded, ended)
            slots.give()


async def freeze_every(seconds: float) -> None:
    """Keep the long-lived tables out of the cyclic collector's full passes (see above)."""
    while True:
        await asyncio.sleep(seconds)
        gc.freeze()


async def serve(directory: str, port: int, window: float, max_open: int | None,
                sync: str = "fsync", gc_freeze: float = 0.0, gc_young: int = 0,
                max_in_flight: int = 4096, drain_timeout: float = 10.0,
                max_clients: int | None = None, frame_timeout: float = 10.0,
                loaders: int = 2, max_tables: int = 10_000,
                switch_interval: float = 0.001, read_rest: float = 1.0,
                max_live_tables: int = 50_000, forget_idle: float = 600.0,
                sync_threads: int = 16) -> None:
    if switch_interval > 0:
        sys.setswitchinterval(switch_interval)
    if gc_young > 0:
        gc.set_threshold(gc_young, *gc.get_threshold()[1:])
    # unique_match_ids: a second table starting a match id a live table holds is refused
    # (docs/recorder.md: what a game server passes; by default both were taken, two logs)
    recorder = Recorder(directory, window=window, max_open=max_open, sync=sync,
                        unique_match_ids=True, sync_threads=sync_threads)
    freezer = asyncio.create_task(freeze_every(gc_freeze)) if gc_freeze > 0 else None
    server_state = Server(recorder, max_in_flight, drain_timeout, max_clients, frame_timeout,
                          loaders, max_tables, read_rest, max_live_tables, forget_idle)
    if max_clients is None and server_state.max_clients < 64:
        print(f"server: {server_state.max_clients} clients at most beside the recorder's "
              f"{recorder.max_open} descriptors: raise the limit on open files (ulimit -n) "
              "or lower --max-open", file=sys.stderr, flush=True)
    loop = asyncio.get_running_loop()
    sweeper = asyncio.create_task(server_state.sweep()) if frame_timeout > 0 else None
    port = server_state.listen(port)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print("listening 127.0.0.1", port, flush=True)
    try:
        await stop.wait()
    finally:
        for task in (freezer, sweeper):
            if task is not None:
                task.cancel()
        server_state.close_listener()
        await server_state.stop_clients()
        server_state.loaders.shutdown(wait=True)
        recorder.flush(timeout=30)
        recorder.close()
        print("stopped", msgspec.json.encode(recorder.stats()).decode(), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("directory")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--window", type=float, default=0.002)
    ap.add_argument("--max-open", type=int, default=None)
    ap.add_argument("--sync", choices=("fsync", "syncfs", "journal"), default="fsync")
    ap.add_argument("--gc-freeze", type=float, default=0.0)
    ap.add_argument("--gc-young", type=int, default=0)
    ap.add_argument("--max-in-flight", type=int, default=4096)
    ap.add_argument("--drain-timeout", type=float, default=10.0)
    ap.add_argument("--max-clients", type=int, default=None)
    ap.add_argument("--frame-timeout", type=float, default=10.0)
    ap.add_argument("--loaders", type=int, default=2)
    ap.add_argument("--max-tables", type=int, default=10_000)
    ap.add_argument("--switch-interval", type=float, default=0.001)
    ap.add_argument("--read-rest", type=float, default=1.0)
    ap.add_argument("--max-live-tables", type=int, default=50_000)
    ap.add_argument("--forget-idle", type=float, default=600.0)
    ap.add_argument("--sync-threads", type=int, default=16)
    args = ap.parse_args()
    try:
        asyncio.run(serve(args.directory, args.port, args.window, args.max_open, args.sync,
                          args.gc_freeze, args.gc_young, args.max_in_flight,
                          args.drain_timeout, args.max_clients, args.frame_timeout,
                          args.loaders, args.max_tables, args.switch_interval,
                          args.read_rest, args.max_live_tables, args.forget_idle,
                          args.sync_threads))
    except BuracoLogError as exc:
        print(f"server: {exc}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
