"""Fault integrity: every answer a bot did not choose shows, and quarantine ignores finishing order."""

from __future__ import annotations

import itertools
import json
import random
import re
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.tournament.config import ConfigError, parse_config
from hearts_tournaments.tournament.quarantine import ScheduleQuarantine, quarantined
from hearts_tournaments.tournament.schedule import Schedule, make_schedule
from hearts_tournaments.tournament.store import Store
from tests.helpers.cli import hearts
from tests.helpers.web_server import get, web_server

BOTS = ["ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal"]

RAISING_BOT = """
import os

from hearts_client import Bot, run
from hearts_client.sdk import read_token


class Broken(Bot):
    name = "broken"

    def choose_pass(self, view):
        raise RuntimeError("a bug in the bot")

    def choose_play(self, view):
        raise RuntimeError("a bug in the bot")


run(Broken(), os.environ["HEARTS_SERVER"], read_token(None, os.environ["HEARTS_TOKEN_FILE"]))
"""


def test_the_config_check_refuses_an_option_of_the_wrong_type(tmp_path: Path) -> None:
    def config(options: str) -> str:
        return f"""
[tournament]
name = "t"
table_size = 6
deals = 1
[[bots]]
name = "mc"
builtin = "montecarlo"
options = {{ {options} }}
""" + "".join(f'[[bots]]\nname = "b{i}"\nbuiltin = "random"\n' for i in range(5))

    for options, message in (
        ("worlds = 2.5", "worlds must be int, not float 2.5"),
        ("worlds = true", "worlds must be int, not bool"),
        ('time_limit = "fast"', "time_limit must be float, not str"),
        ("wrolds = 4", "no option 'wrolds' (its options: worlds, time_limit)"),
    ):
        with pytest.raises(ConfigError) as error:
            parse_config(config(options), tmp_path)
        assert message in str(error.value), options
        assert "bots[0].options: not accepted by 'montecarlo'" in str(error.value)
    parsed = parse_config(config("worlds = 3, time_limit = 1"), tmp_path)
    assert parsed.bots[0].options == {"worlds": 3, "time_limit": 1}


def test_a_bot_that_raises_on_every_decision_shows_as_bot_errors(tmp_path: Path) -> None:
    (tmp_path / "broken_bot.py").write_text(RAISING_BOT)
    python = json.dumps(sys.executable)
    config = tmp_path / "broken.toml"
    config.write_text(
        f"""
[tournament]
name = "broken"
table_size = 6
deals = 1
duplicate = false
seed = 5
target_score = 30
concurrency = 1
quarantine_after = 5

[[bots]]
name = "broken"
command = [{python}, "broken_bot.py"]
sandbox = "none"
"""
        + "".join(f'[[bots]]\nname = "h{i}"\nbuiltin = "heuristic"\n' for i in range(5))
    )
    folder = tmp_path / "out"
    result = hearts("tournament", "run", str(config), "--output", str(folder), "--allow-broken", timeout=600)
    # The pre-flight check saw it never decide for itself; the run says it failed a game.
    assert "entrant 'broken' cannot play: its SDK answered its pass in hand 1 for it" in result.stderr
    assert "(process.decides)" in result.stderr and "fix: fix the error its log shows" in result.stderr
    assert result.returncode == 3, result.stderr
    assert "bot errors" in result.stdout  # the standings table's status column

    report = json.loads(hearts("tournament", "report", str(folder), "--format", "json").stdout)
    lines = {s["bot"]: s for s in report["standings"]}
    broken = lines["broken"]
    assert broken["faults"] == 0  # every answer was legal and in time ...
    assert broken["bot_errors"] > 10  # ... but none was the bot's own
    assert broken["failed_games"] == 1  # it never made a decision of its own
    assert all(lines[f"h{i}"]["bot_errors"] == 0 for i in range(5))

    csv_text = hearts("tournament", "report", str(folder), "--format", "csv").stdout
    header, *rows = csv_text.splitlines()
    column = header.split(",").index("bot_errors")
    assert {row.split(",")[1]: row.split(",")[column] for row in rows}["broken"] == str(broken["bot_errors"])

    (record_file,) = (folder / "records").glob("*.json")
    record = json.loads(record_file.read_text())
    seat = record["bots"].index("broken")
    mine = [d for d in record["decisions"] if d["seat"] == seat]
    assert mine and all(d.get("bot_error") is True and "by_referee" not in d for d in mine)
    assert not any(d.get("bot_error") for d in record["decisions"] if d["seat"] != seat)
    assert record["result"]["bot_errors"][seat] == len(mine) == broken["bot_errors"]

    verified = hearts("tournament", "verify", str(folder))
    assert verified.returncode == 0, verified.stdout + verified.stderr

    with web_server(folder) as url:
        board = get(url + "/")
        assert board.status == 200
        row = re.search(r'<tr data-bot="broken".*?</tr>', board.body, re.S)
        assert row is not None and f'data-value="{broken["bot_errors"]}"' in row.group(0)
        assert "bot errors" in row.group(0)
        page = get(url + "/bot/broken")
        assert page.status == 200, page.body[:200]
        assert f"0 / {broken['bot_errors']} / 1" in page.body
        assert f"{broken['bot_errors']} bot errors, failed" in page.body


# ---------------------------------------------------------------- quarantine in schedule order
def _outcome(schedule: Schedule, index: int, failing: set[str]) -> GameOutcome:
    game = schedule.games[index]
    n = len(game.seats)
    clean = GameOutcome.clean(game.key, game.seats, tuple(range(n)), game_id=f"g{index}")
    return replace(clean, retired=tuple(bot in failing for bot in game.seats))


