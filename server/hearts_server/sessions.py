"""Bot sessions: one bot process playing seats of many tables in a row over one stream.

The organiser opens a session (``AdminService.OpenSession``), gives its token to a bot process,
and binds seats of later tables to it (``BindSeat``). The process joins with the session token
as it would with a seat token; :func:`play_session` then attaches its stream to each bound
seat in turn, so the bot sees game after game (``GameCompleted`` then the next ``GameStarted``)
exactly as on a table of several games. Request ids go on increasing from table to table on a
session's stream (each table's ids start above the last one the stream saw), and an answer to
an id of a previous table, or one that arrives between two games, is dropped: a late answer of
a previous game never acts on the next one.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from google.protobuf.message import DecodeError

from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_server.logs import get_logger
from hearts_server.table import Connection, Table, TableStatus

log = get_logger(__name__)


class SessionError(Exception):
    """A bind that cannot be done (closed session, started table, bad seat), or a stream the
    referee closed: one clear line, and the stream's status (``code``, a gRPC status name)."""

    def __init__(self, message: str, code: str = "RESOURCE_EXHAUSTED") -> None:
        super().__init__(message)
        self.code = code


@dataclass(slots=True)
class Live:
    """The seat a session's stream is attached to right now."""

    table: Table
    seat: int
    conn: Connection
    #: The last request id of the stream's previous tables: an answer to it or below is late.
    floor: int


class Session:
    """One bot process's session: the seats bound to it, played in order.

    Args:
        session_id: Its public id (for BindSeat and CloseSession).
        bot_name: The bot's name, for logs.
    """

    def __init__(self, session_id: str, bot_name: str) -> None:
        self.session_id = session_id
        self.bot_name = bot_name
        self.token = secrets.token_hex(24)  # hex: never "-..."
        self.closed = False
        #: Whether a stream is attached to the session now (at most one).
        self.streaming = False
        #: The seat being played (kept across a broken stream, for the reconnection).
        self.current: tuple[Table, int] | None = None
        #: The live attachment, while a stream plays ``current``.
        self.live: Live | None = None
        #: Games played to the end on this session.
        self.games = 0
        #: The greatest request id its stream has been sent (ids keep increasing across tables).
        self.last_request_id = 0
        self._bindings: asyncio.Queue[tuple[Table, int] | None] = asyncio.Queue()

    def bind(self, table: Table, seat: int, bot_seed: str = "") -> None:
        """Queues a seat of a table that has not started (``bot_seed``: its GameStarted.bot_seed).

        Raises:
            SessionError: if the session is closed, the table started or the seat is taken.
        """
        if self.closed:
            raise SessionError(f"session {self.session_id} is closed")
        if seat >= len(table.seats):
            raise SessionError(f"seat {seat} is not a seat of a {len(table.seats)}-seat table")
        if table.status is not TableStatus.WAITING or table.seats[seat].ever_joined:
            raise SessionError(f"seat {seat} of table {table.table_id} is already being played")
        table.seats[seat].bot_seed = bot_seed
        self._bindings.put_nowait((table, seat))

    def close(self) -> None:
        """No more binds: the stream ends once the bound seats are played."""
        if not self.closed:
            self.closed = True
            self._bindings.put_nowait(None)

    async def next_seat(self) -> tuple[Table, int] | None:
        """The seat to play now: the current one, else the next bound one (None: closed)."""
        if self.current is None:
            item = await self._bindings.get()
            if item is None:
                self._bindings.put_nowait(None)  # a later stream ends at once too
                return None
            self.current = item
        return self.current


#: Decodes (unless given decoded) and hands one message of the bot to its table; False: close
#: the stream.
Deliver = Callable[[Table, int, bytes, rpb.PlayRequest | None], bool]


async def play_session(
    session: Session,
    iterator: AsyncIterator[bytes],
    deliver: Deliver,
    events_in_request: bool = False,
    declared_name: str = "",
) -> AsyncIterator[bytes]:
    """The messages of a session's stream: each bound seat's, game after game.

    ``events_in_request``: the stream's Join asked for held events inside its decision requests.
    ``declared_name``: the name its bot gave itself in the Join (cleaned), for each seat's log
    and record.

    Yields serialized PlayResponses. Ends (status OK) once the session is closed and its seats
    are played, or when the bot's side ends (the current seat waits for a reconnection).

    Raises:
        SessionError: with the reason and status, when the referee closed a seat's stream (a
            flood, or on purpose in a scripted game).
    """
    ended = asyncio.Event()
    reader = asyncio.create_task(_read(session, iterator, deliver, ended))
    waiter = asyncio.create_task(ended.wait())
    session.streaming = True
    try:
        while not ended.is_set():
            getting = asyncio.ensure_future(session.next_seat())
            await asyncio.wait({getting, waiter}, return_when=asyncio.FIRST_COMPLETED)
            if not getting.done():
                getting.cancel()
                break
            seat = getting.result()
            if seat is None:
                break
            table, index = seat
            if table.done.is_set():
                session.current = None  # it ended without this stream (aborted, or played for it)
                continue
            floor = session.last_request_id
            table.decisions.skip_request_ids(floor)
            conn = table.attach(index, events_in_request, declared_name)
            session.live = Live(table, index, conn, floor)
            log.info("session_seat", session_id=session.session_id, table_id=table.table_id, seat=index)
            try:
                while (message := await conn.outbox.get()) is not None:
                    if callable(message):
                        message()  # a write notification: everything queued before it is written
                        continue
                    yield message
            finally:
                session.live = None
                table.detach(index, conn)
                session.last_request_id = max(session.last_request_id, table.decisions.last_request_id)
            if conn.close_reason is not None:
                raise SessionError(conn.close_reason, conn.close_code)
            if ended.is_set() and not table.done.is_set():
                break  # the bot went away mid-game: it may come back to this seat
            session.current = None
            session.games += 1
    finally:
        session.streaming = False
        reader.cancel()
        waiter.cancel()


def _decoded(raw: bytes) -> rpb.PlayRequest | None:
    """The message, or None when it does not parse (the table rejects it as malformed)."""
    try:
        return rpb.PlayRequest.FromString(raw)
    except DecodeError:
        return None


def _answers_at_most(request: rpb.PlayRequest | None, floor: int) -> bool:
    """Whether ``request`` is a decision answering a request id of ``floor`` or below."""
    return (
        request is not None
        and request.WhichOneof("message") == "decision"
        and request.decision.request_id <= floor
    )


async def _read(
    session: Session, iterator: AsyncIterator[bytes], deliver: Deliver, ended: asyncio.Event
) -> None:
    try:
        async for raw in iterator:
            live = session.live
            if live is None or live.table.seats[live.seat].connection is not live.conn:
                continue  # between games: a late answer of the last one acts on nothing
            request = _decoded(raw)  # decoded once, here and for the table
            if live.floor and _answers_at_most(request, live.floor):
                continue  # an answer to a previous table's request
            if not deliver(live.table, live.seat, raw, request):
                break
    except asyncio.CancelledError:
        pass
    except Exception:  # the client went away mid-message
        log.debug("session_read_failed", session_id=session.session_id)
    finally:
        ended.set()
        live = session.live
        if live is not None and live.table.seats[live.seat].connection is live.conn:
            live.table.detach(live.seat, live.conn)
            live.conn.close()
