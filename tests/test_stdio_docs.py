"""docs/PROTOCOL.md "stdin/stdout bots": its example exchange is what the bridge really says, and
every key the bridge sends is documented there."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

from hearts_client.stdio_bridge import bot_environment, run_bridge, start_process
from tests.conftest import ROOT
from tests.helpers.harness import await_table, create_table, running_server, sdk_bot

DOC = ROOT / "docs" / "PROTOCOL.md"
NAMES = ["mine", "heuristic", "random", "heuristic", "random", "heuristic"]
#: Depend on the machine's speed or are drawn by the referee, not on the game.
VARYING = ("time_left_ms", "time_bank_ms", "game_id")
#: The bot of the example: highest three passed, lowest legal played, and once (from the second
#: trick on) an illegal card first, to show a rejection. It logs every line both ways.
EXAMPLE_BOT = """
import json, sys
RANKS = "23456789TJQKA"
rank = lambda card: RANKS.index(card[0])
tried = False
with open(sys.argv[1], "w") as log:
    for line in sys.stdin:
        log.write("IN " + line)
        m = json.loads(line)
        if m["type"] == "rejected":
            answer = {"id": m["id"], "play": min(legal, key=rank)}
        elif m["type"] == "decide":
            if m["kind"] == "pass":
                answer = {"id": m["id"], "pass": sorted(m["view"]["hand"], key=rank)[-3:]}
            elif m["kind"] == "play":
                legal = m["legal"]
                illegal = [c for c in m["view"]["hand"] if c not in legal]
                if illegal and not tried and m["view"]["tricks"]:
                    tried = True
                    answer = {"id": m["id"], "play": illegal[-1]}
                else:
                    answer = {"id": m["id"], "play": min(legal, key=rank)}
            else:
                answer = {"id": m["id"], "moon": "self_minus_26"}
        else:
            continue
        log.write("OUT " + json.dumps(answer) + "\\n")
        log.flush()
        print(json.dumps(answer), flush=True)
"""


def _section() -> str:
    text = DOC.read_text()
    start = text.index("\n## stdin/stdout bots")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def _untimed(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k not in VARYING}


def _exchange(tmp_path: Path) -> list[dict[str, Any]]:
    """The example game, played again: every line to and from the bot, in order."""
    script = tmp_path / "example_bot.py"
    script.write_text(EXAMPLE_BOT)
    log = tmp_path / "exchange.txt"

    async def scenario() -> None:
        async with running_server(tmp_path / "records") as server:
            table = await create_table(
                server.address, NAMES, seed="docs", target_score=60, decision_time_ms=1000
            )
            others = [sdk_bot(server.address, s.token, NAMES[s.seat], str(s.seat)) for s in table.seats[1:]]
            process, pipes = await start_process(
                [sys.executable, str(script), str(log)], env=bot_environment()
            )
            try:
                bridge = asyncio.create_task(
                    run_bridge(pipes, server.address, table.seats[0].token, name="mine")
                )
                await await_table(server.address, table.table_id)
                await asyncio.wait_for(bridge, 60)
                await asyncio.wait_for(asyncio.gather(*others), 60)
            finally:
                await asyncio.wait_for(process.wait(), 60)

    asyncio.run(scenario())
    return [json.loads(line.split(" ", 1)[1]) for line in log.read_text().splitlines()]


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value).union(*(_keys(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_keys(v) for v in value))
    return set()


def test_the_example_exchange_is_what_the_bridge_says_and_every_key_is_documented(tmp_path: Path) -> None:
    section = _section()
    lines = [
        json.loads(line)
        for block in re.findall(r"```jsonl\n(.*?)```", section, flags=re.S)
        for line in block.splitlines()
    ]
    spread = [json.loads(block) for block in re.findall(r"```json\n(.*?)```", section, flags=re.S)]
    assert len(lines) > 15 and len(spread) == 1
    exchange = [_untimed(m) for m in _exchange(tmp_path)]

    # The documented lines appear in the real exchange, in the same order.
    position = 0
    for message in lines:
        position = exchange.index(_untimed(message), position) + 1
    assert _untimed(spread[0]) in exchange

    # Every key the bot was sent, nested ones included, is in the section's tables.
    documented = set(re.findall(r"`([a-z_]+)`", section))
    assert _keys(exchange) - documented == set()
    assert {m["type"] for m in exchange if "type" in m} - documented == set()
