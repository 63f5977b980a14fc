"""Tournaments on a real Ray cluster of this machine: same standings as local, and a node lost midway.

The cluster is :func:`tests.helpers.ray_cluster.cluster`: a head and a second node, each a real raylet
with its own worker processes (one CPU each). The tournament mixes built-in bots and a command
bot whose script lives in the config folder, shipped to the nodes by Ray's runtime environment. The fault test
adds a third node, waits until it plays a game (a bwrap sandbox under its raylet) and kills it
with SIGKILL: every game must still be stored exactly once, with the same results as the local
run, and none of the lost node's processes may survive.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.arena.sandbox import process_tree, sample_processes
from hearts_tournaments.results.where import ExecutorKind
from hearts_tournaments.tournament.config import ConfigError, parse_config
from hearts_tournaments.tournament.folder import create_tournament
from hearts_tournaments.tournament.runner import run_tournament
from hearts_tournaments.tournament.store import DB_NAME
from tests.helpers.cli import hearts
from tests.helpers.ray_cluster import (
    MB,
    alive,
    cluster,
    command_name,
    ray_module,
    raylet_pid,
    same_games,
    seat_logs,
)
from tests.helpers.shared import CAREFUL_AND_DICE

__all__ = ["cluster", "ray_module"]  # fixtures

#: Timing never decides anything (every limit is the referee's largest, far above what the bots
#: need on the most loaded machine; a 60 s time bank was spent once under CI's load): the same config
#: and deal secret play the same games on any executor.
CONFIG = (
    """
[tournament]
name = "raytest"
table_size = 6
deals = 6
duplicate = false
seed = "ray-test"
target_score = 40
concurrency = 2
decision_ms = 600000
time_bank_ms = 86400000
join_timeout_ms = 600000
"""
    + CAREFUL_AND_DICE
    + """
[[bots]]
name = "shipped"
command = [{python}, "bots/shipped.py"]
"""
)
#: A command bot in the config folder: the heuristic bot, reached through its own script.
SHIPPED_BOT = """
import os
import sys

from hearts_tournaments.arena.builtin_bot import main

sys.exit(main(["heuristic", *sys.argv[1:], "--seed", os.environ["HEARTS_SEED"], "--name", "shipped"]))
"""
GAMES = 6
DEAL_SECRET = bytes.fromhex("7a11" * 16)
pytestmark = pytest.mark.timeout(1200)


def config_folder(root: Path) -> Path:
    """A tournament folder: the config and the shipped bot's script (the output goes elsewhere)."""
    folder = root / "config"
    (folder / "bots").mkdir(parents=True)
    (folder / "bots" / "shipped.py").write_text(SHIPPED_BOT)
    (folder / "tournament.toml").write_text(CONFIG.format(python=json.dumps(sys.executable)))
    return folder


def play(
    root: Path, executor: ExecutorKind, concurrency: int = 2, ray_address: str = ""
) -> dict[str, tuple[Any, ...]]:
    """Plays the tournament in ``root`` and returns each stored game's result by key."""
    folder = config_folder(root)
    text = (folder / "tournament.toml").read_text()
    config = parse_config(text, folder, default_name="raytest")
    tournament = create_tournament(config, text, root / "out", deal_secret=DEAL_SECRET)
    with tournament.store:
        run_tournament(tournament, concurrency, executor=executor, ray_address=ray_address)
        return results(tournament.store.outcomes(records=False))


def results(outcomes: list[GameOutcome]) -> dict[str, tuple[Any, ...]]:
    """What must not depend on where a game was played (not its random game id)."""
    return {
        o.key: (o.seats, o.totals, o.places, o.winners, o.hands, o.faults, o.retired, o.crashed)
        for o in outcomes
    }


def stored_games(output: Path) -> int:
    """Games committed so far, read as another process would."""
    path = output / DB_NAME
    if not path.exists():
        return 0
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)) as db:
            return int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


@pytest.fixture(scope="module")
def local_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, ...]]:
    """The tournament played by the local executor: the reference."""
    played = play(tmp_path_factory.mktemp("local"), ExecutorKind.LOCAL)
    assert len(played) == GAMES
    return played


