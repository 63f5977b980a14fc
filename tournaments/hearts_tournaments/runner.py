"""Running a tournament's games on a referee server, several tables at once.

The runner starts a referee in-process (``make_server`` on ``127.0.0.1:0``, records into
``OUTPUT/records``, a fresh random admin token known only to the runner's memory) unless the
config names an external one (whose admin token it reads from ``HEARTS_ADMIN_TOKEN`` and removes
from its environment), and plays every game of the schedule that the database does not hold
yet, ``concurrency`` tables at a time, in schedule order. For each game it creates a table with
``AdminService.CreateTable`` (one game, the deal's seed derived from the tournament's deal
secret, the seats' bot names, the game key as label, the seed not revealed to the seats),
starts one bot process per seat, waits with ``AwaitTable`` and commits the finished game to the
database before counting it done. Stopped at any moment, a tournament resumes with exactly the
games that were not committed.

Faulty bots never stop a tournament: the referee plays for a seat whose bot is absent, slow or
retired (its fault policy), and a bot with ``quarantine_after`` failed games is quarantined:
its remaining games are still played, the referee deciding for its seats, and its process is no
longer started. So that such a table does not wait for its join timeout, the runner releases
the empty seat (``AdminService.ReleaseSeat``), which tells the referee nobody is coming; it does
the same for a bot whose process exits before its table starts. Quarantine is decided in
schedule order (:class:`~.outcome.ScheduleQuarantine`): a game whose quarantine status depends
on earlier games still being played waits for them, so results never depend on concurrency.

Every bot runs in its sandbox (:mod:`.sandbox`, ``tournament.sandbox``): it reaches the referee
only through a Unix socket in a private folder of the runner (the in-process referee listens
there too; an external referee is relayed to it), gets its seat token in a file, and is watched
by one :class:`~.sandbox.Watchdog` for the whole run.

Where games are played is an executor (:mod:`.executors`): :class:`LocalExecutor`, all of the
above on this machine (the default), or the Ray executor, which plays each game on a cluster
node with that node's own ``LocalExecutor``. Either way this process alone decides the order,
the quarantines and the gauntlet's stop, and alone writes the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import re
import secrets
import shutil
import signal
import tempfile
import time
from collections.abc import Awaitable, Callable, Collection, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, Self

import grpc
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from cancellation_hearts.v1 import admin_service_pb2 as apb
from cancellation_hearts.v1 import admin_service_pb2_grpc as agrpc
from hearts_core.record import write_text_durably
from hearts_protocol.transport import own_channel
from hearts_server.logs import get_logger
from hearts_server.server import make_server
from hearts_tournaments import signing, snapshot
from hearts_tournaments.config import (
    BotProtocol,
    BotSpec,
    ConfigError,
    ExecutorKind,
    Reuse,
    TournamentConfig,
    names_seating,
    parse_config,
)
from hearts_tournaments.entrants import BotProcess, SeatAccess, check_files, snapshot_spec
from hearts_tournaments.executors import ExecutorError, GameExecutor, GameJob, RayExecutor
from hearts_tournaments.failures import exit_line, silent_line
from hearts_tournaments.gauntlet import gauntlet_schedule, gauntlet_verdict
from hearts_tournaments.outcome import GameOutcome, Quarantine, ScheduleQuarantine
from hearts_tournaments.results import Standings, compute_standings
from hearts_tournaments.sandbox import SandboxError, SandboxKind, Watchdog, require_bwrap
from hearts_tournaments.schedule import Progress, Schedule, ScheduledGame, SeatingMode, make_schedule
from hearts_tournaments.snapshot import SnapshotError
from hearts_tournaments.standings_snapshot import (
    SNAPSHOT_NAME,
    Refresher,
    Snapshot,
    fingerprint,
    load_snapshot,
    save_snapshot,
)
from hearts_tournaments.stats import SprtVerdict
from hearts_tournaments.stdio_entrant import start_stdio_bot
from hearts_tournaments.store import DB_NAME, Store, StoreError, private_folder, store_patiently
from hearts_tournaments.tournament_secrets import (
    ADMIN_TOKEN_ENV,
    DEAL_SECRET_ENV,
    take_env_secret,
)
from hearts_tournaments.warm import WarmBot, WarmPool

log = get_logger(__name__)

#: Seconds to wait for an external referee to answer at start.
CONNECT_TIMEOUT_S = 10.0
#: The runner's note of which process played which seat of each game (JSON lines).
PROCESSES_LOG = "processes.jsonl"
#: From this many stored games on, the runner keeps the standings snapshot fresh in the
#: background while it plays (below, computing them takes a fraction of a second: the web
#: does it itself).
BACKGROUND_SNAPSHOT_GAMES = 200
#: What the runner owns in an output folder (removed by ``--fresh``).
OWNED = (
    DB_NAME,
    f"{DB_NAME}-wal",
    f"{DB_NAME}-shm",
    "records",
    "logs",
    "runner.log",
    PROCESSES_LOG,
    SNAPSHOT_NAME,
    signing.PUBLISHED,
)


#: The files the runner writes in ``records/`` (the referee's game records, and the temporary
#: files of a write cut short) and in ``logs/`` (one log per bot, game and seat).
_OWNED_RECORD = re.compile(r"[0-9a-f]{12}(-[0-9]+)?\.json|\.[0-9a-f]{12}(-[0-9]+)?\.json\..+\.tmp")
_OWNED_LOG = re.compile(r".+-s[0-9]+\.log")


def remove_owned(output: Path) -> list[Path]:
    """Removes what a previous run of the runner made in ``output`` (``--fresh``), and only that.

    The database files and the runner's log go; in ``records/`` and ``logs/`` only the files
    named as the runner names them, and the folders left empty. Anything else the organiser
    put there stays.
    """
    removed: list[Path] = []
    for name in OWNED:
        path = output / name
        if name in ("records", "logs") or path.is_dir():
            continue
        if path.exists():
            path.unlink(missing_ok=True)
            removed.append(path)
    records = output / "records"
    if records.is_dir():
        for path in records.iterdir():
            if path.is_file() and _OWNED_RECORD.fullmatch(path.name):
                path.unlink(missing_ok=True)
                removed.append(path)
    logs = output / "logs"
    if logs.is_dir():
        for folder in logs.iterdir():
            if not folder.is_dir() or folder.is_symlink():
                continue
            for path in folder.iterdir():
                if path.is_file() and _OWNED_LOG.fullmatch(path.name):
                    path.unlink(missing_ok=True)
                    removed.append(path)
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when empty
    copies = output / snapshot.STORE
    if copies.is_dir() and not copies.is_symlink():
        for path in copies.iterdir():
            if path.is_dir() and not path.is_symlink() and snapshot.OWNED.fullmatch(path.name):
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
    for folder in (records, logs, copies):
        with contextlib.suppress(OSError):
            folder.rmdir()
    return removed


def external_token_missing(server: str) -> str:
    """The one line that says an external referee's admin token is missing, and how to give it."""
    return (
        f"tournament.server is {server} but {ADMIN_TOKEN_ENV} is not set: give the runner that "
        f'referee\'s admin token, e.g. {ADMIN_TOKEN_ENV}="$(cat FILE)" with the token file `hearts '
        "serve` printed (a referee refuses admin calls without its token)"
    )


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
    deal_secret: bytes | None = None,
    progress: Progress | None = None,
    config_path: Path | None = None,
) -> Tournament:
    """Schedules a new tournament and stores it in ``output``.

    Args:
        config: The configuration.
        config_text: The configuration file's text (kept in the database).
        output: The output folder.
        fresh: Remove a previous tournament's database, records and logs from ``output`` first.
        deal_secret: The secret to seed the deals from, to replay a tournament's deals
            (default: a fresh one, drawn now).
        progress: Called with a line as each phase of the schedule's design ends.
        config_path: The configuration file, kept so that ``resume`` can tell when it was edited.

    Raises:
        StoreError: if ``output`` already holds a tournament (and not ``fresh``).
    """
    if fresh:
        remove_owned(output)
    elif Store.path_in(output).exists():
        raise StoreError(
            f"{output} already holds a tournament: continue it with `hearts tournament resume "
            f"{output}`, or add --fresh to start it over"
        )
    store = Store.create(
        output,
        config_text,
        config.base_dir,
        config.name,
        schedule_for(config, progress),
        deal_secret,
        config_path,
    )
    return Tournament(config, store, output)


