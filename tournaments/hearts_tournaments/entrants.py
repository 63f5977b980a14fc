"""Starting and stopping the bots of a tournament game, one process per seat.

A built-in bot runs as ``python -m hearts_tournaments.builtin_bot NAME --server=A --token=T
--seed=S [--options JSON]``. A ``command`` bot runs as the command with ``--server HOST:PORT
--token TOKEN`` appended (``--token=TOKEN`` when the token starts with ``-``), in the config
file's folder. Both get the environment variables
``HEARTS_SERVER``, ``HEARTS_TOKEN``, ``HEARTS_BOT_NAME`` and ``HEARTS_SEED``. A bot's stdout and
stderr go to its own log file.

Processes stay in the runner's process group, so that killing the group (Ctrl-C in a
terminal, ``kill -9 -PGID``) takes the bots with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from hearts_tournaments.config import BotSpec

#: Seconds a bot gets to exit by itself once its table is done (the SDK's bots take well under
#: one; the game is stored whatever happens next)...
EXIT_GRACE_S = 3.0
#: ... and after SIGTERM, before SIGKILL.
TERM_GRACE_S = 2.0
#: Exit status recorded when a command cannot be started at all (as a shell reports it).
NOT_STARTED = 127


@dataclass(frozen=True, slots=True)
class Launch:
    """How to start one bot in one seat.

    Attributes:
        command: The program and its arguments.
        env: The whole environment of the process.
        cwd: Its working folder.
    """

    command: tuple[str, ...]
    env: dict[str, str]
    cwd: Path


def launch_for(spec: BotSpec, address: str, token: str, seed: str) -> Launch:
    """How to start ``spec`` in the seat of ``token`` at the referee ``address``."""
    if spec.builtin is not None:
        command: tuple[str, ...] = (
            sys.executable,
            "-m",
            "hearts_tournaments.builtin_bot",
            spec.builtin,
            f"--server={address}",
            f"--token={token}",
            f"--seed={seed}",
        )
        if spec.options:
            command += ("--options", json.dumps(dict(spec.options), sort_keys=True))
    else:
        assert spec.command is not None
        # A token may start with "-", which argparse or clap would take for an option: only
        # then is it passed in the "--token=TOKEN" form that every common parser reads.
        token_flag = ("--token", token) if not token.startswith("-") else (f"--token={token}",)
        command = (*spec.command, "--server", address, *token_flag)
    env = dict(os.environ)
    env.update(HEARTS_SERVER=address, HEARTS_TOKEN=token, HEARTS_BOT_NAME=spec.name, HEARTS_SEED=seed)
    return Launch(command=command, env=env, cwd=spec.workdir)


class BotProcess:
    """A bot's process in one seat (or the record that it could not be started).

    Use :meth:`start`; a command that does not exist or cannot be executed gives a
    :class:`BotProcess` that has already "exited" with :data:`NOT_STARTED`.
    """

    def __init__(self, seat: int, log_path: Path, process: asyncio.subprocess.Process | None) -> None:
        self.seat = seat
        self.log_path = log_path
        self.process = process
        #: Whether the runner had to terminate or kill the process after its table was done.
        self.lingered = False

    @classmethod
    async def start(cls, seat: int, launch: Launch, log_path: Path) -> BotProcess:
        """Starts a bot, its output going to ``log_path`` (appended)."""
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("ab") as log:
            try:
                process = await asyncio.create_subprocess_exec(
                    *launch.command,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    env=launch.env,
                    cwd=launch.cwd,
                )
            except OSError as exc:
                log.write(f"hearts tournament: cannot start {list(launch.command)}: {exc}\n".encode())
                return cls(seat, log_path, None)
        return cls(seat, log_path, process)

    @property
    def returncode(self) -> int | None:
        """The exit status once it has exited (negative: killed by that signal)."""
        if self.process is None:
            return NOT_STARTED
        return self.process.returncode

    async def wait(self) -> int:
        """Waits for the process to exit and returns its status."""
        if self.process is None:
            return NOT_STARTED
        return await self.process.wait()

    async def stop(self) -> int:
        """Lets the bot exit by itself for a while, then terminates it, then kills it."""
        if self.process is None:
            return NOT_STARTED
        for grace, signal_it in ((EXIT_GRACE_S, self.process.terminate), (TERM_GRACE_S, self.process.kill)):
            try:
                return await asyncio.wait_for(self.process.wait(), grace)
            except TimeoutError:
                self.lingered = True
                with contextlib.suppress(ProcessLookupError):
                    signal_it()
        return await self.process.wait()

    def kill(self) -> None:
        """Kills the process at once (the tournament is stopping)."""
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
