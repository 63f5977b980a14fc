"""The outcome of one finished game, as the arena returns it and the stores keep it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hearts_core.record import GameRecord


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
