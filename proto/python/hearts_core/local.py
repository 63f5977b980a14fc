"""An in-process referee: plays a whole game between decision makers given only Views.

It is :func:`hearts_core.driver.drive` answered by Python bots. The gRPC referee
(``hearts_server.table``) drives the same loop over the network with deadlines and faults; this
one is for tests, benchmarks and ``hearts play``. Both deal with :func:`deal_hand`, so the same
rules and seed give the same deals either way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from hearts_core.cards import Card
from hearts_core.deal import deal_hand
from hearts_core.driver import Answer, Event, HandCompleted, play_through
from hearts_core.errors import GameAlreadyOver
from hearts_core.rules import MoonChoice, Rules
from hearts_core.state import Deal, Decision, DecisionKind, Moon, Pass, Play, State
from hearts_core.view import View, build_view


class Player(Protocol):
    """Anything that makes a seat's decisions from that seat's View alone."""

    def choose_pass(self, view: View) -> Sequence[Card]:
        """Three cards from ``view.hand`` to pass."""
        ...

    def choose_play(self, view: View) -> Card:
        """One of ``view.legal``."""
        ...

    def choose_moon(self, view: View) -> MoonChoice:
        """The moon option, when this seat has taken every point of the hand."""
        ...


def _answer(state: State, players: Sequence[Player], seed: str) -> Callable[[Decision], Answer]:
    """Answers every decision of a game in-process: deals from ``seed``, the rest from ``players``."""

    def answer(decision: Decision) -> Answer:
        kind = decision.kind
        if kind is DecisionKind.PLAY:
            seat = decision.seat
            return Play(seat, players[seat].choose_play(build_view(state, seat)))
        if kind is DecisionKind.PASS:
            # Each seat decides from its own View before any pass is applied.
            return [Pass(s, list(players[s].choose_pass(build_view(state, s)))) for s in decision.seats]
        if kind is DecisionKind.DEAL:
            return Deal(*deal_hand(state.rules, seed, decision.hand_index))
        seat = decision.seat
        return Moon(seat, players[seat].choose_moon(build_view(state, seat)))

    return answer


def play_hand(state: State, players: Sequence[Player], seed: str) -> None:
    """Deals the next hand of ``state`` from ``seed`` and plays it to the end.

    Raises:
        GameAlreadyOver: if the game has ended.
        HeartsError: if a player makes an illegal decision.
    """
    if state.game_over:
        raise GameAlreadyOver("the game is over; no further hand may be dealt", hand=state.hand_index + 1)
    play_through(state, _answer(state, players, seed), until=HandCompleted)


def play_game(
    rules: Rules, seed: str, players: Sequence[Player], on_event: Callable[[Event], None] | None = None
) -> State:
    """Plays a whole game in-process and returns its final State.

    Args:
        rules: The rules.
        seed: The deal seed.
        players: One decision maker per seat.
        on_event: Called with every event of the game (see :mod:`hearts_core.driver`).

    Raises:
        ValueError: if the number of players does not match the table size.
        HeartsError: if a player makes an illegal decision (in-process players are trusted to
            be correct; the gRPC referee handles faulty ones).
    """
    if len(players) != rules.players:
        raise ValueError(f"{rules.players} players needed, {len(players)} given")
    state = State(rules)
    return play_through(state, _answer(state, players, seed), on_event)
