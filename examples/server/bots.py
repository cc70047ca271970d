"""Bot players for the example server: each table is a match the simulator's bots play, sent
move by move over the socket, each next move only after the last one was acknowledged.

    python examples/server/bots.py PORT [--tables 20] [--players 2] [--preset classic]
        [--seed bots] [--pace 0] [--prefix t] [--moves 0]

``--moves N`` stops each table after its first N moves (0: play the whole match).
Prints one JSON summary: tables finished, moves acknowledged, refusals, p50/p99 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import struct
import sys
import time
from typing import Any

import msgspec

from buraco_log import events as ev
from buraco_log.rules import preset
from buraco_log.simulate import simulate_match

_LEN = struct.Struct(">I")
_reply = msgspec.msgpack.Decoder(list[Any])


def play_frame(table: str, event: ev.AnyEvent) -> bytes:
    body = msgspec.msgpack.encode(["play", table, msgspec.Raw(ev.encode(event))])
    return _LEN.pack(len(body)) + body


async def read_reply(reader: asyncio.StreamReader) -> list[Any]:
    (size,) = _LEN.unpack(await reader.readexactly(4))
    return _reply.decode(await reader.readexactly(size))


async def run(
    port: int,
    tables: int,
    players: int,
    rules: str,
    seed: str,
    pace: float,
    prefix: str,
    moves: int = 0,
) -> dict[str, Any]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    matches = {
        f"{prefix}{i}": simulate_match(preset(rules), players, seed=seed, index=i)[: moves or None]
        for i in range(tables)
    }
    nxt = dict.fromkeys(matches, 0)
    sent_at: dict[str, float] = {}
    latencies: list[float] = []
    refused: list[list[Any]] = []
    for table, events in matches.items():
        sent_at[table] = time.perf_counter()
        writer.write(play_frame(table, events[0]))
    await writer.drain()
    live = len(matches)
    while live:
        reply = await read_reply(reader)
        kind, table = reply[0], reply[1]
        if kind == "refused" and table == "":  # the connection's, not a move's: "busy"
            raise ConnectionRefusedError(0, f"refused ({reply[2]}): {reply[3]}")
        if kind != "ok":
            refused.append(reply)
            live -= 1
            continue
        latencies.append(time.perf_counter() - sent_at[table])
        nxt[table] = reply[2] + 1
        if nxt[table] == len(matches[table]):
            live -= 1
            continue
        if pace:
            await asyncio.sleep(pace)
        sent_at[table] = time.perf_counter()
        writer.write(play_frame(table, matches[table][nxt[table]]))
        await writer.drain()
    writer.close()
    q = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [0.0] * 99
    return {
        "tables": sum(nxt[t] == len(m) for t, m in matches.items()),
        "moves": len(latencies),
        "refused": refused,
        "p50_ms": round(q[49] * 1e3, 2),
        "p99_ms": round(q[98] * 1e3, 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("port", type=int)
    ap.add_argument("--tables", type=int, default=20)
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--preset", default="classic")
    ap.add_argument("--seed", default="bots")
    ap.add_argument("--pace", type=float, default=0.0)
    ap.add_argument("--prefix", default="t")
    ap.add_argument("--moves", type=int, default=0)
    a = ap.parse_args()
    try:
        summary = asyncio.run(
            run(a.port, a.tables, a.players, a.preset, a.seed, a.pace, a.prefix, a.moves)
        )
    except (OSError, asyncio.IncompleteReadError) as exc:  # no server there, or it went away:
        # one line, not a traceback (the moves acknowledged before are in their logs; a
        # restarted server tells each table's next seq: ["next", TABLE, null])
        gone = (asyncio.IncompleteReadError, ConnectionResetError, ConnectionAbortedError,
                BrokenPipeError)
        why = "the server hung up" if isinstance(exc, gone) else exc.strerror or str(exc)
        print(f"bots: 127.0.0.1:{a.port}: {why}", file=sys.stderr)
        sys.exit(1)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