def schedule_for(config: TournamentConfig, progress: Progress | None = None) -> Schedule:
    """The schedule of a config: a round robin, or a gauntlet with a ``[gauntlet]`` section.

    ``progress`` is told each phase of a round robin's design as it ends.
    """
    if config.gauntlet is not None:
        candidate = config.gauntlet.candidate
        field = [name for name in config.bot_names if name != candidate]
        return gauntlet_schedule(
            candidate, field, config.table_size, config.deals, config.seed, config.duplicate
        )
    return make_schedule(
        config.bot_names,
        config.table_size,
        config.deals,
        config.seed,
        config.duplicate,
        config.seating,
        progress,
    )


def open_tournament(output: Path, *, read_only: bool = False) -> Tournament:
    """Opens the tournament stored in ``output``, with its configuration as stored.

    Args:
        output: The tournament's folder.
        read_only: Open its database read-only.

    Raises:
        StoreError: if ``output`` holds no tournament.
        ConfigError: if the stored configuration no longer reads (e.g. a built-in bot is gone).
    """
    store = Store.open(output, read_only=read_only)
    try:
        config = parse_config(store.config_text, store.base_dir, default_name=store.meta("name"))
    except ConfigError:
        store.close()
        raise
    if not names_seating(store.config_text):
        # The default seating has changed over time: a tournament keeps the one it was
        # scheduled with (a schedule stored before seatings were named is rotated).
        stored = json.loads(store.meta("schedule")).get("seating", SeatingMode.ROTATE.value)
        config = dataclasses.replace(config, seating=SeatingMode(stored))
    return Tournament(config, store, output)


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


