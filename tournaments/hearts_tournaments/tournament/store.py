"""A tournament's database: one SQLite file in its output folder.

It holds a copy of the configuration, the schedule, and every finished game (result and
record), each committed the moment the game ends. WAL mode with ``synchronous=FULL`` makes every
commit durable before the runner moves on, so a ``kill -9`` (or a power cut) loses at most the
games still being played; :mod:`hearts_tournaments.tournament.runner` replays exactly those on resume. A
game is stored at most once: its key is the primary key, and a second insert is refused.

The database holds the tournament's deal secret (:mod:`hearts_tournaments.arena.seeds`)
and every finished record, so it is private: the output folder is made mode 0700 and the database
(with its WAL and shared-memory files) 0600, whatever the umask.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hearts_tournaments.arena.folders import private_folder
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.arena.seeds import DealSecretError, new_deal_secret, parse_deal_secret
from hearts_tournaments.results import signing
from hearts_tournaments.results.store import FILE_MODE, MetaDatabase, StoreError, writing
from hearts_tournaments.tournament.schedule import Schedule

#: The database's file name inside the output folder.
DB_NAME = "tournament.sqlite"
#: Bumped when the tables change meaning (2: deals are seeded from the meta ``deal_secret``;
#: the schedule's ``seed`` column is only the deal's public id).
SCHEMA_VERSION = 2

_SCHEMA = (
    """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE schedule (
    idx INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    deal INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    seed TEXT NOT NULL,
    seats TEXT NOT NULL,
    bot_seeds TEXT NOT NULL
);
CREATE TABLE games (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE REFERENCES schedule(key),
    finished_at REAL NOT NULL,
    summary TEXT NOT NULL,
    record TEXT NOT NULL
);
"""
    + signing.SCHEMA
)


class Store(MetaDatabase):
    """An open tournament database.

    Use :meth:`create` for a new tournament and :meth:`open` for an existing one.
    """

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self._db = connection
        self._schedule_digest: tuple[int, str] | None = None

    # ------------------------------------------------------------------ opening
    @staticmethod
    def path_in(folder: Path) -> Path:
        """Where a tournament's database lives in ``folder``."""
        return folder / DB_NAME

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        # SQLite gives the WAL and shared-memory files the main file's mode: 0600 for all three
        # (an older database is tightened here; another user's is only read, as it is).
        for name in (path.name, f"{path.name}-wal", f"{path.name}-shm"):
            sibling = path.with_name(name)
            if sibling.exists():
                with contextlib.suppress(PermissionError):
                    sibling.chmod(FILE_MODE)
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        # FULL: a commit is on disk before the runner counts the game as finished.
        db.execute("PRAGMA synchronous=FULL")
        db.execute("PRAGMA foreign_keys=ON")
        db.execute("PRAGMA busy_timeout=5000")
        return db

    @staticmethod
    def _connect_read_only(path: Path) -> sqlite3.Connection:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
        db.execute("PRAGMA busy_timeout=5000")
        return db

    @classmethod
    def create(
        cls,
        folder: Path,
        config_text: str,
        base_dir: Path,
        name: str,
        schedule: Schedule,
        deal_secret: bytes | None = None,
        config_path: Path | None = None,
    ) -> Store:
        """Creates the database of a new tournament in ``folder``.

        Args:
            folder: The output folder (created if needed, and made mode 0700).
            config_text: The configuration file's text, kept verbatim.
            base_dir: The configuration's folder (bot commands run there).
            name: The tournament's name.
            schedule: Its schedule.
            deal_secret: The secret its deals are seeded from (default: a fresh one).
            config_path: The configuration file, if any (``resume`` tells when it was edited).

        The database is built complete under a temporary name in ``folder`` and only then linked
        to its real name (atomic, and never over an existing one), so a process killed at any
        moment leaves either no tournament or a whole one, never an empty database that
        neither ``run`` nor ``resume`` accepts.

        Raises:
            StoreError: if ``folder`` already holds a tournament or cannot be written.
        """
        path = cls.path_in(folder)
        if path.exists():
            raise StoreError(f"{folder} already holds a tournament")
        secret = deal_secret if deal_secret is not None else new_deal_secret()
        try:
            private_folder(folder)
            _remove_partial(folder)
            # Created 0600 before SQLite opens it, so the secret is never readable by others.
            fd, partial_name = tempfile.mkstemp(prefix=f".{DB_NAME}.", suffix=PARTIAL_SUFFIX, dir=folder)
            os.close(fd)
            partial = Path(partial_name)
        except OSError as exc:
            raise StoreError(f"cannot create {path}: {exc}") from None
        try:
            build = sqlite3.connect(partial, isolation_level=None)
            try:
                build.execute("PRAGMA journal_mode=WAL")  # kept in the file for every later open
                build.execute("PRAGMA synchronous=FULL")
                cls._fill(build, config_text, base_dir, name, schedule, secret, config_path)
            finally:
                build.close()  # the last connection: the WAL is checkpointed into the file
            _fsync(partial)
            os.link(partial, path)  # fails if a tournament appeared meanwhile: never replaced
            _fsync(folder)
            db = cls._connect(path)
        except FileExistsError:
            raise StoreError(f"{folder} already holds a tournament") from None
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot create {path}: {exc}") from None
        finally:
            partial.unlink(missing_ok=True)
            for extra in ("-wal", "-shm", "-journal"):
                partial.with_name(partial.name + extra).unlink(missing_ok=True)
        return cls(path, db)

    @staticmethod
    def _fill(
        db: sqlite3.Connection,
        config_text: str,
        base_dir: Path,
        name: str,
        schedule: Schedule,
        secret: bytes,
        config_path: Path | None,
    ) -> None:
        """Writes the schema, the meta data and the schedule, in one transaction."""
        with db:
            db.execute("BEGIN")
            # Statement by statement: executescript() would commit the open transaction first.
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            meta = {
                "schema_version": str(SCHEMA_VERSION),
                "name": name,
                "config_toml": config_text,
                "base_dir": str(base_dir),
                "schedule": json.dumps(schedule.to_json()),
                "balance": json.dumps(schedule.balance().to_json()),
                "created_at": repr(time.time()),
                "deal_secret": secret.hex(),
                "tournament_id": secrets.token_hex(16),
            }
            if config_path is not None:
                meta["config_path"] = str(config_path.resolve())
            db.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", meta.items())
            db.executemany(
                "INSERT INTO schedule (idx, key, deal, rotation, seed, seats, bot_seeds) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (g.index, g.key, g.deal, g.rotation, g.seed, json.dumps(g.seats), json.dumps(g.bot_seeds))
                    for g in schedule.games
                ],
            )

    @classmethod
    def open(cls, folder: Path, *, read_only: bool = False) -> Store:
        """Opens the tournament stored in ``folder``.

        Args:
            folder: The output folder.
            read_only: Open the database read-only (``mode=ro``): nothing this connection does
                can change it, and it sees each game the moment a runner commits it.

        Raises:
            StoreError: if there is none, or it is not a tournament database this version reads.
        """
        path = cls.path_in(folder)
        if not path.is_file():
            raise StoreError(f"{folder} holds no tournament (no {DB_NAME})")
        try:
            db = cls._connect_read_only(path) if read_only else cls._connect(path)
            version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"{path} is not a tournament database: {exc}") from None
        if version is None or version[0] != str(SCHEMA_VERSION):
            db.close()
            hint = (
                ": it was created before deals were seeded from a secret, so its deals are "
                "predictable; start it over with `hearts tournament run CONFIG --fresh`"
                if version is not None and version[0] == "1"
                else ""
            )
            raise StoreError(
                f"{path} has schema version {version and version[0]}, not {SCHEMA_VERSION}{hint}"
            )
        if not read_only:  # a database from before signatures gets their table (its games unsigned)
            with contextlib.suppress(sqlite3.Error):
                db.execute(signing.SCHEMA)
        return cls(path, db)

    # ------------------------------------------------------------------ reading
    def _missing(self, key: str) -> Exception:
        return StoreError(f"{self.path} lacks {key!r}")

    @property
    def config_text(self) -> str:
        """The configuration file's text."""
        return self.meta("config_toml")

    @property
    def config_path(self) -> Path | None:
        """The configuration file the tournament was created from (None: unknown, or the demo)."""
        row = self._db.execute("SELECT value FROM meta WHERE key = 'config_path'").fetchone()
        return Path(row[0]) if row is not None else None

    @property
    def base_dir(self) -> Path:
        """The configuration file's folder."""
        return Path(self.meta("base_dir"))

    def published_fields(self) -> dict[str, Any]:
        """Whether the tournament is complete against its schedule: games stored (``played``) of
        ``scheduled``, and the schedule's digest, so that a ``published.json`` signed before the
        last games reads as incomplete, and one of another schedule as another tournament's."""
        played = self.count()
        scheduled, digest = self.schedule_digest()
        return {
            "played": played,
            "scheduled": scheduled,
            "schedule_sha256": digest,
            "complete": played == scheduled,
        }

    def schedule_digest(self) -> tuple[int, str]:
        """The number of scheduled games, and the sha256 of the stored schedule (as stored)."""
        if self._schedule_digest is None:
            text = self.meta("schedule")
            scheduled = int(self._db.execute("SELECT COUNT(*) FROM schedule").fetchone()[0])
            self._schedule_digest = scheduled, hashlib.sha256(text.encode()).hexdigest()
        return self._schedule_digest

    def deal_secret(self) -> bytes:
        """The secret the tournament's deals and bot seeds are derived from.

        Raises:
            StoreError: if it is missing or not a valid secret.
        """
        try:
            return parse_deal_secret(self.meta("deal_secret"), f"{self.path} deal_secret")
        except DealSecretError as exc:
            raise StoreError(str(exc)) from None

    def schedule(self) -> Schedule:
        """The stored schedule."""
        return Schedule.from_json(json.loads(self.meta("schedule")))

    def balance(self) -> dict[str, Any]:
        """The stored balance report."""
        data: dict[str, Any] = json.loads(self.meta("balance"))
        return data

    def finished_keys(self) -> set[str]:
        """Keys of the games already stored."""
        return {row[0] for row in self._db.execute("SELECT key FROM games")}

    def outcomes(self, records: bool = True) -> list[GameOutcome]:
        """Every stored game, in the order they finished.

        Args:
            records: Load the game records too (else each outcome's ``record_json`` is empty).
        """
        column = "record" if records else "''"
        rows = self._db.execute(f"SELECT summary, {column} FROM games ORDER BY seq").fetchall()
        return [GameOutcome.from_json(json.loads(summary), record) for summary, record in rows]

    def record(self, key: str) -> str | None:
        """The stored record of game ``key`` (JSON text), or None if that game is not stored."""
        row = self._db.execute("SELECT record FROM games WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def record_ids(self) -> Iterator[tuple[str, str]]:
        """Every stored game's ``(key, game_id)``, in the order stored (records not loaded)."""
        for summary, key in self._db.execute("SELECT summary, key FROM games ORDER BY seq"):
            yield str(key), str(json.loads(summary)["game_id"])

    def keys(self) -> list[str]:
        """Keys of the stored games, in the order stored (cheap: no summaries are read)."""
        return [str(row[0]) for row in self._db.execute("SELECT key FROM games ORDER BY seq")]

    def data_version(self) -> int:
        """A number that changes whenever another connection commits to the database (SQLite's
        ``PRAGMA data_version``): a reader's cheap look for "anything new?"."""
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    def count(self) -> int:
        """How many games are stored."""
        row = self._db.execute("SELECT COUNT(*) FROM games").fetchone()
        return int(row[0])

    # ------------------------------------------------------------------ writing
    def add(self, outcome: GameOutcome) -> None:
        """Stores a finished game and commits (all or nothing).

        Raises:
            StoreWriteError: if the database cannot be written (no space, a failing disk): store
                it again once the cause is gone.
            StoreError: if a game with that key is already stored (it is never replaced), or the
                database fails otherwise.
        """
        try:
            with writing(f"game {outcome.key}", self.path), self._db:
                self._db.execute("BEGIN IMMEDIATE")
                summary = json.dumps(outcome.summary_json())
                self._db.execute(
                    "INSERT INTO games (key, finished_at, summary, record) VALUES (?, ?, ?, ?)",
                    (outcome.key, time.time(), summary, outcome.record_json),
                )
                if self.signer is not None:
                    self.signer.sign_next(self._db, outcome.key, summary, outcome.record_json)
        except sqlite3.IntegrityError as exc:
            raise StoreError(f"game {outcome.key} cannot be stored: {exc}") from None
        except signing.SigningError as exc:
            raise StoreError(str(exc)) from None


#: The name ending of a database still being built by :meth:`Store.create`.
PARTIAL_SUFFIX = ".partial"


def _remove_partial(folder: Path) -> None:
    """Removes what a creation killed before it finished left behind (never a tournament)."""
    for leftover in folder.glob(f".{DB_NAME}.*{PARTIAL_SUFFIX}*"):
        leftover.unlink(missing_ok=True)


def _fsync(path: Path) -> None:
    """Flushes a file's (or a folder's entries') changes to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
