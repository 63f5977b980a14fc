"""The decision clock starts when the request is written to the seat's stream, not when queued.

A table on a ManualClock: the servicer's report of the write is the callback the Connection's
outbox carries after the request; the test runs it late, as a slow write would.
"""

from __future__ import annotations

import asyncio
from typing import Any

from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_core.defaults import TablePolicy
from hearts_core.rules import Rules
from hearts_protocol import convert as wire
from hearts_server.table import ManualClock, Table, TableSettings
from hearts_server.table.clock import settle
from tests.helpers.harness import legal_answer


async def _next_request(conn: Any) -> tuple[rpb.DecisionRequest, Any]:
    """The next decision request in a connection's outbox and the write callback after it."""
    request = None
    while True:
        item = conn.outbox.get_nowait()
        if callable(item):
            if request is not None:
                return request, item
            item()
            continue
        assert item is not None
        message = rpb.PlayResponse.FromString(item)
        if message.WhichOneof("message") == "decision_request":
            request = message.decision_request


def test_the_seat_is_charged_from_the_write_and_the_referee_delay_is_recorded_apart() -> None:
    async def scenario() -> tuple[float, float | None]:
        clock = ManualClock()
        settings = TableSettings(
            rules=Rules(players=6, max_hands=1),
            bot_names=("b",) * 6,
            seed="clock",
            policy=TablePolicy(decision_ms=1000),
        )
        table = Table("t", settings, None, clock=clock)
        task = asyncio.create_task(table.run())
        await settle()
        conns = [table.attach(i) for i in range(6)]
        await settle()
        seat = None
        for index, conn in enumerate(conns):
            if conn.outbox.empty():
                continue
            try:
                request, written = await _next_request(conn)
            except asyncio.QueueEmpty:
                continue
            if seat is None:
                seat = index
                await clock.advance(0.3)  # the write is slow: 300 ms of the referee's
                written()
                await clock.advance(0.1)  # the bot then takes 100 ms
            else:
                written()
            table.answer(index, wire.answer_from_pb(legal_answer(request).decision))
            await settle()
        assert seat is not None
        entry = next(d for d in table.decisions.log.decisions if d.seat == seat)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return entry.ms, entry.referee_ms

    ms, referee_ms = asyncio.run(scenario())
    assert abs(ms - 100) < 1, ms
    assert referee_ms is not None and abs(referee_ms - 300) < 1, referee_ms


def test_host_keeps_serving_until_a_seat_away_at_the_end_is_told(monkeypatch: Any) -> None:
    """``hearts host`` asks the referee until the away seat was told, and stops asking right then;
    with nobody behind it does not wait; and its wait is bounded."""
    from hearts_tournaments.arena import host as hosting

    monkeypatch.setattr(hosting, "GRACE_POLL_S", 0.0)
    seats = [True, True, False, True, True, True]  # seat 2 was away at the end
    asked = 0

    async def told() -> list[bool]:
        nonlocal asked
        asked += 1
        if asked == 3:
            seats[2] = True  # it came back and was told
        return list(seats)

    async def scenario() -> tuple[int, int]:
        await hosting._grace(told, {2})
        first = asked
        await hosting._grace(told, {2})  # nobody behind: one look, no wait
        return first, asked - first

    assert asyncio.run(scenario()) == (3, 1)
    monkeypatch.setattr(hosting, "HOST_GRACE_S", 0.0)
    seats[2] = False
    asyncio.run(hosting._grace(told, {2}))  # never told: the grace still ends
