"""Starting a ``protocol = "stdio"`` bot of a tournament: its process with pipes, and its bridge.

The process gets the command exactly as configured (no ``--server``, no ``--token``), in the
config file's folder, with ``HEARTS_BOT_NAME`` and ``HEARTS_SEED`` but none of the seat's
secrets or the referee's address (:data:`hearts_client.stdio_bridge.HIDDEN_ENV`). Its stderr
goes to the bot's log file; its stdin and stdout are pipes to the bridge, which plays the seat over
gRPC from the runner's process (:func:`hearts_client.stdio_bridge.run_bridge`). When the bridge
is done, a summary line of what it saw is appended to the bot's log.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import structlog

from hearts_client.sdk import BotRunError
from hearts_client.stdio_bridge import BotPipes, BridgeStats, bot_environment, run_bridge, start_process
from hearts_server.logs import get_logger
from hearts_tournaments.config import BotSpec
from hearts_tournaments.entrants import EXIT_GRACE_S, BotProcess, Launch

log = get_logger(__name__)


def stdio_launch(spec: BotSpec, seed: str) -> Launch:
    """How to start a stdio bot: its command unchanged, without the seat's token or address."""
    assert spec.command is not None
    env = bot_environment(HEARTS_BOT_NAME=spec.name, HEARTS_SEED=seed)
    return Launch(command=spec.command, env=env, cwd=spec.workdir)


class StdioBotProcess(BotProcess):
    """A stdio bot's process together with the bridge that plays its seat."""

    def __init__(
        self,
        seat: int,
        log_path: Path,
        process: asyncio.subprocess.Process | None,
        bridge: asyncio.Task[BridgeStats | None] | None = None,
    ) -> None:
        super().__init__(seat, log_path, process)
        self.bridge = bridge

    async def stop(self) -> int:
        """Lets the bridge finish (it closes the bot's stdin), then stops the process as usual."""
        if self.bridge is not None:
            done, _ = await asyncio.wait({self.bridge}, timeout=EXIT_GRACE_S)
            if not done:
                self.bridge.cancel()
                await asyncio.gather(self.bridge, return_exceptions=True)
        return await super().stop()

    def kill(self) -> None:
        """Stops the bridge and kills the process at once."""
        if self.bridge is not None:
            self.bridge.cancel()
        super().kill()


async def start_stdio_bot(
    seat: int, spec: BotSpec, address: str, token: str, seed: str, log_path: Path
) -> StdioBotProcess:
    """Starts a stdio bot in the seat of ``token`` at ``address``, with its bridge.

    A command that cannot be started gives a process that has already "exited" (as
    :meth:`BotProcess.start` does), and no bridge: the runner then declares the seat absent.
    """
    launch = stdio_launch(spec, seed)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log_file:
        try:
            process, pipes = await start_process(
                launch.command, cwd=launch.cwd, env=launch.env, stderr=log_file
            )
        except OSError as exc:
            log_file.write(f"hearts tournament: cannot start {list(launch.command)}: {exc}\n".encode())
            return StdioBotProcess(seat, log_path, None)
    bridge = asyncio.create_task(_bridge(pipes, address, token, spec.name, seat, log_path))
    return StdioBotProcess(seat, log_path, process, bridge)


async def _bridge(
    pipes: BotPipes, address: str, token: str, name: str, seat: int, log_path: Path
) -> BridgeStats | None:
    # This task's own context: the bridge's log lines say whose seat they are about.
    structlog.contextvars.bind_contextvars(seat=seat, bot_log=str(log_path))
    try:
        stats = await run_bridge(pipes, address, token, name=name)
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
