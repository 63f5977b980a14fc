"""How a table plays (:class:`TableSettings`), its defaults, and where it stands (:class:`TableStatus`)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from hearts_core.deal import derive_seed
from hearts_core.rules import Rules

#: Limit for any single decision.
DEFAULT_DECISION_MS = 1000
#: Total thinking time per seat per game.
DEFAULT_TIME_BANK_MS = 60_000
#: Faults that retire a seat for the rest of a game.
DEFAULT_MAX_FAULTS = 5
#: How long a table waits for every seat to join before it starts anyway (the seats that never
#: joined are played by the referee). One minute leaves a bot process time to start even on a
#: loaded machine (a JVM takes seconds); the tournament runner releases seats it knows are empty.
DEFAULT_JOIN_TIMEOUT_MS = 60_000


class TableStatus(enum.StrEnum):
    """Where a table stands."""

    WAITING = "waiting"
    PLAYING = "playing"
    DONE = "done"
    ABORTED = "aborted"


@dataclass(frozen=True, slots=True)
class TableSettings:
    """How a table plays.

    Attributes:
        rules: The rules of every game.
        bot_names: The name shown for each seat.
        games: Games played in a row.
        seed: The first game's deal seed; game ``k`` > 0 uses ``derive_seed(seed, k)``.
        decision_ms: Limit for any single decision.
        time_bank_ms: Total thinking time per seat per game.
        max_faults: Faults that retire a seat for the rest of a game.
        join_timeout_ms: How long to wait for every seat before starting anyway.
        label: Free text stored in the records (e.g. a tournament's game key).
    """

    rules: Rules
    bot_names: tuple[str, ...]
    games: int = 1
    seed: str = ""
    decision_ms: int = DEFAULT_DECISION_MS
    time_bank_ms: int = DEFAULT_TIME_BANK_MS
    max_faults: int = DEFAULT_MAX_FAULTS
    join_timeout_ms: int = DEFAULT_JOIN_TIMEOUT_MS
    label: str = ""

    def __post_init__(self) -> None:
        if len(self.bot_names) != self.rules.players:
            raise ValueError(f"{self.rules.players} bot names needed, {len(self.bot_names)} given")
        if self.games < 1:
            raise ValueError("a table plays at least one game")
        if self.decision_ms < 1 or self.time_bank_ms < 0 or self.max_faults < 1:
            raise ValueError("decision_ms and max_faults must be positive, time_bank_ms not negative")

    def game_seed(self, game_number: int) -> str:
        """The deal seed of game ``game_number`` of the table."""
        return self.seed if game_number == 0 else derive_seed(self.seed, "game", game_number)
