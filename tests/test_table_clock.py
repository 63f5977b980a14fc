"""Deadlines and faults in milliseconds: a real :class:`Table` on a :class:`ManualClock`.

No server and no sockets: each seat is a :class:`Connection` attached to the table, its outbox
read as the serialized messages a stream would carry, and answered with ``table.answer``. Time
only moves when a test advances the clock, so "a silent seat times out after exactly
``decision_ms``" is checked to the millisecond without waiting a second of real time. (The
real-gRPC counterparts live in ``test_referee_adversarial.py``: one end-to-end test of each.)
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import pytest

from cancellation_hearts.v1 import game_pb2 as pb
from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_client.sdk import safe_answer
from hearts_core.defaults import TablePolicy
from hearts_core.record import DecisionEntry, GameRecord
from hearts_core.rules import Rules
from hearts_protocol import convert as wire
from hearts_server.table import Table, TableSettings
from hearts_server.table.clock import ManualClock, settle
from hearts_server.table.decisions import RECONNECT_GRACE_S
from hearts_server.table.settings import TableStatus
from hearts_server.table.streams import Connection

PLAYERS = 6
SEAT = 2  # the seat under test; the others answer at once


@dataclass
class Seen:
    """What one seat's stream carried, as decoded messages."""

    messages: list[rpb.PlayResponse] = field(default_factory=list)

    def requests(self) -> list[rpb.DecisionRequest]:
        return [m.decision_request for m in self.messages if m.WhichOneof("message") == "decision_request"]

    def faulted(self) -> list[pb.SeatFaulted]:
        """Every seat_faulted event, whether sent alone or in a batch of events."""
        events = []
        for m in self.messages:
            kind = m.WhichOneof("message")
            if kind == "event":
                events.append(m.event)
            elif kind == "events":
                events.extend(m.events.events)
        return [e.seat_faulted for e in events if e.WhichOneof("event") == "seat_faulted"]


Answerer = Callable[[rpb.DecisionRequest], rpb.Decision | None]


def legal(request: rpb.DecisionRequest) -> rpb.Decision:
    return safe_answer(request)


class Harness:
    """A table on a manual clock with every seat attached in memory."""

    def __init__(self, decision_ms: int = 1000, time_bank_ms: int = 60_000, max_faults: int = 3) -> None:
        self.clock = ManualClock(start=0.0)
        self.table = Table(
            "clock",
            TableSettings(
                rules=Rules(players=PLAYERS, max_hands=1),
                bot_names=tuple(f"bot{i}" for i in range(PLAYERS)),
                seed="manual clock",
                policy=TablePolicy(decision_ms=decision_ms, time_bank_ms=time_bank_ms, max_faults=max_faults),
            ),
            record_dir=None,
            clock=self.clock,
        )
        self.seen = [Seen() for _ in range(PLAYERS)]
        self.readers: list[asyncio.Task[None]] = []
        self.answerers: dict[int, Answerer | None] = {s: legal for s in range(PLAYERS)}
        self.answerers[SEAT] = None  # silent unless a test says otherwise
        self.conns: dict[int, Connection] = {}
        self.run: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.run = asyncio.create_task(self.table.run())
        for seat in range(PLAYERS):
            self.attach(seat)
        await settle()

    def attach(self, seat: int) -> Connection:
        conn = self.table.attach(seat)
        self.conns[seat] = conn
        self.readers.append(asyncio.create_task(self._read(seat, conn)))
        return conn

    def detach(self, seat: int) -> None:
        conn = self.conns.pop(seat)
        self.table.detach(seat, conn)
        conn.close()

    async def _read(self, seat: int, conn: Connection) -> None:
        while (data := await conn.outbox.get()) is not None:
            if callable(data):
                data()  # a write notification, as the servicer runs it once the bytes before are out
                continue
            message = rpb.PlayResponse.FromString(data)  # the bytes a stream would write
            self.seen[seat].messages.append(message)
            if message.WhichOneof("message") == "decision_request" and conn is self.conns.get(seat):
                answerer = self.answerers[seat]
                answer = answerer(message.decision_request) if answerer is not None else None
                if answer is not None:
                    self.table.answer(seat, wire.answer_from_pb(answer))

    def open_request(self, seat: int = SEAT) -> bool:
        return self.table.seats[seat].pending is not None

    async def until(self, condition: Callable[[], bool]) -> None:
        for _ in range(200):
            if condition():
                return
            await settle()
        raise AssertionError("the table never got there")

    async def finish(self) -> None:
        """Lets the game run to its end, advancing the clock whenever the seat under test is asked."""
        assert self.run is not None
        while not self.run.done():
            await settle()
            if self.open_request():
                pending = self.table.seats[SEAT].pending
                assert pending is not None
                await self.clock.advance(pending.budget_ms / 1000)
        await self.run
        for reader in self.readers:
            reader.cancel()

    def faults(self) -> list[tuple[int, str]]:
        """The faults so far: the live game's, or once it is over its record's."""
        if self.table.finished:
            return [(f.seat, f.kind) for f in self.typed_record().faults or ()]
        return [(f.seat, f.kind) for f in self.table.decisions.log.faults]

    def typed_record(self) -> GameRecord:
        (game,) = self.table.finished
        return GameRecord.from_json(json.loads(game.record_json))

    def record(self) -> dict[str, Any]:
        return self.typed_record().to_json()


