"""How games are played, whoever plays them: :class:`PlaySettings`.

A tournament's config makes them (:meth:`hearts_tournaments.tournament.config.TournamentConfig.play_settings`)
and so does a league's (:meth:`hearts_tournaments.league.config.LeagueConfig.play_settings`); the
arena (:class:`hearts_tournaments.arena.local.Arena`, which reads them through its ``Settings``
protocol), a Ray node and the entrants' check before a run read nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hearts_core.defaults import DEFAULT_POLICY, TablePolicy
from hearts_core.rules import DEFAULT_MAX_HANDS, DEFAULT_TARGET_SCORE
from hearts_tournaments.arena.bots import BotSpec, Reuse
from hearts_tournaments.arena.sandbox import Limits, SandboxKind


@dataclass(frozen=True, slots=True)
class PlaySettings:
    """How the games are played and who may play them.

    Attributes:
        name: The tournament's or the league's name (the tables' label).
        table_size: Seats per table.
        bots: The entrants that may be seated.
        target_score: Each game ends when a total reaches this.
        max_hands: Each game also ends after this many hands.
        policy: The referee's limits per decision, thinking time, faults and join timeout.
        limits: What each bot may use per game.
        sandbox: How bots are isolated unless a bot says otherwise.
        reuse: Whether a bot process plays several games.
        restart_after: With reuse, a process is replaced after this many games.
        server: Address of an external referee, or empty for one started by the arena.
        hide_names: Whether the bots see neutral labels instead of their table-mates' names.
        base_dir: The folder the entrants' relative paths are read from.
    """

    name: str
    table_size: int
    bots: tuple[BotSpec, ...]
    target_score: int = DEFAULT_TARGET_SCORE
    max_hands: int = DEFAULT_MAX_HANDS
    policy: TablePolicy = DEFAULT_POLICY
    limits: Limits = field(default_factory=Limits)
    sandbox: SandboxKind = SandboxKind.BWRAP
    reuse: Reuse = Reuse.BETWEEN_DEALS
    restart_after: int = 100
    server: str = ""
    hide_names: bool = False
    base_dir: Path = Path(".")

    def bot(self, name: str) -> BotSpec:
        """The entrant called ``name``.

        Raises:
            KeyError: if there is none.
        """
        return bot_named(self.bots, name)

    def sandbox_of(self, spec: BotSpec) -> SandboxKind:
        """The sandbox ``spec`` runs in: its own, else the settings'."""
        return spec.sandbox or self.sandbox


def bot_named(bots: Sequence[BotSpec], name: str) -> BotSpec:
    """The entrant of ``bots`` called ``name``.

    Raises:
        KeyError: if there is none.
    """
    for spec in bots:
        if spec.name == name:
            return spec
    raise KeyError(name)
