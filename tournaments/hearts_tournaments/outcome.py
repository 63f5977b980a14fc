"""The outcome of one finished tournament game, and which bots it puts in quarantine.

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
from typing import Any

from hearts_core.record import GameRecord
from hearts_tournaments.schedule import ScheduledGame


@dataclass(frozen=True, slots=True)
class GameOutcome:
    """One finished game as the tournament keeps it.

    Attributes:
        key: The game's key in the schedule.
        game_id: The referee's id of the game.
        seats: The bot at each seat.
        totals: Final totals per seat.
        places: Finishing places per seat (1 = lowest total; tied totals share a place).
        winners: The seats with the lowest total.
        hands: Hands played.
        faults: Faults the referee recorded per seat.
        retired: Per seat: whether it was retired (too many faults, or never connected).
        absent: Per seat: whether the runner did not start the bot (it was quarantined).
        crashed: Per seat: whether the bot's process ended with an error before the game did.
        never_answered: Per seat: whether the seat never made a decision of its own (the bot
            never connected, never answered in time, or every answer was made by its SDK).
        record_json: The referee's game record.
        bot_errors: Per seat: answers the bot's SDK made for it because the bot raised or
            answered nonsense (``Decision.bot_error``); legal and in time, so not faults.
    """

    key: str
    game_id: str
    seats: tuple[str, ...]
    totals: tuple[int, ...]
    places: tuple[int, ...]
    winners: tuple[int, ...]
    hands: int
    faults: tuple[int, ...]
    retired: tuple[bool, ...]
    absent: tuple[bool, ...]
    crashed: tuple[bool, ...]
    never_answered: tuple[bool, ...]
    record_json: str
    bot_errors: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not self.bot_errors:  # none given (or stored before they were counted): none made
            object.__setattr__(self, "bot_errors", (0,) * len(self.seats))

    def bot_errors_at(self, seat: int) -> int:
        """The bot errors of a seat."""
        return self.bot_errors[seat]

    def failed(self, bot: str) -> bool:
        """Whether ``bot`` failed this game: a seat of it was retired, its process crashed, or it
        never made a decision of its own."""
        return any(
            self.retired[s] or self.crashed[s] or self.never_answered[s]
            for s, name in enumerate(self.seats)
            if name == bot
        )

    def summary_json(self) -> dict[str, Any]:
        """Everything but the record, as JSON-ready values."""
        return {
            "key": self.key,
            "game_id": self.game_id,
            "seats": list(self.seats),
            "totals": list(self.totals),
            "places": list(self.places),
            "winners": list(self.winners),
            "hands": self.hands,
            "faults": list(self.faults),
            "retired": list(self.retired),
            "absent": list(self.absent),
            "crashed": list(self.crashed),
            "never_answered": list(self.never_answered),
            "bot_errors": list(self.bot_errors),
        }

    @staticmethod
    def from_json(summary: dict[str, Any], record_json: str) -> GameOutcome:
        """The outcome stored as :meth:`summary_json` plus its record."""
        return GameOutcome(
            key=summary["key"],
            game_id=summary["game_id"],
            seats=tuple(summary["seats"]),
            totals=tuple(summary["totals"]),
            places=tuple(summary["places"]),
            winners=tuple(summary["winners"]),
            hands=summary["hands"],
            faults=tuple(summary["faults"]),
            retired=tuple(summary["retired"]),
            absent=tuple(summary["absent"]),
            crashed=tuple(summary["crashed"]),
            never_answered=tuple(summary["never_answered"]),
            record_json=record_json,
            bot_errors=tuple(summary.get("bot_errors") or ()),
        )

    def record(self) -> GameRecord:
        """The game record, read strictly (:meth:`GameRecord.read`)."""
        return GameRecord.read(self.record_json, name=f"the record of game {self.key}")


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
