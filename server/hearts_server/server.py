"""Assembling and running the referee's gRPC server (grpc.aio).

Besides the three services of the protocol it serves the standard health-checking and
reflection services, and TLS when given a certificate and key.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc
from grpc_reflection.v1alpha._async import ReflectionServicer as AsyncReflectionServicer

from cancellation_hearts.v1 import (
    admin_service_pb2,
    admin_service_pb2_grpc,
    spectator_service_pb2,
    spectator_service_pb2_grpc,
)
from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_core.defaults import MAX_LIVE_TABLES, TablePolicy
from hearts_protocol.transport import MAX_CALLS_PER_CONNECTION
from hearts_server.logs import get_logger
from hearts_server.registry import Registry
from hearts_server.service import AdminServicer, RefereeServicer, SpectatorServicer
from hearts_server.table.script import Scripts

log = get_logger(__name__)

#: Bots send small messages; anything bigger is refused by the transport.
MAX_MESSAGE_BYTES = 64 * 1024
SERVICE_NAMES = (
    rpb.DESCRIPTOR.services_by_name["RefereeService"].full_name,
    admin_service_pb2.DESCRIPTOR.services_by_name["AdminService"].full_name,
    spectator_service_pb2.DESCRIPTOR.services_by_name["SpectatorService"].full_name,
)


#: The v1 name of the reflection service (grpcurl, buf curl and grpc-health-probe ask for it).
REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"
#: The transport's limits (grpc core channel arguments). A bot needs one stream; an organiser one
#: per table it awaits (on a connection per table). Bounding concurrent streams per connection
#: and the requests the server queues before a handler takes them keeps one abusive connection
#: (an HTTP/2 rapid reset: streams opened and reset as fast as it can) from starving everyone
#: else's joins.
SERVER_OPTIONS: list[tuple[str, int]] = [
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.so_reuseport", 0),
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
    ("grpc.http2.max_ping_strikes", 2),
    # Measured with bench/rapid_reset.py (one connection opening and resetting ~600,000 streams
    # a second): at 64 concurrent streams per connection (or grpc's default, unlimited) joins on
    # other connections took seconds or failed (CANCELLED, timeouts); at 8, with at most 2 new
    # streams taken per read of a connection, they kept working (tens of ms). grpc counts a
    # stream until Python has let go of it ("overload protection") and refuses streams past the
    # limit (REFUSED_STREAM). Clients that keep several calls open use a connection per group
    # (hearts_protocol.transport.own_channel): the SDK, the runner and the test harness do.
    ("grpc.max_concurrent_streams", MAX_CALLS_PER_CONNECTION),
    ("grpc.http2.max_requests_per_read", 2),
    ("grpc.max_connection_idle_ms", 600_000),
    # Calls the server has accepted but Python has not picked up yet: above the soft limit grpc
    # cancels new calls at random (the CANCELLED joins of the attack); keep it out of reach.
    ("grpc.server.max_pending_requests", 20_000),
    ("grpc.server.max_pending_requests_hard_limit", 40_000),
    ("grpc.http2.max_header_list_size", 16 * 1024),
]


#: The logger of grpc's Cython layer, which logs a traceback for every metadata value that is not
#: UTF-8 (``grpc._cython.cygrpc._decode``: "Invalid encoding on ...", then decodes it as latin-1).
CYGRPC_LOGGER = "grpc._cython.cygrpc"
#: At most one line about such metadata per this many seconds.
INVALID_METADATA_LOG_INTERVAL_S = 60.0


class InvalidMetadataFilter(logging.Filter):
    """Turns grpc's traceback for metadata that is not UTF-8 into one rate-limited line.

    Whoever can connect can send such a header on every call (an ``authorization`` of random
    bytes): grpc logs the value and a traceback for each (about 800 bytes). This filter lets one
    line through per INVALID_METADATA_LOG_INTERVAL_S, without the traceback or the value, saying
    how many it dropped; the call itself goes on (the value is read as latin-1, so a credential
    never matches and the call is UNAUTHENTICATED).
    """

    def __init__(self, interval: float = INVALID_METADATA_LOG_INTERVAL_S) -> None:
        super().__init__()
        self.interval = interval
        self.next_line = 0.0
        self.dropped = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith("Invalid encoding on"):
            return True
        now = time.monotonic()
        if now < self.next_line:
            self.dropped += 1
            return False
        self.next_line = now + self.interval
        record.msg = (
            "a call carried metadata that is not UTF-8 (read as latin-1; a credential in it never "
            "matches); %d more since the last such line, at most one line a minute"
        )
        record.args = (self.dropped,)
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        record.exc_info = record.exc_text = None
        record.stack_info = None
        self.dropped = 0
        return True


def quiet_invalid_metadata() -> None:
    """Installs :class:`InvalidMetadataFilter` on grpc's Cython logger (once per process)."""
    logger = logging.getLogger(CYGRPC_LOGGER)
    if not any(isinstance(f, InvalidMetadataFilter) for f in logger.filters):
        logger.addFilter(InvalidMetadataFilter())


