"""Whole tournaments over the real referee, with bots as real processes and a real database.

One small tournament (heuristic against random, table of six, 6 deals) is played once
uninterrupted, shared by every test here even across pytest-xdist workers; a second copy is
killed with SIGKILL midway, resumed, and must end with exactly the same results.
"""

from __future__ import annotations

import csv
import fcntl
import io
import json
import os
import signal
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest

from hearts_tournaments.tournament.report import CSV_COLUMNS
from tests.helpers.cli import hearts, start_hearts
from tests.helpers.shared import CAREFUL_AND_DICE

# Timing never decides anything here (decision_ms is far above what the bots need), so the
# same config plays the same games every time: the condition for comparing two runs.
CONFIG = (
    """
[tournament]
name = "resumable"
table_size = 6
deals = 6
duplicate = false
seed = "kill-test"
target_score = 40
concurrency = 2
decision_ms = 10000
join_timeout_ms = 60000
"""
    + CAREFUL_AND_DICE
)
GAMES = 6
#: The deal secret of both runs compared: the same secret and config give the same deals.
DEAL_SECRET = "5eed" * 16
#: Generous: the suite shares two loaded cores.
RUN_TIMEOUT_S = 900
#: A whole tournament (the shared fixture) and a killed one resumed twice: up to three runs.
pytestmark = pytest.mark.timeout(3 * RUN_TIMEOUT_S)


@contextmanager
def locked(path: Path) -> Iterator[None]:
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """The tournament played from start to end once (xdist workers share it through a lock)."""
    base = tmp_path_factory.getbasetemp()
    root = base if worker_id == "master" else base.parent
    folder = root / "uninterrupted"
    with locked(root / "uninterrupted.lock"):
        if not (folder / "stdout.txt").exists():
            config = root / "resumable.toml"
            config.write_text(CONFIG)
            result = hearts(
                "tournament",
                "run",
                str(config),
                "--output",
                str(folder),
                "--fresh",
                "--deal-secret-file",
                str(secret_file(root)),
                timeout=RUN_TIMEOUT_S,
            )
            assert result.returncode == 0, result.stderr
            (folder / "stderr.txt").write_text(result.stderr)
            (folder / "stdout.txt").write_text(result.stdout)
    return folder


def secret_file(folder: Path) -> Path:
    path = folder / "deal.secret"
    path.write_text(DEAL_SECRET)
    return path


def report(folder: Path, fmt: str = "json") -> str:
    result = hearts("tournament", "report", str(folder), "--format", fmt)
    assert result.returncode == 0, result.stderr
    return result.stdout


