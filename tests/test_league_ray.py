"""A league on a real Ray cluster of this machine: the blocks of a local run, and a node lost mid-block.

The cluster is :func:`tests.helpers.ray_cluster.cluster` (a head and a second node, real raylets, one
CPU each). The league has two built-in entrants and a sandboxed command entrant whose script
is a snapshot in the league folder: the nodes get it through Ray's object store with each job,
never the league folder, its database or its deal secret. `hearts league run --executor ray`
must store the blocks a local run stores, with the same results. The fault test adds a third
node, waits until that node plays a game of a block (a bot's log of a block game open in one
of its processes) and kills it with SIGKILL: every block is still stored exactly once, with
the local run's results, and none of the lost node's processes survives.
"""

from __future__ import annotations

import io
import os
import re
import shlex
import socket
import sqlite3
import subprocess
import sys
import tarfile
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from hearts_core.defaults import TablePolicy
from hearts_tournaments.arena.sandbox import process_tree, sample_processes
from hearts_tournaments.arena.shipping import PackedSnapshot, pack, unpack
from hearts_tournaments.arena.snapshot import STORE, SnapshotError
from hearts_tournaments.league import commands
from hearts_tournaments.league.cluster import NodeLeague
from hearts_tournaments.league.config import LeagueConfig, LeagueError
from hearts_tournaments.league.play import StopAfter, play_settings, run_league
from hearts_tournaments.league.store import LeagueStore
from tests.helpers.cli import hearts
from tests.helpers.ray_cluster import (
    NODE,
    alive,
    cluster,
    open_files,
    ray_module,
    raylet_pid,
    same_games,
    seat_logs,
)

__all__ = ["cluster", "ray_module"]  # fixtures

#: Timing never decides anything (every limit is the referee's largest, far above what the bots
#: need on the most loaded machine; a 60 s time bank was spent once under CI's load): the same
#: settings and deal secret play the same games on any executor. Two hands a game: the test is
#: about blocks, not about play.
CONFIG = LeagueConfig(
    name="rayleague",
    table_size=6,
    seed="ray-league",
    max_hands=2,
    policy=TablePolicy(decision_ms=600_000, time_bank_ms=86_400_000, join_timeout_ms=600_000),
    bootstrap=20,
)
SECRET = bytes.fromhex("1ea9" * 16)
#: A command entrant: the heuristic bot, reached through its own script (a snapshot in the league).
SHIPPED_BOT = """
import os
import sys

from hearts_tournaments.arena.builtin_bot import main

sys.exit(main(["heuristic", *sys.argv[1:], "--seed", os.environ["HEARTS_SEED"], "--name", "shipped"]))
"""
BLOCKS = 2
#: Three validation games, then six games a block.
GAMES = 3 + 6 * BLOCKS
#: A bot's log of a block's game (``logs/VERSION/bNNNNNN-rNN-sN.log``), as a node writes it.
BLOCK_LOG = re.compile(r"/logs/[^/]+/b\d{6}-r\d{2}-s\d+\.log$")
pytestmark = pytest.mark.timeout(1200)


@pytest.fixture(scope="module")
def bots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The command entrant's folder, one for every league of the module (the same snapshot)."""
    root = tmp_path_factory.mktemp("entrant")
    (root / "bots").mkdir()
    (root / "bots" / "shipped.py").write_text(SHIPPED_BOT)
    return root


def make_league(folder: Path, bots: Path, config: LeagueConfig = CONFIG) -> Path:
    """A league with two built-in entrants and the command entrant, its files snapshotted."""
    with commands.init_league(folder, config, SECRET) as store:
        commands.add_version(store, commands.make_spec("careful", None, "heuristic"))
        commands.add_version(store, commands.make_spec("dice", None, "random"))
        command = f"{shlex.quote(sys.executable)} bots/shipped.py"
        spec = commands.make_spec("shipped", command, None, files=[Path("bots")], workdir=bots)
        commands.add_version(store, commands.snapshot_files(store, spec))
    return folder


#: What of a game must not depend on where it was played (not its random game id).
SAME = ("seats", "totals", "places", "winners", "hands", "faults", "retired", "crashed")


def results(folder: Path) -> dict[str, tuple[Any, ...]]:
    """Every stored game's result by key, and each block's seating."""
    with LeagueStore.open(folder) as store:
        out: dict[str, tuple[Any, ...]] = {
            key: (block, validates, *(summary[k] for k in SAME))
            for key, block, validates, summary in store.games()
        }
        out.update({f"block {number}": tuple(seats) for number, _seed, seats, _seen in store.block_rows()})
    return out


def stored(folder: Path) -> tuple[int, int, list[int]]:
    """Games stored, seat results stored, and the blocks' numbers (read as another process would)."""
    with closing(sqlite3.connect(f"file:{LeagueStore.path_in(folder)}?mode=ro", uri=True, timeout=5)) as db:
        games = db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        seats = db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
        blocks = [int(n) for (n,) in db.execute("SELECT id FROM blocks ORDER BY id")]
    return int(games), int(seats), blocks


