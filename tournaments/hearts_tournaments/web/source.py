"""What the web pages show, and where it comes from: the :class:`Source` interface.

The pages never touch a database: they ask a :class:`Source` for the standings, the games, a
game's record and a bot's log lines. :class:`TournamentSource` answers from one tournament's
folder, opened read-only; a league (a later feature) can be shown by the same pages through
another implementation.

What a source must never give out: the record (hands, passes, kitty) or the bot logs of a game
whose deal still has games to play. With duplicate deals, every rotation deals the same cards,
so a bot that read one rotation's record could know the hands of its own game still to come.
A game is *released* once every game of its deal is stored; :meth:`Source.record` refuses the
others with :class:`Withheld`.
"""

from __future__ import annotations

import enum
import json
import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import structlog

from hearts_core.record import GameRecord, RecordFileError
from hearts_tournaments.arena.local import PROCESSES_LOG
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.results.store import StoreError
from hearts_tournaments.tournament.config import ConfigError, parse_config
from hearts_tournaments.tournament.folder import Tournament, open_tournament
from hearts_tournaments.tournament.results import Standings
from hearts_tournaments.tournament.schedule import Schedule
from hearts_tournaments.tournament.standings_snapshot import (
    Snapshot,
    fingerprint,
    fresh_snapshot,
    load_snapshot,
    snapshot_path,
)
from hearts_tournaments.tournament.store import Store

#: Log lines shown per faulty game on a bot's page (the last ones of the file).
LOG_TAIL = 40
#: While computing the standings took less than this, a page waits for fresh ones.
WAIT_FOR_QUICK_S = 0.25
#: The longest a page waits when it has no standings at all to show.
FIRST_WAIT_S = 0.5

log = structlog.get_logger(__name__)


class LogPolicy(enum.StrEnum):
    """Whose bot logs the pages show: the organiser's choice (``hearts web --logs``)."""

    #: A game's logs once every game of its deal is played, as its record (the default).
    RELEASED = "released"
    #: None: the logs stay in the output folder for the organiser.
    NEVER = "never"


class SourceError(Exception):
    """Base of what a source refuses; each subclass maps to one HTTP status."""

    status = 500


class NotATournament(SourceError):
    """The folder holds no tournament this version reads."""

    status = 404


class NoSuchGame(SourceError):
    """No game of that id is scheduled (or it was not played yet)."""

    status = 404


class NoSuchBot(SourceError):
    """No bot of that name takes part."""

    status = 404


class Withheld(SourceError):
    """The game's deal still has games to play: its record would reveal their cards."""

    status = 403


class StandingsPending(SourceError):
    """The standings of these games are being computed for the first time (the folder holds no
    snapshot of them yet); the page asks the browser to try again shortly."""

    status = 503


class CorruptRecord(SourceError):
    """The stored record does not read as a game record."""

    status = 500


class GameStatus(enum.StrEnum):
    """Where a scheduled game stands, as the game list filters it."""

    PENDING = "pending"  # not played yet
    WITHHELD = "withheld"  # played, but its deal has games still to play
    CLEAN = "clean"  # played, released, no faults
    FAULTS = "faults"  # played, released, with faults but no failure
    FAILED = "failed"  # played, released, some bot failed it (retired, crashed, never answered)


@dataclass(frozen=True, slots=True)
class GameRow:
    """One scheduled game, as the lists show it.

    Attributes:
        key: The game's id (its schedule key, ``d003-r02``).
        deal: Its deal number.
        rotation: Its seat rotation.
        seats: The bot at each seat.
        status: Where it stands.
        outcome: Its outcome (without record) once played.
    """

    key: str
    deal: int
    rotation: int
    seats: tuple[str, ...]
    status: GameStatus
    outcome: GameOutcome | None

    @property
    def released(self) -> bool:
        """Whether its record may be shown."""
        return self.status not in (GameStatus.PENDING, GameStatus.WITHHELD)

    @property
    def result(self) -> GameOutcome | None:
        """Its outcome where the pages show it game by game: once released. A withheld game's
        per-seat totals say which seat positions of the deal were good ones; they count in the
        standings only, as in ``hearts tournament report``."""
        return self.outcome if self.released else None


@dataclass(frozen=True, slots=True)
class LogExcerpt:
    """The last lines of one seat's bot log."""

    path: str
    lines: tuple[str, ...]
    truncated: bool


