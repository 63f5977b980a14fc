#!/usr/bin/env python3
"""One table's decision turnaround, and the referee's memory, while an admin client floods it.

A real ``hearts serve`` process (its admin token in a file, ``--admin-token-file``); a victim
table of six heuristic bot processes (``hearts bot heuristic``, at ``nice 10`` as the runner
starts bots) plays ``--games`` games; its decision turnaround is the interval between two
consecutive card plays by the referee's clock (the records' ``at``), which includes the bot's
answer, the transport, and whatever else the referee's event loop is busy with. First the victim
plays alone; then again while this process creates tables nobody plays (target 10,000,
``--hands`` hands, every seat released with ``ReleaseSeat``: the referee plays every seat of
them itself; a table no seat joins or is released at all ends at its join timeout instead, see
``bench/unjoined.py``) as fast as it can, 16 calls at a time, retrying at once when refused,
until the victim is done (its table is created before the flood: a referee at its cap refuses
new tables to everyone). The flood's
tables are then cancelled; ``--rounds`` floods in a row. The referee's resident memory
(``/proc/PID/status``) is sampled: at the start (after one warm-up game), at its peak during the
floods, and after each flood once every table has ended (``--settle`` seconds after the last
cancel).

    .venv/bin/python bench/admin_flood.py [--games 2] [--hands 200] [--max-create 3000] [--json]

``--max-create`` bounds the tables the flood creates in all (a referee without a cap would
otherwise grow until the machine runs out of memory).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cancellation_hearts.v1 import admin_service_pb2 as apb
from cancellation_hearts.v1 import admin_service_pb2_grpc as agrpc
from hearts_protocol.transport import own_channel
from hearts_tournaments.arena.sandbox import nice_prefix

TOKEN = "bench-admin-token"
METADATA = (("authorization", f"Bearer {TOKEN}"),)
NAMES = ["heuristic"] * 6


def rss_mb(pid: int) -> float:
    """A process's resident memory, in MB (Linux /proc)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:  # it has exited
        return 0.0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def start_referee(folder: Path) -> tuple[subprocess.Popen[str], str]:
    token_file = folder / "admin.token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hearts_tournaments",
            "--log-level",
            "ERROR",
            "serve",
            "--port",
            "0",
            "--records",
            str(folder / "games"),
            "--admin-token-file",
            str(token_file),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("referee listening on "):
        process.kill()
        raise SystemExit(f"hearts serve did not start: {line!r}")
    return process, line.split()[-1]


