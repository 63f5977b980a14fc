"""The referee closed by default (issue 20): each attack of the second red team, played for real.

- ``hearts serve`` without a token used to open the admin API to anyone who could connect: a
  real ``hearts serve`` process now refuses every admin call without the token it made (in a
  0600 file whose path it prints), and opens only with ``--open-admin``, saying so.
- An admin client creating tables as fast as it can is stopped at the server-wide cap of tables
  waiting or playing (RESOURCE_EXHAUSTED, naming the limit); a table of more work than
  ``games × max_hands`` allows is refused; a table nobody plays no longer holds the event loop
  for its whole game.
- A flooding seat that reconnects after each RESOURCE_EXHAUSTED used to get a fresh burst; the
  allowance is the seat's now (the real server, on a stopped clock so that nothing refills).
- Metadata that is not UTF-8 made grpc log a traceback per call; at most one line now.
- A runner given an external referee without its admin token refuses before playing.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from cancellation_hearts.v1 import admin_service_pb2 as apb
from cancellation_hearts.v1 import admin_service_pb2_grpc as agrpc
from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_core.defaults import TablePolicy
from hearts_core.rules import Rules
from hearts_protocol.transport import own_channel
from hearts_server.registry import Registry
from hearts_server.server import make_server
from hearts_server.table import TableSettings
from hearts_server.table.clock import ManualClock
from tests.helpers.cli import hearts
from tests.helpers.h2_attack import PLAY_PATH, raw_call
from tests.helpers.harness import RawSeat, create_table

ADMIN = "/cancellation_hearts.v1.AdminService/"
NAMES = ["heuristic"] * 6
#: The documented server-wide limit of tables waiting or playing (docs/SECURITY.md).
MAX_LIVE_TABLES = 256
#: The documented limit of a table's games × max_hands.
MAX_TABLE_HANDS = 20_000
START_TIMEOUT_S = 60.0


class Serve:
    """A real ``hearts serve`` process; its stdout read line by line, its stderr in a file."""

    def __init__(self, folder: Path, *args: str) -> None:
        self.log = folder / "serve.log"
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "hearts_tournaments",
                "--log-format",
                "json",
                "serve",
                "--port",
                "0",
                "--records",
                str(folder / "games"),
                *args,
            ],
            stdout=subprocess.PIPE,
            stderr=self.log.open("wb"),
            text=True,
            env={**os.environ, "XDG_STATE_HOME": str(folder / "state")},
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        line = self.line()
        assert line.startswith("referee listening on "), (line, self.log.read_text()[-2000:])
        self.address = line.split()[-1]
        self.port = int(self.address.rsplit(":", 1)[1])

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def line(self) -> str:
        """The next line on stdout, failing clearly when none comes."""
        try:
            return self.lines.get(timeout=START_TIMEOUT_S)
        except queue.Empty:
            self.process.kill()
            pytest.fail(f"hearts serve printed nothing more; its log:\n{self.log.read_text()[-2000:]}")

    def stop(self) -> str:
        """Stops it with SIGTERM; its stderr."""
        self.process.terminate()
        try:
            assert self.process.wait(30) == 0
        finally:
            self.process.kill()
        return self.log.read_text(errors="replace")


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[list[Serve]]:
    started: list[Serve] = []
    yield started
    for server in started:
        server.process.kill()
        server.process.wait(30)


async def _admin_codes(address: str, metadata: tuple[tuple[str, str], ...] = ()) -> dict[str, str]:
    """Every read or write of the admin API, each with its status name."""
    config = apb.TableConfig(players=6, bot_names=NAMES)
    calls: dict[str, Any] = {
        "CreateTable": ("CreateTable", apb.CreateTableRequest(config=config)),
        "GetTable": ("GetTable", apb.GetTableRequest(table_id="x")),
        "AwaitTable": ("AwaitTable", apb.AwaitTableRequest(table_id="x")),
        "GetGameRecord": ("GetGameRecord", apb.GetGameRecordRequest(game_id="0123456789ab")),
        "OpenSession": ("OpenSession", apb.OpenSessionRequest(bot_name="x")),
    }
    out = {}
    async with grpc.aio.insecure_channel(address) as channel:
        stub = agrpc.AdminServiceStub(channel)
        for name, (method, request) in calls.items():
            try:
                await getattr(stub, method)(request, metadata=metadata, timeout=30)
                out[name] = "OK"
            except grpc.aio.AioRpcError as exc:
                out[name] = exc.code().name
    return out


def test_serve_without_a_token_refuses_admin_calls_and_prints_where_its_token_is(
    tmp_path: Path, serve: list[Serve]
) -> None:
    server = Serve(tmp_path)
    serve.append(server)
    # The attack: anyone who can connect calls the admin API.
    codes = asyncio.run(_admin_codes(server.address))
    assert codes == dict.fromkeys(codes, "UNAUTHENTICATED"), codes
    # The organiser: the token `hearts serve` made is in a file only its user can read.
    line = server.line()
    assert line.startswith("admin token in "), line
    token_file = Path(line.split()[3])
    assert token_file == tmp_path / "state" / "cancellation-hearts" / f"referee-{server.port}.token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(token_file.parent.stat().st_mode) == 0o700
    token = token_file.read_text().strip()
    assert len(token) == 64 and token not in line
    assert "HEARTS_ADMIN_TOKEN" in line
    table = asyncio.run(create_table(server.address, NAMES, token))
    assert len(table.seats) == 6
    assert asyncio.run(_admin_codes(server.address, (("authorization", "Bearer guess"),)))["GetTable"] == (
        "UNAUTHENTICATED"
    )
    log = server.stop()
    assert token not in log
    assert not token_file.exists(), "the token file is removed when the referee stops"


def test_serve_open_admin_opens_the_api_with_a_warning(tmp_path: Path, serve: list[Serve]) -> None:
    server = Serve(tmp_path, "--open-admin")
    serve.append(server)
    table = asyncio.run(create_table(server.address, NAMES))
    assert len(table.seats) == 6
    log = server.stop()
    warnings = [line for line in log.splitlines() if "--open-admin" in line]
    assert len(warnings) == 1 and "anyone who can connect" in warnings[0], log[-2000:]
    assert not (tmp_path / "state").exists(), "an open referee writes no token file"


def test_serve_writes_a_missing_admin_token_file_and_reads_it_back(
    tmp_path: Path, serve: list[Serve]
) -> None:
    token_file = tmp_path / "private" / "admin.token"
    first = Serve(tmp_path, "--admin-token-file", str(token_file))
    serve.append(first)
    token = token_file.read_text().strip()
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert asyncio.run(_admin_codes(first.address))["CreateTable"] == "UNAUTHENTICATED"
    assert asyncio.run(create_table(first.address, NAMES, token)).table_id
    first.stop()
    assert token_file.read_text().strip() == token, "a token file named by the organiser is kept"
    second = Serve(tmp_path, "--admin-token-file", str(token_file))
    serve.append(second)
    assert asyncio.run(create_table(second.address, NAMES, token)).table_id
    second.stop()


def test_open_admin_and_a_token_exclude_each_other(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "hearts_tournaments", "serve", "--open-admin", "--admin-token", "x"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "--open-admin" in result.stderr, result.stderr


def test_the_library_referee_is_closed_without_a_token(tmp_path: Path) -> None:
    async def scenario() -> dict[str, str]:
        server = make_server(tmp_path)
        await server.start()
        try:
            return await _admin_codes(server.address)
        finally:
            await server.stop(0.5)

    codes = asyncio.run(scenario())
    assert codes == dict.fromkeys(codes, "UNAUTHENTICATED"), codes


def test_an_admin_creating_tables_as_fast_as_it_can_is_stopped_at_the_cap(tmp_path: Path) -> None:
    # Nobody joins these tables, and none may start playing (or end) while the flood runs: a
    # join timeout far beyond the test's own. No call has a deadline of its own either, so that
    # on a loaded machine a slow answer is still an answer (pytest's timeout bounds the test).
    # Each of the 8 flooders has a connection of its own; a stream the transport refuses
    # (REFUSED_STREAM: grpc counts a finished call until Python lets go of it, and a connection
    # has MAX_CALLS_PER_CONNECTION) was never seen by the referee, and is sent again.
    async def scenario() -> tuple[int, list[tuple[str, str]], int, str, int]:
        server = make_server(tmp_path, admin_token="t")
        await server.start()
        metadata = (("authorization", "Bearer t"),)
        created: list[str] = []
        refused: list[tuple[str, str]] = []
        pushed_back = 0
        config = apb.TableConfig(players=6, bot_names=NAMES, join_timeout_ms=3_600_000)
        request = apb.CreateTableRequest(config=config)

        async def flood() -> None:
            nonlocal pushed_back
            async with own_channel(server.address) as channel:
                stub = agrpc.AdminServiceStub(channel)
                while not refused and len(created) < 4 * MAX_LIVE_TABLES:
                    try:
                        response = await stub.CreateTable(request, metadata=metadata)
                        created.append(response.table_id)
                    except grpc.aio.AioRpcError as exc:
                        details = str(exc.details())
                        if exc.code() == grpc.StatusCode.UNAVAILABLE and "error code 7" in details:
                            pushed_back += 1
                            await asyncio.sleep(0)
                            continue
                        refused.append((exc.code().name, details))

        try:
            await asyncio.gather(*(flood() for _ in range(8)))
            live = server.registry.live_tables()
            async with own_channel(server.address) as channel:
                stub = agrpc.AdminServiceStub(channel)
                # One ends: there is room for one more.
                await stub.CancelTable(apb.CancelTableRequest(table_id=created[0]), metadata=metadata)
                again = await stub.CreateTable(request, metadata=metadata)
            return len(created), refused, live, again.table_id, pushed_back
        finally:
            await server.stop(0.5)

    created, refused, live, again, pushed_back = asyncio.run(scenario())
    assert refused, f"{created} tables created, none refused"
    assert {code for code, _ in refused} == {"RESOURCE_EXHAUSTED"}, (created, refused, pushed_back)
    assert created == live == MAX_LIVE_TABLES, (created, live, refused)
    assert all(str(MAX_LIVE_TABLES) in details for _, details in refused), refused[0]
    assert again


@pytest.mark.parametrize(
    ("games", "max_hands", "accepted"), [(1000, 1000, False), (101, 200, False), (100, 200, True)]
)
def test_a_table_of_more_hands_than_the_cap_is_refused(
    tmp_path: Path, games: int, max_hands: int, accepted: bool
) -> None:
    async def scenario() -> tuple[str, str]:
        server = make_server(tmp_path, admin_token="t")
        await server.start()
        try:
            await create_table(server.address, NAMES, "t", games=games, max_hands=max_hands)
            return "OK", ""
        except grpc.aio.AioRpcError as exc:
            return exc.code().name, str(exc.details())
        finally:
            await server.stop(0.5)

    code, details = asyncio.run(scenario())
    if accepted:
        assert code == "OK"
    else:
        assert code == "INVALID_ARGUMENT", (code, details)
        assert f"games × max_hands must be at most {MAX_TABLE_HANDS}" in details


def test_a_table_nobody_plays_lets_the_event_loop_run(tmp_path: Path) -> None:
    # A table whose seats are all released is played by the referee alone, every decision at
    # once. It used to make a whole hand's card plays (about 50 decisions, milliseconds) without
    # letting the event loop run anything else, so 200 such tables held every other table's
    # decisions for hundreds of ms. Counted in decisions per turn of the loop, not in time: now
    # at most one per seat (a pass asks every seat at once). (A table no seat joins at all ends
    # at its join timeout instead: tests/test_referee_unjoined.py.)
    async def scenario() -> tuple[int, int]:
        registry = Registry(tmp_path)
        settings = TableSettings(
            rules=Rules(players=6, target_score=10_000, max_hands=200),
            bot_names=("x",) * 6,
            policy=TablePolicy(join_timeout_ms=1),
        )
        table = registry.create(settings)
        for seat in range(6):
            table.release(seat, faulted=True)
        most = 0
        while not table.done.is_set():
            before = len(table.decisions.log)
            await asyncio.sleep(0)
            if table.state is not None:
                most = max(most, len(table.decisions.log) - before)
        return most, table.finished[0].result.hands_played

    most, hands = asyncio.run(scenario())
    assert hands == 200
    assert most <= 6, f"the referee made {most} decisions in one turn of the event loop"


def _bad_decision() -> bytes:
    return rpb.PlayRequest(decision=rpb.Decision(request_id=10**6)).SerializeToString()


async def _flood_once(address: str, token: str, messages: int) -> tuple[int, str]:
    """Joins ``token``'s seat, waits for its request, then sends up to ``messages`` wrong answers,
    each once the referee has answered the one before; the rejections it got before its stream
    ended, and the stream's status.

    One answer in flight at a time, so that the verdict does not depend on the machine's speed:
    a burst written all at once may still be in flight when the referee has closed the stream
    (it drains a flooder's writes for FLOOD_DRAIN_S of real time), and a loaded machine could
    then surface that as the client's own INTERNAL.
    """
    seat = RawSeat(address)
    try:
        seat.join(token)
        assert await seat.next_request() is not None
        rejections = 0
        for _ in range(messages):
            seat.send(_bad_decision())
            message = await seat.recv()
            while message is not None and message.WhichOneof("message") != "rejection":
                message = await seat.recv()
            if message is None:
                break
            rejections += 1
        return rejections, (await seat.code()).name
    finally:
        await seat.close()


def test_the_flood_allowance_is_the_seats_and_survives_reconnects(tmp_path: Path) -> None:
    # The real server on a stopped clock (nothing refills the allowance, no deadline passes):
    # the first stream gets the burst of 100 rejections, then RESOURCE_EXHAUSTED; each stream
    # after a reconnection used to get a fresh burst of 100. Now it gets none.
    async def scenario() -> list[tuple[int, str]]:
        server = make_server(tmp_path, admin_token="t")
        server.registry.clock = ManualClock()
        await server.start()
        metadata = (("authorization", "Bearer t"),)
        try:
            table = await create_table(server.address, NAMES, "t", max_faults=1000, join_timeout_ms=60_000)
            async with grpc.aio.insecure_channel(server.address) as channel:
                stub = agrpc.AdminServiceStub(channel)
                for seat in range(1, 6):  # nobody comes for the others: the referee plays them
                    await stub.ReleaseSeat(
                        apb.ReleaseSeatRequest(table_id=table.table_id, seat=seat), metadata=metadata
                    )
            return [await _flood_once(server.address, table.seats[0].token, 300) for _ in range(4)]
        finally:
            await server.stop(0.5)

    streams = asyncio.run(scenario())
    assert [code for _, code in streams] == ["RESOURCE_EXHAUSTED"] * 4, streams
    assert streams[0][0] == 100, streams
    assert [rejections for rejections, _ in streams[1:]] == [0, 0, 0], streams


def test_metadata_that_is_not_utf8_costs_at_most_one_log_line(tmp_path: Path, serve: list[Serve]) -> None:
    token_file = tmp_path / "admin.token"
    token_file.write_text("s3cret\n")
    server = Serve(tmp_path, "--admin-token-file", str(token_file))
    serve.append(server)
    bad = [(b"authorization", b"Bearer \xff\xfe\xc3(" + bytes(range(0x80, 0xC0)))]
    statuses = []
    for _ in range(20):
        for path, message in (
            (ADMIN + "GetTable", apb.GetTableRequest(table_id="x").SerializeToString()),
            (ADMIN + "CreateTable", apb.CreateTableRequest().SerializeToString()),
            (PLAY_PATH, b""),
        ):
            statuses.append(raw_call("127.0.0.1", server.port, path, message, bad).get("grpc-status"))
    log = server.stop()
    # Every admin call is UNAUTHENTICATED; the Play streams end (no join: INVALID_ARGUMENT).
    assert statuses[0::3] == statuses[1::3] == ["16"] * 20, statuses
    assert "Traceback" not in log, log[-3000:]
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    about = [line for line in lines if line.get("logger", "").startswith("grpc")]
    assert len(about) <= 1, about
    assert all("\\xff" not in json.dumps(line) for line in lines)


def test_a_runner_given_an_external_referee_without_its_token_refuses(
    tmp_path: Path, serve: list[Serve]
) -> None:
    server = Serve(tmp_path, "--open-admin")
    serve.append(server)
    config = tmp_path / "external.toml"
    config.write_text(
        f'[tournament]\nname = "external"\ntable_size = 6\ndeals = 1\nduplicate = false\n'
        f'target_score = 20\nsandbox = "none"\nserver = "{server.address}"\noutput = "{tmp_path / "out"}"\n'
        '[[bots]]\nname = "a"\nbuiltin = "random"\n[[bots]]\nname = "b"\nbuiltin = "heuristic"\n'
    )
    env = {k: v for k, v in os.environ.items() if k != "HEARTS_ADMIN_TOKEN"}
    result = hearts("tournament", "run", str(config), "--progress", "never", env=env, timeout=300)
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    errors = [line for line in result.stderr.splitlines() if line.startswith("hearts: error:")]
    assert len(errors) == 1 and "HEARTS_ADMIN_TOKEN" in errors[0], result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert not list((tmp_path / "out" / "records").glob("*.json"))
