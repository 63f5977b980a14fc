"""An in-process referee: plays a whole game between decision makers given only Views.

The gRPC referee (:mod:`hearts_server.table`) does the same over the network with deadlines
and faults; this one is for tests, benchmarks and ``hearts play``. Both deal with
:func:`deal_hand`, so the same rules and seed give the same deals either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from hearts_core.cards import Card
from hearts_core.deal import deal_hand
from hearts_core.rules import MoonChoice, Rules
from hearts_core.state import Phase, State
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


def play_hand(state: State, players: Sequence[Player], seed: str) -> None:
    """Deals the next hand of ``state`` from ``seed`` and plays it to the end.

    Raises:
        HeartsError: if a player makes an illegal decision (in-process players are trusted to
            be correct; the gRPC referee handles faulty ones).
    """
    deal, kitty = deal_hand(state.rules, seed, state.hand_index + 1)
    state.start_hand(deal, kitty)
    for seat, player in enumerate(players):
        state.pass_cards(seat, list(player.choose_pass(build_view(state, seat))))
    while state.phase is Phase.PLAYING:
        seat = state.to_play
        state.play(players[seat].choose_play(build_view(state, seat)))
    if state.phase is Phase.MOON_CHOICE:
        shooter = state.moon_shooter
        assert shooter is not None
        state.choose_moon(players[shooter].choose_moon(build_view(state, shooter)))


def play_game(rules: Rules, seed: str, players: Sequence[Player]) -> State:
    """Plays a whole game in-process and returns its final State.

    Raises:
        ValueError: if the number of players does not match the table size.
    """
    if len(players) != rules.players:
        raise ValueError(f"{rules.players} players needed, {len(players)} given")
    state = State(rules)
    while not state.game_over:
        play_hand(state, players, seed)
    return state
