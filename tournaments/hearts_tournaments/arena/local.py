"""The arena itself: a referee on this machine and the bot processes of the games it plays.

:class:`Arena`, entered, starts the in-process referee on a Unix socket in a private folder (or
relays that socket to an external referee, ``settings.server``) and one sandbox watchdog, and,
with ``reuse = "between_deals"``, a pool of warm bot processes; :meth:`Arena.play` plays one
game (many may run at once) and returns its :class:`~.outcome.GameOutcome`; leaving it lets the
last bots exit and stops the referee. For each game it creates a table with
``AdminService.CreateTable`` (one game, the deal's seed, the seats' bot names, the seed not
revealed to the seats), starts one bot process per seat (or takes a warm one), waits with
``AwaitTable``, and releases to the referee the seats of bots that are absent or whose process
ended before their table started. It talks to the referee through the admin API only.

What it is asked to play comes from its :class:`Settings` (:class:`~.settings.PlaySettings`,
which a tournament's config and a league's both make, or a tournament's config itself) and each
:class:`~.job.GameJob`; it knows nothing else of tournaments or leagues.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import TracebackType
from typing import Protocol, Self

import grpc

from cancellation_hearts.v1 import admin_service_pb2 as apb
from cancellation_hearts.v1 import admin_service_pb2_grpc as agrpc
from hearts_core.defaults import TablePolicy
from hearts_protocol.transport import own_channel
from hearts_server.logs import get_logger
from hearts_server.server import make_server
from hearts_server.table.script import Scripts
from hearts_server.table.settings import NOBODY_JOINED
from hearts_tournaments.arena.bots import BotProtocol, BotSpec, Reuse
from hearts_tournaments.arena.entrants import EXIT_GRACE_S, BotProcess, SeatAccess
from hearts_tournaments.arena.failures import exit_line, silent_line
from hearts_tournaments.arena.folders import private_folder
from hearts_tournaments.arena.job import GameJob, ScheduledGame
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.arena.sandbox import Limits, SandboxKind, Watchdog
from hearts_tournaments.arena.stdio_entrant import start_stdio_bot
from hearts_tournaments.arena.warm import WarmBot, WarmPool

log = get_logger(__name__)

#: Seconds to wait for the referee to answer at start.
CONNECT_TIMEOUT_S = 10.0
#: The arena's note of which process played which seat of each game (JSON lines).
PROCESSES_LOG = "processes.jsonl"
#: Times a seat's bot is started again after its process died of a signal before joining its
#: table (grpc's client has been seen to crash at start-up, twice in a row, on a loaded machine).
RESTARTS_BEFORE_JOINING = 3
#: The pause before the first restart of a seat; it doubles with each one (0.25, 0.5, 1 s).
RESTART_PAUSE_S = 0.25


def _nobody_joined(table: apb.GetTableResponse) -> bool:
    """Whether the referee ended ``table`` at its join timeout because no bot joined it."""
    return (
        table.status == apb.TABLE_STATUS_ABORTED
        and not table.games
        and table.stop_reason.startswith(NOBODY_JOINED)
    )


class ArenaError(Exception):
    """A game cannot be played: the referee cannot start or stopped the table (one line)."""


class Settings(Protocol):
    """What the arena reads of whoever asks it to play (a tournament's or a league's settings)."""

    @property
    def name(self) -> str: ...
    @property
    def server(self) -> str: ...
    @property
    def target_score(self) -> int: ...
    @property
    def max_hands(self) -> int: ...
    @property
    def policy(self) -> TablePolicy: ...
    @property
    def limits(self) -> Limits: ...
    @property
    def reuse(self) -> Reuse: ...
    @property
    def restart_after(self) -> int: ...
    @property
    def hide_names(self) -> bool: ...

    def bot(self, name: str) -> BotSpec:
        """The entrant called ``name``."""
        ...

    def sandbox_of(self, spec: BotSpec) -> SandboxKind:
        """The sandbox ``spec`` runs in."""
        ...


class Referee:
    """A referee this process starts, reached over the admin API only.

    Entered, it makes a private folder holding the Unix socket the sandboxed bots reach it by,
    starts the server there (and on ``host:port``, ``127.0.0.1:0`` by default) with an admin token
    that only this object holds, and opens a channel; leaving it stops the server and removes the
    folder. ``relay_to`` names an external referee instead: the socket is then a relay to it.
    ``scripts`` scripts the games whose deal seed it holds: the bot test kit's referee only
    (:mod:`hearts_server.table.script`).

    Raises (on entry):
        ArenaError: the server cannot start or does not answer.
    """

    def __init__(
        self,
        records: Path,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        relay_to: str = "",
        admin_token: str | None = None,
        scripts: Scripts | None = None,
    ) -> None:
        self.records = records
        self.host = host
        self.port = port
        self.relay_to = relay_to
        self.scripts = scripts
        token = admin_token if relay_to else secrets.token_hex(32)
        #: The admin API's metadata (the token), or none for an external referee without one.
        self.metadata: tuple[tuple[str, str], ...] = (("authorization", f"Bearer {token}"),) if token else ()
        self._token = token
        #: The referee's Unix socket (set on entry), the bots' only way out of their sandbox.
        self.socket = Path()
        #: ``host:port`` of the referee (set on entry).
        self.address = relay_to
        self.channel: grpc.aio.Channel | None = None
        self._stack = contextlib.AsyncExitStack()

    @property
    def admin(self) -> agrpc.AdminServiceAsyncStub:
        """The admin API over the referee's channel."""
        assert self.channel is not None, "admin outside `async with`"
        return agrpc.AdminServiceStub(self.channel)

    async def __aenter__(self) -> Self:
        async with contextlib.AsyncExitStack() as stack:
            private = stack.enter_context(tempfile.TemporaryDirectory(prefix="hearts-referee-"))
            self.socket = Path(private) / "referee.sock"
            try:
                if not self.relay_to:
                    server = make_server(
                        self.records,
                        host=self.host,
                        port=self.port,
                        admin_token=self._token,
                        unix_socket=self.socket,
                        scripts=self.scripts,
                    )
                    await server.start()
                    stack.push_async_callback(server.stop, 1.0)
                    self.address = server.address
                else:
                    relay = await _relay(self.socket, self.relay_to)
                    stack.callback(relay.close)
            except OSError as exc:
                raise ArenaError(f"cannot start the referee: {exc}") from None
            channel = await stack.enter_async_context(grpc.aio.insecure_channel(self.address))
            try:
                await asyncio.wait_for(channel.channel_ready(), CONNECT_TIMEOUT_S)
            except TimeoutError:
                raise ArenaError(
                    f"the referee at {self.address} does not answer: check tournament.server"
                ) from None
            self.channel = channel
            self._stack = stack.pop_all()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.channel = None
        await self._stack.aclose()