class Source(Protocol):
    """What the pages read. Every method answers from the data as it is now."""

    @property
    def title(self) -> str:
        """The name shown in every page's heading."""
        ...

    def version(self) -> int:
        """A number that changes whenever a game is added (the live pages poll it)."""
        ...

    def standings(self) -> Standings:
        """The standings, exactly as ``hearts tournament report`` computes them."""
        ...

    def games(self) -> Sequence[GameRow]:
        """Every scheduled game, in schedule order."""
        ...

    def game(self, key: str) -> GameRow:
        """One game. Raises :class:`NoSuchGame`."""
        ...

    def bots(self) -> Sequence[str]:
        """The bots taking part."""
        ...

    def record(self, key: str) -> GameRecord:
        """A released game's record. Raises NoSuchGame, Withheld or CorruptRecord."""
        ...

    def record_text(self, key: str) -> str:
        """The same record as stored (for download). Same errors as :meth:`record`."""
        ...

    def log(self, bot: str, key: str, seat: int) -> LogExcerpt | None:
        """The tail of a released game's bot log, or None if there is none."""
        ...


class TournamentSource:
    """A :class:`Source` over one tournament folder, opened read-only.

    The game list is cached until a game is added. The standings come from the folder's
    snapshot (:mod:`hearts_tournaments.tournament.standings_snapshot`, kept fresh by the runner
    while it plays)
    when it is of the games stored; else they are computed in a thread of this process with
    its own read-only connection, and kept in memory (the web writes nothing in the folder).
    A page waits for that computation only while it is quick (the last one took under
    :data:`WAIT_FOR_QUICK_S`) or when nothing at all can be shown yet, and then at most
    :data:`FIRST_WAIT_S`; otherwise it shows the last standings (of fewer games: the page
    says so) and the event stream announces the fresh ones.

    Args:
        folder: The tournament's output folder.
        logs: Whose bot logs are shown (default: a game's, once its deal is complete).
        live: Serve live pages (as above); else (a static export) every call waits for the
            standings of the games stored.

    Raises:
        NotATournament: if the folder holds no readable tournament.
    """

    def __init__(self, folder: Path, logs: LogPolicy = LogPolicy.RELEASED, *, live: bool = True) -> None:
        self.folder = folder
        #: Whose bot logs are shown.
        self.logs = logs
        self.live = live
        try:
            self._store = Store.open(folder, read_only=True)
            config = parse_config(
                self._store.config_text, self._store.base_dir, default_name=self._store.meta("name")
            )
            self._schedule: Schedule = self._store.schedule()
        except StoreError as exc:
            raise NotATournament(str(exc)) from None
        except ConfigError as exc:
            raise NotATournament(f"{folder}: the stored configuration no longer reads: {exc}") from None
        except (KeyError, TypeError, ValueError) as exc:
            raise NotATournament(f"{folder}: the stored schedule does not read: {exc}") from None
        self._tournament = Tournament(config, self._store, folder)
        self._deal_keys: dict[int, set[str]] = defaultdict(set)
        for game in self._schedule.games:
            self._deal_keys[game.deal].add(game.key)
        self._cache_version = -1
        self._count_of = (-1, -1)
        self._rows: tuple[GameRow, ...] = ()
        self._fingerprint_of = (-1, "")
        self._snapshot_key: tuple[int, int, int] | None = None
        self._kept: Snapshot | None = None
        self._computed: Snapshot | None = None
        self._computing: threading.Thread | None = None
        self._done = threading.Event()
        self._last_took: float | None = None
        self._generation = 0
        self._lock = threading.Lock()

    def close(self) -> None:
        """Closes the database."""
        self._store.close()

    @property
    def title(self) -> str:
        """The tournament's name."""
        return self._tournament.config.name

    def version(self) -> int:
        """How many games are stored (games are only ever added; counted again only when the
        database has changed: every page asks for it)."""
        changed = self._store.data_version()
        if changed != self._count_of[0]:
            self._count_of = (changed, self._store.count())
        return self._count_of[1]

    def standings_generation(self) -> int:
        """A number that changes whenever fresher standings can be shown (the event stream
        sends it along with the game count)."""
        self._kept_snapshot()
        return self._generation

    def _fingerprint(self) -> str:
        count = self._store.count()
        if self._fingerprint_of[0] != count:
            self._fingerprint_of = (count, fingerprint(self._store))
        return self._fingerprint_of[1]

    def _kept_snapshot(self) -> Snapshot | None:
        """The snapshot in the folder (read again only when the file changed)."""
        try:
            st = snapshot_path(self.folder).stat()
        except OSError:
            return self._kept
        key = (st.st_ino, st.st_mtime_ns, st.st_size)
        if key != self._snapshot_key:
            self._snapshot_key = key
            kept = load_snapshot(self.folder)
            if kept is not None:
                self._kept = kept
                self._generation += 1
        return self._kept

    def _compute(self) -> None:
        """Computes the standings with a connection of this thread's own, and keeps them."""
        started = time.monotonic()
        try:
            tournament = open_tournament(self.folder, read_only=True)
            with tournament.store:
                snapshot = fresh_snapshot(tournament)
        except Exception as exc:  # the page says so; the thread must not die silently
            log.error("web_standings_failed", folder=str(self.folder), error=repr(exc))
            with self._lock:
                self._computing = None
                self._done.set()
            return
        with self._lock:
            self._computed = snapshot
            self._last_took = time.monotonic() - started
            self._generation += 1
            self._computing = None
            self._done.set()

    def _start_computing(self) -> threading.Event:
        with self._lock:
            if self._computing is None:
                self._done = threading.Event()
                self._computing = threading.Thread(target=self._compute, name="web-standings", daemon=True)
                self._computing.start()
            return self._done

    def _refresh(self) -> None:
        version = self.version()
        if version == self._cache_version:
            return
        outcomes = self._store.outcomes(records=False)
        by_key = {o.key: o for o in outcomes}
        done = set(by_key)
        rows = []
        for game in self._schedule.games:
            outcome = by_key.get(game.key)
            rows.append(
                GameRow(
                    game.key,
                    game.deal,
                    game.rotation,
                    game.seats,
                    _status(outcome, self._deal_keys[game.deal] <= done),
                    outcome,
                )
            )
        self._rows = tuple(rows)
        self._cache_version = version

    def standings(self) -> Standings:
        """The standings of the stored games, or the last ones while those are computed.

        Raises:
            StandingsPending: when no standings at all can be shown yet.
        """
        current = self._fingerprint()
        kept = self._kept_snapshot()
        if kept is not None and kept.fingerprint == current:
            return kept.standings
        computed = self._computed
        if computed is not None and computed.fingerprint == current:
            return computed.standings
        last = max((s for s in (kept, computed) if s is not None), key=_games_of, default=None)
        took = self._last_took if self._last_took is not None else kept.seconds if kept else None
        quick = took is not None and took < WAIT_FOR_QUICK_S
        ours = computed is not None and kept is not None and computed.fingerprint == kept.fingerprint
        if (
            not quick
            and last is kept
            and kept is not None
            and not ours
            and kept.refreshed_elsewhere(time.time())
        ):
            return kept.standings  # a runner keeps it fresh: its next snapshot will be announced
        done = self._start_computing()
        if not self.live:
            done.wait()
            if self._computed is None:
                raise SourceError("the standings could not be computed; the server log has the details")
            return self._computed.standings
        if last is None or quick:
            done.wait(FIRST_WAIT_S if last is None else 2 * WAIT_FOR_QUICK_S)
            computed = self._computed
            if computed is not None and (computed.fingerprint == current or last is None):
                return computed.standings
        if last is None:
            raise StandingsPending(
                f"the standings of {self._fingerprint_of[0]} games are being computed (the first time "
                "for this folder); this page reloads when they are ready"
            )
        return last.standings

    def games(self) -> Sequence[GameRow]:
        """Every scheduled game, in schedule order."""
        self._refresh()
        return self._rows

    def game(self, key: str) -> GameRow:
        """One scheduled game."""
        for row in self.games():
            if row.key == key:
                return row
        raise NoSuchGame(f"no game {key!r} in this tournament")

    def bots(self) -> Sequence[str]:
        """The bots, in the configuration's order."""
        return self._schedule.bots

    def _released(self, key: str) -> GameRow:
        row = self.game(key)
        if row.status is GameStatus.PENDING:
            raise NoSuchGame(f"game {key} has not been played yet")
        if row.status is GameStatus.WITHHELD:
            raise Withheld(
                f"game {key} is withheld until every game of deal {row.deal} is played: "
                "its cards are the cards of those games too"
            )
        return row

    def record_text(self, key: str) -> str:
        """The stored record text of a released game."""
        self._released(key)
        text = self._store.record(key)
        if text is None:  # cannot happen for a released game; the store only grows
            raise NoSuchGame(f"game {key} is not stored")
        return text

    def record(self, key: str) -> GameRecord:
        """The record of a released game, read strictly."""
        return parse_record(key, self.record_text(key))

    def log(self, bot: str, key: str, seat: int) -> LogExcerpt | None:
        """The last :data:`LOG_TAIL` lines of the bot's log of a released game."""
        row = self._released(key)
        if self.logs is LogPolicy.NEVER:
            return None
        game_id = row.outcome.game_id if row.outcome is not None else ""
        return log_tail(self.folder, bot, key, seat, row.seats, game_id)


