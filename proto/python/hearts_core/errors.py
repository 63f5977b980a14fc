"""One error type per rule, each carrying its conformance code.

An engine error, a protocol rejection and a replay verdict all use these codes (see
``shared/conformance/README.md``), so a bot author sees the same word everywhere.
"""

from __future__ import annotations

from typing import Any, ClassVar


class HeartsError(Exception):
    """Something the rules forbid. ``code`` is the conformance code.

    Attributes:
        hand: Index of the hand where it happened, when it applies.
        play: Index into that hand's plays, when it applies.
        seat: The seat at fault, when it applies.
    """

    code: ClassVar[str] = "ILLEGAL"

    def __init__(
        self,
        message: str,
        *,
        hand: int | None = None,
        play: int | None = None,
        seat: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hand = hand
        self.play = play
        self.seat = seat

    def to_json(self) -> dict[str, Any]:
        """The conformance ``error`` object: the code plus the fields that apply."""
        out: dict[str, Any] = {"code": self.code}
        for key in ("hand", "play", "seat"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class BadPlayerCount(HeartsError, ValueError):
    """The table size is not 6..11."""

    code = "BAD_PLAYER_COUNT"


class BadRotation(HeartsError):
    """A hand's dealer or pass direction does not follow the rotation."""

    code = "BAD_ROTATION"


class BadDeal(HeartsError):
    """A deal plus kitty is not exactly two decks, or the hand sizes are wrong."""

    code = "BAD_DEAL"


class BadPass(HeartsError):
    """Passes are missing."""

    code = "BAD_PASS"


class BadPassCount(HeartsError):
    """A seat passed a number of cards other than three."""

    code = "BAD_PASS_COUNT"


class PassNotInHand(HeartsError):
    """A seat passed a card it does not hold (or more copies than it holds)."""

    code = "PASS_NOT_IN_HAND"


class NotInHand(HeartsError):
    """A card played is not in the player's hand."""

    code = "NOT_IN_HAND"


class FirstLeadRestricted(HeartsError):
    """The first lead of a hand is a heart or the Black Maria while the leader holds another card."""

    code = "FIRST_LEAD_RESTRICTED"


class HeartsNotBroken(HeartsError):
    """A heart led before hearts are broken while the leader holds a non-heart."""

    code = "HEARTS_NOT_BROKEN"


class MustFollowSuit(HeartsError):
    """A player did not follow the suit led while able to."""

    code = "MUST_FOLLOW_SUIT"


class Incomplete(HeartsError):
    """A hand's plays stop before its last trick ends."""

    code = "INCOMPLETE"


class ExtraPlays(HeartsError):
    """A hand has more plays than its tricks hold."""

    code = "EXTRA_PLAYS"


class BadMoonChoice(HeartsError):
    """A moon choice is neither allowed value when it is needed."""

    code = "BAD_MOON_CHOICE"


class GameAlreadyOver(HeartsError):
    """A hand follows the one that ended the game."""

    code = "GAME_ALREADY_OVER"


class OutOfTurn(HeartsError):
    """An action by a seat that is not to act, or in the wrong phase of the hand.

    Not a replay verdict (a record never names who plays); the referee uses it for live play.
    """

    code = "OUT_OF_TURN"
