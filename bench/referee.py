#!/usr/bin/env python3
"""Referee throughput: decisions per second through the real gRPC server.

Runs one table of 8 heuristic bots, each a separate process (``hearts bot heuristic``), then
several such tables at once, against a server in this process. Reports decisions per second
(from the first decision to the last, by the referee's clock) and the time the server adds per
decision over the in-process engine: for consecutive card plays of a hand, the interval between
the two decision requests (referee's clock) minus the time the same decision takes in-process
(building the View, the bot choosing, the engine applying the card), p50 and p99 (of the one
table, and of the tables played at once); and the referee's own time per decision, from reading
a seat's answer to writing the next request (from the records' ``at``, ``ms`` and
``referee_ms``), which leaves out the bot's side of the round trip. Bots run at the tournament
runner's lower priority (``nice -n 10``), the referee at the normal one.

The reference line: a bare grpc.aio server with 8 client processes taking turns on one
bidirectional stream each (a few bytes each way, no game logic at all), measured in the same
run; the referee's one-table rate over it is printed as ``ratio_to_bare``. CPU time is reported
for both, from the first decision (turn) to the last: the referee's process per decision and
its bot processes' per decision (read from /proc), against the bare server's and clients' per
turn, which is what grpc.aio alone costs for one round trip.

``--json`` prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc

from hearts_client.bots import make_bot
from hearts_core.cards import Card
from hearts_core.defaults import TablePolicy
from hearts_core.rules import Rules
from hearts_core.state import Phase, State
from hearts_core.view import build_view
from hearts_server.server import make_server
from hearts_server.table import TableSettings, TableStatus
from hearts_tournaments.arena.sandbox import nice_prefix


def python_bot(address: str, token: str, seat: int) -> list[str]:
    """The command of a built-in heuristic bot process."""
    return [
        *nice_prefix(),  # as the tournament runner starts every bot: below the referee's priority
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
    ]


def own_cpu() -> float:
    """CPU seconds of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def process_cpu(pids: list[int]) -> float:
    """CPU seconds used so far by running processes (from /proc; 0 where it cannot be read)."""
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


#: CPU seconds (this process, the bot processes) of the last run_tables, over its games alone.
last_cpu: dict[str, float] = {}


