"""Warm bots in a whole tournament: every language's example bot, reused between deals.

The same duplicate tournament is played with ``reuse = "between_deals"`` and ``reuse = "never"``
from the same deal secret. With warm bots no process may see a deal twice, no game may be lost,
processes must really be reused, none may outlive the runner, and the standings must be those
of fresh processes (the example bots are deterministic; the seeded random bot reseeds from each
game's ``bot_seed``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import time
from collections import defaultdict
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.helpers.cli import hearts, start_hearts
from tests.helpers.toolchains import LANGUAGES, require_toolchain
from tests.test_tournament_run import CONFIG as RESUMABLE
from tests.test_tournament_run import GAMES as RESUMABLE_GAMES
from tests.test_tournament_run import RUN_TIMEOUT_S, report_json, secret_file, stored_keys

DEALS = 3
#: Every bot at every table, so that every bot's processes can be reused between deals.
TABLE = 2 + len(LANGUAGES)
#: Each deal in every rotation of its table.
GAMES = DEALS * TABLE
DEAL_SECRET = "3a4b" * 16


def _config(folder: Path, reuse: str) -> Path:
    bots = "\n".join(
        f'[[bots]]\nname = "{language}"\ncommand = ["{ROOT / "clients" / language / "bot"}"]\n'
        f'files = "{ROOT / "clients" / language}"\n'
        for language in LANGUAGES
    )
    config = folder / f"{reuse}.toml"
    config.write_text(
        f"""[tournament]
name = "warm-{reuse}"
table_size = {TABLE}
deals = {DEALS}
seed = 13
concurrency = 2
target_score = 30
decision_ms = 10000
join_timeout_ms = 120000
reuse = "{reuse}"
restart_after = 2
output = "{folder / reuse}"

[[bots]]
name = "python"
builtin = "heuristic"

[[bots]]
name = "dice"
builtin = "random"

{bots}"""
    )
    return config


def _run(tmp_path: Path, reuse: str) -> dict[str, Any]:
    secret = tmp_path / "deal.secret"
    secret.write_text(DEAL_SECRET)
    run = hearts(
        "tournament",
        "run",
        str(_config(tmp_path, reuse)),
        "--progress",
        "never",
        "--deal-secret-file",
        str(secret),
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    report = hearts("tournament", "report", str(tmp_path / reuse), "--format", "json")
    assert report.returncode == 0, report.stderr
    data: dict[str, Any] = json.loads(report.stdout)
    return data


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process now holds the pid
        return False
    return True


@pytest.mark.timeout(2400)  # two tournaments of up to 900 s each on a loaded machine
def test_warm_bots_of_every_language_never_see_a_deal_twice_and_rank_as_fresh_ones(tmp_path: Path) -> None:
    for language in LANGUAGES:
        require_toolchain(language)
    warm = _run(tmp_path, "between_deals")
    cold = _run(tmp_path, "never")

    seated = [
        json.loads(line) for line in (tmp_path / "between_deals" / "processes.jsonl").read_text().splitlines()
    ]
    deals_of: dict[int, list[int]] = defaultdict(list)
    for entry in seated:
        assert entry["serial"] is not None
        deals_of[entry["serial"]].append(entry["deal"])
    for serial, deals in deals_of.items():
        assert len(deals) == len(set(deals)), f"process {serial} played a deal twice: {deals}"
        assert len(deals) <= 2  # restart_after
    bots_seen = {entry["bot"] for entry in seated}
    assert bots_seen == {"python", "dice", *LANGUAGES}
    # Reuse really happened, for every bot, compiled and interpreted alike.
    for bot in bots_seen:
        serials = {e["serial"] for e in seated if e["bot"] == bot}
        assert len(serials) < len([e for e in seated if e["bot"] == bot]), bot
    assert not [e["pid"] for e in seated if _alive(e["pid"])]  # none outlived the runner

    # Nothing lost: every game stored once, each of its seats played by a process of its bot.
    with closing(sqlite3.connect(tmp_path / "between_deals" / "tournament.sqlite")) as db:
        stored = [row[0] for row in db.execute("SELECT key FROM games ORDER BY seq")]
    assert len(stored) == len(set(stored)) == GAMES
    assert sorted((e["key"], e["seat"]) for e in seated) == sorted(
        (key, seat) for key in stored for seat in range(TABLE)
    )
    for entry in warm["standings"]:
        assert entry["faults"] == 0, entry
    # The same standings as fresh processes per game.
    assert warm["standings"] == cold["standings"]

    cold_seated = [
        json.loads(line) for line in (tmp_path / "never" / "processes.jsonl").read_text().splitlines()
    ]
    assert len({e["pid"] for e in cold_seated}) == GAMES * TABLE  # one process per seat per game
    assert all(e["serial"] is None for e in cold_seated)


def _descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (from /proc)."""
    children: dict[int, list[int]] = defaultdict(list)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children[int(fields[1])].append(int(entry.name))
    out: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


@pytest.mark.timeout(3 * RUN_TIMEOUT_S)
def test_kill_9_of_the_runner_with_warm_bots_leaves_no_bot_and_resumes_to_the_same_standings(
    tmp_path: Path,
) -> None:
    config = tmp_path / "resumable.toml"
    config.write_text(RESUMABLE.replace("[tournament]\n", '[tournament]\nreuse = "between_deals"\n'))
    folder = tmp_path / "out"
    with (tmp_path / "killed.log").open("wb") as log:
        runner = start_hearts(
            "tournament", "run", str(config), "--output", str(folder),
            "--deal-secret-file", str(secret_file(tmp_path)), stdout=log, stderr=log,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + RUN_TIMEOUT_S
            while len(stored_keys(folder)) < 2:
                assert runner.poll() is None, (tmp_path / "killed.log").read_text()
                assert time.monotonic() < deadline, "no progress"
                time.sleep(0.05)
            bots = _descendants(runner.pid)
            assert bots, "warm bots are running"
            runner.kill()  # the runner alone: its bots must not outlive it
            runner.wait()
            deadline = time.monotonic() + 30
            while (left := {pid for pid in bots if _alive(pid)}) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not left, f"bot processes outlived the runner: {sorted(left)}"
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(runner.pid, signal.SIGKILL)
    before = stored_keys(folder)
    resumed = hearts("tournament", "resume", str(folder), timeout=RUN_TIMEOUT_S)
    assert resumed.returncode == 0, resumed.stderr
    after = stored_keys(folder)
    assert after[: len(before)] == before and len(after) == len(set(after)) == RESUMABLE_GAMES
    # The same tournament uninterrupted, with a fresh process per seat per game.
    cold = tmp_path / "never.toml"
    cold.write_text(RESUMABLE.replace("[tournament]\n", '[tournament]\nreuse = "never"\n'))
    played = hearts(
        "tournament", "run", str(cold), "--output", str(tmp_path / "never"), "--progress", "never",
        "--deal-secret-file", str(secret_file(tmp_path)), timeout=RUN_TIMEOUT_S,
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    assert report_json(folder)["standings"] == report_json(tmp_path / "never")["standings"]
