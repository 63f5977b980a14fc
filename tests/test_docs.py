"""The documentation's examples work exactly as written."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT
from tests.helpers.harness import await_table, create_table, running_server, sdk_bot


def python_blocks(doc: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.S)


def test_the_bot_in_writing_a_bot_plays_a_clean_game(tmp_path: Path) -> None:
    (code,) = python_blocks(ROOT / "docs" / "WRITING_A_BOT.md")
    assert len(code.strip().splitlines()) < 30
    script = tmp_path / "my_bot.py"
    script.write_text(code)

    async def scenario() -> dict[str, object]:
        async with running_server(tmp_path / "games") as server:
            names = ["ducker", "heuristic", "random", "heuristic", "random", "heuristic"]
            table = await create_table(server.address, names, seed="docs", target_score=60)
            others = [sdk_bot(server.address, s.token, names[s.seat], str(s.seat)) for s in table.seats[1:]]
            process = subprocess.Popen(
                [sys.executable, str(script), "--server", server.address, "--token", table.seats[0].token],
                stderr=(tmp_path / "bot.log").open("wb"),
            )
            result = await await_table(server.address, table.table_id)
            await asyncio.gather(*others)
            assert await asyncio.to_thread(process.wait, 60) == 0
            record: dict[str, object] = json.loads(result.games[0].record_json)
            return record

    record = asyncio.run(scenario())
    assert record["faults"] == []


def test_the_bot_script_explains_a_missing_token(tmp_path: Path) -> None:
    (code,) = python_blocks(ROOT / "docs" / "WRITING_A_BOT.md")
    script = tmp_path / "my_bot.py"
    script.write_text(code)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=False)
    assert result.returncode == 2 and "a seat token is needed" in result.stderr
