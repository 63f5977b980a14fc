"""Starting, watching and stopping the bots of a tournament game, one sandboxed process per seat.

A bot never gets its seat token on its command line or in its environment (other processes
could read them in ``/proc``): the token is written to a file of a private 0700 folder and the
bot gets the file's path. A built-in bot runs as ``python -m hearts_tournaments.arena.builtin_bot NAME
--server=unix:SOCKET --token-file=FILE --seed=S [--options JSON]``; a ``command`` bot runs as the
command with ``--server unix:SOCKET --token-file FILE`` appended. Both get the environment
variables ``HEARTS_SERVER``, ``HEARTS_TOKEN_FILE``, ``HEARTS_BOT_NAME`` and ``HEARTS_SEED``, plus
an allow-list of the runner's (:data:`~hearts_tournaments.arena.sandbox.PASSED_ENV`) and ``HOME`` /
``TMPDIR`` pointing to a private scratch folder; nothing else of the runner's environment.

In the default ``bwrap`` sandbox (:mod:`hearts_tournaments.arena.sandbox`) the socket is
``/run/hearts/referee.sock``, the token file ``/run/hearts/token``, and the bot runs in its
scratch folder ``/tmp``, seeing only the system's runtime and its own files (:func:`bot_files`).
With ``sandbox = "none"`` it runs in the config file's folder as a plain process.

A bot's stdout and stderr go through a pipe to a copier that keeps at most ``log_bytes`` per
game in its log file. The runner's :class:`~hearts_tournaments.arena.sandbox.Watchdog` kills a
sandbox past its memory, CPU or process budget. When its game is done a bot gets a grace to
exit, then its whole process tree (in the sandbox: its PID namespace) is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from hearts_client.stdio_bridge import BotPipes
from hearts_core.lifetime import tied_argv
from hearts_tournaments.arena import runtimes, snapshot
from hearts_tournaments.arena.bots import BotProtocol, BotSpec
from hearts_tournaments.arena.failures import EntrantProblem
from hearts_tournaments.arena.runtimes import Provision, RuntimeUnavailable
from hearts_tournaments.arena.sandbox import (
    INSIDE_SCRATCH,
    INSIDE_SOCKET,
    INSIDE_TOKEN,
    Limits,
    SandboxError,
    SandboxKind,
    SandboxSpec,
    Usage,
    Watch,
    Watchdog,
    bot_environment,
    bwrap_argv,
    kill_tree,
    program_prefixes,
    require_bwrap,
    rlimit_prefix,
    runtime_paths,
)
from hearts_tournaments.arena.snapshot import binds

#: Seconds a bot gets to exit by itself once its table is done (the SDK's bots take well under
#: one; the game is stored whatever happens next)...
EXIT_GRACE_S = 3.0
#: ... and after SIGTERM, before SIGKILL.
TERM_GRACE_S = 2.0
#: Seconds to wait for a killed bot's exit to be collected (a SIGKILL ends it at once).
KILL_REAP_S = 5.0
#: Seconds the log copier gets to drain the pipe once the bot has exited.
DRAIN_S = 2.0
#: Exit status recorded when a command cannot be started at all (as a shell reports it).
NOT_STARTED = 127
#: Bytes read from a bot's output at a time.
CHUNK = 65536


@dataclass(frozen=True, slots=True)
class SeatAccess:
    """What the runner hands one seat's bot.

    Attributes:
        socket: The referee's Unix socket on this machine.
        token: The seat's secret token (written to a private file, never passed as text).
        seed: The bot's own seed.
    """

    socket: Path
    token: str
    seed: str


@dataclass(frozen=True, slots=True)
class Launch:
    """How to start one bot in one seat (before any sandbox wraps it).

    Attributes:
        command: The program and its arguments.
        env: The whole environment of the process.
        cwd: Its working folder.
    """

    command: tuple[str, ...]
    env: dict[str, str]
    cwd: Path


def launch_for(
    spec: BotSpec,
    server: str,
    token_file: Path,
    seed: str,
    home: Path,
    cwd: Path,
    own: tuple[str, ...] | None = None,
) -> Launch:
    """How to start ``spec`` at the referee ``server`` with the seat token in ``token_file``.

    Args:
        spec: The bot.
        server: The gRPC target, ``unix:PATH``, as the bot sees it.
        token_file: The token file, as the bot sees it.
        seed: The bot's seed.
        home: Its scratch folder (``HOME`` and ``TMPDIR``), as it sees it.
        cwd: Its working folder.
        own: A command bot's command as it runs (default: its command as written), the flags
            appended to it.
    """
    if spec.builtin is not None:
        command: tuple[str, ...] = (
            sys.executable,
            "-m",
            "hearts_tournaments.arena.builtin_bot",
            spec.builtin,
            f"--server={server}",
            f"--token-file={token_file}",
            f"--seed={seed}",
        )
        if spec.options:
            command += ("--options", json.dumps(dict(spec.options), sort_keys=True))
    else:
        assert spec.command is not None
        command = (*(own or spec.command), "--server", server, "--token-file", str(token_file))
    env = bot_environment(
        {
            "HEARTS_SERVER": server,
            "HEARTS_TOKEN_FILE": str(token_file),
            "HEARTS_BOT_NAME": spec.name,
            "HEARTS_SEED": seed,
        },
        home,
    )
    return Launch(command=command, env=env, cwd=cwd)


def stdio_launch_for(spec: BotSpec, seed: str, home: Path, cwd: Path, command: tuple[str, ...]) -> Launch:
    """How to start a stdio bot: its command as written, no flags, neither token nor address."""
    env = bot_environment({"HEARTS_BOT_NAME": spec.name, "HEARTS_SEED": seed}, home)
    return Launch(command=tuple(command), env=env, cwd=cwd)


def bot_files(spec: BotSpec) -> tuple[Path, ...]:
    """The files a sandboxed bot sees besides the runtime: its ``files``, or the default.

    The default, for a ``command`` bot: the first word of the command (the program, or else
    the script given to an interpreter, e.g. ``bots/mine.py`` in ``["python", "bots/mine.py"]``)
    that names an existing file inside the config file's folder gives its folder; when that
    folder is the config file's folder itself, only that file. Otherwise nothing (a program on
    PATH or elsewhere needs ``files``). A built-in bot has none.
    """
    if spec.files is not None:
        return spec.files
    if spec.command is None:
        return ()
    base = spec.workdir.resolve()
    for word in spec.command:
        path = (base / word).resolve() if not os.path.isabs(word) else Path(word).resolve()
        if base in path.parents and path.is_file():
            return (path.parent,) if path.parent != base else (path,)
    return ()


def check_files(spec: BotSpec, output: Path) -> None:
    """Refuses ``files`` that are missing or would show a bot the config or the output folder.

    A snapshotted spec passes: its copy was checked when it was taken, and only the copy is bound.

    Raises:
        SandboxError: naming the bot and the folder.
    """
    if spec.snapshot is not None:
        return
    base = spec.workdir.resolve()
    out = output.resolve()
    for path in bot_files(spec):
        if not path.exists():
            raise SandboxError(f"bot {spec.name!r}: files {str(path)!r} does not exist")
        for secret, what in ((base, "the config file"), (out, "the output folder")):
            if path == secret or path in secret.parents:
                raise SandboxError(
                    f"bot {spec.name!r}: files {str(path)!r} holds {what} ({secret}), which no bot may "
                    "see: put the bot's files in a folder of their own and name it in files"
                )
        if path == out or out in path.parents:
            raise SandboxError(f"bot {spec.name!r}: files {str(path)!r} is inside the output folder {out}")


def snapshot_spec(
    spec: BotSpec,
    store: Path,
    secret: tuple[Path, ...],
    digest: str | None = None,
    private: tuple[Path, ...] = (),
) -> BotSpec:
    """``spec`` with its files copied into the snapshot ``store`` (or, given ``digest``, the copy
    taken before, checked again), to be bound in their place.

    A built-in bot, a command bot with no files of its own, or one snapshotted already, is
    returned as it is.

    Raises:
        SnapshotError: the files cannot be copied as they are (see :func:`snapshot.take`), or
            the earlier copy was changed.
    """
    files = bot_files(spec)
    if spec.command is None or not files or (spec.snapshot is not None and digest is None):
        return spec  # nothing of its own, or snapshotted already
    if digest is None:
        taken = snapshot.take(spec.name, files, store, secret, private)
    else:
        taken = snapshot.Snapshot(digest, store / digest, files)
        snapshot.check_snapshot(spec.name, taken.folder, files)
    return replace(spec, files=files, snapshot=taken.folder)


def command_inside(spec: BotSpec) -> tuple[str, ...]:
    """The command with words naming files of the config folder made absolute (cwd differs)."""
    assert spec.command is not None
    base = spec.workdir.resolve()
    words = []
    for word in spec.command:
        if not os.path.isabs(word) and (base / word).exists():
            words.append(str((base / word).resolve()))
        else:
            words.append(word)
    return tuple(words)


def runtime_problem(spec: BotSpec) -> EntrantProblem | None:
    """Why ``spec`` cannot run on the runtime it names here (it is not installed), or None."""
    if spec.runtime is None or spec.command is None:
        return None
    runtime = runtimes.get(spec.runtime)
    if runtime.installed() is not None:
        return None
    needs = f" (it needs {', '.join(runtime.needs)})" if runtime.needs else ""
    return EntrantProblem(
        spec.name,
        f"it runs on the runtime {spec.runtime!r}, which is not installed on this machine",
        f"`hearts runtime install {spec.runtime}`{needs}; `hearts runtime list` shows what this machine has",
    )


def runtime_of(spec: BotSpec, sandboxed: bool = True) -> Provision | None:
    """What ``spec``'s runtime gives it, sandboxed or not (None: a built-in, or no runtime named).

    Raises:
        RuntimeUnavailable: the runtime is not installed on this machine (the line of
            :func:`runtime_problem`).
    """
    problem = runtime_problem(spec)
    if problem is not None:
        raise RuntimeUnavailable(problem.line())
    if spec.runtime is None or spec.command is None:
        return None
    return runtimes.provide(spec.runtime, bot_files(spec), sandboxed)


def own_command(spec: BotSpec, runtime: Provision | None, sandboxed: bool = True) -> tuple[str, ...]:
    """A command bot's command as it runs: its words naming files made absolute (sandboxed; an
    unsandboxed bot runs in the config file's folder), its program the runtime's when it maps it."""
    assert spec.command is not None
    words = command_inside(spec) if sandboxed else spec.command
    return runtime.command(words) if runtime is not None else words


def sandbox_extra(
    spec: BotSpec, command: tuple[str, ...], env_path: str | None, runtime: Provision | None = None
) -> tuple[Path, ...]:
    """Read-only folders a sandboxed bot needs besides its files, at the same paths.

    A bot with a runtime: what the runtime's programs need (its folder is bound apart, at its
    place in ``/opt``). Otherwise its program's prefix, and, for a built-in bot or a command run
    by this very Python, this Python's prefixes and the project's packages
    (:func:`~hearts_tournaments.arena.sandbox.runtime_paths`): never for any other program, so a
    bot that does not run on this Python sees nothing of the referee, the runner or the league.
    """
    if runtime is not None:
        return runtime.extra
    base = spec.workdir.resolve()
    prefixes = program_prefixes(command[0], env_path)
    extra: list[Path] = []
    if spec.builtin is not None or set(prefixes) & this_python():
        extra += runtime_paths()
    for prefix in prefixes:
        # Never the config file's folder, a folder holding it, or one inside it (those are files).
        if prefix != base and prefix not in base.parents and base not in prefix.parents:
            extra.append(prefix)
    return tuple(extra)


def this_python() -> set[Path]:
    """The prefixes of the Python running this code (its virtual environment's and its base's)."""
    return {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}


class LogMeter:
    """How much of a bot's output its log has kept this game (a warm bot's is reset per game)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.kept = 0
        self.truncated = False

    def new_game(self) -> None:
        """A new game: ``cap`` bytes more may be kept."""
        self.kept = 0
        self.truncated = False


