"""``hearts host``: a referee server with built-in bots in some seats and yours in the others.

Starts a server, creates one table, starts every built-in seat's bot as a separate process
exactly as the tournament runner does (:class:`~hearts_tournaments.entrants.BotProcess`: in its
sandbox, reaching the referee through a private Unix socket, its token in a file), prints the
address and a token for every ``external`` seat, waits for those bots, plays the games and
writes each game record to ``DIR/<game_id>.json``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hearts_client.bots import BUILTIN_BOTS
from hearts_server.deal import new_seed
from hearts_server.rules import Rules
from hearts_server.server import make_server
from hearts_server.table import DEFAULT_JOIN_TIMEOUT_MS, Table, TableSettings
from hearts_tournaments.config import BotSpec
from hearts_tournaments.entrants import BotProcess, SeatAccess
from hearts_tournaments.sandbox import Limits, SandboxKind, Watchdog, require_bwrap

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
    target_score: int = 150
    decision_ms: int = 1000
    time_bank_ms: int = 60_000
    join_timeout_ms: int = DEFAULT_JOIN_TIMEOUT_MS
    sandbox: SandboxKind = SandboxKind.BWRAP
    limits: Limits = field(default_factory=Limits)


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


def bot_command(name: str, address: str, token_file: Path, seed: str) -> list[str]:
    """A command that runs built-in bot ``name`` as its own process, unsandboxed (for tests)."""
    return [
        sys.executable,
        "-m",
        "hearts_tournaments.builtin_bot",
        name,
        f"--server={address}",
        f"--token-file={token_file}",
        f"--seed={seed}",
    ]


async def host_games(options: HostOptions, emit: Callable[[str], None]) -> list[dict[str, Any]]:
    """Runs the server and the built-in bots until every game is over.

    Args:
        options: What to host.
        emit: Prints one line for the user (stdout).

    Returns:
        One summary per finished game: game id, record path, totals, winners, faults.

    Raises:
        SandboxError: if the bots are to be sandboxed and bwrap is missing.
    """
    if options.sandbox is SandboxKind.BWRAP and any(s != EXTERNAL for s in options.seats):
        require_bwrap()
    with tempfile.TemporaryDirectory(prefix="hearts-host-") as private, Watchdog() as watchdog:
        return await _host(options, emit, Path(private) / "referee.sock", watchdog)


async def _host(
    options: HostOptions, emit: Callable[[str], None], socket: Path, watchdog: Watchdog
) -> list[dict[str, Any]]:
    out = options.out
    out.mkdir(parents=True, exist_ok=True)
    server = make_server(out, host=options.host, port=options.port, unix_socket=socket)
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
    processes: list[BotProcess] = []
    logs = out / "logs"
    logs.mkdir(exist_ok=True)
    done = False
    try:
        for seat in table.seats:
            name = options.seats[seat.index]
            if name == EXTERNAL:
                continue
            process = await BotProcess.start(
                seat.index,
                BotSpec(name=name, builtin=name),
                SeatAccess(socket, seat.token, f"{seed}/{seat.index}"),
                logs / f"{table.table_id}-seat{seat.index}-{seat.name}.log",
                sandbox=options.sandbox,
                limits=options.limits,
                watchdog=watchdog,
            )
            processes.append(process)
        await table.done.wait()
        done = True
    finally:
        if done:
            await asyncio.gather(*(p.stop() for p in processes))
        else:
            for process in processes:
                process.kill()
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