def run(test: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 60))


def recorded(h: Harness) -> tuple[DecisionEntry, ...]:
    """The decisions of the harness's finished game, from its record (a finished table keeps no
    game state of its own)."""
    return h.typed_record().decisions or ()


def test_a_silent_seat_times_out_after_exactly_decision_ms() -> None:
    async def test() -> None:
        h = Harness()
        await h.start()
        await h.until(h.open_request)
        (request,) = h.seen[SEAT].requests()
        assert request.time_left_ms == 1000
        await h.clock.advance(0.75)
        assert h.open_request() and h.faults() == []
        await h.clock.advance(0.25)  # 1000 ms of manual time, to the millisecond
        await h.until(lambda: h.faults() != [])
        assert h.faults() == [(SEAT, "timeout")]
        faulted = h.seen[0].faulted()
        assert [(f.seat, f.faults, f.detail) for f in faulted] == [
            (SEAT, 1, "no legal answer within 1000 ms")
        ]
        await h.finish()
        decisions = [d for d in recorded(h) if d.seat == SEAT]
        assert decisions[0].by_referee == "timeout" and decisions[0].ms == 1000
        # Every other seat answered at once: no time passed for them.
        others = [d for d in recorded(h) if d.seat != SEAT]
        assert others and all(d.by_referee is None and d.ms == 0 for d in others)

    run(test)


def test_the_time_bank_runs_out() -> None:
    async def test() -> None:
        h = Harness(time_bank_ms=2500, max_faults=50)
        await h.start()
        await h.finish()
        asked = [r.time_left_ms for r in h.seen[SEAT].requests()]
        # 1000 + 1000 + 500 ms spent: the bank is empty, and the seat is asked nothing more.
        assert asked == [1000, 1000, 500]
        kinds = [kind for seat, kind in h.faults() if seat == SEAT]
        assert kinds[:3] == ["timeout"] * 3
        assert len(kinds) > 3 and set(kinds[3:]) == {"time_bank_exhausted"}
        assert h.table.seats[SEAT].bank_ms == 0
        assert all(seat == SEAT for seat, _ in h.faults())

    run(test)


def test_max_faults_retires_the_seat() -> None:
    async def test() -> None:
        h = Harness(max_faults=3)
        await h.start()
        await h.finish()
        assert h.faults() == [(SEAT, "timeout")] * 3
        assert len(h.seen[SEAT].requests()) == 3  # retired: never asked again
        mine = [d for d in recorded(h) if d.seat == SEAT]
        assert [d.by_referee for d in mine[:3]] == ["timeout"] * 3
        assert len(mine) > 3 and {d.by_referee for d in mine[3:]} == {"retired"}
        result = h.record()["result"]
        assert result["retired"] == [SEAT] and result["faults"][SEAT] == 3
        retired = [f.retired for f in h.seen[0].faulted()]
        assert retired == [False, False, True]

    run(test)


