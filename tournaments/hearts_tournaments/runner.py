"""Running a tournament's games on a referee server, several tables at once.

The runner starts a referee in-process (``make_server`` on ``127.0.0.1:0``, records into
``OUTPUT/records``) unless the config names an external one, and plays every game of the
schedule that the database does not hold yet, ``concurrency`` tables at a time, in schedule
order. For each game it creates a table with ``AdminService.CreateTable`` (one game, the deal's
seed, the seats' bot names, the game key as label), starts one bot process per seat, waits with
``AwaitTable`` and commits the finished game to the database before counting it done. Stopped
at any moment, a tournament resumes with exactly the games that were not committed.

Faulty bots never stop a tournament: the referee plays for a seat whose bot is absent, slow or
retired (its fault policy), and a bot with ``quarantine_after`` failed games is quarantined:
its remaining games are still played, the referee deciding for its seats, and its process is no
longer started. So that such a table does not wait for its join timeout, the runner joins the
empty seat and leaves at once, which tells the referee nobody is coming; it does the same for a
bot whose process exits before its table starts.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
from collections.abc import AsyncIterator, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import grpc

from cancellation_hearts.v1 import admin_service_pb2 as apb
from cancellation_hearts.v1 import admin_service_pb2_grpc as agrpc
from cancellation_hearts.v1 import referee_service_pb2 as rpb
from cancellation_hearts.v1 import referee_service_pb2_grpc as rgrpc
from hearts_server.logs import get_logger
from hearts_server.server import make_server
from hearts_tournaments.config import ConfigError, TournamentConfig, parse_config
from hearts_tournaments.entrants import BotProcess, launch_for
from hearts_tournaments.outcome import GameOutcome, Quarantine, QuarantineTracker
from hearts_tournaments.results import Standings, compute_standings
from hearts_tournaments.schedule import Progress, ScheduledGame, make_schedule
from hearts_tournaments.store import DB_NAME, Store, StoreError

log = get_logger(__name__)

#: Environment variable holding the admin token of an external referee.
ADMIN_TOKEN_ENV = "HEARTS_ADMIN_TOKEN"
#: Seconds to wait for an external referee to answer at start.
CONNECT_TIMEOUT_S = 10.0
#: What the runner owns in an output folder (removed by ``--fresh``).
OWNED = (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm", "records", "logs", "runner.log")


class RunnerError(Exception):
    """The tournament cannot go on (referee unreachable, table aborted, ...): one clear line."""


class Terminated(Exception):
    """The runner got SIGTERM and stopped; the finished games are kept."""


class Reporter(Protocol):
    """Where the runner reports progress (a progress bar, plain lines, or nothing)."""

    def started(self, total: int, done: int, faults: int) -> None:
        """The run starts with ``done`` of ``total`` games already played."""

    def game_finished(self, outcome: GameOutcome) -> None:
        """A game was committed."""

    def note(self, line: str) -> None:
        """Something the organiser should see now (a quarantine)."""


class SilentReporter:
    """A reporter that reports nothing."""

    def started(self, total: int, done: int, faults: int) -> None:
        """Does nothing."""

    def game_finished(self, outcome: GameOutcome) -> None:
        """Does nothing."""

    def note(self, line: str) -> None:
        """Does nothing."""


@dataclass(frozen=True, slots=True)
class Tournament:
    """A tournament's configuration and its open database."""

    config: TournamentConfig
    store: Store
    output: Path


def create_tournament(
    config: TournamentConfig,
    config_text: str,
    output: Path,
    fresh: bool = False,
    progress: Progress | None = None,
) -> Tournament:
    """Schedules a new tournament and stores it in ``output``.

    Args:
        config: The configuration.
        config_text: The configuration file's text (kept in the database).
        output: The output folder.
        fresh: Remove a previous tournament's database, records and logs from ``output`` first.
        progress: Called with a line as each phase of the schedule's design ends.

    Raises:
        StoreError: if ``output`` already holds a tournament (and not ``fresh``).
    """
    if fresh:
        for name in OWNED:
            path = output / name
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
    elif Store.path_in(output).exists():
        raise StoreError(
            f"{output} already holds a tournament: continue it with `hearts tournament resume "
            f"{output}`, or add --fresh to start it over"
        )
    schedule = make_schedule(
        config.bot_names,
        config.table_size,
        config.deals,
        config.seed,
        config.duplicate,
        config.seating,
        progress,
    )
    store = Store.create(output, config_text, config.base_dir, config.name, schedule)
    return Tournament(config, store, output)


