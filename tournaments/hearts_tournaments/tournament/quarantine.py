"""Which bots a tournament's failed games put in quarantine.

Quarantine follows the **schedule order**, never the order in which games happen to finish:
whether a bot sits out game ``g`` depends only on its failed games among the games before ``g``
in the schedule (:class:`ScheduleQuarantine`), so a tournament gives the same standings at any
concurrency.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hearts_tournaments.arena.job import ScheduledGame
from hearts_tournaments.arena.outcome import GameOutcome


@dataclass(frozen=True, slots=True)
class Quarantine:
    """A quarantined bot.

    Attributes:
        bot: Its name.
        after_game: The key of the game whose failure put it over the limit.
        failed_games: Its failed games at that point.
    """

    bot: str
    after_game: str
    failed_games: int


class QuarantineTracker:
    """Counts failed games per bot, in the order given, and quarantines at the limit.

    Args:
        limit: Failed games that put a bot in quarantine.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.failures: Counter[str] = Counter()
        self.quarantined: dict[str, Quarantine] = {}

    def add(self, outcome: GameOutcome) -> list[Quarantine]:
        """Counts one finished game; returns the bots it puts in quarantine."""
        new: list[Quarantine] = []
        for bot in dict.fromkeys(outcome.seats):
            if not outcome.failed(bot):
                continue
            self.failures[bot] += 1
            if bot not in self.quarantined and self.failures[bot] >= self.limit:
                self.quarantined[bot] = Quarantine(bot, outcome.key, self.failures[bot])
                new.append(self.quarantined[bot])
        return new


def quarantined(outcomes: Iterable[GameOutcome], limit: int) -> dict[str, Quarantine]:
    """The bots quarantined by a sequence of outcomes, taken in the order given (pass them in
    schedule order: that is the order the runner decides quarantine in)."""
    tracker = QuarantineTracker(limit)
    for outcome in outcomes:
        tracker.add(outcome)
    return tracker.quarantined


class ScheduleQuarantine:
    """Decides quarantine in schedule order, whatever order the games finish in.

    A bot is absent from game ``g`` when at least ``limit`` of its games before ``g`` in the
    schedule failed. While some of those games are still being played the answer may be
    unknown (:meth:`absent` returns None) and the runner waits for them; it is known early
    whenever the unfinished games cannot change it (already ``limit`` failures, or too few
    games left to reach it).

    Args:
        games: The schedule's games.
        limit: Failed games that put a bot in quarantine.
    """

    def __init__(self, games: Sequence[ScheduledGame], limit: int) -> None:
        self.limit = limit
        self._key_of = {g.index: g.key for g in games}
        self._index_of = {g.key: g.index for g in games}
        #: Per bot, the schedule indices of its games, ascending.
        self._games_of: dict[str, list[int]] = {}
        for game in sorted(games, key=lambda g: g.index):
            for bot in dict.fromkeys(game.seats):
                self._games_of.setdefault(bot, []).append(game.index)
        self._failed: dict[int, frozenset[str]] = {}
        #: Per bot: how many of its first games are all stored, and their failures.
        self._settled: Counter[str] = Counter()
        self._settled_failures: Counter[str] = Counter()
        self.quarantined: dict[str, Quarantine] = {}

    def add(self, outcome: GameOutcome) -> list[Quarantine]:
        """Counts one stored game; returns the bots whose quarantine it makes certain."""
        index = self._index_of[outcome.key]
        self._failed[index] = frozenset(b for b in outcome.seats if outcome.failed(b))
        new: list[Quarantine] = []
        for bot in dict.fromkeys(outcome.seats):
            mine = self._games_of[bot]
            while self._settled[bot] < len(mine) and mine[self._settled[bot]] in self._failed:
                at = mine[self._settled[bot]]
                self._settled[bot] += 1
                if bot in self._failed[at]:
                    self._settled_failures[bot] += 1
                    if self._settled_failures[bot] == self.limit and bot not in self.quarantined:
                        self.quarantined[bot] = Quarantine(bot, self._key_of[at], self.limit)
                        new.append(self.quarantined[bot])
        return new

    def absent(self, game: ScheduledGame) -> tuple[bool, ...] | None:
        """Per seat, whether its bot is quarantined for ``game``; None while that depends on
        earlier games of the schedule that are not stored yet."""
        status: dict[str, bool] = {}
        for bot in dict.fromkeys(game.seats):
            mine = self._games_of[bot]
            failures, unknown = self._settled_failures[bot], 0
            for at in mine[self._settled[bot] : bisect.bisect_left(mine, game.index)]:
                if at in self._failed:
                    failures += bot in self._failed[at]
                else:
                    unknown += 1
            if failures >= self.limit:
                status[bot] = True
            elif failures + unknown < self.limit:
                status[bot] = False
            else:
                return None
        return tuple(status[bot] for bot in game.seats)
