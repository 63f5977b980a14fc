"""Bot sessions (warm bots) on the real referee: one stream plays seats of several tables.

The runner's fairness rules rest on what is checked here: a session's stream gets game after
game, request ids keep increasing across them, a late answer of the previous game never acts
on the next, the organiser's per-game bot seed arrives in GameStarted, and a session's stream
ends (OK) when it is closed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest

from cancellation_hearts.v1 import admin_service_pb2 as apb
from cancellation_hearts.v1 import admin_service_pb2_grpc as agrpc
from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_client.bots import make_bot
from hearts_client.sdk import run_async
from tests.helpers.harness import LOOK_S, RawSeat, legal_answer, running_server

pytestmark = pytest.mark.timeout(300)

NAMES = ["heuristic", "random"] * 3
TARGET = 30


async def _table(admin: agrpc.AdminServiceAsyncStub, seed: str) -> apb.CreateTableResponse:
    config = apb.TableConfig(players=len(NAMES), bot_names=NAMES, seed=seed, target_score=TARGET)
    response: apb.CreateTableResponse = await admin.CreateTable(apb.CreateTableRequest(config=config))
    return response


def test_one_session_per_seat_plays_two_tables_in_a_row_and_ends_when_closed(tmp_path: Path) -> None:
    async def scenario() -> tuple[list[int], list[apb.GetTableResponse], list[list[rpb.PlayResponse]]]:
        async with (
            running_server(tmp_path / "games") as server,
            grpc.aio.insecure_channel(server.address) as ch,
        ):
            admin = agrpc.AdminServiceStub(ch)
            sessions = [await admin.OpenSession(apb.OpenSessionRequest(bot_name=n)) for n in NAMES]
            seen: list[list[rpb.PlayResponse]] = [[] for _ in NAMES]
            bots = [
                asyncio.create_task(
                    run_async(make_bot(n, "s"), server.address, s.token, name=n, on_message=seen[i].append)
                )
                for i, (n, s) in enumerate(zip(NAMES, sessions, strict=True))
            ]
            tables = []
            for number in range(2):
                table = await _table(admin, f"session-{number}")
                for seat, session in enumerate(sessions):
                    await admin.BindSeat(
                        apb.BindSeatRequest(
                            session_id=session.session_id,
                            table_id=table.table_id,
                            seat=seat,
                            bot_seed=f"g{number}s{seat}",
                        )
                    )
                done = await admin.AwaitTable(apb.AwaitTableRequest(table_id=table.table_id), timeout=120)
                tables.append(done.table)
            for session in sessions:
                await admin.CloseSession(apb.CloseSessionRequest(session_id=session.session_id))
            games = await asyncio.wait_for(asyncio.gather(*bots), 60)
            return list(games), tables, seen

    games, tables, seen = asyncio.run(scenario())
    assert games == [2] * len(NAMES)  # each bot saw both games end, then its stream ended OK
    for table in tables:
        assert table.status == apb.TABLE_STATUS_DONE
        (game,) = table.games
        assert all(s.answered > 0 and s.by_referee == 0 for s in game.seats)
    for seat, messages in enumerate(seen):
        started = [m.event.game_started for m in messages if m.event.WhichOneof("event") == "game_started"]
        assert [(s.your_seat, s.bot_seed) for s in started] == [(seat, f"g0s{seat}"), (seat, f"g1s{seat}")]
        ids = [
            m.decision_request.request_id for m in messages if m.WhichOneof("message") == "decision_request"
        ]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)  # increasing across both games


def _events(message: rpb.PlayResponse) -> list[rpb.Event]:
    kind = message.WhichOneof("message")
    if kind == "event":
        return [message.event]
    return list(message.events.events) if kind == "events" else []


async def _play_to_the_end(raw: RawSeat, request: rpb.DecisionRequest) -> tuple[int, list[rpb.Rejection]]:
    """Answers legally until the game's GameCompleted: the last request id answered, the rejections."""
    last = request.request_id
    rejections = []
    raw.send(legal_answer(request))
    while (message := await raw.recv()) is not None:
        if message.WhichOneof("message") == "decision_request":
            last = message.decision_request.request_id
            raw.send(legal_answer(message.decision_request))
        if message.WhichOneof("message") == "rejection":
            rejections.append(message.rejection)
        if any(e.WhichOneof("event") == "game_completed" for e in _events(message)):
            return last, rejections
    raise AssertionError("the stream ended before the game did")


