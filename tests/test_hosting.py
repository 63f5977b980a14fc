"""``hearts host`` in-process: its table is made and awaited through the admin API."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from hearts_tournaments.hosting import HostOptions, host_games
from hearts_tournaments.sandbox import SandboxKind


def test_host_games_creates_and_awaits_its_table_over_the_admin_api(tmp_path: Path) -> None:
    lines: list[str] = []
    options = HostOptions(
        seats=("heuristic", "random", "random", "heuristic", "random", "random"),
        games=2,
        seed="hosted",
        out=tmp_path / "games",
        target_score=30,
        sandbox=SandboxKind.NONE,
    )
    results = asyncio.run(asyncio.wait_for(host_games(options, lines.append), 240))
    (invitation,) = map(json.loads, lines)
    assert invitation["seats"] == [] and invitation["table_id"]
    assert len(results) == 2
    for game in results:
        record = json.loads(Path(game["record"]).read_text())
        # The label is the one host_games gives in its CreateTable request.
        assert record["label"] == "hearts host" and record["table_id"] == invitation["table_id"]
        assert record["result"]["totals"] == game["totals"]
        assert game["faults"] == [0] * 6 and game["bot_errors"] == [0] * 6
