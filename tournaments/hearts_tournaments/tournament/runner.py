"""Running a tournament's games, several tables at once, each stored exactly once.

The runner plays every game of the schedule that the database does not hold yet,
``concurrency`` tables at a time, in schedule order, through an executor
(:mod:`hearts_tournaments.results.executors`): the arena on this machine
(:class:`hearts_tournaments.arena.local.Arena`, the default) or the Ray executor, which plays
each game on a cluster node with that node's own arena. Either way this process alone decides
the order, the quarantines and the gauntlet's stop, and alone writes the database. Each game's
real seeds come from the tournament's deal secret (:class:`~hearts_tournaments.arena.job.GameJob`);
the arena never sees the secret. A finished game is committed before it counts as done, so a
tournament stopped at any moment resumes with exactly the games that were not committed.

Faulty bots never stop a tournament: the referee plays for a seat whose bot is absent, slow or
retired (its fault policy), and a bot with ``quarantine_after`` failed games is quarantined:
its remaining games are still played, the referee deciding for its seats (the arena releases
them), and its process is no longer started. Quarantine is decided in schedule order
(:class:`~hearts_tournaments.tournament.quarantine.ScheduleQuarantine`): a game whose quarantine
status depends on earlier games still being played waits for them, so results never depend on
concurrency.

An external referee (``tournament.server``) is relayed by the arena; its admin token is read
from ``HEARTS_ADMIN_TOKEN``, which is then removed from this process's environment.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Iterator
from typing import Protocol

import grpc

from hearts_core.record import write_text_durably
from hearts_server.logs import get_logger
from hearts_tournaments.arena.job import GameJob, ScheduledGame
from hearts_tournaments.arena.local import Arena, ArenaError
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.arena.sandbox import SandboxError
from hearts_tournaments.arena.seeds import (
    ADMIN_TOKEN_ENV,
    DEAL_SECRET_ENV,
    take_env_secret,
)
from hearts_tournaments.arena.snapshot import SnapshotError
from hearts_tournaments.results.executors import ExecutorError, GameExecutor
from hearts_tournaments.results.signing import SigningError, signing_key_for
from hearts_tournaments.results.stats import SprtVerdict
from hearts_tournaments.results.stats.luck import GameLuck
from hearts_tournaments.results.stop import until_terminated
from hearts_tournaments.results.store import StoreError, store_patiently
from hearts_tournaments.results.where import ExecutorKind
from hearts_tournaments.tournament.executors import tournament_executor
from hearts_tournaments.tournament.folder import Tournament
from hearts_tournaments.tournament.gauntlet import gauntlet_verdict
from hearts_tournaments.tournament.luck_correction import LuckCorrection
from hearts_tournaments.tournament.quarantine import Quarantine, ScheduleQuarantine
from hearts_tournaments.tournament.results import Standings
from hearts_tournaments.tournament.snapshots import (
    SNAPSHOTS_META,
    check_sandbox,
    snapshot_bots,
    snapshots_taken,
)
from hearts_tournaments.tournament.standings_snapshot import (
    Refresher,
    fingerprint,
    fresh_snapshot,
    load_snapshot,
    save_snapshot,
)

log = get_logger(__name__)

#: From this many stored games on, the runner keeps the standings snapshot fresh in the
#: background while it plays (below, computing them takes a fraction of a second: the web
#: does it itself).
BACKGROUND_SNAPSHOT_GAMES = 200


def external_token_missing(server: str) -> str:
    """The one line that says an external referee's admin token is missing, and how to give it."""
    return (
        f"tournament.server is {server} but {ADMIN_TOKEN_ENV} is not set: give the runner that "
        f'referee\'s admin token, e.g. {ADMIN_TOKEN_ENV}="$(cat FILE)" with the token file `hearts '
        "serve` printed (a referee refuses admin calls without its token)"
    )


