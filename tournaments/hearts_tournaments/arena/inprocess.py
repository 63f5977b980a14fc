"""``hearts play``: one game in this process between built-in bots (no referee, no sandbox).

The bots are the SDK's own (:func:`hearts_client.bots.make_bot`), each seeded from the deal seed
and its seat, so the same seed and bots give the same game.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hearts_core.state import State


class PlayError(Exception):
    """The game cannot start: no bots, an unknown bot, a table size or target out of bounds."""


@dataclass(frozen=True, slots=True)
class PlayedGame:
    """A finished in-process game.

    Attributes:
        state: The game's final state (every hand's deals, tricks and scores).
        seats: The built-in bot at each seat.
        seed: The deal seed.
    """

    state: State
    seats: tuple[str, ...]
    seed: str


def play_builtin(bots: Sequence[str], *, players: int, seed: str, target_score: int) -> PlayedGame:
    """Plays one game between built-in bots.

    Args:
        bots: Built-in bot names, one per seat; a shorter list is repeated to fill the table.
        players: The table size.
        seed: The deal seed; seat K's bot gets ``SEED/K`` for its own random choices.
        target_score: The game ends when a total reaches it.

    Raises:
        PlayError: No bot names, an unknown bot, or rules out of bounds.
    """
    from hearts_client.bots import make_bot
    from hearts_core.errors import HeartsError
    from hearts_core.local import play_game
    from hearts_core.rules import Rules

    if not bots:
        raise PlayError("--bots needs at least one bot name")
    try:
        rules = Rules(players=players, target_score=target_score)
        seats = tuple(bots[i % len(bots)] for i in range(players))
        entrants = [make_bot(name, f"{seed}/{i}") for i, name in enumerate(seats)]
    except (HeartsError, ValueError) as exc:
        raise PlayError(str(exc)) from None
    return PlayedGame(play_game(rules, seed, entrants), seats, seed)


def write_record(path: Path, game: PlayedGame) -> None:
    """Writes the game's record (its seed revealed, with the commitment) to ``path``, durably."""
    from hearts_core.deal import seed_commitment
    from hearts_core.record import RECORD_VERSION, GameRecord, HandRecord, write_text_durably

    rules = game.state.rules
    written = GameRecord(
        record_version=RECORD_VERSION,
        players=rules.players,
        target_score=rules.target_score,
        max_hands=rules.max_hands,
        hands=tuple(HandRecord.of(h) for h in game.state.results),
        bots=tuple(game.seats),
        seed=game.seed,
        seed_commitment=seed_commitment(game.seed),
    )
    write_text_durably(path, written.to_text())