def test_a_late_answer_of_the_previous_game_never_acts_on_the_next(tmp_path: Path) -> None:
    async def scenario() -> tuple[list[rpb.Rejection], int, int, grpc.StatusCode]:
        async with (
            running_server(tmp_path / "games") as server,
            grpc.aio.insecure_channel(server.address) as ch,
        ):
            admin = agrpc.AdminServiceStub(ch)
            session = await admin.OpenSession(apb.OpenSessionRequest(bot_name="raw"))
            raw = RawSeat(server.address)
            raw.join(session.token)
            others = []
            last_of_first = 0
            for number in range(2):
                table = await _table(admin, f"late-{number}")
                await admin.BindSeat(
                    apb.BindSeatRequest(session_id=session.session_id, table_id=table.table_id, seat=0)
                )
                for seat in table.seats[1:]:
                    others.append(
                        asyncio.create_task(run_async(make_bot("heuristic", "x"), server.address, seat.token))
                    )
                request = await raw.next_request()
                assert request is not None
                if number == 0:
                    last_of_first, _ = await _play_to_the_end(raw, request)
                    continue
                # The second game's first request is open: the first game's last id is answered
                # with what would be a legal answer now. It is dropped: were it taken, the real
                # answer that follows would be rejected (NOT_YOUR_TURN or STALE_REQUEST).
                stale = legal_answer(request)
                stale.decision.request_id = last_of_first
                raw.send(stale)
                first_of_second = request.request_id
                _, rejections = await _play_to_the_end(raw, request)
            await admin.CloseSession(apb.CloseSessionRequest(session_id=session.session_id))
            await asyncio.gather(*others)
            code = await raw.code()
            await raw.close()
            return rejections, last_of_first, first_of_second, code

    rejections, last_of_first, first_of_second, code = asyncio.run(scenario())
    assert first_of_second > last_of_first > 0  # ids go on increasing from table to table
    assert rejections == []
    assert code == grpc.StatusCode.OK


def test_binds_that_cannot_be_honoured_are_refused_with_a_clear_status(tmp_path: Path) -> None:
    async def scenario() -> list[tuple[grpc.StatusCode, str]]:
        out: list[tuple[grpc.StatusCode, str]] = []
        async with (
            running_server(tmp_path / "games") as server,
            grpc.aio.insecure_channel(server.address) as ch,
        ):
            admin = agrpc.AdminServiceStub(ch)
            session = await admin.OpenSession(apb.OpenSessionRequest(bot_name="b"))
            table = await _table(admin, "refused")
            for request in (
                apb.BindSeatRequest(session_id="nope", table_id=table.table_id, seat=0),
                apb.BindSeatRequest(session_id=session.session_id, table_id=table.table_id, seat=9),
            ):
                try:
                    await admin.BindSeat(request)
                except grpc.aio.AioRpcError as exc:
                    out.append((exc.code(), exc.details() or ""))
            # A second stream for a session that has one is refused; the first is undisturbed.
            first = RawSeat(server.address)
            first.join(session.token)
            # Once the referee has the first stream (its state says so, however slow the machine).
            attached = server.registry.session_by_token(session.token)
            async with asyncio.timeout(60):
                while attached is None or not attached.streaming:
                    await asyncio.sleep(LOOK_S)
            second = RawSeat(server.address)
            second.join(session.token)
            out.append((await second.code(), ""))
            await admin.CloseSession(apb.CloseSessionRequest(session_id=session.session_id))
            out.append((await first.code(), ""))
            try:
                await admin.BindSeat(
                    apb.BindSeatRequest(session_id=session.session_id, table_id=table.table_id, seat=0)
                )
            except grpc.aio.AioRpcError as exc:
                out.append((exc.code(), exc.details() or ""))
            for raw in (first, second):
                await raw.close()
        return out

    (unknown, bad_seat, second, closed_stream, after_close) = asyncio.run(scenario())
    assert unknown[0] == grpc.StatusCode.NOT_FOUND and "session" in unknown[1]
    assert bad_seat[0] == grpc.StatusCode.FAILED_PRECONDITION and "seat 9" in bad_seat[1]
    assert second[0] == grpc.StatusCode.ALREADY_EXISTS
    assert closed_stream[0] == grpc.StatusCode.OK  # closed with nothing bound: the stream ends
    assert after_close[0] == grpc.StatusCode.NOT_FOUND
