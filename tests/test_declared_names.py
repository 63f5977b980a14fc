"""``Join.bot_name``: the name a bot gives itself never renames its seat.

In a tournament the organiser's name stays authoritative: a bot that joins under another
entrant's name is recorded with it as declared (``declared_names``), and the standings and the
records' ``bots`` are the entrants' by their own names. (With ``hearts host`` the external
seat's record, log and result line show the name its bot joined with:
``tests/test_hosting.py``; a hostile name, escapes and all, is played against the referee in
``tests/test_referee_adversarial.py``.)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from hearts_tournaments.tournament.store import Store
from tests.helpers.cli import hearts

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
    run = hearts("tournament", "run", config.name, "-o", "out", cwd=tmp_path, timeout=540)
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
