"""The entrant portal: upload-to-active time of a small Python bot, and the public leaderboard's
requests per second while submissions arrive.

It builds a league (6 seats, one-hand games, two built-in entrants), runs the real ``hearts league
run --forever`` and the real ``hearts web LEAGUE --submissions``, makes ``--entrants`` accounts
and then:

1. upload-to-active: each entrant in turn POSTs a small stdio Python bot (``clients/stdio/
   lowest.py`` with its ``bot.toml``) to ``/api/submissions`` and polls its status until
   ``active``: the archive's checks, the sandboxed one-hand check, the version added, and its
   validation game played by the league's run (between blocks). Reported: each time, median, max.
2. leaderboard under submissions: ``--clients`` keep-alive connections GET ``/`` for
   ``--seconds`` in all while one thread submits a new version every ``--every`` seconds (the
   league playing meanwhile); the same without submissions; a bot's public page; and the same
   league served by plain ``hearts web LEAGUE`` (no portal) for comparison. They take turns
   (``--rounds``), as the league's table grows with every block. Requests per second, median and
   p99 latency of each; and the league's stored blocks per minute with nobody looking and under
   the leaderboard's load.

Usage::

    bench/portal.py [--entrants 3] [--clients 32] [--seconds 20] [--every 2] [--rounds 4] [--json]

Prints readable figures, or with ``--json`` one object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hearts_tournaments.league import commands
from hearts_tournaments.league.store import LeagueStore
from tests.helpers.portal import LOWEST, MANIFEST, Client, league_running, make_league, tar_gz, wait_status
from tests.helpers.web_server import web_server


def archive(salt: int) -> bytes:
    """The small bot, a comment making each archive a new version."""
    return tar_gz([("bot.toml", MANIFEST.encode()), ("bot.py", (LOWEST + f"\n# {salt}\n").encode())])


def hammer(url: str, clients: int, seconds: float, path: str = "/") -> tuple[int, list[float]]:
    """``clients`` keep-alive connections GET ``path`` as fast as they are answered, for
    ``seconds``: requests done, latencies. An asyncio client, so that the client is not what
    limits the figure (a thread per client and a connection per request top out far below the
    server)."""
    # In a process of its own at the lowest priority: the visitors stand for other machines, so
    # their client must not take this machine's CPU from the league or the server.
    done = subprocess.run(
        ["nice", "-n", "19", sys.executable, __file__, "--hammer", url, str(clients), str(seconds), path],
        capture_output=True,
        text=True,
        check=True,
    )
    count, latencies = json.loads(done.stdout)
    return int(count), [float(t) for t in latencies]


async def _hammer(url: str, clients: int, seconds: float, path: str) -> tuple[int, list[float]]:
    parts = urllib.parse.urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    request = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept-Encoding: gzip\r\n\r\n".encode()
    stop = time.monotonic() + seconds
    latencies: list[float] = []

    async def one() -> None:
        reader, writer = await asyncio.open_connection(host, port)
        try:
            while time.monotonic() < stop:
                start = time.perf_counter()
                writer.write(request)
                head = await reader.readuntil(b"\r\n\r\n")
                status = int(head.split(b" ", 2)[1])
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                if status != 200:
                    raise RuntimeError(f"{path} answered {status}")
                latencies.append(time.perf_counter() - start)
        finally:
            writer.close()

    await asyncio.gather(*(one() for _ in range(clients)))
    return len(latencies), latencies


def block_count(folder: Path) -> int:
    """The league's stored blocks."""
    with LeagueStore.open(folder, read_only=True) as store:
        return store.block_count()


def p99(latencies: list[float]) -> float:
    """The 99th percentile, in ms."""
    return round(statistics.quantiles(latencies, n=100)[98] * 1000, 1)


