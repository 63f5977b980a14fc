"""Deals and secrets stay secret, and results are verifiable: the attacks, played for real.

A hostile entrant (tests/hostile_secrets/spy_bot.py) plays a real tournament (the real runner,
its in-process referee, real bot processes) and tries every route to the other hands: the
config's seed, seeds revealed by earlier games, the admin API, the database and record files,
guesses checked against the seed commitment. Afterwards its guesses are compared with the
records. The database and record files are only protected from it by their modes and, once
bots run sandboxed, by not being visible at all; under ``sandbox = "none"`` (as here) a bot of
the same user can still open them, so those two routes are checked by the files' modes and as
the positive control that shows the spy's guessing works. The same holds for a bot's memory of
the hands it held in an earlier rotation of the deal: only a sandbox that leaves it no storage
that outlives its game closes that route.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from cancellation_hearts.v1 import admin_service_pb2 as apb
from cancellation_hearts.v1 import admin_service_pb2_grpc as agrpc
from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_core.deal import derive_seed, keyed_seed
from hearts_server.server import make_server
from hearts_tournaments.tournament.folder import SNAPSHOT_NAME
from hearts_tournaments.tournament.preflight import CHECK_LOG
from tests.helpers.cli import hearts
from tests.helpers.harness import create_table, running_server
from tests.hostile_secrets.spy_bot import REPORT_PREFIX, play_seat

SPY = Path(__file__).parent / "hostile_secrets" / "spy_bot.py"
#: A deal secret the organiser passes in the environment (and that no bot may see).
SECRET = "ab" * 32
#: Routes the referee and runner close by themselves, whatever the sandbox.
CLOSED_ROUTES = {"config", "revealed", "admin", "commitment"}
#: Routes only the sandbox closes: files of the organiser's user, and storage outliving a game.
SANDBOX_ROUTES = {"db", "records", "memory"}
DENIED = {"UNAUTHENTICATED", "PERMISSION_DENIED"}


def _config(folder: Path, spy_dir: Path, deals: int = 1, duplicate: bool = True, server: str = "") -> Path:
    config = folder / "spied.toml"
    command = [sys.executable, str(SPY), "--spy-dir", str(spy_dir), "--config", str(config)]
    command += ["--output", str(folder / "out")]
    config.write_text(
        f"""
[tournament]
name = "spied"
table_size = 6
deals = {deals}
seed = 1
target_score = 30
output = {json.dumps(str(folder / "out"))}
duplicate = {json.dumps(duplicate)}
concurrency = 1
decision_ms = 5000
join_timeout_ms = 60000
server = "{server}"

[[bots]]
name = "spy"
command = {json.dumps(command)}
files = {json.dumps(str(SPY.parent))}

[[bots]]
name = "heuristic"
builtin = "heuristic"

[[bots]]
name = "random"
builtin = "random"
"""
    )
    return config


def _run(config: Path, *extra: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    run_env = {**os.environ, **(env or {})}
    return hearts("tournament", "run", str(config), "--progress", "never", *extra, env=run_env, timeout=600)


@pytest.fixture(scope="module")
def spied(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished tournament of 6 rotations of one deal, the spy in two seats of each game."""
    folder = tmp_path_factory.mktemp("spied")
    spy_dir = folder / "spy"
    spy_dir.mkdir()
    config = _config(folder, spy_dir)
    result = _run(
        config, env={"HEARTS_DEAL_SECRET": SECRET, "HEARTS_ADMIN_TOKEN": "a-token-for-another-referee"}
    )
    assert result.returncode == 0, result.stderr
    return folder


def _reports(folder: Path, games_only: bool = True) -> list[dict[str, Any]]:
    """The spy's reports, one per process, from the bot logs the runner keeps (its games', or
    with ``games_only`` false also the pre-flight check's, kept when the kit warned about it)."""
    lines = (
        line
        for log in sorted((folder / "out" / "logs").rglob("*.log"))
        if not (games_only and log.name == CHECK_LOG)
        for line in log.read_text().splitlines()
    )
    return [json.loads(line[len(REPORT_PREFIX) :]) for line in lines if line.startswith(REPORT_PREFIX)]


def _records(out: Path) -> dict[str, dict[str, Any]]:
    with sqlite3.connect(out / "tournament.sqlite") as db:
        records = [json.loads(r) for (r,) in db.execute("SELECT record FROM games")]
    return {r["game_id"]: r for r in records}