@pytest.fixture(scope="module")
def local_results(tmp_path_factory: pytest.TempPathFactory, bots: Path) -> dict[str, tuple[Any, ...]]:
    """The league played by the local executor: the reference."""
    folder = make_league(tmp_path_factory.mktemp("local") / "league", bots)
    with LeagueStore.open(folder) as store:
        assert run_league(store, StopAfter(blocks=BLOCKS), concurrency=2, executor="local") == BLOCKS
    played = results(folder)
    assert len(played) == GAMES + BLOCKS
    return played


def test_league_run_on_ray_stores_the_blocks_a_local_run_stores(
    cluster: Any, local_results: dict[str, tuple[Any, ...]], bots: Path, tmp_path: Path
) -> None:
    folder = make_league(tmp_path / "league", bots)
    run = hearts(
        "league", "run", str(folder), "--blocks", str(BLOCKS), "--concurrency", "2",
        "--executor", "ray", "--ray-address", cluster.address,
        timeout=900,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert f"{BLOCKS} blocks played; {BLOCKS} stored in all" in run.stdout
    assert same_games(results(folder), local_results) == {}
    assert stored(folder) == (GAMES, 6 * GAMES, list(range(BLOCKS)))
    # The driver wrote the bots' logs the nodes sent back, the command entrant's included.
    logs = folder / "logs" / "shipped@v1"
    seats = sum(r[2].count("shipped@v1") for key, r in local_results.items() if not key.startswith("block"))
    assert seat_logs(logs) == seats
    assert ((folder / "logs").stat().st_mode & 0o777) == 0o700


def test_a_node_killed_mid_block_loses_no_block_and_stores_none_twice(
    cluster: Any, local_results: dict[str, tuple[Any, ...]], bots: Path, tmp_path: Path
) -> None:
    folder = make_league(tmp_path / "league", bots)
    victim = cluster.add_node(**NODE)
    cluster.wait_for_nodes()
    raylet = raylet_pid(victim)
    doomed: list[int] = []
    playing: list[str] = []
    stop = threading.Event()

    def kill_when_playing_a_block() -> None:
        # Once a process of the victim writes a bot's log of a block's game, SIGKILL the victim's
        # raylet and every process of the node: that game is cut off mid-block.
        while not stop.is_set():
            tree = process_tree(raylet, sample_processes())
            logs = [path for p in tree for path in open_files(p.pid) if BLOCK_LOG.search(path)]
            if logs:
                doomed.extend(p.pid for p in tree)
                playing.extend(logs)
                cluster.remove_node(victim, allow_graceful=False)
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_when_playing_a_block, daemon=True)
    killer.start()
    try:
        with LeagueStore.open(folder) as store:
            played = run_league(
                store, StopAfter(blocks=BLOCKS), concurrency=3, executor="ray", ray_address=cluster.address
            )
    finally:
        stop.set()
        killer.join(60)
    assert playing, "the victim node never played a block's game before the run ended"
    assert played == BLOCKS
    assert stored(folder) == (GAMES, 6 * GAMES, list(range(BLOCKS)))  # every block once, none twice
    assert same_games(results(folder), local_results) == {}  # ... with the uninterrupted local run's results
    deadline = time.monotonic() + 30
    while any(alive(pid) for pid in doomed) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [pid for pid in doomed if alive(pid)] == []


# ---------------------------------------------------------------- settings, no cluster
def test_the_executor_is_a_league_setting_and_run_overrides_it(bots: Path, tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    folder = tmp_path / "league"
    address = f"127.0.0.1:{port}"
    init = hearts(
        "league", "init", str(folder), "--max-hands", "1", "--executor", "ray", "--ray-address", address
    )
    assert init.returncode == 0, init.stderr
    with LeagueStore.open(folder) as store:
        assert (store.config.executor, store.config.ray_address) == ("ray", address)
        commands.add_version(store, commands.make_spec("careful", None, "heuristic"))
        commands.add_version(store, commands.make_spec("dice", None, "random"))
    # The stored setting is used: the head is not there, one line at once.
    refused = hearts("league", "run", str(folder), "--blocks", "1", timeout=60)
    assert refused.returncode == 1, refused.stderr
    assert f"the Ray head at {address} does not answer" in refused.stderr.splitlines()[-1]
    assert "Traceback" not in refused.stderr
    with LeagueStore.open(folder) as store:
        assert store.block_count() == 0
    # `run --executor local` plays on this machine whatever the league's setting.
    local = hearts("league", "run", str(folder), "--blocks", "1", "--executor", "local", timeout=300)
    assert local.returncode == 0, local.stderr[-2000:]
    assert "1 blocks played; 1 stored in all" in local.stdout


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["init", "{folder}", "--ray-address", "no port"],
            'hearts: error: ray-address must be "host:port" of the Ray head, "auto", or "" for a '
            "one-machine Ray, not 'no port'",
        ),
        (
            ["run", "{folder}", "--blocks", "1", "--executor", "ray", "--ray-address", "no port"],
            'hearts: error: --ray-address must be "host:port" of the Ray head, "auto", or "" for a '
            "one-machine Ray, not 'no port'",
        ),
    ],
)
def test_a_bad_ray_address_is_one_line(args: list[str], line: str, tmp_path: Path) -> None:
    folder = tmp_path / "league"
    if args[0] == "run":
        commands.init_league(folder, CONFIG, SECRET).close()
    result = hearts("league", *(a.format(folder=folder) for a in args))
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines()[-1] == line
    assert "Traceback" not in result.stderr


