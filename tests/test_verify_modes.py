"""`hearts tournament verify` accepts an untouched tournament of every schedule kind: a
``permute`` seating (the default) and a gauntlet, not only a rotated round robin; and one
scheduled before the default changed."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from hearts_tournaments.tournament.schedule import DEFAULT_SEATING, SeatingMode
from tests.forget import forget_games
from tests.shared import CAREFUL_AND_TWO_DICE

BASE = """
[tournament]
name = "v"
table_size = 6
deals = {deals}
duplicate = true
seating = "{seating}"
seed = 3
max_hands = 1
concurrency = 2
decision_ms = 5000
sandbox = "none"
{extra}"""
BASE += CAREFUL_AND_TWO_DICE
GAUNTLET = """
[gauntlet]
candidate = "careful"
"""


def _hearts(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hearts_tournaments", *args], capture_output=True, text=True, timeout=240
    )


@pytest.mark.parametrize(
    ("seating", "extra"), [("permute", ""), ("rotate", GAUNTLET)], ids=["permute", "gauntlet"]
)
def test_verify_accepts_an_untouched_tournament(tmp_path: Path, seating: str, extra: str) -> None:
    config = tmp_path / "t.toml"
    config.write_text(BASE.format(deals=1, seating=seating, extra=extra))
    output = tmp_path / "out"
    played = _hearts("tournament", "run", str(config), "--output", str(output))
    assert played.returncode == 0, played.stderr
    verified = _hearts("tournament", "verify", str(output))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith("verify: ok"), verified.stdout


SIX = BASE.replace('seating = "{seating}"\n', "{seating}") + "".join(
    f'\n[[bots]]\nname = "dice{i}"\nbuiltin = "random"\n' for i in range(3, 6)
)


def test_a_tournament_scheduled_before_the_default_seating_changed_still_verifies_and_resumes(
    tmp_path: Path,
) -> None:
    # Six bots at six seats, so the seating decides who sits next to whom. The tournament is
    # played rotated; then its stored configuration loses its seating line and its balance
    # report the newer keys: what a tournament run before "neighbours" became the default holds.
    config = tmp_path / "t.toml"
    config.write_text(SIX.format(deals=2, seating='seating = "rotate"\n', extra=""))
    output = tmp_path / "out"
    played = _hearts("tournament", "run", str(config), "--output", str(output))
    assert played.returncode == 0, played.stderr
    db = sqlite3.connect(output / "tournament.sqlite")
    with db:
        text = db.execute("SELECT value FROM meta WHERE key = 'config_toml'").fetchone()[0]
        assert 'seating = "rotate"' in text
        db.execute(
            "UPDATE meta SET value = ? WHERE key = 'config_toml'", (text.replace('seating = "rotate"\n', ""),)
        )
        balance = json.loads(db.execute("SELECT value FROM meta WHERE key = 'balance'").fetchone()[0])
        balance.pop("neighbours")
        db.execute("UPDATE meta SET value = ? WHERE key = 'balance'", (json.dumps(balance),))
        # Half the games were never played: resume has to play them on the stored seating.
        unplayed = [k for (k,) in db.execute("SELECT key FROM games WHERE key LIKE 'd001-%'")]
    db.close()
    forget_games(output, unplayed)
    resumed = _hearts("tournament", "resume", str(output))
    assert resumed.returncode == 0, resumed.stderr
    verified = _hearts("tournament", "verify", str(output))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith("verify: ok"), verified.stdout
    # The same configuration scheduled today seats its deals differently: verify compared
    # against the seating the tournament was made with, not today's default.
    config.write_text(SIX.format(deals=2, seating="", extra=""))
    fresh = _hearts("tournament", "schedule", str(config))
    assert f"seating {DEFAULT_SEATING.value}" in fresh.stdout and DEFAULT_SEATING is not SeatingMode.ROTATE
