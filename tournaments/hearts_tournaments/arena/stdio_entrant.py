"""Starting a ``protocol = "stdio"`` bot of a tournament: its process with pipes, and its bridge.

The process is started like any bot (:meth:`~hearts_tournaments.arena.entrants.BotProcess.start`: in
its sandbox by default) but gets the command exactly as configured (no ``--server``, no
``--token-file``), neither the referee's socket nor the seat's token, only ``HEARTS_BOT_NAME`` and
``HEARTS_SEED``: its stdin and stdout are its only way out. Its stderr goes to the bot's log
file; its pipes lead to the bridge, which plays the seat over gRPC from the runner's process
(:func:`hearts_client.stdio_bridge.run_bridge`). When the bridge is done, a summary line of what
it saw is appended to the bot's log.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import structlog

from hearts_client.sdk import BotRunError
from hearts_client.stdio_bridge import BotPipes, BridgeStats, run_bridge
from hearts_server.logs import get_logger
from hearts_tournaments.arena.bots import BotSpec
from hearts_tournaments.arena.entrants import BotProcess, SeatAccess
from hearts_tournaments.arena.sandbox import Limits, SandboxKind, Watchdog

log = get_logger(__name__)


async def start_stdio_bot(
    seat: int,
    spec: BotSpec,
    address: str,
    access: SeatAccess,
    log_path: Path,
    sandbox: SandboxKind = SandboxKind.BWRAP,
    limits: Limits | None = None,
    watchdog: Watchdog | None = None,
    games: int = 1,
) -> BotProcess:
    """Starts a stdio bot in the seat of ``access.token`` at ``address``, with its bridge.

    A command that cannot be started gives a process that has already "exited" (as
    :meth:`BotProcess.start` does), and no bridge: the runner then releases the seat.
    """
    process = await BotProcess.start(
        seat, spec, access, log_path, sandbox=sandbox, limits=limits, watchdog=watchdog, games=games
    )
    if process.pipes is None:
        return process
    process.bridge = asyncio.create_task(
        _bridge(process.pipes, address, access.token, spec.name, seat, log_path)
    )
    return process


async def _bridge(
    pipes: BotPipes, address: str, token: str, name: str, seat: int, log_path: Path
) -> BridgeStats | None:
    # This task's own context: the bridge's log lines say whose seat they are about.
    structlog.contextvars.bind_contextvars(seat=seat, bot_log=str(log_path))
    try:
        stats = await run_bridge(
            pipes,
            address,
            token,
            name=name,
            notice=lambda hint: _note(log_path, f"hearts tournament: {hint}"),
        )
    except BotRunError as exc:
        log.warning("stdio_bridge_refused", bot=name, seat=seat, error=str(exc))
        _note(log_path, f"hearts tournament: the stdio bridge stopped: {exc}")
        return None
    _note(log_path, f"hearts tournament: stdio bridge summary {json.dumps(stats.to_json(), sort_keys=True)}")
    return stats


def _note(log_path: Path, line: str) -> None:
    """Appends one line of the runner's to the bot's log (the bot's stderr appends there too)."""
    try:
        with log_path.open("a", encoding="utf-8") as out:
            out.write(line + "\n")
    except OSError as exc:
        log.warning("bot_log_unwritable", path=str(log_path), error=str(exc))
