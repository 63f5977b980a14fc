"""Time per decision of stdio bots (through the bridge) next to SDK bots (gRPC), as the referee
measures it.

One table of six on the real referee (127.0.0.1:0): seat 0 the shell example
(``clients/stdio/first_legal.sh``), seat 1 the plain Python example (``clients/stdio/lowest.py``),
both behind :func:`hearts_client.stdio_bridge.run_bridge` in this process, and four SDK bots
(``random``, the cheapest decisions, so the transport is what is measured). The figures are the
game record's ``ms`` per decision: from the referee sending the request to it receiving the
answer, i.e. the whole round trip, bridge and pipes included.

Usage::

    bench/stdio.py [--games 3] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc

from cancellation_hearts.v1 import admin_service_pb2 as apb
from cancellation_hearts.v1 import admin_service_pb2_grpc as agrpc
from hearts_client.bots import make_bot
from hearts_client.sdk import run_async
from hearts_client.stdio_bridge import bot_environment, run_bridge, start_process
from hearts_core.defaults import TablePolicy
from hearts_server.logs import configure_logging
from hearts_server.server import make_server

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "clients" / "stdio"
SEATS = {
    0: ("sh (stdio)", ["sh", str(EXAMPLES / "first_legal.sh")]),
    1: ("python (stdio)", [sys.executable, str(EXAMPLES / "lowest.py")]),
}
PLAYERS = 6


async def play(games: int, folder: Path) -> list[dict[str, Any]]:
    """Plays ``games`` games at one table; returns their records."""
    server = make_server(folder, defaults=TablePolicy(), open_admin=True)
    await server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            admin = agrpc.AdminServiceStub(channel)
            names = [SEATS[s][0].split()[0] if s in SEATS else "random" for s in range(PLAYERS)]
            created = await admin.CreateTable(
                apb.CreateTableRequest(
                    config=apb.TableConfig(
                        players=PLAYERS,
                        bot_names=names,
                        games=games,
                        seed="bench-stdio",
                        decision_time_ms=5000,
                    )
                )
            )
            tokens = {s.seat: s.token for s in created.seats}
            tasks = [
                asyncio.create_task(run_async(make_bot("random", str(seat)), server.address, token))
                for seat, token in tokens.items()
                if seat not in SEATS
            ]
            processes = []
            for seat, (name, command) in SEATS.items():
                process, pipes = await start_process(command, env=bot_environment())
                processes.append(process)
                tasks.append(asyncio.create_task(run_bridge(pipes, server.address, tokens[seat], name=name)))
            await admin.AwaitTable(apb.AwaitTableRequest(table_id=created.table_id))
            await asyncio.gather(*tasks)
            for process in processes:
                await process.wait()
    finally:
        await server.stop(grace=0.5)
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]


def figures(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per seat: decisions, median, 95th percentile and maximum of the referee's ``ms``."""
    out = []
    for seat in range(PLAYERS):
        ms = sorted(
            d["ms"] for r in records for d in r["decisions"] if d["seat"] == seat and not d.get("by_referee")
        )
        out.append(
            {
                "seat": seat,
                "bot": SEATS[seat][0] if seat in SEATS else "random (gRPC SDK)",
                "decisions": len(ms),
                "median_ms": statistics.median(ms),
                "p95_ms": ms[min(len(ms) - 1, int(0.95 * len(ms)))],
                "max_ms": ms[-1],
            }
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Plays the games and prints one line (or JSON object) per seat."""
    parser = argparse.ArgumentParser(description="Time per decision of stdio bots next to gRPC bots.")
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print JSON lines")
    args = parser.parse_args(argv)
    configure_logging(level="WARNING")
    with tempfile.TemporaryDirectory() as folder:
        records = asyncio.run(play(args.games, Path(folder)))
    for line in figures(records):
        if args.json:
            print(json.dumps(line))
        else:
            print(
                f"seat {line['seat']} {line['bot']:18s}: median {line['median_ms']:6.2f} ms, "
                f"p95 {line['p95_ms']:6.2f} ms, max {line['max_ms']:7.2f} ms ({line['decisions']} decisions)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
