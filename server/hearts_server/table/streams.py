"""A seat's live stream (:class:`Connection`) and its allowance of rejected messages (:class:`FloodGate`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from hearts_server.messages import ResponseMessage

#: Rejected messages a seat may send: a burst of this many ...
FLOOD_BURST = 100
#: ... refilled at this many per second. Past it the stream is closed (accepted answers are free).
FLOOD_RATE = 50.0


class AlreadyConnected(Exception):
    """A second live stream for the same seat (kept for callers; a newer stream now replaces an older one)."""


#: What a Connection's outbox holds: a serialized message, a callback to run once every message
#: before it has been written to the stream, or None (the end of the stream).
Outgoing = bytes | Callable[[], None] | None


class Connection:
    """One live stream of a seat: the messages waiting to be written to it.

    Args:
        events_in_request: The stream's Join asked for held events inside its decision requests
            (``Join.events_in_request``).
    """

    def __init__(self, events_in_request: bool = False) -> None:
        self.events_in_request = events_in_request
        # Serialized PlayResponse messages: a broadcast is serialized once for every seat.
        self.outbox: asyncio.Queue[Outgoing] = asyncio.Queue()
        self.close_reason: str | None = None
        #: The gRPC status name the stream ends with when closed with a reason.
        self.close_code = "RESOURCE_EXHAUSTED"

    def send(self, message: ResponseMessage | bytes) -> None:
        """Queues a message (or its serialized form) for the stream."""
        self.outbox.put_nowait(message if isinstance(message, bytes) else message.SerializeToString())

    def on_written(self, callback: Callable[[], None]) -> None:
        """Calls ``callback`` once every message queued so far has been written to the stream."""
        self.outbox.put_nowait(callback)

    def close(self, reason: str | None = None, code: str = "RESOURCE_EXHAUSTED") -> None:
        """Ends the stream: OK if ``reason`` is None, else status ``code`` with the reason."""
        if self.close_reason is None and reason is not None:
            self.close_reason = reason
            self.close_code = code
        self.outbox.put_nowait(None)


class FloodGate:
    """A token bucket: a burst of FLOOD_BURST rejected messages, refilled at FLOOD_RATE per second.

    One per seat, for the table's whole life: it survives the seat's reconnections.
    """

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
