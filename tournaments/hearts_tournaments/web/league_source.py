"""The league as a :class:`~hearts_tournaments.web.source.Source`: ``hearts web LEAGUE_DIR``.

The league has a page of its own (:meth:`LeagueSource.league`: the official table, versions,
blocks, validation games). The other pages show the league's stored blocks as a tournament's
games: each block is a deal played in every rotation, so the game list, head-to-head and bot
pages work unchanged.
A block is stored only once all its games are played, so every stored game is released (its
deal has no game still to play). Validation games are not listed (``hearts league games``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hearts_core.record import GameRecord
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.league import profile
from hearts_tournaments.league.commands import list_games
from hearts_tournaments.league.config import LeagueError
from hearts_tournaments.league.play import OFFICIAL_TABLES, block_game
from hearts_tournaments.league.store import LeagueStore, Version
from hearts_tournaments.tournament.results import Standings, compute_standings
from hearts_tournaments.tournament.schedule import Schedule, Seating
from hearts_tournaments.web.source import (
    GameRow,
    GameStatus,
    LogExcerpt,
    LogPolicy,
    NoSuchGame,
    NotATournament,
    log_tail,
    parse_record,
)


class LeagueSource:
    """A source over one league folder (the database opened read-only).

    Raises:
        NotATournament: the folder holds no readable league.
    """

    def __init__(self, folder: Path, logs: LogPolicy = LogPolicy.RELEASED) -> None:
        self.folder = folder
        #: ``never`` when the portal serves the league: an entrant sees only its own logs, logged in.
        self.logs = logs
        try:
            self._store = LeagueStore.open(folder, read_only=True)
        except LeagueError as exc:
            raise NotATournament(str(exc)) from None
        self._cache = -1
        self._version_of = (-1, -1)
        self._league: tuple[int, dict[str, Any]] | None = None
        self._rows: tuple[GameRow, ...] = ()
        self._standings: Standings | None = None
        self._bots: tuple[str, ...] = ()

    def close(self) -> None:
        """Closes the database."""
        self._store.close()

    @property
    def title(self) -> str:
        """The league's name."""
        return self._store.config.name

    def version(self) -> int:
        """Changes whenever a block is stored, a command is given or a version changes status
        (looked at again only when the database has changed: every page asks for it)."""
        changed = self._store.data_version()
        if changed != self._version_of[0]:
            self._version_of = (changed, self._store.state())
        return self._version_of[1]

    def league(self) -> dict[str, Any]:
        """What the league's own page shows: the official table (every version, pinned and
        provisional marks, ranked by strength), the versions and their status, the blocks and
        the validation games, as `hearts league show --all`, `info` and `games` give them."""
        version = self.version()
        if self._league is not None and self._league[0] == version:
            return self._league[1]
        validations = list_games(self._store, status="validation")
        shown = {
            "table": OFFICIAL_TABLES.table(self._store),
            "versions": self._store.versions(),
            "blocks": [(number, seats) for number, _seed, seats, _seen in self._store.block_rows()],
            "validations": validations,
            "config": self._store.config,
            "rating": self._store.rating,
        }
        # The official table is refitted once per state of the league, not once per visitor (and
        # once between these pages and the portal's own, OFFICIAL_TABLES).
        self._league = (version, shown)
        return shown

    def profile(self, name: str) -> dict[str, Any] | None:
        """What the public page of version ``name`` shows of the league (None: no such version):
        its entrant's rank among the active entrants, its ``bot.toml`` description, its online
        rating after each block and its progress to a settled rating. Its decision times and
        the reasons of its faults are its entrant's own page's (the portal's ``/me``)."""
        shown = self.league()
        versions: list[Version] = shown["versions"]
        found = [v for v in versions if v.id == name]
        if not found:
            return None
        version = found[0]
        entrant_of = {v.id: v.entrant for v in versions}
        return {
            "entrant": version.entrant,
            "standing": profile.entrant_standing(shown["table"], entrant_of, version.entrant),
            "description": profile.description(version),
            "p": profile.version_profile(self._store, version, shown["table"], own=False),
        }

    def _refresh(self) -> None:
        version = self._store.block_count()
        if version == self._cache:
            return
        config = self._store.config
        blocks = self._store.block_rows()
        by_block = self._store.block_games()
        bots = tuple(dict.fromkeys(v for _n, _s, seats, _c in blocks for v in seats))
        seatings = []
        games = []
        outcomes: list[GameOutcome] = []
        rows = []
        for number, seed, seats, _seen in blocks:
            order = tuple(seats)
            seatings.append(Seating(number, seed, order))
            for rotation, outcome in enumerate(by_block.get(number, [])):
                game = block_game(config, number, order, rotation)
                games.append(game)
                outcomes.append(outcome)
                rows.append(GameRow(game.key, number, rotation, game.seats, _status(outcome), outcome))
        if len(bots) >= 2:
            schedule = Schedule(bots, config.table_size, True, config.seed, tuple(seatings), tuple(games))
            self._standings = compute_standings(
                name=config.name,
                schedule=schedule,
                outcomes=outcomes,
                target_score=config.target_score,
                quarantine_after=config.quarantine_after,
                balance=schedule.balance().to_json(),
            )
        else:
            self._standings = None
        self._rows = tuple(rows)
        self._bots = bots
        self._cache = version

    def standings(self) -> Standings:
        """The standings of the stored blocks.

        Raises:
            NotATournament: no block is stored yet.
        """
        self._refresh()
        if self._standings is None:
            raise NotATournament(f"{self.folder}: the league has played no block yet")
        return self._standings

    def games(self) -> Sequence[GameRow]:
        """Every stored rated game, block by block."""
        self._refresh()
        return self._rows

    def game(self, key: str) -> GameRow:
        """One stored game."""
        for row in self.games():
            if row.key == key:
                return row
        raise NoSuchGame(f"no game {key!r} in this league")

    def bots(self) -> Sequence[str]:
        """The versions that played a block."""
        self._refresh()
        return self._bots

    def record_text(self, key: str) -> str:
        """The stored record of a game."""
        self.game(key)
        text = self._store.record(key)
        if text is None:
            raise NoSuchGame(f"game {key} is not stored")
        return text

    def record(self, key: str) -> GameRecord:
        """The record of a game, read strictly."""
        return parse_record(key, self.record_text(key))

    def log(self, bot: str, key: str, seat: int) -> LogExcerpt | None:
        """The tail of the bot's log of a game (None under ``LogPolicy.NEVER``)."""
        if self.logs is LogPolicy.NEVER:
            return None
        row = self.game(key)
        return log_tail(self.folder, bot, key, seat, row.seats)


def _status(outcome: GameOutcome) -> GameStatus:
    if any(outcome.failed(bot) for bot in set(outcome.seats)):
        return GameStatus.FAILED
    if any(outcome.faults):
        return GameStatus.FAULTS
    return GameStatus.CLEAN