async def run_tables(
    tables: int,
    players: int,
    target: int,
    out: Path,
    command: Callable[[str, str, int], list[str]] = python_bot,
    unix: bool = False,
) -> list[dict[str, Any]]:
    """Plays ``tables`` tables at once, each seat a bot process; returns the game records.

    With ``unix`` the bots reach the referee over its Unix socket (``unix:PATH``), else TCP.
    Sets :data:`last_cpu` to the CPU time of the referee and of the bots from the moment every
    table plays to the end of the last game.
    """
    out.mkdir(parents=True, exist_ok=True)
    server = make_server(out, unix_socket=out / "ref.sock" if unix else None)
    await server.start()
    processes: list[subprocess.Popen[bytes]] = []
    try:
        created = []
        for t in range(tables):
            settings = TableSettings(
                rules=Rules(players=players, target_score=target),
                bot_names=("heuristic",) * players,
                seed=f"bench-{t}",
                policy=TablePolicy(join_timeout_ms=120_000),
            )
            created.append(server.registry.create(settings))
        for table in created:
            for seat in table.seats:
                processes.append(
                    subprocess.Popen(
                        command(server.unix_address or server.address, seat.token, seat.index),
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                )
        while any(t.status is TableStatus.WAITING for t in created):
            await asyncio.sleep(0.001)
        pids = [p.pid for p in processes]
        referee, bots = own_cpu(), process_cpu(pids)
        for table in created:
            await table.done.wait()
        last_cpu.update(referee=own_cpu() - referee, bots=process_cpu(pids) - bots)
        return [json.loads(g.record_json) for table in created for g in table.finished]
    finally:
        for process in processes:
            await asyncio.to_thread(process.wait, 60)
        await server.stop()


#: The bare reference: a client process that answers every message on its stream at once.
BARE_CLIENT = """
import asyncio, sys, grpc
async def main(address, seat):
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.stream_stream("/bench.Bare/Turn")()
        await call.write(seat.encode())
        while (message := await call.read()) is not grpc.aio.EOF:
            await call.write(b"ok:" + message[:4])
asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


async def bare_turns_per_second(players: int = 8, turns: int = 4000) -> float:
    """Turns per second of ``players`` bare grpc.aio client processes answering in turn.

    Sets :data:`last_cpu` to the server's and the clients' CPU time over the turns.
    """
    outboxes: dict[int, asyncio.Queue[bytes | None]] = {}
    joined = asyncio.Event()
    replies: asyncio.Queue[bytes] = asyncio.Queue()

    async def turn(requests: Any, context: Any) -> Any:
        iterator = requests.__aiter__()
        seat = int(await iterator.__anext__())
        outbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        outboxes[seat] = outbox
        if len(outboxes) == players:
            joined.set()

        async def read() -> None:
            async for message in iterator:
                replies.put_nowait(message)

        reader = asyncio.create_task(read())
        try:
            while (message := await outbox.get()) is not None:
                yield message
        finally:
            reader.cancel()

    server = grpc.aio.server()
    handler = grpc.stream_stream_rpc_method_handler(turn)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("bench.Bare", {"Turn": handler}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    address = f"127.0.0.1:{port}"
    clients = [
        subprocess.Popen([*nice_prefix(), sys.executable, "-c", BARE_CLIENT, address, str(seat)])
        for seat in range(players)
    ]
    try:
        await asyncio.wait_for(joined.wait(), 60)
        pids = [c.pid for c in clients]
        started, server_cpu, clients_cpu = time.perf_counter(), own_cpu(), process_cpu(pids)
        for number in range(turns):
            outboxes[number % players].put_nowait(b"turn%d" % number)
            await replies.get()
        seconds = time.perf_counter() - started
        last_cpu.update(referee=own_cpu() - server_cpu, bots=process_cpu(pids) - clients_cpu)
        for outbox in outboxes.values():
            outbox.put_nowait(None)
    finally:
        await server.stop(grace=1)
        for client in clients:
            await asyncio.to_thread(client.wait, 60)
    return turns / seconds


def decisions_per_second(records: list[dict[str, Any]]) -> float:
    """All decisions over the wall time from the first game start to the last game end."""
    decisions = sum(len(r["decisions"]) for r in records)
    start = min(r["started_at"] for r in records)
    end = max(r["finished_at"] for r in records)
    return decisions / (end - start)


def added_ms(record: dict[str, Any]) -> list[float]:
    """Per card play: referee-clock interval to the next request minus the in-process time."""
    rules = Rules(players=record["players"], target_score=record["target_score"])
    bots = [make_bot("heuristic", str(s)) for s in range(rules.players)]
    at = {(d["hand"], d["play"]): d["at"] for d in record["decisions"] if d["kind"] == "play"}
    state = State(rules)
    out: list[float] = []
    for index, hand in enumerate(record["hands"]):
        state.start_hand(
            [[Card.parse(c) for c in h] for h in hand["deal"]], [Card.parse(c) for c in hand["kitty"]]
        )
        for seat, cards in enumerate(hand["passes"]):
            state.pass_cards(seat, [Card.parse(c) for c in cards])
        for play, code in enumerate(hand["plays"]):
            start = time.perf_counter()
            seat = state.to_play
            bots[seat].choose_play(build_view(state, seat))
            state.play(Card.parse(code))
            local = (time.perf_counter() - start) * 1000
            if (index, play + 1) in at:
                out.append(at[(index, play + 1)] - at[(index, play)] - local)
        if state.phase is Phase.MOON_CHOICE:
            state.choose_moon(hand.get("moon_choice", "self_minus_26"))
    return out


def own_ms(record: dict[str, Any]) -> list[float]:
    """Per decision: the referee's own time, from reading a seat's answer to writing the next
    request (the next decision's due time plus its ``referee_ms``, minus the answer's arrival:
    this one's due time, ``referee_ms`` and ``ms``), by the referee's clock."""
    answered = [d for d in record["decisions"] if not d.get("by_referee")]
    return [
        (b["at"] + (b.get("referee_ms") or 0.0)) - (a["at"] + (a.get("referee_ms") or 0.0) + a["ms"])
        for a, b in itertools.pairwise(answered)
    ]


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) of values."""
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--tables", type=int, default=4, help="tables at once in the second run")
    parser.add_argument("--target", type=int, default=150, help="target score of each game")
    args = parser.parse_args()
    turns = 4000
    with tempfile.TemporaryDirectory() as tmp:
        bare = asyncio.run(bare_turns_per_second(turns=turns))
        bare_cpu = dict(last_cpu)
        one = asyncio.run(run_tables(1, 8, args.target, Path(tmp) / "one"))
        one_cpu = dict(last_cpu)
        many = asyncio.run(run_tables(args.tables, 8, args.target, Path(tmp) / "many"))
    added = added_ms(one[0])
    decisions = sum(len(r["decisions"]) for r in one)
    added_many = [ms for record in many for ms in added_ms(record)]
    own = [ms for record in one for ms in own_ms(record)]
    own_many = [ms for record in many for ms in own_ms(record)]
    result = {
        "one_table_decisions_per_s": round(decisions_per_second(one)),
        "bare_grpc_turns_per_s": round(bare),
        "ratio_to_bare": round(decisions_per_second(one) / bare, 2),
        "many_tables": args.tables,
        "many_tables_decisions_per_s": round(decisions_per_second(many)),
        "added_ms_p50": round(percentile(added, 50), 3),
        "added_ms_p99": round(percentile(added, 99), 3),
        "many_tables_added_ms_p50": round(percentile(added_many, 50), 3),
        "many_tables_added_ms_p99": round(percentile(added_many, 99), 3),
        "own_ms_p50": round(percentile(own, 50), 3),
        "own_ms_p99": round(percentile(own, 99), 3),
        "many_tables_own_ms_p50": round(percentile(own_many, 50), 3),
        "many_tables_own_ms_p99": round(percentile(own_many, 99), 3),
        "decisions_one_table": sum(len(r["decisions"]) for r in one),
        "referee_cpu_us_per_decision": round(one_cpu["referee"] / decisions * 1e6),
        "bots_cpu_us_per_decision": round(one_cpu["bots"] / decisions * 1e6),
        "bare_server_cpu_us_per_turn": round(bare_cpu["referee"] / turns * 1e6),
        "bare_clients_cpu_us_per_turn": round(bare_cpu["bots"] / turns * 1e6),
    }
    if args.json:
        print(json.dumps(result))
        return
    print("Referee throughput over gRPC (8 heuristic bot processes per table)")
    print(f"  one table:        {result['one_table_decisions_per_s']:>7,} decisions/s")
    print(
        f"  bare grpc.aio, 8 clients taking turns: {result['bare_grpc_turns_per_s']:>7,} turns/s "
        f"(the referee reaches x{result['ratio_to_bare']} of it; aim: at least x0.8)"
    )
    print(
        f"  CPU per decision, one table: referee {result['referee_cpu_us_per_decision']} us, its bots "
        f"{result['bots_cpu_us_per_decision']} us; bare grpc.aio per turn: server "
        f"{result['bare_server_cpu_us_per_turn']} us, clients {result['bare_clients_cpu_us_per_turn']} us"
    )
    print(f"  {args.tables} tables at once: {result['many_tables_decisions_per_s']:>7,} decisions/s")
    p50, p99 = result["own_ms_p50"], result["own_ms_p99"]
    print(
        "  the referee's own time per decision (answer read to next request written): "
        f"p50 {p50} ms, p99 {p99} ms"
    )
    p50, p99 = result["many_tables_own_ms_p50"], result["many_tables_own_ms_p99"]
    print(f"  ... with {args.tables} tables at once: p50 {p50} ms, p99 {p99} ms (aim: p99 under 5 ms)")
    p50, p99 = result["added_ms_p50"], result["added_ms_p99"]
    print(
        "  a decision's round trip over its in-process time (transport and the bot's scheduling "
        f"too): p50 {p50} ms, p99 {p99} ms"
    )
    p50, p99 = result["many_tables_added_ms_p50"], result["many_tables_added_ms_p99"]
    print(f"  ... with {args.tables} tables at once: p50 {p50} ms, p99 {p99} ms")


if __name__ == "__main__":
    main()
