"""The PettingZoo adapter passes PettingZoo's own API and seed tests, and plays whole games."""

from __future__ import annotations

import numpy as np
import pytest

pettingzoo = pytest.importorskip("pettingzoo", reason="pettingzoo is in the dev extra: run `make install`")

from pettingzoo.test import api_test, seed_test  # noqa: E402

from hearts_client.sim import Game, obs_size  # noqa: E402
from hearts_client.sim.pettingzoo import env, raw_env  # noqa: E402


@pytest.mark.parametrize("players", [6, 8, 11])
def test_api_test(players: int) -> None:
    api_test(env(players=players, seed=1, max_hands=2), num_cycles=300)


def test_seed_test() -> None:
    seed_test(lambda: env(players=8, seed=3, max_hands=1), num_cycles=200)


def test_random_agents_play_whole_games_and_rewards_sum_to_returns() -> None:
    e = env(players=7, seed=5, target_score=60)
    rng = np.random.default_rng(0)
    for episode in range(2):
        e.reset(seed=10 + episode)
        totals = dict.fromkeys(e.possible_agents, 0.0)
        steps = 0
        for agent in e.agent_iter():
            obs, reward, term, trunc, _ = e.last()
            totals[agent] += reward
            assert obs["observation"].shape == (obs_size(7),) and obs["observation"].dtype == np.float32
            if term or trunc:
                e.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            assert len(legal) > 0
            e.step(int(rng.choice(legal)))
            steps += 1
        game = e.unwrapped.game
        assert game.is_over() and steps > 200
        assert [totals[a] for a in e.possible_agents] == game.returns()
        # The episode is the simulator's game dealt from the reset seed.
        assert Game(7, str(10 + episode)).hand(0) == Game(7, game.seed).hand(0)


def test_illegal_action_and_bad_arguments() -> None:
    from hearts_client.sim import IllegalAction

    e = raw_env(players=6)
    e.reset(seed=0)
    mask = e.observe(e.agent_selection)["action_mask"]
    with pytest.raises(IllegalAction):
        e.step(int(np.flatnonzero(mask == 0)[0]))
    with pytest.raises(ValueError, match="6 to 11"):
        raw_env(players=5)
    with pytest.raises(ValueError, match="render_mode"):
        raw_env(render_mode="rgb_array")