def test_only_illegal_answers_are_rejected_then_time_out() -> None:
    async def test() -> None:
        h = Harness(max_faults=3)

        def cheat(request: rpb.DecisionRequest) -> rpb.Decision:
            decision = rpb.Decision(request_id=request.request_id)
            decision.play_card.card = "ZZ"
            return decision

        h.answerers[SEAT] = cheat
        await h.start()
        await h.finish()
        rejections = [m.rejection for m in h.seen[SEAT].messages if m.WhichOneof("message") == "rejection"]
        assert len(rejections) == 3 and {r.code for r in rejections} <= {"UNKNOWN_CARD", "WRONG_ANSWER"}
        assert h.faults() == [(SEAT, "timeout")] * 3

    run(test)


def test_reconnecting_within_the_grace_gets_the_open_request_again() -> None:
    async def test() -> None:
        h = Harness()
        await h.start()
        await h.until(h.open_request)
        (first,) = h.seen[SEAT].requests()
        h.detach(SEAT)
        await h.clock.advance(0.25)
        h.answerers[SEAT] = legal
        before = len(h.seen[SEAT].messages)
        h.attach(SEAT)
        await h.until(lambda: not h.open_request())
        again = h.seen[SEAT].messages[before:]
        assert [m.WhichOneof("message") for m in again[:3]] == ["event", "snapshot", "decision_request"]
        assert again[0].event.game_started.your_seat == SEAT and again[1].snapshot.view.seat == SEAT
        resent = again[2].decision_request
        assert resent.request_id == first.request_id and resent.time_left_ms == 750
        await h.finish()
        assert h.faults() == []
        assert h.table.status is TableStatus.DONE

    run(test)


def test_a_seat_gone_past_the_grace_is_decided_for_at_once() -> None:
    async def test() -> None:
        h = Harness(max_faults=50)
        await h.start()
        await h.until(h.open_request)
        h.detach(SEAT)
        # The open request keeps its deadline: a disconnection fault after 1000 ms.
        await h.clock.advance(1.0)
        await h.until(lambda: h.faults() != [])
        assert h.faults() == [(SEAT, "disconnected")]
        await h.clock.advance(RECONNECT_GRACE_S)
        assert h.run is not None
        await h.until(h.run.done)  # no more waiting: every later decision is made at once
        assert {kind for _, kind in h.faults()} == {"disconnected"} and len(h.faults()) > 1
        details = {f.detail for f in h.typed_record().faults or ()}
        assert details == {"not reconnected within 1000 ms", "the seat was not connected"}

    run(test)


@pytest.mark.parametrize("decision_ms", [1, 250])
def test_the_deadline_is_decision_ms_whatever_it_is(decision_ms: int) -> None:
    async def test() -> None:
        h = Harness(decision_ms=decision_ms)
        await h.start()
        await h.until(h.open_request)
        await h.clock.advance((decision_ms - 0.5) / 1000)
        assert h.faults() == []
        await h.clock.advance(0.5 / 1000)
        await h.until(lambda: h.faults() != [])
        assert h.faults() == [(SEAT, "timeout")]

    run(test)


def test_an_answer_the_sdk_made_for_its_bot_is_recorded_and_counted() -> None:
    async def test() -> None:
        h = Harness()
        h.answerers[SEAT] = lambda request: safe_answer(request, bot_error=True)
        await h.start()
        await h.finish()
        assert h.faults() == []  # legal and in time: not a fault ...
        mine = [d for d in recorded(h) if d.seat == SEAT]
        assert mine and all(d.bot_error and d.by_referee is None for d in mine)  # ... but marked
        assert not any(d.bot_error for d in recorded(h) if d.seat != SEAT)
        (game,) = h.table.finished
        counted = [r.bot_errors for r in sorted(game.result.results, key=lambda r: r.seat)]
        assert counted == [len(mine) if s == SEAT else 0 for s in range(PLAYERS)]
        assert game.seats[SEAT].bot_errors == len(mine) and game.seats[SEAT].answered == len(mine)
        record = h.record()
        assert record["result"]["bot_errors"] == counted
        assert all(d.get("bot_error") is True for d in record["decisions"] if d["seat"] == SEAT)

    run(test)
