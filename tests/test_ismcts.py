"""The ``ismcts`` bot: legal whole games in-process and as a real process against the real server."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from cancellation_hearts.v1 import admin_service_pb2 as apb
from hearts_client.bot import Bot
from hearts_client.bots import BUILTIN_BOTS, make_bot
from hearts_client.bots.heuristic import HeuristicBot
from hearts_client.bots.ismcts import IsmctsBot
from hearts_core.cards import Card
from hearts_core.local import play_game
from hearts_core.rules import Rules
from hearts_core.state import State
from hearts_core.view import View
from hearts_tournaments.arena.host import bot_command
from tests.helpers.cli import hearts
from tests.helpers.harness import await_table, create_table, running_server, sdk_bot
from tests.helpers.shared import Witness


@pytest.mark.parametrize("players", [6, 8, 11])
def test_ismcts_plays_whole_games_legally(players: int) -> None:
    seats = [
        Witness(
            IsmctsBot(seat, iterations=12, pass_worlds=2, safety_limit=None)
            if seat % 3 == 0
            else HeuristicBot(seat)
        )
        for seat in range(players)
    ]
    state = play_game(Rules(players=players, target_score=40), f"is-{players}", seats)
    assert state.game_over
    assert sum(s.plays for s in seats[::3]) > 20 and sum(s.passes for s in seats[::3]) >= 2


def test_ismcts_is_deterministic_without_a_time_cap() -> None:
    def game() -> State:
        seats: list[Bot] = [IsmctsBot("same", iterations=20, pass_worlds=2, safety_limit=None)]
        seats += [HeuristicBot(s) for s in range(6)]
        return play_game(Rules(players=7, target_score=30), "determinism", seats)

    first, second = game(), game()
    assert [r.plays for r in first.results] == [r.plays for r in second.results]
    assert [r.passes for r in first.results] == [r.passes for r in second.results]


class SlowMachine:
    """A wall clock on which every reading finds ``step`` seconds gone: a machine on which each
    unit of search work (one iteration, one world) takes that long, as on a loaded host."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.now = 0.0

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def _game_with_clock(clock: Callable[[], float] | None, **budget: int) -> tuple[State, IsmctsBot]:
    """Two hands at 8 seats: one ``ismcts`` seat, with its default safety stop, among heuristics.

    ``clock`` None: the bot reads ``time.perf_counter``.
    """
    clocked = {} if clock is None else {"clock": clock}
    bot = IsmctsBot("clocked", **budget, **clocked)  # type: ignore[arg-type]
    seats: list[Bot] = [bot, *(HeuristicBot(s) for s in range(1, 8))]
    state = play_game(Rules(players=8, max_hands=2), "clocked", seats)
    return state, bot


@pytest.mark.timeout(600)
def test_ismcts_plays_the_same_on_a_loaded_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    # The same game on an idle machine (the clock never moves) and on one where each unit of
    # search work takes 0.8 ms: 600 iterations then take about 0.5 s a decision, and a pass
    # (56 candidates on 12 worlds) about 0.55 s, within the 0.8 s safety stop and the referee's
    # 1 s limit, and the budgets alone must decide. (A 0.4 s wall-clock cap used to decide
    # instead: the loaded machine searched less and played other cards.)
    budget = {"iterations": 600, "worlds": 30, "pass_worlds": 12}
    monkeypatch.setattr(time, "perf_counter", lambda: 0.0)
    idle, idle_bot = _game_with_clock(None, **budget)
    monkeypatch.setattr(time, "perf_counter", SlowMachine(0.0008))
    loaded, loaded_bot = _game_with_clock(None, **budget)
    assert [r.passes for r in loaded.results] == [r.passes for r in idle.results]
    assert [r.plays for r in loaded.results] == [r.plays for r in idle.results]
    assert idle_bot.decisions == loaded_bot.decisions > 15  # most of two hands of 13 cards
    assert idle_bot.cut_short == loaded_bot.cut_short == 0


def test_the_safety_stop_cuts_decisions_short_and_counts_them(caplog: pytest.LogCaptureFixture) -> None:
    # A clock that says the time is up at every reading: every searched decision is cut short
    # (still legal, on the work done so far), counted and logged.
    caplog.set_level(logging.WARNING, logger="hearts_client.bots.ismcts")
    state, bot = _game_with_clock(SlowMachine(10.0), iterations=600, worlds=30, pass_worlds=20)
    assert state.game_over and bot.decisions > 20
    assert bot.cut_short == bot.decisions
    logged = [r for r in caplog.records if r.getMessage().startswith("ismcts_cut_short")]
    assert len(logged) == bot.decisions
    assert logged[-1].fields["cut_short"] == bot.decisions  # type: ignore[attr-defined]


def test_the_safety_stop_keeps_within_the_referees_time_left() -> None:
    # Over gRPC the stop comes at TIME_LEFT_SHARE of the referee's time_left: 20 ms left, 1 ms a reading.
    bot = IsmctsBot(
        "left", iterations=600, worlds=30, pass_worlds=20, safety_limit=None, clock=SlowMachine(0.001)
    )
    bot.time_left = 0.02
    seats: list[Bot] = [Witness(bot), *(HeuristicBot(s) for s in range(1, 6))]
    play_game(Rules(players=6, max_hands=1), "left", seats)
    assert bot.decisions > 5 and bot.cut_short == bot.decisions
    unlimited = IsmctsBot(
        "left", iterations=50, worlds=10, pass_worlds=4, safety_limit=None, clock=SlowMachine(10.0)
    )
    play_game(Rules(players=6, max_hands=1), "left", [unlimited, *(HeuristicBot(s) for s in range(1, 6))])
    assert unlimited.decisions > 5 and unlimited.cut_short == 0


