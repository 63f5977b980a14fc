"""A league's database: one SQLite file (WAL) in the league folder.

Tables: ``meta`` (settings, deal secret), ``entrants``, ``versions`` (immutable, identified by
a hash of their command and files, with a status: ``pending`` until their validation game,
then ``active``, ``error``, ``retired`` or ``quarantined``), ``commands`` (every command given,
in order), ``blocks`` (one row per stored block, with the last command it had seen), ``games``
(summary and record of every game, rated or validation), ``results`` (one row per seat),
``ratings`` (the online rating state of each version: its model's name and parameters as JSON,
:mod:`.rating_models`), ``rating_history`` and ``events`` (status
changes, quarantines, each with when it happened: ``at``, NULL in a league from before it), and
``teams`` and ``links`` (who is kept apart at tables: each entrant's declared team, the
organiser's links between entrants or accounts; docs/FAIR_PLAY.md).

A block is stored in one transaction with its games, seat results and online rating update,
with ``synchronous=FULL``: a ``kill -9`` loses at most the block being played, which the next
``run`` plays again (it is planned from the same state, so it is the same block). The block's
number is its primary key: nothing is counted twice.

Schema 1 (before rating models) stored each rating as ``mu`` and ``sigma`` columns, OpenSkill
Plackett-Luce's: opening such a league to write converts both rating tables to schema 2 in one
transaction (each row becomes ``openskill-pl`` with ``{"mu": ..., "sigma": ...}``, the same
floats); opened read-only (the web pages) it is read as it is.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import os
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hearts_tournaments.arena.bots import BOT_NAME_PATTERN, BotProtocol, BotSpec
from hearts_tournaments.arena.folders import private_folder
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.arena.sandbox import SandboxKind
from hearts_tournaments.arena.seeds import new_deal_secret
from hearts_tournaments.arena.snapshot import STORE
from hearts_tournaments.league.config import LeagueConfig, LeagueError
from hearts_tournaments.league.rating_models import DEFAULT_RATING, RatingModel, State, rating_model
from hearts_tournaments.results import signing
from hearts_tournaments.results.store import FILE_MODE, MetaDatabase, writing

#: The meta key of the final's report (:mod:`.final`), published in ``published.json``.
FINAL_REPORT_META = "final_report"
#: The meta key of when the final ended (seconds since the epoch), written with its report.
FINAL_ENDED_META = "final_ended_at"
#: The database's file name inside the league folder.
DB_NAME = "league.sqlite"
SCHEMA_VERSION = 2
#: Schemas this version opens: 1 stored ratings as mu and sigma columns (read as is, converted
#: when opened to write).
READABLE_SCHEMAS = ("1", "2")
#: Version statuses.
PENDING, ACTIVE, ERROR, RETIRED, QUARANTINED = "pending", "active", "error", "retired", "quarantined"
STATUSES = (PENDING, ACTIVE, ERROR, RETIRED, QUARANTINED)
#: Bytes of a bot's files hashed at most (beyond that, ``add`` refuses: pack the bot smaller).
MAX_HASHED_BYTES = 512 * 1024 * 1024

#: The rating tables of schema 2: a new league's, and what :func:`_migrate_ratings` makes of
#: schema 1's.
_RATING_TABLES = (
    "CREATE TABLE ratings (version TEXT PRIMARY KEY, model TEXT NOT NULL, state TEXT NOT NULL, "
    "blocks INTEGER NOT NULL, failed INTEGER NOT NULL, last_block INTEGER)",
    "CREATE TABLE rating_history (block INTEGER NOT NULL, version TEXT NOT NULL, model TEXT NOT NULL, "
    "state TEXT NOT NULL, PRIMARY KEY (block, version))",
)


_SCHEMA = (
    """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE entrants (name TEXT PRIMARY KEY, seq INTEGER NOT NULL);
CREATE TABLE versions (
    id TEXT PRIMARY KEY,
    entrant TEXT NOT NULL REFERENCES entrants(name),
    number INTEGER NOT NULL,
    hash TEXT NOT NULL,
    spec TEXT NOT NULL,
    status TEXT NOT NULL,
    pinned REAL,
    note TEXT NOT NULL DEFAULT '',
    seq INTEGER NOT NULL,
    UNIQUE (entrant, number)
);
CREATE TABLE commands (seq INTEGER PRIMARY KEY AUTOINCREMENT, given REAL NOT NULL, body TEXT NOT NULL);
CREATE TABLE blocks (
    id INTEGER PRIMARY KEY,
    seed TEXT NOT NULL,
    seats TEXT NOT NULL,
    commands_seen INTEGER NOT NULL,
    finished REAL NOT NULL
);
CREATE TABLE games (
    key TEXT PRIMARY KEY,
    block INTEGER REFERENCES blocks(id),
    rotation INTEGER NOT NULL,
    validates TEXT REFERENCES versions(id),
    game_id TEXT NOT NULL,
    summary TEXT NOT NULL,
    record TEXT NOT NULL,
    finished REAL NOT NULL
);
CREATE TABLE results (
    game TEXT NOT NULL REFERENCES games(key),
    seat INTEGER NOT NULL,
    version TEXT NOT NULL,
    total INTEGER NOT NULL,
    place INTEGER NOT NULL,
    faults INTEGER NOT NULL,
    failed INTEGER NOT NULL,
    PRIMARY KEY (game, seat)
);
CREATE INDEX results_version ON results(version);
CREATE INDEX games_block ON games(block);
CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, block INTEGER NOT NULL,
                     version TEXT NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL, at REAL);
