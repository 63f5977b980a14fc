"""``hearts host``: try a bot against the built-in ones on a local referee.

It starts a referee server on a free port (and a private Unix socket), creates one table, starts
the built-in bots exactly as the tournament runner does (:class:`~hearts_tournaments.entrants.BotProcess`:
in their sandbox, reaching the referee through the Unix socket, each token in a file), prints the
address and, for every ``external`` seat, the path of a file holding its token, waits for those
bots, plays the games and writes each game record to ``DIR/<game_id>.json``.

Tokens never appear on a command line or in the output, where other processes and logs could
read them: each external seat's token is written to its own 0600 file in a private (0700)
temporary folder, removed when the games are over, and the user's bot reads it with
``--token-file PATH``. The server requires a random admin token that nobody is told (``hearts
host`` needs no admin call), and without ``--seed`` every game gets its own fresh, unguessable
deal seed.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hearts_client.bots import BUILTIN_BOTS
from hearts_core.deal import new_seed
from hearts_core.defaults import DEFAULT_DECISION_MS, DEFAULT_JOIN_TIMEOUT_MS, DEFAULT_TIME_BANK_MS
from hearts_core.rules import DEFAULT_TARGET_SCORE, Rules
from hearts_server.server import make_server
from hearts_server.table import Table, TableSettings
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
    target_score: int = DEFAULT_TARGET_SCORE
    decision_ms: int = DEFAULT_DECISION_MS
    time_bank_ms: int = DEFAULT_TIME_BANK_MS
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


def write_token_file(folder: Path, seat: int, token: str) -> Path:
    """Writes a seat's token to ``folder/seat-K.token``, readable by its owner only (0600)."""
    path = folder / f"seat-{seat}.token"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(token + "\n")
    return path


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
        return await _host(options, emit, Path(private), watchdog)


async def _host(
    options: HostOptions, emit: Callable[[str], None], private: Path, watchdog: Watchdog
) -> list[dict[str, Any]]:
    out = options.out
    logs = out / "logs"
    for folder in (out, logs):
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        folder.chmod(0o700)
    socket = private / "referee.sock"
    # Nobody needs the admin API here, so nobody gets its token: no seat can read records or
    # create tables behind the host's back.
    server = make_server(
        out, host=options.host, port=options.port, admin_token=secrets.token_hex(32), unix_socket=socket
    )
    await server.start()
    names = tuple(f"{EXTERNAL}-{i}" if name == EXTERNAL else name for i, name in enumerate(options.seats))
    settings = TableSettings(
        rules=Rules(players=len(options.seats), target_score=options.target_score),
        bot_names=names,
        games=options.games,
        seed=options.seed or "",  # empty: a fresh seed per game
        decision_ms=options.decision_ms,
        time_bank_ms=options.time_bank_ms,
        join_timeout_ms=options.join_timeout_ms,
    )
    table = server.registry.create(settings)
    token_files = {
        seat.index: write_token_file(private, seat.index, seat.token)
        for seat in table.seats
        if options.seats[seat.index] == EXTERNAL
    }
    emit(json.dumps(_invitation(server.address, table, token_files)))
    processes: list[BotProcess] = []
    done = False
    try:
        for seat in table.seats:
            name = options.seats[seat.index]
            if name == EXTERNAL:
                continue
            process = await BotProcess.start(
                seat.index,
                BotSpec(name=name, builtin=name),
                SeatAccess(
                    socket, seat.token, f"{options.seed}/{seat.index}" if options.seed else new_seed()
                ),
                logs / f"{table.table_id}-seat{seat.index}-{seat.name}.log",
                sandbox=options.sandbox,
                limits=options.limits,
                watchdog=watchdog,
            )
            processes.append(process)
        await table.done.wait()
        done = True
        await _grace(table, set(token_files))
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


#: How long ``hearts host`` keeps serving after the last game for an external bot that was away
#: at the end to come back and be told the result (its final status OK).
HOST_GRACE_S = 10.0


async def _grace(table: Table, external: set[int]) -> None:
    """Waits (at most HOST_GRACE_S) until every external seat has been told every game's end."""
    loop = asyncio.get_running_loop()
    until = loop.time() + HOST_GRACE_S
    while loop.time() < until:
        behind = [i for i in external if table.seats[i].results_seen < len(table.finished)]
        if not behind:
            return
        await asyncio.sleep(0.05)


def _invitation(address: str, table: Table, token_files: dict[int, Path]) -> dict[str, Any]:
    """What the user needs to seat their bots: the address, and per external seat its token file."""
    return {
        "address": address,
        "table_id": table.table_id,
        "seats": [
            {
                "seat": seat,
                "token_file": str(path),
                "command": f"<your bot> --server {address} --token-file {path}",
            }
            for seat, path in sorted(token_files.items())
        ],
    }
