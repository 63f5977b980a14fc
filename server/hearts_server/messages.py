"""The referee's side of the Play stream: every message the table sends, and each seat's feed.

The table (:mod:`hearts_server.table`) builds no protobuf message itself: it calls these with
core values (a View, a DecisionKind, a RejectionCode, a FaultKind, the State of a finished game)
and hands the results, unopened, to the seats' streams and the spectators. The View and event
messages are built by :mod:`hearts_protocol.convert` from a seat's :class:`View` or from public
facts; nothing here is given the State of a game in progress.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from cancellation_hearts.v1 import game_pb2 as pb
from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_core.driver import CardPlayed, Event, HandCompleted, HandStarted, PassesExchanged, TrickCompleted
from hearts_core.record import places_of
from hearts_core.rules import Rules
from hearts_core.state import DecisionKind, State
from hearts_core.view import View
from hearts_protocol import convert as wire
from hearts_protocol.convert import codes, view_pb
from hearts_protocol.values import FaultKind, RejectionCode

if TYPE_CHECKING:
    from hearts_server.table.gamelog import SeatStats

PROTOCOL_VERSION = 1

#: The messages the table passes on without looking inside (what a seat's stream carries, an
#: event, a game's start and its result).
ResponseMessage = rpb.PlayResponse
EventMessage = rpb.Event
StartMessage = pb.GameStarted
ResultMessage = pb.GameCompleted
HandMessage = pb.HandCompleted


def decision_request(
    request_id: int,
    kind: DecisionKind,
    view: View,
    time_left_ms: int,
    time_bank_ms: int,
) -> rpb.PlayResponse:
    """A DecisionRequest carrying the seat's complete View and legal cards."""
    return rpb.PlayResponse(
        decision_request=rpb.DecisionRequest(
            request_id=request_id,
            kind=wire.DECISION_KIND_TO_PB[kind],
            view=view_pb(view),
            legal_cards=codes(view.legal) if kind is DecisionKind.PLAY else [],
            time_left_ms=max(0, time_left_ms),
            time_bank_ms=max(0, time_bank_ms),
        )
    )


def game_started(
    game_id: str,
    rules: Rules,
    bot_names: Sequence[str],
    seed_commitment: str,
    *,
    decision_ms: int,
    time_bank_ms: int,
    max_faults: int,
    game_number: int,
    games_total: int,
) -> pb.GameStarted:
    """The public GameStarted of a game (no seat's own fields: see :func:`started_for`)."""
    return pb.GameStarted(
        game_id=game_id,
        protocol_version=PROTOCOL_VERSION,
        players=rules.players,
        seats=[pb.SeatInfo(seat=i, bot_name=name) for i, name in enumerate(bot_names)],
        target_score=rules.target_score,
        max_hands=rules.max_hands,
        first_dealer=rules.first_dealer,
        seed_commitment=seed_commitment,
        decision_time_ms=decision_ms,
        time_bank_ms=time_bank_ms,
        max_faults=max_faults,
        game_number=game_number,
        games_total=games_total,
    )


def started_for(base: pb.GameStarted, seat: int, bot_seed: str) -> rpb.Event:
    """The GameStarted event one seat is sent: the public one with its seat and bot seed."""
    personal = pb.GameStarted()
    personal.CopyFrom(base)
    personal.your_seat = seat
    personal.bot_seed = bot_seed
    return rpb.Event(game_started=personal)


def started(base: pb.GameStarted) -> rpb.Event:
    """The public GameStarted event (spectators)."""
    return rpb.Event(game_started=base)


def snapshot(view: View, hands: Sequence[pb.HandCompleted]) -> rpb.PlayResponse:
    """What a (re)joining seat is sent mid-game: its View and the game's finished hands."""
    return rpb.PlayResponse(snapshot=rpb.Snapshot(view=view_pb(view), hands=hands))


def game_completed(
    game_id: str, state: State, bot_names: Sequence[str], seats: Sequence[SeatStats], seed: str
) -> pb.GameCompleted:
    """The result of a finished game (``seed``: "" unless the table reveals it)."""
    finish = places_of(state.totals)
    return pb.GameCompleted(
        game_id=game_id,
        totals=state.totals,
        winners=state.winners,
        hands_played=len(state.results),
        results=[
            pb.SeatResult(
                seat=i,
                bot_name=bot_names[i],
                total=state.totals[i],
                place=finish[i],
                faults=stats.faults,
                retired=stats.retired,
                bot_errors=stats.bot_errors,
            )
            for i, stats in enumerate(seats)
        ],
        seed=seed,
    )


def completed(result: pb.GameCompleted) -> rpb.Event:
    """The GameCompleted event of a result."""
    return rpb.Event(game_completed=result)


def alone(event: rpb.Event) -> rpb.PlayResponse:
    """An event as a message of its own (not held in a seat's feed)."""
    return rpb.PlayResponse(event=event)


def seat_faulted(seat: int, kind: FaultKind, detail: str, faults: int, retired: bool) -> rpb.Event:
    """The public SeatFaulted event (``retired``: this fault retired the seat)."""
    return rpb.Event(
        seat_faulted=pb.SeatFaulted(
            seat=seat, kind=wire.FAULT_TO_PB[kind], detail=detail, faults=faults, retired=retired
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


def rejection(request_id: int, code: RejectionCode, reason: str) -> rpb.PlayResponse:
    """A Rejection of the last answer, its code both as the v1 string and as the enum."""
    return rpb.PlayResponse(
        rejection=rpb.Rejection(
            request_id=request_id,
            code=code.value,
            reason=reason,
            rejection_code=wire.REJECTION_TO_PB[code],
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
