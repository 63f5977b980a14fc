"""An OpenSpiel-style game and state on :mod:`hearts_client.sim` (no ``pyspiel`` needed).

The method names are OpenSpiel's (``new_initial_state``, ``current_player``, ``legal_actions``,
``legal_actions_mask``, ``apply_action``, ``clone``, ``child``, ``is_terminal``, ``returns``,
``information_state_tensor``...), so code written against a ``pyspiel.State`` of a
sequential, deterministic game runs on it. The deal comes from the seed, so there are no chance
nodes; the terminal player id is OpenSpiel's ``-4``. This adapter is for convenience: loops
that need speed use :class:`hearts_client.sim.Game` directly (or :class:`~hearts_client.sim.VecGame`).
"""

from __future__ import annotations

from array import array
from typing import Any

from hearts_client.sim import NUM_ACTIONS, PHASE_NAMES, Game, obs_size

#: OpenSpiel's ``pyspiel.PlayerId.TERMINAL``.
TERMINAL_PLAYER = -4

__all__ = ["TERMINAL_PLAYER", "HeartsGame", "HeartsState"]


class HeartsGame:
    """The game's parameters; :meth:`new_initial_state` deals a game.

    Args:
        players: 6 to 11.
        seed: The deal seed of the first state; ``new_initial_state(seed)`` overrides it.
        target_score, max_hands: The rules.
    """

    def __init__(
        self, players: int = 8, seed: int | str = 0, target_score: int = 150, max_hands: int = 200
    ) -> None:
        Game(players, 0)  # checks the player count
        self.players = players
        self.seed = seed
        self.rules = {"target_score": target_score, "max_hands": max_hands}

    def num_players(self) -> int:
        return self.players

    def num_distinct_actions(self) -> int:
        return NUM_ACTIONS

    def information_state_tensor_shape(self) -> list[int]:
        return [obs_size(self.players)]

    def information_state_tensor_size(self) -> int:
        return int(obs_size(self.players))

    def min_utility(self) -> float:
        return -float(self.rules["target_score"] + 52 + 26)

    def max_utility(self) -> float:
        return 26.0 * self.rules["max_hands"]

    def new_initial_state(self, seed: int | str | None = None) -> HeartsState:
        return HeartsState(self, Game(self.players, self.seed if seed is None else seed, **self.rules))

    def __repr__(self) -> str:
        return f"cancellation_hearts(players={self.players},seed={self.seed!r})"


class HeartsState:
    """One game position (wraps a :class:`hearts_client.sim.Game`)."""

    def __init__(self, game: HeartsGame, sim: Any) -> None:
        self._game = game
        self.sim = sim
        self._history: list[int] = []

    def get_game(self) -> HeartsGame:
        return self._game

    def current_player(self) -> int:
        return TERMINAL_PLAYER if self.sim.is_over() else int(self.sim.current_player)

    def is_terminal(self) -> bool:
        return bool(self.sim.is_over())

    def is_chance_node(self) -> bool:
        return False

    def is_simultaneous_node(self) -> bool:
        return False

    def legal_actions(self, player: int | None = None) -> list[int]:
        if player is not None and player != self.current_player():
            return []
        return list(self.sim.legal_actions())

    def legal_actions_mask(self, player: int | None = None) -> list[int]:
        mask = self.sim.legal_mask() if player is None or player == self.current_player() else 0
        return [mask >> a & 1 for a in range(NUM_ACTIONS)]

    def apply_action(self, action: int) -> None:
        self.sim.apply_action(int(action))
        self._history.append(int(action))

    def clone(self) -> HeartsState:
        out = HeartsState(self._game, self.sim.clone())
        out._history = list(self._history)
        return out

    def child(self, action: int) -> HeartsState:
        out = self.clone()
        out.apply_action(action)
        return out

    def history(self) -> list[int]:
        return list(self._history)

    def returns(self) -> list[float]:
        return [float(r) for r in self.sim.returns()]

    def player_return(self, player: int) -> float:
        return self.returns()[player]

    def information_state_tensor(self, player: int | None = None) -> list[float]:
        seat = self.current_player() if player is None else player
        if seat < 0:
            seat = 0
        buf = array("f", bytes(4 * obs_size(self._game.players)))  # a float32 buffer, no numpy needed
        self.sim.observation_into(seat, buf)
        return buf.tolist()

    def action_to_string(self, player: int | None, action: int) -> str:
        from hearts_core.cards import CARDS

        if action == 52:
            return "moon:self_minus_26"
        if action == 53:
            return "moon:others_plus_26"
        return str(CARDS[action])

    def __str__(self) -> str:
        return f"{PHASE_NAMES[self.sim.phase]} hand {self.sim.hand_index} totals {self.sim.totals()}"
