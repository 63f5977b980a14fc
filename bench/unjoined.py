#!/usr/bin/env python3
"""What a table nobody joins costs the referee: its CPU and the growth of its memory.

A real ``hearts serve`` process (its admin token in a file); the admin creates ``--tables``
tables of the attack's shape (eleven seats, target 10,000, 1,000 hands a game, twenty games:
the most work a table may hold) with a join timeout of ``--join-ms``, and then, in turn:

* **abandoned**: nobody joins any seat (the attack). The referee ends such a table at its join
  timeout, having played nothing.
* **released**: the admin releases every seat (``ReleaseSeat``, as the arena does for bots that
  are quarantined or died): the referee plays every seat itself. This is what an abandoned
  table cost before it was ended at its join timeout (the referee then played its seats the
  same way, each decision a fault), measured in the same run as the reference.

For each, once the join timeout has passed, the referee's CPU time (``/proc/PID/stat``) and
resident memory (``/proc/PID/status``) are sampled for ``--seconds`` seconds: the share of one
core it used, and how fast its memory grew. The tables are cancelled between the two.

    .venv/bin/python bench/unjoined.py [--tables 1] [--seconds 10] [--join-ms 1000] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.admin_flood import METADATA, rss_mb, start_referee
from cancellation_hearts.v1 import admin_service_pb2 as apb
from cancellation_hearts.v1 import admin_service_pb2_grpc as agrpc

NAMES = [f"absent-{i}" for i in range(11)]
#: The attack's table: every seat, the largest target and hand limit, the most games allowed.
ATTACK = {"target_score": 10_000, "max_hands": 1_000, "games": 20}
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """A process's user and system CPU time (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


async def measure(
    stub: agrpc.AdminServiceStub, pid: int, mode: str, tables: int, join_ms: int, seconds: float
) -> dict[str, Any]:
    """Creates ``tables`` tables, releases their seats for ``released``, waits out the join
    timeout, samples the referee; then cancels the tables."""
    # A released table starts once its last seat is released; its join timeout is left long so
    # that a slow release cannot end it first.
    timeout = join_ms if mode == "abandoned" else 60_000
    config = apb.TableConfig(
        players=len(NAMES), bot_names=NAMES, join_timeout_ms=timeout, label=mode, **ATTACK
    )
    ids = []
    for _ in range(tables):
        created = await stub.CreateTable(apb.CreateTableRequest(config=config), metadata=METADATA, timeout=60)
        ids.append(created.table_id)
        if mode == "released":
            for seat in range(len(NAMES)):
                request = apb.ReleaseSeatRequest(table_id=created.table_id, seat=seat, faulted=True)
                await stub.ReleaseSeat(request, metadata=METADATA, timeout=60)
    await asyncio.sleep((join_ms if mode == "abandoned" else 0) / 1000 + 0.5)
    cpu0, rss0, wall0 = cpu_seconds(pid), rss_mb(pid), time.monotonic()
    await asyncio.sleep(seconds)
    cpu1, rss1, wall1 = cpu_seconds(pid), rss_mb(pid), time.monotonic()
    statuses = []
    hands = 0
    for table_id in ids:
        table = await stub.GetTable(apb.GetTableRequest(table_id=table_id), metadata=METADATA, timeout=60)
        statuses.append(apb.TableStatus.Name(table.status))
        hands += sum(g.result.hands_played for g in table.games)
        await stub.CancelTable(apb.CancelTableRequest(table_id=table_id), metadata=METADATA, timeout=120)
    elapsed = wall1 - wall0
    return {
        "mode": mode,
        "tables": tables,
        "status": sorted(set(statuses)),
        "hands_finished": hands,
        "cpu_share_of_a_core": round((cpu1 - cpu0) / elapsed, 3),
        "rss_start_mb": round(rss0, 1),
        "rss_end_mb": round(rss1, 1),
        "rss_growth_mb_per_s": round((rss1 - rss0) / elapsed, 2),
        "seconds": round(elapsed, 1),
    }


async def run(tables: int, seconds: float, join_ms: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        referee, address = start_referee(Path(folder))
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                stub = agrpc.AdminServiceStub(channel)
                await asyncio.sleep(1.0)  # the referee settles after its start
                idle_cpu, idle_wall = cpu_seconds(referee.pid), time.monotonic()
                await asyncio.sleep(seconds)
                idle = (cpu_seconds(referee.pid) - idle_cpu) / (time.monotonic() - idle_wall)
                abandoned = await measure(stub, referee.pid, "abandoned", tables, join_ms, seconds)
                await asyncio.sleep(2.0)  # the memory of the cancelled tables is handed back
                released = await measure(stub, referee.pid, "released", tables, join_ms, seconds)
        finally:
            referee.terminate()
            referee.wait(60)
    return {
        "bench": "unjoined",
        "table": {"players": len(NAMES), **ATTACK, "join_timeout_ms": join_ms},
        "idle_cpu_share_of_a_core": round(idle, 3),
        "abandoned": abandoned,
        "released": released,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=1, help="Tables of each kind at once.")
    parser.add_argument("--seconds", type=float, default=10.0, help="How long each is sampled.")
    parser.add_argument("--join-ms", type=int, default=1000, help="The tables' join timeout.")
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = parser.parse_args()
    result = asyncio.run(run(args.tables, args.seconds, args.join_ms))
    if args.json:
        print(json.dumps(result))
        return
    print(f"referee idle: {result['idle_cpu_share_of_a_core']:.0%} of a core")
    for mode in ("abandoned", "released"):
        r = result[mode]
        print(
            f"{r['tables']} {mode} table(s) ({', '.join(r['status'])}) over {r['seconds']} s after the join "
            f"timeout: {r['cpu_share_of_a_core']:.0%} of a core, memory {r['rss_start_mb']} -> "
            f"{r['rss_end_mb']} MB ({r['rss_growth_mb_per_s']:+.2f} MB/s), {r['hands_finished']} hands "
            "in finished games"
        )
    print(f"load average {result['load_average']}")


if __name__ == "__main__":
    main()
