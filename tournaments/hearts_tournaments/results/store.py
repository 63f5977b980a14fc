"""What a tournament's and a league's databases are built on: an SQLite file with a ``meta``
table (:class:`MetaDatabase`), signed games (:mod:`hearts_tournaments.results.signing`), and
writes that fail for want of space without losing a finished game (:func:`writing`,
:func:`store_patiently`).

The tournament's database is :mod:`hearts_tournaments.tournament.store`, the league's
:mod:`hearts_tournaments.league.store`.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Self

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from hearts_server.logs import get_logger
from hearts_tournaments.results import signing

log = get_logger(__name__)

#: Mode of the database's files (folders: FOLDER_MODE).
FILE_MODE = 0o600


class StoreError(Exception):
    """A folder that does not hold a usable tournament database; the message says why."""


class StoreWriteError(StoreError):
    """A game could not be written to the database: no space (a full disk, a quota, a file size
    limit) or a failing disk. Nothing was written: storing the same game again once the cause is
    gone succeeds.

    Attributes:
        no_space: Whether the write failed for want of space.
    """

    def __init__(self, message: str, no_space: bool) -> None:
        super().__init__(message)
        self.no_space = no_space


#: errno values of a write that failed for want of space.
_NO_SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
#: SQLite's result code for "database or disk is full".
_SQLITE_FULL = 13


def _no_space(exc: BaseException) -> bool:
    """Whether a failed write failed for want of space."""
    if isinstance(exc, sqlite3.Error):
        return getattr(exc, "sqlite_errorcode", None) == _SQLITE_FULL
    return isinstance(exc, OSError) and exc.errno in _NO_SPACE_ERRNOS


@contextlib.contextmanager
def writing(what: str, path: Path) -> Iterator[None]:
    """Turns a failed write of ``what`` to the database at ``path`` into :class:`StoreWriteError`
    (an ``sqlite3.IntegrityError``, a refused duplicate, passes through as it is).

    (SQLite reports a write refused for want of space as "database or disk is full" or, for
    some causes such as a file size limit, as a plain "disk I/O error".)
    """
    try:
        yield
    except sqlite3.IntegrityError:
        raise
    except (OSError, sqlite3.Error) as exc:
        raise StoreWriteError(f"{what} cannot be stored in {path}: {exc}", _no_space(exc)) from None


#: Seconds between tries to store a finished game while the database cannot be written.
STORE_RETRY_S = 2.0


async def store_patiently(
    write: Callable[[], None], what: str, resume: str, say: Callable[[str], None]
) -> None:
    """Runs ``write`` (a database write that raises :class:`StoreWriteError`) until it succeeds.

    While it fails (a full disk, a failing one) it says so once through ``say`` and tries again
    every :data:`STORE_RETRY_S` seconds, holding what it stores, so that nothing finished is lost;
    once it succeeds it says so. ``resume`` is the command that plays on after a stop meanwhile.
    """
    waiting = False
    while True:
        try:
            write()
        except StoreWriteError as exc:
            if not waiting:
                cause = "no space" if exc.no_space else "the database cannot be written"
                log.error("not_stored", what=what, error=str(exc), no_space=exc.no_space)
                say(
                    f"{cause}: {exc}; holding {what} and trying again every {STORE_RETRY_S:g} s: "
                    f"free some space (or fix the disk); Ctrl-C stops, and `{resume}` plays it again"
                )
                waiting = True
            await asyncio.sleep(STORE_RETRY_S)
            continue
        if waiting:
            log.info("stored_after_waiting", what=what)
            say(f"the database can be written again: {what} is stored")
        return


class MetaDatabase:
    """An open SQLite database with a ``meta`` table of key/value text, usable with ``with``.

    Subclasses say which error a missing meta value is (:meth:`_missing`).
    """

    _db: sqlite3.Connection

    def close(self) -> None:
        """Closes the database."""
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def meta(self, key: str) -> str:
        """A value of the meta table."""
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise self._missing(key)
        return str(row[0])

    def _missing(self, key: str) -> Exception:
        return KeyError(key)

    def meta_or(self, key: str, default: str) -> str:
        """A value of the meta table, or ``default`` where it has none."""
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else str(row[0])

    #: Signs every game stored (:mod:`hearts_tournaments.results.signing`); None stores games
    #: unsigned, which ``verify`` reports.
    signer: signing.Signer | None = None
    #: The meta key of the id every signature binds to.
    _ID_META = "tournament_id"

    @property
    def ledger_id(self) -> str:
        """The id every signature binds to (a database from before it had one: derived from its meta)."""
        fallback = "/".join(self.meta_or(k, "") for k in ("name", "created_at", "config"))
        return self.meta_or(self._ID_META, hashlib.sha256(fallback.encode()).hexdigest()[:32])

    def sign_with(self, key: Ed25519PrivateKey) -> None:
        """Signs every game stored from now on with ``key``."""
        self.signer = signing.Signer(key, self.ledger_id)

    def signatures(self) -> list[tuple[int, str, str, str, str]]:
        """The signature chain, ``(seq, key, signer, signature, head)`` by seq (none before signatures)."""
        try:
            rows = self._db.execute("SELECT seq, key, signer, signature, head FROM signatures ORDER BY seq")
            return [(int(a), str(b), str(c), str(d), str(e)) for a, b, c, d, e in rows]
        except sqlite3.OperationalError:
            return []

    def signed_games(self) -> list[tuple[str, str, str]]:
        """``(key, summary, record)`` of every stored game, as signed."""
        rows = self._db.execute("SELECT key, summary, record FROM games")
        return [(str(k), str(s), str(r)) for k, s, r in rows]

    def publish(self, folder: Path) -> dict[str, Any] | None:
        """Writes ``published.json`` (key, count and chain head, and :meth:`published_fields`,
        signed); None without a signer."""
        if self.signer is None:
            return None
        return self.signer.publish(
            folder, self.meta_or("name", folder.name), self._db, self.published_fields()
        )

    def published_fields(self) -> dict[str, Any]:
        """What ``published.json`` says besides the key, the count and the head."""
        return {}

    def set_meta(self, key: str, value: str) -> None:
        """Sets a value of the meta table, in a transaction of its own."""
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))
