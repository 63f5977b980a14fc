"""Who an entrant is: a built-in bot or a command, its files, its sandbox, how it talks."""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hearts_tournaments.arena.sandbox import SandboxKind

#: Bot names end up in file names (logs) and in tables: keep them plain.
BOT_NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")  # always fullmatch: "$" lets "a\n" through


class BotProtocol(enum.StrEnum):
    """How a ``command`` bot talks: gRPC to the referee, or JSON lines on its stdin/stdout."""

    GRPC = "grpc"
    STDIO = "stdio"


class Reuse(enum.StrEnum):
    """Whether a bot process plays more than one game (the same policy for every entrant).

    ``between_deals``: a process plays game after game on one stream, never two games of the
    same deal, and is replaced after ``restart_after`` games or when it crashes. ``never``: one
    fresh process per seat per game.
    """

    NEVER = "never"
    BETWEEN_DEALS = "between_deals"


@dataclass(frozen=True, slots=True)
class BotSpec:
    """One entrant of the tournament.

    Attributes:
        name: Its unique name in the tournament.
        builtin: A built-in bot's name (``heuristic``, ``random``, ...), or None.
        command: The command that starts the bot, or None; the runner appends
            ``--server unix:SOCKET --token-file FILE``.
        options: Keyword arguments for a built-in bot's constructor (e.g. ``worlds``).
        workdir: The folder of the config file: relative paths start there, and an unsandboxed
            command runs there.
        files: The files and folders the bot sees in its sandbox (absolute), or None for the
            default (see :func:`hearts_tournaments.arena.entrants.bot_files`).
        sandbox: This bot's sandbox, or None for the tournament's.
        protocol: How a command bot talks; a ``stdio`` bot gets no flags, no token and no
            address: the runner's bridge plays its seat over gRPC and talks JSON lines with it.
        runtime: The runtime a command bot runs on (:mod:`hearts_tournaments.arena.runtimes`:
            ``python-sdk``, ...), or None for none.
        snapshot: The organiser's read-only copy of the bot's files
            (:mod:`hearts_tournaments.arena.snapshot`), bound in their place in the sandbox; None until
            a league's ``add`` or a tournament's start takes it. Never part of the stored config.
    """

    name: str
    builtin: str | None = None
    command: tuple[str, ...] | None = None
    options: Mapping[str, int | float | str | bool] = field(default_factory=dict)
    workdir: Path = Path(".")
    files: tuple[Path, ...] | None = None
    sandbox: SandboxKind | None = None
    protocol: BotProtocol = BotProtocol.GRPC
    snapshot: Path | None = None
    runtime: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The bot as it appears in the stored configuration."""
        out: dict[str, Any] = {"name": self.name}
        if self.builtin is not None:
            out["builtin"] = self.builtin
            if self.options:
                out["options"] = dict(self.options)
        if self.command is not None:
            out["command"] = list(self.command)
        if self.files is not None:
            out["files"] = [str(p) for p in self.files]
        if self.sandbox is not None:
            out["sandbox"] = str(self.sandbox)
        if self.protocol is not BotProtocol.GRPC:
            out["protocol"] = self.protocol.value
        if self.runtime is not None:
            out["runtime"] = self.runtime
        return out
