"""Join latency of real bots while one raw HTTP/2 connection floods the referee with resets.

The referee runs in this process (grpc.aio, as ``hearts serve`` runs it); the attacker is a
separate process (tests/helpers/h2_attack.py: streams opened and reset at once, the HTTP/2 rapid reset
attack) on 127.0.0.1, bounded in streams and seconds. Meanwhile tables of 6 raw seats are created
one after another and every seat joins; a join's latency is the time from sending the join to
receiving the GameStarted (the table starts once all six have joined). Prints the figures
without and with the attack, and one JSON object with --json.

    .venv/bin/python bench/rapid_reset.py [--seconds 10] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import grpc

from hearts_server.logs import configure_logging
from hearts_server.server import make_server
from tests.helpers.harness import RawSeat, create_table

SEATS = 6


async def join_round(address: str) -> tuple[list[float], list[str]]:
    """One table: its six seats join at once; each one's latency to GameStarted (ms) and failures."""
    try:
        table = await create_table(
            address, ["raw"] * SEATS, max_hands=1, decision_time_ms=50, join_timeout_ms=20_000
        )
    except grpc.aio.AioRpcError as exc:
        return [], [f"CreateTable:{exc.code().name}"]
    seats = [RawSeat(address) for _ in range(SEATS)]

    async def one(seat: RawSeat, token: str) -> float | str:
        start = time.perf_counter()
        seat.join(token)
        try:
            message = await seat.recv(timeout=20)
        except TimeoutError:
            return "TIMEOUT"
        if message is None:
            return (await seat.code()).name
        return (time.perf_counter() - start) * 1000

    try:
        results = await asyncio.gather(*(one(s, t.token) for s, t in zip(seats, table.seats, strict=True)))
    finally:
        await asyncio.gather(*(s.close() for s in seats))
    return [r for r in results if isinstance(r, float)], [r for r in results if isinstance(r, str)]


async def measure(address: str, seconds: float) -> dict[str, Any]:
    latencies: list[float] = []
    failures: list[str] = []
    rounds = 0
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        ok, bad = await join_round(address)
        latencies += ok
        failures += bad
        rounds += 1
    return summary(latencies, failures, rounds)


def summary(latencies: list[float], failures: list[str], rounds: int) -> dict[str, Any]:
    ordered = sorted(latencies)
    return {
        "rounds": rounds,
        "joins": len(latencies) + len(failures),
        "failed": len(failures),
        "failures": sorted(set(failures)),
        "median_ms": round(statistics.median(ordered), 2) if ordered else None,
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2) if ordered else None,
        "max_ms": round(ordered[-1], 2) if ordered else None,
    }


async def run(seconds: float, max_streams: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        server = make_server(Path(folder), open_admin=True)
        await server.start()
        try:
            baseline = await measure(server.address, min(seconds, 3.0))
            attacker = subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve().parent.parent / "tests" / "h2_attack.py"),
                 "127.0.0.1", str(server.port), str(max_streams), str(seconds)],
                stdout=subprocess.PIPE,
                text=True,
            )  # fmt: skip
            await asyncio.sleep(0.5)  # the flood is under way
            during = await measure(server.address, max(1.0, seconds - 1.0))
            out, _ = await asyncio.to_thread(attacker.communicate, None, seconds + 30)
            attack = json.loads(out.strip().splitlines()[-1]) if out.strip() else {}
            after = await measure(server.address, 1.0)
        finally:
            await server.stop(0.5)
    return {"baseline": baseline, "during_attack": during, "after": after, "attack": attack}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="How long the attack lasts.")
    parser.add_argument("--max-streams", type=int, default=50_000_000, help="Streams the attacker may reset.")
    parser.add_argument("--json", action="store_true", help="Print one JSON object only.")
    parser.add_argument(
        "--option", action="append", default=[], metavar="NAME=INT",
        help="Override a server channel argument, e.g. grpc.max_concurrent_streams=1000.",
    )  # fmt: skip
    parser.add_argument(
        "--grpc-defaults", action="store_true", help="The server as before issue 11 (grpc's defaults)."
    )
    args = parser.parse_args()
    configure_logging("json", "ERROR")
    from hearts_server import server as server_module

    if args.grpc_defaults:
        server_module.SERVER_OPTIONS[:] = server_module.SERVER_OPTIONS[:4]
    for item in args.option:
        name, _, value = item.partition("=")
        server_module.SERVER_OPTIONS[:] = [o for o in server_module.SERVER_OPTIONS if o[0] != name]
        server_module.SERVER_OPTIONS.append((name, int(value)))
    result = asyncio.run(run(args.seconds, args.max_streams))
    if args.json:
        print(json.dumps(result))
        return
    attack = result["attack"]
    rate = attack.get("streams", 0) / max(attack.get("seconds", 1), 1e-9)
    print(f"attack: {attack.get('streams', 0)} streams reset in {attack.get('seconds')} s ({rate:,.0f}/s)")
    for name in ("baseline", "during_attack", "after"):
        r = result[name]
        print(
            f"{name:>14}: {r['joins']} joins, {r['failed']} failed {r['failures']}, "
            f"median {r['median_ms']} ms, p95 {r['p95_ms']} ms, max {r['max_ms']} ms"
        )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
