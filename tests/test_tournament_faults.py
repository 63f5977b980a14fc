"""Bots that crash at start, cannot be started, or hang never stop a tournament."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.helpers.cli import hearts
from tests.helpers.shared import HANG_BOT


def test_crashing_missing_and_hanging_bots_are_played_for_and_quarantined(tmp_path: Path) -> None:
    (tmp_path / "hang_bot.py").write_text(HANG_BOT)
    python = json.dumps(sys.executable)
    config = tmp_path / "faulty.toml"
    config.write_text(
        f"""
[tournament]
name = "faulty"
table_size = 6
deals = 1
seed = 3
target_score = 30
concurrency = 2
decision_ms = 1000
max_faults = 2
join_timeout_ms = 30000
quarantine_after = 2

[[bots]]
name = "careful"
builtin = "heuristic"

[[bots]]
name = "crasher"
command = [{python}, "-c", "import sys; sys.exit(1)"]

[[bots]]
name = "missing"
command = ["./no_such_bot"]

[[bots]]
name = "hanger"
command = [{python}, "hang_bot.py"]   # relative: runs in this file's folder
"""
    )
    folder = tmp_path / "out"
    refused = hearts("tournament", "run", str(config), "--output", str(folder), timeout=900)
    assert refused.returncode == 2, refused.stderr  # the pre-flight check names all three
    for bot in ("crasher", "missing", "hanger"):
        assert f"entrant {bot!r} cannot play" in refused.stderr
    assert "exited with status 1" in refused.stderr
    result = hearts("tournament", "run", str(config), "--output", str(folder), "--allow-broken", timeout=900)
    assert result.returncode == 3, result.stderr  # finished, but entrants failed
    for bot in ("crasher", "missing", "hanger"):
        assert f"{bot} is quarantined after" in result.stderr
    assert "quarantined" in result.stdout

    report = json.loads(hearts("tournament", "report", str(folder), "--format", "json").stdout)
    assert report["tournament"]["complete"] is True
    lines = {s["bot"]: s for s in report["standings"]}
    assert {q["bot"] for q in report["quarantined"]} == {"crasher", "missing", "hanger"}
    for bot in ("crasher", "missing", "hanger"):
        line = lines[bot]
        assert line["quarantined"] is True
        assert line["games"] == 6  # never dropped: the referee played its seats
        assert line["faults"] >= 6 * 2 and line["failed_games"] == 6
    assert lines["careful"]["quarantined"] is False
    # The hanging bot was stopped, and the missing command explained, in their own logs.
    assert any("no_such_bot" in p.read_text() for p in (folder / "logs" / "missing").iterdir())
    assert len(list((folder / "logs" / "hanger").iterdir())) >= 2
