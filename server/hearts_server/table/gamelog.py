"""What a table writes down while a game is played, and the finished game it makes of it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hearts_core.record import DecisionEntry, FaultEntry, GameRecord, GameResult, HandRecord, places_of
from hearts_core.state import State
from hearts_server.messages import ResultMessage


@dataclass(frozen=True, slots=True)
class SeatStats:
    """How one seat's decisions were made in a game."""

    answered: int
    by_referee: int
    faults: int
    retired: bool
    released: bool
    bot_errors: int = 0


@dataclass(frozen=True, slots=True)
class FinishedGame:
    """A finished game: its result message and where its record is.

    A record written to disk is not kept in memory (``text`` is None): :attr:`record_json`
    reads it back. A table's memory so stays small however many games it plays.

    Attributes:
        record_error: Why the record could not be written ("" when it was): its text is
            then kept here.
    """

    game_id: str
    result: ResultMessage
    text: str | None
    path: Path | None
    seats: tuple[SeatStats, ...]
    record_error: str = ""

    @property
    def record_json(self) -> str:
        """The record as JSON (read from its file when written to disk).

        Raises:
            OSError: if the file cannot be read any more.
        """
        if self.text is not None:
            return self.text
        assert self.path is not None
        return self.path.read_text(encoding="utf-8")


class GameLog:
    """The decisions and faults of the game in progress, in the order they fell due."""

    def __init__(self) -> None:
        self._decisions: list[DecisionEntry | None] = []
        self.faults: list[FaultEntry] = []

    def reserve(self) -> int:
        """A place for a decision that just fell due (filled by :meth:`fill` once it is made)."""
        self._decisions.append(None)
        return len(self._decisions) - 1

    def fill(self, slot: int, entry: DecisionEntry) -> None:
        """Writes the decision of a reserved place."""
        self._decisions[slot] = entry

    def __len__(self) -> int:
        """Decisions fallen due so far (made or still open)."""
        return len(self._decisions)

    def fault(self, entry: FaultEntry) -> None:
        """Adds a fault."""
        self.faults.append(entry)

    @property
    def decisions(self) -> tuple[DecisionEntry, ...]:
        """The decisions made so far (a decision still open is left out)."""
        return tuple(d for d in self._decisions if d is not None)

    def record(
        self,
        state: State,
        *,
        game_id: str,
        table_id: str,
        game_number: int,
        label: str,
        bots: tuple[str, ...],
        seed: str,
        seed_commitment: str,
        decision_ms: int,
        time_bank_ms: int,
        max_faults: int,
        started_at: float,
        finished_at: float,
        seat_faults: tuple[int, ...],
        retired: tuple[int, ...],
        bot_errors: tuple[int, ...] | None = None,
        declared_names: tuple[str, ...] | None = None,
    ) -> GameRecord:
        """The game's record once it is over."""
        rules = state.rules
        return GameRecord(
            record_version=1,
            players=rules.players,
            target_score=rules.target_score,
            max_hands=rules.max_hands,
            hands=tuple(HandRecord.of(h) for h in state.results),
            game_id=game_id,
            table_id=table_id,
            game_number=game_number,
            label=label,
            bots=bots,
            declared_names=declared_names,
            seed=seed,
            seed_commitment=seed_commitment,
            decision_ms=decision_ms,
            time_bank_ms=time_bank_ms,
            max_faults=max_faults,
            started_at=started_at,
            finished_at=finished_at,
            decisions=self.decisions,
            faults=tuple(self.faults),
            result=GameResult(
                totals=tuple(state.totals),
                winners=tuple(state.winners),
                places=places_of(state.totals),
                faults=seat_faults,
                retired=retired,
                bot_errors=bot_errors,
            ),
        )
