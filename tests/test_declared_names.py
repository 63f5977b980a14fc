"""``Join.bot_name``: the name a bot gives itself is logged and recorded as self-declared, and
never renames its seat.

With ``hearts host`` the external seat's record and log show the name the user's bot joined
with beside the seat's own name (``external-1``), and so does the result line. In a
tournament the organiser's name stays authoritative: a bot that joins under another entrant's
name is recorded with it as declared, and the standings are the entrants' by their names.
(A hostile name, escapes and all, is played against the referee in
``tests/test_referee_adversarial.py``.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hearts_tournaments.arena.host import bot_command, result_line
from hearts_tournaments.tournament.store import Store
from tests.conftest import hearts


@pytest.mark.timeout(300)
def test_hearts_host_records_and_logs_the_name_an_external_bot_joined_with(tmp_path: Path) -> None:
    out = tmp_path / "games"
    args = ["--seats", "random,external,random,random,random,random", "--target-score", "20", "--out"]
    host = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hearts_tournaments",
            "--log-format",
            "json",
            "host",
            *args,
            str(out),
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "host.log").open("wb"),
        text=True,
    )
    try:
        assert host.stdout is not None
        invitation = json.loads(host.stdout.readline())
        (seat,) = invitation["seats"]
        command = bot_command("heuristic", invitation["address"], Path(seat["token_file"]), "n")
        bot = subprocess.run([*command, "--name", "my-bot 1.0"], capture_output=True, timeout=240)
        assert bot.returncode == 0, bot.stderr
        summary = json.loads(host.stdout.readline())
        assert host.wait(60) == 0
    finally:
        host.kill()
    (game,) = summary["games"]
    assert game["declared_names"] == [{"seat": 1, "name": "my-bot 1.0"}]
    assert 'seat 1 joined as "my-bot 1.0" (self-declared)' in result_line(game)
    record = json.loads(Path(game["record"]).read_text())
    assert record["bots"][1] == "external-1"  # the seat's name
    assert record["declared_names"][1] == "my-bot 1.0"  # beside it, as the bot gave it
    assert record["declared_names"][0] == "random"  # the built-ins give their own names
    events = [
        json.loads(line) for line in (tmp_path / "host.log").read_text().splitlines() if line.startswith("{")
    ]
    joined = [e for e in events if e.get("event") == "seat_connected" and e.get("seat") == 1]
    assert joined and joined[0]["bot"] == "external-1" and joined[0]["declared_name"] == "my-bot 1.0", joined


MIMIC = """
import os
from hearts_client import Bot, main


class First(Bot):
    def choose_pass(self, view):
        return sorted(view.hand)[-3:]

    def choose_play(self, view):
        return view.legal[0]


os.environ["HEARTS_BOT_NAME"] = "rnd"  # joins under the other entrant's name
main(First())
"""


@pytest.mark.timeout(600)
def test_a_bot_joining_under_another_entrants_name_keeps_its_own_in_the_standings(tmp_path: Path) -> None:
    (tmp_path / "mimic.py").write_text(MIMIC)
    config = tmp_path / "t.toml"
    config.write_text(
        f"""
[tournament]
name = "names"
table_size = 6
deals = 2
duplicate = false
max_hands = 1

[[bots]]
name = "rnd"
builtin = "random"

[[bots]]
name = "mimic"
command = [{json.dumps(sys.executable)}, "mimic.py"]
"""
    )
    run = subprocess.run(
        [sys.executable, "-m", "hearts_tournaments", "tournament", "run", config.name, "-o", "out"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=540,
        env=dict(os.environ),
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(hearts("tournament", "report", str(tmp_path / "out"), "--format", "json").stdout)
    lines = {line["bot"]: line for line in report["standings"]}
    assert set(lines) == {"rnd", "mimic"}
    assert lines["mimic"]["games"] == lines["rnd"]["games"] == 2
    with Store.open(tmp_path / "out", read_only=True) as store:
        outcomes = store.outcomes()
    assert len(outcomes) == 2
    for outcome in outcomes:
        record = json.loads(outcome.record_json)
        assert record["bots"] == list(outcome.seats)  # the organiser's names, seat by seat
        for seat, bot in enumerate(record["bots"]):
            # Every seat declared "rnd": the mimic's by its own choice, rnd's as the runner named it.
            assert record["declared_names"][seat] == "rnd", (seat, bot)
        assert "mimic" in record["bots"]
