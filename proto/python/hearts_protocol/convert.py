"""Converting between the protocol's messages and the core's objects, both ways.

Core to protobuf (the referee): every message to a seat is built here from that seat's
:class:`View` or from public facts (a card played, a finished hand); none of these functions is
given the State. The leak test (tests/test_leak.py) drives them with states that differ only in
what a seat cannot see and requires byte-identical output.

Protobuf to core (the SDK): bots written against :class:`hearts_client.Bot` receive the same View
type in-process and over gRPC, so a bot can be tested locally and entered on a server unchanged.

Each enum mapping is written once, here, with its inverse derived from it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from cancellation_hearts.v1 import admin_service_pb2 as apb
from cancellation_hearts.v1 import game_pb2 as pb
from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_core.cards import Card, CardSet, parse_cards
from hearts_core.rules import DEFAULT_MAX_HANDS, DEFAULT_TARGET_SCORE, MoonChoice, PassDirection, Rules
from hearts_core.state import DecisionKind, Phase
from hearts_core.view import HandSummary, TrickView, View
from hearts_protocol.values import Answer, FaultKind, RejectionCode, TableStatus

DIRECTION_TO_PB = {
    PassDirection.LEFT: pb.PASS_DIRECTION_LEFT,
    PassDirection.RIGHT: pb.PASS_DIRECTION_RIGHT,
}
DIRECTION_FROM_PB = {v: k for k, v in DIRECTION_TO_PB.items()}
PHASE_TO_PB = {
    Phase.DEALING: pb.PHASE_DEALING,
    Phase.PASSING: pb.PHASE_PASSING,
    Phase.PLAYING: pb.PHASE_PLAYING,
    Phase.MOON_CHOICE: pb.PHASE_MOON_CHOICE,
    Phase.GAME_OVER: pb.PHASE_GAME_OVER,
}
PHASE_FROM_PB = {v: k for k, v in PHASE_TO_PB.items()}
MOON_TO_PB = {
    MoonChoice.SELF_MINUS_26: pb.MOON_CHOICE_SELF_MINUS_26,
    MoonChoice.OTHERS_PLUS_26: pb.MOON_CHOICE_OTHERS_PLUS_26,
}
MOON_FROM_PB = {v: k for k, v in MOON_TO_PB.items()}
#: The kinds of decision a seat is asked for (the deal is the referee's own).
DECISION_KIND_TO_PB = {
    DecisionKind.PASS: rpb.DECISION_KIND_PASS,
    DecisionKind.PLAY: rpb.DECISION_KIND_PLAY,
    DecisionKind.MOON: rpb.DECISION_KIND_MOON,
}
DECISION_KIND_FROM_PB = {v: k for k, v in DECISION_KIND_TO_PB.items()}
REJECTION_TO_PB = {
    RejectionCode.NOT_IN_HAND: rpb.REJECTION_CODE_NOT_IN_HAND,
    RejectionCode.MUST_FOLLOW_SUIT: rpb.REJECTION_CODE_MUST_FOLLOW_SUIT,
    RejectionCode.HEARTS_NOT_BROKEN: rpb.REJECTION_CODE_HEARTS_NOT_BROKEN,
    RejectionCode.FIRST_LEAD_RESTRICTED: rpb.REJECTION_CODE_FIRST_LEAD_RESTRICTED,
    RejectionCode.BAD_PASS_COUNT: rpb.REJECTION_CODE_BAD_PASS_COUNT,
    RejectionCode.PASS_NOT_IN_HAND: rpb.REJECTION_CODE_PASS_NOT_IN_HAND,
    RejectionCode.BAD_MOON_CHOICE: rpb.REJECTION_CODE_BAD_MOON_CHOICE,
    RejectionCode.MALFORMED: rpb.REJECTION_CODE_MALFORMED,
    RejectionCode.UNKNOWN_CARD: rpb.REJECTION_CODE_UNKNOWN_CARD,
    RejectionCode.WRONG_ANSWER: rpb.REJECTION_CODE_WRONG_ANSWER,
    RejectionCode.STALE_REQUEST: rpb.REJECTION_CODE_STALE_REQUEST,
    RejectionCode.NOT_YOUR_TURN: rpb.REJECTION_CODE_NOT_YOUR_TURN,
    RejectionCode.UNEXPECTED: rpb.REJECTION_CODE_UNEXPECTED,
}
REJECTION_FROM_PB = {v: k for k, v in REJECTION_TO_PB.items()}
FAULT_TO_PB = {
    FaultKind.TIMEOUT: pb.FAULT_KIND_TIMEOUT,
    FaultKind.DISCONNECTED: pb.FAULT_KIND_DISCONNECTED,
    FaultKind.TIME_BANK_EXHAUSTED: pb.FAULT_KIND_TIME_BANK_EXHAUSTED,
    FaultKind.FLOOD: pb.FAULT_KIND_FLOOD,
}
FAULT_FROM_PB = {v: k for k, v in FAULT_TO_PB.items()}
TABLE_STATUS_TO_PB = {
    TableStatus.WAITING: apb.TABLE_STATUS_WAITING,
    TableStatus.PLAYING: apb.TABLE_STATUS_PLAYING,
    TableStatus.DONE: apb.TABLE_STATUS_DONE,
    TableStatus.ABORTED: apb.TABLE_STATUS_ABORTED,
}
TABLE_STATUS_FROM_PB = {v: k for k, v in TABLE_STATUS_TO_PB.items()}
#: Which answer of a Decision (its ``answer`` oneof) answers which kind of request.
_ANSWER_KINDS = {
    "pass_cards": DecisionKind.PASS,
    "play_card": DecisionKind.PLAY,
    "choose_moon": DecisionKind.MOON,
}


def cards(codes: Sequence[str]) -> tuple[Card, ...]:
    """Parses card codes (raises ValueError on a bad one)."""
    return parse_cards(codes)


def trick_from_pb(trick: pb.Trick) -> TrickView:
    """A TrickView from its message."""
    winner = trick.winner if trick.HasField("winner") else None
    return _trick(trick.leader, tuple(trick.cards), winner, trick.complete)


@functools.lru_cache(maxsize=4096)
def _trick(leader: int, codes: tuple[str, ...], winner: int | None, complete: bool) -> TrickView:
    # Every request repeats the hand's completed tricks: convert each once.
    return TrickView(leader=leader, cards=cards(codes), winner=winner, complete=complete)


def summary_from_pb(hand: pb.HandCompleted) -> HandSummary:
    """A HandSummary from a HandCompleted event."""
    return HandSummary(
        index=hand.hand_index,
        points=tuple(hand.points),
        scores=tuple(hand.scores),
        moon=hand.moon_shooter if hand.HasField("moon_shooter") else None,
        kitty=cards(hand.kitty),
        kitty_taker=hand.kitty_taker if hand.HasField("kitty_taker") else None,
        uncollected=cards(hand.uncollected),
    )


@functools.lru_cache(maxsize=64)
def _rules(players: int, target_score: int, max_hands: int, first_dealer: int) -> Rules:
    return Rules(players=players, target_score=target_score, max_hands=max_hands, first_dealer=first_dealer)


def tricks_from_pb(tricks: Sequence[pb.Trick], known: tuple[TrickView, ...] = ()) -> tuple[TrickView, ...]:
    """The completed tricks of a View message.

    ``known``: the tricks of the same hand converted from an earlier message (completed tricks
    never change): the message's first ``len(known)`` tricks are taken from it, only the later
    ones are converted.
    """
    k, n = len(known), len(tricks)
    if 0 < k <= n and tricks[k - 1].leader == known[-1].leader:
        if k == n:
            return known
        return known + tuple(trick_from_pb(tricks[i]) for i in range(k, n))
    return tuple(trick_from_pb(t) for t in tricks)


def view_from_pb(
    view: pb.View,
    legal: Sequence[str] = (),
    *,
    max_hands: int = DEFAULT_MAX_HANDS,
    first_dealer: int = 0,
    history: Sequence[HandSummary] = (),
    known_tricks: tuple[TrickView, ...] = (),
) -> View:
    """The SDK View of a View message (plus the request's legal cards).

    ``known_tricks``: this hand's completed tricks as converted from an earlier request of the
    same hand, if any (see :func:`tricks_from_pb`); the caller makes sure it is the same hand.
    """
    rules = _rules(view.players, view.target_score or DEFAULT_TARGET_SCORE, max_hands, first_dealer)
    return View(
        rules=rules,
        seat=view.seat,
        phase=PHASE_FROM_PB.get(view.phase, Phase.PLAYING),
        hand_index=view.hand_index,
        dealer=view.dealer,
        pass_direction=DIRECTION_FROM_PB.get(view.pass_direction, PassDirection.LEFT),
        hand=CardSet(cards(view.hand)),
        passed=cards(view.passed),
        received=cards(view.received),
        tricks=tricks_from_pb(view.tricks, known_tricks),
        current=trick_from_pb(view.current_trick) if view.HasField("current_trick") else None,
        to_play=view.to_play if view.HasField("to_play") else None,
        hearts_broken=view.hearts_broken,
        hand_sizes=tuple(view.hand_sizes),
        kitty_size=view.kitty_size,
        kitty_taker=view.kitty_taker if view.HasField("kitty_taker") else None,
        taken=tuple(view.taken_points),
        set_aside=cards(view.set_aside),
        totals=tuple(view.totals),
        legal=cards(legal),
        moon_shooter=view.moon_shooter if view.HasField("moon_shooter") else None,
        history=history if type(history) is tuple else tuple(history),
    )


def answer_from_pb(decision: rpb.Decision) -> Answer:
    """A seat's Decision message as an :class:`Answer` (nothing checked: the table does that).

    An unknown moon option becomes ``moon=None``, which the table rejects as BAD_MOON_CHOICE.
    """
    which = decision.WhichOneof("answer")
    kind = _ANSWER_KINDS.get(which) if which is not None else None
    cards: tuple[str, ...] = ()
    moon: MoonChoice | None = None
    if kind is DecisionKind.PASS:
        cards = tuple(decision.pass_cards.cards)
    elif kind is DecisionKind.PLAY:
        cards = (decision.play_card.card,)
    elif kind is DecisionKind.MOON:
        moon = MOON_FROM_PB.get(decision.choose_moon.choice)
    return Answer(decision.request_id, kind, cards, moon, decision.bot_error)


def answer_pb(answer: Answer) -> rpb.Decision:
    """The Decision message of an :class:`Answer` (the inverse of :func:`answer_from_pb`)."""
    out = rpb.Decision(request_id=answer.request_id, bot_error=answer.bot_error)
    if answer.kind is DecisionKind.PASS:
        out.pass_cards.cards.extend(answer.cards)
    elif answer.kind is DecisionKind.PLAY:
        out.play_card.card = answer.cards[0] if answer.cards else ""
    elif answer.kind is DecisionKind.MOON:
        out.choose_moon.choice = (
            MOON_TO_PB[answer.moon] if answer.moon is not None else pb.MOON_CHOICE_UNSPECIFIED
        )
    return out


# ---------------------------------------------------------------- core to protobuf
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


@functools.lru_cache(maxsize=8192)
def _trick_field_bytes(trick: TrickView, players: int) -> bytes:
    # The trick as one View.tricks entry on the wire (its tag, length and bytes).
    out = pb.View()
    out.tricks.add().MergeFromString(_complete_trick_bytes(trick, players))
    return out.SerializeToString()


#: The wire form of recent View.tricks tuples, by identity: a State shares one tuple between
#: every View built until the next trick completes (each entry keeps its tuple alive, so an id is
#: never reused while it is here).
_TRICKS_BYTES: dict[int, tuple[tuple[TrickView, ...], int, bytes]] = {}
_TRICKS_BYTES_MAX = 256


def _tricks_bytes(tricks: tuple[TrickView, ...], players: int) -> bytes:
    if type(tricks) is not tuple:  # only an immutable sequence may be remembered by identity
        return b"".join([_trick_field_bytes(t, players) for t in tricks])
    entry = _TRICKS_BYTES.get(id(tricks))
    if entry is not None and entry[0] is tricks and entry[1] == players:
        return entry[2]
    data = b"".join([_trick_field_bytes(t, players) for t in tricks])
    if len(_TRICKS_BYTES) >= _TRICKS_BYTES_MAX:
        del _TRICKS_BYTES[next(iter(_TRICKS_BYTES))]  # the oldest
    _TRICKS_BYTES[id(tricks)] = (tricks, players, data)
    return data


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
        phase=PHASE_TO_PB[view.phase],
        hand_index=max(view.hand_index, 0),
        dealer=view.dealer,
        pass_direction=DIRECTION_TO_PB[view.pass_direction],
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
    if view.tricks:
        out.MergeFromString(_tricks_bytes(view.tricks, n))
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
        pass_direction=DIRECTION_TO_PB[view.pass_direction],
        hand=[] if spectator else view.hand.codes(),
        kitty_size=view.kitty_size,
    )


def public_hand_started(rules: Rules, hand_index: int) -> pb.HandStarted:
    """HandStarted for spectators: the hand's public facts, built without any seat's View."""
    return pb.HandStarted(
        hand_index=hand_index,
        dealer=rules.dealer(hand_index),
        pass_direction=DIRECTION_TO_PB[PassDirection.for_hand(hand_index)],
        kitty_size=rules.kitty_size,
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