class RunnerError(Exception):
    """The tournament cannot go on (referee unreachable, table aborted, ...): one clear line."""


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


def run_tournament(
    tournament: Tournament,
    concurrency: int | None = None,
    reporter: Reporter | None = None,
    executor: ExecutorKind | None = None,
    ray_address: str | None = None,
) -> Standings:
    """Plays every game of the tournament that is not stored yet.

    Args:
        tournament: The tournament.
        concurrency: Tables at once (default: the config's).
        reporter: Where progress goes.
        executor: Where the games are played (default: the config's ``executor``).
        ray_address: The Ray cluster's address (default: the config's ``ray_address``).

    Returns:
        The standings once every game is played.

    Raises:
        RunnerError: if the tournament cannot go on; the games played so far are kept.
    """
    runner = _Runner(tournament, concurrency or tournament.config.concurrency, reporter or SilentReporter())
    kind = executor or tournament.config.executor
    address = tournament.config.ray_address if ray_address is None else ray_address
    try:
        asyncio.run(until_terminated(runner.run(kind, address)))
    finally:
        runner.refresher.close()
    # The last background snapshot may be of every game already; else computed now, and kept.
    return tournament_standings(tournament, cached=True)


def tournament_standings(
    tournament: Tournament, *, cached: bool = False, luck_correction: bool | None = None
) -> Standings:
    """The standings of the games stored so far.

    Args:
        tournament: The tournament.
        cached: Use the folder's standings snapshot when it is of exactly the games stored,
            else compute them and keep them as the snapshot (see :mod:`.standings_snapshot`). Without
            it they are computed from the stored games, whatever the folder holds.
        luck_correction: Correct them for luck, or not, whatever the config says (None: as it
            says). Standings other than the config's are computed, never kept as the snapshot.

    Raises:
        LuckError: corrected, naming a stored game whose record cannot be replayed.
    """
    if luck_correction is not None and luck_correction != tournament.config.luck_correction:
        return fresh_snapshot(tournament, luck_correction).standings
    if not cached:
        return fresh_snapshot(tournament).standings
    kept = load_snapshot(tournament.output)
    if kept is not None and kept.fingerprint == fingerprint(tournament.store):
        return kept.standings
    computed = fresh_snapshot(tournament)
    try:
        save_snapshot(tournament.output, computed)
    except OSError as exc:
        log.warning("standings_snapshot_not_written", folder=str(tournament.output), error=str(exc))
    return computed.standings