def test_ray_plays_the_same_games_as_local(
    cluster: Any, local_results: dict[str, tuple[Any, ...]], tmp_path: Path
) -> None:
    played = play(tmp_path, ExecutorKind.RAY, ray_address=cluster.address)
    assert same_games(played, local_results) == {}
    # The driver wrote the bots' logs the nodes sent back, the shipped bot's included.
    logs = tmp_path / "out" / "logs"
    assert seat_logs(logs / "shipped") == sum(seats.count("shipped") for seats, *_ in played.values())
    assert (logs.stat().st_mode & 0o777) == 0o700


def test_a_node_killed_midway_loses_no_game_and_counts_none_twice(
    cluster: Any, local_results: dict[str, tuple[Any, ...]], tmp_path: Path
) -> None:
    victim = cluster.add_node(num_cpus=1, object_store_memory=80 * MB)
    cluster.wait_for_nodes()
    raylet = raylet_pid(victim)
    doomed: list[int] = []
    sandboxes: list[int] = []
    stop = threading.Event()

    def kill_when_busy() -> None:
        # Once a game is stored and the victim plays one (a sandbox under its raylet), SIGKILL
        # the victim's raylet and every process of the node.
        while not stop.is_set():
            tree = process_tree(raylet, sample_processes())
            bwraps = [p.pid for p in tree if command_name(p.pid) == "bwrap"]
            if bwraps and stored_games(tmp_path / "out") >= 1:
                doomed.extend(p.pid for p in tree)
                sandboxes.extend(bwraps)
                cluster.remove_node(victim, allow_graceful=False)
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_when_busy, daemon=True)
    killer.start()
    try:
        played = play(tmp_path, ExecutorKind.RAY, concurrency=3, ray_address=cluster.address)
    finally:
        stop.set()
        killer.join(60)
    assert sandboxes, "the victim node never played a game before the tournament ended"
    assert same_games(played, local_results) == {}  # every game stored once, with the uninterrupted results
    assert stored_games(tmp_path / "out") == GAMES
    deadline = time.monotonic() + 30
    while any(alive(pid) for pid in doomed) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [pid for pid in doomed if alive(pid)] == []


def test_no_bot_outlives_its_game_on_the_nodes(cluster: Any, tmp_path: Path) -> None:
    play(tmp_path, ExecutorKind.RAY, ray_address=cluster.address)
    raylets = [raylet_pid(node) for node in [cluster.head_node, *cluster.worker_nodes]]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        left = [
            p.pid
            for raylet in raylets
            for p in process_tree(raylet, sample_processes())
            if command_name(p.pid) == "bwrap"
        ]
        if not left:
            break
        time.sleep(0.2)
    assert left == []