def _learned(guesses: list[dict[str, Any]], records: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The guesses that are really another seat's hand."""
    return [
        g
        for g in guesses
        if sorted(records[g["game_id"]]["hands"][g["hand"]]["deal"][g["seat"]]) == g["cards"]
    ]


def test_a_spying_entrant_learns_no_other_hand(spied: Path) -> None:
    reports = _reports(spied)
    records = _records(spied / "out")
    assert len(records) == 6
    # The spy holds two seats of each of the six games, each its own process.
    assert len(reports) == 12 and all(r["hands_seen"] >= 1 for r in reports)
    for report in _reports(spied, games_only=False):
        assert {g["route"] for g in report["guesses"]} <= CLOSED_ROUTES | SANDBOX_ROUTES
        closed = [g for g in report["guesses"] if g["route"] in CLOSED_ROUTES]
        assert _learned(closed, records) == [], f"learned other hands: {closed[:3]}"
        # GameCompleted reveals no seed, so later rotations of the deal stay unknown.
        assert report["completed_seeds"] and set(report["completed_seeds"]) == {""}
        # Every admin call failed, with no token or with whatever the bot could find.
        assert report["admin"] and {c["code"] for c in report["admin"]} <= DENIED, report["admin"]
        assert not report["bot_seed_predicted"]
        assert not {"HEARTS_DEAL_SECRET", "HEARTS_ADMIN_TOKEN"} & set(report["env"])
        if report["db_readable"]:
            # Positive control: with the database open (no sandbox) the same guessing works.
            assert _learned([g for g in report["guesses"] if g["route"] == "db"], records)


def test_the_database_records_and_folders_are_private(spied: Path) -> None:
    out = spied / "out"
    assert out.stat().st_mode & 0o777 == 0o700
    for folder in (out / "records", out / "logs"):
        assert folder.stat().st_mode & 0o777 == 0o700
    for path in [out / "tournament.sqlite", out / "runner.log", *(out / "records").iterdir()]:
        assert path.stat().st_mode & 0o777 == 0o600, path
    for name in ("tournament.sqlite-wal", "tournament.sqlite-shm"):
        if (out / name).exists():
            assert (out / name).stat().st_mode & 0o777 == 0o600


def test_deals_come_from_the_secret_not_from_the_config_seed(spied: Path) -> None:
    records = _records(spied / "out")
    with sqlite3.connect(spied / "out" / "tournament.sqlite") as db:
        (schedule,) = db.execute("SELECT value FROM meta WHERE key = 'schedule'").fetchone()
    (seating,) = json.loads(schedule)["seatings"]
    seeds = {r["seed"] for r in records.values()}
    # Every rotation plays the same deal, seeded by the organiser's secret.
    assert seeds == {keyed_seed(bytes.fromhex(SECRET), "deal", seating["seed"])}
    assert derive_seed("1", "deal", 0) not in seeds


def test_the_same_deal_secret_gives_the_same_deals_and_a_fresh_one_others(tmp_path: Path) -> None:
    seeds = []
    secret_file = tmp_path / "secret"
    secret_file.write_text(SECRET + "\n")
    for run, extra in enumerate((["--deal-secret-file", str(secret_file)],) * 2 + ([],)):
        folder = tmp_path / f"t{run}"
        (folder / "spy").mkdir(parents=True)
        result = _run(_config(folder, folder / "spy", duplicate=False), *extra)
        assert result.returncode == 0, result.stderr
        seeds.append({r["seed"] for r in _records(folder / "out").values()})
    assert seeds[0] == seeds[1] and seeds[0].isdisjoint(seeds[2])

    secret_file.write_text("1")
    bad = _run(
        _config(tmp_path / "t0", tmp_path / "t0" / "spy"), "--fresh", "--deal-secret-file", str(secret_file)
    )
    assert bad.returncode == 2 and "64 hex digits" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------------- verify
def _verify(out: Path) -> subprocess.CompletedProcess[str]:
    return hearts("tournament", "verify", str(out))


@pytest.fixture
def copy(spied: Path, tmp_path: Path) -> Iterator[Path]:
    out = tmp_path / "out"
    shutil.copytree(spied / "out", out)
    yield out


def test_verify_passes_an_untouched_tournament(spied: Path) -> None:
    result = _verify(spied / "out")
    assert result.returncode == 0, result.stdout + result.stderr
    (line,) = result.stdout.strip().splitlines()
    assert line.startswith(
        "verify: ok: 6 games, 6 record files: seeds, deals, records, outcomes and standings agree; "
        "every game signed, by the organiser's key ed25519:"
    ), line


def test_verify_catches_a_tampered_row(copy: Path) -> None:
    with sqlite3.connect(copy / "tournament.sqlite") as db:
        for seq, summary in db.execute("SELECT seq, summary FROM games").fetchall():
            data = json.loads(summary)
            data["places"] = [1 if bot == "spy" else 6 for bot in data["seats"]]
            db.execute("UPDATE games SET summary = ? WHERE seq = ?", (json.dumps(data), seq))
    (copy / SNAPSHOT_NAME).unlink(missing_ok=True)  # the forger drops the cached standings too
    report = json.loads(hearts("tournament", "report", str(copy), "--format", "json").stdout)
    assert report["standings"][0]["bot"] == "spy" and report["standings"][0]["mean_place"] == 1.0
    result = _verify(copy)
    assert result.returncode == 1
    lines = result.stdout.strip().splitlines()
    assert sum("stored places" in line for line in lines) == 6
    assert any(line.startswith("standings: spy: mean_place is 1.0 in the report") for line in lines)
    assert lines[-1].startswith("verify: ") and "problem" in lines[-1]


def test_verify_catches_a_tampered_record_file(copy: Path) -> None:
    path = sorted((copy / "records").glob("*.json"))[0]
    record = json.loads(path.read_text())
    record["result"]["totals"][0] = -100
    path.write_text(json.dumps(record))
    result = _verify(copy)
    assert result.returncode == 1
    assert f"the record file {path} differs from the database's copy" in result.stdout


def test_verify_catches_a_deleted_row(copy: Path) -> None:
    with sqlite3.connect(copy / "tournament.sqlite") as db:
        db.execute("DELETE FROM games WHERE key = 'd000-r03'")
    result = _verify(copy)
    assert result.returncode == 1
    assert "d000-r03: the record file" in result.stdout and "the database lacks" in result.stdout


def test_verify_catches_a_record_forged_in_the_database(copy: Path) -> None:
    with sqlite3.connect(copy / "tournament.sqlite") as db:
        seq, text = db.execute("SELECT seq, record FROM games ORDER BY seq LIMIT 1").fetchone()
        record = json.loads(text)
        record["seed"] = "forged"
        db.execute("UPDATE games SET record = ? WHERE seq = ?", (json.dumps(record), seq))
    result = _verify(copy)
    assert result.returncode == 1
    assert "the record's seed is not the tournament's seed of deal 0" in result.stdout
    assert "the revealed seed does not match its published commitment" in result.stdout


def test_verify_of_a_folder_without_a_tournament_is_one_line(tmp_path: Path) -> None:
    result = _verify(tmp_path)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------------- the referee
async def _play_table(address: str, table: apb.CreateTableResponse) -> list[list[rpb.Event]]:
    seen: list[list[rpb.Event]] = [[] for _ in table.seats]
    await asyncio.gather(*(play_seat(address, s.token, seen[s.seat].append) for s in table.seats))
    return seen


def _completed(events: list[rpb.Event]) -> list[rpb.Event]:
    return [e for e in events if e.WhichOneof("event") == "game_completed"]


def test_later_games_of_a_table_have_independent_seeds_and_no_seed_is_revealed(tmp_path: Path) -> None:
    async def scenario() -> tuple[list[list[rpb.Event]], apb.GetTableResponse]:
        async with running_server(tmp_path) as server:
            table = await create_table(server.address, ["spy"] * 6, games=3, max_hands=1)
            seen = await _play_table(server.address, table)
            async with grpc.aio.insecure_channel(server.address) as channel:
                done = await agrpc.AdminServiceStub(channel).GetTable(
                    apb.GetTableRequest(table_id=table.table_id)
                )
            return seen, done

    seen, done = asyncio.run(scenario())
    seeds = [json.loads(g.record_json)["seed"] for g in done.games]
    assert len(set(seeds)) == 3
    assert all(derive_seed(seeds[0], "game", k) != seeds[k] for k in (1, 2))
    for events in seen:
        completed = _completed(events)
        assert len(completed) == 3 and all(e.game_completed.seed == "" for e in completed)


def test_reveal_seed_is_explicit_and_refused_where_it_would_leak(tmp_path: Path) -> None:
    async def refused(address: str, **config: Any) -> grpc.StatusCode:
        try:
            await create_table(address, ["spy"] * 6, **config)
        except grpc.aio.AioRpcError as exc:
            return exc.code()
        return grpc.StatusCode.OK

    async def scenario() -> tuple[list[str], list[str], list[grpc.StatusCode]]:
        async with running_server(tmp_path) as server:
            table = await create_table(server.address, ["spy"] * 6, max_hands=1, reveal_seed=True)
            seen = await _play_table(server.address, table)
            chosen = await create_table(
                server.address, ["spy"] * 6, max_hands=1, games=2, game_seeds=["one", "two"], reveal_seed=True
            )
            chosen_seen = await _play_table(server.address, chosen)
            codes = [
                await refused(server.address, seed="chosen", games=2, reveal_seed=True),
                await refused(server.address, games=2, game_seeds=["only-one"]),
                await refused(server.address, games=2, game_seeds=["one", ""]),
            ]
            return (
                [e.game_completed.seed for e in _completed(seen[0])],
                [e.game_completed.seed for e in _completed(chosen_seen[3])],
                codes,
            )

    revealed, chosen, codes = asyncio.run(scenario())
    assert len(revealed) == 1 and revealed[0]
    assert chosen == ["one", "two"]
    assert codes == [grpc.StatusCode.INVALID_ARGUMENT] * 3


def test_admin_calls_without_the_token_fail(tmp_path: Path) -> None:
    async def scenario() -> list[grpc.StatusCode]:
        server = make_server(tmp_path, admin_token="the-admin-token")
        await server.start()
        codes = []
        try:
            async with grpc.aio.insecure_channel(server.address) as channel:
                admin = agrpc.AdminServiceStub(channel)
                request = apb.CreateTableRequest(config=apb.TableConfig(players=6, bot_names=["x"] * 6))
                for metadata in (
                    (),
                    (("authorization", "Bearer guess"),),
                    (("authorization", "the-admin-token"),),
                ):
                    try:
                        await admin.CreateTable(request, metadata=metadata)
                        codes.append(grpc.StatusCode.OK)
                    except grpc.aio.AioRpcError as exc:
                        codes.append(exc.code())
                await admin.CreateTable(request, metadata=(("authorization", "Bearer the-admin-token"),))
        finally:
            await server.stop(grace=0.1)
        return codes

    assert asyncio.run(scenario()) == [grpc.StatusCode.UNAUTHENTICATED] * 3


def test_an_external_referees_admin_token_reaches_the_runner_only(tmp_path: Path) -> None:
    token_file = tmp_path / "admin.token"
    token_file.write_text("the-external-admin-token\n")
    serve_args = ["serve", "--port", "0", "--records", str(tmp_path / "games"), "--admin-token-file"]
    serve = subprocess.Popen(
        [sys.executable, "-m", "hearts_tournaments", "--log-format", "json", *serve_args, str(token_file)],
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "serve.log").open("wb"),
        text=True,
    )
    assert serve.stdout is not None
    try:
        line = serve.stdout.readline()
        assert line.startswith("referee listening on "), line
        address = line.split()[-1]
        (tmp_path / "spy").mkdir()
        config = _config(tmp_path, tmp_path / "spy", duplicate=False, server=address)
        result = _run(config, env={"HEARTS_ADMIN_TOKEN": "the-external-admin-token"})
        assert result.returncode == 0, result.stderr
    finally:
        serve.terminate()
        serve.wait(30)
    reports = _reports(tmp_path)
    assert len(reports) == 2
    for report in reports:
        assert "HEARTS_ADMIN_TOKEN" not in report["env"]
        assert report["admin"] and {c["code"] for c in report["admin"]} <= DENIED
    verified = _verify(tmp_path / "out")
    assert verified.returncode == 0, verified.stdout
    assert verified.stdout.startswith("verify: ok: 1 games: ")


