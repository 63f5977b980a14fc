"""The referee's default limits are written once (hearts_core.defaults) and every layer agrees."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from typing import Any

import typer.main

from hearts_core.defaults import DEFAULT_LIMITS
from hearts_core.rules import DEFAULT_TARGET_SCORE, Rules
from hearts_server.registry import ServerDefaults
from hearts_server.table import TableSettings
from hearts_tournaments.arena.host import HostOptions
from hearts_tournaments.cli.main import app
from hearts_tournaments.tournament.config import TournamentConfig
from tests.conftest import ROOT

LIMITS = dataclasses.asdict(DEFAULT_LIMITS)


def field_defaults(cls: Any) -> dict[str, Any]:
    """The defaults of a dataclass's fields named like those of Limits."""
    return {f.name: f.default for f in dataclasses.fields(cls) if f.name in LIMITS}


def option_defaults(command: str) -> dict[str, Any]:
    """The defaults of a ``hearts`` command's options, by parameter name."""
    click_command = typer.main.get_command(app).commands[command]  # type: ignore[attr-defined]
    return {p.name: p.default for p in click_command.params}


def test_the_referee_takes_the_defaults() -> None:
    table = TableSettings(rules=Rules(players=6), bot_names=("x",) * 6)
    assert {k: getattr(table, k) for k in LIMITS} == LIMITS
    assert dataclasses.asdict(ServerDefaults()) == LIMITS


def test_tournaments_and_hosting_take_the_defaults() -> None:
    assert field_defaults(TournamentConfig) == LIMITS
    assert field_defaults(HostOptions) == {k: v for k, v in LIMITS.items() if k != "max_faults"}
    assert HostOptions(seats=("random",) * 6).target_score == DEFAULT_TARGET_SCORE


def test_the_command_line_takes_the_defaults() -> None:
    serve = option_defaults("serve")
    assert {k: serve[k] for k in ("decision_ms", "time_bank_ms", "max_faults")} == {
        k: LIMITS[k] for k in ("decision_ms", "time_bank_ms", "max_faults")
    }
    host = option_defaults("host")
    assert (host["decision_ms"], host["time_bank_ms"]) == (LIMITS["decision_ms"], LIMITS["time_bank_ms"])
    assert host["join_timeout"] * 1000 == LIMITS["join_timeout_ms"]  # --join-timeout is in seconds
    assert host["target_score"] == option_defaults("play")["target_score"] == DEFAULT_TARGET_SCORE


def test_the_documentation_states_the_defaults() -> None:
    doc = (ROOT / "docs" / "TOURNAMENTS.md").read_text()
    example = next(b for b in re.findall(r"```toml\n(.*?)```", doc, flags=re.S) if "[[bots]]" in b)
    documented = tomllib.loads(example)["tournament"]
    assert {k: documented[k] for k in LIMITS} == LIMITS
    proto = (ROOT / "proto" / "cancellation_hearts" / "v1" / "admin_service.proto").read_text()
    assert f"server's default ({LIMITS['join_timeout_ms']})" in proto
