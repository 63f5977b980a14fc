"""The pre-flight check: every command entrant starts, joins and decides in its real sandbox.

Made before the first game of ``hearts tournament run`` and ``resume``, by ``hearts tournament
check CONFIG`` and by ``hearts league add``. Two steps per ``command`` entrant (a built-in bot is
the project's own and is not checked):

1. On paper: the command's program exists (a path, or a name on the PATH the bot gets) and can be
   executed; every script it names (``bot.py``, ``bot.js``, ...) exists; and, sandboxed, each of
   them is inside what the sandbox shows the bot (the system's folders, this Python, the
   program's prefix and the bot's ``files``).
2. For real: a one-hand game on an in-process referee, the entrant in one seat started exactly
   as the tournament starts it (same sandbox, limits, protocol), the other seats played by the
   referee. It must not exit before the game ends and must make a decision of its own.

A failure is an :class:`~hearts_tournaments.arena.failures.EntrantProblem`: one line naming the
entrant, the cause (with
the first error line of its log) and the fix. The check's logs go to
``OUTPUT/logs/NAME/check.log`` (only the failing entrants' are kept).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import secrets
import shutil
import sys
import tempfile
from pathlib import Path

from hearts_tournaments.arena import runtimes
from hearts_tournaments.arena.bots import BotProtocol, BotSpec, Reuse
from hearts_tournaments.arena.entrants import (
    bot_files,
    command_inside,
    runtime_of,
    runtime_problem,
    sandbox_extra,
)
from hearts_tournaments.arena.failures import (
    STDIO_FIX,
    EntrantProblem,
    first_error_line,
    log_head,
    looks_like_stdio,
)
from hearts_tournaments.arena.folders import private_folder
from hearts_tournaments.arena.job import GameJob, ScheduledGame
from hearts_tournaments.arena.local import Arena, ArenaError
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.arena.sandbox import SYSTEM_DIRS, SandboxError, SandboxKind, bot_environment
from hearts_tournaments.arena.snapshot import STORE, SnapshotError
from hearts_tournaments.tournament.config import TournamentConfig
from hearts_tournaments.tournament.snapshots import take_snapshot

#: File name endings that make a command word a script the command needs.
SCRIPT_SUFFIXES = frozenset(
    {".py", ".pyc", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".sh", ".jar", ".lua", ".php", ".jl", ".R"}
)
#: The check's game key (its bot's log is ``check-s0.log`` in the check's own folder).
CHECK_KEY = "check"
#: The check's log kept for a failing entrant, in ``OUTPUT/logs/NAME/``.
CHECK_LOG = "check.log"


def paper_problem(config: TournamentConfig, spec: BotSpec) -> EntrantProblem | None:
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


def check_entrants(
    config: TournamentConfig, logs: Path, bots: tuple[BotSpec, ...] | None = None
) -> list[EntrantProblem]:
    """Checks every command entrant (or ``bots``): on paper, then one hand each in its sandbox.

    Args:
        config: The tournament (its sandbox, limits and decision time apply).
        logs: The ``logs`` folder: a failing entrant's check log is kept in ``logs/NAME/``.
        bots: The entrants to check (default: the config's command bots).

    Returns:
        One problem per entrant that cannot play, in config order.
    """
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
    if live:
        for problem in asyncio.run(_live_checks(config, tuple(live), logs)):
            problems[problem.bot] = problem
    return [problems[s.name] for s in specs if s.name in problems]


async def _live_checks(
    config: TournamentConfig, specs: tuple[BotSpec, ...], logs: Path
) -> list[EntrantProblem]:
    checking = dataclasses.replace(
        config, bots=specs, reuse=Reuse.NEVER, max_hands=1, server="", concurrency=len(specs)
    )
    secret = secrets.token_bytes(32)
    with tempfile.TemporaryDirectory(prefix="hearts-check-") as scratch:
        folder = Path(scratch)
        # A sandboxed entrant is checked as it plays: from a snapshot of its files (one taken
        # before, or a copy of its own here), never from its author's live folder.
        snapped: list[BotSpec] = []
        refused: list[EntrantProblem] = []
        for spec in specs:
            try:
                snapped.append(_snapshotted(config, spec, folder, logs.parent))
            except (SandboxError, SnapshotError) as exc:
                refused.append(
                    EntrantProblem(spec.name, str(exc), "give the bot a folder of its own in files")
                )
        specs = tuple(snapped)
        checking = dataclasses.replace(checking, bots=specs)
        if not specs:
            return refused
        executor = Arena(checking, folder)
        told: list[str] = []  # the runner's lines about processes that ended early
        executor.notify = told.append
        async with executor:

            async def one(spec: BotSpec) -> EntrantProblem | GameOutcome:
                n = config.table_size
                seats = (spec.name, *(f"{CHECK_KEY}-{s}" for s in range(1, n)))
                game = ScheduledGame(0, CHECK_KEY, 0, 0, "check", seats, ("check",) * n)
                job = GameJob.of(game, (False, *(True,) * (n - 1)), secret)
                try:
                    outcome = await executor.play(job)
                except ArenaError as exc:
                    return EntrantProblem(spec.name, str(exc), "see the runner's log")
                return outcome

            results = await asyncio.gather(*(one(s) for s in specs))
        # The executor has let every process exit: the logs are whole now.
        problems = refused
        for spec, result in zip(specs, results, strict=True):
            if isinstance(result, EntrantProblem):
                problems.append(result)
            elif result.crashed[0] or result.never_answered[0] or result.retired[0]:
                kept = _keep_log(folder / "logs" / spec.name / f"{CHECK_KEY}-s0.log", logs / spec.name)
                start = f"entrant {spec.name!r} in game {CHECK_KEY} (seat 0) "
                what = next((t[len(start) :].split("; log: ")[0] for t in told if t.startswith(start)), None)
                problems.append(_live_problem(config, spec, result.crashed[0], what, kept))
    return problems


def _snapshotted(config: TournamentConfig, spec: BotSpec, scratch: Path, output: Path) -> BotSpec:
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


def _live_problem(
    config: TournamentConfig, spec: BotSpec, crashed: bool, told: str | None, log: Path | None
) -> EntrantProblem:
    """Why a started entrant failed its hand (``told``: the runner's words on its exit), and the fix."""
    assert spec.command is not None
    if told is not None:
        cause = f"it {told}"
    else:
        said = first_error_line(log) if log is not None else None
        what = "exited before its game ended" if crashed else "never made a decision of its own"
        cause = f"it {what}" + (f"; its log says {said!r}" if said else "; its log is empty")
    where = f"the command of {spec.name!r}"
    program = spec.command[0]
    env_path = bot_environment({}, Path("/tmp")).get("PATH")
    found = shutil.which(program, path=env_path) if "/" not in program else None
    if found is not None and _is_script(Path(found)) and not _under_system(Path(found).resolve()):
        # A shim (pyenv's, asdf's) or a wrapper: a script that runs what the sandbox hides.
        example = sys.executable if Path(program).name.startswith("python") else f"the real path of {program}"
        return EntrantProblem(
            spec.name,
            f"{program!r} on PATH is {found}, a script (a shim or wrapper) that runs what the sandbox "
            f"does not show; {cause}",
            f'name the interpreter itself in {where}, e.g. "{example}"',
            log,
        )
    said_line = first_error_line(log) if log is not None else None
    if said_line is not None and "bwrap: execvp" in said_line:
        example = sys.executable if Path(program).name.startswith("python") else f"the full path of {program}"
        return EntrantProblem(
            spec.name,
            f"its sandbox does not show the program {program!r}; {cause}",
            f'name the program by a path the sandbox shows in {where}, e.g. "{example}", or add its folder '
            "to the entrant's files",
            log,
        )
    head = log_head(log) if log is not None else None
    wanted = runtimes.lacking(head) if head is not None else None
    if wanted is not None and spec.runtime != wanted[0].name:
        return EntrantProblem(
            spec.name,
            cause,
            f'add runtime = "{wanted[0].name}" to its entry (its [[bots]] table, or bot.toml): that runtime '
            f"provides what its log says it lacks ({wanted[1]}; `hearts runtime list`)",
            log,
        )
    if told is not None and not crashed and looks_like_stdio(spec.protocol, 0, log):
        fix = STDIO_FIX  # the exit line (told) said what this usually means
    elif spec.protocol is BotProtocol.STDIO and not crashed:
        fix = (
            "write one JSON line per request on stdout and flush after every line "
            "(docs/PROTOCOL.md, stdin/stdout bots)"
        )
    elif config.sandbox_of(spec) is SandboxKind.BWRAP:
        fix = (
            "run the command by hand to see it start; inside the sandbox it runs in /tmp with no network "
            "and sees only its files (docs/PROTOCOL.md, what a bot process gets)"
        )
    else:
        fix = "run the command by hand in the config file's folder to see it start"
    return EntrantProblem(spec.name, cause, fix, log)


def _is_script(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(2) == b"#!"
    except OSError:
        return False


def _under_system(path: Path) -> bool:
    return any(path == Path(d) or Path(d) in path.parents for d in SYSTEM_DIRS)
