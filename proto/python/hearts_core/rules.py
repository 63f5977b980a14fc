"""The immutable parameters of a game of Cancellation Hearts."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from hearts_core.errors import BadPlayerCount

MIN_PLAYERS = 6
MAX_PLAYERS = 11
DECK_SIZE = 104
HAND_POINTS = 52
MOON_POINTS = 26
#: RULES.md's defaults: the game ends when a total reaches 150, or after 200 hands.
DEFAULT_TARGET_SCORE = 150
DEFAULT_MAX_HANDS = 200


class PassDirection(enum.StrEnum):
    """Where a hand's passed cards go: to the left (seat + 1) or the right (seat - 1)."""

    LEFT = "left"
    RIGHT = "right"

    def target(self, seat: int, players: int) -> int:
        """The seat that receives the cards ``seat`` passes."""
        return (seat + (1 if self is PassDirection.LEFT else -1)) % players

    def source(self, seat: int, players: int) -> int:
        """The seat whose passed cards ``seat`` receives."""
        return (seat - (1 if self is PassDirection.LEFT else -1)) % players

    @staticmethod
    def for_hand(hand_index: int) -> PassDirection:
        """Hand 0 passes left, hand 1 right, then alternating; there is no hold hand."""
        return PassDirection.LEFT if hand_index % 2 == 0 else PassDirection.RIGHT


class MoonChoice(enum.StrEnum):
    """What a player who shot the moon chooses."""

    SELF_MINUS_26 = "self_minus_26"
    OTHERS_PLUS_26 = "others_plus_26"


#: RULES.md: the referee subtracts 26 from the shooter's own score if it does not answer.
DEFAULT_MOON_CHOICE = MoonChoice.SELF_MINUS_26


def moon_shooter(points: Sequence[int]) -> int | None:
    """The seat that took every point of the hand (all 26 hearts and both Black Marias), if any."""
    return next((seat for seat, p in enumerate(points) if p == HAND_POINTS), None)


def hand_scores(points: Sequence[int], choice: MoonChoice | None = None) -> list[int]:
    """What a hand adds to each total (RULES.md, Scoring), given the points each seat took.

    Args:
        points: Per seat, the points collected in the hand.
        choice: The moon shooter's choice; needed exactly when a seat shot the moon.

    Raises:
        ValueError: if a seat shot the moon and ``choice`` is None.
    """
    shooter = moon_shooter(points)
    if shooter is None:
        return list(points)
    if choice is None:
        raise ValueError(f"seat {shooter} shot the moon: its choice is needed to score the hand")
    if choice is MoonChoice.OTHERS_PLUS_26:
        scores = [MOON_POINTS] * len(points)
        scores[shooter] = 0
    else:
        scores = [0] * len(points)
        scores[shooter] = -MOON_POINTS
    return scores


@dataclass(frozen=True, slots=True)
class Rules:
    """The parameters a game is played under.

    Attributes:
        players: Table size, 6 to 11.
        target_score: The game ends when a total reaches or passes this (any positive value).
        max_hands: The game also ends after this many hands.
        first_dealer: The dealer of hand 0; the deal then passes to the left.
    """

    players: int
    target_score: int = DEFAULT_TARGET_SCORE
    max_hands: int = DEFAULT_MAX_HANDS
    first_dealer: int = 0

    def __post_init__(self) -> None:
        if not MIN_PLAYERS <= self.players <= MAX_PLAYERS:
            raise BadPlayerCount(f"a table has {MIN_PLAYERS} to {MAX_PLAYERS} players, not {self.players}")
        if self.target_score <= 0:
            raise ValueError(f"target_score must be positive, not {self.target_score}")
        if self.max_hands <= 0:
            raise ValueError(f"max_hands must be positive, not {self.max_hands}")
        if not 0 <= self.first_dealer < self.players:
            raise ValueError(f"first_dealer must be a seat 0..{self.players - 1}")

    @property
    def hand_size(self) -> int:
        """Cards dealt to each player: ``104 // players``; also the number of tricks."""
        return DECK_SIZE // self.players

    @property
    def kitty_size(self) -> int:
        """Cards left face down: ``104 % players``."""
        return DECK_SIZE % self.players

    def dealer(self, hand_index: int) -> int:
        """The dealer of hand ``hand_index`` (counting from 0)."""
        return (self.first_dealer + hand_index) % self.players
