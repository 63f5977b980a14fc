"""End to end: the real server, bots as real processes, records verified by ``hearts replay``."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from cancellation_hearts.v1 import admin_service_pb2 as apb
from cancellation_hearts.v1 import admin_service_pb2_grpc as agrpc
from cancellation_hearts.v1 import spectator_service_pb2 as spb
from cancellation_hearts.v1 import spectator_service_pb2_grpc as sgrpc
from hearts_core.cards import Card
from hearts_core.deal import seed_commitment
from hearts_tournaments.arena.host import bot_command
from tests.helpers.cli import hearts
from tests.helpers.harness import await_table, create_table, running_server, sdk_bot


def bot_process(name: str, address: str, token: str, seed: str, log: Path) -> subprocess.Popen[bytes]:
    """A built-in bot as its own process, started exactly as ``hearts host`` starts one."""
    token_file = log.with_suffix(".token")
    token_file.write_text(token)
    return bot_process_with_file(name, address, token_file, seed, log)


def bot_process_with_file(
    name: str, address: str, token_file: Path, seed: str, log: Path
) -> subprocess.Popen[bytes]:
    """A built-in bot as its own process reading its token from a file, as ``hearts host`` starts one."""
    return subprocess.Popen(
        bot_command(name, address, token_file, seed), stdout=subprocess.DEVNULL, stderr=log.open("wb")
    )


def test_full_game_of_eight_bot_processes_verifies(tmp_path: Path) -> None:
    async def scenario() -> apb.GetTableResponse:
        async with running_server(tmp_path / "games") as server:
            names = ["heuristic", "random"] * 4
            table = await create_table(server.address, names, seed="e2e-8")
            processes = [
                bot_process(
                    names[s.seat], server.address, s.token, str(s.seat), tmp_path / f"bot{s.seat}.log"
                )
                for s in table.seats
            ]
            try:
                result = await await_table(server.address, table.table_id)
            finally:
                for process in processes:
                    assert await asyncio.to_thread(process.wait, 60) == 0
            return result

    table = asyncio.run(scenario())
    assert table.status == apb.TABLE_STATUS_DONE
    (game,) = table.games
    record_path = tmp_path / "games" / f"{game.game_id}.json"
    record = json.loads(record_path.read_text())
    assert json.loads(game.record_json) == record
    assert record["faults"] == [] and record["players"] == 8
    assert record["seed_commitment"] == seed_commitment("e2e-8")
    assert len(record["decisions"]) == sum(8 + len(h["plays"]) for h in record["hands"]) + sum(
        1 for h in record["hands"] if "moon_choice" in h
    )
    replayed = hearts("replay", str(record_path))
    assert replayed.returncode == 0, replayed.stderr
    outcome = json.loads(replayed.stdout)
    assert outcome["error"] is None and outcome["game_over"] is True
    assert outcome["totals"] == list(game.result.totals)
    assert outcome["winners"] == list(game.result.winners)


def test_replay_rejects_a_record_whose_deals_do_not_match_the_committed_seed(tmp_path: Path) -> None:
    async def scenario() -> str:
        async with running_server(tmp_path) as server:
            table = await create_table(server.address, ["random"] * 6, seed="tamper", max_hands=1)
            await asyncio.gather(
                *(sdk_bot(server.address, s.token, "random", str(s.seat)) for s in table.seats)
            )
            return str((await await_table(server.address, table.table_id)).games[0].game_id)

    game_id = asyncio.run(scenario())
    record = json.loads((tmp_path / f"{game_id}.json").read_text())
    assert hearts("replay", str(tmp_path / f"{game_id}.json")).returncode == 0
    record["seed"] = "another-seed"
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(record))
    result = hearts("replay", str(forged))
    assert result.returncode == 1
    assert "does not match its published commitment" in result.stderr


def test_spectators_see_public_events_only(tmp_path: Path) -> None:
    async def scenario() -> list[spb.WatchResponse]:
        async with running_server(tmp_path) as server:
            table = await create_table(server.address, ["heuristic"] * 7, seed="watch", max_hands=1)
            async with grpc.aio.insecure_channel(server.address) as channel:
                watch = sgrpc.SpectatorServiceStub(channel).Watch(
                    spb.WatchRequest(table_id=table.table_id, spectator_token=table.spectator_token)
                )
                bots = [sdk_bot(server.address, s.token, "heuristic", str(s.seat)) for s in table.seats]
                events = [event async for event in watch]
                await asyncio.gather(*bots)
                return events

    events = asyncio.run(scenario())
    kinds = [e.event.WhichOneof("event") for e in events]
    assert kinds[0] == "game_started" and kinds[-1] == "game_completed"
    assert "cards_received" not in kinds
    assert kinds.count("card_played") == 7 * 14
    for event in events:
        if event.event.HasField("hand_started"):
            assert list(event.event.hand_started.hand) == []
        if event.event.HasField("game_started"):
            assert not event.event.game_started.HasField("your_seat")


def test_health_and_reflection_services(tmp_path: Path) -> None:
    async def scenario() -> tuple[int, list[str]]:
        async with running_server(tmp_path) as server, grpc.aio.insecure_channel(server.address) as channel:
            health = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service="cancellation_hearts.v1.RefereeService")
            )
            stub = reflection_pb2_grpc.ServerReflectionStub(channel)
            responses = stub.ServerReflectionInfo(
                iter([reflection_pb2.ServerReflectionRequest(list_services="")])
            )
            names = [s.name async for r in responses for s in r.list_services_response.service]
            return health.status, names

    status, names = asyncio.run(scenario())
    assert status == health_pb2.HealthCheckResponse.SERVING
    assert {
        "cancellation_hearts.v1.RefereeService",
        "cancellation_hearts.v1.AdminService",
        "cancellation_hearts.v1.SpectatorService",
        "grpc.health.v1.Health",
    } <= set(names)


def test_admin_token_is_required_when_configured(tmp_path: Path) -> None:
    from hearts_server.server import make_server

    async def scenario() -> tuple[grpc.StatusCode, str]:
        server = make_server(tmp_path, admin_token="s3cret")
        await server.start()
        try:
            async with grpc.aio.insecure_channel(server.address) as channel:
                stub = agrpc.AdminServiceStub(channel)
                request = apb.CreateTableRequest(config=apb.TableConfig(players=6, bot_names=["a"] * 6))
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await stub.CreateTable(request)
                created = await stub.CreateTable(request, metadata=(("authorization", "Bearer s3cret"),))
                return refused.value.code(), created.table_id
        finally:
            await server.stop(grace=0.1)

    code, table_id = asyncio.run(scenario())
    assert code == grpc.StatusCode.UNAUTHENTICATED and table_id


def test_bad_table_config_is_invalid_argument(tmp_path: Path) -> None:
    async def scenario() -> grpc.StatusCode:
        async with running_server(tmp_path) as server:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await create_table(server.address, ["a"] * 5)
            return refused.value.code()

    assert asyncio.run(scenario()) == grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is needed to make a test certificate")
def test_tls(tmp_path: Path) -> None:
    from hearts_server.server import TlsFiles, make_server

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )

    async def scenario() -> int:
        from hearts_client.bots import make_bot
        from hearts_client.sdk import run_async

        server = make_server(tmp_path / "games", tls=TlsFiles(cert, key), open_admin=True)
        await server.start()
        try:
            credentials = grpc.ssl_channel_credentials(cert.read_bytes())
            async with grpc.aio.secure_channel(server.address, credentials) as channel:
                stub = agrpc.AdminServiceStub(channel)
                table = await stub.CreateTable(
                    apb.CreateTableRequest(
                        config=apb.TableConfig(players=6, bot_names=["r"] * 6, max_hands=1)
                    )
                )
            games = await asyncio.gather(
                *(
                    run_async(
                        make_bot("random", s.seat),
                        server.address,
                        s.token,
                        root_certificates=cert.read_bytes(),
                    )
                    for s in table.seats
                )
            )
            return sum(games)
        finally:
            await server.stop(grace=0.1)

    assert asyncio.run(scenario()) == 6


def test_hearts_host_with_an_external_bot(tmp_path: Path) -> None:
    out = tmp_path / "games"
    host = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hearts_tournaments",
            "--log-format",
            "json",
            "host",
            "--seats",
            "heuristic,random,external,random,heuristic,random",
            "--json",
            "--out",
            str(out),
            "--games",
            "2",
            "--target-score",
            "40",
            "--seed",
            "host-test",
        ],
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "host.log").open("wb"),
        text=True,
    )
    assert host.stdout is not None
    invitation = json.loads(host.stdout.readline())
    assert [s["seat"] for s in invitation["seats"]] == [2]
    (seat,) = invitation["seats"]
    assert "token" not in seat and (Path(seat["token_file"]).stat().st_mode & 0o777) == 0o600
    assert seat["command"].endswith(f"--token-file {seat['token_file']}")
    external = bot_process_with_file(
        "heuristic", invitation["address"], Path(seat["token_file"]), "x", tmp_path / "ext.log"
    )
    assert external.wait(300) == 0
    summary = json.loads(host.stdout.readline())
    assert host.wait(60) == 0
    assert len(summary["games"]) == 2
    for game in summary["games"]:
        assert game["faults"] == [0] * 6
        replayed = hearts("replay", game["record"])
        assert replayed.returncode == 0, replayed.stderr
        assert json.loads(replayed.stdout)["totals"] == game["totals"]


def test_hearts_host_rejects_bad_seats() -> None:
    result = hearts("host", "--seats", "heuristic,nobody,random,random,random,random")
    assert result.returncode == 2
    assert "unknown seat 'nobody'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    too_few = hearts("host", "--seats", "random,random")
    assert too_few.returncode == 2 and "6 to 11 players" in too_few.stderr


def test_redacted_replay_shows_only_one_seats_view(tmp_path: Path, vectors: list[Path]) -> None:
    game = next(p for p in vectors if "game-8p" in p.name)
    result = hearts("replay", "--seat", "3", str(game))
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0]["event"]["game_started"]["your_seat"] == 3
    requests = [line["decision_request"] for line in lines if "decision_request" in line]
    assert requests and all(r["view"]["seat"] == 3 for r in requests)
    # Events come one by one or batched (a seat's feed holds a trick's events until it next hears).
    events = [
        e
        for line in lines
        for e in ([line["event"]] if "event" in line else line.get("events", {}).get("events", []))
    ]
    dealt = [e["hand_started"]["hand"] for e in events if "hand_started" in e]
    record = json.loads(game.read_text())["record"]
    assert dealt == [[str(c) for c in sorted(map(Card.parse, h["deal"][3]))] for h in record["hands"]]
    bad = hearts("replay", "--seat", "9", str(game))
    assert bad.returncode == 2 and "--seat must be 0..7" in bad.stderr