class Arena:
    """This machine's referee and sandboxed bot processes, playing the games it is given.

    Entered, it starts its :class:`Referee` (in-process on a private Unix socket, or a relay to
    the external ``settings.server``), the sandbox watchdog and, with ``reuse =
    "between_deals"``, the warm pool; :meth:`play` plays one game (many may run at once);
    leaving it lets the last bots exit and stops the referee. The tournament runner (the
    ``local`` executor), each Ray node, the league and the pre-flight check all play on it.
    ``settings`` may be replaced between games (a league does, between blocks). ``scripts``
    scripts the games whose deal seed it holds (the bot test kit's arena only).
    """

    def __init__(
        self,
        config: Settings,
        output: Path,
        external_token: str | None = None,
        *,
        note_processes: bool = True,
        scripts: Scripts | None = None,
    ) -> None:
        self.config = config
        self.output = output
        #: Whether :meth:`note_processes` writes ``processes.jsonl`` (a league does not).
        self.noting = note_processes
        self._reaping: dict[asyncio.Task[None], list[BotProcess]] = {}
        self.referee = Referee(
            output / "records", relay_to=config.server, admin_token=external_token, scripts=scripts
        )
        self.metadata = self.referee.metadata
        self.watchdog = Watchdog()
        self._stack = contextlib.AsyncExitStack()
        #: The warm bot processes (``reuse = "between_deals"``; set on entry).
        self.pool: WarmPool | None = None
        #: Where a line about an entrant's failure goes as it happens (the runner's reporter).
        self.notify: Callable[[str], None] | None = None
        #: Told of every bot process once it has exited or been stopped, with its exit status
        #: (the bot test kit reads how it ended).
        self.on_exit: Callable[[BotProcess, int], None] | None = None
        #: Seconds a bot may take to exit by itself once its game (or session) is done.
        self.exit_grace_s = EXIT_GRACE_S

    @property
    def socket(self) -> Path:
        """The referee's Unix socket, the bots' only way out of their sandbox (set on entry)."""
        return self.referee.socket

    @property
    def address(self) -> str:
        """``host:port`` of the referee (the external one's before entry)."""
        return self.referee.address

    def incident(self, line: str) -> None:
        """Passes a line about an entrant's failure to :attr:`notify` (and the log)."""
        log.warning("entrant_failed", line=line)
        if self.notify is not None:
            self.notify(line)

    async def __aenter__(self) -> Self:
        try:
            # Records and bot logs tell about hands: only the organiser may read them.
            for folder in (self.output, self.output / "records", self.output / "logs"):
                private_folder(folder)
        except OSError as exc:
            raise ArenaError(f"cannot prepare {self.output}: {exc}") from None
        async with contextlib.AsyncExitStack() as stack:
            stack.enter_context(self.watchdog)
            referee = await stack.enter_async_context(self.referee)
            if self.config.reuse is Reuse.BETWEEN_DEALS:
                self.pool = WarmPool(referee.admin, self.metadata, self.config.restart_after, self.reap_warm)
            self._stack = stack.pop_all()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            if kind is None:
                if self.pool is not None:
                    await self.pool.close()
                await asyncio.gather(*self._reaping)
        finally:
            if self.pool is not None:
                self.pool.kill()
            killed = []
            for task, processes in list(self._reaping.items()):
                task.cancel()
                for process in processes:
                    process.kill()
                    killed.append(process)
            await asyncio.gather(*(p.reaped() for p in killed))
            await self._stack.aclose()

    async def play(self, job: GameJob) -> GameOutcome:
        """Plays one game on this machine and returns its outcome."""
        channel = self.referee.channel
        assert channel is not None, "play() outside `async with`"
        return await GamePlay(self, job, channel, self.address).play()

    def drop_bot(self, bot: str) -> None:
        """Stops a quarantined bot's warm processes (in the background)."""
        if self.pool is None:
            return
        task = asyncio.create_task(self.pool.drop_bot(bot))
        self._reaping[task] = []
        task.add_done_callback(lambda done: self._reaping.pop(done, None))

    def reap_warm(self, warm: WarmBot) -> None:
        """Lets a warm bot whose session is closed exit (or stops it) in the background."""
        task = asyncio.create_task(self._reap_warm(warm))
        self._reaping[task] = [warm.process]
        task.add_done_callback(lambda done: self._reaping.pop(done, None))

    async def _reap_warm(self, warm: WarmBot) -> None:
        process = warm.process
        code = await process.stop(self.exit_grace_s)
        if self.on_exit is not None:
            self.on_exit(process, code)
        peak_mb, cpu_s = process.peak or (None, None)
        log.info(
            "bot_lingered" if process.lingered else "bot_exited",
            bot=warm.bot,
            serial=warm.serial,
            games=warm.games,
            code=code,
            killed=process.killed,
            peak_mb=peak_mb,
            cpu_s=cpu_s,
        )

    def note_processes(self, game: ScheduledGame, seated: list[tuple[int, int | None, int | None]]) -> None:
        """Appends which process played each seat of ``game`` to ``processes.jsonl``.

        ``seated``: (seat, warm serial or None, pid or None) per seat a process played.
        """
        if not self.noting:
            return
        path = self.output / PROCESSES_LOG
        with path.open("a", encoding="utf-8") as out:
            for seat, serial, pid in seated:
                entry = {
                    "key": game.key,
                    "deal": game.deal,
                    "seat": seat,
                    "bot": game.seats[seat],
                    "serial": serial,
                    "pid": pid,
                }
                out.write(json.dumps(entry, sort_keys=True) + "\n")

    def reap(self, game: ScheduledGame, processes: list[BotProcess]) -> None:
        """Lets the bots of a finished game exit (or stops them) in the background."""
        task = asyncio.create_task(self._reap(game, processes))
        self._reaping[task] = processes
        task.add_done_callback(lambda done: self._reaping.pop(done, None))

    async def _reap(self, game: ScheduledGame, processes: list[BotProcess]) -> None:
        codes = await asyncio.gather(*(p.stop(self.exit_grace_s) for p in processes))
        for process, code in zip(processes, codes, strict=True):
            if self.on_exit is not None:
                self.on_exit(process, code)
            seat = process.seat
            event = "bot_lingered" if process.lingered else "bot_exited"
            peak_mb, cpu_s = process.peak or (None, None)
            log.info(
                event,
                key=game.key,
                seat=seat,
                bot=game.seats[seat],
                code=code,
                killed=process.killed,
                peak_mb=peak_mb,
                cpu_s=cpu_s,
            )


