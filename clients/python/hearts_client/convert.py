"""Converting the protocol's View message into the SDK's :class:`View`.

Bots written against :class:`hearts_client.Bot` receive the same View type in-process and over
gRPC, so a bot can be tested locally and entered on a server unchanged.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from cancellation_hearts.v1 import game_pb2 as pb
from hearts_server.cards import Card, CardSet
from hearts_server.rules import PassDirection, Rules
from hearts_server.state import Phase
from hearts_server.view import HandSummary, TrickView, View

_DIRECTIONS = {pb.PASS_DIRECTION_LEFT: PassDirection.LEFT, pb.PASS_DIRECTION_RIGHT: PassDirection.RIGHT}
_PHASES = {
    pb.PHASE_DEALING: Phase.DEALING,
    pb.PHASE_PASSING: Phase.PASSING,
    pb.PHASE_PLAYING: Phase.PLAYING,
    pb.PHASE_MOON_CHOICE: Phase.MOON_CHOICE,
    pb.PHASE_GAME_OVER: Phase.GAME_OVER,
}


def cards(codes: Sequence[str]) -> tuple[Card, ...]:
    """Parses card codes (raises ValueError on a bad one)."""
    return tuple(Card.parse(c) for c in codes)


def trick_from_pb(trick: pb.Trick) -> TrickView:
    """A TrickView from its message."""
    winner = trick.winner if trick.HasField("winner") else None
    return _trick(trick.leader, tuple(trick.cards), winner, trick.complete)


@functools.lru_cache(maxsize=4096)
def _trick(leader: int, codes: tuple[str, ...], winner: int | None, complete: bool) -> TrickView:
    # Every request repeats the hand's completed tricks: convert each once.
    return TrickView(leader=leader, cards=cards(codes), winner=winner, complete=complete)


@functools.lru_cache(maxsize=64)
def _rules(players: int, target_score: int, max_hands: int, first_dealer: int) -> Rules:
    return Rules(players=players, target_score=target_score, max_hands=max_hands, first_dealer=first_dealer)


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


def view_from_pb(
    view: pb.View,
    legal: Sequence[str] = (),
    *,
    max_hands: int = 200,
    first_dealer: int = 0,
    history: Sequence[HandSummary] = (),
) -> View:
    """The SDK View of a View message (plus the request's legal cards)."""
    rules = Rules(
        players=view.players,
        target_score=view.target_score or 150,
        max_hands=max_hands,
        first_dealer=first_dealer,
    )
    return View(
        rules=rules,
        seat=view.seat,
        phase=_PHASES.get(view.phase, Phase.PLAYING),
        hand_index=view.hand_index,
        dealer=view.dealer,
        pass_direction=_DIRECTIONS.get(view.pass_direction, PassDirection.LEFT),
        hand=CardSet(cards(view.hand)),
        passed=cards(view.passed),
        received=cards(view.received),
        tricks=tuple(trick_from_pb(t) for t in view.tricks),
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
        history=tuple(history),
    )