async def until_terminated(work: Coroutine[Any, Any, None]) -> None:
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


def check_sandbox(config: TournamentConfig, output: Path, snapshotted: Collection[str] = ()) -> list[str]:
    """Checks that every bot can be sandboxed as configured, before anything is played.

    The bots named in ``snapshotted`` play the copy of their files taken when the tournament
    started (:func:`snapshot_bots`): their files as they are now are not looked at.

    Returns:
        Warnings for the organiser: one per bot that runs without a sandbox.

    Raises:
        SandboxError: bwrap is needed and missing, or a bot's files would show it the config
            file or the output folder.
    """
    unsandboxed = [spec.name for spec in config.bots if config.sandbox_of(spec) is SandboxKind.NONE]
    for spec in config.bots:
        if config.sandbox_of(spec) is SandboxKind.BWRAP and spec.name not in snapshotted:
            check_files(spec, output)
    if len(unsandboxed) < len(config.bots):
        require_bwrap()
    if not unsandboxed:
        return []
    return [
        f'warning: {", ".join(unsandboxed)} run(s) without a sandbox (sandbox = "none"): such a bot can '
        "read the config, the database and other bots' files, reach the network and outlive its game; "
        "use it for your own trusted bots only"
    ]


#: The meta key of a tournament's snapshots, taken when it first starts (:func:`snapshot_bots`).
SNAPSHOTS_META = "snapshots"


def snapshots_taken(store: Store) -> dict[str, Any]:
    """The snapshots a tournament took when it first started, per bot name."""
    taken = json.loads(store.meta_or(SNAPSHOTS_META, "{}"))
    return taken if isinstance(taken, dict) else {}


def snapshot_bots(
    config: TournamentConfig, output: Path, taken: dict[str, Any] | None = None
) -> tuple[TournamentConfig, dict[str, Any]]:
    """The config with every sandboxed command bot's files snapshotted under ``output``.

    What the bots run is copied once, when the tournament first starts; ``taken`` holds the
    copies made before (``{name: {"digest", "targets"}}``): a resumed run plays those, checked
    again and bound where they were, whatever has become of the files since. So neither an
    entrant changing its files mid-run nor swapping a folder for a symlink changes what plays.

    Returns:
        The config to play with, and the snapshots per bot name.

    Raises:
        SandboxError: a new snapshot's files would show the config or output folder.
        SnapshotError: a bot's files cannot be copied, or an earlier copy was changed.
    """
    taken = dict(taken or {})
    store = output / snapshot.STORE
    secret = (output.resolve(),)
    bots = []
    for spec in config.bots:
        if config.sandbox_of(spec) is not SandboxKind.BWRAP or spec.command is None:
            bots.append(spec)
            continue
        before = taken.get(spec.name)
        if isinstance(before, dict):
            targets = tuple(Path(t) for t in before["targets"])
            done = snapshot_spec(
                dataclasses.replace(spec, files=targets), store, secret, str(before["digest"])
            )
        else:
            done = take_snapshot(config, spec, store, output)
        if done.snapshot is not None:
            taken[spec.name] = {"digest": done.snapshot.name, "targets": [str(p) for p in done.files or ()]}
        bots.append(done)
    return dataclasses.replace(config, bots=tuple(bots)), taken


