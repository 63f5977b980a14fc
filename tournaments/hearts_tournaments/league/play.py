"""The ``run`` loop: validates new versions and plays blocks on the referee, one at a time.

Between blocks it reads the league's state afresh (one read transaction: the versions and the
last command seen), so that ``add``, ``update``, ``retire`` and ``unretire`` given while it runs
take effect before the next block. A pending version first plays a validation game against
copies of itself; it becomes ``active`` if none of its seats failed, else ``error`` (with the
log's path as its note) and never plays a rated game.

A block is planned from the state only (:mod:`.matchmaking` seeded by the league seed and the
block's number), played (its ``table_size`` rotations, ``concurrency`` tables at once) and
stored in one transaction with the online rating update and any quarantine. A block cut short
(Ctrl-C, ``kill -9``, a lost referee) is not stored; the next ``run`` plans the same block again.
Games are played on the arena (:class:`hearts_tournaments.arena.local.Arena`), as a tournament's
are: a table over the admin API, one sandboxed bot process per seat, ``AwaitTable``; with
``executor = "ray"``, each game is a Ray task played by some node's own arena
(:mod:`.cluster`), and this loop, on the driver, alone writes the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fcntl
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import grpc

from hearts_core.deal import derive_seed
from hearts_server.logs import get_logger
from hearts_tournaments.arena.bots import BotSpec
from hearts_tournaments.arena.entrants import bot_files, check_files, runtime_of
from hearts_tournaments.arena.job import GameJob, ScheduledGame
from hearts_tournaments.arena.local import Arena, ArenaError
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.arena.sandbox import SandboxError, SandboxKind, require_bwrap
from hearts_tournaments.arena.settings import PlaySettings
from hearts_tournaments.arena.snapshot import SnapshotError, check_snapshot
from hearts_tournaments.league.cluster import NodeLeague
from hearts_tournaments.league.config import LeagueConfig, LeagueError, check_executor
from hearts_tournaments.league.matchmaking import Candidate, choose_table, meeting_counts
from hearts_tournaments.league.ratings import TableRow, official_table
from hearts_tournaments.league.store import ACTIVE, PENDING, LeagueStore, Snapshot, Version
from hearts_tournaments.results.executors import ExecutorError, RayExecutor
from hearts_tournaments.results.signing import SigningError, signing_key_for
from hearts_tournaments.results.stop import Terminated, until_terminated
from hearts_tournaments.results.store import store_patiently
from hearts_tournaments.results.where import ExecutorKind

log = get_logger(__name__)

#: Seconds between looks at the league when it has too few active versions to play.
IDLE_POLL_S = 0.5
#: Seconds to wait for the in-process referee's channel.
CONNECT_TIMEOUT_S = 10.0
NOT_ENOUGH = (
    "fewer than two active versions of entrants who may meet (not of one team, not linked: "
    "`hearts league entrant links`): add entrants with `hearts league add`"
)
#: The league's meta key holding its final's settings once the final began (see :mod:`.final`).
FINAL_META = "final"


@dataclass(frozen=True, slots=True)
class StopAfter:
    """When ``run`` stops (the first limit reached; none: it runs until stopped).

    Attributes:
        games: Rated games played by this run.
        blocks: Blocks played by this run.
        until_ci: Every active version's official interval at most this wide.
    """

    games: int | None = None
    blocks: int | None = None
    until_ci: float | None = None

    @property
    def forever(self) -> bool:
        """No limit: play until stopped."""
        return self.games is None and self.blocks is None and self.until_ci is None


def block_game(config: LeagueConfig, number: int, order: tuple[str, ...], rotation: int) -> ScheduledGame:
    """Rotation ``rotation`` of block ``number`` seated as ``order``."""
    n = len(order)
    seed = derive_seed(config.seed, "block", number)
    return ScheduledGame(
        index=rotation,
        key=f"b{number:06d}-r{rotation:02d}",
        deal=number,
        rotation=rotation,
        seed=seed,
        seats=tuple(order[(s - rotation) % n] for s in range(n)),
        bot_seeds=tuple(derive_seed(seed, "bot", rotation, s) for s in range(n)),
    )


def plan_block(store: LeagueStore, snapshot: Snapshot) -> tuple[str, ...] | None:
    """The seating of the next block, or None with fewer than two active versions of entrants
    who may meet (not of one team, not linked)."""
    config = store.config
    active = [v for v in snapshot.versions if v.status == ACTIVE]
    if len(active) < 2:
        return None
    online = store.ratings()
    model = store.rating
    sides = store.sides()
    states = {v.id: online[v.id].state if v.id in online else model.defaults for v in active}
    candidates = [
        Candidate(
            v.id,
            v.entrant,
            online[v.id].blocks if v.id in online else 0,
            model.estimate(states[v.id]),
            model.uncertainty(states[v.id]),
            sides.get(v.entrant, ""),
        )
        for v in active
    ]
    if len({c.apart for c in candidates}) < 2:
        return None  # every active entrant is of one side: nobody it may meet
    number = store.next_block()
    meetings = meeting_counts([seats for _, _, seats, _ in store.block_rows()])
    rng = random.Random(derive_seed(config.seed, "match", number))
    return choose_table(
        candidates,
        config.table_size,
        meetings,
        rng,
        config.new_bonus,
        config.settled_sigma,
        config.spread,
        config.lane_blocks,
        model.scale,
    )


def league_table(store: LeagueStore, everyone: bool = False, online: bool = True) -> list[TableRow]:
    """The official table, refitted in one batch from every stored block.

    Args:
        store: The league.
        everyone: List retired, quarantined and failed versions too (without a strength: the
            official fit is over the active versions' games only).
        online: Show the online ratings too (``recompute`` leaves them out: it is the batch
            fit of the stored games and nothing else).
    """
    versions = store.versions()
    active = frozenset(v.id for v in versions if v.status == ACTIVE)
    shown = [v for v in versions if everyone or v.status == ACTIVE]
    ratings = {vid: rating.state for vid, rating in store.ratings().items()} if online else {}
    config = store.config
    return official_table(
        store.block_games(),
        [(v.id, v.status, v.pinned) for v in shown],
        ratings,
        config.bootstrap,
        derive_seed(config.seed, "bootstrap"),
        config.provisional_blocks,
        config.provisional_width,
        include=active,
        parameters=tuple(store.rating.defaults),
    )


class TableMemo:
    """Each league folder's official table (every version listed), refitted only when the
    league's state (:meth:`LeagueStore.state`) changes: one per process, so that the portal's
    pages and the league's public page, each with its own connection and thread, fit a state
    once between them (about a second at 22 entrants). The table returned is shared: callers
    must not change it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[str, tuple[int, list[TableRow]]] = {}

    def table(self, store: LeagueStore) -> list[TableRow]:
        """``store``'s official table as :func:`league_table` gives it with ``everyone``."""
        # The league's id too: a folder made again holds another league.
        key = f"{store.folder.resolve()}\0{store.meta('league_id')}"
        with self._lock:  # a second thread asking for the same state waits for the first's fit
            state = store.state()
            kept = self._kept.get(key)
            if kept is None or kept[0] != state:
                kept = self._kept[key] = (state, league_table(store, everyone=True))
            return kept[1]


#: The process's official tables (:class:`TableMemo`).
OFFICIAL_TABLES = TableMemo()


def play_settings(store: LeagueStore, bots: tuple[BotSpec, ...] = ()) -> PlaySettings:
    """How the league's games are played, by ``bots`` (what the arena and the check read)."""
    return store.config.play_settings(store.folder, bots)


def run_league(
    store: LeagueStore,
    stop: StopAfter,
    concurrency: int = 1,
    emit: Callable[[str], None] = lambda line: None,
    executor: str | None = None,
    ray_address: str | None = None,
    planner: Planner | None = None,
    finished: Callable[[], bool] | None = None,
) -> int:
    """Plays blocks until ``stop``; returns the blocks this run stored.

    Args:
        store: The league.
        stop: When to stop.
        concurrency: Tables at once within a block (sizes a Ray started here, too).
        emit: Where the lines about validations and blocks go.
        executor: ``local`` or ``ray`` (default: the league's setting).
        ray_address: The Ray cluster (default: the league's setting).
        planner: Seats each block instead of matchmaking (the final's: :mod:`.final`).
        finished: Asked before each block: True stops the run (the final decided).

    Raises:
        LeagueError: another ``run`` holds the league, the referee or a Ray node failed, a
            bad executor, or a bounded run has fewer than two active versions to play.
    """
    kind = executor if executor is not None else store.config.executor
    address = ray_address if ray_address is not None else store.config.ray_address
    check_executor(kind, address)
    if planner is None and store.meta_or(FINAL_META, ""):
        raise LeagueError(
            f"{store.folder}'s season froze and its final began: `hearts league final` plays it"
        )
    playable = [v for v in store.snapshot().versions if v.status in (ACTIVE, PENDING)]
    if not stop.forever and len({v.entrant for v in playable}) < 2:
        raise LeagueError(NOT_ENOUGH)
    lock_path = store.folder / "run.lock"
    with lock_path.open("w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LeagueError(f"another `hearts league run` is playing {store.folder}") from None
        try:
            store.sign_with(signing_key_for(store.folder))
        except SigningError as exc:
            raise LeagueError(str(exc)) from None
        loop = _Loop(store, stop, max(1, concurrency), emit, ExecutorKind(kind), address)
        if planner is not None:
            loop.planner = planner
        loop.finished = finished
        try:
            asyncio.run(until_terminated(loop.run()))
        except Terminated:
            raise KeyboardInterrupt from None  # SIGTERM stops a league as Ctrl-C does
        finally:
            with contextlib.suppress(OSError):
                store.publish(store.folder)
        return loop.stored


#: Seats the next block from the league's state (None: too few active versions to play).
Planner = Callable[[LeagueStore, Snapshot], tuple[str, ...] | None]

#: Where a league's games are played: this machine's arena, or a Ray cluster's nodes.
Executor = Arena | RayExecutor


class _Loop:
    def __init__(
        self,
        store: LeagueStore,
        stop: StopAfter,
        concurrency: int,
        emit: Callable[[str], None],
        kind: ExecutorKind = ExecutorKind.LOCAL,
        ray_address: str = "",
    ) -> None:
        self.kind = kind
        self.ray_address = ray_address
        self.store = store
        self.config = store.config
        self.stop = stop
        self.concurrency = concurrency
        self.emit = emit
        self.stored = 0
        self.games = 0
        self.deal_secret = store.deal_secret()
        #: The snapshots checked against their digests by this run.
        self.checked: set[Path] = set()
        self.settings = play_settings(store)
        self.planner: Planner = plan_block
        self.finished: Callable[[], bool] | None = None

    async def run(self) -> None:
        executor: Executor
        if self.kind is ExecutorKind.RAY:
            work = NodeLeague.of(self.settings)
            executor = RayExecutor(work, self.store.folder, self.ray_address, self.concurrency)
        else:
            executor = Arena(self.settings, self.store.folder, note_processes=False)
        try:
            async with executor:
                await self._loop(executor)
        except grpc.aio.AioRpcError as exc:
            raise LeagueError(f"the referee failed: {exc.code().name}: {exc.details()}") from None
        except (ArenaError, ExecutorError) as exc:
            raise LeagueError(str(exc)) from None

    def _done(self) -> bool:
        stop = self.stop
        if self.finished is not None and self.finished():
            return True
        if stop.blocks is not None and self.stored >= stop.blocks:
            return True
        if stop.games is not None and self.games >= stop.games:
            return True
        if stop.until_ci is not None and self.stored:
            rows = league_table(self.store)
            return all(
                r.low is not None and r.high is not None and r.high - r.low <= stop.until_ci for r in rows
            )
        return False

    async def _loop(self, arena: Executor) -> None:
        while not self._done():
            snapshot = self.store.snapshot()
            pending = [v for v in snapshot.versions if v.status == PENDING]
            if pending:
                # Validated first; then the state is read again (more may have come meanwhile),
                # so a block is always planned from a snapshot with nothing pending.
                for version in pending:
                    await self._validate(version, arena)
                continue
            order = self.planner(self.store, snapshot)
            if order is None:
                if self.stop.forever:
                    await asyncio.sleep(IDLE_POLL_S)
                    continue
                raise LeagueError(NOT_ENOUGH)
            await self._block(order, snapshot, arena)

    def _arena_for(self, arena: Executor, specs: list[BotSpec]) -> Executor:
        """The executor, playing ``specs`` from its next game on (between blocks, never during one)."""
        config = dataclasses.replace(self.settings, bots=tuple(specs))
        if isinstance(arena, RayExecutor):
            arena.work = NodeLeague.of(config)  # their snapshots go with each game's task
        else:
            arena.config = config
        return arena

    async def _validate(self, version: Version, arena: Executor) -> None:
        n = self.config.table_size
        seed = derive_seed(self.config.seed, "validate", version.id)
        game = ScheduledGame(
            0,
            f"validate-{version.id}",
            -1,
            0,
            seed,
            (version.id,) * n,
            tuple(derive_seed(seed, "bot", s) for s in range(n)),
        )
        log.info("league_validating", version=version.id)
        problem = self._sandbox_problem(version.spec)
        outcome: GameOutcome | None = None
        if problem is None:
            try:
                job = GameJob.of(game, (False,) * n, self.deal_secret)
                outcome = await self._arena_for(arena, [version.spec]).play(job)
            except ArenaError as exc:
                problem = str(exc)
        if outcome is not None and outcome.failed(version.id):
            seats = [
                s for s in range(n) if outcome.retired[s] or outcome.crashed[s] or outcome.never_answered[s]
            ]
            logs = self.store.folder / "logs" / version.id / f"{game.key}-s{seats[0]}.log"
            problem = (
                f"failed its validation game (seats {seats}: crashed, retired or never answered); log: {logs}"
            )
        ok = problem is None
        note = "passed its validation game" if ok else str(problem)
        if outcome is None:
            outcome = _empty_outcome(game)
        validated = outcome
        await store_patiently(
            lambda: self.store.store_validation(version.id, validated, ok, note),
            f"the validation game of {version.id}",
            f"hearts league run {self.store.folder}",
            self.emit,
        )
        self.emit(f"{version.id}: {'active' if ok else 'error'}: {note}")

    def _sandbox_problem(self, spec: BotSpec) -> str | None:
        try:
            runtime_of(spec)
        except SandboxError as exc:
            return str(exc)
        if self.settings.sandbox_of(spec) is not SandboxKind.BWRAP:
            return None
        try:
            self._check_snapshot(spec)
            check_files(spec, self.store.folder)
            require_bwrap()
        except (SandboxError, SnapshotError) as exc:
            return str(exc)
        return None

    def _check_snapshot(self, spec: BotSpec) -> None:
        """What a sandboxed version plays is its snapshot, unchanged since ``add`` (checked once a run).

        Raises:
            SnapshotError: it has files but no snapshot (added before snapshots existed), or the
                snapshot was changed.
        """
        if spec.snapshot is None:
            if spec.command is not None and bot_files(spec):
                raise SnapshotError(
                    f"bot {spec.name!r} was added before files were snapshotted: add it again with "
                    f"`hearts league update {self.store.folder} {spec.name.partition('@')[0]} ...`"
                )
            return
        if spec.snapshot not in self.checked:
            check_snapshot(spec.name, spec.snapshot, bot_files(spec))
            self.checked.add(spec.snapshot)

    async def _block(self, order: tuple[str, ...], snapshot: Snapshot, arena: Executor) -> None:
        number = self.store.next_block()
        specs = {v.id: v.spec for v in snapshot.versions}
        for vid in dict.fromkeys(order):
            if self.settings.sandbox_of(specs[vid]) is SandboxKind.BWRAP:
                try:
                    self._check_snapshot(specs[vid])
                except SnapshotError as exc:
                    raise LeagueError(str(exc)) from None
        self._arena_for(arena, [specs[v] for v in dict.fromkeys(order)])
        games = [block_game(self.config, number, order, r) for r in range(len(order))]
        gate = asyncio.Semaphore(self.concurrency)

        async def one(game: ScheduledGame) -> GameOutcome:
            async with gate:
                # The league retires and quarantines versions itself: no seat of a block is empty.
                job = GameJob.of(game, (False,) * len(game.seats), self.deal_secret)
                return await arena.play(job)

        log.info("league_block_starting", block=number, seats=list(order))
        outcomes = list(await asyncio.gather(*(one(g) for g in games)))
        online = self.store.ratings()
        ratings = self.store.rating.update(outcomes, {v: rating.state for v, rating in online.items()})
        failed = {v: sum(1 for o in outcomes if o.failed(v)) for v in set(order)}
        quarantine = []
        for vid, count in failed.items():
            total = count + (online[vid].failed if vid in online else 0)
            if count and total >= self.config.quarantine_after:
                quarantine.append((vid, f"quarantined after {total} failed games (last: block {number})"))
        await store_patiently(
            lambda: self.store.store_block(
                number, games[0].seed, order, snapshot.commands_seen, outcomes, ratings, failed, quarantine
            ),
            f"block {number}",
            f"hearts league run {self.store.folder}",
            self.emit,
        )
        self.stored += 1
        self.games += len(outcomes)
        with contextlib.suppress(OSError):  # written again after the next block, and at the end
            self.store.publish(self.store.folder)
        log.info("league_block_stored", block=number)
        self.emit(f"block {number} stored: {len(outcomes)} games; {_block_result(outcomes, failed)}")
        for vid, note in quarantine:
            log.warning("league_quarantined", version=vid)
            self.emit(f"{vid}: {note}; `hearts league unretire {vid}` brings it back")


def _empty_outcome(game: ScheduledGame) -> GameOutcome:
    """The stored stand-in of a validation game that could not start (no record)."""
    n = len(game.seats)
    no = (False,) * n
    return GameOutcome(
        game.key, "", game.seats, (0,) * n, (1,) * n, (), 0, (0,) * n, no, no, (True,) * n, (True,) * n, "{}"
    )


def _block_result(outcomes: list[GameOutcome], failed: dict[str, int]) -> str:
    """A block's result in a line: each version's mean place, best first, and failed games."""
    places: dict[str, list[int]] = {}
    for outcome in outcomes:
        for bot, place in zip(outcome.seats, outcome.places, strict=True):
            places.setdefault(bot, []).append(place)
    means = sorted((sum(p) / len(p), bot) for bot, p in places.items())
    line = "mean place " + ", ".join(f"{bot} {mean:.2f}" for mean, bot in means)
    broken = [f"{bot} {count}" for bot, count in sorted(failed.items()) if count]
    return line + (f"; failed games: {', '.join(broken)}" if broken else "")