class GamePlay:
    """One game: its table, its bot processes, its outcome."""

    def __init__(self, runner: Arena, job: GameJob, channel: grpc.aio.Channel, address: str) -> None:
        self.runner = runner
        self.config = runner.config
        self.job = job
        self.game = game = job.game
        self.channel = channel
        self.address = address
        self.admin = agrpc.AdminServiceStub(channel)
        self.metadata = runner.metadata
        n = len(game.seats)
        self.absent = job.absent
        self.crashed = [False] * n
        #: Seats whose process ended before the game did (already told to the organiser).
        self.told = [False] * n
        #: Per seat, how many times a process that died of a signal before joining was started
        #: again (at most :data:`RESTARTS_BEFORE_JOINING`).
        self.restarted: dict[int, int] = {}
        self.table_id = ""
        self.tokens: list[str] = []
        self.processes: list[BotProcess] = []
        self.warm_bots: dict[int, WarmBot] = {}
        #: Warm processes that died before joining and were replaced (dropped from the pool).
        self.replaced: list[WarmBot] = []
        self.watchers: list[asyncio.Task[None]] = []
        self.over = asyncio.Event()

    async def play(self) -> GameOutcome:
        """Plays the game over a connection of its own to the referee (which allows few calls per
        connection, while a runner awaits many tables at once)."""
        async with own_channel(self.address) as channel:
            self.admin = agrpc.AdminServiceStub(channel)
            return await self._play()

    def _table_config(self) -> apb.TableConfig:
        config = self.config
        game = self.game
        return apb.TableConfig(
            players=len(game.seats),
            bot_names=list(game.seats),
            target_score=config.target_score,
            max_hands=config.max_hands,
            games=1,
            # The real seed: keyed by the tournament's secret, never the schedule's public id.
            seed=self.job.seed,
            reveal_seed=False,
            decision_time_ms=config.policy.decision_ms,
            time_bank_ms=config.policy.time_bank_ms,
            max_faults=config.policy.max_faults,
            join_timeout_ms=config.policy.join_timeout_ms,
            label=f"{config.name}/{game.key}",
            hide_bot_names=config.hide_names,
        )

    async def _play(self) -> GameOutcome:
        config = self.config
        game = self.game
        created = await self.admin.CreateTable(
            apb.CreateTableRequest(config=self._table_config()), metadata=self.metadata
        )
        self.table_id = created.table_id
        self.tokens = [s.token for s in sorted(created.seats, key=lambda s: s.seat)]
        log.info("game_starting", key=game.key, table_id=self.table_id, absent=list(self.absent))
        for seat, absent in enumerate(self.absent):
            if absent:
                # A quarantined bot's seat: the referee plays it, and what it decides for the
                # seat counts against the bot (as faults, until the seat is retired).
                await self._release(seat, faulted=True)
            elif self.job.released and self.job.released[seat]:
                await self._release(seat, faulted=False)
        processes = self.processes
        warm_bots = self.warm_bots
        response: apb.AwaitTableResponse | None = None
        pool = self.runner.pool
        try:
            for seat, bot in enumerate(game.seats):
                if self.absent[seat] or (self.job.released and self.job.released[seat]):
                    continue
                await self._seat_process(seat, config.bot(bot))
            response = await self.admin.AwaitTable(
                apb.AwaitTableRequest(table_id=self.table_id), metadata=self.metadata
            )
        finally:
            self.over.set()
            for watcher in self.watchers:
                watcher.cancel()
            if response is None:  # the tournament is stopping: no grace
                for process in processes:
                    process.kill()
                await asyncio.gather(*(p.reaped() for p in processes))
        serials = {id(w.process): w.serial for w in (*warm_bots.values(), *self.replaced)}
        self.runner.note_processes(
            game,
            [(p.seat, serials.get(id(p)), p.pid) for p in processes],
        )
        if pool is not None:
            for seat, warm in warm_bots.items():
                # A crashed bot's process is not kept (a quarantined bot's is simply not taken
                # again: its seats are released to the referee).
                await pool.give_back(warm, game.deal, played=True, crashed=self.crashed[seat])
        else:
            # The game is stored at once and its bots get their grace to exit in the background,
            # so that the next game does not wait for them.
            self.runner.reap(game, processes)
        table = response.table
        if _nobody_joined(table):
            table = await self._play_without_bots()
        outcome = self._outcome(table)
        self._tell_silent(outcome, {p.seat: p.log_path for p in processes})
        return outcome

    async def _play_without_bots(self) -> apb.GetTableResponse:
        """Plays the game with every seat released to the referee, each decision a fault of its
        bot: for a game none of whose bots joined its table within the join timeout (the referee
        ends such a table without playing), as a game of absent bots is played."""
        self.runner.incident(
            f"no bot of game {self.game.key} joined its table within the join timeout "
            f"({self.config.policy.join_timeout_ms} ms): the referee plays every seat, each decision a "
            "fault of its bot"
        )
        created = await self.admin.CreateTable(
            apb.CreateTableRequest(config=self._table_config()), metadata=self.metadata
        )
        self.table_id = created.table_id
        for seat in range(len(self.game.seats)):
            await self._release(seat, faulted=True)
        response = await self.admin.AwaitTable(
            apb.AwaitTableRequest(table_id=self.table_id), metadata=self.metadata
        )
        return response.table

    def _tell_silent(self, outcome: GameOutcome, logs: dict[int, Path]) -> None:
        """One line per seat whose bot stopped answering (its exit, if any, was told already)."""
        for seat, bot in enumerate(outcome.seats):
            if self.absent[seat] or self.told[seat] or (self.job.released and self.job.released[seat]):
                continue
            if outcome.never_answered[seat]:
                why = "never made a decision of its own"
            elif outcome.retired[seat]:
                why = f"stopped answering and its seat was retired after {outcome.faults[seat]} faults"
            else:
                continue
            self.runner.incident(silent_line(bot, self.game.key, seat, why, logs.get(seat)))

    async def _seat_process(self, seat: int, spec: BotSpec) -> BotProcess:
        """Starts (or takes from the warm pool) the process of a seat, and watches it."""
        pool = self.runner.pool
        game = self.game
        if pool is not None:
            warm = await pool.take(spec.name, game.deal, self._starter(spec, seat))
            self.warm_bots[seat] = warm
            await pool.bind(warm, self.table_id, seat, self.job.bot_seeds[seat])
            process = warm.process
        else:
            # Each earlier process's log is kept: -again, -again2, ...
            times = self.restarted.get(seat, 0)
            again = "" if times == 0 else "-again" if times == 1 else f"-again{times}"
            log_path = self.runner.output / "logs" / spec.name / f"{game.key}-s{seat}{again}.log"
            process = await self._start(spec, seat, self.tokens[seat], log_path, 1)
        self.processes.append(process)
        self.watchers.append(asyncio.create_task(self._watch(process, self.over)))
        return process

    def _starter(self, spec: BotSpec, seat: int) -> Callable[[str, int], Awaitable[BotProcess]]:
        """Starts a warm bot for ``spec`` with a session token (its seed: this seat's, this game's)."""

        async def start(token: str, serial: int) -> BotProcess:
            log_path = self.runner.output / "logs" / spec.name / f"warm-{serial:04d}-{self.game.key}.log"
            return await self._start(spec, seat, token, log_path, self.config.restart_after)

        return start

    async def _start(self, spec: BotSpec, seat: int, token: str, log_path: Path, games: int) -> BotProcess:
        """Starts one bot process with ``token`` (a seat's, or a warm bot's session's)."""
        config = self.config
        access = SeatAccess(self.runner.socket, token, self.job.bot_seeds[seat])
        if spec.protocol is BotProtocol.STDIO:
            return await start_stdio_bot(
                seat,
                spec,
                self.address,
                access,
                log_path,
                sandbox=config.sandbox_of(spec),
                limits=config.limits,
                watchdog=self.runner.watchdog,
                games=games,
            )
        return await BotProcess.start(
            seat,
            spec,
            access,
            log_path,
            sandbox=config.sandbox_of(spec),
            limits=config.limits,
            watchdog=self.runner.watchdog,
            games=games,
        )

    async def _watch(self, process: BotProcess, over: asyncio.Event) -> None:
        """Notices a bot process that ends before its game does."""
        code = await process.wait()
        if over.is_set():
            return
        try:
            table = await self.admin.GetTable(
                apb.GetTableRequest(table_id=self.table_id), metadata=self.metadata
            )
        except grpc.aio.AioRpcError as exc:
            # AwaitTable meets the same trouble and stops the tournament; nothing to add here.
            log.warning("get_table_failed", key=self.game.key, code=exc.code().name)
            return
        if table.status not in (apb.TABLE_STATUS_WAITING, apb.TABLE_STATUS_PLAYING):
            return  # the game ended first: a normal exit
        seat = process.seat
        if (
            table.status == apb.TABLE_STATUS_WAITING
            and not table.connected[seat]
            and code is not None
            and code < 0
            and not process.killed
            and self.restarted.get(seat, 0) < RESTARTS_BEFORE_JOINING
            and not over.is_set()
            # Died of a signal before it joined (a crash at start-up on a loaded machine, say):
            # no card has been dealt, so starting it again is fair to every seat and keeps the
            # game what it would have been. Past RESTARTS_BEFORE_JOINING, the death is the bot's.
            and await self._start_again(seat, process, code)
        ):
            return
        log.warning(
            "bot_exited_early",
            key=self.game.key,
            seat=seat,
            bot=self.game.seats[seat],
            code=code,
            killed=process.killed,
        )
        if code != 0:
            self.crashed[seat] = True
        self.told[seat] = True
        bot = self.game.seats[seat]
        protocol = self.config.bot(bot).protocol
        self.runner.incident(
            exit_line(bot, self.game.key, seat, code, process.killed, process.log_path, protocol)
        )
        if table.status == apb.TABLE_STATUS_WAITING and not table.connected[seat]:
            # Nobody is coming for this seat: do not let the table wait for its join timeout.
            # Its bot failed, so each decision the referee makes for it is the bot's fault.
            await self._release(seat, faulted=True)

    async def _start_again(self, seat: int, process: BotProcess, code: int) -> bool:
        """Starts the seat's bot again after its process died of signal ``-code`` before joining,
        after a pause that doubles with each restart (such crashes come in bursts on a loaded
        machine). Returns False when no process could be started: the seat is then left to the
        caller, which releases it as the bot's failure (True also when the game ended meanwhile)."""
        times = self.restarted[seat] = self.restarted.get(seat, 0) + 1
        bot = self.game.seats[seat]
        log.warning(
            "bot_restarted_before_joining",
            key=self.game.key,
            seat=seat,
            bot=bot,
            code=code,
            restart=times,
            log=str(process.log_path),
        )
        try:
            if seat in self.warm_bots and self.runner.pool is not None:
                dead = self.warm_bots.pop(seat)
                self.replaced.append(dead)
                await self.runner.pool.drop(dead)  # its session ends, its seat binding with it
            await asyncio.sleep(RESTART_PAUSE_S * 2 ** (times - 1))
            if self.over.is_set():
                return True  # the game ended meanwhile (the organiser stopped it): nothing to seat
            await self._seat_process(seat, self.config.bot(bot))
        except Exception as exc:  # a watcher's error is lost: the seat must not be left unattended
            # Left unseated, the table would wait for its join timeout (minutes, at some limits).
            error = f"{type(exc).__name__}: {exc}"
            log.warning("bot_restart_failed", key=self.game.key, seat=seat, bot=bot, error=error)
            return False
        return True

    async def _release(self, seat: int, faulted: bool) -> None:
        """Gives a seat nobody will play to the referee's default rule."""
        await self.admin.ReleaseSeat(
            apb.ReleaseSeatRequest(table_id=self.table_id, seat=seat, faulted=faulted), metadata=self.metadata
        )

    def _outcome(self, table: apb.GetTableResponse) -> GameOutcome:
        game = self.game
        if table.status == apb.TABLE_STATUS_ABORTED and len(table.games) == 1 and table.games[0].record_error:
            # The game ended but the referee could not write its record (a full disk): it came
            # back in memory, is stored with the game, and its file is written when there is space.
            log.warning("record_not_written_by_referee", key=game.key, error=table.games[0].record_error)
        elif table.status != apb.TABLE_STATUS_DONE or len(table.games) != 1:
            raise ArenaError(f"the referee stopped table {table.table_id} of game {game.key} before it ended")
        finished = table.games[0]
        result = finished.result
        seats = sorted(result.results, key=lambda r: r.seat)
        if tuple(r.bot_name for r in seats) != game.seats:
            raise ArenaError(f"the referee returned another table's result for game {game.key}")
        return GameOutcome(
            key=game.key,
            game_id=finished.game_id,
            seats=game.seats,
            totals=tuple(r.total for r in seats),
            places=tuple(r.place for r in seats),
            winners=tuple(result.winners),
            hands=result.hands_played,
            faults=tuple(r.faults for r in seats),
            retired=tuple(r.retired for r in seats),
            absent=self.absent,
            crashed=tuple(self.crashed),
            # An answer the bot's SDK made for it is not a decision of its own.
            never_answered=tuple(
                s.answered - r.bot_errors <= 0
                for s, r in zip(sorted(finished.seats, key=lambda s: s.seat), seats, strict=True)
            ),
            record_json=finished.record_json,
            bot_errors=tuple(r.bot_errors for r in seats),
        )


async def _relay(socket: Path, target: str) -> asyncio.Server:
    """Relays connections to the Unix ``socket`` to the external referee at ``host:port``.

    A sandboxed bot has no network: this is how it reaches a referee the runner did not start.
    """
    host, _, port = target.rpartition(":")

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(host.strip("[]"), int(port))
        except OSError:
            writer.close()
            return
        await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))

    return await asyncio.start_unix_server(handle, path=str(socket))
