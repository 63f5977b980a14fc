"""The referee's side of the Play stream: decision requests, rejections and each seat's feed.

The View and event messages themselves are built by :mod:`hearts_protocol.convert` from a seat's
:class:`View` or from public facts; nothing here is given the State.
"""

from __future__ import annotations

from collections.abc import Callable

from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_core.driver import CardPlayed, Event, HandCompleted, HandStarted, PassesExchanged, TrickCompleted
from hearts_core.rules import Rules
from hearts_core.view import View
from hearts_protocol import convert as wire
from hearts_protocol.convert import codes, view_pb

PROTOCOL_VERSION = 1


def decision_request(
    request_id: int,
    kind: rpb.DecisionKind.ValueType,
    view: View,
    time_left_ms: int,
    time_bank_ms: int,
) -> rpb.PlayResponse:
    """A DecisionRequest carrying the seat's complete View and legal cards."""
    return rpb.PlayResponse(
        decision_request=rpb.DecisionRequest(
            request_id=request_id,
            kind=kind,
            view=view_pb(view),
            legal_cards=codes(view.legal) if kind == rpb.DECISION_KIND_PLAY else [],
            time_left_ms=max(0, time_left_ms),
            time_bank_ms=max(0, time_bank_ms),
        )
    )


#: An event's messages: the public one (for spectators, and for every seat unless the second
#: part is given) and, when seats get different messages, one per seat.
Outgoing = tuple[rpb.Event | None, Callable[[int], rpb.Event] | None]


def event_messages(
    event: Event, view_of: Callable[[int], View], rules: Rules, by_referee: bool = False
) -> Outgoing:
    """The messages one of the driver's events makes, as the live referee and redacted replays send them.

    Args:
        event: The event.
        view_of: The View of a seat now (the only source of anything private).
        rules: The game's rules.
        by_referee: For a CardPlayed, whether the referee chose the card.
    """
    if isinstance(event, CardPlayed):
        played = wire.card_played(event.hand_index, event.trick_index, event.seat, event.card, by_referee)
        return rpb.Event(card_played=played), None
    if isinstance(event, TrickCompleted):
        # A completed trick is public: who played what and who won it.
        trick = wire.trick_completed(event.hand_index, event.trick_index, event.trick, rules.players)
        return rpb.Event(trick_completed=trick), None
    if isinstance(event, HandStarted):
        return (
            rpb.Event(hand_started=wire.public_hand_started(rules, event.hand_index)),
            lambda s: rpb.Event(hand_started=wire.hand_started(view_of(s))),
        )
    if isinstance(event, PassesExchanged):
        return None, lambda s: rpb.Event(cards_received=wire.cards_received(view_of(s)))
    if isinstance(event, HandCompleted):
        result = event.result
        return rpb.Event(
            hand_completed=wire.hand_completed(result.summary, event.totals, result.moon_choice)
        ), None
    return None, None  # GameOver: the referee announces GameCompleted once the record is safe


def rejection(request_id: int, code: str, reason: str) -> rpb.PlayResponse:
    """A Rejection of the last answer, its code both as the v1 string and as the enum."""
    return rpb.PlayResponse(
        rejection=rpb.Rejection(
            request_id=request_id,
            code=code,
            reason=reason,
            rejection_code=rpb.RejectionCode.Value(f"REJECTION_CODE_{code}"),
        )
    )


#: Events a seat is sent with its next message rather than at once: nothing it must act on.
HELD_EVENTS = frozenset({"card_played", "trick_completed", "hand_completed"})
#: Also held for a seat whose Join set ``events_in_request``: both are in the View of its next
#: request (the pass request, the hand's first play request), which then carries them.
HELD_INLINE = HELD_EVENTS | {"hand_started", "cards_received"}
#: Held events past which a seat is sent them at once all the same (a seat that is never asked,
#: released or retired, would otherwise collect a whole game's).
MAX_HELD = 512


class SeatFeed:
    """The order and batching of what one seat receives.

    CardPlayed, TrickCompleted and HandCompleted events are held and delivered in one EventBatch,
    either just before the seat's own decision request or together with the next event of any
    other kind (the next HandStarted, a SeatFaulted, GameCompleted at the latest); every other
    event flushes what is held, itself included. So a trick costs each seat one batch before its
    request rather than a message per trick to every seat. A seat whose Join set
    ``events_in_request`` gets what is held inside the request itself
    (``DecisionRequest.events``), HandStarted and CardsReceived being held too: one message per
    decision. The live referee and the redacted replays both go through this, so they deliver
    the same messages.
    """

    def __init__(self) -> None:
        self.held: list[rpb.Event] = []

    def event(
        self, event: rpb.Event, inline: bool = False, kind: str | None = None
    ) -> list[rpb.PlayResponse]:
        """Adds an event; returns the messages to send now (possibly none).

        ``inline``: the seat's stream takes held events inside its requests (HELD_INLINE).
        ``kind``: the event's ``WhichOneof("event")``, when the caller knows it already.
        """
        held = self.held
        held.append(event)
        if kind is None:
            kind = event.WhichOneof("event")
        if kind in (HELD_INLINE if inline else HELD_EVENTS) and len(held) < MAX_HELD:
            return []
        return self.flush()

    def request(self, message: rpb.PlayResponse, inline: bool = False) -> list[rpb.PlayResponse]:
        """The messages that deliver a decision request: what is held, then the request.

        With ``inline`` (the seat joined with ``events_in_request``) what is held goes inside the
        request (``DecisionRequest.events``) and the request is the one message.
        """
        if inline:
            if self.held:
                held, self.held = self.held, []
                message.decision_request.events.extend(held)
            return [message]
        return [*self.flush(), message]

    def flush(self) -> list[rpb.PlayResponse]:
        """Everything held, as one message (none if nothing is held)."""
        if not self.held:
            return []
        held, self.held = self.held, []
        if len(held) == 1:
            return [rpb.PlayResponse(event=held[0])]
        return [rpb.PlayResponse(events=rpb.EventBatch(events=held))]
