"""The outcome of one finished game, as the arena returns it and the stores keep it."""

from __future__ import annotations

from collections.abc import Sequence
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

    @classmethod
    def clean(
        cls,
        key: str,
        seats: Sequence[str],
        totals: Sequence[int],
        *,
        places: Sequence[int] | None = None,
        game_id: str | None = None,
        hands: int = 1,
        record_json: str = "{}",
    ) -> GameOutcome:
        """A game every seat played to the end on its own: no fault, retirement, absence or
        crash (benches and tests that make outcomes without a referee).

        Args:
            key: The game's key (also its id unless ``game_id`` is given).
            seats: The bot at each seat.
            totals: Final totals per seat.
            places: Places per seat; by default from ``totals`` (lowest first, ties share).
            game_id: The referee's id of the game.
            hands: Hands played.
            record_json: Its record.
        """
        n = len(seats)
        if places is None:
            places = tuple(1 + sum(1 for o in totals if o < t) for t in totals)
        no = (False,) * n
        return cls(
            key=key,
            game_id=key if game_id is None else game_id,
            seats=tuple(seats),
            totals=tuple(totals),
            places=tuple(places),
            winners=tuple(s for s in range(n) if places[s] == 1),
            hands=hands,
            faults=(0,) * n,
            retired=no,
            absent=no,
            crashed=no,
            never_answered=no,
            record_json=record_json,
        )

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
