"""The pre-flight check: every command entrant passes the bot test kit's quick levels in its sandbox.

Made before the first game of ``hearts tournament run`` and ``resume``, by ``hearts tournament
check CONFIG`` and by ``hearts league add``. Two steps per ``command`` entrant (a built-in bot is
the project's own and is not checked):

1. On paper: the command's program exists (a path, or a name on the PATH the bot gets) and can be
   executed; every script it names (``bot.py``, ``bot.js``, ...) exists; and, sandboxed, each of
   them is inside what the sandbox shows the bot (the system's folders, this Python, the
   program's prefix and the bot's ``files``).
2. For real: the bot test kit's quick levels (:mod:`hearts_tournaments.kit`, ``process`` and
   ``session``), the entrant started exactly as the tournament starts it (same sandbox, limits,
   table policy, protocol): it starts, joins, decides, exits, stays in its limits, plays game
   after game on one stream, answers again after a rejection and reconnects.

An entrant that fails a check that stops play (:attr:`~hearts_tournaments.kit.report.CheckResult.stops_play`:
it does not start or join, its limits kill it, it never decides for itself or exits mid-game)
cannot play: an :class:`~hearts_tournaments.arena.failures.EntrantProblem`, one line naming the
entrant, that check (its verdict, with the first error line of its log) and the fix. An entrant
that fails only other checks (a late answer, no second answer after a rejection) plays, with an
:class:`EntrantWarning`: the referee answers for it where it fails, as in any game. The logs of
both are kept in ``OUTPUT/logs/NAME/check.log``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from hearts_tournaments.arena.bots import BotSpec
from hearts_tournaments.arena.entrants import (
    bot_files,
    command_inside,
    runtime_of,
    runtime_problem,
    sandbox_extra,
)
from hearts_tournaments.arena.failures import EntrantProblem
from hearts_tournaments.arena.folders import private_folder
from hearts_tournaments.arena.sandbox import SYSTEM_DIRS, SandboxError, SandboxKind, bot_environment
from hearts_tournaments.arena.settings import PlaySettings
from hearts_tournaments.arena.snapshot import STORE, SnapshotError
from hearts_tournaments.kit.catalogue import QUICK_LEVELS
from hearts_tournaments.kit.report import CheckResult, Report
from hearts_tournaments.kit.run import KitError, run_kit_async
from hearts_tournaments.kit.table import Competition
from hearts_tournaments.tournament.snapshots import take_snapshot

#: File name endings that make a command word a script the command needs.
SCRIPT_SUFFIXES = frozenset(
    {".py", ".pyc", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".sh", ".jar", ".lua", ".php", ".jl", ".R"}
)
#: The check's log kept for a failing entrant, in ``OUTPUT/logs/NAME/``.
CHECK_LOG = "check.log"


def paper_problem(config: PlaySettings, spec: BotSpec) -> EntrantProblem | None:
    """What is wrong with a command entrant's command before anything is started, or None."""
    if spec.command is None:
        return None
    where = f"the command of {spec.name!r}"
    base = spec.workdir.resolve()
    program = spec.command[0]
    env_path = bot_environment({}, Path("/tmp")).get("PATH")
    sandboxed = config.sandbox_of(spec) is SandboxKind.BWRAP
    found: Path | None
    problem = runtime_problem(spec)
    if problem is not None:
        return problem
    runtime = runtime_of(spec, sandboxed)
    mapped = runtime.installed.program(program) if runtime is not None else None
    if mapped is not None:
        found = Path(mapped)
        if not os.access(found, os.X_OK):
            return EntrantProblem(
                spec.name,
                f"its runtime {spec.runtime!r} maps {program!r} to {found}, which is not an executable file",
                f"`hearts runtime install {spec.runtime} --force`",
            )
    elif "/" in program:
        found = Path(program) if os.path.isabs(program) else base / program
        if not found.exists():
            return EntrantProblem(
                spec.name,
                f"its program {program} does not exist (looked for {found})",
                f"correct the program in {where} (a relative path starts at the config file's folder, "
                f"{base})",
            )
        if found.is_dir() or not os.access(found, os.X_OK):
            return EntrantProblem(
                spec.name,
                f"its program {found} is not an executable file",
                f"`chmod +x {found}`, or put its interpreter first in {where}",
            )
    else:
        which = shutil.which(program, path=env_path)
        if which is None:
            return EntrantProblem(
                spec.name,
                f"its program {program!r} is not on the PATH a bot gets ({env_path})",
                f"install {program}, or give its full path in {where}",
            )
        found = Path(which)
    scripts: list[Path] = []
    for word in spec.command[1:]:
        if word.startswith("-") or Path(word).suffix not in SCRIPT_SUFFIXES or any(c.isspace() for c in word):
            continue
        path = Path(word) if os.path.isabs(word) else base / word
        if not path.is_file():
            return EntrantProblem(
                spec.name,
                f"its script {word} does not exist (looked for {path})",
                f"correct the script's path in {where}: a relative path starts at the config file's folder, "
                f"{base}",
            )
        scripts.append(path)
    if not sandboxed:
        return None
    files = bot_files(spec)
    shown = [
        *(Path(d) for d in SYSTEM_DIRS),
        *sandbox_extra(spec, command_inside(spec), env_path, runtime),
        *files,
        *((runtime.installed.folder,) if runtime is not None else ()),
    ]
    for path in (found, *scripts):
        real = path.resolve()
        if not any(real == s or s in real.parents for s in shown):
            listed = ", ".join(str(f) for f in files) or "none"
            return EntrantProblem(
                spec.name,
                f"{path} is outside what its sandbox shows it (the system's folders, this Python, "
                f"its program's folder and its files: {listed})",
                f'add files = ["{real.parent}"] to the entrant (its own folder, shown read-only), or move '
                "the file next to the config file",
            )
    return None


