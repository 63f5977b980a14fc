"""A PettingZoo AEC environment of Cancellation Hearts, on :mod:`hearts_client.sim`.

``env(players=8, seed=0)`` gives the wrapped environment (PettingZoo's order-enforcing
wrapper; a bad action raises the simulator's ``IllegalAction`` itself), ``raw_env`` the bare
one. Install the extra:
``pip install 'cancellation-hearts-sdk[pettingzoo]'``.

* Agents ``player_0`` .. ``player_{N-1}`` are the seats; the agent to act is the simulator's
  ``current_player`` (passing is three one-card actions per seat, lowest seat first).
* Actions: ``Discrete(54)``, the simulator's flat action space (52 cards, then the two moon
  choices). Observations: ``{"observation": float32[OBS_SIZE(N)], "action_mask": int8[54]}``,
  the seat's information-state tensor (``docs/SIMULATOR.md``) and its legal actions (all zero
  unless it is to act).
* Rewards: when a hand ends, each agent gets minus what the hand added to its total, so an
  episode's rewards sum to its returns (``-total``). The episode ends with the game.
* Seeding: ``reset(seed=s)`` deals the game from ``s``; ``reset()`` deals the next game of the
  same series (``f"{seed}:{k}"`` for the ``k``-th reset). Nothing draws from global RNGs.
"""

from __future__ import annotations

from typing import Any, ClassVar

try:
    import numpy as np
    from gymnasium import spaces
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers
    from pettingzoo.utils.env_logger import EnvLogger
except ImportError as exc:  # pragma: no cover - the extra is not installed
    raise ImportError(
        f"hearts_client.sim.pettingzoo needs {exc.name}: pip install 'cancellation-hearts-sdk[pettingzoo]'"
    ) from None

from hearts_client.sim import NUM_ACTIONS, Game, obs_size

__all__ = ["env", "raw_env"]


class _OrderEnforcing(wrappers.OrderEnforcingWrapper):  # type: ignore[misc]
    """PettingZoo's order-enforcing wrapper whose ``last`` asks the environment directly (the
    inherited one reads five attributes through the wrapper's ``__getattr__`` on every step)."""

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.last(observe)  # type: ignore[no-any-return]


def env(**kwargs: Any) -> AECEnv:
    """The environment with PettingZoo's order-enforcing wrapper (see :class:`raw_env` for
    arguments). Out-of-bounds and illegal actions need no wrapper: ``step`` raises the
    simulator's ``IllegalAction`` (a ``ValueError``) naming the rule for an illegal action and
    a plain ``ValueError`` for one outside 0..53, and changes nothing."""
    out: AECEnv = _OrderEnforcing(raw_env(**kwargs))
    return out


class raw_env(AECEnv):  # type: ignore[misc]
    """Cancellation Hearts as an AEC environment.

    Args:
        players: 6 to 11 seats.
        seed: The series' base seed (``reset(seed=...)`` replaces it).
        target_score, max_hands: The rules (defaults of RULES.md: 150 and 200).
        render_mode: ``"ansi"`` (``render()`` returns a line of text), ``"human"`` (prints it) or None.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["human", "ansi"],
        "name": "cancellation_hearts_v0",
        "is_parallelizable": False,
    }

    def __init__(
        self,
        players: int = 8,
        seed: int | str = 0,
        target_score: int = 150,
        max_hands: int = 200,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, not {render_mode!r}"
            )
        Game(players, 0)  # checks the player count with the rules' own message
        self.players = players
        self.render_mode = render_mode
        self._seed = str(seed)
        self._resets = 0
        self._rules = {"target_score": target_score, "max_hands": max_hands}
        self.possible_agents = [f"player_{s}" for s in range(players)]
        self._seats = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        size = self._size = obs_size(players)
        self._obs_space = spaces.Dict(
            {
                "observation": spaces.Box(low=-np.inf, high=np.inf, shape=(size,), dtype=np.float32),
                "action_mask": spaces.Box(low=0, high=1, shape=(NUM_ACTIONS,), dtype=np.int8),
            }
        )
        self._act_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_spaces = dict.fromkeys(self.possible_agents, self._obs_space)
        self.action_spaces = dict.fromkeys(self.possible_agents, self._act_space)
        self.game = Game(players, self._seed, **self._rules)

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._act_space

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._seed = str(seed)
            self._resets = 0
        deal_seed = self._seed if self._resets == 0 else f"{self._seed}:{self._resets}"
        self._resets += 1
        self.game = Game(self.players, deal_seed, **self._rules)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.game.current_player]
        self._rewarded = False  # whether self.rewards holds a hand's scores (else all zero)

    def observe(self, agent: str) -> dict[str, Any]:
        seat = self._seats[agent]
        game = self.game
        observation = np.empty(self._size, dtype=np.float32)
        game.observation_into(seat, observation)  # writes every element
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        if game.current_player == seat:
            game.legal_mask_into(mask)
        return {"observation": observation, "action_mask": mask}

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        agent = self.agent_selection
        return (
            self.observe(agent) if observe else None,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        hand = game.hand_index
        game.apply_action(int(action))  # IllegalAction (a ValueError) names the rule broken
        self._cumulative_rewards[agent] = 0.0
        if self._rewarded:
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._rewarded = False
        over = game.is_over()
        if game.hand_index != hand or over:  # a hand ended: each seat gets minus its score
            scores = game.last_hand()["scores"]
            self.rewards = {a: -float(score) for a, score in zip(self.possible_agents, scores, strict=True)}
            self._rewarded = True
            self._accumulate_rewards()
        if over:
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            self.agent_selection = self.possible_agents[game.current_player]
        if self.render_mode == "human":
            print(self.render())

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        return repr(self.game)

    def close(self) -> None:
        pass