def open_tournament(output: Path) -> Tournament:
    """Opens the tournament stored in ``output``, with its configuration as stored.

    Raises:
        StoreError: if ``output`` holds no tournament.
        ConfigError: if the stored configuration no longer reads (e.g. a built-in bot is gone).
    """
    store = Store.open(output)
    try:
        config = parse_config(store.config_text, store.base_dir, default_name=store.meta("name"))
    except ConfigError:
        store.close()
        raise
    return Tournament(config, store, output)


def run_tournament(
    tournament: Tournament, concurrency: int | None = None, reporter: Reporter | None = None
) -> Standings:
    """Plays every game of the tournament that is not stored yet.

    Args:
        tournament: The tournament.
        concurrency: Tables at once (default: the config's).
        reporter: Where progress goes.

    Returns:
        The standings once every game is played.

    Raises:
        RunnerError: if the tournament cannot go on; the games played so far are kept.
    """
    runner = _Runner(tournament, concurrency or tournament.config.concurrency, reporter or SilentReporter())
    asyncio.run(_until_terminated(runner.run()))
    return tournament_standings(tournament)


async def _until_terminated(work: Coroutine[Any, Any, None]) -> None:
    """Runs ``work``; SIGTERM cancels it like Ctrl-C does, so the bots are stopped on the way out.

    Raises:
        Terminated: on SIGTERM.
    """
    task = asyncio.ensure_future(work)
    loop = asyncio.get_running_loop()
    terminated = False

    def on_term() -> None:
        nonlocal terminated
        terminated = True
        task.cancel()

    try:
        loop.add_signal_handler(signal.SIGTERM, on_term)
    except (NotImplementedError, RuntimeError):  # not the main thread, or no signals here
        return await task
    try:
        await task
    except asyncio.CancelledError:
        if terminated:
            raise Terminated("terminated (SIGTERM)") from None
        raise
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


def tournament_standings(tournament: Tournament) -> Standings:
    """The standings of the games stored so far."""
    store = tournament.store
    return compute_standings(
        name=tournament.config.name,
        schedule=store.schedule(),
        outcomes=store.outcomes(records=False),
        target_score=tournament.config.target_score,
        quarantine_after=tournament.config.quarantine_after,
        balance=store.balance(),
    )


