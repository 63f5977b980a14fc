"""The gRPC servicers: thin edges that convert protobuf to domain calls on the tables.

RefereeService.Play is registered with a raw-bytes request deserializer so that a malformed
message gets an in-stream MALFORMED rejection instead of killing the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
from collections.abc import AsyncIterator
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from cancellation_hearts.v1 import admin_service_pb2 as apb
from cancellation_hearts.v1 import admin_service_pb2_grpc as agrpc
from cancellation_hearts.v1 import referee_service_pb2 as rpb
from cancellation_hearts.v1 import spectator_service_pb2 as spb
from cancellation_hearts.v1 import spectator_service_pb2_grpc as sgrpc
from hearts_core.deal import seed_commitment
from hearts_core.defaults import TablePolicy
from hearts_core.errors import HeartsError
from hearts_core.rules import DEFAULT_MAX_HANDS, DEFAULT_TARGET_SCORE, Rules
from hearts_protocol import convert as wire
from hearts_protocol.values import RejectionCode
from hearts_server.logs import get_logger
from hearts_server.registry import Registry, TooManyTables
from hearts_server.sessions import SessionError, play_session
from hearts_server.table import Connection, FinishedGame, Table, TableSettings
from hearts_server.table.settings import MAX_NAME_CHARS, check_text

log = get_logger(__name__)

#: How long a new stream may take to send its join.
JOIN_MESSAGE_TIMEOUT_S = 10.0
#: Streams that may wait for their join at once (server-wide); past it new streams end at once
#: with RESOURCE_EXHAUSTED. A joined seat has one stream (a newer one replaces it).
MAX_WAITING_JOINS = 1_000
#: How long the referee reads (and drops) a flooding bot's messages before closing its stream.
#: The status it sets is RESOURCE_EXHAUSTED whatever the bot does; but Python's grpc.aio client
#: replaces a status that arrived with INTERNAL when one of its writes fails after it
#: (grpc/grpc#36066), so a burst is drained first for such a client to see the true status.
FLOOD_DRAIN_S = 2.0
#: Spectators a table admits at once.
MAX_SPECTATORS = 64
#: The longest name a bot may declare in its Join that is kept (logs and the game record).
MAX_DECLARED_NAME = 64


def declared_name(raw: str) -> str:
    """The name a bot gave itself in its Join (``Join.bot_name``) as the referee keeps it: its
    printable characters only (no terminal escapes or line breaks reach a log), whitespace
    collapsed, at most :data:`MAX_DECLARED_NAME` characters. It is self-declared: logged and
    recorded beside the organiser's name for the seat, never in its place."""
    printable = "".join(c if c.isprintable() else " " for c in raw)
    return " ".join(printable.split())[:MAX_DECLARED_NAME]


def settings_from_pb(config: apb.TableConfig, defaults: TablePolicy) -> TableSettings:
    """Table settings from a CreateTable request, with the server's defaults (the policy of
    ``hearts serve``) filled in for what it leaves at zero.

    Raises:
        HeartsError: on a bad player count.
        ValueError: on any other bad value, with a readable reason.
    """
    rules = Rules(
        players=config.players,
        target_score=config.target_score or DEFAULT_TARGET_SCORE,
        max_hands=config.max_hands or DEFAULT_MAX_HANDS,
        first_dealer=config.first_dealer,
    )
    return TableSettings(
        rules=rules,
        bot_names=tuple(config.bot_names),
        games=config.games or 1,
        seed=config.seed,
        game_seeds=tuple(config.game_seeds),
        reveal_seed=config.reveal_seed,
        policy=TablePolicy(
            decision_ms=config.decision_time_ms or defaults.decision_ms,
            time_bank_ms=config.time_bank_ms or defaults.time_bank_ms,
            max_faults=config.max_faults or defaults.max_faults,
            join_timeout_ms=config.join_timeout_ms or defaults.join_timeout_ms,
        ),
        label=config.label,
    )


