"""Sending: each seat's feed of messages, and the public stream that spectators watch."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from hearts_server.messages import EventMessage, ResponseMessage

if TYPE_CHECKING:
    from hearts_server.table.decisions import Seat


class Broadcaster:
    """Delivers events to the seats (through each seat's :class:`~hearts_server.messages.SeatFeed`)
    and to spectators (the public events only, also kept as the table's public log).

    The public log is what a spectator who comes later is sent first: the results of the table's
    earlier games (their ``game_completed``) and every public event of the current game,
    serialized. Earlier games' other events are dropped, so a table's memory is bounded by one
    game's, however many games it plays; once the table has ended only the results stay (the
    records hold the rest), so an ended table costs next to nothing.

    Args:
        seats: The table's seats.
    """

    def __init__(self, seats: Sequence[Seat]) -> None:
        self.seats = seats
        self.public_log: list[bytes] = []
        self._results: list[bytes] = []
        self.watchers: list[asyncio.Queue[EventMessage | None]] = []

    def new_game(self) -> None:
        """Starts the next game's public log (the earlier games' results stay)."""
        self.public_log = list(self._results)

    def send(self, seat: Seat, messages: list[ResponseMessage]) -> None:
        """Queues messages for one seat (dropped while it has no stream: a reconnection catches up)."""
        if seat.connection is not None:
            for message in messages:
                seat.connection.send(message)

    def to_seat(self, seat: Seat, event: EventMessage) -> None:
        """Sends an event meant for one seat only."""
        self.send(seat, seat.feed.event(event, _inline(seat)))

    def publish(
        self, public: EventMessage | None, per_seat: Callable[[int], EventMessage] | None = None
    ) -> None:
        """Sends an event to every seat (``per_seat(seat)`` when seats differ) and to spectators.

        With no ``public`` event, only the seats get theirs (spectators see nothing of it).
        """
        if per_seat is None and public is not None:
            kind = public.WhichOneof("event")  # the same event for every seat
            for seat in self.seats:
                out = seat.feed.event(public, _inline(seat), kind)
                if out:
                    self.send(seat, out)
        else:
            for seat in self.seats:
                event = per_seat(seat.index) if per_seat is not None else public
                if event is not None:
                    self.send(seat, seat.feed.event(event, _inline(seat)))
        if public is not None:
            serialized = public.SerializeToString()
            self.public_log.append(serialized)
            if public.HasField("game_completed"):
                self._results.append(serialized)
            for queue in self.watchers:
                queue.put_nowait(public)

    def close(self, reason: str | None = None, code: str = "CANCELLED") -> None:
        """Ends every seat's stream (status OK, or ``code`` with ``reason``) and every spectator's;
        the public log keeps the games' results only."""
        self.public_log = list(self._results)
        for seat in self.seats:
            if seat.connection is not None:
                seat.connection.close(reason, code)
        for queue in self.watchers:
            queue.put_nowait(None)


def _inline(seat: Seat) -> bool:
    """Whether the seat's stream takes held events inside its decision requests."""
    conn = seat.connection
    return conn is not None and conn.events_in_request