class _Runner:
    def __init__(self, tournament: Tournament, concurrency: int, reporter: Reporter) -> None:
        self.config = tournament.config
        self.store = tournament.store
        self.output = tournament.output
        self.concurrency = concurrency
        self.reporter = reporter
        self.schedule = self.store.schedule()
        # Quarantine in schedule order: a game waits for the earlier games that could change
        # whether one of its bots sits out, so concurrency never changes the standings.
        self.quarantine = ScheduleQuarantine(self.schedule.games, self.config.quarantine_after)
        self._stored = asyncio.Event()
        self.faults = 0
        stored = self.store.outcomes(records=False)
        for outcome in stored:
            self.quarantine.add(outcome)
            self.faults += sum(outcome.faults)
        #: What a gauntlet's sequential test reads (without records); the standings come from the
        #: store, so a round robin keeps no games in memory: its memory stays flat however long.
        self.outcomes = stored if self.config.gauntlet is not None else []
        #: A luck-corrected gauntlet's test also reads every game's luck terms (a few numbers a hand).
        self.luck = LuckCorrection.of(self.config.bots) if self.config.luck_correction else None
        self.luck_terms: dict[str, GameLuck] | None = None
        if self.luck is not None and self.config.gauntlet is not None:
            self.luck_terms = {
                o.key: self.luck.terms(o.seats, self.store.record(o.key) or "", o.key) for o in stored
            }
        # A gauntlet stops starting games once its sequential test has a verdict.
        self.decided = self._gauntlet_decided()
        self.deal_secret = self.store.deal_secret()
        try:
            self.store.sign_with(signing_key_for(self.output))
        except SigningError as exc:
            raise RunnerError(str(exc)) from None
        # An external referee's admin token comes from the environment, which is then cleared
        # of it so that no bot process inherits it (nor a Ray node: the driver keeps it).
        self.external_token = take_env_secret(ADMIN_TOKEN_ENV)
        take_env_secret(DEAL_SECRET_ENV)  # used by `run` only, if at all: never handed down
        self.executor: GameExecutor | None = None
        #: Keeps the standings snapshot fresh while games are played (for the live web pages).
        self.refresher = Refresher(self.output)

    async def run(self, kind: ExecutorKind = ExecutorKind.LOCAL, ray_address: str = "") -> None:
        if self.config.server and not self.external_token:
            raise RunnerError(external_token_missing(self.config.server))
        self._restore_record_files()
        done = self.store.finished_keys()
        pending = [g for g in self.schedule.games if g.key not in done]
        self.reporter.started(len(self.schedule.games), len(done), self.faults)
        if not pending or self.decided:
            return
        try:
            self.config, taken = snapshot_bots(self.config, self.output, snapshots_taken(self.store))
            self.store.set_meta(SNAPSHOTS_META, json.dumps(taken, sort_keys=True))
            check_sandbox(self.config, self.output)
        except (SandboxError, SnapshotError) as exc:
            raise RunnerError(str(exc)) from None
        executor: GameExecutor
        if kind is ExecutorKind.RAY:
            text = self.store.config_text
            executor = tournament_executor(self.config, text, self.output, ray_address, self.concurrency)
        else:
            executor = Arena(self.config, self.output, self.external_token)
        executor.notify = self.reporter.note
        self.executor = executor
        try:
            async with executor:
                await self._run(pending, executor)
        except (ExecutorError, ArenaError) as exc:
            raise RunnerError(str(exc)) from None
        finally:
            self._publish()

    async def _run(self, pending: list[ScheduledGame], executor: GameExecutor) -> None:
        log.info(
            "tournament_running", address=executor.address, pending=len(pending), concurrency=self.concurrency
        )
        games = iter(pending)
        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(min(self.concurrency, len(pending))):
                    group.create_task(self._worker(games, executor))
        except BaseExceptionGroup as errors:
            raise _one_error(errors, executor.address) from None

    async def _worker(self, games: Iterator[ScheduledGame], executor: GameExecutor) -> None:
        # The iterator is shared: each worker takes the next game in schedule order.
        for game in games:
            if self.decided:
                break
            absent = await self._absent(game)
            outcome = await executor.play(GameJob.of(game, absent, self.deal_secret))
            await self._keep(outcome)
            self._finish(outcome)

    async def _keep(self, outcome: GameOutcome) -> None:
        """Stores a finished game, holding it while the database cannot be written (this worker
        starts no other game meanwhile; a stop then loses only the games held, which ``resume``
        plays again), then writes its record file if the referee could not."""
        await store_patiently(
            lambda: self.store.add(outcome),
            f"game {outcome.key}",
            f"hearts tournament resume {self.output}",
            self.reporter.note,
        )
        self._publish()
        self._write_record_file(outcome.key, outcome.game_id, outcome.record_json)

    def _publish(self) -> None:
        """Rewrites ``published.json`` for the games stored so far (a failed write is retried
        with the next game, and at the end of the run)."""
        try:
            self.store.publish(self.output)
        except OSError as exc:
            log.warning("published_not_written", error=str(exc))

    def _write_record_file(self, key: str, game_id: str, record: str) -> None:
        """Writes a stored game's record file where the referee could not (a full disk then).

        Not for an external referee (``tournament.server``): it keeps its record files itself.
        """
        path = self.output / "records" / f"{game_id}.json"
        if self.config.server or not record or path.exists():
            return
        try:
            write_text_durably(path, record.removesuffix("\n"))  # it adds the newline again
        except OSError as exc:
            log.warning("record_file_not_written", key=key, path=str(path), error=str(exc))
            return
        log.info("record_file_written_from_store", key=key, path=str(path))

    def _restore_record_files(self) -> None:
        """Writes the record files missing for stored games (the database holds every record)."""
        if self.config.server:
            return
        folder = self.output / "records"
        for key, game_id in list(self.store.record_ids()):
            if not (folder / f"{game_id}.json").exists():
                self._write_record_file(key, game_id, self.store.record(key) or "")

    async def _absent(self, game: ScheduledGame) -> tuple[bool, ...]:
        """Which seats of ``game`` are quarantined, once the earlier games that decide it are stored."""
        waited = False
        while (absent := self.quarantine.absent(game)) is None:
            if not waited:
                log.info("game_waits_for_earlier_games", key=game.key, reason="quarantine")
                waited = True
            await self._stored.wait()
        return absent

    def _finish(self, outcome: GameOutcome) -> None:
        """Counts a stored game: faults, progress, quarantine, the gauntlet's verdict."""
        self.faults += sum(outcome.faults)
        log.info("game_stored", key=outcome.key, game_id=outcome.game_id, faults=sum(outcome.faults))
        self.reporter.game_finished(outcome)
        for entry in self.quarantine.add(outcome):
            self._announce(entry)
            if isinstance(self.executor, Arena):
                self.executor.drop_bot(entry.bot)  # its warm processes are not needed any more
        if self.config.gauntlet is not None:
            if self.luck is not None and self.luck_terms is not None:
                self.luck_terms[outcome.key] = self.luck.terms(
                    outcome.seats, outcome.record_json, outcome.key
                )
            # Its record is in the store: keeping it here too grew the runner by megabytes a game.
            self.outcomes.append(dataclasses.replace(outcome, record_json=""))
        self._stored.set()
        self._stored = asyncio.Event()
        if self.store.count() >= BACKGROUND_SNAPSHOT_GAMES:
            self.refresher.poke()
        if not self.decided and self._gauntlet_decided():
            self.decided = True

    def _gauntlet_decided(self) -> bool:
        spec = self.config.gauntlet
        if spec is None:
            return False
        result = gauntlet_verdict(self.schedule, self.outcomes, spec, self.luck_terms)
        if result.verdict is SprtVerdict.CONTINUE:
            return False
        log.info("gauntlet_decided", verdict=str(result.verdict), deals=result.stopped_at, llr=result.llr)
        self.reporter.note(
            f"gauntlet: {result.verdict} accepted after {result.stopped_at} deals "
            f"(LLR {result.llr:.2f}, bounds {result.lower:.2f} and {result.upper:.2f}); "
            "no further games are started"
        )
        return True

    def _announce(self, entry: Quarantine) -> None:
        log.warning("bot_quarantined", bot=entry.bot, after_game=entry.after_game, failed=entry.failed_games)
        self.reporter.note(
            f"{entry.bot} is quarantined after {entry.failed_games} failed games (last: {entry.after_game}); "
            "its remaining games are played by the referee's default rule"
        )


def _one_error(errors: BaseExceptionGroup[BaseException], address: str) -> BaseException:
    """The error to report from a group of failed workers, as a RunnerError when it is one."""
    for error in errors.exceptions:
        if isinstance(error, BaseExceptionGroup):
            return _one_error(error, address)
        if isinstance(error, RunnerError | StoreError):
            return error
        if isinstance(error, ExecutorError | ArenaError):
            return RunnerError(str(error))
        if isinstance(error, grpc.aio.AioRpcError):
            return RunnerError(f"the referee at {address} failed: {error.code().name}: {error.details()}")
    return errors.exceptions[0]