@dataclass(frozen=True, slots=True)
class Preflight:
    """What the pre-flight check found.

    Attributes:
        problems: One per entrant that cannot play, in config order.
        reports: The kit's report of each entrant it started (by name).
    """

    problems: list[EntrantProblem]
    reports: dict[str, Report]
    warnings: list[EntrantWarning] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class EntrantWarning:
    """An entrant that plays, though it failed checks of the kit's quick levels that do not stop
    play (a late answer, no second answer after a rejection, a stray stdout line, a bad exit).

    Attributes:
        bot: The entrant's name.
        failed: The checks it failed, the first first.
        log: Its check log, kept.
    """

    bot: str
    failed: tuple[CheckResult, ...]
    log: Path | None = None

    def line(self) -> str:
        """The warning as one line (without the ``hearts: warning:`` prefix)."""
        first = self.failed[0]
        more = f" (and {len(self.failed) - 1} more)" if len(self.failed) > 1 else ""
        where = f" (log: {self.log})" if self.log is not None else ""
        return (
            f"entrant {self.bot!r} plays, but fails {first.name}{more}: {first.verdict}{where}; "
            f"fix: {first.fix}; the referee answers for it where it fails (`hearts bot test` runs "
            "every check)"
        )


def check_entrants(
    config: PlaySettings, logs: Path, bots: tuple[BotSpec, ...] | None = None, concurrency: int | None = None
) -> list[EntrantProblem]:
    """Checks every command entrant (or ``bots``): on paper, then the kit's quick levels.

    Args:
        config: How the games are played (its sandbox, limits and decision time apply).
        logs: The ``logs`` folder: a failing entrant's check log is kept in ``logs/NAME/``.
        bots: The entrants to check (default: the config's command bots).
        concurrency: Entrants checked at once (default: one per CPU).

    Returns:
        One problem per entrant that cannot play, in config order.
    """
    return preflight(config, logs, bots, concurrency).problems


def preflight(
    config: PlaySettings, logs: Path, bots: tuple[BotSpec, ...] | None = None, concurrency: int | None = None
) -> Preflight:
    """:func:`check_entrants`, with the kit's report of each entrant it started."""
    logs = logs.absolute()  # the paths in the messages work from anywhere
    specs = tuple(s for s in (bots if bots is not None else config.bots) if s.command is not None)
    problems: dict[str, EntrantProblem] = {}
    live: list[BotSpec] = []
    for spec in specs:
        problem = paper_problem(config, spec)
        if problem is not None:
            problems[spec.name] = problem
        else:
            live.append(spec)
    reports: dict[str, Report] = {}
    warnings: list[EntrantWarning] = []
    if live:
        at_once = concurrency or os.cpu_count() or 1
        found, reports, warnings = asyncio.run(_live_checks(config, tuple(live), logs, at_once))
        for problem in found:
            problems[problem.bot] = problem
    return Preflight([problems[s.name] for s in specs if s.name in problems], reports, warnings)


