"""A seat's live stream (:class:`Connection`) and its allowance of rejected messages (:class:`FloodGate`)."""

from __future__ import annotations

import asyncio

from cancellation_hearts.v1 import referee_service_pb2 as rpb

#: Rejected messages a seat may send: a burst of this many ...
FLOOD_BURST = 100
#: ... refilled at this many per second. Past it the stream is closed (accepted answers are free).
FLOOD_RATE = 50.0


class AlreadyConnected(Exception):
    """A second live stream for the same seat."""


class Connection:
    """One live stream of a seat: the messages waiting to be written to it."""

    def __init__(self) -> None:
        # Serialized PlayResponse messages: a broadcast is serialized once for every seat.
        self.outbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.close_reason: str | None = None

    def send(self, message: rpb.PlayResponse | bytes) -> None:
        """Queues a message (or its serialized form) for the stream."""
        self.outbox.put_nowait(message if isinstance(message, bytes) else message.SerializeToString())

    def close(self, reason: str | None = None) -> None:
        """Ends the stream: OK if ``reason`` is None, else RESOURCE_EXHAUSTED with the reason."""
        if self.close_reason is None:
            self.close_reason = reason
        self.outbox.put_nowait(None)


class FloodGate:
    """A token bucket: a burst of FLOOD_BURST rejected messages, refilled at FLOOD_RATE per second."""

    def __init__(self, now: float, burst: float = FLOOD_BURST, rate: float = FLOOD_RATE) -> None:
        self.burst = burst
        self.rate = rate
        self.tokens = burst
        self.refilled = now

    def allow(self, now: float) -> bool:
        """Takes one token; False when none is left (the stream must be closed)."""
        self.tokens = min(self.burst, self.tokens + (now - self.refilled) * self.rate)
        self.refilled = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True
