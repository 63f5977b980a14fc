"""The ``ismcts`` bot: legal whole games in-process and as a real process against the real server."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

from cancellation_hearts.v1 import admin_service_pb2 as apb
from hearts_client.bot import Bot
from hearts_client.bots import BUILTIN_BOTS, make_bot
from hearts_client.bots.heuristic import HeuristicBot
from hearts_client.bots.ismcts import IsmctsBot
from hearts_core.local import play_game
from hearts_core.rules import Rules
from hearts_core.state import State
from hearts_tournaments.arena.host import bot_command
from tests.helpers.cli import hearts
from tests.helpers.harness import await_table, create_table, running_server, sdk_bot
from tests.helpers.shared import Witness


@pytest.mark.parametrize("players", [6, 8, 11])
def test_ismcts_plays_whole_games_legally(players: int) -> None:
    seats = [
        Witness(
            IsmctsBot(seat, iterations=12, pass_worlds=2, time_limit=None)
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
        seats: list[Bot] = [IsmctsBot("same", iterations=20, pass_worlds=2, time_limit=None)]
        seats += [HeuristicBot(s) for s in range(6)]
        return play_game(Rules(players=7, target_score=30), "determinism", seats)

    first, second = game(), game()
    assert [r.plays for r in first.results] == [r.plays for r in second.results]
    assert [r.passes for r in first.results] == [r.passes for r in second.results]


def test_ismcts_is_a_builtin_and_checks_its_budget() -> None:
    assert BUILTIN_BOTS["ismcts"] is IsmctsBot and isinstance(make_bot("ismcts", 1), IsmctsBot)
    for bad in ({"iterations": 0}, {"pass_worlds": 0}, {"time_limit": 0.0}):
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