async def copy_log(reader: asyncio.StreamReader, log_path: Path, cap: int | LogMeter) -> None:
    """Copies a bot's output to its log file, at most ``cap`` bytes (per game), then one truncation line.

    The rest is read and dropped, so that a chatty bot never blocks on a full pipe.
    """
    meter = cap if isinstance(cap, LogMeter) else LogMeter(cap)
    with log_path.open("ab") as log:
        while chunk := await reader.read(CHUNK):
            if meter.truncated:
                continue
            room = meter.cap - meter.kept
            log.write(chunk[:room])
            meter.kept += min(room, len(chunk))
            if len(chunk) > room:
                meter.truncated = True
                log.write(
                    f"\nhearts sandbox: log truncated at {meter.cap} bytes; the rest is dropped\n".encode()
                )
            log.flush()


class BotProcess:
    """A bot's process in one seat (or the record that it could not be started).

    Use :meth:`start`; a command that does not exist or cannot be executed gives a
    :class:`BotProcess` that has already "exited" with :data:`NOT_STARTED`.
    """

    def __init__(
        self,
        seat: int,
        log_path: Path,
        process: asyncio.subprocess.Process | None,
        private: Path | None = None,
        watch: Watch | None = None,
        watchdog: Watchdog | None = None,
        copier: asyncio.Task[None] | None = None,
    ) -> None:
        self.seat = seat
        self.log_path = log_path
        self.process = process
        #: Whether the runner had to terminate or kill the process after its table was done.
        self.lingered = False
        self._private = private
        self._watch = watch
        self._watchdog = watchdog
        self._copier = copier
        self._finishing: asyncio.Task[None] | None = None
        self._meter: LogMeter | None = None
        #: For a stdio bot: the runner's ends of its stdin and stdout ...
        self.pipes: BotPipes | None = None
        #: ... and the bridge that plays its seat through them.
        self.bridge: asyncio.Task[object] | None = None

    @classmethod
    async def start(
        cls,
        seat: int,
        spec: BotSpec,
        access: SeatAccess,
        log_path: Path,
        sandbox: SandboxKind = SandboxKind.BWRAP,
        limits: Limits | None = None,
        watchdog: Watchdog | None = None,
        games: int = 1,
    ) -> BotProcess:
        """Starts a bot, its output going to ``log_path`` (appended).

        A ``protocol = "stdio"`` bot gets neither the referee's socket nor its token nor any
        flag: its stdin and stdout are pipes whose other ends are :attr:`pipes` (for the
        runner's bridge), its stderr goes to the log.

        Args:
            seat: The seat it plays.
            spec: The bot.
            access: The referee's socket, the seat's token and the bot's seed.
            log_path: Its log file.
            sandbox: How it is isolated.
            limits: What it may use (default: :class:`Limits`).
            watchdog: Enforces the memory, CPU and process budgets (None: rlimits only).
            games: The most games it will play (a warm bot): its CPU rlimit is the per-game
                budget times this, the watchdog keeping the budget per game (:meth:`new_game`).

        Raises:
            SandboxError: if bwrap is needed and missing, or the bot's runtime is not installed
                (:class:`~hearts_tournaments.arena.runtimes.RuntimeUnavailable`).
        """
        runtime = runtime_of(spec, sandbox is SandboxKind.BWRAP)
        bwrap = require_bwrap() if sandbox is SandboxKind.BWRAP else ""
        limits = limits or Limits()
        per_game = limits
        limits = replace(limits, cpu_s=limits.cpu_s * games)
        stdio = spec.protocol is BotProtocol.STDIO
        log_path.parent.mkdir(parents=True, exist_ok=True)
        private = Path(tempfile.mkdtemp(prefix="hearts-seat-"))  # mode 0700
        token_file = private / "token"
        if not stdio:
            fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="ascii") as handle:
                handle.write(access.token + "\n")  # as `hearts host` writes it (docs/PROTOCOL.md)
        sandboxed = sandbox is SandboxKind.BWRAP
        own = own_command(spec, runtime, sandboxed) if spec.command is not None else None
        if sandboxed:  # the paths as the bot sees them inside
            socket, token_seen, home, cwd = INSIDE_SOCKET, INSIDE_TOKEN, INSIDE_SCRATCH, private
        else:
            home = private / "scratch"
            home.mkdir()
            socket, token_seen, cwd = access.socket, token_file, spec.workdir
        if stdio:
            assert own is not None
            launch = stdio_launch_for(spec, access.seed, home, cwd, own)
        else:
            launch = launch_for(spec, f"unix:{socket}", token_seen, access.seed, home, cwd, own)
        if runtime is not None:
            launch.env.update(runtime.environment(launch.env["PATH"], per_game.memory_mb))
        if sandboxed:
            confined = SandboxSpec(
                command=launch.command,
                socket=None if stdio else access.socket,
                token_file=None if stdio else token_file,
                files=bot_files(spec) if spec.snapshot is None else (),
                binds=(
                    *(() if spec.snapshot is None else binds(spec.snapshot, bot_files(spec))),
                    *(runtime.binds if runtime is not None else ()),
                ),
                extra=sandbox_extra(spec, launch.command, launch.env.get("PATH"), runtime),
                hidden=runtime.hidden if runtime is not None else (),
                limits=limits,
            )
            # bwrap's --die-with-parent ties the sandbox to the outer bwrap; tied_argv ties that
            # one to the runner, even while it is still starting (hearts_core.lifetime).
            argv = tied_argv([*rlimit_prefix(limits), *bwrap_argv(bwrap, confined)])
        else:
            # Killed by the kernel if the runner dies (even by SIGKILL) before stopping it.
            argv = tied_argv([*rlimit_prefix(limits), *launch.command])
        # A stdio bot's stdin and stdout are the bridge's pipes; anything else it writes is logged.
        child_stdin: int | None = None
        child_stdout: int | None = None
        ours: tuple[int, int] | None = None
        if stdio:
            child_stdin, stdin_w = os.pipe()
            stdout_r, child_stdout = os.pipe()
            ours = (stdin_w, stdout_r)
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=child_stdin if stdio else asyncio.subprocess.DEVNULL,
                stdout=child_stdout if stdio else asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE if stdio else asyncio.subprocess.STDOUT,
                env=launch.env,
                cwd=launch.cwd,
            )
        except OSError as exc:
            with log_path.open("ab") as log:
                log.write(f"hearts tournament: cannot start {list(launch.command)}: {exc}\n".encode())
            shutil.rmtree(private, ignore_errors=True)
            if ours is not None:
                for end in ours:
                    os.close(end)
            return cls(seat, log_path, None)
        finally:
            for child_end in (child_stdin, child_stdout):
                if child_end is not None:
                    os.close(child_end)
        output = process.stderr if stdio else process.stdout
        assert output is not None
        meter = LogMeter(per_game.log_bytes)
        copier = asyncio.create_task(copy_log(output, log_path, meter))
        watch = watchdog.watch(process.pid, per_game) if watchdog is not None else None
        bot = cls(seat, log_path, process, private, watch, watchdog, copier)
        bot._meter = meter
        if ours is not None:
            bot.pipes = await BotPipes.connect(*ours)
        return bot

    def new_game(self) -> None:
        """A warm bot starts another game: its CPU budget and its log allowance start afresh."""
        if self._watch is not None:
            self._watch.rebase()
        if self._meter is not None:
            self._meter.new_game()

    @property
    def pid(self) -> int | None:
        """The process id (None if it never started)."""
        return self.process.pid if self.process is not None else None

    @property
    def returncode(self) -> int | None:
        """The exit status once it has exited (negative: killed by that signal)."""
        if self.process is None:
            return NOT_STARTED
        return self.process.returncode

    @property
    def peak(self) -> tuple[int, float] | None:
        """The most resident memory (MB) and CPU time (s) its processes used together, as sampled."""
        if self._watch is None:
            return None
        return self._watch.peak.rss_bytes // (1024 * 1024), round(self._watch.peak.cpu_s, 2)

    @property
    def peak_usage(self) -> Usage | None:
        """The most its processes used together, as sampled (memory, processes, CPU), or None."""
        return self._watch.peak if self._watch is not None else None

    @property
    def killed(self) -> str | None:
        """Why the watchdog killed the bot (memory, CPU, processes), or None."""
        return self._watch.killed if self._watch is not None else None

    async def wait(self) -> int:
        """Waits for the process to exit and returns its status."""
        if self.process is None:
            return NOT_STARTED
        code = await self.process.wait()
        await self._finish()
        return code

    async def stop(self, grace: float = EXIT_GRACE_S) -> int:
        """Lets the bot exit by itself for ``grace`` seconds, then terminates it, then kills its
        whole tree.

        A stdio bot's bridge is given the same grace first (it closes the bot's stdin when done).
        """
        if self.bridge is not None:
            done, _ = await asyncio.wait({self.bridge}, timeout=grace)
            if not done:
                self.bridge.cancel()
                await asyncio.gather(self.bridge, return_exceptions=True)
        if self.process is None:
            return NOT_STARTED
        for wait_s, signal_it in ((grace, self.process.terminate), (TERM_GRACE_S, self._kill_tree)):
            try:
                code = await asyncio.wait_for(self.process.wait(), wait_s)
                break
            except TimeoutError:
                self.lingered = True
                with contextlib.suppress(ProcessLookupError):
                    signal_it()
        else:
            code = await self.process.wait()
        await self._finish()
        return code

    def kill(self) -> None:
        """Kills the process and all its children at once (the tournament is stopping)."""
        if self.bridge is not None:
            self.bridge.cancel()
        if self.process is not None:
            self._kill_tree()
            self._cleanup()

    async def reaped(self, timeout: float = KILL_REAP_S) -> None:
        """Waits (at most ``timeout`` seconds) until a killed process's exit is collected, so that
        no exit arrives after the event loop closed (asyncio then logs a warning on stderr)."""
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.process.wait()), timeout)

    def _kill_tree(self) -> None:
        assert self.process is not None
        kill_tree(self.process.pid)
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()

    async def _finish(self) -> None:
        """Once the process has exited: drains its log, notes a watchdog kill, cleans up (once).

        A task of its own, shielded, so that a waiter cancelled meanwhile does not cut it short.
        """
        if self._finishing is None:
            self._finishing = asyncio.ensure_future(self._wrap_up())
        await asyncio.shield(self._finishing)

    async def _wrap_up(self) -> None:
        # A sandbox's PID namespace died with its first process; the pid may be reused now, so
        # nothing is signalled here.
        if self._copier is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._copier), DRAIN_S)
            except TimeoutError:
                self._copier.cancel()
        if self.killed is not None:
            with self.log_path.open("ab") as log:
                log.write(f"\nhearts sandbox: killed: {self.killed}\n".encode())
        self._cleanup()

    def _cleanup(self) -> None:
        if self._watch is not None and self._watchdog is not None:
            self._watchdog.forget(self._watch)
        if self._private is not None:
            shutil.rmtree(self._private, ignore_errors=True)
