"""Where a tournament's or a league's games are played: this machine (``local``) or a Ray
cluster (``ray``).

The runner (:mod:`hearts_tournaments.tournament.runner`, or a league's ``run`` loop,
:mod:`hearts_tournaments.league.play`) decides which game comes next, and it alone writes the
database; an executor only plays the game it is given (a :class:`GameJob`: the game, its seats
left to the referee, its seeds) and returns its
:class:`~hearts_tournaments.arena.outcome.GameOutcome`. Two executors:

- ``local`` (:class:`~hearts_tournaments.arena.local.Arena`, the default; it lives beside the
  code that plays a game): the runner's own referee and sandboxed bot processes. Ray is never
  imported.
- ``ray`` (:class:`RayExecutor`): each game is a Ray task (:func:`play_on_node`). The task runs
  on some node, where it starts an ``Arena`` of its own (a referee on a Unix socket in a
  private folder, the bots in their sandboxes, their logs in a temporary folder), plays the one
  game and returns the outcome and the bots' logs to the driver, which commits the game and
  writes the logs. Bots never cross the network: each talks to the referee of its own node.

The node task serves a tournament and a league alike: besides the job it is given a
:class:`NodeWork`, which makes the arena's settings on the node and names the snapshot folders
the node needs. A tournament's (:class:`hearts_tournaments.tournament.executors.NodeTournament`)
is its config text, parsed again on the node, whose files travel as the Ray job's working
directory; a league's (:class:`hearts_tournaments.league.cluster.NodeLeague`) is its game
settings with the block's versions, whose snapshots travel through Ray's object store
(:mod:`hearts_tournaments.arena.shipping`), put there once per run and checked against their
digests on the node.

Exactly once: Ray retries a task whose worker or node dies (up to ``max_retries`` times) but
never one that raised, and an ``ObjectRef`` yields one value however many attempts ran; the
driver awaits each game's reference once and commits its outcome once (the store refuses a
second game with the same key). A game lost with its node is played again from the start
elsewhere, with the same seeds, so deterministic bots play it the same way. A lost node's bots
do not linger: bwrap runs each with ``--die-with-parent``, so they end with their worker.

Only the game's seeds reach a node, never the tournament's (or league's) deal secret nor its
database; the admin token of the node's referee is drawn on the node.
"""

from __future__ import annotations

import asyncio
import os
import signal
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, Self

from hearts_server.logs import get_logger
from hearts_tournaments.arena.folders import private_folder
from hearts_tournaments.arena.job import GameJob
from hearts_tournaments.arena.local import Arena, ArenaError, Settings
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.arena.sandbox import SandboxError
from hearts_tournaments.arena.shipping import PackedSnapshot, pack, unpack
from hearts_tournaments.arena.snapshot import STORE, SnapshotError

log = get_logger(__name__)

#: Seconds to wait for the Ray head's port to accept a connection.
CONNECT_TIMEOUT_S = 10.0
#: Times Ray plays a game again when its worker or node dies before it ends.
RAY_MAX_RETRIES = 5
#: Object store of a Ray started by the runner: small, the results are a few kilobytes.
RAY_OBJECT_STORE_BYTES = 80 * 1024 * 1024
#: The most of one bot's log a node sends back per game (the log cap applies first).
LOG_RETURN_BYTES = 1024 * 1024
#: How a node's incident lines name its output folder; the driver puts its own in its place.
NODE_LOGS = "<node>"


class ExecutorError(Exception):
    """Games cannot be played where the tournament asks (Ray missing, a node refused): one line."""


class NodeSetupError(Exception):
    """A node cannot make the arena's settings from what it was given (a tournament's config
    that does not read there): one line, which :func:`play_on_node` names the node in."""


