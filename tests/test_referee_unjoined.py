"""A table nobody joins costs the referee a fixed small amount.

With the admin token, a table of eleven seats, ``target_score = 10000``, ``max_hands = 1000``
and twenty games (the most work a table may hold) that no bot ever joins used to be played by
the referee alone once its join timeout passed: every seat of 20,000 hands, at half a core and
6 MB/s of memory per table, 256 such tables at once. Now such a table ends at its join timeout,
having played nothing. A table the organiser manages (a seat released, as the arena releases
those of quarantined or dead bots) or that a bot joined once is played as before.

The real server on a stopped clock (:class:`ManualClock`): the join timeout passes when the
test says so, never by waiting.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from cancellation_hearts.v1 import admin_service_pb2 as apb
from cancellation_hearts.v1 import admin_service_pb2_grpc as agrpc
from hearts_protocol.transport import own_channel
from hearts_server.server import RefereeServer, make_server
from hearts_server.table.clock import ManualClock
from tests.helpers.cli import hearts
from tests.helpers.harness import RawSeat, admin_metadata, create_table, until

TOKEN = "t"
#: The attack's table: every seat, the largest target and hand limit, the most games allowed.
ATTACK = {"target_score": 10_000, "max_hands": 1_000, "games": 20, "label": "nobody comes"}
NAMES = [f"absent-{i}" for i in range(11)]
JOIN_TIMEOUT_S = 60.0  # the server's default


async def _server(tmp_path: Path) -> tuple[RefereeServer, ManualClock]:
    server = make_server(tmp_path, admin_token=TOKEN)
    clock = server.registry.clock = ManualClock()
    await server.start()
    return server, clock


async def _admin(server: RefereeServer, call: str, request: object) -> object:
    async with own_channel(server.address) as channel:
        stub = agrpc.AdminServiceStub(channel)
        return await getattr(stub, call)(request, metadata=admin_metadata(TOKEN))


def test_a_table_nobody_joins_ends_at_its_join_timeout_having_played_nothing(tmp_path: Path) -> None:
    async def scenario() -> dict[str, object]:
        server, clock = await _server(tmp_path)
        try:
            created = await create_table(server.address, NAMES, TOKEN, **ATTACK)
            table = server.registry.tables[created.table_id]
            await clock.advance(JOIN_TIMEOUT_S - 1)
            waiting = table.status.name, server.registry.live_tables()
            await clock.advance(1)
            # Ended at once, by events: on main the referee started playing every seat here.
            await until(table.done.is_set, "the table nobody joined ended", timeout=60)
            status = await _admin(server, "GetTable", apb.GetTableRequest(table_id=created.table_id))
            late = RawSeat(server.address)
            try:
                late.join(created.seats[0].token)
                while await late.recv() is not None:
                    pass
                late_code, late_details = (await late.code()).name, await late.call.details()
            finally:
                await late.close()
            return {
                "waiting": waiting,
                "status": status,
                "decisions": len(table.decisions.log),
                "records": sorted(p.name for p in tmp_path.glob("*.json")),
                "live": server.registry.live_tables(),
                "late": (late_code, late_details),
            }
        finally:
            await server.stop(0.5)

    seen = asyncio.run(scenario())
    assert seen["waiting"] == ("WAITING", 1)
    status = seen["status"]
    assert isinstance(status, apb.GetTableResponse)
    assert status.status == apb.TABLE_STATUS_ABORTED and not status.games
    assert status.stop_reason.startswith(f"no bot joined table {status.table_id} within its join timeout"), (
        status.stop_reason
    )
    assert seen["decisions"] == 0 and seen["records"] == []  # nothing played, nothing written
    assert seen["live"] == 0  # its place under the 256-table cap is free again
    code, details = seen["late"]  # type: ignore[misc]
    assert code == "FAILED_PRECONDITION" and "no bot joined" in details, (code, details)


@pytest.mark.parametrize("faulted", [True, False], ids=["released faulted", "released"])
def test_a_table_whose_seats_were_released_is_played_by_the_referee_as_before(
    tmp_path: Path, faulted: bool
) -> None:
    # The arena releases the seats of quarantined bots and of bots whose process died before
    # joining (faulted), `hearts host`'s organiser may release seats nobody comes for: such a
    # table is the organiser's, and the referee plays those seats by its default rule.
    async def scenario() -> apb.GetTableResponse:
        server, clock = await _server(tmp_path)
        try:
            created = await create_table(server.address, NAMES[:6], TOKEN, max_hands=2)
            for seat in range(6):
                request = apb.ReleaseSeatRequest(table_id=created.table_id, seat=seat, faulted=faulted)
                await _admin(server, "ReleaseSeat", request)
            await clock.advance(JOIN_TIMEOUT_S)
            table = server.registry.tables[created.table_id]
            await until(table.done.is_set, "the released table was played", timeout=120)
            response = await _admin(server, "GetTable", apb.GetTableRequest(table_id=created.table_id))
            assert isinstance(response, apb.GetTableResponse)
            return response
        finally:
            await server.stop(0.5)

    table = asyncio.run(scenario())
    assert table.status == apb.TABLE_STATUS_DONE and len(table.games) == 1, table.stop_reason
    record = json.loads(table.games[0].record_json)
    assert len(record["hands"]) == 2
    seats = table.games[0].seats
    assert all(s.answered == 0 and s.by_referee > 0 for s in seats)
    assert all((s.faults > 0) == faulted and s.released == (not faulted) for s in seats)


@pytest.mark.timeout(900)
def test_a_tournament_game_whose_bots_all_hang_before_joining_is_still_played(tmp_path: Path) -> None:
    # Every bot of a game alive but never joining: the referee ends that table at the join
    # timeout, and the arena has the game played by the referee alone instead, each seat's
    # decisions a fault of its bot, as a game of absent bots always was: the tournament goes on.
    python = json.dumps(sys.executable)
    bots = "".join(
        f'[[bots]]\nname = "sleeper{i}"\ncommand = [{python}, "-c", "import time; time.sleep(3600)"]\n'
        for i in range(6)
    )
    config = tmp_path / "t.toml"
    config.write_text(
        '[tournament]\nname = "sleepers"\ntable_size = 6\ndeals = 1\nseed = 2\nmax_hands = 2\n'
        'concurrency = 2\njoin_timeout_ms = 2000\nquarantine_after = 1\nsandbox = "none"\n'
        f'output = "{tmp_path / "out"}"\n{bots}'
    )
    result = hearts("tournament", "run", str(config), "--allow-broken", "--progress", "never", timeout=800)
    assert result.returncode == 3, result.stdout + result.stderr  # finished; entrants failed games
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    report = json.loads(hearts("tournament", "report", str(tmp_path / "out"), "--format", "json").stdout)
    assert report["tournament"]["complete"] is True
    for line in report["standings"]:
        assert line["games"] == 6 and line["failed_games"] == 6 and line["quarantined"], line
    assert hearts("tournament", "verify", str(tmp_path / "out")).returncode == 0
