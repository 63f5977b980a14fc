"""The kit's games: played on the arena exactly as a tournament plays them, and written down.

A :class:`KitTable` is one level's :class:`~hearts_tournaments.arena.local.Arena` (its own
referee on a private Unix socket, the sandbox watchdog, the warm pool when the level reuses its
process) with the competition's sandbox, limits and table policy. Every game it plays seats the
bot under test in one seat and leaves the others to the referee's default rule (released: no
faults, no processes), and is scripted (:mod:`hearts_server.table.script`) by the kit only: the
hands a scenario deals, an answer refused on purpose, a stream closed on purpose, and the
referee's note of every join, reconnection and rejection of the bot's seat. What a check reads
comes back as a :class:`Played` game and, once the level is over, a :class:`ProcessEnd` per bot
process (how it exited, its peak memory, its log).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import secrets
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Self

from hearts_client.stdio_bridge import BridgeStats
from hearts_core.defaults import DEFAULT_POLICY, TablePolicy
from hearts_core.driver import play_through
from hearts_core.errors import HeartsError
from hearts_core.record import DecisionEntry, FaultEntry, GameRecord, RecordFileError
from hearts_core.replay import RecordEnds, record_answers, rules_of
from hearts_core.rules import DEFAULT_TARGET_SCORE
from hearts_core.state import HandResult, State
from hearts_server.table.script import NoteKind, ScriptedHand, ScriptNote, TableScript
from hearts_tournaments.arena.bots import BotSpec, Reuse
from hearts_tournaments.arena.entrants import BotProcess
from hearts_tournaments.arena.failures import EARLY
from hearts_tournaments.arena.job import GameJob, ScheduledGame
from hearts_tournaments.arena.local import PROCESSES_LOG, Arena, ArenaError
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.arena.sandbox import Limits, SandboxKind
from hearts_tournaments.kit.report import CheckResult

#: The most games one level plays on one warm process (more than any level plays).
WARM_GAMES = 100
#: Seconds a bot may take to exit once its table (or session) is done before the kit stops it:
#: a tournament's grace (3 s) is short for a JVM shutting down on a loaded machine, and a bot
#: stopped after it costs nothing but time there; the kit fails only a bot that does not exit.
EXIT_GRACE_S = 10.0
#: The reason a refused legal answer is given (the referee sends it with a rule's code).
REFUSAL_REASON = (
    "hearts bot test refuses this legal answer on purpose, as a referee refuses an illegal one: "
    "answer the request again"
)
#: The reason a stream closed on purpose is given.
CUT_REASON = "hearts bot test closed the stream on purpose, as a lost connection ends it: reconnect"


@dataclass(frozen=True, slots=True)
class Competition:
    """What the bot is tested for: the competition's table and limits.

    Attributes:
        table_size: Seats at its tables (the quick levels' games are played at it).
        policy: The referee's decision limit, time bank, faults and join timeout.
        limits: What the bot's process may use.
        sandbox: How it is isolated.
        target_score: Where its games end (the time bank is judged over such a game).
    """

    table_size: int = 6
    policy: TablePolicy = DEFAULT_POLICY
    limits: Limits = field(default_factory=Limits)
    sandbox: SandboxKind = SandboxKind.BWRAP
    target_score: int = DEFAULT_TARGET_SCORE


@dataclass(frozen=True, slots=True)
class KitSettings:
    """The arena's settings for one level (:class:`hearts_tournaments.arena.local.Settings`)."""

    name: str
    spec: BotSpec
    competition: Competition
    reuse: Reuse
    max_hands: int = 1
    target_score: int = DEFAULT_TARGET_SCORE
    server: str = ""
    restart_after: int = WARM_GAMES

    @property
    def policy(self) -> TablePolicy:
        """The competition's table policy."""
        return self.competition.policy

    @property
    def limits(self) -> Limits:
        """The competition's limits."""
        return self.competition.limits

    def bot(self, name: str) -> BotSpec:
        """The bot under test (the only bot a kit game starts)."""
        assert name == self.spec.name, f"a kit game seats only {self.spec.name!r}, not {name!r}"
        return self.spec

    def sandbox_of(self, spec: BotSpec) -> SandboxKind:
        """The competition's sandbox."""
        return self.competition.sandbox


@dataclass(frozen=True, slots=True)
class Judged:
    """A level's verdicts, and the CPU seconds the bot used for them."""

    checks: list[CheckResult]
    bot_cpu_s: float


@dataclass(frozen=True, slots=True)
class ProcessEnd:
    """How one of the bot's processes ended.

    Attributes:
        pid: Its process id.
        code: Its exit status (negative: killed by that signal).
        lingered: It did not exit by itself once its table (or session) was done: it was
            terminated.
        killed: Why the sandbox's watchdog killed it (memory, CPU, processes), or None.
        peak_mb: The most resident memory its processes used together, as sampled.
        cpu_s: The CPU time they used.
        log: Its log file.
        bridge: For a stdio bot, what its bridge saw.
    """

    pid: int | None
    code: int
    lingered: bool
    killed: str | None
    peak_mb: int | None
    cpu_s: float | None
    log: Path
    bridge: BridgeStats | None


@dataclass
class Played:
    """One kit game as the checks read it.

    Attributes:
        name: The kit's name of the game (``session-2``, ``rules.moon``).
        key: Its key in the arena (names its logs).
        seat: The bot's seat.
        players: The table size.
        outcome: The arena's outcome (None when the referee could not play it: ``error``).
        error: Why the game could not be played, or "".
        notes: The referee's notes about the bot's seat (joins, rejections, refusals, cuts).
        incidents: The arena's lines about the bot's process ending early.
        record: The game's record.
        hands: Its hands as played (replayed from the record).
        dead_before: When the warm process given for this game had ended after the previous
            one (the game was played again on a fresh one): the arena's lines about its end.
    """

    name: str
    key: str
    seat: int
    players: int
    outcome: GameOutcome | None = None
    error: str = ""
    notes: list[ScriptNote] = field(default_factory=list)
    incidents: list[str] = field(default_factory=list)
    record: GameRecord | None = None
    hands: list[HandResult] = field(default_factory=list)
    dead_before: list[str] = field(default_factory=list)

    @property
    def game_id(self) -> str:
        """The referee's id of the game ('' if it was not played)."""
        return self.outcome.game_id if self.outcome is not None else ""

    @property
    def label(self) -> str:
        """The game as a report names it: the kit's name and the referee's id."""
        return f"{self.name} (game {self.game_id})" if self.game_id else self.name

    def decisions(self) -> list[DecisionEntry]:
        """The bot's decisions, in the order they fell due."""
        if self.record is None or self.record.decisions is None:
            return []
        return [d for d in self.record.decisions if d.seat == self.seat]

    def faults(self) -> list[FaultEntry]:
        """The bot's faults."""
        if self.record is None or self.record.faults is None:
            return []
        return [f for f in self.record.faults if f.seat == self.seat]

    @property
    def dead_at_start(self) -> bool:
        """Whether the bot's process was gone before it made a decision of this game."""
        gone = not self.noted(NoteKind.JOINED) or any(EARLY in line for line in self.incidents)
        return gone and not any(d.by_referee is None for d in self.decisions())

    def noted(self, kind: NoteKind) -> list[ScriptNote]:
        """The referee's notes of one kind."""
        return [n for n in self.notes if n.kind is kind]


def hands_of(record: GameRecord) -> list[HandResult]:
    """A record's hands as played (its deals replayed, whatever its seed says)."""
    try:
        state = State(rules_of(record))
        play_through(state, record_answers(state, record.hands))
    except (HeartsError, RecordEnds):
        return []
    return state.results


class KitTable:
    """One level's arena: the competition's sandbox, limits and policy, the bot in one seat.

    Args:
        name: The level (names its games and its folder).
        spec: The bot under test.
        competition: What it is tested for.
        folder: A private folder for the level's records and logs.
        reuse: ``between_deals``: one warm process plays every game of the level, as a
            tournament's does; ``never``: a fresh process per game.
    """

    def __init__(
        self, name: str, spec: BotSpec, competition: Competition, folder: Path, reuse: Reuse
    ) -> None:
        self.name = name
        self.spec = spec
        self.competition = competition
        self.settings = KitSettings(name, spec, competition, reuse)
        self.scripts: dict[str, TableScript] = {}
        # The same deals every run (a report can be reproduced); the bot's seeds are the run's own.
        self.secret = hashlib.sha256(f"hearts bot test/{name}".encode()).digest()
        self.folder = folder
        self.arena = Arena(self.settings, folder, scripts=self.scripts)
        self.arena.on_exit = self._ended
        self.arena.exit_grace_s = EXIT_GRACE_S
        self.arena.notify = self._incident
        #: How each of the bot's processes ended (complete once the level's arena is left).
        self.ends: list[ProcessEnd] = []
        #: The seeds handed to the bot's processes (``HEARTS_SEED``): how their leftovers are found.
        self.seeds: set[str] = set()
        self._games = 0
        self._incidents: list[str] = []

    async def __aenter__(self) -> Self:
        await self.arena.__aenter__()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.arena.__aexit__(kind, error, tb)

    async def play(
        self,
        name: str,
        *,
        players: int,
        seat: int,
        hands: Sequence[ScriptedHand] = (),
        max_hands: int = 1,
        target_score: int = DEFAULT_TARGET_SCORE,
        refuse: frozenset[int] = frozenset(),
        cut: frozenset[int] = frozenset(),
        again: bool = False,
    ) -> Played:
        """Plays one game, the bot in ``seat`` and the referee in every other.

        Args:
            name: The kit's name of the game.
            players: The table size.
            seat: The bot's seat.
            hands: The first hands' deals (the rest from the seed).
            max_hands: Hands the game lasts (unless a total reaches ``target_score`` first).
            target_score: Where the game ends.
            refuse: The bot's decisions (numbered from 1) whose first legal answer is refused.
            cut: The bot's decisions after whose answer its stream is closed.
            again: When the warm process given for this game had already ended (it ended after
                the previous game's last events), play the game again on a fresh process; the
                game says so (:attr:`Played.dead_before`).
        """
        args = (players, seat, tuple(hands), max_hands, target_score, refuse, cut)
        played = await self._play_once(name, *args)
        if again and self._games > 1 and not played.error and played.dead_at_start:
            # The warm process it was given may have ended after its previous game. Played again
            # on a fresh process: if that one plays, the end was the previous game's doing (told
            # there); if it dies too, the game itself killed it.
            replayed = await self._play_once(name, *args, suffix="-again")
            if any(d.by_referee is None for d in replayed.decisions()):
                replayed.dead_before = played.incidents or ["its process had ended before this game"]
            return replayed
        return played

    async def _play_once(
        self,
        name: str,
        players: int,
        seat: int,
        hands: tuple[ScriptedHand, ...],
        max_hands: int,
        target_score: int,
        refuse: frozenset[int],
        cut: frozenset[int],
        suffix: str = "",
    ) -> Played:
        self._games += 1
        number = self._games
        seats = tuple(self.spec.name if s == seat else f"house-{s}" for s in range(players))
        key = re.sub(r"[^A-Za-z0-9-]", "-", name) + suffix
        game = ScheduledGame(number, key, number, 0, f"{self.name}/{name}", seats, seats)
        job = GameJob.of(game, (False,) * players, self.secret)
        # The bot's seed is this run's own: it marks the processes the bot starts (leftovers).
        bot_seeds = tuple(secrets.token_hex(16) for _ in range(players))
        job = dataclasses.replace(job, bot_seeds=bot_seeds, released=tuple(s != seat for s in range(players)))
        self.seeds.add(job.bot_seeds[seat])
        played = Played(name, key, seat, players)
        self.scripts[job.seed] = TableScript(
            hands=hands,
            refuse=frozenset((seat, n) for n in refuse),
            cut=frozenset((seat, n) for n in cut),
            refusal_reason=REFUSAL_REASON,
            cut_reason=CUT_REASON,
            note=lambda note: played.notes.append(note) if note.seat == seat else None,
        )
        self.arena.config = dataclasses.replace(self.settings, max_hands=max_hands, target_score=target_score)
        start = len(self._incidents)
        try:
            played.outcome = await self.arena.play(job)
        except ArenaError as exc:
            played.error = str(exc)
        except OSError as exc:  # the bot's log or scratch folder could not be made
            played.error = f"the bot could not be started: {exc}"
        finally:
            self.scripts.pop(job.seed, None)
        played.incidents = self._incidents[start:]
        if played.outcome is not None:
            with contextlib.suppress(RecordFileError):
                played.record = played.outcome.record()
                played.hands = hands_of(played.record)
        return played

    @property
    def bot_cpu_s(self) -> float:
        """The CPU seconds the bot's processes used, as the sandbox's watchdog sampled them."""
        return round(sum(end.cpu_s or 0.0 for end in self.ends), 2)

    def end_of(self, played: Played) -> ProcessEnd | None:
        """How the process that played ``played`` ended (once the level's arena is left)."""
        pid = None
        with contextlib.suppress(OSError):
            for line in (self.folder / PROCESSES_LOG).read_text(encoding="utf-8").splitlines():
                entry = json.loads(line)
                if entry["key"] == played.key:
                    pid = entry["pid"]
        return next((end for end in self.ends if end.pid == pid), None)

    def _incident(self, line: str) -> None:
        self._incidents.append(line)

    def _ended(self, process: BotProcess, code: int) -> None:
        bridge: BridgeStats | None = None
        task = process.bridge
        if task is not None and task.done() and not task.cancelled() and task.exception() is None:
            result = task.result()
            bridge = result if isinstance(result, BridgeStats) else None
        peak_mb, cpu_s = process.peak or (None, None)
        self.ends.append(
            ProcessEnd(
                process.pid, code, process.lingered, process.killed, peak_mb, cpu_s, process.log_path, bridge
            )
        )


def leftovers(seeds: set[str], settle_s: float = 0.5) -> list[int]:
    """Processes still running with one of ``seeds`` as their ``HEARTS_SEED``: what a bot left
    behind after it exited (its own environment marks every process it started).

    Zombies (already dead, waiting to be reaped) do not count; a process must still be there
    after ``settle_s`` (the kernel ends a sandbox's processes with it, a moment later).
    """
    if not seeds:
        return []
    wanted = {f"HEARTS_SEED={s}".encode() for s in seeds}
    found = _running_with(wanted)
    if found and settle_s > 0:
        time.sleep(settle_s)
        found = [pid for pid in _running_with(wanted) if pid in found]
    return found


def _running_with(wanted: set[bytes]) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                env = set(handle.read().split(b"\0"))
            with open(f"/proc/{name}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != b"Z" and env & wanted:
            found.append(int(name))
    return found


def kill(pids: Sequence[int]) -> None:
    """Kills what a bot left behind."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