def parse_record(key: str, text: str) -> GameRecord:
    """A stored record's text as a game record (:meth:`GameRecord.read`, strict).

    Raises:
        CorruptRecord: if it is not a valid game record, naming the field and why.
    """
    try:
        return GameRecord.read(text, name=f"the record of game {key}")
    except RecordFileError as exc:
        raise CorruptRecord(str(exc)) from None


def log_tail(
    folder: Path, bot: str, key: str, seat: int, seats: Sequence[str], game_id: str = ""
) -> LogExcerpt | None:
    """The last :data:`LOG_TAIL` lines of ``bot``'s log of game ``key`` (None unless it sat at
    ``seat``, or when there is no log).

    A process of its own has the log ``KEY-sSEAT.log``. A warm bot's process (the default reuse)
    plays several games into one log, ``warm-SERIAL-FIRSTKEY.log``, found through the runner's
    ``processes.jsonl``; of it, the lines of this game are shown: from the SDK's
    ``game_started`` line naming ``game_id`` to the next game's (from the top for the process's
    first game, whose start-up lines belong to it), or the whole log when no line names a game.
    """
    if not 0 <= seat < len(seats) or seats[seat] != bot:
        return None
    path = folder / "logs" / bot / f"{key}-s{seat}.log"
    if not path.is_file():
        warm = _warm_log(folder, bot, key, seat)
        if warm is None:
            return None
        path = warm
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    if path.name.startswith("warm-") and game_id:
        lines = _lines_of_game(lines, game_id)
    return LogExcerpt(str(path.relative_to(folder)), tuple(lines[-LOG_TAIL:]), len(lines) > LOG_TAIL)


