"""The gRPC servicers: thin edges that convert protobuf to domain calls on the tables.

RefereeService.Play is registered with a raw-bytes request deserializer so that a malformed
message gets an in-stream MALFORMED rejection instead of killing the stream.
"""

from __future__ import annotations

import asyncio
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
from hearts_core.errors import HeartsError
from hearts_server.logs import get_logger
from hearts_server.registry import Registry, settings_from_pb
from hearts_server.sessions import SessionError, play_session
from hearts_server.table import AlreadyConnected, Connection, Table, TableStatus

log = get_logger(__name__)

#: How long a new stream may take to send its join.
JOIN_MESSAGE_TIMEOUT_S = 30.0

_STATUS_TO_PB = {
    TableStatus.WAITING: apb.TABLE_STATUS_WAITING,
    TableStatus.PLAYING: apb.TABLE_STATUS_PLAYING,
    TableStatus.DONE: apb.TABLE_STATUS_DONE,
    TableStatus.ABORTED: apb.TABLE_STATUS_ABORTED,
}


class RefereeServicer:
    """RefereeService: one bidirectional stream per seat."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    async def play(
        self, requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[bytes]:
        """Handles one seat's stream: join, then events and decisions until the table ends."""
        iterator = requests.__aiter__()
        try:
            first = await asyncio.wait_for(iterator.__anext__(), JOIN_MESSAGE_TIMEOUT_S)
        except StopAsyncIteration:
            return
        except TimeoutError:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "no join message within 30 s")
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
                async for out in play_session(session, iterator, _deliver):
                    yield out
            except SessionError as exc:
                await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
            return
        found = self.registry.by_token(join.token)
        if found is None:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown seat token")
        assert found is not None
        table, seat = found
        if table.done.is_set():
            if table.finished:
                # A seat coming back after the end (it was away at the last card) is told how
                # the game ended and released normally.
                last = table.finished[-1].result
                yield rpb.PlayResponse(event=rpb.Event(game_completed=last)).SerializeToString()
                return
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION, "this table ended without a finished game"
            )
        try:
            conn = table.attach(seat)
        except AlreadyConnected:
            await context.abort(
                grpc.StatusCode.ALREADY_EXISTS, f"seat {seat} already has a live stream with this token"
            )
            raise  # unreachable: abort raises
        reader = asyncio.create_task(self._read(iterator, table, seat, conn))
        try:
            while True:
                message = await conn.outbox.get()
                if message is None:
                    break
                yield message
            if conn.close_reason is not None:
                await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, conn.close_reason)
        finally:
            reader.cancel()
            table.detach(seat, conn)

    @staticmethod
    async def _read(iterator: AsyncIterator[bytes], table: Table, seat: int, conn: Connection) -> None:
        try:
            async for raw in iterator:
                if table.seats[seat].connection is not conn or not _deliver(table, seat, raw):
                    break
        except (asyncio.CancelledError, grpc.aio.AioRpcError):
            pass
        except Exception:  # the client went away mid-message; the writer side notices too
            log.debug("stream_read_failed", table_id=table.table_id, seat=seat)
        # The bot closed its side or broke: end our side too, so that a reconnection is possible.
        if table.seats[seat].connection is conn:
            table.detach(seat, conn)
            conn.close()


def _deliver(table: Table, seat: int, raw: bytes) -> bool:
    """Decodes one message a seat sent and hands it to the table; False: close the stream."""
    try:
        request = rpb.PlayRequest.FromString(raw)
    except DecodeError:
        return table.reject(seat, "MALFORMED", "the message is not a valid PlayRequest")
    if request.WhichOneof("message") != "decision":
        return table.reject(seat, "UNEXPECTED", "only decisions are expected after the join")
    return table.answer(seat, request.decision)


def _authorize(token: str | None, context: grpc.aio.ServicerContext[Any, Any]) -> bool:
    if not token:
        return True
    metadata = dict(context.invocation_metadata() or ())
    given = str(metadata.get("authorization", ""))
    return hmac.compare_digest(given, f"Bearer {token}")


class AdminServicer(agrpc.AdminServiceServicer):
    """AdminService: create tables, wait for them, fetch records."""

    def __init__(self, registry: Registry, admin_token: str | None) -> None:
        self.registry = registry
        self.admin_token = admin_token

    async def _check(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        if not _authorize(self.admin_token, context):
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED, "admin calls need 'authorization: Bearer <admin token>'"
            )

    async def _table(self, table_id: str, context: grpc.aio.ServicerContext[Any, Any]) -> Table:
        table = self.registry.tables.get(table_id)
        if table is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no table {table_id!r}")
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
        table = self.registry.create(settings)
        return apb.CreateTableResponse(
            table_id=table.table_id,
            seats=[apb.SeatToken(seat=s.index, token=s.token) for s in table.seats],
            seed_commitment=_commitment(table),
        )

    async def GetTable(
        self, request: apb.GetTableRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> apb.GetTableResponse:
        await self._check(context)
        return table_pb(await self._table(request.table_id, context))

    async def AwaitTable(
        self, request: apb.AwaitTableRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> apb.AwaitTableResponse:
        await self._check(context)
        table = await self._table(request.table_id, context)
        await table.done.wait()
        return apb.AwaitTableResponse(table=table_pb(table))

    async def GetGameRecord(
        self, request: apb.GetGameRecordRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> apb.GetGameRecordResponse:
        await self._check(context)
        for table in self.registry.tables.values():
            for game in table.finished:
                if game.game_id == request.game_id:
                    return apb.GetGameRecordResponse(record_json=game.record_json)
            if table.game_id == request.game_id:
                await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "the game is still running")
        await context.abort(grpc.StatusCode.NOT_FOUND, f"no game {request.game_id!r}")
        raise AssertionError("unreachable")

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


def table_pb(table: Table) -> apb.GetTableResponse:
    """The status and finished games of a table."""
    return apb.GetTableResponse(
        table_id=table.table_id,
        status=_STATUS_TO_PB[table.status],
        games=[
            apb.FinishedGame(
                game_id=g.game_id,
                result=g.result,
                record_json=g.record_json,
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
            for g in table.finished
        ],
        connected=[s.connection is not None for s in table.seats],
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
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no table {request.table_id!r}")
        assert table is not None
        queue: asyncio.Queue[rpb.Event | None] = asyncio.Queue()
        backlog = list(table.public_log)
        if table.done.is_set():
            queue.put_nowait(None)
        else:
            table.watchers.append(queue)
        try:
            for event in backlog:
                yield spb.WatchResponse(event=event)
            while True:
                item = await queue.get()
                if item is None:
                    break
                yield spb.WatchResponse(event=item)
        finally:
            if queue in table.watchers:
                table.watchers.remove(queue)