"""
    + ";\n".join(_RATING_TABLES)
    + ";\n"
    + signing.SCHEMA
    + ";"
)
#: Who is kept apart at tables; made on open in a league from before them (its tables empty).
APART_SCHEMA = """
CREATE TABLE IF NOT EXISTS teams (entrant TEXT PRIMARY KEY, team TEXT NOT NULL, seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS links (a TEXT NOT NULL, b TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (a, b));
"""


@dataclass(frozen=True, slots=True)
class Rating:
    """A version's online rating as stored.

    Attributes:
        state: Its rating model's parameters (:mod:`.rating_models`).
        blocks: Blocks it played.
        failed: Rated games it failed.
        last_block: The last block it played.
    """

    state: State
    blocks: int
    failed: int
    last_block: int | None


@dataclass(frozen=True, slots=True)
class Version:
    """One immutable version of an entrant.

    Attributes:
        id: ``NAME@vN``.
        entrant: The entrant's name.
        number: N.
        hash: sha256 of its command (or built-in and options) and files.
        spec: How to start it (its ``name`` is the id).
        status: pending, active, error, retired or quarantined.
        pinned: For a reference entrant: the official strength it is pinned to.
        note: Why it has its status (the validation failure, the quarantine).
    """

    id: str
    entrant: str
    number: int
    hash: str
    spec: BotSpec
    status: str
    pinned: float | None
    note: str


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What the ``run`` loop reads between blocks, in one read transaction."""

    commands_seen: int
    blocks: int
    versions: tuple[Version, ...]


def spec_to_json(spec: BotSpec) -> dict[str, Any]:
    """A bot spec with its working folder (and its snapshot's digest), as stored."""
    out = {**spec.to_json(), "workdir": str(spec.workdir)}
    if spec.snapshot is not None:
        out["snapshot"] = spec.snapshot.name
    return out


def spec_from_json(data: dict[str, Any], folder: Path | None = None) -> BotSpec:
    """The spec stored by :func:`spec_to_json`; its snapshot is looked up in the league ``folder``."""
    digest = data.get("snapshot")
    # Absolute: the snapshot is bound into sandboxes whose processes start in other folders.
    snapshot = folder.absolute() / STORE / digest if folder is not None and isinstance(digest, str) else None
    return BotSpec(
        name=data["name"],
        builtin=data.get("builtin"),
        command=tuple(data["command"]) if "command" in data else None,
        options=dict(data.get("options", {})),
        workdir=Path(data.get("workdir", ".")),
        files=tuple(Path(p) for p in data["files"]) if "files" in data else None,
        sandbox=SandboxKind(data["sandbox"]) if "sandbox" in data else None,
        protocol=BotProtocol(data.get("protocol", BotProtocol.GRPC.value)),
        snapshot=snapshot,
        runtime=data.get("runtime"),
    )


def version_hash(spec: BotSpec) -> str:
    """sha256 of what the version runs: its command or built-in with options, and its files.

    A snapshotted spec's files are its snapshot's digest (which covers every byte); only a spec
    without one has its files read here.

    Raises:
        LeagueError: a listed file is missing or unreadable.
    """
    digest = hashlib.sha256()
    body = spec_to_json(spec)
    body.pop("name")
    digest.update(json.dumps(body, sort_keys=True).encode())
    hashed = 0
    for root in (spec.files or ()) if spec.snapshot is None else ():
        if not root.exists():
            raise LeagueError(f"{root} does not exist: --files must name existing files or folders")
        paths = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        for path in paths:
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise LeagueError(f"cannot read {path}: {exc.strerror}") from None
            hashed += len(data)
            if hashed > MAX_HASHED_BYTES:
                raise LeagueError(f"the files of {spec.name} exceed {MAX_HASHED_BYTES >> 20} MiB")
            digest.update(str(path).encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


class LeagueStore(MetaDatabase):
    """An open league database (``create`` a new one, ``open`` an existing one)."""

    _ID_META = "league_id"

    def __init__(self, folder: Path, db: sqlite3.Connection) -> None:
        self.folder = folder
        self._db = db
        self.config = LeagueConfig.from_json(json.loads(self.meta("config")))
        #: The league's online rating model (its settings' ``rating``).
        self.rating: RatingModel = rating_model(self.config.rating)
        #: Seconds since the epoch now: when a command is given (a test injects its own).
        self.clock: Callable[[], float] = time.time
        stored = (
            [DEFAULT_RATING] * bool(db.execute("SELECT 1 FROM ratings LIMIT 1").fetchone())
            if self._legacy()
            else [str(m) for (m,) in db.execute("SELECT DISTINCT model FROM ratings ORDER BY model")]
        )
        other = [m for m in stored if m != self.rating.name]
        if other:
            raise LeagueError(
                f"{self.path_in(folder)}: its blocks are rated with {other[0]!r} but its settings say "
                f"rating = {self.rating.name!r}: a league's rating model cannot change once blocks are "
                "stored (start a new league for another model)"
            )

    @staticmethod
    def path_in(folder: Path) -> Path:
        """Where the database of the league in ``folder`` lives."""
        return folder / DB_NAME

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        db = sqlite3.connect(path, isolation_level=None, timeout=30.0)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("PRAGMA foreign_keys=ON")
        db.execute("PRAGMA busy_timeout=30000")
        for name in (path.name, f"{path.name}-wal", f"{path.name}-shm"):
            sibling = path.with_name(name)
            if sibling.exists():
                with contextlib.suppress(PermissionError):
                    sibling.chmod(FILE_MODE)
        return db

    @classmethod
    def create(cls, folder: Path, config: LeagueConfig, deal_secret: bytes | None = None) -> LeagueStore:
        """Creates a league in ``folder``.

        Raises:
            LeagueError: ``folder`` already holds a league, or cannot be made.
        """
        path = cls.path_in(folder)
        if path.exists():
            raise LeagueError(f"{folder} already holds a league: use `hearts league run {folder}`")
        try:
            private_folder(folder)
        except OSError as exc:
            raise LeagueError(f"cannot create {folder}: {exc.strerror}") from None
        db = cls._connect(path)
        db.executescript(_SCHEMA + APART_SCHEMA)
        with _transaction(db):
            secret = deal_secret if deal_secret is not None else new_deal_secret()
            rows = [
                ("schema", str(SCHEMA_VERSION)),
                ("config", json.dumps(config.to_json())),
                ("deal_secret", secret.hex()),
                ("league_id", secrets.token_hex(16)),
            ]
            db.executemany("INSERT INTO meta VALUES (?, ?)", rows)
        return cls(folder, db)

    @classmethod
    def open(cls, folder: Path, *, read_only: bool = False) -> LeagueStore:
        """Opens the league in ``folder`` (``read_only`` for the web pages).

        Raises:
            LeagueError: there is none, or it is of another version.
        """
        path = cls.path_in(folder)
        if not path.is_file():
            raise LeagueError(f"{folder} holds no league: create one with `hearts league init {folder}`")
        try:
            if read_only:
                db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
                db.execute("PRAGMA busy_timeout=30000")
            else:
                db = cls._connect(path)
            (schema,) = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        except (sqlite3.Error, TypeError) as exc:
            raise LeagueError(f"{path} is not a league database: {exc}") from None
        if schema not in READABLE_SCHEMAS:
            raise LeagueError(f"{path} is a league of schema {schema}; this version reads {SCHEMA_VERSION}")
        if not read_only and schema != str(SCHEMA_VERSION):
            with _transaction(db):  # ratings as model and parameters (another process may have)
                _migrate_ratings(db)
        if not read_only:  # a league from before signatures gets their table (its games unsigned)
            with contextlib.suppress(sqlite3.Error):
                db.execute(signing.SCHEMA)
                db.execute("CREATE INDEX IF NOT EXISTS games_block ON games(block)")
            with contextlib.suppress(sqlite3.Error):  # ... and from before teams and links, theirs
                db.executescript(APART_SCHEMA)
            with contextlib.suppress(sqlite3.Error):  # ... and from before events had a time, theirs
                if "at" not in {row[1] for row in db.execute("PRAGMA table_info(events)")}:
                    db.execute("ALTER TABLE events ADD COLUMN at REAL")
        return cls(folder, db)

    def _missing(self, key: str) -> Exception:
        return LeagueError(f"the league database lacks {key!r}")

    # ------------------------------------------------------------------ published heads
    def published_fields(self) -> dict[str, Any]:
        """``published.json`` of a league says how many blocks its count and head cover."""
        fields: dict[str, Any] = {"blocks": self.block_count()}
        final = self.meta_or(FINAL_REPORT_META, "")
        if final:  # what the season's final established, signed with the rest
            fields["final"] = json.loads(final)
        return fields

    def publish(self, folder: Path) -> dict[str, Any] | None:
        """Writes ``published.json`` and appends to ``heads.jsonl`` a signed line per block stored
        since its last line (:func:`append_heads`)."""
        body = super().publish(folder)
        if self.signer is not None:
            append_heads(folder / HEADS, self.block_heads, self.signer)
        return body

    def block_heads(self, after: int = -1) -> list[tuple[int, int, str]]:
        """Per stored block after ``after`` whose games are signed: ``(block, games, head)``, the
        chain's count and head once the block was stored (a block is stored in one transaction,
        so its last game's signature is the chain's end then)."""
        rows = self._db.execute(
            "SELECT last.block, s.seq, s.head FROM (SELECT g.block AS block, MAX(s.seq) AS seq "
            "FROM games g JOIN signatures s ON s.key = g.key WHERE g.block > ? GROUP BY g.block) last "
            "JOIN signatures s ON s.seq = last.seq ORDER BY last.block",
            (after,),
        ).fetchall()
        return [(int(block), int(seq) + 1, str(head)) for block, seq, head in rows]

    def deal_secret(self) -> bytes:
        """The secret every deal and bot seed is keyed with."""
        return bytes.fromhex(self.meta("deal_secret"))

    # ------------------------------------------------------------------ commands
    def execute(self, command: dict[str, Any]) -> str:
        """Logs ``command`` and applies it, in one transaction.

        Returns:
            One line saying what was done.

        Raises:
            LeagueError: the command is not possible (nothing is logged then).
        """
        with _transaction(self._db):
            given = self.clock()
            cursor = self._db.execute(
                "INSERT INTO commands (given, body) VALUES (?, ?)", (given, json.dumps(command))
            )
            return self._apply(command, int(cursor.lastrowid or 0), given)

    def commands(self) -> list[tuple[int, dict[str, Any]]]:
        """Every command given, in order, with its sequence number."""
        rows = self._db.execute("SELECT seq, body FROM commands ORDER BY seq").fetchall()
        return [(int(seq), json.loads(body)) for seq, body in rows]

    def _apply(self, command: dict[str, Any], seq: int, given: float) -> str:
        op = command.get("op")
        if op in ("add", "update"):
            closed = frozen_refusal(self.frozen_at(), given)
            if closed is not None:
                raise LeagueError(closed)
            return self._add(command, seq, update=op == "update")
        if op == "freeze":
            at = float(command["at"])
            self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('frozen_at', ?)", (repr(at),))
            when = "froze" if at <= given else "freezes"
            return f"the season {when} at {utc_text(at)}: no new version is accepted from then on"
        if op == "unfreeze":
            if self.frozen_at() is None:
                raise LeagueError("the season is not frozen")
            self._db.execute("DELETE FROM meta WHERE key = 'frozen_at'")
            return "the season is open again: new versions are accepted"
        if op in ("retire", "unretire"):
            version = self._resolve(str(command["name"]))
            wanted = RETIRED if op == "retire" else ACTIVE
            if op == "retire" and version.status not in (ACTIVE, PENDING, QUARANTINED):
                raise LeagueError(f"{version.id} is {version.status}: only an active version can be retired")
            if op == "unretire" and version.status not in (RETIRED, QUARANTINED):
                raise LeagueError(f"{version.id} is {version.status}, not retired or quarantined")
            self._set_status(version.id, wanted, f"{op} (command {seq})")
            return f"{version.id}: {wanted}"
        if op == "team":
            name = str(command["name"])
            if not self.versions(entrant=name):
                raise LeagueError(f"no entrant {name!r}: see `hearts league show`")
            return self._set_team(name, command.get("team"), seq)
        if op in ("link", "unlink"):
            return self._link(str(command["a"]), str(command["b"]), op == "link", seq)
        if op == "pin":
            version = self._resolve(str(command["name"]))
            value = command.get("value")
            self._db.execute("UPDATE versions SET pinned = ? WHERE id = ?", (value, version.id))
            return f"{version.id}: pinned to {value}" if value is not None else f"{version.id}: unpinned"
        raise LeagueError(f"unknown command {op!r}")

    def _add(self, command: dict[str, Any], seq: int, update: bool) -> str:
        name = str(command["name"])
        if not BOT_NAME_PATTERN.fullmatch(name):
            raise LeagueError(f"{name!r}: a name is letters, digits, '.', '_' or '-' (at most 40)")
        existing = self.versions(entrant=name)
        if update and not existing:
            raise LeagueError(f"no entrant {name!r}: add it first")
        if not update and existing:
            raise LeagueError(f"{name} exists: give a new version with `hearts league update {name} ...`")
        spec_data = dict(command["spec"])
        number = max((v.number for v in existing), default=0) + 1
        vid = f"{name}@v{number}"
        spec_data["name"] = vid
        spec = spec_from_json(spec_data, self.folder)
        digest = str(command["hash"])
        for old in existing:
            if old.hash == digest:
                raise LeagueError(f"{old.id} already runs exactly this (same command and files)")
        if not update:
            self._db.execute("INSERT INTO entrants VALUES (?, ?)", (name, seq))
        if update and not command.get("keep", False):
            for old in existing:
                if old.status in (ACTIVE, PENDING, QUARANTINED):
                    self._set_status(old.id, RETIRED, f"replaced by {vid}")
        self._db.execute(
            "INSERT INTO versions (id, entrant, number, hash, spec, status, pinned, seq) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (vid, name, number, digest, json.dumps(spec_to_json(spec)), PENDING, command.get("pinned"), seq),
        )
        if "team" in command:
            self._set_team(name, command["team"], seq)
        return f"{vid}: pending its validation game (played by `hearts league run`)"

    def _set_team(self, name: str, team: Any, seq: int) -> str:
        """Sets (a name) or clears (None or "") ``name``'s team."""
        if team in (None, ""):
            self._db.execute("DELETE FROM teams WHERE entrant = ?", (name,))
            return f"{name}: in no team"
        if not isinstance(team, str) or not BOT_NAME_PATTERN.fullmatch(team):
            raise LeagueError(f"{team!r}: a team name is letters, digits, '.', '_' or '-' (at most 40)")
        self._db.execute(
            "INSERT INTO teams VALUES (?, ?, ?) ON CONFLICT(entrant) DO UPDATE SET team = excluded.team, "
            "seq = excluded.seq",
            (name, team, seq),
        )
        return f"{name}: in team {team}: never at a table with another of its team"

    def _link(self, a: str, b: str, link: bool, seq: int) -> str:
        """Links (or unlinks) two names: entrants, or portal accounts that may become entrants."""
        for name in (a, b):
            if not BOT_NAME_PATTERN.fullmatch(name):
                raise LeagueError(f"{name!r}: a name is letters, digits, '.', '_' or '-' (at most 40)")
        if a == b:
            raise LeagueError(f"{a} cannot be linked with itself")
        first, second = sorted((a, b))
        if link:
            self._db.execute("INSERT OR IGNORE INTO links VALUES (?, ?, ?)", (first, second, seq))
            return f"{first} and {second} linked: never at one table"
        gone = self._db.execute("DELETE FROM links WHERE a = ? AND b = ?", (first, second)).rowcount
        if not gone:
            raise LeagueError(f"{first} and {second} are not linked: see `hearts league entrant links`")
        return f"{first} and {second} unlinked"

    def _resolve(self, name: str) -> Version:
        """``NAME@vN``, or ``NAME``'s newest version."""
        if "@" in name:
            found = [v for v in self.versions() if v.id == name]
        else:
            found = self.versions(entrant=name)[-1:]
        if not found:
            raise LeagueError(f"no entrant or version {name!r}: see `hearts league show`")
        return found[0]

    def resolve(self, name: str) -> Version:
        """The version ``NAME@vN``, or the newest of ``NAME``.

        Raises:
            LeagueError: there is none.
        """
        return self._resolve(name)

    def _set_status(self, vid: str, status: str, note: str) -> None:
        self._db.execute("UPDATE versions SET status = ?, note = ? WHERE id = ?", (status, note, vid))
        self._db.execute(
            "INSERT INTO events (block, version, kind, text, at) VALUES (?, ?, ?, ?, ?)",
            (self.block_count(), vid, status, note, self.clock()),
        )

    # ------------------------------------------------------------------ reading
    def teams(self) -> dict[str, str]:
        """Each entrant's declared team (entrants without one left out)."""
        with contextlib.suppress(sqlite3.OperationalError):  # read-only, from before teams: none
            rows = self._db.execute("SELECT entrant, team FROM teams ORDER BY entrant").fetchall()
            return {str(e): str(t) for e, t in rows}
        return {}

    def links(self) -> list[tuple[str, str]]:
        """The organiser's links, each pair sorted, in name order."""
        with contextlib.suppress(sqlite3.OperationalError):
            rows = self._db.execute("SELECT a, b FROM links ORDER BY a, b").fetchall()
            return [(str(a), str(b)) for a, b in rows]
        return []

    def sides(self) -> dict[str, str]:
        """Each entrant's side: entrants of one team or linked (directly or through others) share
        one, named by its first name in sort order; every other entrant is its own side. Two
        entrants of one side never sit at one table."""
        parent: dict[str, str] = {}

        def root(name: str) -> str:
            while parent.get(name, name) != name:
                name = parent[name]
            return name

        def join(a: str, b: str) -> None:
            ra, rb = root(a), root(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)

        entrants = {v.entrant for v in self.versions()}
        by_team: dict[str, str] = {}
        for entrant, team in self.teams().items():
            if team in by_team:
                join(entrant, by_team[team])
            else:
                by_team[team] = entrant
        for a, b in self.links():
            join(a, b)
        return {name: root(name) for name in sorted(entrants)}

    def frozen_at(self) -> float | None:
        """When the season froze or freezes (seconds since the epoch), or None: it is open."""
        row = self._db.execute("SELECT value FROM meta WHERE key = 'frozen_at'").fetchone()
        return None if row is None else float(row[0])

    def versions(self, entrant: str | None = None) -> list[Version]:
        """Versions in the order they were added (of one entrant, or all)."""
        sql = "SELECT id, entrant, number, hash, spec, status, pinned, note FROM versions"
        args: tuple[str, ...] = ()
        if entrant is not None:
            sql += " WHERE entrant = ?"
            args = (entrant,)
        rows = self._db.execute(sql + " ORDER BY seq, number", args).fetchall()
        return [
            Version(r[0], r[1], r[2], r[3], spec_from_json(json.loads(r[4]), self.folder), r[5], r[6], r[7])
            for r in rows
        ]

    def snapshot(self) -> Snapshot:
        """The commands seen so far and the versions, read together."""
        with _transaction(self._db, "BEGIN"):
            seen = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM commands").fetchone()[0]
            blocks = self.block_count()
            versions = tuple(self.versions())
        return Snapshot(int(seen), blocks, versions)

    def data_version(self) -> int:
        """A number that changes whenever another connection commits to the database (SQLite's
        ``PRAGMA data_version``): a reader's cheap look for "anything new?"."""
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    def state(self) -> int:
        """A number that changes whenever a block is stored, a command is given or a version
        changes status: what the official table and the league's pages depend on. The same
        for every connection of this process (unlike :meth:`data_version`, which is each
        connection's own; it is a ``hash``, so not across processes), so a reader can keep what
        it computed from the league until the number changes."""
        blocks, commands = self._db.execute(
            "SELECT (SELECT COUNT(*) FROM blocks), (SELECT COALESCE(MAX(seq), 0) FROM commands)"
        ).fetchone()
        statuses = tuple((v.id, v.status) for v in self.versions())
        return hash((int(blocks), int(commands), statuses)) & ((1 << 62) - 1)

    def block_count(self) -> int:
        """Blocks stored."""
        return int(self._db.execute("SELECT COUNT(*) FROM blocks").fetchone()[0])

    def next_block(self) -> int:
        """The number of the next block to play."""
        return int(self._db.execute("SELECT COALESCE(MAX(id), -1) + 1 FROM blocks").fetchone()[0])

    def block_rows(self) -> list[tuple[int, str, list[str], int]]:
        """Every stored block: number, seed, seating, commands seen."""
        rows = self._db.execute("SELECT id, seed, seats, commands_seen FROM blocks ORDER BY id").fetchall()
        return [(int(i), str(s), json.loads(t), int(c)) for i, s, t, c in rows]

    def block_games(self) -> dict[int, list[GameOutcome]]:
        """The rated games of every stored block, by block, in rotation order (no records)."""
        out: dict[int, list[GameOutcome]] = {}
        rows = self._db.execute(
            "SELECT block, summary FROM games WHERE block IS NOT NULL ORDER BY block, rotation"
        ).fetchall()
        for block, summary in rows:
            out.setdefault(int(block), []).append(GameOutcome.from_json(json.loads(summary), ""))
        return out

    def games(
        self, version: str | None = None, kind: str | None = None
    ) -> list[tuple[str, int | None, str, dict[str, Any]]]:
        """Stored games (key, block, validated version, summary), optionally one version's."""
        rows = self._db.execute(
            "SELECT key, block, validates, summary FROM games ORDER BY finished, key"
        ).fetchall()
        out = []
        for key, block, validates, summary in rows:
            data = json.loads(summary)
            if version is not None and version not in data["seats"]:
                continue
            if (kind == "rated" and block is None) or (kind == "validation" and block is not None):
                continue
            out.append((str(key), block, validates or "", data))
        return out

    def record(self, key: str) -> str | None:
        """The record of game ``key``."""
        row = self._db.execute("SELECT record FROM games WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _legacy(self) -> bool:
        """Whether the ratings are schema 1's mu and sigma columns (a league opened read-only;
        looked up at each read: a writer may convert them meanwhile)."""
        return "state" not in {row[1] for row in self._db.execute("PRAGMA table_info(ratings)")}

    def _state(self, text: str) -> State:
        try:
            return self.rating.state(json.loads(text))
        except ValueError as exc:
            raise LeagueError(f"{self.path_in(self.folder)}: {exc}") from None

    def ratings(self) -> dict[str, Rating]:
        """Per version that played: its online rating state, blocks played, failed games, last
        block."""
        if self._legacy():  # schema 1, read-only: the floats as stored
            rows = self._db.execute("SELECT version, mu, sigma, blocks, failed, last_block FROM ratings")
            return {
                str(v): Rating({"mu": float(m), "sigma": float(s)}, int(b), int(f), last)
                for v, m, s, b, f, last in rows.fetchall()
            }
        rows = self._db.execute("SELECT version, state, blocks, failed, last_block FROM ratings")
        return {
            str(v): Rating(self._state(state), int(b), int(f), last)
            for v, state, b, f, last in rows.fetchall()
        }

    def rating_states(self, vid: str) -> list[tuple[int, State]]:
        """The online rating state of ``vid`` after each of its blocks."""
        if self._legacy():
            rows = self._db.execute(
                "SELECT block, mu, sigma FROM rating_history WHERE version = ? ORDER BY block", (vid,)
            ).fetchall()
            return [(int(b), {"mu": float(m), "sigma": float(s)}) for b, m, s in rows]
        rows = self._db.execute(
            "SELECT block, state FROM rating_history WHERE version = ? ORDER BY block", (vid,)
        ).fetchall()
        return [(int(b), self._state(state)) for b, state in rows]

    def history(self, vid: str) -> list[tuple[int, float, float]]:
        """The online rating of ``vid`` after each of its blocks: (block, the model's estimate, its
        uncertainty)."""
        model = self.rating
        return [(b, model.estimate(s), model.uncertainty(s)) for b, s in self.rating_states(vid)]

    def seat_games(self, vid: str, limit: int) -> list[tuple[str, int, list[int], str]]:
        """The newest ``limit`` rated games of ``vid``: key, block, its seats there, the record."""
        rows = self._db.execute(
            "SELECT g.key, g.block, g.record FROM games g WHERE g.block IS NOT NULL AND g.key IN "
            "(SELECT game FROM results WHERE version = ?) ORDER BY g.block DESC, g.rotation DESC LIMIT ?",
            (vid, limit),
        ).fetchall()
        out = []
        for key, block, record in rows:
            seats = self._db.execute(
                "SELECT seat FROM results WHERE game = ? AND version = ? ORDER BY seat", (key, vid)
            ).fetchall()
            out.append((str(key), int(block), [int(s) for (s,) in seats], str(record)))
        return out

    def fault_games(self, vid: str, limit: int) -> tuple[int, int, list[tuple[str, int, list[int], str]]]:
        """``vid``'s rated games and faults in all, and its newest ``limit`` games with a fault or
        a failed seat (key, block, those seats, the record)."""
        games, faults = self._db.execute(
            "SELECT COUNT(DISTINCT r.game), COALESCE(SUM(r.faults), 0) FROM results r JOIN games g "
            "ON g.key = r.game WHERE r.version = ? AND g.block IS NOT NULL",
            (vid,),
        ).fetchone()
        rows = self._db.execute(
            "SELECT g.key, g.block, group_concat(r.seat), g.record FROM results r "
            "JOIN games g ON g.key = r.game WHERE r.version = ? AND g.block IS NOT NULL "
            "AND (r.faults > 0 OR r.failed > 0) "
            "GROUP BY g.key ORDER BY g.block DESC, g.rotation DESC LIMIT ?",
            (vid, limit),
        ).fetchall()
        listed = [
            (str(k), int(b), sorted(int(x) for x in str(s).split(",")), str(rec)) for k, b, s, rec in rows
        ]
        return int(games), int(faults), listed

    def events(self, vid: str | None = None) -> list[tuple[int, str, str, str]]:
        """Status changes: block count at the time, version, new status, why."""
        rows = self._db.execute("SELECT block, version, kind, text FROM events ORDER BY seq").fetchall()
        return [(int(b), v, k, t) for b, v, k, t in rows if vid is None or v == vid]

    def status_events(self, after: int = 0) -> list[tuple[int, float, str, str, str]]:
        """Status changes after event ``after``, oldest first: ``(seq, at, version, status, why)``.

        ``at`` is when it happened; an event from before events had a time takes it from what was
        stored with it (the version's validation game, the block that quarantined it), else from
        the last block stored before it (0.0: none).
        """
        timed = "at" in {row[1] for row in self._db.execute("PRAGMA table_info(events)")}
        rows = self._db.execute(
            "SELECT e.seq, COALESCE("
            + ("e.at, " if timed else "")
            + "CASE WHEN e.kind IN ('active', 'error') THEN "
            "(SELECT MAX(g.finished) FROM games g WHERE g.validates = e.version) END, "
            "(SELECT MAX(b.finished) FROM blocks b WHERE b.id < e.block), 0.0), "
            "e.version, e.kind, e.text FROM events e WHERE e.seq > ? ORDER BY e.seq",
            (after,),
        ).fetchall()
        return [(int(q), float(a), str(v), str(k), str(t)) for q, a, v, k, t in rows]

    def season_commands(self, after: int = 0) -> list[tuple[int, float, dict[str, Any]]]:
        """The freezes and unfreezes given after command ``after``: ``(seq, given, command)``."""
        rows = self._db.execute(
            "SELECT seq, given, body FROM commands WHERE seq > ? AND "
            "json_extract(body, '$.op') IN ('freeze', 'unfreeze') ORDER BY seq",
            (after,),
        ).fetchall()
        return [(int(q), float(g), json.loads(b)) for q, g, b in rows]

    def last_seq(self) -> tuple[int, int]:
        """The last status event's and the last command's sequence numbers (0: none yet)."""
        events = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0]
        given = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM commands").fetchone()[0]
        return int(events), int(given)

    def final_ended(self) -> tuple[float, dict[str, Any]] | None:
        """When the season's final ended and its report (``hearts league final``), or None: not yet.

        A final from before its end was timed ended with its last block stored (or the last
        command given, if later).
        """
        report = self.meta_or(FINAL_REPORT_META, "")
        if not report:
            return None
        at = self.meta_or(FINAL_ENDED_META, "")
        if not at:
            last = self._db.execute(
                "SELECT MAX((SELECT COALESCE(MAX(finished), 0.0) FROM blocks), "
                "(SELECT COALESCE(MAX(given), 0.0) FROM commands))"
            ).fetchone()[0]
            at = str(last)
        return float(at), json.loads(report)

    # ------------------------------------------------------------------ writing (the run loop)
    def store_validation(self, vid: str, outcome: GameOutcome, ok: bool, note: str) -> None:
        """Stores a validation game and the version's verdict, in one transaction."""
        with writing(f"the validation game of {vid}", self.path_in(self.folder)), _transaction(self._db):
            current = self._db.execute("SELECT status FROM versions WHERE id = ?", (vid,)).fetchone()
            self._insert_game(outcome, None, 0, vid)
            if current is not None and current[0] == PENDING:
                self._set_status(vid, ACTIVE if ok else ERROR, note)

    def store_block(
        self,
        block: int,
        seed: str,
        seats: Sequence[str],
        commands_seen: int,
        outcomes: Sequence[GameOutcome],
        ratings: Mapping[str, Mapping[str, float]],
        failed: dict[str, int],
        quarantine: Sequence[tuple[str, str]],
    ) -> None:
        """Stores a finished block with its games, results, online ratings (each version's state
        in the league's model, :meth:`RatingModel.update`) and quarantines.

        Raises:
            LeagueError: the block is stored already (a second ``run`` on the same league).
            StoreWriteError: the database cannot be written (no space, a failing disk): store
                it again once the cause is gone (nothing was written).
        """
        with writing(f"block {block}", self.path_in(self.folder)), _transaction(self._db):
            try:
                self._db.execute(
                    "INSERT INTO blocks VALUES (?, ?, ?, ?, ?)",
                    (block, seed, json.dumps(list(seats)), commands_seen, time.time()),
                )
            except sqlite3.IntegrityError:
                raise LeagueError(f"block {block} is stored already: is another `run` going?") from None
            for rotation, outcome in enumerate(outcomes):
                self._insert_game(outcome, block, rotation, None)
            model = self.rating.name
            for vid, state in ratings.items():
                text = json.dumps(self.rating.state(state))
                self._db.execute(
                    "INSERT INTO ratings VALUES (?, ?, ?, 1, ?, ?) ON CONFLICT(version) DO UPDATE SET "
                    "model = excluded.model, state = excluded.state, blocks = blocks + 1, "
                    "failed = failed + excluded.failed, last_block = excluded.last_block",
                    (vid, model, text, failed.get(vid, 0), block),
                )
                self._db.execute("INSERT INTO rating_history VALUES (?, ?, ?, ?)", (block, vid, model, text))
            for vid, note in quarantine:
                self._set_status(vid, QUARANTINED, note)

    def _insert_game(
        self, outcome: GameOutcome, block: int | None, rotation: int, validates: str | None
    ) -> None:
        summary = json.dumps(outcome.summary_json())
        self._db.execute(
            "INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                outcome.key,
                block,
                rotation,
                validates,
                outcome.game_id,
                summary,
                outcome.record_json,
                time.time(),
            ),
        )
        if self.signer is not None:
            self.signer.sign_next(self._db, outcome.key, summary, outcome.record_json)
        for seat, vid in enumerate(outcome.seats):
            self._db.execute(
                "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    outcome.key,
                    seat,
                    vid,
                    outcome.totals[seat],
                    outcome.places[seat],
                    outcome.faults[seat],
                    int(outcome.retired[seat] or outcome.crashed[seat] or outcome.never_answered[seat]),
                ),
            )