class RefereeServicer:
    """RefereeService: one bidirectional stream per seat."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        #: Streams that have not sent their join yet.
        self.waiting = 0

    async def play(
        self, requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[bytes]:
        """Handles one seat's stream: join, then events and decisions until the table ends."""
        iterator = requests.__aiter__()
        if self.waiting >= MAX_WAITING_JOINS:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED, "too many streams are waiting to join: try again later"
            )
        self.waiting += 1
        try:
            first = await asyncio.wait_for(iterator.__anext__(), JOIN_MESSAGE_TIMEOUT_S)
        except StopAsyncIteration:
            return
        except TimeoutError:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "no join message within 10 s")
        finally:
            self.waiting -= 1
        try:
            join_request = rpb.PlayRequest.FromString(first)
        except DecodeError:
            join_request = rpb.PlayRequest()
        if join_request.WhichOneof("message") != "join":
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                "the first message of a stream must be a PlayRequest with join{token}",
            )
        join = join_request.join
        if join.protocol_version not in (0, 1):
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"protocol version {join.protocol_version} is not supported; this referee speaks 1",
            )
        session = self.registry.session_by_token(join.token)
        if session is not None:
            if session.streaming:
                await context.abort(grpc.StatusCode.ALREADY_EXISTS, "this session already has a live stream")
            try:
                declared = declared_name(join.bot_name)
                async for out in play_session(session, iterator, _deliver, join.events_in_request, declared):
                    yield out
            except SessionError as exc:
                await context.abort(_code(exc.code), str(exc))
            return
        found = self.registry.by_token(join.token)
        if found is None:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown seat token")
        assert found is not None
        table, seat = found
        if table.done.is_set():
            if table.finished:
                # A seat coming back after the end (it was away at the last card) is told how
                # the games it missed ended and released normally (status OK).
                seat_state = table.seats[seat]
                for game in table.finished[seat_state.results_seen :] or table.finished[-1:]:
                    yield rpb.PlayResponse(event=rpb.Event(game_completed=game.result)).SerializeToString()
                seat_state.results_seen = len(table.finished)
                if table.stop_reason:  # ended early: say why, and that there is nothing more
                    await context.abort(grpc.StatusCode.FAILED_PRECONDITION, table.stop_reason)
                return
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"this table ended without a finished game: {table.stop_reason or 'it was stopped'}",
            )
        conn = table.attach(seat, join.events_in_request, declared_name(join.bot_name))
        reader = asyncio.create_task(self._read(iterator, table, seat, conn))
        try:
            while True:
                message = await conn.outbox.get()
                if message is None:
                    break
                if callable(message):
                    message()  # everything queued before it has been written
                    continue
                yield message
            if conn.close_code == "RESOURCE_EXHAUSTED" and conn.close_reason is not None:
                # A flood: the reader drains what the bot still sends (for a moment), so that
                # its writes do not fail and it sees RESOURCE_EXHAUSTED, not its own INTERNAL.
                await asyncio.wait([reader], timeout=FLOOD_DRAIN_S + 0.5)
        finally:
            reader.cancel()
            table.detach(seat, conn)
        if conn.close_reason is not None:
            # Set, not abort(): a status set before the handler returns always reaches the
            # client as given (an abort racing the bot's own writes could surface as INTERNAL).
            context.set_code(_code(conn.close_code))
            context.set_details(conn.close_reason)

    @staticmethod
    async def _read(iterator: AsyncIterator[bytes], table: Table, seat: int, conn: Connection) -> None:
        try:
            async for raw in iterator:
                if table.seats[seat].connection is not conn:
                    break
                if not _deliver(table, seat, raw):
                    await _drain(iterator)
                    break
        except (asyncio.CancelledError, grpc.aio.AioRpcError):
            pass
        except Exception:  # the client went away mid-message; the writer side notices too
            log.debug("stream_read_failed", table_id=table.table_id, seat=seat)
        # The bot closed its side or broke: end our side too, so that a reconnection is possible.
        # Not with OK while the table plays on: OK is kept for "the table is done".
        if table.seats[seat].connection is conn:
            table.detach(seat, conn)
            if table.done.is_set():
                conn.close()
            else:
                conn.close(
                    "the bot closed its side of the stream before the table ended; reconnect with "
                    "the seat's token to play on",
                    "CANCELLED",
                )


async def _drain(iterator: AsyncIterator[bytes]) -> None:
    """Reads and drops what a flooding bot still sends, for at most FLOOD_DRAIN_S (stops at the
    first pause of 0.1 s)."""
    loop = asyncio.get_running_loop()
    until = loop.time() + FLOOD_DRAIN_S
    with contextlib.suppress(StopAsyncIteration, TimeoutError):
        while loop.time() < until:
            await asyncio.wait_for(iterator.__anext__(), 0.1)


def _deliver(table: Table, seat: int, raw: bytes, decoded: rpb.PlayRequest | None = None) -> bool:
    """Decodes one message a seat sent (unless ``decoded`` is given: the same message, decoded)
    and hands it to the table as an Answer; False: close the stream."""
    try:
        request = decoded if decoded is not None else rpb.PlayRequest.FromString(raw)
    except DecodeError:
        return table.reject(seat, RejectionCode.MALFORMED, "the message is not a valid PlayRequest")
    if request.WhichOneof("message") != "decision":
        return table.reject(seat, RejectionCode.UNEXPECTED, "only decisions are expected after the join")
    return table.answer(seat, wire.answer_from_pb(request.decision))


