"""The protocol's vocabulary as plain Python values: what a seat answered, why an answer is
rejected, why the referee decided for a seat, and where a table stands.

These are what the referee's table works with; :mod:`hearts_protocol.convert` maps each to and
from its protobuf message or enum (the one place that does). A servicer turns every message a
seat sends into an :class:`Answer` before the table sees it, so the table's decision layer never
handles a protobuf message.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from hearts_core.rules import MoonChoice
from hearts_core.state import DecisionKind


class RejectionCode(enum.StrEnum):
    """Why the referee did not take an answer (``Rejection.code``, and ``REJECTION_CODE_<value>``).

    The rule codes are those of :mod:`hearts_core.errors` (the conformance codes); the others
    are the protocol's own.
    """

    NOT_IN_HAND = "NOT_IN_HAND"
    MUST_FOLLOW_SUIT = "MUST_FOLLOW_SUIT"
    HEARTS_NOT_BROKEN = "HEARTS_NOT_BROKEN"
    FIRST_LEAD_RESTRICTED = "FIRST_LEAD_RESTRICTED"
    BAD_PASS_COUNT = "BAD_PASS_COUNT"
    PASS_NOT_IN_HAND = "PASS_NOT_IN_HAND"
    BAD_MOON_CHOICE = "BAD_MOON_CHOICE"
    #: The message is not a PlayRequest.
    MALFORMED = "MALFORMED"
    #: A card code that is not a card.
    UNKNOWN_CARD = "UNKNOWN_CARD"
    #: An answer of another kind than the request asks for.
    WRONG_ANSWER = "WRONG_ANSWER"
    #: An answer to a request that is not the open one.
    STALE_REQUEST = "STALE_REQUEST"
    #: An answer while no request of the seat is open.
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    #: A message other than a decision after the join.
    UNEXPECTED = "UNEXPECTED"


class FaultKind(enum.StrEnum):
    """Why the referee decided for a seat (``SeatFaulted.kind``; the record's ``faults[].kind``)."""

    TIMEOUT = "timeout"
    DISCONNECTED = "disconnected"
    TIME_BANK_EXHAUSTED = "time_bank_exhausted"
    FLOOD = "flood"


class TableStatus(enum.StrEnum):
    """Where a table stands (``GetTableResponse.status``)."""

    WAITING = "waiting"
    PLAYING = "playing"
    DONE = "done"
    ABORTED = "aborted"


@dataclass(frozen=True, slots=True)
class Answer:
    """A seat's answer to a decision request, as it was sent, not yet checked.

    Nothing here is judged: the table checks the request id, the kind and the cards against the
    open request and the true state, and rejects in that order.

    Attributes:
        request_id: The request it answers.
        kind: What it answers (PASS, PLAY or MOON), or None when it carries no answer at all.
        cards: The card codes given (three for a pass, one for a play), unparsed.
        moon: The moon option chosen, or None when none is (or an unknown one is).
        bot_error: The seat's SDK chose it because the bot failed (``Decision.bot_error``).
    """

    request_id: int
    kind: DecisionKind | None
    cards: tuple[str, ...] = ()
    moon: MoonChoice | None = None
    bot_error: bool = False