class QuietHealth(HealthServicer):  # type: ignore[misc]
    """The standard health service, with ``List`` and a quiet end of open ``Watch`` calls."""

    async def List(
        self, request: health_pb2.HealthListRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> health_pb2.HealthListResponse:
        """Every service's status."""
        statuses = dict(self._server_status)
        return health_pb2.HealthListResponse(
            statuses={name: health_pb2.HealthCheckResponse(status=s) for name, s in statuses.items()}
        )

    async def Watch(
        self, request: health_pb2.HealthCheckRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> None:
        """Streams a service's status until the call ends, or the server stops (it then ends the
        call itself after NOT_SERVING, so that stopping cancels no handler: no traceback)."""
        condition = self._server_watchers[request.service]
        last = None
        with contextlib.suppress(asyncio.CancelledError, grpc.aio.AbortError, grpc.aio.UsageError):
            async with condition:
                while True:
                    status = self._server_status.get(
                        request.service, health_pb2.HealthCheckResponse.SERVICE_UNKNOWN
                    )
                    if status != last:
                        await context.write(health_pb2.HealthCheckResponse(status=status))
                        last = status
                    if self._gracefully_shutting_down:
                        return
                    await condition.wait()


@dataclass(frozen=True, slots=True)
class TlsFiles:
    """A PEM certificate chain and private key."""

    cert: Path
    key: Path


class RefereeServer:
    """A running referee: the gRPC server, its registry of tables and its health status.

    Args:
        registry: The tables.
        host: The address to bind, e.g. ``127.0.0.1`` or ``0.0.0.0``.
        port: The port; 0 picks a free one (read it back from :attr:`port`).
        admin_token: Admin calls must carry it. Without one every admin call is refused, unless
            ``open_admin``.
        open_admin: With no ``admin_token``, let anyone who can connect make admin calls.
        tls: Serve TLS with these files.
        unix_socket: Also listen on this Unix socket (always plaintext: the socket file's
            permissions and the sandbox's mounts decide who can reach it). A sandboxed bot
            reaches the referee only this way, as the gRPC target ``unix:PATH``.
    """

    def __init__(
        self,
        registry: Registry,
        host: str = "127.0.0.1",
        port: int = 0,
        admin_token: str | None = None,
        tls: TlsFiles | None = None,
        unix_socket: Path | None = None,
        open_admin: bool = False,
    ) -> None:
        self.registry = registry
        self.open_admin = open_admin
        self.unix_socket = unix_socket
        self.host = host
        self.requested_port = port
        self.admin_token = admin_token
        self.tls = tls
        self.port = 0
        # Created in start(): grpc.aio binds the server to the event loop that is running then.
        self.server: grpc.aio.Server | None = None
        self.health: HealthServicer | None = None

    @property
    def address(self) -> str:
        """``host:port`` for clients."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"{host}:{self.port}"

    @property
    def unix_address(self) -> str | None:
        """``unix:PATH`` for clients, when the server also listens on a Unix socket."""
        return f"unix:{self.unix_socket}" if self.unix_socket is not None else None

    async def start(self) -> None:
        """Binds and starts serving.

        Raises:
            OSError: if the address cannot be bound (e.g. the port is in use).
        """
        quiet_invalid_metadata()
        self.health = QuietHealth()
        self.server = grpc.aio.server(options=SERVER_OPTIONS)
        referee = RefereeServicer(self.registry)
        play = grpc.stream_stream_rpc_method_handler(
            referee.play,
            request_deserializer=None,  # raw bytes: malformed messages get an in-stream rejection
            response_serializer=None,  # the table queues PlayResponse messages already serialized
        )
        self.server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(SERVICE_NAMES[0], {"Play": play}),)
        )
        admin_service_pb2_grpc.add_AdminServiceServicer_to_server(
            AdminServicer(self.registry, self.admin_token, self.open_admin), self.server
        )
        spectator_service_pb2_grpc.add_SpectatorServiceServicer_to_server(
            SpectatorServicer(self.registry), self.server
        )
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        reflector = AsyncReflectionServicer(
            (
                *SERVICE_NAMES,
                health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
                reflection.SERVICE_NAME,
                REFLECTION_V1,
            )
        )
        reflection_pb2_grpc.add_ServerReflectionServicer_to_server(reflector, self.server)
        # grpc.reflection.v1 is v1alpha under another name (the messages are the same on the wire).
        self.server.add_generic_rpc_handlers(
            (
                grpc.method_handlers_generic_handler(
                    REFLECTION_V1,
                    {
                        "ServerReflectionInfo": grpc.stream_stream_rpc_method_handler(
                            reflector.ServerReflectionInfo,
                            request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
                            response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
                        )
                    },
                ),
            )
        )
        target = f"{self.host}:{self.requested_port}"
        if self.requested_port:
            _check_free(self.host, self.requested_port)
        try:
            if self.tls is not None:
                credentials = grpc.ssl_server_credentials(
                    [(self.tls.key.read_bytes(), self.tls.cert.read_bytes())]
                )
                port = self.server.add_secure_port(target, credentials)
            else:
                port = self.server.add_insecure_port(target)
        except RuntimeError:  # grpcio reports a failed bind this way
            port = 0
        if port == 0:
            raise OSError(f"cannot listen on {target} (is the port in use?)")
        self.port = port
        if self.unix_socket is not None:
            self.unix_socket.unlink(missing_ok=True)  # a stale socket of a killed server
            try:
                bound = self.server.add_insecure_port(f"unix:{self.unix_socket}")
            except RuntimeError:
                bound = 0
            if bound == 0:
                raise OSError(f"cannot listen on unix:{self.unix_socket}")
        await self.server.start()
        for name in (*SERVICE_NAMES, ""):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        log.info("server_started", address=self.address, unix=self.unix_address, tls=self.tls is not None)

    async def stop(self, grace: float = 2.0) -> None:
        """Stops tables still running and the server."""
        if self.health is not None:
            await self.health.enter_graceful_shutdown()
            await asyncio.sleep(0.05)  # the open health watches send NOT_SERVING and end
        await self.registry.close()
        if self.server is not None:
            await self.server.stop(grace)
        log.info("server_stopped")


def _check_free(host: str, port: int) -> None:
    """Raises OSError with a clear message if ``host:port`` cannot be bound.

    grpcio would log its own multi-line error first; checking beforehand keeps the user's
    error to one line.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise OSError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


async def serve_forever(server: RefereeServer, announce: Callable[[str], None] | None = None) -> None:
    """Starts ``server`` and serves until SIGINT or SIGTERM.

    Args:
        server: The server.
        announce: Called with the address once listening (``hearts serve`` prints it).
    """
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await server.start()
    if announce is not None:
        announce(server.address)
    await stop.wait()
    await server.stop()


def make_server(
    record_dir: Path | None,
    host: str = "127.0.0.1",
    port: int = 0,
    defaults: TablePolicy | None = None,
    admin_token: str | None = None,
    tls: TlsFiles | None = None,
    unix_socket: Path | None = None,
    open_admin: bool = False,
    max_tables: int = MAX_LIVE_TABLES,
    scripts: Scripts | None = None,
) -> RefereeServer:
    """A referee server with a fresh registry.

    Its admin API is closed unless ``admin_token`` is given (calls must carry it) or
    ``open_admin`` opens it to anyone who can connect. ``scripts`` (the bot test kit's referee
    only) scripts the games whose deal seed it holds (:mod:`hearts_server.table.script`).
    """
    return RefereeServer(
        Registry(record_dir, defaults, max_tables, scripts),
        host,
        port,
        admin_token,
        tls,
        unix_socket,
        open_admin,
    )
