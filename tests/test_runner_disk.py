"""A full disk during a tournament: the runner holds the finished game, says so, and stores it
once there is space again; nothing is lost, and the standings are those of an untroubled run.

"Full" is a real failed write: the runner runs with a file size limit (RLIMIT_FSIZE, SIGXFSZ
ignored, so writes past it fail with EFBIG and SQLite reports a failed write), which the test
lifts from outside (prlimit) once the runner has said it is waiting for space.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.shared import CAREFUL_AND_DICE

DEAL_SECRET = "5f" * 32
CONFIG = (
    """
[tournament]
name = "disk"
table_size = 6
deals = 12
duplicate = false
seed = 4
max_hands = 2
concurrency = 2
decision_ms = 5000
sandbox = "none"
"""
    + CAREFUL_AND_DICE
)
LIMIT_BYTES = 96 * 1024
#: What the runner (and the league) says once while it holds what it cannot store.
HOLDING = "and trying again every"
RUN_TIMEOUT_S = 240


def _command(config: Path, output: Path, secret: Path) -> list[str]:
    return [
        sys.executable, "-m", "hearts_tournaments", "tournament", "run", str(config),
        "--output", str(output), "--deal-secret-file", str(secret),
    ]  # fmt: skip


#: Starts the rest of its argv with a file size limit and SIGXFSZ ignored (inherited across exec).
#: A wrapper process, not a ``preexec_fn``: forking the test process itself (which has grpc's
#: threads) to run Python before exec can abort the child.
LIMITED = """
import os, resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
os.execv(sys.argv[2], sys.argv[2:])
"""


def _limited(command: list[str]) -> list[str]:
    return [sys.executable, "-c", LIMITED, str(LIMIT_BYTES), *command]


def _fill_then_free(command: list[str], log: Path) -> str:
    """Runs ``command`` on a "full disk" (:func:`_limited`) until it says it is holding what it
    could not store, checks it keeps waiting for a few retries, then frees the space (lifts the
    limit from outside) and waits for it to finish normally; returns its output."""
    with log.open("w") as output:
        runner = subprocess.Popen(_limited(command), stdout=output, stderr=output)
        try:
            deadline = time.monotonic() + RUN_TIMEOUT_S
            while HOLDING not in log.read_text() and runner.poll() is None:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
            assert runner.poll() is None, f"it gave up instead of waiting:\n{log.read_text()}"
            time.sleep(3)  # a few retries while the disk stays full: still waiting, nothing lost
            assert runner.poll() is None, log.read_text()
            unlimited = (resource.RLIM_INFINITY, resource.RLIM_INFINITY)
            resource.prlimit(runner.pid, resource.RLIMIT_FSIZE, unlimited)  # space again
            assert runner.wait(RUN_TIMEOUT_S) == 0, log.read_text()
        finally:
            runner.kill()
    text = log.read_text()
    assert "Traceback" not in text, text
    assert "can be written again" in text, text
    return text


def _standings(output: Path) -> list[tuple[str, float]]:
    result = subprocess.run(
        [sys.executable, "-m", "hearts_tournaments", "tournament", "report", str(output), "--format", "json"],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return [(s["bot"], s["mean_place"]) for s in json.loads(result.stdout)["standings"]]


def test_a_full_disk_holds_the_finished_game_until_there_is_space(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text(CONFIG)
    secret = tmp_path / "deal.secret"
    secret.write_text(DEAL_SECRET)
    reference = tmp_path / "reference"
    done = subprocess.run(
        _command(config, reference, secret), capture_output=True, text=True, timeout=RUN_TIMEOUT_S
    )
    assert done.returncode == 0, done.stderr

    output = tmp_path / "full"
    _fill_then_free(_command(config, output, secret), tmp_path / "output.txt")
    assert _standings(output) == _standings(reference)
    verified = subprocess.run(
        [sys.executable, "-m", "hearts_tournaments", "tournament", "verify", str(output)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_resume_writes_the_record_files_the_referee_could_not(tmp_path: Path) -> None:
    # A game whose record file the referee could not write (a full disk) is stored with its record
    # in the database; resuming writes the missing file, and verify then finds everything.
    config = tmp_path / "t.toml"
    config.write_text(CONFIG.replace("deals = 12", "deals = 2"))
    secret = tmp_path / "deal.secret"
    secret.write_text(DEAL_SECRET)
    output = tmp_path / "out"
    done = subprocess.run(
        _command(config, output, secret), capture_output=True, text=True, timeout=RUN_TIMEOUT_S
    )
    assert done.returncode == 0, done.stderr
    victim = sorted((output / "records").glob("*.json"))[0]
    text = victim.read_text()
    victim.unlink()
    resumed = subprocess.run(
        [sys.executable, "-m", "hearts_tournaments", "tournament", "resume", str(output)],
        capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert victim.read_text() == text
    verified = subprocess.run(
        [sys.executable, "-m", "hearts_tournaments", "tournament", "verify", str(output)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_a_league_holds_a_block_on_a_full_disk_until_there_is_space(tmp_path: Path) -> None:
    from hearts_core.defaults import TablePolicy
    from hearts_tournaments.league import commands
    from hearts_tournaments.league.config import LeagueConfig
    from hearts_tournaments.league.store import LeagueStore

    folder = tmp_path / "league"
    config = LeagueConfig(
        table_size=6,
        seed="disk",
        max_hands=2,
        policy=TablePolicy(decision_ms=5000),
        sandbox="none",
        bootstrap=50,
    )  # type: ignore[arg-type]
    with commands.init_league(folder, config, bytes(range(32))) as store:
        for name, bot in (("heur", "heuristic"), ("rnd", "random")):
            commands.add_version(store, commands.make_spec(name, None, bot), update=False)
    command = [sys.executable, "-m", "hearts_tournaments", "league", "run", str(folder), "--blocks=3"]
    _fill_then_free(command, tmp_path / "league.txt")
    with LeagueStore.open(folder) as store:
        rows = store.block_rows()
        assert [r[0] for r in rows] == [0, 1, 2]
        games = store.block_games()
        assert all(len(games[number]) == 6 for number, *_ in rows)