def main() -> int:
    if sys.argv[1:2] == ["--hammer"]:  # the visitors' process (hammer)
        url, clients, seconds, path = sys.argv[2:6]
        print(json.dumps(asyncio.run(_hammer(url, int(clients), float(seconds), path))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, default=3, help="entrants timed from upload to active")
    parser.add_argument("--clients", type=int, default=32, help="connections requesting the leaderboard")
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds of each leaderboard run")
    parser.add_argument("--every", type=float, default=2.0, help="seconds between submissions meanwhile")
    parser.add_argument("--rounds", type=int, default=4, help="turns the three leaderboard runs take")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    names = (*(f"e{i}" for i in range(args.entrants)), "flood")
    with tempfile.TemporaryDirectory(prefix="bench-portal-") as tmp:
        folder = Path(tmp) / "lg"
        tokens = make_league(folder, names)
        with LeagueStore.open(folder) as store:
            commands.add_version(store, commands.make_spec("rival", None, "heuristic"))
        with league_running(folder), web_server(folder, "--submissions", "--upload-limit", "100000") as url:
            client = Client(url)
            to_active = []
            for i, name in enumerate(names[:-1]):
                start = time.perf_counter()
                sid = client.api_upload(tokens[name], archive(i)).json()["id"]
                done = wait_status(client, tokens[name], sid, {"active", "error"}, timeout=900)
                if done["status"] != "active":
                    print(f"bench/portal.py: {name}'s bot did not become active: {done}", file=sys.stderr)
                    return 1
                to_active.append(time.perf_counter() - start)
            # The three runs take turns, --rounds times: the league's table grows with every
            # block, and each request refits it, so runs one after another would not compare.
            sent = [0]
            runs: dict[str, list[float]] = {"quiet": [], "busy": [], "plain": [], "bot": []}
            blocks: dict[str, int] = {"idle": 0, "quiet": 0}
            part = args.seconds / args.rounds
            page = "/bot/" + urllib.parse.quote(f"{names[0]}@v1")
            with web_server(folder) as plain:  # the same league served without the portal
                for _ in range(args.rounds):
                    # The league's block rate with nobody looking, then under the leaderboard's load.
                    before = block_count(folder)
                    time.sleep(part)
                    blocks["idle"] += block_count(folder) - before
                    before = block_count(folder)
                    runs["quiet"] += hammer(url, args.clients, part)[1]
                    blocks["quiet"] += block_count(folder) - before
                    runs["bot"] += hammer(url, args.clients, part, page)[1]
                    runs["plain"] += hammer(plain, args.clients, part)[1]
                    stop = threading.Event()

                    def flood(stop: threading.Event = stop) -> None:
                        while not stop.is_set():
                            answer = client.api_upload(tokens["flood"], archive(1000 + sent[0]))
                            if answer.status == 202:
                                sent[0] += 1
                            stop.wait(args.every)

                    flooder = threading.Thread(target=flood)
                    flooder.start()
                    runs["busy"] += hammer(url, args.clients, part)[1]
                    stop.set()
                    flooder.join()
            quiet, busy, plain_lat = runs["quiet"], runs["busy"], runs["plain"]
            quiet_count, busy_count, plain_count = len(quiet), len(busy), len(plain_lat)
    result: dict[str, Any] = {
        "upload_to_active_s": [round(t, 2) for t in to_active],
        "upload_to_active_median_s": round(statistics.median(to_active), 2),
        "upload_to_active_max_s": round(max(to_active), 2),
        "leaderboard_rps_quiet": round(quiet_count / args.seconds, 1),
        "leaderboard_median_ms_quiet": round(statistics.median(quiet) * 1000, 1),
        "leaderboard_p99_ms_quiet": p99(quiet),
        "leaderboard_rps_with_submissions": round(busy_count / args.seconds, 1),
        "leaderboard_median_ms_with_submissions": round(statistics.median(busy) * 1000, 1),
        "leaderboard_p99_ms_with_submissions": p99(busy),
        "submissions_meanwhile": sent[0],
        "leaderboard_rps_without_portal": round(plain_count / args.seconds, 1),
        "leaderboard_median_ms_without_portal": round(statistics.median(plain_lat) * 1000, 1),
        "bot_page_rps": round(len(runs["bot"]) / args.seconds, 1),
        "bot_page_p99_ms": p99(runs["bot"]),
        "blocks_per_minute_idle": round(blocks["idle"] * 60 / args.seconds, 1),
        "blocks_per_minute_under_leaderboard_load": round(blocks["quiet"] * 60 / args.seconds, 1),
        "clients": args.clients,
        "seconds": args.seconds,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"upload to active: {result['upload_to_active_s']} s "
            f"(median {result['upload_to_active_median_s']} s)"
        )
        print(
            f"public leaderboard, {args.clients} clients: {result['leaderboard_rps_quiet']} req/s "
            f"(median {result['leaderboard_median_ms_quiet']} ms) without submissions; "
            f"{result['leaderboard_rps_with_submissions']} req/s (median "
            f"{result['leaderboard_median_ms_with_submissions']} ms) with {sent[0]} submissions meanwhile; "
            f"{result['leaderboard_rps_without_portal']} req/s (median "
            f"{result['leaderboard_median_ms_without_portal']} ms) from plain `hearts web LEAGUE`; "
            f"p99 {result['leaderboard_p99_ms_quiet']} / {result['leaderboard_p99_ms_with_submissions']} ms"
        )
        print(
            f"a bot's page: {result['bot_page_rps']} req/s (p99 {result['bot_page_p99_ms']} ms); the league "
            f"stored {result['blocks_per_minute_idle']} blocks/min with nobody looking, "
            f"{result['blocks_per_minute_under_leaderboard_load']} under the leaderboard's load"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
