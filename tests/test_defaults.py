"""The referee's default limits are written once (hearts_core.defaults) and every layer agrees."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from typing import Any

import typer.main

from hearts_core.defaults import DEFAULT_POLICY, TablePolicy
from hearts_core.rules import DEFAULT_TARGET_SCORE, Rules
from hearts_server.registry import Registry
from hearts_server.table import TableSettings
from hearts_tournaments.arena.host import HostOptions
from hearts_tournaments.cli.main import app
from hearts_tournaments.league.config import LeagueConfig
from hearts_tournaments.tournament.config import TournamentConfig
from tests.conftest import ROOT

LIMITS = DEFAULT_POLICY.to_json()


def policy_default(cls: Any) -> Any:
    """The default of a dataclass's ``policy`` field."""
    (policy,) = [f.default for f in dataclasses.fields(cls) if f.name == "policy"]
    return policy


def option_defaults(*command: str) -> dict[str, Any]:
    """The defaults of a ``hearts`` command's options, by parameter name."""
    click_command: Any = typer.main.get_command(app)
    for name in command:
        # The root loads its sub-apps lazily (cli/lazy.py): load the one asked for.
        loaded = click_command.load(name) if hasattr(click_command, "load") else None
        click_command = loaded or click_command.commands[name]
    return {p.name: p.default for p in click_command.params}


def test_the_policy_type_holds_the_defaults() -> None:
    assert TablePolicy() == DEFAULT_POLICY
    assert LIMITS == {"decision_ms": 1000, "time_bank_ms": 60_000, "max_faults": 5, "join_timeout_ms": 60_000}


def test_the_referee_takes_the_defaults() -> None:
    table = TableSettings(rules=Rules(players=6), bot_names=("x",) * 6)
    assert table.policy == DEFAULT_POLICY
    assert Registry(None).defaults == DEFAULT_POLICY


def test_tournaments_leagues_and_hosting_take_the_defaults() -> None:
    for cls in (TournamentConfig, LeagueConfig, HostOptions):
        assert policy_default(cls) == DEFAULT_POLICY, cls
        assert not {f.name for f in dataclasses.fields(cls)} & set(LIMITS), f"{cls} declares a policy field"
    assert HostOptions(seats=("random",) * 6).target_score == DEFAULT_TARGET_SCORE


def test_the_command_line_takes_the_defaults() -> None:
    for command in (("serve",), ("host",), ("league", "init")):
        options = option_defaults(*command)
        assert {k: options[k] for k in LIMITS} == LIMITS, command
    assert option_defaults("host")["target_score"] == option_defaults("play")["target_score"]
    assert option_defaults("play")["target_score"] == DEFAULT_TARGET_SCORE


def test_the_documentation_states_the_defaults() -> None:
    doc = (ROOT / "docs" / "TOURNAMENTS.md").read_text()
    example = next(b for b in re.findall(r"```toml\n(.*?)```", doc, flags=re.S) if "[[bots]]" in b)
    documented = tomllib.loads(example)["tournament"]
    assert {k: documented[k] for k in LIMITS} == LIMITS
    proto = (ROOT / "proto" / "cancellation_hearts" / "v1" / "admin_service.proto").read_text()
    assert f"server's default ({LIMITS['join_timeout_ms']})" in proto