class GameExecutor(Protocol):
    """Plays games. Used as an async context manager; :meth:`play` may run many at once."""

    #: Told each line about an entrant that failed in a game (a bot that exited early, one that
    #: stopped answering), for the organiser; None: only logged.
    notify: Callable[[str], None] | None

    @property
    def address(self) -> str:
        """Where the games are played, for messages (a referee's address, a Ray cluster's)."""
        ...

    async def __aenter__(self) -> Self:
        """Gets ready to play (starts the referee, or connects to the cluster)."""

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Stops what it started; on an error, with no grace for the bots."""

    async def play(self, job: GameJob) -> GameOutcome:
        """Plays one game to its end.

        Raises:
            ArenaError: (or ExecutorError) if the game cannot be played.
        """


@dataclass(frozen=True, slots=True)
class NodeResult:
    """What a Ray task sends back: the outcome, the bots' logs, and where it was played.

    Attributes:
        outcome: The finished game.
        logs: ``(path under logs/, content)`` of each bot log the game wrote.
        node_id: The Ray node that played it.
        attempt_pid: The worker process that played it.
        incidents: The lines about entrants' failures the node's arena told (a bot that exited
            early, or stopped answering), its log paths under :data:`NODE_LOGS`.
    """

    outcome: GameOutcome
    logs: tuple[tuple[str, bytes], ...]
    node_id: str
    attempt_pid: int
    incidents: tuple[str, ...] = ()


class NodeWork(Protocol):
    """What a node is given besides the job: how to make the arena's settings there.

    It crosses to the node with every task (pickled): it must hold no secret (the deal
    secret stays with the driver; the job carries the game's seeds).
    """

    def shipped(self) -> tuple[Path, ...]:
        """The snapshot folders, on the driver, that travel with each job (packed once a run)."""
        ...

    def settings_on_node(self, output: Path) -> Settings:
        """The arena's settings on the node.

        Args:
            output: The task's private folder; the shipped snapshots are unpacked in
                ``output/snapshots/DIGEST`` before this is called.

        Raises:
            NodeSetupError, SandboxError, SnapshotError: the node cannot play with them.
        """
        ...


def play_on_node(work: NodeWork, job: GameJob, *shipped: PackedSnapshot) -> NodeResult:
    """Plays one game on this node: a referee and sandboxed bots of its own (a Ray task).

    Args:
        work: The tournament's or the league's settings, as the node makes them.
        job: The game and its seeds.
        shipped: The snapshots ``work`` names (Ray hands the task their values).

    Raises:
        ExecutorError: if this node cannot play it (bad config here, bwrap missing, a shipped
            snapshot that does not match its digest, referee failed); Ray does not retry it.
    """
    # Imported here: this runs on a node (Ray is imported only there and by the Ray executor).
    import grpc
    import ray

    node_id = ray.get_runtime_context().get_node_id()
    try:
        with tempfile.TemporaryDirectory(prefix="hearts-node-") as folder:
            output = Path(folder)
            for packed in shipped:
                unpack(packed, output / STORE)
            config = work.settings_on_node(output)

            incidents: list[str] = []

            async def play() -> GameOutcome:
                async with Arena(config, output) as host:
                    host.notify = lambda line: incidents.append(line.replace(str(output), NODE_LOGS))
                    return await host.play(job)

            outcome = asyncio.run(play())
            logs = _read_logs(output / "logs")
    except (NodeSetupError, SandboxError, SnapshotError, ArenaError) as exc:
        raise ExecutorError(f"node {node_id[:12]}: {exc}") from None
    except grpc.aio.AioRpcError as exc:
        failed = f"{exc.code().name}: {exc.details()}"
        raise ExecutorError(f"node {node_id[:12]}: the referee failed: {failed}") from None
    return NodeResult(
        outcome=outcome, logs=logs, node_id=node_id, attempt_pid=os.getpid(), incidents=tuple(incidents)
    )


def _read_logs(folder: Path) -> tuple[tuple[str, bytes], ...]:
    """The bot logs under ``folder``, each cut to its last :data:`LOG_RETURN_BYTES`."""
    out = []
    for path in sorted(folder.rglob("*.log")):
        data = path.read_bytes()
        out.append((path.relative_to(folder).as_posix(), data[-LOG_RETURN_BYTES:]))
    return tuple(out)


async def _check_reachable(address: str) -> None:
    """Fails fast when nothing listens at the Ray head's ``host:port`` (``ray.init`` would retry
    for minutes).

    Raises:
        ExecutorError: if no connection opens within :data:`CONNECT_TIMEOUT_S`.
    """
    if address == "auto":
        return  # Ray finds the local cluster itself, and says so at once when there is none
    host, _, port = address.rpartition(":")
    try:
        _, writer = await asyncio.wait_for(
            asyncio.open_connection(host.strip("[]"), int(port)), CONNECT_TIMEOUT_S
        )
    except (OSError, TimeoutError) as exc:
        raise ExecutorError(
            f"the Ray head at {address} does not answer ({exc or 'timed out'}): check ray_address, "
            "or start it with `ray start --head`"
        ) from None
    writer.close()


class RayExecutor:
    """The ``ray`` executor: every game a Ray task on some node of the cluster.

    Args:
        work: What each node is given besides the job (:class:`NodeWork`); :attr:`work` may be
            replaced between games (a league does, between blocks).
        output: The driver's output folder (the bots' logs are written there).
        ray_address: The cluster (``host:port`` of the head, ``auto``), or empty to start a
            Ray on this machine with ``concurrency`` CPUs. When Ray is already initialised in
            this process, that connection is used (and left open): its job's runtime
            environment must then give the nodes what ``runtime_env`` would (Ray uploads a
            folder only at ``ray.init``).
        concurrency: Tables at once; sizes a Ray started here.
        runtime_env: The Ray job's runtime environment (a tournament's config folder as its
            working directory; none for a league, whose snapshots travel with the jobs).
    """

    def __init__(
        self,
        work: NodeWork,
        output: Path,
        ray_address: str,
        concurrency: int,
        runtime_env: dict[str, Any] | None = None,
    ) -> None:
        self.work = work
        self.output = output
        self.ray_address = ray_address
        self.concurrency = concurrency
        self.runtime_env = runtime_env or {}
        self.address = f"ray:{ray_address or 'local'}"
        #: Told each line about an entrant's failure a node sends back (:class:`GameExecutor`).
        self.notify: Callable[[str], None] | None = None
        self._ray: Any = None
        self._remote: Any = None
        self._owned = False
        #: The object-store reference of each snapshot folder packed by this run.
        self._packed: dict[Path, Any] = {}

    async def __aenter__(self) -> Self:
        try:
            import ray
        except ImportError:
            raise ExecutorError(
                'executor = "ray" needs Ray on this machine and every node: '
                "pip install 'cancellation-hearts[ray]'"
            ) from None
        self._ray = ray
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {
                "runtime_env": self.runtime_env,
                "logging_level": "WARNING",
                "log_to_driver": False,
                "configure_logging": False,
            }
            if self.ray_address:
                await _check_reachable(self.ray_address)
                kwargs["address"] = self.ray_address
            else:
                # A one-machine Ray: no dashboard, a small object store, one CPU per table (and
                # Ray's own default, token authentication: RAY_AUTH_MODE is read at import, so
                # it is the organiser's to set, not ours).
                kwargs.update(
                    num_cpus=self.concurrency,
                    object_store_memory=RAY_OBJECT_STORE_BYTES,
                    include_dashboard=False,
                )
            # ray.init installs its own SIGTERM handler (exit at once, code 15); the runner's own
            # (cancel the games, keep what is stored, exit 143) is put back.
            on_term = signal.getsignal(signal.SIGTERM)
            try:
                # In this thread, nothing else runs yet: Ray wants the main thread's signals.
                ray.init(**kwargs)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ExecutorError(f"cannot start the Ray job on {self.address}: {exc}") from None
            finally:
                if on_term is not None and threading.current_thread() is threading.main_thread():
                    signal.signal(signal.SIGTERM, on_term)
            self._owned = True
        self._remote = ray.remote(num_cpus=1, max_retries=RAY_MAX_RETRIES)(play_on_node)
        private_folder(self.output / "logs")
        log.info("ray_connected", address=self.address, resources=self._ray.cluster_resources())
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._owned and self._ray is not None:
            self._ray.shutdown()

    async def play(self, job: GameJob) -> GameOutcome:
        """Plays ``job`` as a Ray task and returns its outcome (the driver commits it).

        Raises:
            ExecutorError: if a node could not play it, or it was lost more than
                :data:`RAY_MAX_RETRIES` times.
        """
        ray = self._ray
        key = job.game.key
        work = self.work
        shipped = [await self._ship(folder) for folder in work.shipped()]
        ref = self._remote.remote(work, job, *shipped)
        try:
            result: NodeResult = await ref
        except asyncio.CancelledError:
            # The tournament stops: end the task's worker, and with it the game's bots.
            ray.cancel(ref, force=True)
            raise
        except ray.exceptions.RayTaskError as exc:
            cause = exc.cause
            if isinstance(cause, ExecutorError):
                raise ExecutorError(f"game {key}: {cause}") from None
            raise ExecutorError(f"game {key} failed on a Ray node: {type(cause).__name__}: {cause}") from None
        except ray.exceptions.RayError as exc:
            raise ExecutorError(
                f"game {key} was lost {RAY_MAX_RETRIES + 1} times on Ray nodes: {type(exc).__name__}"
            ) from None
        self._write_logs(result.logs)
        log.info("game_played_on_node", key=key, node=result.node_id[:12], pid=result.attempt_pid)
        for incident in result.incidents:
            # The node's log paths, as the driver wrote them (under its own output folder).
            line = incident.replace(NODE_LOGS, str(self.output))
            log.warning("entrant_failed", line=line, node=result.node_id[:12])
            if self.notify is not None:
                self.notify(line)
        return result.outcome

    async def _ship(self, folder: Path) -> Any:
        """The object-store reference of the snapshot in ``folder``, packed and put once a run.

        Raises:
            ExecutorError: the snapshot cannot be read.
        """
        ref = self._packed.get(folder)
        if ref is None:
            try:
                packed = await asyncio.to_thread(pack, folder)
            except SnapshotError as exc:
                raise ExecutorError(str(exc)) from None
            ref = self._packed[folder] = self._ray.put(packed)
        return ref

    def _write_logs(self, logs: tuple[tuple[str, bytes], ...]) -> None:
        """Writes a node's bot logs under the driver's ``logs/`` (organiser only, like locally)."""
        root = self.output / "logs"
        for relative, data in logs:
            path = root / relative
            if root not in path.parents or ".." in Path(relative).parts:
                continue  # not a path the node should send
            private_folder(path.parent)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            with os.fdopen(fd, "ab") as handle:
                handle.write(data)