#: The league's published heads: one signed JSON line per stored block, appended as blocks are
#: stored (docs/SECURITY.md). A reader keeps a line; ``hearts league verify --head`` later
#: fails when the chain no longer holds it (a rollback).
HEADS = "heads.jsonl"
#: The longest line of ``heads.jsonl`` read (one is about 250 bytes).
MAX_HEAD_LINE = 4096


def utc_text(at: float) -> str:
    """A time as ISO 8601 in UTC, to the second: ``2026-12-24T18:00:00Z``."""
    return datetime.datetime.fromtimestamp(at, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def frozen_refusal(frozen_at: float | None, now: float) -> str | None:
    """Why no new version is accepted at ``now`` (one line), or None: the season is open."""
    if frozen_at is None or now < frozen_at:
        return None
    return (
        f"the season froze at {utc_text(frozen_at)}: no new version is accepted since then "
        "(the versions active then play the final)"
    )


def append_heads(
    path: Path, heads_after: Callable[[int], Sequence[tuple[int, int, str]]], signer: signing.Signer
) -> None:
    """Appends a signed line for each block stored after the last one ``path`` holds
    (``heads_after(block)`` gives their ``(block, games, head)``).

    Only ever appended to: a line once written stays, so a league rolled back under it (its
    database replaced by an earlier copy) leaves lines the chain no longer holds, which
    ``verify`` reports. A last line cut short (a crash mid-write) stays, and the next starts on
    a line of its own; a file whose last line cannot be read back is kept aside
    (``heads.jsonl.unreadable``) and written again whole.
    """
    last = _last_block(path)
    if last is None:
        path.replace(path.with_name(f"{path.name}.unreadable"))
        last = -1
    lines = [signer.head_line(block, games, head) for block, games, head in heads_after(last)]
    if not lines:
        return
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
    try:
        if os.fstat(fd).st_size and not _ends_with_newline(fd):
            os.write(fd, b"\n")
        os.write(fd, "".join(lines).encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def _ends_with_newline(fd: int) -> bool:
    return os.pread(fd, 1, os.fstat(fd).st_size - 1) == b"\n"


def _last_block(path: Path) -> int | None:
    """The block of the last whole line of ``heads.jsonl`` (-1: no file, or empty); None when it
    cannot be read back."""
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - 2 * MAX_HEAD_LINE))
            tail = handle.read()
    except FileNotFoundError:
        return -1
    except OSError:
        return None
    whole = tail[: tail.rfind(b"\n") + 1].splitlines()
    if not whole:
        return -1 if size == 0 else None
    try:
        block = json.loads(whole[-1])["block"]
    except (ValueError, KeyError, TypeError, RecursionError):
        return None
    return block if type(block) is int else None


