"""The leak test: a seat's messages depend only on what that seat may know.

Over random games at every table size, every message seat K receives is rebuilt from a copy of
the true state in which every card K cannot see has been re-dealt (the other seats' hands, the
kitty, the other seats' passes and dealt hands, the hidden points) — and must be byte-identical
to the message built from the true state. Messages are built by the same code the live referee
uses (:mod:`hearts_server.messages` from :func:`build_view`).
"""

from __future__ import annotations

import copy
import random

import pytest

from hearts_client.bots import make_bot
from hearts_core.cards import CARDS, Card
from hearts_core.local import play_game
from hearts_core.record import state_to_record
from hearts_core.rules import Rules
from hearts_core.state import Phase, State
from hearts_server.redacted import seat_messages


def redeal_hidden(state: State, seat: int, rng: random.Random) -> State:
    """A copy of ``state`` in which everything ``seat`` cannot see is shuffled."""
    if state.phase not in (Phase.PASSING, Phase.PLAYING, Phase.MOON_CHOICE):
        return state
    other = copy.deepcopy(state)
    n = other.players
    source = other.pass_direction.source(seat, n)
    others = [s for s in range(n) if s != seat]
    # Pool the other hands and the kitty, and deal them out again with the same sizes.
    pool: list[Card] = [c for s in others for c in other.hands[s]] + list(other.kitty)
    rng.shuffle(pool)
    sizes = {s: len(other.hands[s]) for s in others}
    for s in others:
        hand = other.hands[s].__class__(pool[: sizes[s]])
        del pool[: sizes[s]]
        if other.phase is Phase.PASSING or s != source:
            other.hands[s] = hand
        other.deal[s] = list(hand)
    other.kitty = pool
    if other.phase is Phase.PASSING:
        # Seats that passed already: a different pass, drawn from their new hand.
        for s in others:
            if other.passes[s] is not None:
                other.passes[s] = rng.sample(list(other.hands[s]), 3)
    else:
        for s in others:
            if s != source:
                other.passes[s] = rng.sample(CARDS, 3)
    # Points include the hidden kitty: scramble them too.
    other.points = [rng.randrange(60) for _ in range(n)]
    other.pending_points = rng.randrange(60)
    return other


@pytest.mark.parametrize("players", range(6, 12))
def test_seat_messages_do_not_depend_on_hidden_cards(players: int) -> None:
    rng = random.Random(players)
    rules = Rules(players=players, target_score=60)
    for game in range(2):
        bots = [make_bot("heuristic" if s % 2 else "random", f"{game}/{s}") for s in range(players)]
        record = state_to_record(play_game(rules, f"leak-{players}-{game}", bots))
        for seat in range(players):
            truth = [m.SerializeToString() for m in seat_messages(record, seat)]
            shuffled = [
                m.SerializeToString()
                for m in seat_messages(record, seat, lambda st, k: redeal_hidden(st, k, rng))
            ]
            assert len(truth) > players
            assert truth == shuffled, f"seat {seat} of a {players}-player game sees hidden cards"


def test_the_perturbation_really_changes_hidden_cards() -> None:
    # Guards the leak test itself: the re-deal must alter what a seat cannot see.
    rules = Rules(players=8)
    state = State(rules)
    from hearts_core.deal import deal_hand

    state.start_hand(*deal_hand(rules, "x", 0))
    other = redeal_hidden(state, 0, random.Random(1))
    assert other.hands[0] == state.hands[0]
    assert any(other.hands[s] != state.hands[s] for s in range(1, 8))
