"""Illegal actions in both simulator backends: the same code and the same place (hand, play, seat).

``IllegalAction`` carries ``.code`` (the conformance code) and where the action was tried:
``.hand`` (the hand index), ``.play`` (cards played this hand before it, for a card play) and
``.seat`` (the seat that acted; None when none was to act). The native module and the
pure-Python fallback must agree on all four for every kind of illegal action, and leave the
game unchanged.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from tests.helpers.sim_backends import backend


def _attempt(game: Any, sim: Any, call: Callable[[Any], None]) -> tuple[str, Any, Any, Any] | None:
    try:
        call(game)
    except sim.IllegalAction as err:
        return (err.code, err.hand, err.play, err.seat)
    return None


def _state(game: Any) -> tuple[Any, ...]:
    n = game.players
    return (
        game.phase,
        game.current_player,
        game.legal_actions(),
        [game.hand(s) for s in range(n)],
        game.trick(),
    )


def _illegal_calls(game: Any, rng: random.Random) -> list[Callable[[Any], None]]:
    legal = set(game.legal_actions())
    wrong = [a for a in range(54) if a not in legal]
    calls: list[Callable[[Any], None]] = [lambda g, a=a: g.apply_action(a) for a in rng.sample(wrong, 4)]
    card = rng.randrange(52)
    seat = rng.randrange(game.players)
    calls += [
        lambda g: g.apply_play(card),
        lambda g: g.apply_moon(52),
        lambda g: g.apply_moon("neither"),
        lambda g: g.apply_pass(seat, g.hand(seat)[:2]),
        lambda g: g.apply_pass(seat, [card, card, card]),
    ]
    return calls


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_illegal_actions_raise_the_same_code_and_place_in_both_backends() -> None:
    native, python = backend("native"), backend("python")
    compared = 0
    places = set()
    for index in range(60):
        players = 6 + index % 6
        a, b = native.Game(players, index, max_hands=2), python.Game(players, index, max_hands=2)
        rng = random.Random(index)
        while True:
            if rng.random() < 0.15 or a.is_over():
                for call in _illegal_calls(b, rng):
                    ca, cb = a.clone(), b.clone()
                    got = (_attempt(ca, native, call), _attempt(cb, python, call))
                    assert got[0] == got[1], (index, got)
                    if got[0] is None:  # legal after all (a pass of three cards the seat holds)
                        continue
                    assert _state(ca) == _state(a) == _state(cb)
                    places.add((got[0][0], got[0][2] is None, got[0][3] is None))
                    compared += 1
            if a.is_over():
                break
            action = rng.choice(a.legal_actions())
            a.apply_action(action)
            b.apply_action(action)
    assert compared > 1000
    # Every kind of place occurs: card plays (with a play index), passes, moon and game over.
    codes = {code for code, _, _ in places}
    assert {"NOT_IN_HAND", "MUST_FOLLOW_SUIT", "PASS_NOT_IN_HAND", "BAD_PASS_COUNT", "OUT_OF_TURN"} <= codes
    assert ("OUT_OF_TURN", True, True) in places  # once over: no seat


def test_the_fallback_error_names_the_play_and_the_seat() -> None:
    python = backend("python")
    game = python.Game(8, "where")
    for seat in range(8):
        game.apply_pass(seat, game.hand(seat)[:3])
    game.apply_action(game.legal_actions()[0])
    seat = game.current_player
    wrong = next(c for c in range(52) if c not in game.legal_actions())
    with pytest.raises(python.IllegalAction) as err:
        game.apply_action(wrong)
    assert (err.value.hand, err.value.play, err.value.seat) == (0, 1, seat)