def take_snapshot(
    config: TournamentConfig, spec: BotSpec, store: Path, output: Path, also_secret: tuple[Path, ...] = ()
) -> BotSpec:
    """``spec`` playing a new snapshot of its files in ``store``, refused where they would show the
    output folder (or ``also_secret``) or the whole config folder.

    Raises:
        SandboxError: the files show the config or output folder.
        SnapshotError: they cannot be copied as they are.
    """
    check_files(spec, output)
    secret = (output.resolve(), *also_secret)
    return snapshot_spec(spec, store, secret, None, (config.base_dir.resolve(),))


def signing_key_for(output: Path) -> Ed25519PrivateKey:
    """The organiser's signing key (:func:`signing.load_signing_key`), never one kept in ``output``.

    Raises:
        RunnerError: it cannot be had, or it lies inside the output folder.
    """
    path = signing.default_key_path()
    where = Path(os.path.realpath(path))
    out = output.resolve()
    if where == out or out in where.parents:
        raise RunnerError(
            f"the signing key {path} lies inside the output folder {out}, which others may read or "
            f"write: keep it elsewhere ({signing.KEY_ENV})"
        )
    try:
        return signing.load_signing_key(path)
    except signing.SigningError as exc:
        raise RunnerError(str(exc)) from None


def tournament_standings(tournament: Tournament, *, cached: bool = False) -> Standings:
    """The standings of the games stored so far.

    Args:
        tournament: The tournament.
        cached: Use the folder's standings snapshot when it is of exactly the games stored,
            else compute them and keep them as the snapshot (see :mod:`.standings_snapshot`). Without
            it they are computed from the stored games, whatever the folder holds.
    """
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


def fresh_snapshot(tournament: Tournament) -> Snapshot:
    """The standings computed from the games stored now, with the fingerprint of those games."""
    store = tournament.store
    started = time.monotonic()
    outcomes = store.outcomes(records=False)
    standings = compute_standings(
        name=tournament.config.name,
        schedule=store.schedule(),
        outcomes=outcomes,
        target_score=tournament.config.target_score,
        quarantine_after=tournament.config.quarantine_after,
        balance=store.balance(),
        gauntlet=tournament.config.gauntlet,
    )
    return Snapshot(fingerprint(store, [o.key for o in outcomes]), standings, time.monotonic() - started)


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
        # A gauntlet stops starting games once its sequential test has a verdict.
        self.decided = self._gauntlet_decided()
        self.deal_secret = self.store.deal_secret()
        self.store.sign_with(signing_key_for(self.output))
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
            executor = RayExecutor(self.config, text, self.output, ray_address, self.concurrency)
        else:
            executor = LocalExecutor(self.config, self.output, self.external_token)
            executor.notify = self.reporter.note
        self.executor = executor
        try:
            async with executor:
                await self._run(pending, executor)
        except ExecutorError as exc:
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
            if isinstance(self.executor, LocalExecutor):
                self.executor.drop_bot(entry.bot)  # its warm processes are not needed any more
        if self.config.gauntlet is not None:
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
        result = gauntlet_verdict(self.schedule, self.outcomes, spec)
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


class GameHost(Protocol):
    """What one game (:class:`GamePlay`) needs of whoever runs it: this machine's executor, or a league."""

    config: TournamentConfig
    metadata: tuple[tuple[str, str], ...]
    output: Path
    socket: Path
    watchdog: Watchdog
    #: The warm bot processes (``reuse = "between_deals"``), or None: a process per seat per game.
    pool: WarmPool | None

    def reap(self, game: ScheduledGame, processes: list[BotProcess]) -> None:
        """Lets the bots of a finished game exit (or stops them) in the background."""

    def note_processes(self, game: ScheduledGame, seated: list[tuple[int, int | None, int | None]]) -> None:
        """Records which process played each seat of ``game`` (seat, warm serial, pid)."""

    def incident(self, line: str) -> None:
        """Tells the organiser, now, that an entrant's process ended or stopped answering."""


