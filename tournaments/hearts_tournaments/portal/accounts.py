"""The portal's database, ``LEAGUE/portal.sqlite`` (0600): accounts, invites, submissions, audit.

An entrant's personal access token is ``chp_SELECTOR.SECRET`` (a 48-bit selector that finds the
account, 256 random bits of secret). Only the selector, a random salt and
HMAC-SHA256(salt, secret) are stored: the token is shown once, when it is made (``hearts league
entrant add`` or ``rotate``), and cannot be read back. A slow key-derivation function is not
needed: the secret is random, not a password. Rotating draws a new token (the old one and every
session made with it stop working at once); revoking ends the account's access for good.

Self-registration is off unless the organiser makes an invite code (``hearts league invite``):
each code makes one account (stored hashed too). An account's name is its entrant's name in the
league, so a name is one name whatever its case, and a name an entrant or an account holds is not
to be had by registering (:func:`name_refusal`).

A signed-in browser holds a session: a random id in its cookie, whose SHA-256 is a row of the
``sessions`` table with the account and the token it was made with. Signing out removes the row,
so every copy of the cookie stops working; rotating or revoking the token ends all the
account's sessions; a session lasts :data:`SESSION_S` from its sign-in.

An account's feed token (the secret part of its feed URL, ``/feed/NAME/TOKEN.atom``, for a feed
reader without cookies) is 256 random bits, stored as a salt and HMAC-SHA256 too: shown once,
when the entrant makes it on ``/me``; making a new one ends the old one
(:meth:`PortalStore.new_feed_token`).

Every account change and every submission is a row of the ``audit`` table (``hearts league
entrant audit LG``). Refusals that anyone can cause as often as they like (wrong tokens,
forged forms, uploads over the rate limit) are counted, not listed: one row per kind, address
and hour, whose ``count`` grows (:meth:`PortalStore.refusal`).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import secrets
import sqlite3
import time
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hearts_tournaments.arena.bots import BOT_NAME_PATTERN
from hearts_tournaments.league.config import LeagueError
from hearts_tournaments.league.store import LeagueStore
from hearts_tournaments.results.store import FILE_MODE

#: The portal's database file inside the league folder.
PORTAL_DB = "portal.sqlite"
TOKEN_PREFIX = "chp_"
#: Submission statuses: ``pending`` (accepted, waiting its turn), ``validating`` (its sandbox check,
#: then its league version's validation game), ``active`` (it plays) or ``error`` (why, first log lines).
PENDING, VALIDATING, ACTIVE, ERROR = "pending", "validating", "active", "error"
#: Seconds a session lasts from its sign-in.
SESSION_S = 8 * 3600
#: Sessions one account holds at most (a sign-in past that ends its oldest).
MAX_SESSIONS = 16
#: Seconds of the window (a clock hour) in which one address's refusals of one kind share a row.
REFUSAL_WINDOW_S = 3600
#: Addresses whose anonymous refusals get rows of their own in a window; further ones share one
#: row, under the address ``*``.
REFUSAL_ADDRESSES = 1000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS accounts (
    name TEXT PRIMARY KEY,
    created REAL NOT NULL,
    selector TEXT NOT NULL UNIQUE,
    salt BLOB NOT NULL,
    hash BLOB NOT NULL,
    rotated REAL NOT NULL,
    revoked REAL
);
CREATE TABLE IF NOT EXISTS invites (
    selector TEXT PRIMARY KEY, salt BLOB NOT NULL, hash BLOB NOT NULL,
    created REAL NOT NULL, used_by TEXT
);
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account TEXT NOT NULL REFERENCES accounts(name),
    received REAL NOT NULL,
    bytes INTEGER NOT NULL,
    status TEXT NOT NULL,
    version TEXT,
    message TEXT NOT NULL DEFAULT '',
    log TEXT NOT NULL DEFAULT '',
    report TEXT
);
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    actor TEXT NOT NULL,
    address TEXT NOT NULL,
    action TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_refusals ON audit (actor, action, address, at);
CREATE TABLE IF NOT EXISTS sessions (
    digest BLOB PRIMARY KEY,
    account TEXT NOT NULL,
    selector TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS feed_tokens (
    account TEXT PRIMARY KEY,
    salt BLOB NOT NULL,
    hash BLOB NOT NULL,
    made REAL NOT NULL
);
"""


