"""Memory over thousands of games: the referee server's, and the tournament runner's.

``server``: the referee in this process, tables of 6 fast built-in bots (the SDK over gRPC, in
the same process), one game of one hand each, a few tables at a time; prints the process's
resident memory (RSS) every ``--every`` games. ``runner``: the real runner (its own referee, a
bot process per seat, ``sandbox = "none"`` built-in bots) in this process, RSS sampled as it
goes. Both print one JSON object with --json; memory flat over the games is the point.

    .venv/bin/python bench/memory.py server --games 2000
    .venv/bin/python bench/memory.py runner --games 2000 [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hearts_client.bots import make_bot
from hearts_client.sdk import run_async
from hearts_server.logs import configure_logging
from hearts_server.server import make_server
from tests.helpers.harness import await_table, create_table


def rss_mb() -> float:
    """This process's resident memory, in MB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def _one_table(address: str, index: int) -> None:
    table = await create_table(
        address, ["random"] * 6, max_hands=1, decision_time_ms=2000, join_timeout_ms=30_000
    )
    await asyncio.gather(
        *(
            run_async(make_bot("random", f"{index}-{s.seat}"), address, s.token, name="random")
            for s in table.seats
        )
    )
    await await_table(address, table.table_id)


async def server_bench(games: int, every: int, parallel: int) -> dict[str, Any]:
    samples: list[tuple[int, float]] = []
    with tempfile.TemporaryDirectory() as folder:
        server = make_server(Path(folder), open_admin=True)
        await server.start()
        started = time.monotonic()
        try:
            done = 0
            samples.append((0, rss_mb()))
            while done < games:
                batch = min(parallel, games - done)
                await asyncio.gather(*(_one_table(server.address, done + i) for i in range(batch)))
                done += batch
                if done % every < batch or done == games:
                    samples.append((done, rss_mb()))
                    print(f"server: {done} games, RSS {samples[-1][1]:.1f} MB", file=sys.stderr)
            kept = len(server.registry.tables)
        finally:
            await server.stop(0.5)
    return _summary("server", samples, time.monotonic() - started, tables_in_memory=kept)


RUNNER_CONFIG = """
[tournament]
name = "memory"
table_size = 6
deals = {deals}
duplicate = false
seed = "memory"
max_hands = 1
concurrency = {parallel}
decision_ms = 5000
join_timeout_ms = 60000
sandbox = "none"

[[bots]]
name = "dice"
builtin = "random"

[[bots]]
name = "careful"
builtin = "heuristic"
"""


def runner_bench(games: int, every: float, parallel: int) -> dict[str, Any]:
    from hearts_tournaments.tournament.config import parse_config
    from hearts_tournaments.tournament.folder import create_tournament
    from hearts_tournaments.tournament.runner import run_tournament

    samples: list[tuple[int, float]] = []
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "out"
        text = RUNNER_CONFIG.format(deals=games, parallel=parallel)
        config = parse_config(text, Path(folder))
        tournament = create_tournament(config, text, output)
        stop = threading.Event()

        def sample() -> None:
            while not stop.wait(every):
                count = sum(1 for _ in (output / "records").glob("*.json"))
                samples.append((count, rss_mb()))
                print(f"runner: {count} games, RSS {samples[-1][1]:.1f} MB", file=sys.stderr)

        samples.append((0, rss_mb()))
        started = time.monotonic()
        thread = threading.Thread(target=sample, daemon=True)
        thread.start()
        try:
            run_tournament(tournament, parallel)
        finally:
            stop.set()
            thread.join()
        samples.append((len(tournament.store.outcomes(records=False)), rss_mb()))
        tournament.store.close()
    return _summary("runner", samples, time.monotonic() - started)


def _summary(name: str, samples: list[tuple[int, float]], seconds: float, **extra: Any) -> dict[str, Any]:
    # Growth is measured from the first sample after warming up (a tenth of the games).
    last_games = samples[-1][0]
    warm = next((s for s in samples if s[0] >= last_games / 10 and s[0] > 0), samples[0])
    growth = samples[-1][1] - warm[1]
    per_game_kb = growth * 1024 / max(1, last_games - warm[0])
    return {
        "bench": name,
        "games": last_games,
        "seconds": round(seconds, 1),
        "rss_mb": [[g, round(m, 1)] for g, m in samples],
        "rss_start_mb": round(samples[0][1], 1),
        "rss_warm_mb": round(warm[1], 1),
        "rss_end_mb": round(samples[-1][1], 1),
        "growth_after_warmup_kb_per_game": round(per_game_kb, 1),
        **extra,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("which", choices=["server", "runner"])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument(
        "--every", type=float, default=200, help="server: games between samples; runner: seconds"
    )
    parser.add_argument("--parallel", type=int, default=4, help="Tables at once.")
    parser.add_argument("--json", action="store_true", help="Print the JSON object only.")
    args = parser.parse_args()
    configure_logging("json", "ERROR")
    if args.which == "server":
        result = asyncio.run(server_bench(args.games, int(args.every), args.parallel))
    else:
        result = runner_bench(args.games, args.every if args.every < 100 else 10.0, args.parallel)
    if not args.json:
        print(
            f"{result['bench']}: {result['games']} games in {result['seconds']} s; "
            f"RSS {result['rss_start_mb']} MB "
            f"at start, {result['rss_warm_mb']} MB warm, {result['rss_end_mb']} MB at the end "
            f"({result['growth_after_warmup_kb_per_game']} KB per game after warming up)"
        )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
