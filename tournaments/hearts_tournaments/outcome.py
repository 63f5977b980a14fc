"""The outcome of one finished tournament game, and which bots it puts in quarantine."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


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
        never_answered: Per seat: whether the referee made every decision of the seat (the bot
            never connected, or never answered in time).
        record_json: The referee's game record.
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
        )

    def record(self) -> dict[str, Any]:
        """The game record, parsed."""
        data: dict[str, Any] = json.loads(self.record_json)
        return data


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
    """Counts failed games per bot, in the order games finish, and quarantines at the limit.

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
    """The bots quarantined by a sequence of outcomes, taken in the order they finished."""
    tracker = QuarantineTracker(limit)
    for outcome in outcomes:
        tracker.add(outcome)
    return tracker.quarantined