# ---------------------------------------------------------------------- hearts host
def test_hearts_host_keeps_tokens_off_command_lines_and_out_of_its_output(tmp_path: Path) -> None:
    host = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hearts_tournaments",
            "host",
            "--seats",
            "random,random,external,random,random,random",
            "--json",
            "--out",
            str(tmp_path / "games"),
            "--target-score",
            "30",
        ],
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "host.log").open("wb"),
        text=True,
    )
    assert host.stdout is not None
    try:
        invitation = json.loads(host.stdout.readline())
        (seat,) = invitation["seats"]
        token_file = Path(seat["token_file"])
        token = token_file.read_text().strip()
        assert token_file.stat().st_mode & 0o777 == 0o600
        assert token_file.parent.stat().st_mode & 0o777 == 0o700
        assert token not in json.dumps(invitation)
        command_lines = _children_command_lines(host.pid)
        for _ in range(300):  # the bots start right after the invitation is printed
            if len(command_lines) == 5:
                break
            time.sleep(0.1)
            command_lines = _children_command_lines(host.pid)
        assert len(command_lines) == 5
        for args in command_lines:
            # Sandboxed or not, the bot is told a file, never the token itself.
            assert any(a == "--token-file" or a.startswith("--token-file=") for a in args), args
            assert not any(a == "--token" or a.startswith("--token=") for a in args), args
            assert token not in " ".join(args)
        external = subprocess.run(
            [
                sys.executable,
                "-m",
                "hearts_tournaments",
                "bot",
                "random",
                "--server",
                invitation["address"],
                "--token-file",
                str(token_file),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert external.returncode == 0, external.stderr
        rest = host.stdout.read()
        assert host.wait(60) == 0
    finally:
        host.kill()
    assert token not in rest and json.loads(rest.splitlines()[-1])["games"]
    assert not token_file.exists()  # the private folder is removed at the end


def _children_command_lines(pid: int) -> list[list[str]]:
    """The command lines of ``pid``'s child processes, from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue
        if parent == pid:
            found.append([a.decode() for a in args if a])
    return found
