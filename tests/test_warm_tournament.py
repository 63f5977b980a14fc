"""Warm bots in a whole tournament: every language's example bot, reused between deals.

The same duplicate tournament is played with ``reuse = "between_deals"`` and ``reuse = "never"``
from the same deal secret. With warm bots no process may see a deal twice, no game may be lost,
processes must really be reused, none may outlive the runner, and the standings must be those
of fresh processes (the example bots are deterministic; the seeded random bot reseeds from each
game's ``bot_seed``).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections import defaultdict
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, hearts
from tests.test_language_bots import TOOLCHAINS, require_toolchain

LANGUAGES = sorted(TOOLCHAINS)
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
