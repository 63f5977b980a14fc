#!/usr/bin/env python3
"""Decisions per second that each language's example bot sustains against the real server.

For each of Python (the built-in heuristic bot), Go, Rust, Java, TypeScript and C++, one table of
6 seats, every seat that language's bot as its own process (``clients/<language>/bot``), plays a
game over TCP (``--server HOST:PORT``) and one over the referee's Unix socket (``--server
unix:PATH``), the way the tournament's sandbox connects them; every bot reads its seat token from
a file (``--token-file``). The figure is a game's decisions over the wall time from its first
decision to its last (the referee's clock), the best of ``--repeat`` games per transport (the
games alternate between the transports; on a shared machine the best run is the least
disturbed). Languages whose toolchain is missing are reported as such.

Then the cost of a warm game against a cold one, per language: ``--games`` games of a 6-seat
table over the Unix socket, once with fresh processes per game (cold, ``reuse = "never"``) and
once with the same 6 processes playing every game through bot sessions (warm, ``reuse =
"between_deals"``): wall seconds and CPU seconds (this process and the bots) per game.

``--json`` prints one JSON object mapping language to ``{"tcp": d/s, "unix": d/s, "cold":
{"seconds_per_game", "cpu_per_game"}, "warm": {...}}`` (null when skipped).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from referee import decisions_per_second, run_tables

from hearts_core.defaults import TablePolicy
from hearts_core.rules import Rules
from hearts_server.logs import configure_logging
from hearts_server.server import make_server
from hearts_server.table import TableSettings

ROOT = Path(__file__).resolve().parent.parent
TOOLCHAINS = {
    "go": ["go"],
    "rust": ["cargo"],
    "java": ["java", "mvn"],
    "typescript": ["node"],
    "cpp": ["g++"],
}
TRANSPORTS = ("tcp", "unix")
Command = Callable[[str, str, int], list[str]]


def with_token_file(folder: Path, argv: Callable[[str, Path, int], list[str]]) -> Command:
    """A seat's command that gets its token in a 0600 file under ``folder``, never on its argv."""

    def command(address: str, token: str, seat: int) -> list[str]:
        path = folder / f"token-{seat}"
        path.unlink(missing_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(token)
        return argv(address, path, seat)

    return command


def python_argv(address: str, token_file: Path, seat: int) -> list[str]:
    """The built-in heuristic bot, as the tournament runner starts it."""
    module = "hearts_tournaments.arena.builtin_bot"
    seed = ["--seed", str(seat)]
    return [
        sys.executable,
        "-m",
        module,
        "heuristic",
        *seed,
        "--server",
        address,
        "--token-file",
        f"{token_file}",
    ]


def example_argv(language: str) -> Callable[[str, Path, int], list[str]]:
    """The example bot of ``language``."""
    bot = ROOT / "clients" / language / "bot"

    def argv(address: str, token_file: Path, seat: int) -> list[str]:
        return [str(bot), "--server", address, "--token-file", str(token_file)]

    return argv


def measure(
    folder: Path, target: int, repeat: int, argv: Callable[[str, Path, int], list[str]]
) -> dict[str, int]:
    """Decisions per second per transport: the best of ``repeat`` 6-seat games."""
    best = dict.fromkeys(TRANSPORTS, 0.0)
    for run in range(repeat):
        for transport in TRANSPORTS:
            out = folder / f"{transport}-{run}"
            out.mkdir(parents=True)
            command = with_token_file(out, argv)
            records = asyncio.run(run_tables(1, 6, target, out, command, unix=transport == "unix"))
            best[transport] = max(best[transport], decisions_per_second(records))
    return {transport: round(value) for transport, value in best.items()}


def cpu_now() -> float:
    """CPU seconds of this process and its finished children so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


async def warm_games(games: int, players: int, target: int, out: Path, command: Command) -> None:
    """Plays ``games`` tables in a row with the same ``players`` processes (bot sessions)."""
    out.mkdir(parents=True, exist_ok=True)
    server = make_server(out, unix_socket=out / "ref.sock")
    await server.start()
    registry = server.registry
    sessions = [registry.open_session("bench") for _ in range(players)]
    processes = [
        subprocess.Popen(
            command(server.unix_address or server.address, s.token, seat),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for seat, s in enumerate(sessions)
    ]
    try:
        for _ in range(games):
            table = registry.create(
                TableSettings(
                    rules=Rules(players=players, target_score=target),
                    bot_names=("bench",) * players,
                    seed="bench-0",  # the deal of every cold game (run_tables), for a like comparison
                    policy=TablePolicy(join_timeout_ms=120_000),
                )
            )
            for seat, session in enumerate(sessions):
                session.bind(table, seat)
            await table.done.wait()
    finally:
        for session in sessions:
            registry.close_session(session.session_id)
        for process in processes:
            await asyncio.to_thread(process.wait, 60)
        await server.stop()


async def cold_games(games: int, players: int, target: int, out: Path, command: Command) -> None:
    """Plays ``games`` tables in a row, fresh processes for each."""
    for number in range(games):
        await run_tables(1, players, target, out / f"cold-{number}", command, unix=True)


def warm_and_cold(
    folder: Path, target: int, games: int, argv: Callable[[str, Path, int], list[str]]
) -> dict[str, Any]:
    """Seconds and CPU seconds per game, cold (a process per seat per game) and warm."""
    out: dict[str, Any] = {}
    for label, play in (("cold", cold_games), ("warm", warm_games)):
        where = folder / label
        where.mkdir(parents=True)
        started, cpu = time.perf_counter(), cpu_now()
        asyncio.run(play(games, 6, target, where, with_token_file(where, argv)))
        out[label] = {
            "seconds_per_game": round((time.perf_counter() - started) / games, 3),
            "cpu_per_game": round((cpu_now() - cpu) / games, 3),
        }
    out["warm_cpu_share_of_cold"] = round(out["warm"]["cpu_per_game"] / out["cold"]["cpu_per_game"], 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--target", type=int, default=100, help="target score of the game")
    parser.add_argument("--repeat", type=int, default=3, help="games per language and transport")
    parser.add_argument("--games", type=int, default=3, help="games of the warm/cold comparison")
    args = parser.parse_args()
    configure_logging(level="WARNING")  # the referee's per-seat lines would drown the figures
    figures: dict[str, dict[str, Any] | None] = {}
    with tempfile.TemporaryDirectory() as tmp:
        figures["python"] = {
            **measure(Path(tmp) / "python", args.target, args.repeat, python_argv),
            **warm_and_cold(Path(tmp) / "python-wc", args.target, args.games, python_argv),
        }
        for language, tools in TOOLCHAINS.items():
            if any(shutil.which(t) is None for t in tools):
                figures[language] = None
                continue
            subprocess.run([str(ROOT / "clients" / language / "build")], check=True)
            argv = example_argv(language)
            figures[language] = {
                **measure(Path(tmp) / language, args.target, args.repeat, argv),
                **warm_and_cold(Path(tmp) / f"{language}-wc", args.target, args.games, argv),
            }
    if args.json:
        print(json.dumps(figures))
        return
    print("Decisions per second, one 6-seat table of the same example bot (each seat a process),")
    print(f"best of {args.repeat} games per transport; then per game of {args.games}, cold (fresh processes)")
    print("and warm (the same processes through bot sessions): wall s and CPU s, bots included")
    print(f"  {'':<11} {'tcp':>7} {'unix':>7} {'cold s':>8} {'cold cpu':>9} {'warm s':>8} {'warm cpu':>9}")
    for language, value in figures.items():
        if value is None:
            print(f"  {language:<11} toolchain missing")
        else:
            cold, warm = value["cold"], value["warm"]
            print(
                f"  {language:<11} {value['tcp']:>7,} {value['unix']:>7,} {cold['seconds_per_game']:>8.2f} "
                f"{cold['cpu_per_game']:>9.2f} {warm['seconds_per_game']:>8.2f} {warm['cpu_per_game']:>9.2f}"
            )


if __name__ == "__main__":
    main()