def _games_of(snapshot: Snapshot) -> int:
    return snapshot.standings.games_played


def _warm_log(folder: Path, bot: str, key: str, seat: int) -> Path | None:
    """The warm process's log that played ``seat`` of game ``key`` (from ``processes.jsonl``)."""
    try:
        text = (folder / PROCESSES_LOG).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("key") == key and entry.get("seat") == seat and isinstance(entry.get("serial"), int):
            found = sorted((folder / "logs" / bot).glob(f"warm-{entry['serial']:04d}-*.log"))
            return found[0] if found else None
    return None


def _lines_of_game(lines: list[str], game_id: str) -> list[str]:
    starts = [i for i, line in enumerate(lines) if "game_started" in line and "game_id=" in line]
    mine = [i for i in starts if f"game_id='{game_id}'" in lines[i] or f'game_id="{game_id}"' in lines[i]]
    if not mine:
        return lines
    begin = 0 if mine[0] == starts[0] else mine[0]
    after = [i for i in starts if i > mine[0]]
    return lines[begin : after[0] if after else len(lines)]


def _status(outcome: GameOutcome | None, deal_done: bool) -> GameStatus:
    if outcome is None:
        return GameStatus.PENDING
    if not deal_done:
        return GameStatus.WITHHELD
    if any(outcome.failed(bot) for bot in set(outcome.seats)):
        return GameStatus.FAILED
    if any(outcome.faults):
        return GameStatus.FAULTS
    return GameStatus.CLEAN


__all__ = [
    "CorruptRecord",
    "GameRow",
    "GameStatus",
    "LogExcerpt",
    "LogPolicy",
    "NoSuchBot",
    "NoSuchGame",
    "NotATournament",
    "Source",
    "SourceError",
    "StandingsPending",
    "TournamentSource",
    "Withheld",
]