def _migrate_ratings(db: sqlite3.Connection) -> None:
    """Converts a schema 1 league's rating tables to schema 2 (inside the caller's transaction):
    each ``mu``/``sigma`` row becomes ``openskill-pl`` with ``{"mu": mu, "sigma": sigma}``, the very
    floats (JSON writes a float's shortest exact form). Nothing to do once it is done."""
    (schema,) = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    if schema != "1":
        return
    ratings = db.execute("SELECT version, mu, sigma, blocks, failed, last_block FROM ratings").fetchall()
    history = db.execute("SELECT block, version, mu, sigma FROM rating_history").fetchall()
    db.execute("DROP TABLE ratings")
    db.execute("DROP TABLE rating_history")
    for table in _RATING_TABLES:
        db.execute(table)
    db.executemany(
        "INSERT INTO ratings VALUES (?, ?, ?, ?, ?, ?)",
        [
            (v, DEFAULT_RATING, json.dumps({"mu": float(m), "sigma": float(s)}), b, f, last)
            for v, m, s, b, f, last in ratings
        ],
    )
    db.executemany(
        "INSERT INTO rating_history VALUES (?, ?, ?, ?)",
        [(b, v, DEFAULT_RATING, json.dumps({"mu": float(m), "sigma": float(s)})) for b, v, m, s in history],
    )
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION),))


@contextlib.contextmanager
def _transaction(db: sqlite3.Connection, begin: str = "BEGIN IMMEDIATE") -> Iterator[None]:
    db.execute(begin)
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
