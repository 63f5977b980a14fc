"""The server's tables, found by id or by seat token."""

from __future__ import annotations

import asyncio
import collections
import ctypes
import re
import secrets
from collections.abc import Callable
from pathlib import Path

from hearts_core.defaults import DEFAULT_POLICY, MAX_LIVE_TABLES, TablePolicy
from hearts_core.view import build_view
from hearts_server.logs import get_logger
from hearts_server.sessions import Session
from hearts_server.table import Table, TableSettings
from hearts_server.table.clock import Clock
from hearts_server.table.script import Scripts
from hearts_server.table.table import ViewBuilder

log = get_logger(__name__)


#: After a table ends, the referee hands the memory freed to the system this many seconds later
#: (once for all the tables that ended meanwhile).
TRIM_AFTER_S = 1.0


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        trim: Callable[[int], int] = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    return trim


_MALLOC_TRIM = _malloc_trim()


def release_freed_memory() -> None:
    """Hands the heap memory Python has freed back to the system (glibc's ``malloc_trim``).

    A finished game's objects are freed when its table ends, but glibc keeps the pages; without
    this the referee's resident memory stays at its peak after a burst of tables.
    """
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


class TooManyTables(Exception):
    """The referee has as many tables waiting or playing as it allows; the message says so."""


#: Finished tables kept in memory (GetTable, AwaitTable, Watch); older ones are forgotten, their
#: records stay on disk (GetGameRecord reads the file).
MAX_FINISHED_TABLES = 64
#: A game id as the referee makes them (the only names GetGameRecord reads from the record folder).
_GAME_ID = re.compile(r"[0-9a-f]{12}(-[0-9]{1,4})?")


class Registry:
    """Every table of a server and the task that referees each.

    Only what a live call needs is kept: running tables, and the last MAX_FINISHED_TABLES
    finished ones; a finished game's record lives in its file.

    Args:
        record_dir: Where finished games' records are written (None: memory only).
        defaults: Server-wide defaults.
        max_tables: Tables waiting or playing at once; CreateTable past it is refused.
        scripts: Scripted games by deal seed (the bot test kit's referee only; :mod:`.table.script`).
    """

    def __init__(
        self,
        record_dir: Path | None,
        defaults: TablePolicy | None = None,
        max_tables: int = MAX_LIVE_TABLES,
        scripts: Scripts | None = None,
    ) -> None:
        self.record_dir = record_dir
        self.scripts = scripts
        self.defaults = defaults or DEFAULT_POLICY
        self.max_tables = max_tables
        #: The tables' clock (None: the event loop's; the flood test stops it with a ManualClock).
        self.clock: Clock | None = None
        #: How the tables build a seat's View (the leak test swaps in one that re-deals hidden cards).
        self.view_builder: ViewBuilder = build_view
        self.tables: dict[str, Table] = {}
        self._by_token: dict[str, tuple[Table, int]] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._finished: collections.deque[str] = collections.deque()
        self._trim: asyncio.TimerHandle | None = None
        if record_dir is not None:
            remove_partial_records(record_dir)
        #: Bot sessions (warm bots) by id, and by their secret token.
        self.sessions: dict[str, Session] = {}
        self._by_session_token: dict[str, Session] = {}

    def create(self, settings: TableSettings) -> Table:
        """Creates a table and starts refereeing it (it waits for its seats to join).

        Raises:
            TooManyTables: if ``max_tables`` tables are waiting or playing already.
        """
        live = self.live_tables()
        if live >= self.max_tables:
            raise TooManyTables(
                f"the referee has {live} tables waiting or playing, its limit of {self.max_tables} "
                "(hearts serve --max-tables): create this one when another has ended"
            )
        table_id = secrets.token_hex(6)
        table = Table(
            table_id,
            settings,
            self.record_dir,
            clock=self.clock,
            view_builder=self.view_builder,
            scripts=self.scripts,
        )
        self.tables[table_id] = table
        for seat in table.seats:
            self._by_token[seat.token] = (table, seat.index)
        task = asyncio.get_running_loop().create_task(table.run(), name=f"table-{table_id}")
        self._tasks[table_id] = task
        task.add_done_callback(lambda _: self._ended(table))
        log.info(
            "table_created",
            table_id=table_id,
            players=settings.rules.players,
            games=settings.games,
            **settings.policy.to_json(),
        )
        return table

    def live_tables(self) -> int:
        """Tables waiting for their seats or playing (a table counts until its end is announced)."""
        return sum(1 for table_id in self._tasks if not self.tables[table_id].done.is_set())

    def _ended(self, table: Table) -> None:
        self._tasks.pop(table.table_id, None)
        self._finished.append(table.table_id)
        while len(self._finished) > MAX_FINISHED_TABLES:
            self.forget(self._finished.popleft())
        if self._trim is None:
            self._trim = asyncio.get_running_loop().call_later(TRIM_AFTER_S, self._release_memory)

    def _release_memory(self) -> None:
        self._trim = None
        release_freed_memory()

    def forget(self, table_id: str) -> None:
        """Drops a finished table from memory (its records stay on disk)."""
        table = self.tables.pop(table_id, None)
        if table is None:
            return
        for seat in table.seats:
            self._by_token.pop(seat.token, None)

    def cancel(self, table_id: str) -> bool:
        """Stops a running table now (AdminService.CancelTable); False if it had ended already."""
        task = self._tasks.get(table_id)
        table = self.tables.get(table_id)
        if task is None or task.done() or table is None:
            return False
        table.stop_reason = "the organiser cancelled the table"
        task.cancel()
        return True

    def record_path(self, game_id: str) -> Path | None:
        """Where a game's record would be on disk (None for a name the referee never makes)."""
        if self.record_dir is None or _GAME_ID.fullmatch(game_id) is None:
            return None
        return self.record_dir / f"{game_id}.json"

    def by_token(self, token: str) -> tuple[Table, int] | None:
        """The table and seat a token acts for, or None."""
        return self._by_token.get(token)

    def open_session(self, bot_name: str) -> Session:
        """Opens a bot session (:mod:`hearts_server.sessions`)."""
        session = Session(secrets.token_hex(6), bot_name)
        self.sessions[session.session_id] = session
        self._by_session_token[session.token] = session
        log.info("session_opened", session_id=session.session_id, bot=bot_name)
        return session

    def session_by_token(self, token: str) -> Session | None:
        """The session a token opens, or None."""
        return self._by_session_token.get(token)

    def close_session(self, session_id: str) -> None:
        """Closes a session (its stream ends once its bound seats are played); forgets it."""
        session = self.sessions.pop(session_id, None)
        if session is not None:
            session.close()
            self._by_session_token.pop(session.token, None)
            log.info("session_closed", session_id=session_id, games=session.games)

    async def close(self) -> None:
        """Stops every table still running (finished games keep their records)."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def remove_partial_records(record_dir: Path) -> list[Path]:
    """Removes the temporary files a killed referee left half written (``.NAME.json.*.tmp``, made by
    :func:`hearts_core.record.write_text_durably`); returns them."""
    removed = []
    try:
        candidates = list(record_dir.glob(".*.json.*.tmp"))
    except OSError:
        return []
    for path in candidates:
        try:
            path.unlink()
        except OSError:
            continue
        removed.append(path)
    if removed:
        log.warning("partial_records_removed", count=len(removed), folder=str(record_dir))
    return removed
