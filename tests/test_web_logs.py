"""The bot page shows a warm bot's log lines of the game looked at (a real tournament, warm bots).

One warm process plays both deals of the tournament into one log file
(``warm-SERIAL-FIRSTKEY.log``); the bot faults in each game, so the bot page shows a log excerpt
per game, and each excerpt holds that game's lines only.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import hearts
from tests.helpers.web_server import get, web_server

#: Answers late once per game (a fault), saying which game in its log.
SLOW_BOT = """
import sys
import time

from hearts_client import Bot, main


class Slow(Bot):
    name = "slow"

    def choose_pass(self, view):
        return sorted(view.hand)[-3:]

    def choose_play(self, view):
        if len(view.hand) == 10:
            print("SLOW sleeping past the limit", file=sys.stderr, flush=True)
            time.sleep(0.6)
        return view.legal[0]


if __name__ == "__main__":
    main(Slow())
"""


@pytest.mark.timeout(300)
def test_the_bot_page_shows_the_warm_logs_lines_of_each_game(tmp_path: Path) -> None:
    (tmp_path / "slow_bot.py").write_text(SLOW_BOT)
    config = tmp_path / "warm.toml"
    config.write_text(
        f"""
[tournament]
name = "warmlogs"
table_size = 6
deals = 2
duplicate = false
max_hands = 1
decision_ms = 300
concurrency = 1
output = "{tmp_path / "out"}"

[[bots]]
name = "slow"
command = [{json.dumps(sys.executable)}, "slow_bot.py"]

[[bots]]
name = "rnd"
builtin = "random"
"""
    )
    run = hearts("tournament", "run", str(config), "--progress", "never", timeout=280)
    assert run.returncode == 0, run.stderr[-3000:]
    # Late once per game: the pre-flight check warns, and it plays (the referee answers for it).
    assert "hearts: warning: entrant 'slow' plays, but fails process.decides" in run.stderr
    out = tmp_path / "out"
    logs = sorted((out / "logs" / "slow").glob("warm-*.log"))
    # The slow bot sits in several seats of each game: some process played both deals.
    shared = [p for p in logs if len(re.findall(r"game_started game_id=", p.read_text())) >= 2]
    assert shared, [p.read_text()[:300] for p in logs]
    with web_server(out) as url:
        page = get(url + "/bot/slow").body
    excerpts = re.findall(r'<pre class="log">(.*?)</pre>', page, re.S)
    assert len(excerpts) >= 2, page[-3000:]
    assert "logs/slow/warm-" in page
    assert any("SLOW sleeping past the limit" in excerpt for excerpt in excerpts)
    for excerpt in excerpts:
        started = re.findall(r"game_started game_id=&#39;([0-9a-f]+)&#39;", excerpt)
        assert len(set(started)) <= 1, excerpt  # one game's lines, never the next game's
    # Each game's excerpt is cut at the next game's start: the shared log, whole, holds both.
    whole = shared[0].read_text().splitlines()
    assert len({line for line in whole if "game_started game_id=" in line}) >= 2