class PortalError(Exception):
    """An account or portal command that cannot be done (one line: what, why, the fix)."""


@dataclass(frozen=True, slots=True)
class Account:
    """An entrant's account (its token's selector names the token now valid)."""

    name: str
    created: float
    selector: str
    rotated: float
    revoked: float | None


@dataclass(frozen=True, slots=True)
class Submission:
    """One uploaded archive and what became of it."""

    id: int
    account: str
    received: float
    bytes: int
    status: str
    version: str | None
    message: str
    log: str

    def to_json(self) -> dict[str, Any]:
        """As the API and the status page give it."""
        return {
            "id": self.id,
            "entrant": self.account,
            "received": self.received,
            "bytes": self.bytes,
            "status": self.status,
            "version": self.version,
            "message": self.message,
            "log": self.log.splitlines(),
        }


def _digest(salt: bytes, secret: str) -> bytes:
    return hmac.new(salt, secret.encode(), hashlib.sha256).digest()


def _new_token() -> tuple[str, str, bytes, bytes]:
    """A fresh token, its selector, salt and digest."""
    selector = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    salt = secrets.token_bytes(16)
    return f"{TOKEN_PREFIX}{selector}.{secret}", selector, salt, _digest(salt, secret)


def _clash(name: str, holders: Iterable[tuple[str, str]], same: Collection[str] = ()) -> str | None:
    """Why ``name`` is taken: by one of ``holders`` ((what, name) pairs) equal to it ignoring case,
    unless exactly equal and a ``same`` kind of holder; or None."""
    for what, holder in holders:
        if holder.casefold() == name.casefold() and not (holder == name and what in same):
            case = " (names that differ only in case are one name)" if holder != name else ""
            return f"the name {name!r} is taken by {what} {holder!r}{case}: choose another"
    return None


def _entrants(folder: Path) -> list[str]:
    """The league's entrants (none when ``folder`` holds no league)."""
    try:
        with LeagueStore.open(folder, read_only=True) as store:
            return sorted({v.entrant for v in store.versions()})
    except LeagueError:
        return []


def name_refusal(folder: Path, name: str) -> str | None:
    """Why the organiser may not add an entrant ``name`` to the league in ``folder``: an account
    (or another entrant) holds it but for its case; or None. An account's own entrant, named
    exactly as the account, is its to add."""
    holders = [("the league's entrant", e) for e in _entrants(folder)]
    if (folder / PORTAL_DB).is_file():
        with PortalStore(folder) as portal:
            holders += [("the account", a.name) for a in portal.accounts()]
    return _clash(name, holders, same=("the account", "the league's entrant"))


def _session_digest(sid: str) -> bytes:
    return hashlib.sha256(sid.encode()).digest()


def _split(token: str) -> tuple[str, str] | None:
    token = token.strip()
    if not token.startswith(TOKEN_PREFIX):
        return None
    selector, dot, secret = token[len(TOKEN_PREFIX) :].partition(".")
    if not dot or len(selector) != 12 or not secret or len(token) > 200:
        return None
    return selector, secret


