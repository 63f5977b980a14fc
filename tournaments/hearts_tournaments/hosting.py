"""``hearts host``: a referee server with built-in bots in some seats and yours in the others.

Starts a server, creates one table, starts every built-in seat's bot as a separate process
through the SDK (``hearts bot NAME``), prints the address and a token for every ``external``
seat, waits for those bots, plays the games and writes each game record to ``DIR/<game_id>.json``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from hearts_client.bots import BUILTIN_BOTS
from hearts_core.deal import new_seed
from hearts_core.defaults import DEFAULT_DECISION_MS, DEFAULT_JOIN_TIMEOUT_MS, DEFAULT_TIME_BANK_MS
from hearts_core.rules import DEFAULT_TARGET_SCORE, Rules
from hearts_server.server import make_server
from hearts_server.table import Table, TableSettings

EXTERNAL = "external"


@dataclass(frozen=True, slots=True)
class HostOptions:
    """What ``hearts host`` was asked to do."""

    seats: tuple[str, ...]
    games: int = 1
    seed: str | None = None
    out: Path = Path("games")
    port: int = 0
    host: str = "127.0.0.1"
    target_score: int = DEFAULT_TARGET_SCORE
    decision_ms: int = DEFAULT_DECISION_MS
    time_bank_ms: int = DEFAULT_TIME_BANK_MS
    join_timeout_ms: int = DEFAULT_JOIN_TIMEOUT_MS


def parse_seats(text: str) -> tuple[str, ...]:
    """Parses ``--seats heuristic,random,external,...``.

    Raises:
        ValueError: on an unknown bot name or a table size outside 6..11.
    """
    seats = tuple(s.strip() for s in text.split(",") if s.strip())
    known = [*sorted(BUILTIN_BOTS), EXTERNAL]
    for name in seats:
        if name not in known:
            raise ValueError(f"unknown seat {name!r} in --seats: use one of {', '.join(known)}")
    Rules(players=len(seats))
    return seats


def bot_command(name: str, address: str, token: str, seed: str) -> list[str]:
    """The command that runs built-in bot ``name`` as its own process."""
    return [
        sys.executable,
        "-m",
        "hearts_tournaments",
        "--log-format",
        "json",
        "bot",
        name,
        "--server",
        address,
        "--token",
        token,
        "--seed",
        seed,
    ]


async def host_games(options: HostOptions, emit: Callable[[str], None]) -> list[dict[str, Any]]:
    """Runs the server and the built-in bots until every game is over.

    Args:
        options: What to host.
        emit: Prints one line for the user (stdout).

    Returns:
        One summary per finished game: game id, record path, totals, winners, faults.
    """
    out = options.out
    out.mkdir(parents=True, exist_ok=True)
    server = make_server(out, host=options.host, port=options.port)
    await server.start()
    seed = options.seed or new_seed()
    names = tuple(f"{EXTERNAL}-{i}" if name == EXTERNAL else name for i, name in enumerate(options.seats))
    settings = TableSettings(
        rules=Rules(players=len(options.seats), target_score=options.target_score),
        bot_names=names,
        games=options.games,
        seed=seed,
        decision_ms=options.decision_ms,
        time_bank_ms=options.time_bank_ms,
        join_timeout_ms=options.join_timeout_ms,
    )
    table = server.registry.create(settings)
    emit(json.dumps(_invitation(server.address, table, options.seats)))
    processes: list[tuple[subprocess.Popen[bytes], IO[bytes]]] = []
    logs = out / "logs"
    logs.mkdir(exist_ok=True)
    try:
        for seat in table.seats:
            if options.seats[seat.index] == EXTERNAL:
                continue
            log_file: IO[bytes] = (logs / f"{table.table_id}-seat{seat.index}-{seat.name}.log").open("ab")
            command = bot_command(
                options.seats[seat.index], server.address, seat.token, f"{seed}/{seat.index}"
            )
            processes.append(
                (
                    subprocess.Popen(
                        command, stdout=subprocess.DEVNULL, stderr=log_file, stdin=subprocess.DEVNULL
                    ),
                    log_file,
                )
            )
        await table.done.wait()
    finally:
        for process, log_file in processes:
            try:
                await asyncio.to_thread(process.wait, 10)
            except subprocess.TimeoutExpired:
                process.kill()
            log_file.close()
        await server.stop()
    return [
        {
            "game_id": game.game_id,
            "record": str(game.path),
            "totals": list(game.result.totals),
            "winners": list(game.result.winners),
            "faults": [r.faults for r in game.result.results],
        }
        for game in table.finished
    ]


def _invitation(address: str, table: Table, seats: Sequence[str]) -> dict[str, Any]:
    return {
        "address": address,
        "table_id": table.table_id,
        "seats": [{"seat": s.index, "token": s.token} for s in table.seats if seats[s.index] == EXTERNAL],
    }
