"""A tournament's folder: its configuration and its open database, created or opened.

``create_tournament`` schedules a config and stores it; ``open_tournament`` opens what a folder
holds with the configuration as stored; ``remove_owned`` is ``--fresh``: it removes what a
previous run made there, and only that.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from hearts_tournaments.arena import snapshot
from hearts_tournaments.arena.local import PROCESSES_LOG
from hearts_tournaments.results import signing
from hearts_tournaments.results.store import StoreError
from hearts_tournaments.tournament.config import ConfigError, TournamentConfig, names_seating, parse_config
from hearts_tournaments.tournament.gauntlet import gauntlet_schedule
from hearts_tournaments.tournament.schedule import (
    SCHEDULE_DESIGN,
    Progress,
    Schedule,
    SeatingMode,
    make_schedule,
)
from hearts_tournaments.tournament.store import DB_NAME, Store

#: The snapshot's file name in the tournament folder.
SNAPSHOT_NAME = "standings.json"
#: What the runner owns in an output folder (removed by ``--fresh``).
OWNED = (
    DB_NAME,
    f"{DB_NAME}-wal",
    f"{DB_NAME}-shm",
    "records",
    "logs",
    "runner.log",
    PROCESSES_LOG,
    SNAPSHOT_NAME,
    signing.PUBLISHED,
)


#: The files the runner writes in ``records/`` (the referee's game records, and the temporary
#: files of a write cut short) and in ``logs/`` (one log per bot, game and seat).
_OWNED_RECORD = re.compile(r"[0-9a-f]{12}(-[0-9]+)?\.json|\.[0-9a-f]{12}(-[0-9]+)?\.json\..+\.tmp")
_OWNED_LOG = re.compile(r".+-s[0-9]+\.log")


def remove_owned(output: Path) -> list[Path]:
    """Removes what a previous run of the runner made in ``output`` (``--fresh``), and only that.

    The database files and the runner's log go; in ``records/`` and ``logs/`` only the files
    named as the runner names them, and the folders left empty. Anything else the organiser
    put there stays.
    """
    removed: list[Path] = []
    for name in OWNED:
        path = output / name
        if name in ("records", "logs") or path.is_dir():
            continue
        if path.exists():
            path.unlink(missing_ok=True)
            removed.append(path)
    records = output / "records"
    if records.is_dir():
        for path in records.iterdir():
            if path.is_file() and _OWNED_RECORD.fullmatch(path.name):
                path.unlink(missing_ok=True)
                removed.append(path)
    logs = output / "logs"
    if logs.is_dir():
        for folder in logs.iterdir():
            if not folder.is_dir() or folder.is_symlink():
                continue
            for path in folder.iterdir():
                if path.is_file() and _OWNED_LOG.fullmatch(path.name):
                    path.unlink(missing_ok=True)
                    removed.append(path)
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when empty
    copies = output / snapshot.STORE
    if copies.is_dir() and not copies.is_symlink():
        for path in copies.iterdir():
            if path.is_dir() and not path.is_symlink() and snapshot.OWNED.fullmatch(path.name):
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
    for folder in (records, logs, copies):
        with contextlib.suppress(OSError):
            folder.rmdir()
    return removed


@dataclass(frozen=True, slots=True)
class Tournament:
    """A tournament's configuration and its open database."""

    config: TournamentConfig
    store: Store
    output: Path


def create_tournament(
    config: TournamentConfig,
    config_text: str,
    output: Path,
    fresh: bool = False,
    deal_secret: bytes | None = None,
    progress: Progress | None = None,
    config_path: Path | None = None,
) -> Tournament:
    """Schedules a new tournament and stores it in ``output``.

    Args:
        config: The configuration.
        config_text: The configuration file's text (kept in the database).
        output: The output folder.
        fresh: Remove a previous tournament's database, records and logs from ``output`` first.
        deal_secret: The secret to seed the deals from, to replay a tournament's deals
            (default: a fresh one, drawn now).
        progress: Called with a line as each phase of the schedule's design ends.
        config_path: The configuration file, kept so that ``resume`` can tell when it was edited.

    Raises:
        StoreError: if ``output`` already holds a tournament (and not ``fresh``).
    """
    if fresh:
        remove_owned(output)
    elif Store.path_in(output).exists():
        raise StoreError(
            f"{output} already holds a tournament: continue it with `hearts tournament resume "
            f"{output}`, or add --fresh to start it over"
        )
    store = Store.create(
        output,
        config_text,
        config.base_dir,
        config.name,
        schedule_for(config, progress),
        deal_secret,
        config_path,
    )
    return Tournament(config, store, output)


def schedule_for(config: TournamentConfig, progress: Progress | None = None) -> Schedule:
    """The schedule of a config: a round robin, or a gauntlet with a ``[gauntlet]`` section.

    ``progress`` is told each phase of a round robin's design as it ends.
    """
    if config.gauntlet is not None:
        candidate = config.gauntlet.candidate
        field = [name for name in config.bot_names if name != candidate]
        return gauntlet_schedule(
            candidate, field, config.table_size, config.deals, config.seed, config.duplicate
        )
    return make_schedule(
        config.bot_names,
        config.table_size,
        config.deals,
        config.seed,
        config.duplicate,
        config.seating,
        progress,
        config.schedule_design,
        config.teams,
    )


def open_tournament(output: Path, *, read_only: bool = False) -> Tournament:
    """Opens the tournament stored in ``output``, with its configuration as stored.

    Args:
        output: The tournament's folder.
        read_only: Open its database read-only.

    Raises:
        StoreError: if ``output`` holds no tournament.
        ConfigError: if the stored configuration no longer reads (e.g. a built-in bot is gone).
    """
    store = Store.open(output, read_only=read_only)
    try:
        config = parse_config(store.config_text, store.base_dir, default_name=store.meta("name"))
    except ConfigError:
        store.close()
        raise
    stored = json.loads(store.meta("schedule"))
    # The schedule's design has changed over time: a tournament keeps the one it was made with
    # (1 for a schedule stored before designs were recorded).
    design = stored.get("design", 1)
    if type(design) is not int or not 1 <= design <= SCHEDULE_DESIGN:
        store.close()
        raise StoreError(
            f"{output}: the stored schedule's design {design!r} is not one this version knows "
            f"(1..{SCHEDULE_DESIGN}): open it with the version that made it, or restore the database"
        )
    config = dataclasses.replace(config, schedule_design=design)
    if not names_seating(store.config_text):
        # The default seating has changed over time: a tournament keeps the one it was
        # scheduled with (a schedule stored before seatings were named is rotated).
        seating = stored.get("seating", SeatingMode.ROTATE.value)
        config = dataclasses.replace(config, seating=SeatingMode(seating))
    return Tournament(config, store, output)