def _play(
    schedule: Schedule, limit: int, fails: set[int], finish_order: random.Random, concurrency: int
) -> dict[str, tuple[bool, ...]]:
    """Simulates the runner: ``concurrency`` games in flight, taken in schedule order, finishing in
    a random order; returns the quarantine status each game was started with."""
    tracker = ScheduleQuarantine(schedule.games, limit)
    started: dict[str, tuple[bool, ...]] = {}
    queue = list(schedule.games)
    running: list[int] = []
    waiting = None
    while queue or running or waiting is not None:
        while len(running) < concurrency and (queue or waiting is not None):
            game = waiting if waiting is not None else queue.pop(0)
            absent = tracker.absent(game)
            if absent is None:
                waiting = game
                break
            waiting = None
            started[game.key] = absent
            running.append(game.index)
        assert running, "waiting for a game that nobody plays"
        done = running.pop(finish_order.randrange(len(running)))
        game = schedule.games[done]
        # "flaky" fails in the chosen games unless it sat them out.
        present = not any(started[game.key][s] for s, b in enumerate(game.seats) if b == "flaky")
        tracker.add(_outcome(schedule, done, {"flaky"} if done in fails and present else set()))
    return started


def test_quarantine_does_not_depend_on_which_games_finish_first() -> None:
    schedule = make_schedule([*BOTS[:5], "flaky"], 6, 12, "7", duplicate=False)
    fails = {1, 2, 4, 7, 9}
    reference = _play(schedule, 3, fails, random.Random(0), concurrency=1)
    assert [reference[g.key][g.seats.index("flaky")] for g in schedule.games] == [False] * 5 + [True] * 7
    for seed, concurrency in itertools.product(range(20), (2, 3, 5)):
        assert _play(schedule, 3, fails, random.Random(seed), concurrency) == reference, (seed, concurrency)


def test_the_quarantine_status_is_known_early_when_unfinished_games_cannot_change_it() -> None:
    schedule = make_schedule([*BOTS[:5], "flaky"], 6, 6, "7", duplicate=False)
    tracker = ScheduleQuarantine(schedule.games, 3)
    # Games 0 and 1 are running: game 2 cannot see a third failure before it.
    assert tracker.absent(schedule.games[2]) == (False,) * 6
    # Game 3 could (0, 1, 2 may all fail): it waits until one of them is stored clean.
    assert tracker.absent(schedule.games[3]) is None
    tracker.add(_outcome(schedule, 1, set()))
    assert tracker.absent(schedule.games[3]) == (False,) * 6
    for index in (0, 2, 3):
        tracker.add(_outcome(schedule, index, {"flaky"}))
    assert tracker.quarantined["flaky"].after_game == schedule.games[3].key
    game = schedule.games[4]
    assert tracker.absent(game) == tuple(b == "flaky" for b in game.seats)
    # The standings' own count, given the games in schedule order, agrees.
    outcomes = [_outcome(schedule, i, {"flaky"} if i in (0, 2, 3) else set()) for i in (3, 2, 1, 0)]
    in_order = sorted(outcomes, key=lambda o: [g.key for g in schedule.games].index(o.key))
    assert quarantined(in_order, 3)["flaky"].after_game == schedule.games[3].key


FLAKY_BOT = """
import os
import sys
from pathlib import Path

from hearts_client import run
from hearts_client.bots import RandomBot
from hearts_client.sdk import read_token

# Plays every start of the pre-flight check (made before the tournament's store exists), then
# crashes at its first two starts in the tournament (claimed atomically: two may start at once),
# then plays.
starts = Path(sys.argv[1])
if Path(sys.argv[2]).exists():
    n = 0
    while True:
        try:
            os.close(os.open(starts / f"start-{n}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            break
        except FileExistsError:
            n += 1
    if n in (0, 1):
        sys.exit(1)
token = read_token(None, os.environ["HEARTS_TOKEN_FILE"])
run(RandomBot(os.environ["HEARTS_SEED"]), os.environ["HEARTS_SERVER"], token)
"""


def test_a_flaky_bot_gets_the_same_standings_at_concurrency_1_and_2(tmp_path: Path) -> None:
    secret = tmp_path / "deal.secret"
    secret.write_text("ab" * 32)
    reports = []
    for concurrency in (1, 2):
        folder = tmp_path / f"c{concurrency}"
        (folder / "starts").mkdir(parents=True)
        (folder / "flaky_bot.py").write_text(FLAKY_BOT)
        store = Store.path_in(folder / "out")
        command = json.dumps([sys.executable, "flaky_bot.py", str(folder / "starts"), str(store)])
        config = folder / "flaky.toml"
        config.write_text(
            f"""
[tournament]
name = "flaky"
table_size = 6
deals = 5
duplicate = false
seed = 9
target_score = 30
concurrency = {concurrency}
quarantine_after = 2

[[bots]]
name = "flaky"
command = {command}
sandbox = "none"
"""
            + "".join(f'[[bots]]\nname = "r{i}"\nbuiltin = "random"\n' for i in range(5))
        )
        result = hearts(
            "tournament",
            "run",
            str(config),
            "--output",
            str(folder / "out"),
            "--deal-secret-file",
            str(secret),
            timeout=600,
        )
        assert result.returncode == 3, result.stderr  # finished; an entrant failed games
        report = json.loads(hearts("tournament", "report", str(folder / "out"), "--format", "json").stdout)
        reports.append(report)
        # Crashed at its first two starts in the tournament and was never started again: games
        # 2.. waited for 0 and 1.
        assert sorted(p.name for p in (folder / "starts").iterdir()) == ["start-0", "start-1"]
    first, second = reports
    assert first["standings"] == second["standings"]
    assert (
        first["quarantined"]
        == second["quarantined"]
        == [{"bot": "flaky", "after_game": "d001", "failed_games": 2}]
    )