def test_sigterm_stops_a_ray_run_and_resume_finishes_it(
    cluster: Any, local_results: dict[str, tuple[Any, ...]], tmp_path: Path
) -> None:
    folder = config_folder(tmp_path)
    secret = tmp_path / "secret"
    secret.write_text(DEAL_SECRET.hex())
    secret.chmod(0o600)
    output = tmp_path / "out"
    args = ["--executor", "ray", "--ray-address", cluster.address, "--progress", "never"]
    process = subprocess.Popen(
        [sys.executable, "-m", "hearts_tournaments", "tournament", "run", str(folder / "tournament.toml"),
         "-o", str(output), "--deal-secret-file", str(secret), *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 600
        while stored_games(output) < 1 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 143, stderr[-2000:]
    assert "terminated; continue with `hearts tournament resume" in stderr
    assert 1 <= stored_games(output) < GAMES
    resumed = hearts("tournament", "resume", str(output), *args, timeout=900)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    with closing(sqlite3.connect(output / DB_NAME)) as db:
        rows = db.execute("SELECT key, summary FROM games").fetchall()
    assert len(rows) == GAMES == len({key for key, _ in rows})
    totals = {key: tuple(json.loads(summary)["totals"]) for key, summary in rows}
    assert totals == {key: result[1] for key, result in local_results.items()}


# ---------------------------------------------------------------- configuration, no cluster
def test_the_executor_keys_read_and_default_to_local() -> None:
    base = CONFIG.format(python='"python3"')
    assert parse_config(base, Path(".")).executor is ExecutorKind.LOCAL
    config = parse_config(base.replace("[tournament]\n", '[tournament]\nexecutor = "ray"\n'), Path("."))
    assert config.executor is ExecutorKind.RAY and config.ray_address == ""
    config = parse_config(
        base.replace("[tournament]\n", '[tournament]\nexecutor = "ray"\nray_address = "10.0.0.5:6379"\n'),
        Path("."),
    )
    assert config.ray_address == "10.0.0.5:6379"


@pytest.mark.parametrize(
    ("lines", "key", "message"),
    [
        ('executor = "dask"', "tournament.executor", 'must be "local" or "ray"'),
        ("executor = 3", "tournament.executor", 'must be "local" or "ray"'),
        ('ray_address = "nowhere"', "tournament.ray_address", 'must be "host:port"'),
        ('executor = "ray"\nserver = "127.0.0.1:5000"', "tournament.server", "each Ray node starts"),
    ],
)
def test_bad_executor_settings_are_one_clear_error(lines: str, key: str, message: str) -> None:
    base = CONFIG.format(python='"python3"')
    with pytest.raises(ConfigError) as caught:
        parse_config(base.replace("[tournament]\n", f"[tournament]\n{lines}\n"), Path("."))
    assert caught.value.key == key and message in str(caught.value)


def test_a_bad_ray_address_flag_is_one_line(tmp_path: Path) -> None:
    folder = config_folder(tmp_path)
    result = hearts(
        "tournament", "run", str(folder / "tournament.toml"), "-o", str(tmp_path / "out"),
        "--executor", "ray", "--ray-address", "no port", "--progress", "never",
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        'hearts: error: --ray-address must be "host:port" of the Ray head, or "auto", not \'no port\''
    )
    assert "Traceback" not in result.stderr


def test_without_ray_the_ray_executor_says_how_to_install_it(tmp_path: Path) -> None:
    folder = config_folder(tmp_path)
    # The real CLI in a Python where `import ray` fails, as on a machine without the extra.
    code = (
        "import sys; sys.modules['ray'] = None; sys.argv = ['hearts'] + sys.argv[1:]; "
        "from hearts_tournaments.cli.main import main; main()"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, "tournament", "run", str(folder / "tournament.toml"),
         "-o", str(tmp_path / "out"), "--executor", "ray", "--progress", "never"],
        capture_output=True, text=True, timeout=120, check=False, env={**os.environ, "RAY_ADDRESS": ""},
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert "pip install 'cancellation-hearts[ray]'" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_unreachable_ray_head_is_one_line_at_once(tmp_path: Path) -> None:
    folder = config_folder(tmp_path)
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = hearts(
        "tournament", "run", str(folder / "tournament.toml"), "-o", str(tmp_path / "out"),
        "--executor", "ray", "--ray-address", f"127.0.0.1:{port}", "--progress", "never",
        timeout=60,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert f"the Ray head at 127.0.0.1:{port} does not answer" in result.stderr.splitlines()[-1]
    assert "Traceback" not in result.stderr


#: A command bot that exits at once, before it joins: each of its seats is an incident.
QUITTER = """
import sys

print("quitter: no strategy today", file=sys.stderr)
sys.exit(3)
"""


def test_an_entrant_failing_on_a_node_is_told_to_the_organiser(cluster: Any, tmp_path: Path) -> None:
    """The node's arena tells which entrant failed in which game, with its log, as a local run
    does; the line names the log where the driver wrote it."""
    folder = config_folder(tmp_path)
    (folder / "bots" / "quitter.py").write_text(QUITTER)
    config = folder / "tournament.toml"
    text = config.read_text().replace("deals = 6", "deals = 1")
    config.write_text(
        text + f'\n[[bots]]\nname = "quitter"\ncommand = [{json.dumps(sys.executable)}, "bots/quitter.py"]\n'
    )
    output = tmp_path / "out"
    result = hearts(
        "tournament", "run", str(config), "-o", str(output), "--allow-broken", "--progress", "never",
        "--executor", "ray", "--ray-address", cluster.address, timeout=900,
    )  # fmt: skip
    assert result.returncode == 3, result.stderr[-3000:]  # played; the quitter failed its games
    told = [line for line in result.stderr.splitlines() if line.startswith("entrant 'quitter' in game")]
    assert told, result.stderr[-3000:]
    for line in told:
        assert "exited with status 3" in line and "quitter: no strategy today" in line, line
        log_path = Path(line.rpartition("; log: ")[2])
        assert log_path.parent == output / "logs" / "quitter", line
        assert "no strategy today" in log_path.read_text()
