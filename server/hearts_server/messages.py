"""The referee's side of the Play stream: decision requests, rejections and each seat's feed.

The View and event messages themselves are built by :mod:`hearts_protocol.convert` from a seat's
:class:`View` or from public facts; nothing here is given the State.
"""

from __future__ import annotations

from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_core.view import View
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


def rejection(request_id: int, code: str, reason: str) -> rpb.PlayResponse:
    """A Rejection of the last answer."""
    return rpb.PlayResponse(rejection=rpb.Rejection(request_id=request_id, code=code, reason=reason))


class SeatFeed:
    """The order and batching of what one seat receives.

    CardPlayed events are held and delivered in one EventBatch, either just before the seat's
    own decision request or together with the next event of any other kind (TrickCompleted at
    the latest); every other event flushes what is held, itself included. The live referee and
    the redacted replays both go through this, so they deliver the same messages.
    """

    def __init__(self) -> None:
        self.held: list[rpb.Event] = []

    def event(self, event: rpb.Event) -> list[rpb.PlayResponse]:
        """Adds an event; returns the messages to send now (possibly none)."""
        self.held.append(event)
        return [] if event.WhichOneof("event") == "card_played" else self.flush()

    def request(self, message: rpb.PlayResponse) -> list[rpb.PlayResponse]:
        """The messages that deliver a decision request: what is held, then the request."""
        return [*self.flush(), message]

    def flush(self) -> list[rpb.PlayResponse]:
        """Everything held, as one message (none if nothing is held)."""
        if not self.held:
            return []
        held, self.held = self.held, []
        if len(held) == 1:
            return [rpb.PlayResponse(event=held[0])]
        return [rpb.PlayResponse(events=rpb.EventBatch(events=held))]
