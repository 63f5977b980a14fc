"""A tournament on a Ray cluster: what a node is given to play one of its games, and the
executor that ships the tournament's config folder (:mod:`hearts_tournaments.results.executors`
plays the games).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hearts_tournaments.arena.local import Settings
from hearts_tournaments.results.executors import NodeSetupError, RayExecutor
from hearts_tournaments.tournament.config import ConfigError, TournamentConfig, parse_config
from hearts_tournaments.tournament.snapshots import check_sandbox, snapshot_bots

#: Never shipped to the nodes with the config folder.
SHIP_EXCLUDES = (".git", ".venv", "__pycache__", "node_modules", "*.sqlite", "*.sqlite-*")


@dataclass(frozen=True, slots=True)
class NodeTournament:
    """What every node needs to play the tournament's games: its config, and where to read it.

    Attributes:
        config_text: The configuration file's text, parsed again on the node.
        name: The tournament's name.
        base_dir: The config folder on the node; empty for the task's working directory (the
            config folder shipped by the runtime environment, or the worker's own folder
            when every bot is built in).
    """

    config_text: str
    name: str
    base_dir: str

    def shipped(self) -> tuple[Path, ...]:
        """Nothing: the config folder is the Ray job's working directory."""
        return ()

    def settings_on_node(self, output: Path) -> Settings:
        """The config parsed on the node, its command bots playing the node's own snapshots."""
        base_dir = Path(self.base_dir) if self.base_dir else Path.cwd()
        try:
            config = parse_config(self.config_text, base_dir, default_name=self.name)
        except ConfigError as exc:
            raise NodeSetupError(str(exc)) from None
        check_sandbox(config, output)
        # The node's own copy of what the driver shipped, taken before its game starts.
        config, _ = snapshot_bots(config, output)
        return config


def tournament_executor(
    config: TournamentConfig, config_text: str, output: Path, ray_address: str, concurrency: int
) -> RayExecutor:
    """The Ray executor of a tournament: its config text for the nodes, its folder shipped."""
    work = NodeTournament(config_text, config.name, "")
    return RayExecutor(work, output, ray_address, concurrency, tournament_runtime_env(config, output))


def tournament_runtime_env(config: TournamentConfig, output: Path) -> dict[str, Any]:
    """Ships the config folder to the nodes as the tasks' working directory.

    Not when every bot is built in (nothing to ship): the nodes then read nothing but the
    config text. The output folder is never shipped, were it inside the config folder.
    """
    if all(spec.builtin for spec in config.bots):
        return {}
    excludes = list(SHIP_EXCLUDES)
    base = config.base_dir.resolve()
    out = output.resolve()
    if out.is_relative_to(base):
        excludes.append("/" + out.relative_to(base).as_posix())
    return {"working_dir": str(base), "excludes": excludes}
