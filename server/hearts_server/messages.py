"""Building the protocol messages a seat or a spectator receives.

Every message to a seat is built here from that seat's :class:`View` or from public facts
(a card played, a finished hand); none of these functions is given the State. The leak test
(tests/test_leak.py) drives them with states that differ only in what a seat cannot see and
requires byte-identical output.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from cancellation_hearts.v1 import game_pb2 as pb
from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_server.cards import Card
from hearts_server.rules import MoonChoice, PassDirection
from hearts_server.state import Phase
from hearts_server.view import HandSummary, TrickView, View

PROTOCOL_VERSION = 1

_DIRECTIONS = {
    PassDirection.LEFT: pb.PASS_DIRECTION_LEFT,
    PassDirection.RIGHT: pb.PASS_DIRECTION_RIGHT,
}
_PHASES = {
    Phase.DEALING: pb.PHASE_DEALING,
    Phase.PASSING: pb.PHASE_PASSING,
    Phase.PLAYING: pb.PHASE_PLAYING,
    Phase.MOON_CHOICE: pb.PHASE_MOON_CHOICE,
    Phase.GAME_OVER: pb.PHASE_GAME_OVER,
}
MOON_TO_PB = {
    MoonChoice.SELF_MINUS_26: pb.MOON_CHOICE_SELF_MINUS_26,
    MoonChoice.OTHERS_PLUS_26: pb.MOON_CHOICE_OTHERS_PLUS_26,
}
MOON_FROM_PB = {v: k for k, v in MOON_TO_PB.items()}


def codes(cards: Sequence[Card]) -> list[str]:
    """Card codes, in the given order."""
    return [str(c) for c in cards]


def trick_pb(trick: TrickView, players: int) -> pb.Trick:
    """A trick with its seats, cancellations and result."""
    if trick.complete:
        return pb.Trick.FromString(_complete_trick_bytes(trick, players))
    return _build_trick(trick, players)


@functools.lru_cache(maxsize=8192)
def _complete_trick_bytes(trick: TrickView, players: int) -> bytes:
    # A completed trick never changes and appears in every later request of its hand.
    return _build_trick(trick, players).SerializeToString()


def _build_trick(trick: TrickView, players: int) -> pb.Trick:
    counts: dict[Card, int] = {}
    for card in trick.cards:
        counts[card] = counts.get(card, 0) + 1
    out = pb.Trick(
        leader=trick.leader,
        cards=codes(trick.cards),
        seats=[trick.seat_of(i, players) for i in range(len(trick.cards))],
        cancelled=[counts[c] > 1 for c in trick.cards],
        complete=trick.complete,
        set_aside=trick.set_aside,
    )
    if trick.winner is not None:
        out.winner = trick.winner
    return out


def view_pb(view: View) -> pb.View:
    """The protobuf form of a seat's View."""
    n = view.players
    out = pb.View(
        seat=view.seat,
        players=n,
        target_score=view.rules.target_score,
        phase=_PHASES[view.phase],
        hand_index=max(view.hand_index, 0),
        dealer=view.dealer,
        pass_direction=_DIRECTIONS[view.pass_direction],
        hand=view.hand.codes(),
        passed=codes(view.passed),
        passed_to=view.pass_direction.target(view.seat, n),
        received=codes(view.received),
        received_from=view.pass_direction.source(view.seat, n),
        hearts_broken=view.hearts_broken,
        hand_sizes=list(view.hand_sizes),
        kitty_size=view.kitty_size,
        taken_points=list(view.taken),
        set_aside=codes(view.set_aside),
        totals=list(view.totals),
    )
    for trick in view.tricks:
        out.tricks.add().MergeFromString(_complete_trick_bytes(trick, n))
    if view.current is not None:
        out.current_trick.CopyFrom(trick_pb(view.current, n))
    if view.to_play is not None:
        out.to_play = view.to_play
    if view.kitty_taker is not None:
        out.kitty_taker = view.kitty_taker
    if view.phase is Phase.MOON_CHOICE and view.moon_shooter is not None:
        out.moon_shooter = view.moon_shooter
    return out


def hand_started(view: View, *, spectator: bool = False) -> pb.HandStarted:
    """HandStarted for a seat (its dealt cards) or a spectator (no cards)."""
    return pb.HandStarted(
        hand_index=view.hand_index,
        dealer=view.dealer,
        pass_direction=_DIRECTIONS[view.pass_direction],
        hand=[] if spectator else view.hand.codes(),
        kitty_size=view.kitty_size,
    )


def cards_received(view: View) -> pb.CardsReceived:
    """CardsReceived for a seat, once every pass is in."""
    return pb.CardsReceived(
        cards=codes(view.received),
        from_seat=view.pass_direction.source(view.seat, view.players),
        hand=view.hand.codes(),
    )


def card_played(hand_index: int, trick_index: int, seat: int, card: Card, by_referee: bool) -> pb.CardPlayed:
    """A public CardPlayed event."""
    return pb.CardPlayed(
        hand_index=hand_index, trick_index=trick_index, seat=seat, card=str(card), by_referee=by_referee
    )


def trick_completed(hand_index: int, trick_index: int, trick: TrickView, players: int) -> pb.TrickCompleted:
    """A public TrickCompleted event."""
    return pb.TrickCompleted(
        hand_index=hand_index,
        trick_index=trick_index,
        trick=trick_pb(trick, players),
        next_leader=trick.winner if trick.winner is not None else trick.leader,
    )


def hand_completed(
    summary: HandSummary, totals: Sequence[int], choice: MoonChoice | None
) -> pb.HandCompleted:
    """A public HandCompleted event: the kitty and every seat's points revealed."""
    out = pb.HandCompleted(
        hand_index=summary.index,
        points=list(summary.points),
        scores=list(summary.scores),
        totals=list(totals),
        kitty=codes(summary.kitty),
        moon_choice=MOON_TO_PB[choice] if choice is not None else pb.MOON_CHOICE_UNSPECIFIED,
        uncollected=codes(summary.uncollected),
    )
    if summary.kitty_taker is not None:
        out.kitty_taker = summary.kitty_taker
    if summary.moon is not None:
        out.moon_shooter = summary.moon
    return out


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