def report_json(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(report(folder))
    return data


def stored_keys(folder: Path) -> list[str]:
    """Keys of the games in the database, as another process sees them while it runs."""
    path = folder / "tournament.sqlite"
    if not path.exists():
        return []
    try:
        with closing(sqlite3.connect(path, timeout=10)) as db:
            return [row[0] for row in db.execute("SELECT key FROM games ORDER BY seq")]
    except sqlite3.OperationalError:  # created but not yet holding its tables
        return []


def test_heuristic_ranks_above_random_with_intervals_that_do_not_overlap(uninterrupted: Path) -> None:
    standings = report_json(uninterrupted)["standings"]
    assert [s["bot"] for s in standings] == ["careful", "dice"]
    careful, dice = standings
    assert careful["mean_place_ci95"][1] < dice["mean_place_ci95"][0]
    assert careful["mean_place_ci95"][0] <= careful["mean_place"] <= careful["mean_place_ci95"][1]
    assert careful["games"] == dice["games"] == GAMES
    assert careful["seats"] == dice["seats"] == 3 * GAMES


def test_the_run_prints_the_table_and_stores_everything(uninterrupted: Path) -> None:
    stdout = (uninterrupted / "stdout.txt").read_text()
    assert "standings" in stdout and "careful" in stdout and "Head-to-head" in stdout
    assert f"{GAMES} of {GAMES} games played" in stdout
    stderr = (uninterrupted / "stderr.txt").read_text()
    assert "schedule: " in stderr and "balanced within one" in stderr
    with closing(sqlite3.connect(uninterrupted / "tournament.sqlite")) as db:
        meta = dict(db.execute("SELECT key, value FROM meta"))
        assert meta["config_toml"] == CONFIG
        assert "within_one" in json.loads(meta["balance"])
        assert db.execute("SELECT COUNT(*) FROM schedule").fetchone()[0] == GAMES
        records = [json.loads(r) for (r,) in db.execute("SELECT record FROM games")]
    assert sorted(r["label"] for r in records) == [f"resumable/d{d:03d}" for d in range(GAMES)]
    assert all(r["faults"] == [] for r in records)
    assert len(list((uninterrupted / "records").glob("*.json"))) == GAMES
    assert {p.name for p in (uninterrupted / "logs").iterdir()} == {"careful", "dice"}


def test_the_report_comes_as_json_csv_markdown_and_a_table(uninterrupted: Path) -> None:
    data = report_json(uninterrupted)
    assert data["schema_version"] == 2
    assert [s["rank"] for s in data["standings"]] == [1, 2]
    assert data["tournament"]["games_played"] == data["tournament"]["games_total"] == GAMES
    assert data["tournament"]["complete"] is True
    line = data["standings"][0]
    for key in ("wins", "points_per_hand", "points_per_hand_ci95", "mean_score", "strength", "faults"):
        assert key in line
    (pair,) = data["paired"]
    assert (pair["a"], pair["b"], pair["deals"]) == ("careful", "dice", GAMES)
    assert pair["separated"] is True and pair["mean_place_difference"] < 0
    assert sum(s["wins"] for s in data["standings"]) == pytest.approx(GAMES)
    h2h = data["head_to_head"]
    assert h2h["careful"]["dice"]["games"] == GAMES
    assert h2h["careful"]["dice"]["share"] + h2h["dice"]["careful"]["share"] == pytest.approx(1)
    assert h2h["careful"]["dice"]["share"] > 0.5
    rows = list(csv.reader(io.StringIO(report(uninterrupted, "csv"))))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert [r[1] for r in rows[1:]] == ["careful", "dice"]
    markdown = report(uninterrupted, "markdown")
    assert "| 1 | careful |" in markdown and "| careful | · |" in markdown
    table = report(uninterrupted, "table")
    assert "careful" in table and "mean place" in table


def test_a_tournament_killed_midway_resumes_to_exactly_the_uninterrupted_results(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    config = tmp_path / "resumable.toml"
    config.write_text(CONFIG)
    folder = tmp_path / "out"
    with (tmp_path / "killed.log").open("wb") as log:
        process = start_hearts(
            "tournament", "run", str(config), "--output", str(folder),
            "--deal-secret-file", str(secret_file(tmp_path)), stdout=log, stderr=log,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + RUN_TIMEOUT_S
            while len(stored_keys(folder)) < 2:
                assert process.poll() is None, (tmp_path / "killed.log").read_text()
                assert time.monotonic() < deadline, "no progress"
                time.sleep(0.05)
        finally:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    before = stored_keys(folder)
    assert 2 <= len(before) < GAMES

    resumed = hearts("tournament", "resume", str(folder), timeout=RUN_TIMEOUT_S)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming: {len(before)} of {GAMES} games already played" in resumed.stderr
    after = stored_keys(folder)
    assert after[: len(before)] == before  # nothing lost, nothing replaced
    assert sorted(after) == [f"d{d:03d}" for d in range(GAMES)]  # every game exactly once
    # Asked for only now, so that another worker can play it while this one kills and resumes.
    uninterrupted: Path = request.getfixturevalue("uninterrupted")
    assert report_json(folder) == report_json(uninterrupted)
    verified = hearts("tournament", "verify", str(folder))
    assert verified.returncode == 0, verified.stdout
    # Resuming a finished tournament plays nothing and prints the same standings.
    again = hearts("tournament", "resume", str(folder), timeout=RUN_TIMEOUT_S)
    assert again.returncode == 0 and stored_keys(folder) == after
    assert f"{GAMES} of {GAMES} games played" in again.stdout


def test_running_into_a_folder_that_holds_a_tournament_is_refused(
    uninterrupted: Path, tmp_path: Path
) -> None:
    config = tmp_path / "resumable.toml"
    config.write_text(CONFIG)
    result = hearts("tournament", "run", str(config), "--output", str(uninterrupted))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"hearts: error: {uninterrupted} already holds a tournament")