class PortalStore:
    """The open portal database of the league in ``folder`` (created on first open)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        path = folder / PORTAL_DB
        if not folder.is_dir():
            raise PortalError(
                f"{folder} is not a folder: create the league with `hearts league init {folder}`"
            )
        fresh = not path.exists()
        try:
            self._db = sqlite3.connect(path, isolation_level=None, timeout=30.0, check_same_thread=False)
            if fresh:
                path.chmod(FILE_MODE)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA busy_timeout=30000")
            self._db.executescript(_SCHEMA)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(submissions)")}
            if "report" not in columns:  # a portal made before the kit's reports were kept
                self._db.execute("ALTER TABLE submissions ADD COLUMN report TEXT")
        except sqlite3.Error as exc:
            raise PortalError(f"{path} is not a portal database: {exc}") from None
        for name in (f"{PORTAL_DB}-wal", f"{PORTAL_DB}-shm"):
            with contextlib.suppress(OSError):
                (folder / name).chmod(FILE_MODE)

    def close(self) -> None:
        """Closes the database."""
        self._db.close()

    def __enter__(self) -> PortalStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _transaction(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        return immediate(self._db)

    # ------------------------------------------------------------------ meta
    def session_key(self) -> str:
        """The key session cookies are signed with (made on first use, kept in the database)."""
        with self._transaction() as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'session_key'").fetchone()
            if row is not None:
                return str(row[0])
            key = secrets.token_hex(32)
            db.execute("INSERT INTO meta VALUES ('session_key', ?)", (key,))
            return key

    # ------------------------------------------------------------------ audit
    def audit(self, actor: str, action: str, detail: dict[str, Any] | str = "", address: str = "cli") -> None:
        """Adds a row to the audit log."""
        text = detail if isinstance(detail, str) else json.dumps(detail, sort_keys=True)
        self._db.execute(
            "INSERT INTO audit (at, actor, address, action, detail) VALUES (?, ?, ?, ?, ?)",
            (time.time(), actor, address, action, text),
        )

    def refusal(self, actor: str, action: str, address: str, detail: dict[str, Any]) -> None:
        """A refusal anyone can cause as often as they like (``actor`` ``?`` when anonymous).

        The first of its kind (actor, action, address) in the clock hour is a row of the audit
        log, with ``detail`` and ``count`` 1; the others count in that row (``count``, ``last``),
        so a flood of them costs no more rows. Past :data:`REFUSAL_ADDRESSES` addresses in an
        hour, further anonymous ones share the address ``*``.
        """
        now = time.time()
        since = now - now % REFUSAL_WINDOW_S
        with self._transaction() as db:
            row = self._refusal_row(actor, action, address, since)
            if row is None and actor == "?":
                seen = db.execute(
                    "SELECT COUNT(DISTINCT address) FROM audit WHERE actor = '?' AND at >= ?", (since,)
                ).fetchone()[0]
                if seen >= REFUSAL_ADDRESSES:
                    address = "*"
                    row = self._refusal_row(actor, action, address, since)
            if row is None:
                self.audit(actor, action, {**detail, "count": 1, "last": round(now, 3)}, address)
                return
            seq, text = row
            counted = json.loads(text)
            counted.update(count=int(counted.get("count", 1)) + 1, last=round(now, 3))
            db.execute(
                "UPDATE audit SET detail = ? WHERE seq = ?", (json.dumps(counted, sort_keys=True), seq)
            )

    def _refusal_row(self, actor: str, action: str, address: str, since: float) -> tuple[int, str] | None:
        row = self._db.execute(
            "SELECT seq, detail FROM audit WHERE actor = ? AND action = ? AND address = ? AND at >= ? "
            "ORDER BY seq DESC LIMIT 1",
            (actor, action, address, since),
        ).fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def audit_log(self) -> list[dict[str, Any]]:
        """Every audit row, oldest first."""
        rows = self._db.execute("SELECT seq, at, actor, address, action, detail FROM audit ORDER BY seq")
        return [
            {"seq": s, "at": round(a, 3), "actor": who, "address": ad, "action": ac, "detail": d}
            for s, a, who, ad, ac, d in rows.fetchall()
        ]

    # ------------------------------------------------------------------ accounts
    def add_account(self, name: str, address: str = "cli", actor: str = "organiser") -> str:
        """Creates ``name``'s account (the organiser's); returns its token (shown once, stored hashed).

        The name may be an entrant's of exactly that name (the organiser gives that entrant an
        account), not one differing from an entrant's or an account's only in case.

        Raises:
            PortalError: a bad name, the account exists, or the name is taken.
        """
        with self._transaction() as db:
            if db.execute("SELECT 1 FROM accounts WHERE name = ?", (name,)).fetchone():
                raise PortalError(
                    f"entrant {name!r} has an account already: `hearts league entrant rotate` gives it "
                    "a new token"
                )
            return self._insert_account(name, address, actor, same=("the league's entrant",))

    def _insert_account(self, name: str, address: str, actor: str, same: Collection[str] = ()) -> str:
        """Inserts the account ``name`` (inside a transaction); its token."""
        if not BOT_NAME_PATTERN.fullmatch(name):
            raise PortalError(f"{name!r}: a name is letters, digits, '.', '_' or '-' (at most 40)")
        holders = [("the account", a.name) for a in self.accounts()]
        holders += [("the league's entrant", e) for e in _entrants(self.folder)]
        taken = _clash(name, holders, same)
        if taken is not None:
            raise PortalError(taken)
        token, selector, salt, digest = _new_token()
        now = time.time()
        self._db.execute(
            "INSERT INTO accounts VALUES (?, ?, ?, ?, ?, ?, NULL)", (name, now, selector, salt, digest, now)
        )
        self.audit(actor, "account_added", {"entrant": name}, address)
        return token

    def rotate(self, name: str) -> str:
        """Gives ``name`` a new token (the old one stops working); returns it.

        Raises:
            PortalError: no such account.
        """
        token, selector, salt, digest = _new_token()
        with self._transaction() as db:
            self._account_row(name)
            db.execute(
                "UPDATE accounts SET selector = ?, salt = ?, hash = ?, rotated = ?, revoked = NULL "
                "WHERE name = ?",
                (selector, salt, digest, time.time(), name),
            )
            db.execute("DELETE FROM sessions WHERE account = ?", (name,))
            self.audit("organiser", "token_rotated", {"entrant": name})
        return token

    def revoke(self, name: str) -> None:
        """Ends ``name``'s access: its token and sessions stop working (``rotate`` gives a new one).

        Raises:
            PortalError: no such account, or it is revoked already.
        """
        with self._transaction() as db:
            if self._account_row(name).revoked is not None:
                raise PortalError(f"entrant {name!r} is revoked already")
            db.execute("UPDATE accounts SET revoked = ? WHERE name = ?", (time.time(), name))
            db.execute("DELETE FROM sessions WHERE account = ?", (name,))
            self.audit("organiser", "account_revoked", {"entrant": name})

    def _account_row(self, name: str) -> Account:
        row = self._db.execute(
            "SELECT name, created, selector, rotated, revoked FROM accounts WHERE name = ?", (name,)
        ).fetchone()
        if row is None:
            raise PortalError(
                f"no account {name!r}: create it with `hearts league entrant add LEAGUE {name}`"
            )
        return Account(*row)

    def account(self, name: str) -> Account | None:
        """``name``'s account, or None."""
        try:
            return self._account_row(name)
        except PortalError:
            return None

    def accounts(self) -> list[Account]:
        """Every account, by name."""
        rows = self._db.execute(
            "SELECT name, created, selector, rotated, revoked FROM accounts ORDER BY name"
        )
        return [Account(*r) for r in rows.fetchall()]

    def authenticate(self, token: str) -> Account | None:
        """The live (not revoked) account whose token this is, or None."""
        parts = _split(token)
        if parts is None:
            return None
        selector, secret = parts
        row = self._db.execute(
            "SELECT name, created, selector, rotated, revoked, salt, hash FROM accounts WHERE selector = ?",
            (selector,),
        ).fetchone()
        if row is None or row[4] is not None:
            return None
        if not hmac.compare_digest(_digest(row[5], secret), row[6]):
            return None
        return Account(*row[:5])

    def session_valid(self, name: str, selector: str) -> bool:
        """A session made with the token ``selector`` still holds: not revoked, not rotated since."""
        account = self.account(name)
        return (
            account is not None
            and account.revoked is None
            and hmac.compare_digest(account.selector, selector)
        )

    # ------------------------------------------------------------------ feed tokens
    def new_feed_token(self, name: str, address: str) -> str:
        """A new feed token for ``name`` (shown once, stored hashed); the old one stops working."""
        token = secrets.token_urlsafe(32)
        salt = secrets.token_bytes(16)
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO feed_tokens VALUES (?, ?, ?, ?)",
                (name, salt, _digest(salt, token), time.time()),
            )
            self.audit(name, "feed_token_made", "", address)
        return token

    def feed_token_made(self, name: str) -> float | None:
        """When ``name``'s feed token was made, or None: it has none."""
        row = self._db.execute("SELECT made FROM feed_tokens WHERE account = ?", (name,)).fetchone()
        return None if row is None else float(row[0])

    def feed_valid(self, name: str, token: str) -> bool:
        """Whether ``token`` is the feed token of ``name``, a live (not revoked) account
        (compared in constant time)."""
        account = self.account(name)
        row = self._db.execute("SELECT salt, hash FROM feed_tokens WHERE account = ?", (name,)).fetchone()
        if account is None or account.revoked is not None or row is None or len(token) > 200:
            return False
        return hmac.compare_digest(_digest(row[0], token), row[1])

    # ------------------------------------------------------------------ invites
    def add_invite(self) -> str:
        """A single-use invite code that lets one entrant register (self-registration)."""
        code, selector, salt, digest = _new_token()
        code = "inv_" + code[len(TOKEN_PREFIX) :]
        with self._transaction() as db:
            db.execute("INSERT INTO invites VALUES (?, ?, ?, ?, NULL)", (selector, salt, digest, time.time()))
            self.audit("organiser", "invite_made", {"invite": selector})
        return code

    def open_invites(self) -> int:
        """Invite codes not used yet (self-registration is on while there is one)."""
        return int(self._db.execute("SELECT COUNT(*) FROM invites WHERE used_by IS NULL").fetchone()[0])

    def register(self, code: str, name: str, address: str) -> str:
        """Spends an invite code on a new account ``name``; returns its token.

        The name must be no account's and no entrant's, whatever its case (an invite never takes
        over an entrant the organiser added); a name refused leaves the code unspent.

        Raises:
            PortalError: the code is wrong or used, or the name is bad or taken.
        """
        parts = _split(TOKEN_PREFIX + code.strip()[4:]) if code.strip().startswith("inv_") else None
        with self._transaction() as db:
            row = None
            if parts is not None:
                row = db.execute(
                    "SELECT salt, hash FROM invites WHERE selector = ? AND used_by IS NULL", (parts[0],)
                ).fetchone()
            if row is None or parts is None or not hmac.compare_digest(_digest(row[0], parts[1]), row[1]):
                raise PortalError("that invite code is wrong or used: ask the organiser for one")
            token = self._insert_account(name, address, actor=f"invite {parts[0]}")
            db.execute("UPDATE invites SET used_by = ? WHERE selector = ?", (name, parts[0]))
        return token

    # ------------------------------------------------------------------ sessions
    def open_session(self, account: Account) -> str:
        """A new session of ``account`` (signed in with its current token): its id, for the cookie.

        Expired sessions go, and the account's oldest past :data:`MAX_SESSIONS`.
        """
        sid = secrets.token_urlsafe(32)
        now = time.time()
        with self._transaction() as db:
            db.execute("DELETE FROM sessions WHERE created <= ?", (now - SESSION_S,))
            db.execute(
                "DELETE FROM sessions WHERE digest IN (SELECT digest FROM sessions WHERE account = ? "
                "ORDER BY created DESC LIMIT -1 OFFSET ?)",
                (account.name, MAX_SESSIONS - 1),
            )
            db.execute(
                "INSERT INTO sessions VALUES (?, ?, ?, ?)",
                (_session_digest(sid), account.name, account.selector, now),
            )
        return sid

    def session(self, sid: str) -> str | None:
        """The account of the live session ``sid``, or None: signed out, older than
        :data:`SESSION_S`, or its token rotated or revoked since."""
        row = self._db.execute(
            "SELECT account, selector, created FROM sessions WHERE digest = ?", (_session_digest(sid),)
        ).fetchone()
        if row is None or row[2] <= time.time() - SESSION_S or not self.session_valid(row[0], row[1]):
            return None
        return str(row[0])

    def end_session(self, sid: str) -> None:
        """Signs the session ``sid`` out: every copy of its cookie stops working."""
        self._db.execute("DELETE FROM sessions WHERE digest = ?", (_session_digest(sid),))

    # ------------------------------------------------------------------ submissions
    def add_submission(self, account: str, size: int, address: str) -> int:
        """Records an accepted archive (status ``pending``); returns its id."""
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO submissions (account, received, bytes, status) VALUES (?, ?, ?, ?)",
                (account, time.time(), size, PENDING),
            )
            sid = int(cursor.lastrowid or 0)
            self.audit(account, "submission_received", {"submission": sid, "bytes": size}, address)
        return sid

    def refused(self, account: str, size: int, address: str, why: str) -> None:
        """An upload refused before it was stored (audit only)."""
        self.audit(account, "submission_refused", {"bytes": size, "why": why}, address)

    def set_submission(
        self, sid: int, status: str, message: str = "", version: str | None = None, log: str = ""
    ) -> None:
        """Moves a submission on (and audits it)."""
        with self._transaction() as db:
            db.execute(
                "UPDATE submissions SET status = ?, message = ?, version = COALESCE(?, version), log = ? "
                "WHERE id = ?",
                (status, message, version, log, sid),
            )
            row = db.execute("SELECT account FROM submissions WHERE id = ?", (sid,)).fetchone()
            self.audit(
                row[0] if row else "?",
                f"submission_{status}",
                {"submission": sid, "version": version, "message": message},
                "portal",
            )

    def submission(self, sid: int) -> Submission | None:
        """One submission, or None."""
        row = self._db.execute(
            "SELECT id, account, received, bytes, status, version, message, log FROM submissions "
            "WHERE id = ?",
            (sid,),
        ).fetchone()
        return None if row is None else Submission(*row)

    def set_report(self, sid: int, report: str) -> None:
        """Keeps the bot test kit's report of submission ``sid`` (JSON, bounded by its writer)."""
        self._db.execute("UPDATE submissions SET report = ? WHERE id = ?", (report, sid))

    def report(self, sid: int) -> str | None:
        """The kit's report of submission ``sid`` as kept, or None (not checked, or refused before)."""
        row = self._db.execute("SELECT report FROM submissions WHERE id = ?", (sid,)).fetchone()
        return None if row is None else row[0]

    def submissions(self, account: str | None = None) -> list[Submission]:
        """Submissions, newest first (of one account, or all)."""
        sql = "SELECT id, account, received, bytes, status, version, message, log FROM submissions"
        args: tuple[str, ...] = ()
        if account is not None:
            sql += " WHERE account = ?"
            args = (account,)
        return [Submission(*r) for r in self._db.execute(sql + " ORDER BY id DESC", args).fetchall()]

    def check_failures(self, account: str, after: int = 0) -> list[tuple[int, float, int, str]]:
        """``account``'s submissions that failed before becoming a version (the portal's check
        refused them), by the audit row that said so after row ``after``: ``(seq, at, submission,
        message)``, oldest first."""
        rows = self._db.execute(
            "SELECT a.seq, a.at, s.id, s.message FROM audit a JOIN submissions s "
            "ON s.id = json_extract(a.detail, '$.submission') "
            "WHERE a.action = ? AND a.actor = ? AND a.seq > ? AND s.account = a.actor "
            "AND s.status = ? AND s.version IS NULL ORDER BY a.seq",
            (f"submission_{ERROR}", account, after, ERROR),
        ).fetchall()
        return [(int(q), float(at), int(sid), str(message)) for q, at, sid, message in rows]

    def last_audit(self) -> int:
        """The last audit row's sequence number (0: none)."""
        return int(self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM audit").fetchone()[0])

    def unfinished(self) -> list[Submission]:
        """Submissions still ``pending`` or ``validating``, oldest first."""
        rows = self._db.execute(
            "SELECT id, account, received, bytes, status, version, message, log FROM submissions "
            "WHERE status IN (?, ?) ORDER BY id",
            (PENDING, VALIDATING),
        ).fetchall()
        return [Submission(*r) for r in rows]


@contextlib.contextmanager
def immediate(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A write transaction on ``db`` (``BEGIN IMMEDIATE``: the write lock at once), committed at
    the end of the block, rolled back if it raises; yields ``db``."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