def _code(name: str) -> grpc.StatusCode:
    return getattr(grpc.StatusCode, name, grpc.StatusCode.UNKNOWN)


def bearer(context: grpc.aio.ServicerContext[Any, Any]) -> bytes | None:
    """The credential of the call's ``authorization: Bearer <credential>`` metadata, as bytes.

    The scheme is matched case-insensitively (RFC 7235); a value that is not ASCII, or not a
    Bearer credential, gives None.
    """
    for key, value in context.invocation_metadata() or ():
        if key.lower() != "authorization":
            continue
        raw = value if isinstance(value, bytes) else str(value).encode("utf-8", "replace")
        scheme, _, credential = raw.strip().partition(b" ")
        if scheme.lower() == b"bearer" and credential.strip():
            return credential.strip()
        return None
    return None


def _matches(given: bytes | None, secret: str) -> bool:
    return given is not None and hmac.compare_digest(given, secret.encode())


class AdminServicer(agrpc.AdminServiceServicer):
    """AdminService: create tables, wait for them, fetch records.

    Closed by default: with no ``admin_token`` every admin call is refused, unless
    ``open_admin`` says that anyone who can connect may make them.
    """

    def __init__(self, registry: Registry, admin_token: str | None, open_admin: bool = False) -> None:
        self.registry = registry
        self.admin_token = admin_token or None
        self.open_admin = open_admin and self.admin_token is None

    async def _check(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        if self.open_admin:
            return
        if self.admin_token is None:
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED,
                "this referee was started without an admin token and refuses every admin call "
                "(`hearts serve` makes one and prints where it is; --open-admin opens the API)",
            )
        if not _matches(bearer(context), self.admin_token or ""):
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED, "admin calls need 'authorization: Bearer <admin token>'"
            )

    async def _table(self, table_id: str, context: grpc.aio.ServicerContext[Any, Any]) -> Table:
        table = self.registry.tables.get(table_id)
        if table is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no table {table_id[:100]!r}")
        assert table is not None
        return table

    async def CreateTable(
        self, request: apb.CreateTableRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> apb.CreateTableResponse:
        await self._check(context)
        try:
            settings = settings_from_pb(request.config, self.registry.defaults)
        except (HeartsError, ValueError) as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
            raise
        try:
            table = self.registry.create(settings)
        except TooManyTables as exc:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
            raise
        return apb.CreateTableResponse(
            table_id=table.table_id,
            seats=[apb.SeatToken(seat=s.index, token=s.token) for s in table.seats],
            seed_commitment=_commitment(table),
            spectator_token=table.spectator_token,
        )

    async def GetTable(
        self, request: apb.GetTableRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> apb.GetTableResponse:
        await self._check(context)
        return await table_pb_async(await self._table(request.table_id, context), context)

    async def AwaitTable(
        self, request: apb.AwaitTableRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> apb.AwaitTableResponse:
        await self._check(context)
        table = await self._table(request.table_id, context)
        await table.done.wait()
        return apb.AwaitTableResponse(table=await table_pb_async(table, context))

    async def GetGameRecord(
        self, request: apb.GetGameRecordRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> apb.GetGameRecordResponse:
        await self._check(context)
        for table in self.registry.tables.values():
            for game in table.finished:
                if game.game_id == request.game_id:
                    return apb.GetGameRecordResponse(record_json=await _record_json(game, context))
            if table.game_id == request.game_id and not table.done.is_set():
                await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "the game is still running")
        # A table forgotten since (only the last finished tables are kept): its file.
        path = self.registry.record_path(request.game_id)
        if path is not None:
            try:
                text = await asyncio.to_thread(path.read_text, encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                pass
            else:
                return apb.GetGameRecordResponse(record_json=text.rstrip("\n"))
        await context.abort(grpc.StatusCode.NOT_FOUND, f"no game {request.game_id[:100]!r}")
        raise AssertionError("unreachable")

    async def CancelTable(
        self, request: apb.CancelTableRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> apb.CancelTableResponse:
        await self._check(context)
        table = await self._table(request.table_id, context)
        if self.registry.cancel(table.table_id):
            await table.done.wait()
        return apb.CancelTableResponse(table=await table_pb_async(table, context))

    async def ReleaseSeat(
        self, request: apb.ReleaseSeatRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> apb.ReleaseSeatResponse:
        await self._check(context)
        table = await self._table(request.table_id, context)
        if request.seat >= len(table.seats):
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"seat {request.seat} is not a seat of a {len(table.seats)}-seat table",
            )
        table.release(request.seat, request.faulted)
        return apb.ReleaseSeatResponse()

    async def OpenSession(
        self, request: apb.OpenSessionRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> apb.OpenSessionResponse:
        await self._check(context)
        try:
            check_text(request.bot_name, "a bot name", MAX_NAME_CHARS)
        except ValueError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        session = self.registry.open_session(request.bot_name)
        return apb.OpenSessionResponse(session_id=session.session_id, token=session.token)

    async def BindSeat(
        self, request: apb.BindSeatRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> apb.BindSeatResponse:
        await self._check(context)
        table = await self._table(request.table_id, context)
        session = self.registry.sessions.get(request.session_id)
        if session is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no open session {request.session_id!r}")
        assert session is not None
        try:
            session.bind(table, request.seat, request.bot_seed)
        except SessionError as exc:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(exc))
        return apb.BindSeatResponse()

    async def CloseSession(
        self, request: apb.CloseSessionRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> apb.CloseSessionResponse:
        await self._check(context)
        self.registry.close_session(request.session_id)
        return apb.CloseSessionResponse()


def _commitment(table: Table) -> str:
    return seed_commitment(table.settings.game_seed(0))


async def _record_json(game: FinishedGame, context: grpc.aio.ServicerContext[Any, Any]) -> str:
    try:
        return await asyncio.to_thread(lambda: game.record_json)
    except (OSError, UnicodeDecodeError) as exc:
        await context.abort(grpc.StatusCode.DATA_LOSS, f"the record of {game.game_id} cannot be read: {exc}")
        raise


async def table_pb_async(table: Table, context: grpc.aio.ServicerContext[Any, Any]) -> apb.GetTableResponse:
    """:func:`table_pb`, reading the records from disk off the event loop."""
    texts = [await _record_json(g, context) for g in table.finished]
    return table_pb(table, texts)


def table_pb(table: Table, texts: list[str] | None = None) -> apb.GetTableResponse:
    """The status and finished games of a table (``texts``: their records, read if not given)."""
    if texts is None:
        texts = [g.record_json for g in table.finished]
    return apb.GetTableResponse(
        table_id=table.table_id,
        status=wire.TABLE_STATUS_TO_PB[table.status],
        games=[
            apb.FinishedGame(
                game_id=g.game_id,
                result=g.result,
                record_json=text,
                record_error=g.record_error,
                seats=[
                    apb.SeatStats(
                        seat=i,
                        answered=s.answered,
                        by_referee=s.by_referee,
                        faults=s.faults,
                        retired=s.retired,
                        released=s.released,
                    )
                    for i, s in enumerate(g.seats)
                ],
            )
            for g, text in zip(table.finished, texts, strict=True)
        ],
        connected=[s.connection is not None for s in table.seats],
        results_told=[s.results_seen >= len(table.finished) for s in table.seats],
        stop_reason=table.stop_reason,
    )


class SpectatorServicer(sgrpc.SpectatorServiceServicer):
    """SpectatorService: a table's public events as they happen."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    async def Watch(
        self, request: spb.WatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[spb.WatchResponse]:
        table = self.registry.tables.get(request.table_id)
        if table is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no table {request.table_id[:100]!r}")
        assert table is not None
        if not table.done.is_set():
            given = request.spectator_token.encode() if request.spectator_token else bearer(context)
            if not _matches(given, table.spectator_token):
                await context.abort(
                    grpc.StatusCode.UNAUTHENTICATED,
                    "watching a live table needs its spectator_token (from CreateTableResponse); "
                    "an ended table is public",
                )
            if len(table.watchers) >= MAX_SPECTATORS:
                await context.abort(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"the table has {MAX_SPECTATORS} spectators already: try again later",
                )
        queue: asyncio.Queue[rpb.Event | None] = asyncio.Queue()
        backlog = list(table.public_log)
        if table.done.is_set():
            queue.put_nowait(None)
        else:
            table.watchers.append(queue)
        try:
            for event in backlog:
                yield spb.WatchResponse(event=rpb.Event.FromString(event))
            while True:
                item = await queue.get()
                if item is None:
                    break
                yield spb.WatchResponse(event=item)
        finally:
            if queue in table.watchers:
                table.watchers.remove(queue)