class _Runner:
    def __init__(self, tournament: Tournament, concurrency: int, reporter: Reporter) -> None:
        self.config = tournament.config
        self.store = tournament.store
        self.output = tournament.output
        self.concurrency = concurrency
        self.reporter = reporter
        self.schedule = self.store.schedule()
        self.quarantine = QuarantineTracker(self.config.quarantine_after)
        self.faults = 0
        for outcome in self.store.outcomes(records=False):
            self.quarantine.add(outcome)
            self.faults += sum(outcome.faults)
        self._reaping: dict[asyncio.Task[None], list[BotProcess]] = {}
        token = os.environ.get(ADMIN_TOKEN_ENV, "")
        self.metadata = (("authorization", f"Bearer {token}"),) if token and self.config.server else ()

    async def run(self) -> None:
        done = self.store.finished_keys()
        pending = [g for g in self.schedule.games if g.key not in done]
        self.reporter.started(len(self.schedule.games), len(done), self.faults)
        if not pending:
            return
        server = None
        address = self.config.server
        if not address:
            server = make_server(self.output / "records")
            try:
                await server.start()
            except OSError as exc:
                raise RunnerError(f"cannot start the referee: {exc}") from None
            address = server.address
        log.info("tournament_running", address=address, pending=len(pending), concurrency=self.concurrency)
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                try:
                    await asyncio.wait_for(channel.channel_ready(), CONNECT_TIMEOUT_S)
                except TimeoutError:
                    raise RunnerError(
                        f"the referee at {address} does not answer: check tournament.server"
                    ) from None
                games = iter(pending)
                try:
                    async with asyncio.TaskGroup() as group:
                        for _ in range(min(self.concurrency, len(pending))):
                            group.create_task(self._worker(games, channel, address))
                except BaseExceptionGroup as errors:
                    raise _one_error(errors, address) from None
                await asyncio.gather(*self._reaping)
        finally:
            for task, processes in list(self._reaping.items()):
                task.cancel()
                for process in processes:
                    process.kill()
            if server is not None:
                await server.stop(grace=1.0)

    async def _worker(self, games: Iterator[ScheduledGame], channel: grpc.aio.Channel, address: str) -> None:
        # The iterator is shared: each worker takes the next game in schedule order.
        for game in games:
            outcome = await _GamePlay(self, game, channel, address).play()
            self._finish(outcome)

    def reap(self, game: ScheduledGame, processes: list[BotProcess]) -> None:
        """Lets the bots of a finished game exit (or stops them) in the background."""
        task = asyncio.create_task(self._reap(game, processes))
        self._reaping[task] = processes
        task.add_done_callback(lambda done: self._reaping.pop(done, None))

    async def _reap(self, game: ScheduledGame, processes: list[BotProcess]) -> None:
        codes = await asyncio.gather(*(p.stop() for p in processes))
        for process, code in zip(processes, codes, strict=True):
            seat = process.seat
            event = "bot_lingered" if process.lingered else "bot_exited"
            log.info(event, key=game.key, seat=seat, bot=game.seats[seat], code=code)

    def _finish(self, outcome: GameOutcome) -> None:
        self.store.add(outcome)
        self.faults += sum(outcome.faults)
        log.info("game_stored", key=outcome.key, game_id=outcome.game_id, faults=sum(outcome.faults))
        self.reporter.game_finished(outcome)
        for entry in self.quarantine.add(outcome):
            self._announce(entry)

    def _announce(self, entry: Quarantine) -> None:
        log.warning("bot_quarantined", bot=entry.bot, after_game=entry.after_game, failed=entry.failed_games)
        self.reporter.note(
            f"{entry.bot} is quarantined after {entry.failed_games} failed games (last: {entry.after_game}); "
            "its remaining games are played by the referee's default rule"
        )


