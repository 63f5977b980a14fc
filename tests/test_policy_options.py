"""The table policy on the command line: one set of options for every command, and each value
reaches the referee's table.

``hearts serve``, ``hearts host`` and ``hearts league init`` take the same four options
(:mod:`hearts_tournaments.cli.policy_options`); each run here is the real CLI in a subprocess, and
what reached the table is read back from the referee itself: the game's record (the limit per
decision, the time bank, the faults) and its ``table_created`` log line (all four, the join
timeout included, which nothing else a table sends shows).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main

from cancellation_hearts.v1 import admin_service_pb2 as apb
from cancellation_hearts.v1 import admin_service_pb2_grpc as agrpc
from hearts_core.defaults import TablePolicy
from hearts_protocol.transport import own_channel
from hearts_tournaments.cli.main import app
from hearts_tournaments.cli.policy_options import POLICY_OPTIONS
from hearts_tournaments.league.config import LeagueConfig
from hearts_tournaments.league.play import play_settings
from hearts_tournaments.league.store import LeagueStore
from hearts_tournaments.tournament.config import parse_config
from tests.helpers.cli import hearts
from tests.helpers.harness import await_table, create_table

COMMANDS = [("serve",), ("host",), ("league", "init")]
#: A policy no default matches, field by field.
GIVEN = TablePolicy(decision_ms=1234, time_bank_ms=43_210, max_faults=7, join_timeout_ms=123_457)
GIVEN_ARGS = [
    "--decision-ms",
    str(GIVEN.decision_ms),
    "--time-bank-ms",
    str(GIVEN.time_bank_ms),
    "--max-faults",
    str(GIVEN.max_faults),
    "--join-timeout-ms",
    str(GIVEN.join_timeout_ms),
]


def click_command(*names: str) -> Any:
    command: Any = typer.main.get_command(app)
    for name in names:
        # The root loads its sub-apps lazily (cli/lazy.py): load the one asked for.
        command = command.load(name) if hasattr(command, "load") else command.commands[name]
    return command


def policy_params(*names: str) -> dict[str, tuple[Any, ...]]:
    """The policy options of a command: each one's names, help, bounds and default."""
    out = {}
    for param in click_command(*names).params:
        if any(opt in POLICY_OPTIONS for opt in param.opts):
            out[param.opts[0]] = (tuple(param.opts), param.help, param.min, param.max, param.default)
    return out


def test_every_command_that_takes_the_policy_declares_the_same_options() -> None:
    declared = {command: policy_params(*command) for command in COMMANDS}
    assert set(declared[("serve",)]) == set(POLICY_OPTIONS)
    for command, params in declared.items():
        assert params == declared[("serve",)], command


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_each_command_s_help_lists_the_policy_options(command: tuple[str, ...]) -> None:
    result = hearts(*command, "--help", timeout=60)
    assert result.returncode == 0, result.stderr
    for option in POLICY_OPTIONS:
        assert option in result.stdout, (command, option)


def table_created(log: str) -> dict[str, Any]:
    """The referee's ``table_created`` line of a JSON log (one table)."""
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    (line,) = [entry for entry in lines if entry.get("event") == "table_created"]
    return line


def reached(record: dict[str, Any], created: dict[str, Any]) -> TablePolicy:
    """The policy the referee's table played by: the record's limits, the log's join timeout."""
    assert {k: created[k] for k in ("decision_ms", "time_bank_ms", "max_faults")} == {
        k: record[k] for k in ("decision_ms", "time_bank_ms", "max_faults")
    }
    return TablePolicy.from_json(created)


def test_serve_s_options_are_the_policy_of_a_table_that_leaves_it_unset(tmp_path: Path) -> None:
    records = tmp_path / "games"
    log = tmp_path / "serve.log"
    serve = subprocess.Popen(
        [
            *(sys.executable, "-m", "hearts_tournaments", "--log-format", "json", "serve", "--port", "0"),
            *("--records", str(records), "--open-admin", *GIVEN_ARGS),
        ],
        stdout=subprocess.PIPE,
        stderr=log.open("wb"),
        text=True,
        env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")},
    )
    try:
        assert serve.stdout is not None
        line = serve.stdout.readline()
        assert line.startswith("referee listening on "), (line, log.read_text()[-2000:])
        address = line.split()[-1]

        async def scenario() -> dict[str, Any]:
            # Nothing of the policy in the config: the server's (its options') apply. Every seat
            # is released: the referee plays the hand for all of them at once.
            created = await create_table(address, ["x"] * 6, max_hands=1, seed="policy")
            async with own_channel(address) as channel:
                admin = agrpc.AdminServiceStub(channel)
                for seat in range(6):
                    await admin.ReleaseSeat(apb.ReleaseSeatRequest(table_id=created.table_id, seat=seat))
            table = await await_table(address, created.table_id)
            (game,) = table.games
            record: dict[str, Any] = json.loads(game.record_json)
            return record

        record = asyncio.run(scenario())
    finally:
        serve.terminate()
        serve.wait(30)
    assert reached(record, table_created(log.read_text())) == GIVEN


def test_host_s_options_are_its_table_s_policy(tmp_path: Path) -> None:
    seats = ",".join(["random"] * 6)
    args = ["--seats", seats, "--target-score", "20", "--sandbox", "none", "--json"]
    # The bots are built in and start at once; they must join, so the join timeout is long.
    given = TablePolicy(decision_ms=1234, time_bank_ms=43_210, max_faults=7, join_timeout_ms=123_456)
    result = hearts(
        "--log-format",
        "json",
        "host",
        *args,
        "--out",
        str(tmp_path / "games"),
        "--decision-ms",
        str(given.decision_ms),
        "--time-bank-ms",
        str(given.time_bank_ms),
        "--max-faults",
        str(given.max_faults),
        "--join-timeout-ms",
        str(given.join_timeout_ms),
        timeout=240,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    summary = json.loads(result.stdout.splitlines()[-1])
    (game,) = summary["games"]
    record = json.loads(Path(game["record"]).read_text())
    assert reached(record, table_created(result.stderr)) == given


def test_league_init_s_options_are_the_policy_of_its_games(tmp_path: Path) -> None:
    folder = tmp_path / "league"
    result = hearts("league", "init", str(folder), "--sandbox", "none", *GIVEN_ARGS, timeout=60)
    assert result.returncode == 0, result.stderr
    with LeagueStore.open(folder) as store:
        assert store.config.policy == GIVEN
        # What the league's games are played by: the runner asks the referee for these.
        assert play_settings(store).policy == GIVEN


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_policy_value_out_of_bounds_is_one_clear_error(command: tuple[str, ...], tmp_path: Path) -> None:
    folder = [str(tmp_path / "league")] if command == ("league", "init") else []
    result = hearts(*command, *folder, "--decision-ms", "600001", timeout=60)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert "--decision-ms" in line and "600000" in line, line


def test_old_configs_keep_their_keys() -> None:
    text = """
[tournament]
table_size = 6
decision_ms = 1234
time_bank_ms = 43210
max_faults = 7
join_timeout_ms = 123457

[[bots]]
name = "r"
builtin = "random"

[[bots]]
name = "h"
builtin = "heuristic"
"""
    assert parse_config(text, Path(".")).policy == GIVEN
    stored = {"name": "old", "table_size": 6, "seed": "1", **GIVEN.to_json(), "target_score": 100}
    config = LeagueConfig.from_json(stored)
    assert config.policy == GIVEN
    assert config.to_json() == {**LeagueConfig(name="old", policy=GIVEN).to_json(), **stored}
