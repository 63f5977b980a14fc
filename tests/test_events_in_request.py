"""Join.events_in_request: the events held for a seat come inside its decision request.

A seat that asks for it gets one message per decision instead of an EventBatch followed by the
request, and the same events in the same order; a seat that does not ask (every v1 bot written
before the field) gets exactly the messages it always got.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_client.bots import make_bot
from hearts_client.sdk import run_async
from tests.helpers.harness import RawSeat, create_table, legal_answer, running_server

PLAYERS = 6
HELD = frozenset({"card_played", "trick_completed", "hand_completed"})
#: Held as well on a stream that takes its events inside its requests.
HELD_INLINE = HELD | {"hand_started", "cards_received"}


async def _play(address: str, events_in_request: bool) -> list[list[rpb.PlayResponse]]:
    """Plays one table with raw seats answering legally; every message each seat received."""
    table = await create_table(
        address, ["raw"] * PLAYERS, seed="inline", target_score=40, decision_time_ms=30_000
    )
    seats = [RawSeat(address) for _ in range(PLAYERS)]
    received: list[list[rpb.PlayResponse]] = [[] for _ in range(PLAYERS)]

    async def play(index: int) -> None:
        raw = seats[index]
        join = rpb.Join(
            token=table.seats[index].token,
            bot_name="raw",
            protocol_version=1,
            events_in_request=events_in_request,
        )
        raw.send(rpb.PlayRequest(join=join))
        while (message := await raw.recv()) is not None:
            received[index].append(message)
            if message.WhichOneof("message") == "decision_request":
                raw.send(legal_answer(message.decision_request))

    try:
        await asyncio.wait_for(asyncio.gather(*(play(i) for i in range(PLAYERS))), 120)
    finally:
        for raw in seats:
            await raw.close()
    return received


def _logical(messages: list[rpb.PlayResponse]) -> list[tuple[str, bytes]]:
    """What a seat learnt, message boundaries and clock fields aside: events and requests in order."""
    out: list[tuple[str, bytes]] = []
    for message in messages:
        which = message.WhichOneof("message")
        if which == "event":
            out.append(("event", _event_bytes(message.event)))
        elif which == "events":
            out.extend(("event", _event_bytes(e)) for e in message.events.events)
        elif which == "decision_request":
            request = rpb.DecisionRequest()
            request.CopyFrom(message.decision_request)
            out.extend(("event", _event_bytes(e)) for e in request.events)
            del request.events[:]
            request.time_left_ms = request.time_bank_ms = 0
            out.append(("request", request.SerializeToString(deterministic=True)))
    return out


def _event_bytes(event: rpb.Event) -> bytes:
    copy = rpb.Event()
    copy.CopyFrom(event)
    which = copy.WhichOneof("event")
    if which in ("game_started", "game_completed"):
        getattr(copy, which).game_id = ""  # each table has its own id
    return copy.SerializeToString(deterministic=True)


def _held_batches_before_requests(messages: list[rpb.PlayResponse], held: frozenset[str] = HELD) -> int:
    """Messages holding only ``held`` events that come right before a decision request."""
    count = 0
    for before, after in itertools.pairwise(messages):
        if after.WhichOneof("message") != "decision_request":
            continue
        which = before.WhichOneof("message")
        events = (
            [before.event] if which == "event" else list(before.events.events) if which == "events" else []
        )
        if events and all(e.WhichOneof("event") in held for e in events):
            count += 1
    return count


def test_held_events_come_inside_the_request_when_asked_and_apart_otherwise(tmp_path: Path) -> None:
    async def scenario() -> tuple[list[list[rpb.PlayResponse]], list[list[rpb.PlayResponse]]]:
        async with running_server(tmp_path / "games") as server:
            apart = await _play(server.address, events_in_request=False)
            inside = await _play(server.address, events_in_request=True)
            return apart, inside

    apart, inside = asyncio.run(scenario())
    for seat in range(PLAYERS):
        # Same game, same answers: the seat learns the same things in the same order.
        assert _logical(apart[seat]) == _logical(inside[seat]), f"seat {seat}"
        separate = _held_batches_before_requests(apart[seat])
        assert separate > 10  # the old form: a batch before most requests
        assert not any(m.decision_request.events for m in apart[seat])
        assert _held_batches_before_requests(inside[seat], HELD_INLINE) == 0
        # Fewer still: each hand's hand_started and cards_received come inside requests too.
        assert len(inside[seat]) < len(apart[seat]) - separate
        requests = [m for m in inside[seat] if m.WhichOneof("message") == "decision_request"]
        kinds = {e.WhichOneof("event") for m in requests for e in m.decision_request.events}
        assert {"card_played", "trick_completed", "hand_started", "cards_received"} <= kinds
        others = [m for m in inside[seat] if m.WhichOneof("message") != "decision_request"]
        assert all(
            e.WhichOneof("event") not in HELD_INLINE
            for m in others
            if m.WhichOneof("message") == "event"
            for e in [m.event]
        )


def test_the_python_sdk_asks_for_events_inside_requests(tmp_path: Path) -> None:
    async def scenario() -> list[list[rpb.PlayResponse]]:
        async with running_server(tmp_path / "games") as server:
            table = await create_table(server.address, ["heuristic"] * PLAYERS, seed="sdk", target_score=30)
            seen: list[list[rpb.PlayResponse]] = [[] for _ in range(PLAYERS)]
            await asyncio.wait_for(
                asyncio.gather(
                    *(
                        run_async(
                            make_bot("heuristic", str(s.seat)),
                            server.address,
                            s.token,
                            on_message=seen[s.seat].append,
                        )
                        for s in table.seats
                    )
                ),
                120,
            )
            return seen

    seen = asyncio.run(scenario())
    for messages in seen:
        assert any(m.decision_request.events for m in messages)
        assert _held_batches_before_requests(messages, HELD_INLINE) == 0
