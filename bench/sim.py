#!/usr/bin/env python3
"""Simulator speed (hearts_sim, clients/sim), beside OpenSpiel's C++ Hearts measured in the same run.

Every figure is random 8-player play, in hands per second of this process's CPU time
(time.process_time, so other work on the machine does not skew it), and its ratio to
OpenSpiel's Hearts in cards per second (``x_openspiel``). OpenSpiel's figure is
``pyspiel.evaluate_bots`` over uniform random C++ bots, the whole hand in C++; its hand is
4 players x 13 cards = 52 cards, ours is 104 cards less the kitty (104 at 8 players).

* ``core_loop``: whole random hands inside the core (``hearts_sim.play_random_hands``), dealt by
  the simulator's fast shuffle; ``core_loop_referee_deal``: the same with the referee's seeded
  deal (SHA-256 and CPython's Mersenne Twister seeding, about half the time of a random hand).
* ``python_step``: Python chooses every action, passes included, through the fast path
  ``legal = game.step(action)`` (apply the action, get the legal actions after it; a uniformly
  random index from ``random.random``); ``python_step_apply`` the same with the two calls
  ``legal_actions()`` and ``apply_action``. Hands are the hands completed (``hand_index``).
* ``aec_step``: the PettingZoo AEC environment (``hearts_client.sim.pettingzoo.env``, its
  order-enforcing wrapper included), observation and action mask at every step (``last()``),
  a random legal action from the mask; hands counted as actions / 128 (24 passes and 104 cards
  at 8 players). An AEC step is several Python calls, so beside OpenSpiel's C++ loop it is far
  behind; ``x_openspiel_python`` compares it with OpenSpiel's Hearts stepped the same way from
  Python (``openspiel_python_cards_per_s``: ``information_state_tensor``,
  ``legal_actions_mask`` and a random ``apply_action`` at every decision, chance nodes sampled).
  ``aec_floor`` is the bound on any AEC environment stepped this way: an environment with the same
  agents, spaces and wrapper whose ``step`` only moves to the next agent and whose observation is
  a fresh array and mask with no game behind them (PettingZoo's own machinery and numpy alone).
  When ``aec_floor`` is below 1.0x OpenSpiel's C++ loop, so is every PettingZoo environment.
* ``vec``: ``VecGame(256 games).step_random`` in the core, one thread (so it is per core);
  ``vec_numpy`` is the same games stepped from numpy (``legal_masks`` + a random legal action
  per game + ``step``).
* ``clones_per_s`` (``Game.clone``), ``heuristic_rollouts_per_s`` (clone + heuristic play to the
  end of the hand, what a Monte Carlo bot does per world), ``sampled_worlds_per_s``
  (``hearts_sim.sample_worlds``, World objects included) and ``sampled_worlds_per_s_python``
  (``hearts_client.sampler``, the same worlds), ``sampled_games_per_s`` (``hearts_sim.sample_games``:
  a whole ``Game`` per sampled world, built in Rust).

The backend is ``hearts_client.sim``'s (``HEARTS_SIM_BACKEND=python`` measures the pure-Python
fallback; ``backend`` in the output says which). The fallback has no core loop and no native
sampler: ``core_loop``, ``core_loop_referee_deal``, ``sampled_worlds_per_s`` and
``sampled_games_per_s`` are null there, and every other figure does a tenth of the work (they are
rates: the figures stay comparable).

``--json`` prints one JSON object: ``core_loop``, ``python_step``, ``aec_step``, ``vec`` (and
``vec_numpy``, ``python_step_apply``) each hold ``hands_per_s`` and ``x_openspiel``;
``openspiel_cards_per_s`` is the baseline (null when OpenSpiel is not installed:
``pip install open_spiel``; the ratios are null then). ``--repeat N`` runs every figure N times
and reports the median (the machine may be shared: CPU time is steadier than wall time, but
not immune to a loaded cache).
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import statistics
import time
from collections.abc import Callable
from typing import Any, ClassVar

PLAYERS = 8
CARDS_PER_HAND = 104 - 104 % PLAYERS
OPENSPIEL_CARDS_PER_HAND = 52
ACTIONS_PER_HAND = PLAYERS * 3 + CARDS_PER_HAND


def cpu(work: Callable[[], float]) -> tuple[float, float]:
    """Runs ``work`` (which returns a count); the count and the CPU seconds it took."""
    start = time.process_time()
    count = work()
    return count, max(time.process_time() - start, 1e-9)


def openspiel_cards_per_s(hands: int) -> float | None:
    try:
        pyspiel: Any = importlib.import_module("pyspiel")
    except ImportError:
        return None
    game = pyspiel.load_game("hearts")
    bots = [pyspiel.make_uniform_random_bot(p, 100 + p) for p in range(4)]

    def work() -> float:
        for i in range(hands):
            pyspiel.evaluate_bots(game.new_initial_state(), bots, i)
        return hands * OPENSPIEL_CARDS_PER_HAND

    count, seconds = cpu(work)
    return count / seconds


def openspiel_python_cards_per_s(hands: int) -> float | None:
    """OpenSpiel's Hearts stepped from Python as an RL loop does: observation tensor, legal
    mask and a random legal action at every decision (chance outcomes drawn by weight)."""
    try:
        pyspiel: Any = importlib.import_module("pyspiel")
    except ImportError:
        return None
    game = pyspiel.load_game("hearts")
    rand = random.Random(2).random

    def work() -> float:
        for _ in range(hands):
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes = state.chance_outcomes()
                    state.apply_action(outcomes[int(rand() * len(outcomes))][0])
                    continue
                state.information_state_tensor()
                state.legal_actions_mask()
                legal = state.legal_actions()
                state.apply_action(legal[int(rand() * len(legal))])
        return hands * OPENSPIEL_CARDS_PER_HAND

    count, seconds = cpu(work)
    return count / seconds


def core_loop(sim: Any, hands: int, deal: str = "fast") -> float:
    count, seconds = cpu(lambda: sim.play_random_hands(PLAYERS, hands, 1, deal) / CARDS_PER_HAND)
    return count / seconds


def python_step(sim: Any, hands: int) -> float:
    game = sim.Game(PLAYERS, "bench", target_score=10**9, max_hands=10**9)
    rand = random.Random(1).random
    step = game.step

    def work() -> float:
        start = game.hand_index
        legal = game.legal_actions()
        for _ in range(hands * ACTIONS_PER_HAND):
            legal = step(legal[int(rand() * len(legal))])
        return float(game.hand_index - start)

    count, seconds = cpu(work)
    return count / seconds


def python_step_apply(sim: Any, hands: int) -> float:
    game = sim.Game(PLAYERS, "bench", target_score=10**9, max_hands=10**9)
    rand = random.Random(1).random
    legal_actions, apply_action = game.legal_actions, game.apply_action

    def work() -> float:
        start = game.hand_index
        for _ in range(hands * ACTIONS_PER_HAND):
            legal = legal_actions()
            apply_action(legal[int(rand() * len(legal))])
        return float(game.hand_index - start)

    count, seconds = cpu(work)
    return count / seconds


def aec_step(hands: int) -> float | None:
    try:
        pettingzoo_env: Any = importlib.import_module("hearts_client.sim.pettingzoo")
    except ImportError:
        return None
    import numpy as np

    env = pettingzoo_env.env(players=PLAYERS, seed=1)
    rng = np.random.default_rng(1)
    rand = random.Random(1).random
    flatnonzero = np.flatnonzero
    env.reset(seed=1)

    def work() -> float:
        actions = 0
        while actions < hands * ACTIONS_PER_HAND:
            for _agent in env.agent_iter():
                observation, _reward, termination, truncation, _info = env.last()
                if termination or truncation:
                    env.step(None)
                    continue
                legal = flatnonzero(observation["action_mask"])
                env.step(int(legal[int(rand() * len(legal))]))
                actions += 1
                if actions >= hands * ACTIONS_PER_HAND:
                    break
            else:
                env.reset(seed=int(rng.integers(1 << 30)))
        return actions / ACTIONS_PER_HAND

    count, seconds = cpu(work)
    return count / seconds


def aec_floor(hands: int) -> float | None:
    """Hands/s of an AEC environment that does no game work (see the module's docstring)."""
    try:
        pettingzoo_env: Any = importlib.import_module("hearts_client.sim.pettingzoo")
        import numpy as np
        from gymnasium import spaces
        from pettingzoo import AECEnv
    except ImportError:
        return None
    from hearts_client.sim import NUM_ACTIONS, obs_size

    size = obs_size(PLAYERS)
    actions_count = NUM_ACTIONS

    class Empty(AECEnv):  # type: ignore[misc]
        metadata: ClassVar[dict[str, Any]] = {"name": "empty_v0", "is_parallelizable": False}

        def __init__(self) -> None:
            super().__init__()
            self.possible_agents = [f"player_{i}" for i in range(PLAYERS)]
            self.observation_spaces = {
                a: spaces.Dict(
                    {
                        "observation": spaces.Box(0.0, 1.0, (size,), np.float32),
                        "action_mask": spaces.Box(0, 1, (actions_count,), np.int8),
                    }
                )
                for a in self.possible_agents
            }
            self.action_spaces = {a: spaces.Discrete(actions_count) for a in self.possible_agents}

        def observation_space(self, agent: str) -> Any:
            return self.observation_spaces[agent]

        def action_space(self, agent: str) -> Any:
            return self.action_spaces[agent]

        def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
            self.agents = list(self.possible_agents)
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
            self.terminations = dict.fromkeys(self.agents, False)
            self.truncations = dict.fromkeys(self.agents, False)
            self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
            self._turn = 0
            self.agent_selection = self.agents[0]

        def observe(self, agent: str) -> dict[str, Any]:
            mask = np.zeros(actions_count, dtype=np.int8)
            mask[:13] = 1
            return {"observation": np.empty(size, dtype=np.float32), "action_mask": mask}

        # The very same last() as the real environment: the bound does its per-step work.
        last = pettingzoo_env.raw_env.last

        def step(self, action: Any) -> None:
            self._turn += 1
            self.agent_selection = self.agents[self._turn % PLAYERS]

    env = pettingzoo_env._OrderEnforcing(Empty())
    rand = random.Random(1).random
    flatnonzero = np.flatnonzero
    env.reset(seed=1)

    def work() -> float:
        actions = 0
        for _agent in env.agent_iter():
            observation, _reward, _termination, _truncation, _info = env.last()
            legal = flatnonzero(observation["action_mask"])
            env.step(int(legal[int(rand() * len(legal))]))
            actions += 1
            if actions >= hands * ACTIONS_PER_HAND:
                break
        return actions / ACTIONS_PER_HAND

    count, seconds = cpu(work)
    return count / seconds


def vec(sim: Any, steps: int, games: int = 256) -> float:
    batch = sim.VecGame(games, PLAYERS, "bench", target_score=10**9, max_hands=10**9)
    count, seconds = cpu(lambda: batch.step_random(steps))
    return count / seconds


def vec_numpy(sim: Any, steps: int, games: int = 256) -> float:
    import numpy as np

    batch = sim.VecGame(games, PLAYERS, "bench", max_hands=10**9, target_score=10**9)
    masks = np.zeros((games, sim.NUM_ACTIONS), dtype=np.uint8)
    rewards = np.zeros((games, PLAYERS), dtype=np.float32)
    dones = np.zeros(games, dtype=np.uint8)
    rng = np.random.default_rng(1)

    def work() -> float:
        for _ in range(steps):
            batch.legal_masks(masks)
            # A random legal action per game: the argmax of random keys on the legal entries.
            keys = rng.random(masks.shape, dtype=np.float32) * masks
            batch.step(keys.argmax(axis=1), rewards, dones)
        return steps * games / ACTIONS_PER_HAND

    count, seconds = cpu(work)
    return count / seconds


def clones_per_s(sim: Any, n: int) -> float:
    game = sim.Game(PLAYERS, "clone")
    for _ in range(60):
        game.apply_action(game.legal_actions()[0])

    def work() -> float:
        for _ in range(n):
            game.clone()
        return n

    count, seconds = cpu(work)
    return count / seconds


def heuristic_rollouts_per_s(sim: Any, n: int) -> float:
    game = sim.Game(PLAYERS, "rollout")
    while game.phase != sim.PLAY:
        game.apply_action(game.legal_actions()[0])

    def work() -> float:
        for _ in range(n):
            game.clone().play_out("heuristic", hands=1)
        return n

    count, seconds = cpu(work)
    return count / seconds


def sampled_worlds_per_s(sim: Any, n: int) -> tuple[float | None, float, float | None]:
    """Worlds per second from ``hearts_sim.sample_worlds`` and from the SDK's Python sampler,
    for an 8-player view 40 cards into a hand (the same worlds from the same seed), and games per
    second from ``hearts_sim.sample_games``; the native figures are None when ``sim`` is None."""
    from hearts_client.sampler import WorldSampler
    from hearts_core.deal import deal_hand
    from hearts_core.rules import Rules
    from hearts_core.state import State
    from hearts_core.view import build_view

    rules = Rules(PLAYERS)
    state = State(rules)
    state.start_hand(*deal_hand(rules, "worlds", 0))
    rng = random.Random(3)
    for seat in range(PLAYERS):
        state.pass_cards(seat, rng.sample(list(state.hands[seat]), 3))
    for _ in range(40):
        state.play(rng.choice(state.legal_plays()))
    view = build_view(state, state.to_play)

    def python() -> float:
        sampler, stream = WorldSampler(view), random.Random(1)
        for _ in range(n):
            sampler.sample(stream)
        return n

    count, seconds = cpu(python)
    if sim is None:
        return None, count / seconds, None
    native, native_s = cpu(lambda: len(sim.sample_worlds(view, n, 1)))
    games, games_s = cpu(lambda: len(sim.sample_games(view, n, 1)))
    return native / native_s, count / seconds, games / games_s


def middle(runs: list[float | None]) -> float | None:
    """The median of a figure's runs; None when the figure is not available."""
    if any(r is None for r in runs):
        return None
    return float(statistics.median(r for r in runs if r is not None))


def _round(figure: float | None) -> float | None:
    return None if figure is None else round(figure, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--quick", action="store_true", help="a tenth of the work (a rough figure)")
    parser.add_argument(
        "--repeat", type=int, default=1, metavar="N", help="measure every figure N times, report the medians"
    )
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, not {args.repeat}")
    scale = 0.1 if args.quick else 1.0

    def n(x: int) -> int:
        return max(1, int(x * scale))

    try:
        selected = importlib.import_module("hearts_client.sim")
        native = selected.BACKEND == "native"
        sim: Any = importlib.import_module("hearts_sim" if native else "hearts_client.sim._python")
    except ImportError as exc:
        raise SystemExit(f"bench/sim.py: {exc}") from None
    if not native:
        scale /= 10

    def on_native(measure: Callable[[], float | None]) -> Callable[[], float | None]:
        return measure if native else lambda: None

    def median(measure: Callable[[], float | None]) -> float | None:
        return middle([measure() for _ in range(args.repeat)])

    baseline = median(lambda: openspiel_cards_per_s(n(20000)))
    baseline_python = median(lambda: openspiel_python_cards_per_s(n(300)))

    def row(hands_per_s: float | None, python_base: bool = False) -> dict[str, float | None]:
        if hands_per_s is None:
            return {"hands_per_s": None, "x_openspiel": None}
        ratio = hands_per_s * CARDS_PER_HAND / baseline if baseline else None
        out = {"hands_per_s": round(hands_per_s, 1), "x_openspiel": round(ratio, 3) if ratio else None}
        if python_base:
            vs = hands_per_s * CARDS_PER_HAND / baseline_python if baseline_python else None
            out["x_openspiel_python"] = round(vs, 2) if vs else None
        return out

    worlds_runs = [sampled_worlds_per_s(sim if native else None, n(5000)) for _ in range(args.repeat)]
    worlds, worlds_python, games = (middle([run[i] for run in worlds_runs]) for i in range(3))
    out: dict[str, Any] = {
        "backend": selected.BACKEND,
        "players": PLAYERS,
        "repeat": args.repeat,
        "openspiel_cards_per_s": round(baseline, 1) if baseline else None,
        "openspiel_python_cards_per_s": round(baseline_python, 1) if baseline_python else None,
        "core_loop": row(median(on_native(lambda: core_loop(sim, n(300000))))),
        "core_loop_referee_deal": row(median(on_native(lambda: core_loop(sim, n(100000), "referee")))),
        "python_step": row(median(lambda: python_step(sim, n(8000)))),
        "python_step_apply": row(median(lambda: python_step_apply(sim, n(8000)))),
        "aec_step": row(median(lambda: aec_step(n(300))), python_base=True),
        "aec_floor": row(median(lambda: aec_floor(n(300))), python_base=True),
        "vec": row(median(lambda: vec(sim, n(60000)))),
        "vec_numpy": row(median(lambda: vec_numpy(sim, n(2000)))),
        "clones_per_s": round(median(lambda: clones_per_s(sim, n(300000))) or 0.0, 1),
        "heuristic_rollouts_per_s": round(median(lambda: heuristic_rollouts_per_s(sim, n(20000))) or 0.0, 1),
        "sampled_worlds_per_s": _round(worlds),
        "sampled_worlds_per_s_python": _round(worlds_python),
        "sampled_games_per_s": _round(games),
    }
    if args.json:
        print(json.dumps(out))
        return
    print(
        f"random {PLAYERS}-player hands per CPU second (x OpenSpiel C++ Hearts in cards/s), "
        f"the {selected.BACKEND} backend"
    )
    if baseline is None:
        print("  OpenSpiel: not installed (pip install open_spiel): no ratios")
    else:
        print(f"  OpenSpiel C++ Hearts, evaluate_bots, random bots: {baseline:,.0f} cards/s")
        if baseline_python:
            print(f"  OpenSpiel Hearts stepped from Python, tensor + mask: {baseline_python:,.0f} cards/s")
    for key, label in [
        ("core_loop", "(a) inside the core loop"),
        ("core_loop_referee_deal", "    the same, the referee's deal"),
        ("python_step", "(b) Python chooses every action (Game.step)"),
        ("python_step_apply", "    the same, legal_actions + apply_action"),
        ("aec_step", "(c) PettingZoo AEC step, observation + mask"),
        ("aec_floor", "    bound: an AEC env that does no game work"),
        ("vec", "(d) VecGame.step_random, 256 games, one core"),
        ("vec_numpy", "    VecGame.step from numpy, 256 games"),
    ]:
        figure = out[key]
        if figure["hands_per_s"] is None:
            missing = (
                "the native core only"
                if key.startswith("core_loop")
                else "hearts_client.sim.pettingzoo not installed"
            )
            print(f"  {label:<46} not available ({missing})")
            continue
        ratio = f"{figure['x_openspiel']:.2f}x" if figure["x_openspiel"] else "-"
        extra = ""
        if figure.get("x_openspiel_python"):
            extra = f"  ({figure['x_openspiel_python']:.2f}x OpenSpiel stepped from Python)"
        print(f"  {label:<46} {figure['hands_per_s']:>12,.0f} hands/s  {ratio:>8}{extra}")
    print(f"  Game.clone: {out['clones_per_s']:,.0f}/s")
    print(f"  clone + heuristic play to the end of the hand: {out['heuristic_rollouts_per_s']:,.0f}/s")
    if worlds is None or games is None:
        print(f"  sampled worlds: the SDK's Python sampler {worlds_python:,.0f}/s")
        return
    print(
        f"  sampled worlds: hearts_sim.sample_worlds {worlds:,.0f}/s, "
        f"the SDK's Python sampler {worlds_python:,.0f}/s; "
        f"hearts_sim.sample_games (a Game per world) {games:,.0f}/s"
    )


if __name__ == "__main__":
    main()