def competition_of(config: PlaySettings, spec: BotSpec) -> Competition:
    """What the kit tests ``spec`` for: the tournament's table, policy, limits and sandbox."""
    return Competition(
        table_size=config.table_size,
        policy=config.policy,
        limits=config.limits,
        sandbox=config.sandbox_of(spec),
        target_score=config.target_score,
    )


async def _live_checks(
    config: PlaySettings, specs: tuple[BotSpec, ...], logs: Path, concurrency: int
) -> tuple[list[EntrantProblem], dict[str, Report], list[EntrantWarning]]:
    """The kit's quick levels for each entrant (a few at a time), in a scratch folder."""
    gate = asyncio.Semaphore(max(1, concurrency))
    with tempfile.TemporaryDirectory(prefix="hearts-check-") as scratch:
        folder = Path(scratch)

        async def one(spec: BotSpec) -> EntrantProblem | Report:
            # A sandboxed entrant is checked as it plays: from a snapshot of its files (one taken
            # before, or a copy of its own here), never from its author's live folder.
            try:
                spec = _snapshotted(config, spec, folder, logs.parent)
                async with gate:
                    return await run_kit_async(
                        spec, competition_of(config, spec), QUICK_LEVELS, scratch=folder / spec.name
                    )
            except (SandboxError, SnapshotError, KitError) as exc:
                return EntrantProblem(spec.name, str(exc), "give the bot a folder of its own in files")

        results = await asyncio.gather(*(one(s) for s in specs))
        problems: list[EntrantProblem] = []
        reports: dict[str, Report] = {}
        warnings: list[EntrantWarning] = []
        for spec, result in zip(specs, results, strict=True):
            if isinstance(result, EntrantProblem):
                problems.append(result)
                continue
            reports[spec.name] = result.without_files()
            stopping = [c for c in result.failed if c.stops_play]
            if stopping:
                problems.append(_problem(spec, stopping[0], logs / spec.name))
            elif result.failed:
                kept = _kept_log_of(result.failed[0], logs / spec.name)
                warnings.append(EntrantWarning(spec.name, tuple(result.failed), kept))
    return problems, reports, warnings


def _problem(spec: BotSpec, check: CheckResult, folder: Path) -> EntrantProblem:
    """An entrant's first failed check as the one line the runner prints (its log kept)."""
    return EntrantProblem(
        spec.name, f"{check.verdict} ({check.name})", check.fix, _kept_log_of(check, folder)
    )


def _kept_log_of(check: CheckResult, folder: Path) -> Path | None:
    """The log a failed check rests on, kept in ``folder`` (None when it had none)."""
    log = Path(check.evidence.log_file) if check.evidence.log_file else None
    return _keep_log(log, folder) if log is not None else None


def _snapshotted(config: PlaySettings, spec: BotSpec, scratch: Path, output: Path) -> BotSpec:
    """``spec`` playing a snapshot of its files: its own (a league version's), or one taken now
    into ``scratch`` (refused as the runner refuses it: files that would show ``output``)."""
    if config.sandbox_of(spec) is not SandboxKind.BWRAP or spec.snapshot is not None:
        return spec
    return take_snapshot(config, spec, scratch / STORE, output, (scratch,))


def _keep_log(log: Path, folder: Path) -> Path | None:
    """Copies a failing entrant's check log to ``folder/check.log`` (private, like every log)."""
    if not log.is_file():
        return None
    try:
        private_folder(folder.parent.parent)
        private_folder(folder.parent)
        private_folder(folder)
        kept = folder / CHECK_LOG
        kept.unlink(missing_ok=True)
        shutil.copyfile(log, kept)
        kept.chmod(0o600)
    except OSError:
        return log
    return kept
