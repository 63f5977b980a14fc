"""A league on a Ray cluster: what a node is given to play one of its games.

The ``run`` loop (:mod:`.play`) plays each game of a block, and each validation game, as a Ray
task on some node (:class:`~hearts_tournaments.results.executors.RayExecutor`, the executor
and node task a tournament's games use too). The node gets the job (the game and its seeds, derived
from the deal secret on the driver) and a :class:`NodeLeague`: the league's game settings
with the versions of that block, whose snapshots travel with the job through Ray's object
store and are checked against their digests on the node before they play. Neither the league
database nor its deal secret ever leaves the driver, which alone stores what the nodes send
back: a block once all its games are in, in one transaction, as on one machine.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from hearts_tournaments.arena.bots import BotSpec
from hearts_tournaments.arena.entrants import bot_files, command_inside
from hearts_tournaments.arena.sandbox import SandboxKind
from hearts_tournaments.arena.settings import PlaySettings
from hearts_tournaments.arena.snapshot import STORE, check_snapshot


@dataclass(frozen=True, slots=True)
class NodeLeague:
    """What a node needs to play a league game: the settings, with the bots of that game.

    Made on the driver by :meth:`of`; the node makes its arena's settings with
    :meth:`settings_on_node`.

    Attributes:
        config: The league's game settings (:func:`.play.play_settings`) with the versions
            that play, their snapshots named by their folders on the driver.
    """

    config: PlaySettings

    @classmethod
    def of(cls, config: PlaySettings) -> NodeLeague:
        """``config`` ready to cross to a node.

        A sandboxed command's words that name its files are made absolute here, where the
        files are (the arena does the same on one machine): on the node, only the snapshot,
        bound at those paths inside the sandbox, has them.
        """
        return cls(dataclasses.replace(config, bots=tuple(_for_node(config, spec) for spec in config.bots)))

    def shipped(self) -> tuple[Path, ...]:
        """The snapshot folders of the versions that play, each once."""
        return tuple(dict.fromkeys(spec.snapshot for spec in self.config.bots if spec.snapshot is not None))

    def settings_on_node(self, output: Path) -> PlaySettings:
        """The settings with each snapshot read from the node's own copy in ``output/snapshots``.

        Raises:
            SnapshotError: a shipped copy is missing or does not match its digest.
        """
        store = output / STORE
        bots = []
        for spec in self.config.bots:
            if spec.snapshot is not None:
                folder = store / spec.snapshot.name
                check_snapshot(spec.name, folder, bot_files(spec))
                spec = dataclasses.replace(spec, snapshot=folder)
            bots.append(spec)
        return dataclasses.replace(self.config, bots=tuple(bots), base_dir=output)


def _for_node(config: PlaySettings, spec: BotSpec) -> BotSpec:
    if spec.command is None or config.sandbox_of(spec) is not SandboxKind.BWRAP:
        return spec  # a built-in bot; an unsandboxed one runs in its folder, the same on every node
    return dataclasses.replace(spec, command=command_inside(spec))
