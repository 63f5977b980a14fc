"""The ``montecarlo`` bot: legal full games, determinism, its objective and its rollouts."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from hearts_client.bot import Bot, moon_choice
from hearts_client.bots import BUILTIN_BOTS, make_bot
from hearts_client.bots.heuristic import HeuristicBot
from hearts_client.bots.montecarlo import (
    LOSS_VALUE,
    PLACE_STEP,
    WIN_VALUE,
    MonteCarloBot,
    Objective,
    hand_scores,
)
from hearts_client.sampler import WorldSampler
from hearts_client.sim import Game
from hearts_core.cards import CARDS
from hearts_core.deal import deal_hand
from hearts_core.local import play_game
from hearts_core.rules import MoonChoice, Rules
from hearts_core.state import State
from hearts_core.view import build_view
from tests.helpers.shared import Witness


@pytest.mark.parametrize("players", [6, 8, 11])
def test_montecarlo_plays_whole_games_legally(players: int) -> None:
    rules = Rules(players=players, target_score=40)
    seats = [
        Witness(MonteCarloBot(seat, worlds=2) if seat % 3 == 0 else HeuristicBot(seat))
        for seat in range(players)
    ]
    state = play_game(rules, f"mc-{players}", seats)
    assert state.game_over
    assert sum(s.plays for s in seats[::3]) > 20


def test_montecarlo_is_deterministic_for_a_seed() -> None:
    def game() -> State:
        seats: list[Bot] = [MonteCarloBot("same", worlds=3), *(HeuristicBot(s) for s in range(6))]
        return play_game(Rules(players=7, target_score=30), "determinism", seats)

    first, second = game(), game()
    assert [r.plays for r in first.results] == [r.plays for r in second.results]
    assert first.totals == second.totals


def test_montecarlo_is_a_builtin() -> None:
    assert BUILTIN_BOTS["montecarlo"] is MonteCarloBot
    assert isinstance(make_bot("montecarlo", 1), MonteCarloBot)


def test_a_time_budget_still_decides() -> None:
    bot = MonteCarloBot(1, worlds=10**6, time_limit=0.01)
    state = _started(8, "time")
    view = build_view(state, state.to_play)
    assert bot.choose_play(view) in view.legal


@pytest.mark.parametrize(
    ("worlds", "time_limit"), [(0, None), (1, 0.0), (1, -1.0)], ids=["no-worlds", "zero", "negative"]
)
def test_bad_budgets_are_refused(worlds: int, time_limit: float | None) -> None:
    with pytest.raises(ValueError):
        MonteCarloBot(1, worlds=worlds, time_limit=time_limit)


def _started(players: int, seed: str, totals: Sequence[int] | None = None) -> State:
    """A hand of heuristic bots after the pass, ready for its first play."""
    rules = Rules(players=players)
    state = State(rules)
    if totals is not None:
        state.totals = list(totals)
    state.start_hand(*deal_hand(rules, seed, 0))
    bots = [HeuristicBot(s) for s in range(players)]
    for seat, bot in enumerate(bots):
        state.pass_cards(seat, list(bot.choose_pass(build_view(state, seat))))
    return state


def test_a_rollout_collects_every_point_once() -> None:
    """The bot's rollout, in a sampled world: every point of the two decks is collected by one
    seat or left uncollected (a set-aside last trick, and what waits with it)."""
    for seed in range(20):
        state = _started(9, f"rollout-{seed}")
        view = build_view(state, state.to_play)
        world = WorldSampler(view).sample(random.Random(seed))
        base = Game.from_view(view, world)
        for card in view.legal:
            game = base.clone()
            game.apply_action(int(card))
            game.play_out("heuristic", hands=1)
            last = game.last_hand()
            assert min(last["points"]) >= 0
            assert sum(last["points"]) + sum(CARDS[c].points for c in last["uncollected"]) == 52


def test_the_objective_counts_points_away_from_the_endgame() -> None:
    view = build_view(_started(8, "objective"), 0)
    value = Objective(view)
    assert not value.endgame
    assert value([3, 0, 0, 0, 49, 0, 0, 0]) == 3.0
    # A moon shot by another seat: it takes 26 off itself, the others score nothing.
    assert value([0, 0, 52, 0, 0, 0, 0, 0]) == 0.0
    assert value([52, 0, 0, 0, 0, 0, 0, 0]) == -26.0


def test_the_objective_plays_for_placing_in_the_endgame() -> None:
    totals = [100, 140, 90, 120, 110, 130, 95, 105]
    view = build_view(_started(8, "endgame", totals), 0)
    value = Objective(view)
    assert value.endgame
    # Seat 1 passes 150 and the game ends: seat 0 (100 + 0) is beaten by seat 2 (90 + 5) only.
    ends_second = [0, 10, 5, 0, 0, 0, 37, 0]
    assert value(ends_second) == LOSS_VALUE
    ends_third = [0, 10, 5, 0, 0, 0, 4, 33]
    assert value(ends_third) == LOSS_VALUE + PLACE_STEP
    ends_first = [0, 10, 20, 0, 0, 0, 22, 0]
    assert value(ends_first) == WIN_VALUE
    # Nobody reaches 150: the margin over the best other total counts.
    goes_on = [4, 0, 1, 0, 0, 0, 47, 0]
    assert value(goes_on) == 104 - 91
    assert WIN_VALUE < value(goes_on) < LOSS_VALUE


def test_the_moon_choice_ends_the_game_only_to_win_it() -> None:
    assert moon_choice(0, [10, 130, 140], 150) is MoonChoice.OTHERS_PLUS_26
    assert moon_choice(0, [120, 130, 90], 150) is MoonChoice.SELF_MINUS_26
    assert moon_choice(0, [10, 20, 30], 150) is MoonChoice.SELF_MINUS_26
    assert hand_scores([52, 0, 0], [10, 130, 140], 150) == [0, 26, 26]
    assert hand_scores([52, 0, 0], [10, 20, 30], 150) == [-26, 0, 0]
