"""Public facts of a game: completed tricks and finished hands as everyone sees them.

The State records these as they become public (a trick when it completes, a hand's summary when
it ends), so that building a seat's View does not rebuild the whole history every time.
"""

from __future__ import annotations

from dataclasses import dataclass

from hearts_core.cards import Card


@dataclass(frozen=True, slots=True)
class TrickView:
    """A trick as everyone sees it.

    Attributes:
        leader: The seat that led it.
        cards: Cards in playing order; ``cards[i]`` was played by ``(leader + i) % players``.
        winner: The seat that won it; ``None`` while in progress or when set aside.
        complete: Whether every seat has played to it.
    """

    leader: int
    cards: tuple[Card, ...]
    winner: int | None
    complete: bool

    @property
    def set_aside(self) -> bool:
        """Whether the trick is complete and nobody won it (every card of the led suit cancelled)."""
        return self.complete and self.winner is None

    def seat_of(self, index: int, players: int) -> int:
        """The seat that played ``cards[index]``."""
        return (self.leader + index) % players


@dataclass(frozen=True, slots=True)
class HandSummary:
    """A finished hand as everyone sees it once it has ended.

    Attributes:
        index: The hand's index in the game.
        points: Per seat, hearts plus 13 per Black Maria collected (the kitty included).
        scores: Per seat, what the hand added to the totals.
        moon: The seat that shot the moon, or ``None``.
        kitty: The kitty, revealed.
        kitty_taker: Who collected the kitty, or ``None`` if nobody did.
        uncollected: Cards nobody collected.
    """

    index: int
    points: tuple[int, ...]
    scores: tuple[int, ...]
    moon: int | None
    kitty: tuple[Card, ...]
    kitty_taker: int | None
    uncollected: tuple[Card, ...]
