"""The OpenSpiel-style adapter: a full game through its API, clones and children independent."""

from __future__ import annotations

import random

from hearts_client.sim import Game, obs_size
from hearts_client.sim.openspiel import TERMINAL_PLAYER, HeartsGame


def test_a_game_through_the_openspiel_api() -> None:
    game = HeartsGame(players=9, seed=4, target_score=60)
    assert game.num_distinct_actions() == 54 and game.information_state_tensor_shape() == [obs_size(9)]
    state = game.new_initial_state()
    rng = random.Random(1)
    reference = Game(9, 4, target_score=60)
    snapshot = None
    while not state.is_terminal():
        player = state.current_player()
        legal = state.legal_actions()
        assert legal == reference.legal_actions() and player == reference.current_player
        assert [a for a, bit in enumerate(state.legal_actions_mask()) if bit] == legal
        assert state.legal_actions((player + 1) % 9) == []
        tensor = state.information_state_tensor()
        assert len(tensor) == obs_size(9) and tensor[-54 + legal[0]] == 1.0  # the legal mask ends it
        action = rng.choice(legal)
        if snapshot is None and len(state.history()) == 30:
            snapshot = state.clone()
            child = state.child(action)
            assert child.history() == [*state.history(), action]
        state.apply_action(action)
        reference.apply_action(action)
    assert state.current_player() == TERMINAL_PLAYER
    assert state.returns() == reference.returns() and min(state.returns()) <= -60
    assert snapshot is not None and len(snapshot.history()) == 30 and not snapshot.is_terminal()
