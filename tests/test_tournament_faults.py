"""Bots that crash at start, cannot be started, or hang never stop a tournament."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

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


#: A bot that dies of SIGSEGV the first three times it starts for a seat of a game (its seed counts
#: them in the folder its first argument names), as grpc's client crashing at start-up on a loaded
#: machine does, twice in a row at times; started a fourth time, it plays as the heuristic bot.
#: Given ``always`` for its folder, it dies every time.
FLAKY_BOT = """
import os
import signal
import sys
from pathlib import Path

from hearts_tournaments.arena.builtin_bot import main

marks, *launch = sys.argv[1:]  # the runner's own arguments follow ours
mark = Path(marks) / os.environ["HEARTS_SEED"][:32]
if marks == "always":
    os.kill(os.getpid(), signal.SIGSEGV)
starts = int(mark.read_text()) if mark.exists() else 0
mark.write_text(str(starts + 1))
if starts < 3:
    os.kill(os.getpid(), signal.SIGSEGV)
sys.exit(main(["heuristic", *launch, "--seed", os.environ["HEARTS_SEED"], "--name", "flaky"]))
"""


@pytest.mark.timeout(900)
@pytest.mark.parametrize("reuse", ["between_deals", "never"])
def test_a_bot_dying_of_a_signal_before_it_joins_is_started_again(tmp_path: Path, reuse: str) -> None:
    """No card is dealt before every seat has joined, so a process that died of a signal before
    joining (a crash at start-up) is started again, up to three times, and the game is played as
    it would have been; a bot that dies a fourth time is the bot's failure, as before."""
    (tmp_path / "flaky_bot.py").write_text(FLAKY_BOT)
    marks = tmp_path / "marks"
    marks.mkdir()
    python = json.dumps(sys.executable)
    config = tmp_path / "flaky.toml"
    config.write_text(
        f"""
[tournament]
name = "flaky"
table_size = 6
deals = 1
seed = 5
target_score = 30
concurrency = 2
reuse = "{reuse}"
sandbox = "none"
decision_ms = 10000
join_timeout_ms = 60000
quarantine_after = 100

[[bots]]
name = "careful"
builtin = "heuristic"

[[bots]]
name = "flaky"
command = [{python}, "flaky_bot.py", "{marks}"]

[[bots]]
name = "doomed"
command = [{python}, "flaky_bot.py", "always"]
"""
    )
    folder = tmp_path / "out"
    result = hearts(
        "tournament", "run", str(config), "--output", str(folder), "--allow-broken",
        timeout=900,
    )  # fmt: skip
    assert result.returncode == 3, result.stderr  # finished; "doomed" failed its games
    report = json.loads(hearts("tournament", "report", str(folder), "--format", "json").stdout)
    lines = {s["bot"]: s for s in report["standings"]}
    assert lines["flaky"]["faults"] == 0 and lines["flaky"]["failed_games"] == 0, lines["flaky"]
    assert lines["doomed"]["failed_games"] == lines["doomed"]["games"] > 0, lines["doomed"]
    runner_log = (folder / "runner.log").read_text()
    # Three restarts for each of flaky's seats (the pre-flight check's processes are not restarted).
    restarts = [json.loads(row) for row in runner_log.splitlines() if "bot_restarted_before_joining" in row]
    flaky_seats = sum(1 for r in restarts if r["bot"] == "flaky" and r["restart"] == 1)
    assert flaky_seats >= lines["flaky"]["games"]
    assert sum(1 for r in restarts if r["bot"] == "flaky" and r["restart"] == 3) == flaky_seats
    assert all(r["restart"] <= 3 for r in restarts), restarts
    # (the pre-flight check's own processes crash too, and it warns: that is not a game)
    assert "entrant 'flaky' in game" not in result.stderr and "entrant 'doomed' in game" in result.stderr