class _GamePlay:
    """One game: its table, its bot processes, its outcome."""

    def __init__(self, runner: _Runner, game: ScheduledGame, channel: grpc.aio.Channel, address: str) -> None:
        self.runner = runner
        self.config = runner.config
        self.game = game
        self.channel = channel
        self.address = address
        self.admin = agrpc.AdminServiceStub(channel)
        self.metadata = runner.metadata
        n = len(game.seats)
        self.absent = tuple(bot in runner.quarantine.quarantined for bot in game.seats)
        self.crashed = [False] * n
        self.table_id = ""
        self.tokens: list[str] = []

    async def play(self) -> GameOutcome:
        config = self.config
        game = self.game
        table = apb.TableConfig(
            players=len(game.seats),
            bot_names=list(game.seats),
            target_score=config.target_score,
            max_hands=config.max_hands,
            games=1,
            seed=game.seed,
            decision_time_ms=config.decision_ms,
            time_bank_ms=config.time_bank_ms,
            max_faults=config.max_faults,
            join_timeout_ms=config.join_timeout_ms,
            label=f"{config.name}/{game.key}",
        )
        created = await self.admin.CreateTable(apb.CreateTableRequest(config=table), metadata=self.metadata)
        self.table_id = created.table_id
        self.tokens = [s.token for s in sorted(created.seats, key=lambda s: s.seat)]
        log.info("game_starting", key=game.key, table_id=self.table_id, absent=list(self.absent))
        for seat, absent in enumerate(self.absent):
            if absent:
                await _declare_absent(self.channel, self.tokens[seat])
        processes: list[BotProcess] = []
        watchers: list[asyncio.Task[None]] = []
        over = asyncio.Event()
        response: apb.AwaitTableResponse | None = None
        try:
            for seat, bot in enumerate(game.seats):
                if self.absent[seat]:
                    continue
                spec = config.bot(bot)
                launch = launch_for(spec, self.address, self.tokens[seat], game.bot_seeds[seat])
                log_path = self.runner.output / "logs" / bot / f"{game.key}-s{seat}.log"
                process = await BotProcess.start(seat, launch, log_path)
                processes.append(process)
                watchers.append(asyncio.create_task(self._watch(process, over)))
            response = await self.admin.AwaitTable(
                apb.AwaitTableRequest(table_id=self.table_id), metadata=self.metadata
            )
        finally:
            over.set()
            for watcher in watchers:
                watcher.cancel()
            if response is None:  # the tournament is stopping: no grace
                for process in processes:
                    process.kill()
        # The game is stored at once and its bots get their grace to exit in the background,
        # so that the next game does not wait for them.
        self.runner.reap(game, processes)
        return self._outcome(response.table)

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
        log.warning("bot_exited_early", key=self.game.key, seat=seat, bot=self.game.seats[seat], code=code)
        if code != 0:
            self.crashed[seat] = True
        if table.status == apb.TABLE_STATUS_WAITING and not table.connected[seat]:
            # Nobody is coming for this seat: do not let the table wait for its join timeout.
            await _declare_absent(self.channel, self.tokens[seat])

    def _outcome(self, table: apb.GetTableResponse) -> GameOutcome:
        game = self.game
        if table.status != apb.TABLE_STATUS_DONE or len(table.games) != 1:
            raise RunnerError(
                f"the referee stopped table {table.table_id} of game {game.key} before it ended"
            )
        finished = table.games[0]
        result = finished.result
        seats = sorted(result.results, key=lambda r: r.seat)
        if tuple(r.bot_name for r in seats) != game.seats:
            raise RunnerError(f"the referee returned another table's result for game {game.key}")
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
            never_answered=_never_answered(finished.record_json, len(game.seats)),
            record_json=finished.record_json,
        )


def _never_answered(record_json: str, players: int) -> tuple[bool, ...]:
    """Per seat, whether the referee made every one of its decisions (from the game record)."""
    try:
        decisions = json.loads(record_json).get("decisions", [])
    except (ValueError, AttributeError):
        return (False,) * players
    answered = {d.get("seat") for d in decisions if isinstance(d, dict) and not d.get("by_referee")}
    return tuple(seat not in answered for seat in range(players))


async def _declare_absent(channel: grpc.aio.Channel, token: str) -> None:
    """Joins a seat and leaves at once: the table stops waiting for it and the referee plays it.

    The seat then counts as joined but disconnected, exactly like a bot that joined and died:
    the referee records a fault for each of its decisions until the seat is retired.
    """

    async def join_and_leave() -> AsyncIterator[rpb.PlayRequest]:
        yield rpb.PlayRequest(join=rpb.Join(token=token, bot_name="(absent)", protocol_version=1))

    call = rgrpc.RefereeServiceStub(channel).Play(join_and_leave())
    try:
        async for _ in call:
            pass
    except grpc.aio.AioRpcError:
        pass  # the seat is taken or the table is over: nothing to unblock


def _one_error(errors: BaseExceptionGroup[BaseException], address: str) -> BaseException:
    """The error to report from a group of failed workers, as a RunnerError when it is one."""
    for error in errors.exceptions:
        if isinstance(error, BaseExceptionGroup):
            return _one_error(error, address)
        if isinstance(error, RunnerError | StoreError):
            return error
        if isinstance(error, grpc.aio.AioRpcError):
            return RunnerError(f"the referee at {address} failed: {error.code().name}: {error.details()}")
    return errors.exceptions[0]