class LocalExecutor:
    """The ``local`` executor: this machine's referee and bot processes play the games.

    Entered, it starts the in-process referee on a Unix socket in a private folder (or relays
    that socket to the external ``tournament.server``) and the sandbox watchdog; :meth:`play`
    plays one game (many may run at once); leaving it lets the last bots exit and stops the
    referee. A Ray node plays its games with the same object (:mod:`.executors`).
    """

    def __init__(self, config: TournamentConfig, output: Path, external_token: str | None = None) -> None:
        self.config = config
        self.output = output
        self._reaping: dict[asyncio.Task[None], list[BotProcess]] = {}
        # The in-process referee always requires a fresh admin token that only this object
        # holds; an external referee's is the one given.
        token = external_token if config.server else secrets.token_hex(32)
        self.admin_token = token or None
        self.metadata: tuple[tuple[str, str], ...] = (("authorization", f"Bearer {token}"),) if token else ()
        self.watchdog = Watchdog()
        #: The referee's Unix socket, the bots' only way out of their sandbox (set on entry).
        self.socket = Path()
        self.address = config.server
        self._stack = contextlib.AsyncExitStack()
        self._channel: grpc.aio.Channel | None = None
        #: The warm bot processes (``reuse = "between_deals"``; set on entry).
        self.pool: WarmPool | None = None
        #: Where a line about an entrant's failure goes as it happens (the runner's reporter).
        self.notify: Callable[[str], None] | None = None

    def incident(self, line: str) -> None:
        """Passes a line about an entrant's failure to :attr:`notify` (and the log)."""
        log.warning("entrant_failed", line=line)
        if self.notify is not None:
            self.notify(line)

    async def __aenter__(self) -> Self:
        async with contextlib.AsyncExitStack() as stack:
            private = stack.enter_context(tempfile.TemporaryDirectory(prefix="hearts-referee-"))
            stack.enter_context(self.watchdog)
            self.socket = Path(private) / "referee.sock"
            await self._start(stack)
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
            for task, processes in list(self._reaping.items()):
                task.cancel()
                for process in processes:
                    process.kill()
            await self._stack.aclose()

    async def _start(self, stack: contextlib.AsyncExitStack) -> None:
        address = self.config.server
        try:
            # Records and bot logs tell about hands: only the organiser may read them.
            for folder in (self.output, self.output / "records", self.output / "logs"):
                private_folder(folder)
        except OSError as exc:
            raise RunnerError(f"cannot prepare {self.output}: {exc}") from None
        try:
            if not address:
                server = make_server(
                    self.output / "records", admin_token=self.admin_token, unix_socket=self.socket
                )
                await server.start()
                stack.push_async_callback(server.stop, 1.0)
                address = server.address
            else:
                relay = await _relay(self.socket, address)
                stack.callback(relay.close)
        except OSError as exc:
            raise RunnerError(f"cannot start the referee: {exc}") from None
        self.address = address
        channel = await stack.enter_async_context(grpc.aio.insecure_channel(address))
        try:
            await asyncio.wait_for(channel.channel_ready(), CONNECT_TIMEOUT_S)
        except TimeoutError:
            raise RunnerError(f"the referee at {address} does not answer: check tournament.server") from None
        self._channel = channel
        if self.config.reuse is Reuse.BETWEEN_DEALS:
            admin = agrpc.AdminServiceStub(channel)
            self.pool = WarmPool(admin, self.metadata, self.config.restart_after, self.reap_warm)

    async def play(self, job: GameJob) -> GameOutcome:
        """Plays one game on this machine and returns its outcome."""
        assert self._channel is not None, "play() outside `async with`"
        return await _GamePlay(self, job, self._channel, self.address).play()

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
        code = await process.stop()
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
        codes = await asyncio.gather(*(p.stop() for p in processes))
        for process, code in zip(processes, codes, strict=True):
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