class _BeliefChecker(Witness):
    """After each play decision, checks every world the bot keeps against the View it was shown."""

    def __init__(self, bot: IsmctsBot) -> None:
        super().__init__(bot)
        self.checked = 0

    def choose_play(self, view: View) -> Card:
        card = super().choose_play(view)
        bot = self.bot
        assert isinstance(bot, IsmctsBot)
        belief = bot._belief
        if len(view.legal) == 1 or belief is None:
            return card
        assert view.current is not None and belief.games and min(belief.misses) >= 0
        for game in belief.games:
            # The world is at the position the View shows: the seat's own hand exactly, every
            # seat's hand size, the trick in progress; the rest of it is the world's guess.
            assert game.current_player == view.seat
            assert game.hand(view.seat) == sorted(int(c) for c in view.hand)
            assert [len(game.hand(s)) for s in range(view.players)] == list(view.hand_sizes)
            assert [c for _, c in game.trick()] == [int(c) for c in view.current.cards]
        self.checked += 1
        return card


@pytest.mark.parametrize("players", [6, 8, 11])
def test_the_worlds_kept_through_the_hand_agree_with_each_view(players: int) -> None:
    checker = _BeliefChecker(IsmctsBot(players, iterations=40, worlds=8, pass_worlds=2, safety_limit=None))
    seats = [checker, *(HeuristicBot(s) for s in range(1, players))]
    play_game(Rules(players=players, max_hands=2), f"belief-{players}", seats)
    assert checker.checked > 8


def test_ismcts_is_a_builtin_and_checks_its_budget() -> None:
    assert BUILTIN_BOTS["ismcts"] is IsmctsBot and isinstance(make_bot("ismcts", 1), IsmctsBot)
    for bad in ({"iterations": 0}, {"pass_worlds": 0}, {"safety_limit": 0.0}):
        with pytest.raises(ValueError):
            IsmctsBot(1, **bad)  # type: ignore[arg-type]


def test_ismcts_plays_a_clean_game_against_the_real_server(tmp_path: Path) -> None:
    async def scenario() -> apb.GetTableResponse:
        async with running_server(tmp_path / "games") as server:
            names = ["ismcts", "heuristic", "random", "heuristic", "random", "heuristic"]
            table = await create_table(server.address, names, seed="ismcts-e2e", target_score=40)
            token_file = tmp_path / "ismcts.token"
            token_file.write_text(table.seats[0].token)
            process = subprocess.Popen(
                bot_command("ismcts", server.address, token_file, "0"),
                stdout=subprocess.DEVNULL,
                stderr=(tmp_path / "ismcts.log").open("wb"),
            )
            others = [sdk_bot(server.address, s.token, names[s.seat], str(s.seat)) for s in table.seats[1:]]
            try:
                result = await await_table(server.address, table.table_id)
                await asyncio.gather(*others)
            finally:
                assert await asyncio.to_thread(process.wait, 120) == 0
            return result

    table = asyncio.run(scenario())
    (game,) = table.games
    record = json.loads(game.record_json)
    assert record["faults"] == [], record["faults"]
    path = tmp_path / "record.json"
    path.write_text(game.record_json)
    replayed = hearts("replay", str(path))
    assert replayed.returncode == 0 and json.loads(replayed.stdout)["error"] is None


def test_the_strength_bench_reports_the_decisions_the_safety_stop_cut_short(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # On a machine where the time is always up the bench's output says every searched decision
    # of ismcts was cut short; with the stop off (--safety-limit none), none was.
    import bench.strength as strength

    monkeypatch.setattr(time, "perf_counter", SlowMachine(10.0))
    config = strength.Config(bot="ismcts", field="heuristic", players=8, hands=2, seed="stop")
    figures = strength.run(config, jobs=1)
    stops = figures["safety_stop"]
    assert isinstance(stops, dict) and stops["cut_short"] == stops["decisions"] > 5
    assert f"cut short by its safety stop (wall clock): {stops['cut_short']} of" in strength.report(figures)
    assert figures["safety_limit"] == "default"
    unstopped = strength.run(dataclasses.replace(config, hands=1, safety_limit=None), jobs=1)
    stops = unstopped["safety_stop"]
    assert isinstance(stops, dict) and stops["cut_short"] == 0 < stops["decisions"]
    assert unstopped["safety_limit"] is None


def test_the_strength_bench_refuses_a_bad_safety_limit(capsys: pytest.CaptureFixture[str]) -> None:
    import bench.strength as strength

    with pytest.raises(SystemExit) as exit_:
        strength.main(["--bot", "ismcts", "--safety-limit", "-1"])
    assert exit_.value.code == 2
    assert "--safety-limit must be a positive number of seconds, 'none' or 'default', not '-1'" in (
        capsys.readouterr().err
    )
