"""What a tournament's entrants play: read-only snapshots of their files, and the sandbox check.

A sandboxed command bot plays a copy of its files taken when the tournament first starts
(:mod:`hearts_tournaments.arena.snapshot`), never the files themselves; a resumed run plays the
same copies, checked again. The runner, each Ray node and the pre-flight check all take and
check them here.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Collection
from pathlib import Path
from typing import Any

from hearts_tournaments.arena import snapshot
from hearts_tournaments.arena.bots import BotSpec
from hearts_tournaments.arena.entrants import check_files, runtime_of, snapshot_spec
from hearts_tournaments.arena.sandbox import SandboxKind, require_bwrap
from hearts_tournaments.arena.settings import PlaySettings
from hearts_tournaments.tournament.config import TournamentConfig
from hearts_tournaments.tournament.store import Store


def check_sandbox(config: TournamentConfig, output: Path, snapshotted: Collection[str] = ()) -> list[str]:
    """Checks that every bot can be sandboxed as configured, before anything is played.

    The bots named in ``snapshotted`` play the copy of their files taken when the tournament
    started (:func:`snapshot_bots`): their files as they are now are not looked at.

    Returns:
        Warnings for the organiser: one per bot that runs without a sandbox.

    Raises:
        SandboxError: bwrap is needed and missing, a bot's files would show it the config
            file or the output folder, or its runtime is not installed here.
    """
    unsandboxed = [spec.name for spec in config.bots if config.sandbox_of(spec) is SandboxKind.NONE]
    for spec in config.bots:
        runtime_of(spec)
        if config.sandbox_of(spec) is SandboxKind.BWRAP and spec.name not in snapshotted:
            check_files(spec, output)
    if len(unsandboxed) < len(config.bots):
        require_bwrap()
    if not unsandboxed:
        return []
    return [
        f'warning: {", ".join(unsandboxed)} run(s) without a sandbox (sandbox = "none"): such a bot can '
        "read the config, the database and other bots' files, reach the network and outlive its game; "
        "use it for your own trusted bots only"
    ]


#: The meta key of a tournament's snapshots, taken when it first starts (:func:`snapshot_bots`).
SNAPSHOTS_META = "snapshots"


def snapshots_taken(store: Store) -> dict[str, Any]:
    """The snapshots a tournament took when it first started, per bot name."""
    taken = json.loads(store.meta_or(SNAPSHOTS_META, "{}"))
    return taken if isinstance(taken, dict) else {}


def snapshot_bots(
    config: TournamentConfig, output: Path, taken: dict[str, Any] | None = None
) -> tuple[TournamentConfig, dict[str, Any]]:
    """The config with every sandboxed command bot's files snapshotted under ``output``.

    What the bots run is copied once, when the tournament first starts; ``taken`` holds the
    copies made before (``{name: {"digest", "targets"}}``): a resumed run plays those, checked
    again and bound where they were, whatever has become of the files since. So neither an
    entrant changing its files mid-run nor swapping a folder for a symlink changes what plays.

    Returns:
        The config to play with, and the snapshots per bot name.

    Raises:
        SandboxError: a new snapshot's files would show the config or output folder.
        SnapshotError: a bot's files cannot be copied, or an earlier copy was changed.
    """
    taken = dict(taken or {})
    store = output / snapshot.STORE
    secret = (output.resolve(),)
    bots = []
    for spec in config.bots:
        if config.sandbox_of(spec) is not SandboxKind.BWRAP or spec.command is None:
            bots.append(spec)
            continue
        before = taken.get(spec.name)
        if isinstance(before, dict):
            targets = tuple(Path(t) for t in before["targets"])
            done = snapshot_spec(
                dataclasses.replace(spec, files=targets), store, secret, str(before["digest"])
            )
        else:
            done = take_snapshot(config, spec, store, output)
        if done.snapshot is not None:
            taken[spec.name] = {"digest": done.snapshot.name, "targets": [str(p) for p in done.files or ()]}
        bots.append(done)
    return dataclasses.replace(config, bots=tuple(bots)), taken


def take_snapshot(
    config: TournamentConfig | PlaySettings,
    spec: BotSpec,
    store: Path,
    output: Path,
    also_secret: tuple[Path, ...] = (),
) -> BotSpec:
    """``spec`` playing a new snapshot of its files in ``store``, refused where they would show the
    output folder (or ``also_secret``) or the whole config folder.

    Raises:
        SandboxError: the files show the config or output folder.
        SnapshotError: they cannot be copied as they are.
    """
    check_files(spec, output)
    secret = (output.resolve(), *also_secret)
    return snapshot_spec(spec, store, secret, None, (config.base_dir.resolve(),))
