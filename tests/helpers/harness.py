"""Test harness for the referee: the real server on 127.0.0.1:0 and real gRPC clients.

Well-behaved seats are played by the Python SDK (:func:`hearts_client.run_async`) over gRPC;
adversarial seats use :class:`RawSeat`, a client that can send anything, bytes included.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import grpc

from cancellation_hearts.v1 import admin_service_pb2 as apb
from cancellation_hearts.v1 import admin_service_pb2_grpc as agrpc
from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_client.bots import make_bot
from hearts_client.sdk import run_async, safe_answer
from hearts_core.defaults import TablePolicy
from hearts_protocol.transport import own_channel
from hearts_server.server import RefereeServer, make_server
from hearts_server.table.clock import ManualClock

PLAY_METHOD = "/cancellation_hearts.v1.RefereeService/Play"


@contextlib.asynccontextmanager
async def running_server(record_dir: Path, **defaults: Any) -> AsyncIterator[RefereeServer]:
    """The real referee server on 127.0.0.1 and a free port, its admin API open (``open_admin``:
    only this test's process reaches it)."""
    server = make_server(record_dir, defaults=TablePolicy(**defaults), open_admin=True)
    await server.start()
    try:
        yield server
    finally:
        await server.stop(grace=0.5)


def admin_metadata(admin_token: str | None) -> tuple[tuple[str, str], ...]:
    """The metadata of an admin call with ``admin_token`` (none for an open referee)."""
    return (("authorization", f"Bearer {admin_token}"),) if admin_token else ()


async def create_table(
    address: str, names: Sequence[str], admin_token: str | None = None, **config: Any
) -> apb.CreateTableResponse:
    """Creates a table through AdminService.CreateTable."""
    async with own_channel(address) as channel:
        stub = agrpc.AdminServiceStub(channel)
        request = apb.CreateTableRequest(
            config=apb.TableConfig(players=len(names), bot_names=list(names), **config)
        )
        response: apb.CreateTableResponse = await stub.CreateTable(
            request, metadata=admin_metadata(admin_token)
        )
        return response


async def await_table(address: str, table_id: str, admin_token: str | None = None) -> apb.GetTableResponse:
    """Waits for a table's games through AdminService.AwaitTable."""
    async with own_channel(address) as channel:
        stub = agrpc.AdminServiceStub(channel)
        response: apb.AwaitTableResponse = await stub.AwaitTable(
            apb.AwaitTableRequest(table_id=table_id), timeout=300, metadata=admin_metadata(admin_token)
        )
        return response.table


#: How often a waiting test looks at the referee again (an event loop turn; not a guess at speed).
LOOK_S = 0.002


async def until(condition: Callable[[], bool], what: str, timeout: float = 120) -> None:
    """Waits for ``condition``, an event looked at every loop turn (never a guess at speed)."""
    try:
        async with asyncio.timeout(timeout):
            while not condition():
                await asyncio.sleep(LOOK_S)
    except TimeoutError:
        raise AssertionError(f"never happened: {what}") from None


async def time_out_each_decision(server: RefereeServer, table_id: str, seat: int, clock: ManualClock) -> int:
    """Times ``seat`` out, on the table's manual clock, each time it is asked, until the table ends.

    The clock moves on by the decision limit only when ``seat`` is the one seat the table waits
    for, read from the referee's own state: no other seat's deadline can fall due, however slow
    the machine, and nothing waits for real time. Returns how many times it moved the clock.
    """
    table = server.registry.tables[table_id]
    limit_s = table.settings.policy.decision_ms / 1000
    moved = 0
    while not table.done.is_set():
        asked = table.seats[seat].pending
        if asked is not None and all(s.pending is None for s in table.seats if s.index != seat):
            await clock.advance(limit_s)
            moved += 1
            while table.seats[seat].pending is asked and not table.done.is_set():
                await asyncio.sleep(LOOK_S)
        else:
            await asyncio.sleep(LOOK_S)
    return moved


def sdk_bot(address: str, token: str, name: str = "heuristic", seed: str = "1") -> asyncio.Task[int]:
    """A well-behaved built-in bot, playing through the SDK as a task."""
    return asyncio.get_running_loop().create_task(run_async(make_bot(name, seed), address, token, name=name))


class RawSeat:
    """An adversarial seat: a raw bidirectional stream that sends whatever the test wants."""

    def __init__(self, address: str) -> None:
        self.channel = own_channel(address)  # as a bot process would: a connection of its own
        self.outgoing: asyncio.Queue[bytes | None] = asyncio.Queue()
        method = self.channel.stream_stream(
            PLAY_METHOD, request_serializer=None, response_deserializer=rpb.PlayResponse.FromString
        )

        async def requests() -> AsyncIterator[bytes]:
            while (item := await self.outgoing.get()) is not None:
                yield item

        self.call: Any = method(requests())

    def send(self, message: rpb.PlayRequest | bytes) -> None:
        """Queues a message (or raw bytes) for the stream."""
        self.outgoing.put_nowait(message if isinstance(message, bytes) else message.SerializeToString())

    def join(self, token: str) -> None:
        """Sends the join."""
        self.send(rpb.PlayRequest(join=rpb.Join(token=token, bot_name="adversary", protocol_version=1)))

    async def recv(self, timeout: float = 30) -> rpb.PlayResponse | None:
        """The next message, or None when the stream ended."""
        try:
            message = await asyncio.wait_for(self.call.read(), timeout)
        except grpc.aio.AioRpcError:
            return None  # the status is in code()
        if message is grpc.aio.EOF:  # type: ignore[attr-defined]  # (missing from the grpc stubs)
            return None
        assert isinstance(message, rpb.PlayResponse)
        return message

    async def next_request(self, timeout: float = 30) -> rpb.DecisionRequest | None:
        """Skips events until the next decision request (None if the stream ends)."""
        while True:
            message = await self.recv(timeout)
            if message is None:
                return None
            if message.WhichOneof("message") == "decision_request":
                return message.decision_request

    async def next_rejection(self, timeout: float = 30) -> rpb.Rejection:
        """Skips events until the next rejection."""
        while True:
            message = await self.recv(timeout)
            assert message is not None, "the stream ended before a rejection"
            if message.WhichOneof("message") == "rejection":
                return message.rejection

    async def play_legally(self, first: rpb.DecisionRequest | None = None) -> None:
        """Answers every request legally (``first`` first, if given) until the stream ends."""
        request = first if first is not None else await self.next_request()
        while request is not None:
            self.send(legal_answer(request))
            request = await self.next_request()

    async def code(self) -> grpc.StatusCode:
        """The stream's final status code."""
        code: grpc.StatusCode = await self.call.code()
        return code

    async def close(self) -> None:
        """Drops the connection abruptly."""
        self.call.cancel()
        await self.channel.close(None)


def legal_answer(request: rpb.DecisionRequest) -> rpb.PlayRequest:
    """A legal answer to any request: the SDK's safe answer."""
    return rpb.PlayRequest(decision=safe_answer(request))


def load_records(record_dir: Path) -> list[dict[str, Any]]:
    """Every game record written in ``record_dir``."""
    return [json.loads(p.read_text()) for p in sorted(record_dir.glob("*.json"))]