def test_a_bad_executor_is_one_line(tmp_path: Path) -> None:
    result = hearts("league", "init", str(tmp_path / "league"), "--executor", "dask")
    assert result.returncode == 2
    assert "dask" in result.stderr and "local" in result.stderr and "ray" in result.stderr
    assert "Traceback" not in result.stderr
    with pytest.raises(LeagueError, match='executor must be "local" or "ray", not \'dask\''):
        LeagueConfig(executor="dask")
    with pytest.raises(LeagueError, match="ray-address must be"):
        LeagueConfig(executor="ray", ray_address="10.0.0.5")
    # Stored settings of a league made before these keys existed read as local.
    assert LeagueConfig.from_json({"name": "old"}).executor == "local"


def test_without_ray_the_ray_executor_says_how_to_install_it(bots: Path, tmp_path: Path) -> None:
    folder = tmp_path / "league"
    with commands.init_league(folder, CONFIG, SECRET) as store:
        commands.add_version(store, commands.make_spec("careful", None, "heuristic"))
        commands.add_version(store, commands.make_spec("dice", None, "random"))
    # The real CLI in a Python where `import ray` fails, as on a machine without the extra.
    code = (
        "import sys; sys.modules['ray'] = None; sys.argv = ['hearts'] + sys.argv[1:]; "
        "from hearts_tournaments.cli.main import main; main()"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, "league", "run", str(folder), "--blocks", "1", "--executor", "ray"],
        capture_output=True, text=True, timeout=120, check=False, env={**os.environ, "RAY_ADDRESS": ""},
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert "pip install 'cancellation-hearts[ray]'" in result.stderr.splitlines()[-1]
    assert "Traceback" not in result.stderr


def test_a_node_plays_the_shipped_snapshot_only_when_it_matches_its_digest(
    bots: Path, tmp_path: Path
) -> None:
    folder = make_league(tmp_path / "league", bots)
    with LeagueStore.open(folder) as store:
        spec = store.resolve("shipped@v1").spec
        work = NodeLeague.of(play_settings(store, (spec,)))
    assert spec.snapshot is not None and work.shipped() == (spec.snapshot,)
    # The command's script is named where the snapshot is bound (the node has no such file).
    assert work.config.bots[0].command == (sys.executable, str(bots / "bots" / "shipped.py"))
    packed = pack(spec.snapshot)
    assert "league.sqlite" not in packed.data.decode("latin-1")  # the copy alone travels

    node = tmp_path / "node"
    unpack(packed, node / STORE)
    played = work.settings_on_node(node).bots[0]
    assert played.snapshot == node / STORE / spec.snapshot.name and played.files == spec.files
    assert (played.snapshot / "0" / "shipped.py").read_text() == SHIPPED_BOT
    assert ((played.snapshot / "0" / "shipped.py").stat().st_mode & 0o777) == 0o444

    with pytest.raises(SnapshotError, match="is missing"):
        work.settings_on_node(tmp_path / "nothing-shipped")

    # A copy changed on the way, under the same digest, never plays.
    changed = tmp_path / "changed"
    (changed / "0").mkdir(parents=True)
    (changed / "0" / "shipped.py").write_text(SHIPPED_BOT + "# changed\n")
    tampered = PackedSnapshot(packed.digest, _tar(changed))
    unpack(tampered, tmp_path / "node2" / STORE)
    with pytest.raises(SnapshotError, match="was changed after it was taken"):
        work.settings_on_node(tmp_path / "node2")

    # A pack that would write outside its folder is refused whole.
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        entry = tarfile.TarInfo("../escaped")
        entry.size = 1
        tar.addfile(entry, io.BytesIO(b"x"))
    with pytest.raises(SnapshotError, match="cannot be unpacked"):
        unpack(PackedSnapshot(packed.digest, buffer.getvalue()), tmp_path / "node3" / STORE)
    assert list((tmp_path / "node3" / STORE).iterdir()) == []  # nothing written, nothing left
    with pytest.raises(SnapshotError, match="no digest for a name"):
        unpack(PackedSnapshot("../x", packed.data), tmp_path / "node4" / STORE)


def _tar(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(folder / "0", arcname="0")
    return buffer.getvalue()
