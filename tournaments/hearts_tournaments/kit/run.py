"""Running the kit: the levels asked for, on a snapshot of the bot's files, into one report."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path

from hearts_tournaments.arena.bots import BotSpec
from hearts_tournaments.arena.entrants import snapshot_spec
from hearts_tournaments.arena.folders import private_folder
from hearts_tournaments.arena.sandbox import SandboxError, SandboxKind, require_bwrap
from hearts_tournaments.arena.snapshot import STORE, SnapshotError
from hearts_tournaments.kit.catalogue import Level, checks_of
from hearts_tournaments.kit.process import process_level
from hearts_tournaments.kit.report import CheckResult, Report, Status
from hearts_tournaments.kit.rules import rules_level
from hearts_tournaments.kit.session import session_level
from hearts_tournaments.kit.table import Competition, Judged
from hearts_tournaments.kit.timing import timing_level
from hearts_tournaments.kit.verdicts import blocked

#: Every level, in order.
ALL_LEVELS = tuple(Level)

#: Each level's runner.
_RUNNERS: dict[Level, Callable[[BotSpec, Competition, Path], Awaitable[Judged]]] = {
    Level.PROCESS: process_level,
    Level.SESSION: session_level,
    Level.RULES: rules_level,
    Level.TIMING: timing_level,
}


class KitError(Exception):
    """The bot cannot be tested at all (no bwrap, files that cannot be copied): one line."""


def run_kit(
    spec: BotSpec,
    competition: Competition | None = None,
    levels: Sequence[Level] = ALL_LEVELS,
    *,
    scratch: Path | None = None,
) -> Report:
    """Tests ``spec`` at ``levels`` and returns the report (see :func:`run_kit_async`)."""
    return asyncio.run(run_kit_async(spec, competition, levels, scratch=scratch))


async def run_kit_async(
    spec: BotSpec,
    competition: Competition | None = None,
    levels: Sequence[Level] = ALL_LEVELS,
    *,
    scratch: Path | None = None,
) -> Report:
    """Tests ``spec`` as a competition runs it, one fresh process (or warm one) per level.

    A sandboxed bot plays a snapshot of its files, as in a tournament, taken here unless
    ``spec`` has one. The process level runs first: a bot that does not start is not tried
    again by the other levels. The session and rules levels then run side by side, and the
    timing level last, alone, so that the bot's own processes do not slow its measured turns.

    Args:
        spec: The bot (a command bot).
        competition: The table size, limits, policy and sandbox (default: a tournament's defaults).
        levels: The levels to run.
        scratch: A folder for the records, logs and snapshot (default: a private temporary one,
            removed at the end).

    Raises:
        KitError: bwrap is missing, or the bot's files cannot be copied.
    """
    if spec.command is None:
        raise KitError(f"{spec.name!r} is a built-in bot: the kit tests command bots")
    competition = competition or Competition()
    started = time.perf_counter()
    with _folder(scratch) as folder:
        spec = _snapshotted(spec, competition, folder)
        seconds: dict[str, float] = {}
        cpu: dict[str, float] = {}
        by_level: dict[Level, list[CheckResult]] = {}

        async def one(level: Level) -> None:
            start = time.perf_counter()
            judged = await _RUNNERS[level](spec, competition, folder / level.value)
            by_level[level] = judged.checks
            cpu[level.value] = judged.bot_cpu_s
            seconds[level.value] = round(time.perf_counter() - start, 1)

        rest = [lvl for lvl in levels if lvl is not Level.PROCESS]
        if Level.PROCESS in levels:
            await one(Level.PROCESS)
            starts = next(c for c in by_level[Level.PROCESS] if c.name == "process.starts")
            if starts.status is Status.FAILED:
                # It does not start: every other level would say so again, game after game.
                for level in rest:
                    by_level[level] = [blocked(c.name, "process.starts") for c in checks_of(level)]
                rest = []
        await asyncio.gather(*(one(level) for level in rest if level is not Level.TIMING))
        if Level.TIMING in rest:
            await one(Level.TIMING)
    ordered = tuple(lvl for lvl in ALL_LEVELS if lvl in levels)
    return Report(
        bot=spec.name,
        command=tuple(spec.command or ()),
        protocol=spec.protocol.value,
        levels=tuple(lvl.value for lvl in ordered),
        checks=tuple(c for lvl in ordered for c in by_level[lvl]),
        seconds={lvl.value: seconds.get(lvl.value, 0.0) for lvl in ordered},
        wall_s=round(time.perf_counter() - started, 1),
        bot_cpu_s={lvl.value: cpu[lvl.value] for lvl in ordered if lvl.value in cpu},
    )


@contextlib.contextmanager
def _folder(scratch: Path | None) -> Iterator[Path]:
    if scratch is not None:
        private_folder(scratch)
        yield scratch.absolute()
        return
    folder = Path(tempfile.mkdtemp(prefix="hearts-kit-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _snapshotted(spec: BotSpec, competition: Competition, folder: Path) -> BotSpec:
    """``spec`` playing a snapshot of its files when sandboxed (as a tournament plays it)."""
    if competition.sandbox is not SandboxKind.BWRAP:
        return spec
    try:
        require_bwrap()
        if spec.snapshot is not None:
            return spec
        return snapshot_spec(spec, folder / STORE, (folder,))
    except (SandboxError, SnapshotError) as exc:
        raise KitError(str(exc)) from None
