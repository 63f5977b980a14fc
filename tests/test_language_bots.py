"""Example bots in Go, Rust, Java, TypeScript and C++ play full games through the real server.

Each bot runs as its own process from its roster command ``clients/<language>/bot``, at a table
with Python bots; the game must complete, its record must verify with ``hearts replay``, and the
example bot must commit no fault. A missing toolchain skips that language with a line naming
what is missing (under ``CI=true`` the conftest turns that skip into a failure).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, hearts
from tests.harness import await_table, create_table, running_server, sdk_bot

TOOLCHAINS = {
    "go": ["go"],
    "rust": ["cargo"],
    "java": ["java", "mvn"],
    "typescript": ["node", "npm"],
    "cpp": ["g++", "cmake"],
}


def require_toolchain(language: str) -> None:
    missing = [tool for tool in TOOLCHAINS[language] if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{language} bot needs {', '.join(missing)} on PATH")


@pytest.mark.timeout(900)  # the first run builds the bot
@pytest.mark.parametrize("language", sorted(TOOLCHAINS))
def test_example_bot_plays_a_fault_free_game(language: str, tmp_path: Path) -> None:
    require_toolchain(language)
    command = ROOT / "clients" / language / "bot"
    assert command.exists(), f"{command} is missing"
    seat_of_bot = 3

    async def scenario() -> tuple[dict[str, Any], int]:
        async with running_server(tmp_path / "games") as server:
            names = ["heuristic", "random", "heuristic", f"{language}-example", "random", "heuristic"]
            table = await create_table(
                server.address, names, seed=f"lang-{language}", target_score=60, join_timeout_ms=300_000
            )
            python_bots = [
                sdk_bot(server.address, s.token, names[s.seat], str(s.seat))
                for s in table.seats
                if s.seat != seat_of_bot
            ]
            log = (tmp_path / f"{language}.log").open("wb")
            process = subprocess.Popen(
                [str(command), "--server", server.address, "--token", table.seats[seat_of_bot].token],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=tmp_path,
            )
            result = await await_table(server.address, table.table_id)
            await asyncio.gather(*python_bots)
            code = await asyncio.to_thread(process.wait, 120)
            (game,) = result.games
            return json.loads(game.record_json), code

    record, exit_code = asyncio.run(scenario())
    log_text = (tmp_path / f"{language}.log").read_text(errors="replace")[-3000:]
    assert exit_code == 0, log_text
    assert [f for f in record["faults"] if f["seat"] == seat_of_bot] == [], log_text
    assert record["result"]["faults"][seat_of_bot] == 0
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record))
    replayed = hearts("replay", str(path))
    assert replayed.returncode == 0, replayed.stderr
    outcome = json.loads(replayed.stdout)
    assert outcome["error"] is None and outcome["game_over"] is True