def bot(address: str, token: str, seat: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            *nice_prefix(),
            sys.executable,
            "-m",
            "hearts_tournaments",
            "--log-level",
            "WARNING",
            "bot",
            "heuristic",
            "--server",
            address,
            "--token",
            token,
            "--seed",
            str(seat),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


async def victim_table(stub: agrpc.AdminServiceStub, games: int, label: str) -> apb.CreateTableResponse:
    """Creates the victim table (before any flood: a full referee refuses new tables)."""
    config = apb.TableConfig(
        players=6, bot_names=NAMES, games=games, label=label, join_timeout_ms=600_000, decision_time_ms=5_000
    )
    table: apb.CreateTableResponse = await stub.CreateTable(
        apb.CreateTableRequest(config=config), metadata=METADATA, timeout=60
    )
    return table


async def play_victim(
    stub: agrpc.AdminServiceStub,
    address: str,
    games: int,
    label: str,
    table: apb.CreateTableResponse | None = None,
) -> list[float]:
    """Plays the victim table (``table``, or a new one); the intervals between consecutive card
    plays (ms)."""
    if table is None:
        table = await victim_table(stub, games, label)
    processes = [bot(address, seat.token, seat.seat) for seat in table.seats]
    try:
        done = await stub.AwaitTable(
            apb.AwaitTableRequest(table_id=table.table_id), metadata=METADATA, timeout=1200
        )
    finally:
        for process in processes:
            await asyncio.to_thread(process.wait, 60)
    gaps: list[float] = []
    for game in done.table.games:
        record = json.loads(game.record_json)
        plays = [d for d in record["decisions"] if d["kind"] == "play"]
        gaps += [b["at"] - a["at"] for a, b in itertools.pairwise(plays) if a["hand"] == b["hand"]]
    return gaps


async def flood(address: str, hands: int, max_create: int, stop: asyncio.Event) -> tuple[list[str], int, str]:
    """Creates tables the referee plays alone (every seat released) until ``stop``; the ids
    created, the refusals, one refusal's text."""
    config = apb.TableConfig(players=6, bot_names=NAMES, target_score=10_000, max_hands=hands)
    request = apb.CreateTableRequest(config=config)
    created: list[str] = []
    refused = [0]
    message = [""]

    async def one(stub: agrpc.AdminServiceStub) -> None:
        while not stop.is_set() and len(created) < max_create:
            try:
                response = await stub.CreateTable(request, metadata=METADATA, timeout=60)
                created.append(response.table_id)
                for seat in range(len(NAMES)):
                    release = apb.ReleaseSeatRequest(table_id=response.table_id, seat=seat, faulted=True)
                    await stub.ReleaseSeat(release, metadata=METADATA, timeout=60)
            except grpc.aio.AioRpcError as exc:
                if exc.code() is grpc.StatusCode.RESOURCE_EXHAUSTED:
                    refused[0] += 1
                    message[0] = str(exc.details())
                await asyncio.sleep(0.01)  # the cap: try again (a real attacker would too)

    # Two connections of 8 calls each (a connection carries at most 8 at once).
    async with own_channel(address) as first, own_channel(address) as second:
        stubs = [agrpc.AdminServiceStub(channel) for channel in (first, second)]
        await asyncio.gather(*(one(stubs[i % 2]) for i in range(16)))
    return created, refused[0], message[0]


def percentile(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else 0.0


async def run(games: int, hands: int, max_create: int, settle: float, rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        referee, address = start_referee(Path(folder))
        peak = [0.0]
        sampling = threading.Event()

        def sample() -> None:
            while not sampling.wait(0.1):
                peak[0] = max(peak[0], rss_mb(referee.pid))

        try:
            async with grpc.aio.insecure_channel(address) as channel:
                stub = agrpc.AdminServiceStub(channel)
                await play_victim(stub, address, 1, "warm-up")
                start = rss_mb(referee.pid)
                quiet = await play_victim(stub, address, games, "quiet")
                print(f"alone: {len(quiet)} plays; flooding", file=sys.stderr)
                loud: list[float] = []
                after: list[float] = []
                created: list[str] = []
                refused, message, seconds = 0, "", 0.0
                thread = threading.Thread(target=sample, daemon=True)
                thread.start()
                for _ in range(rounds):
                    victim = await victim_table(stub, games, "flooded")
                    stop = asyncio.Event()
                    flooding = asyncio.create_task(flood(address, hands, max_create, stop))
                    await asyncio.sleep(1.0)  # the flood is on before the victim starts
                    started = time.monotonic()
                    loud += await play_victim(stub, address, games, "flooded", victim)
                    seconds += time.monotonic() - started
                    stop.set()
                    made, refusals, text = await flooding
                    created += made
                    refused, message = refused + refusals, text or message
                    print(f"flooded: {len(loud)} plays in {seconds:.0f} s; cancelling", file=sys.stderr)
                    for table_id in made:
                        with contextlib.suppress(grpc.aio.AioRpcError):  # ended and forgotten already
                            await stub.CancelTable(
                                apb.CancelTableRequest(table_id=table_id), metadata=METADATA, timeout=120
                            )
                    await asyncio.sleep(settle)
                    after.append(rss_mb(referee.pid))
                sampling.set()
                thread.join()
        finally:
            referee.terminate()
            referee.wait(60)
    return {
        "bench": "admin_flood",
        "games": games,
        "flood_hands_per_table": hands,
        "quiet_turnaround_ms_p50": round(percentile(quiet, 50), 2),
        "quiet_turnaround_ms_p95": round(percentile(quiet, 95), 2),
        "flooded_turnaround_ms_p50": round(percentile(loud, 50), 2),
        "flooded_turnaround_ms_p95": round(percentile(loud, 95), 2),
        "flooded_turnaround_ms_max": round(max(loud), 2),
        "flooded_seconds": round(seconds, 1),
        "flood_tables_created": len(created),
        "flood_calls_refused": refused,
        "flood_refusal": message,
        "rss_start_mb": round(start, 1),
        "rss_peak_mb": round(peak[0], 1),
        "rss_after_mb": [round(mb, 1) for mb in after],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2, help="Games of the victim table, each time.")
    parser.add_argument("--hands", type=int, default=200, help="max_hands of each flood table.")
    parser.add_argument("--max-create", type=int, default=3000, help="Tables the flood creates at most.")
    parser.add_argument(
        "--settle", type=float, default=3.0, help="Seconds between the last cancel and the last RSS."
    )
    parser.add_argument("--rounds", type=int, default=2, help="Floods, one after the other.")
    parser.add_argument("--json", action="store_true", help="Print the JSON object only.")
    args = parser.parse_args()
    result = asyncio.run(run(args.games, args.hands, args.max_create, args.settle, args.rounds))
    if not args.json:
        print(
            f"victim turnaround p50/p95: alone {result['quiet_turnaround_ms_p50']}/"
            f"{result['quiet_turnaround_ms_p95']} ms, under the flood {result['flooded_turnaround_ms_p50']}/"
            f"{result['flooded_turnaround_ms_p95']} ms (max {result['flooded_turnaround_ms_max']}); flood: "
            f"{result['flood_tables_created']} tables created, "
            f"{result['flood_calls_refused']} calls refused; "
            f"referee RSS {result['rss_start_mb']} MB at start, {result['rss_peak_mb']} MB peak, "
            f"{result['rss_after_mb']} MB after every table ended (each round)"
        )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