class _GamePlay:
    """One game: its table, its bot processes, its outcome."""

    def __init__(self, runner: GameHost, job: GameJob, channel: grpc.aio.Channel, address: str) -> None:
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
        self.table_id = ""
        self.tokens: list[str] = []

    async def play(self) -> GameOutcome:
        """Plays the game over a connection of its own to the referee (which allows few calls per
        connection, while a runner awaits many tables at once)."""
        async with own_channel(self.address) as channel:
            self.admin = agrpc.AdminServiceStub(channel)
            return await self._play()

    async def _play(self) -> GameOutcome:
        config = self.config
        game = self.game
        table = apb.TableConfig(
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
        )
        created = await self.admin.CreateTable(apb.CreateTableRequest(config=table), metadata=self.metadata)
        self.table_id = created.table_id
        self.tokens = [s.token for s in sorted(created.seats, key=lambda s: s.seat)]
        log.info("game_starting", key=game.key, table_id=self.table_id, absent=list(self.absent))
        for seat, absent in enumerate(self.absent):
            if absent:
                # A quarantined bot's seat: the referee plays it, and what it decides for the
                # seat counts against the bot (as faults, until the seat is retired).
                await self._release(seat, faulted=True)
        processes: list[BotProcess] = []
        warm_bots: dict[int, WarmBot] = {}
        watchers: list[asyncio.Task[None]] = []
        over = asyncio.Event()
        response: apb.AwaitTableResponse | None = None
        pool = self.runner.pool
        try:
            for seat, bot in enumerate(game.seats):
                if self.absent[seat]:
                    continue
                spec = config.bot(bot)
                if pool is not None:
                    warm = await pool.take(bot, game.deal, self._starter(spec, seat))
                    warm_bots[seat] = warm
                    await pool.bind(warm, self.table_id, seat, self.job.bot_seeds[seat])
                    process = warm.process
                else:
                    log_path = self.runner.output / "logs" / bot / f"{game.key}-s{seat}.log"
                    process = await self._start(spec, seat, self.tokens[seat], log_path, 1)
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
        self.runner.note_processes(
            game,
            [(p.seat, warm_bots[p.seat].serial if p.seat in warm_bots else None, p.pid) for p in processes],
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
        outcome = self._outcome(response.table)
        self._tell_silent(outcome, {p.seat: p.log_path for p in processes})
        return outcome

    def _tell_silent(self, outcome: GameOutcome, logs: dict[int, Path]) -> None:
        """One line per seat whose bot stopped answering (its exit, if any, was told already)."""
        for seat, bot in enumerate(outcome.seats):
            if self.absent[seat] or self.told[seat]:
                continue
            if outcome.never_answered[seat]:
                why = "never made a decision of its own"
            elif outcome.retired[seat]:
                why = f"stopped answering and its seat was retired after {outcome.faults[seat]} faults"
            else:
                continue
            self.runner.incident(silent_line(bot, self.game.key, seat, why, logs.get(seat)))

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
        self.runner.incident(
            exit_line(self.game.seats[seat], self.game.key, seat, code, process.killed, process.log_path)
        )
        if table.status == apb.TABLE_STATUS_WAITING and not table.connected[seat]:
            # Nobody is coming for this seat: do not let the table wait for its join timeout.
            # Its bot failed, so each decision the referee makes for it is the bot's fault.
            await self._release(seat, faulted=True)

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


def _one_error(errors: BaseExceptionGroup[BaseException], address: str) -> BaseException:
    """The error to report from a group of failed workers, as a RunnerError when it is one."""
    for error in errors.exceptions:
        if isinstance(error, BaseExceptionGroup):
            return _one_error(error, address)
        if isinstance(error, RunnerError | StoreError):
            return error
        if isinstance(error, ExecutorError):
            return RunnerError(str(error))
        if isinstance(error, grpc.aio.AioRpcError):
            return RunnerError(f"the referee at {address} failed: {error.code().name}: {error.details()}")
    return errors.exceptions[0]


#: One game on the referee, for other ways of scheduling games (the league): its ``runner``
#: argument is a :class:`GameHost` (config, metadata, deal_secret,
#: socket, output, watchdog, metadata and reap).
GamePlay = _GamePlay
