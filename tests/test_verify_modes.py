"""`hearts tournament verify` accepts an untouched tournament of every schedule kind: a
``permute`` seating (the default) and a gauntlet, not only a rotated round robin; and one
scheduled before the default changed."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from hearts_tournaments.tournament.schedule import (
    DEFAULT_SEATING,
    SCHEDULE_DESIGN,
    Schedule,
    SeatingMode,
    make_schedule,
)
from tests.helpers.cli import hearts
from tests.helpers.forget import forget_games
from tests.helpers.shared import CAREFUL_AND_TWO_DICE

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


@pytest.mark.parametrize(
    ("seating", "extra"), [("permute", ""), ("rotate", GAUNTLET)], ids=["permute", "gauntlet"]
)
def test_verify_accepts_an_untouched_tournament(tmp_path: Path, seating: str, extra: str) -> None:
    output = _played(tmp_path, BASE.format(deals=1, seating=seating, extra=extra))
    verified = hearts("tournament", "verify", str(output))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith("verify: ok"), verified.stdout


def _played(folder: Path, text: str) -> Path:
    """Runs the tournament of config ``text`` (written to ``folder/t.toml``); its output folder."""
    (folder / "t.toml").write_text(text)
    output = folder / "out"
    played = hearts("tournament", "run", str(folder / "t.toml"), "--output", str(output))
    assert played.returncode == 0, played.stderr
    return output


def _resume_and_verify(output: Path) -> None:
    """Plays what the folder is missing on its stored schedule, then verifies it: ok."""
    resumed = hearts("tournament", "resume", str(output))
    assert resumed.returncode == 0, resumed.stderr
    verified = hearts("tournament", "verify", str(output))
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
    output = _played(tmp_path, SIX.format(deals=2, seating='seating = "rotate"\n', extra=""))
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
    _resume_and_verify(output)
    # The same configuration scheduled today seats its deals differently: verify compared
    # against the seating the tournament was made with, not today's default.
    config = tmp_path / "t.toml"
    config.write_text(SIX.format(deals=2, seating="", extra=""))
    fresh = hearts("tournament", "schedule", str(config))
    assert f"seating {DEFAULT_SEATING.value}" in fresh.stdout and DEFAULT_SEATING is not SeatingMode.ROTATE


def _meta(db: sqlite3.Connection, key: str) -> Any:
    return json.loads(db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()[0])


def test_a_tournament_scheduled_by_design_one_still_verifies_and_resumes(tmp_path: Path) -> None:
    # Eight bots at six seats over three deals: design 2's band search orders the tables
    # other than design 1 did. The folder is made to hold what design 1 stored (its schedule, no
    # "design" key, and its balance report, with no game played yet); resume plays it on that
    # schedule and verify rebuilds design 1's, not today's.
    eight = SIX + "".join(f'\n[[bots]]\nname = "dice{i}"\nbuiltin = "random"\n' for i in (6, 7))
    output = _played(tmp_path, eight.format(deals=3, seating="", extra=""))
    db = sqlite3.connect(output / "tournament.sqlite")
    with db:
        today = Schedule.from_json(_meta(db, "schedule"))
        assert today.design == SCHEDULE_DESIGN == 3
        old = make_schedule(today.bots, 6, 3, today.seed, True, today.seating, design=1)
        assert [s.order for s in old.seatings] != [s.order for s in today.seatings]
        assert "design" not in old.to_json()
        db.execute("UPDATE meta SET value = ? WHERE key = 'schedule'", (json.dumps(old.to_json()),))
        db.execute("UPDATE meta SET value = ? WHERE key = 'balance'", (json.dumps(old.balance().to_json()),))
        keys = [k for (k,) in db.execute("SELECT key FROM games")]
    db.close()
    forget_games(output, keys)
    _resume_and_verify(output)
    with sqlite3.connect(output / "tournament.sqlite") as db:
        seats = {k: json.loads(s) for k, s in db.execute("SELECT key, summary FROM games")}
    assert len(seats) == len(old.games)
    for game in old.games:
        assert tuple(seats[game.key]["seats"]) == game.seats


def test_a_stored_schedule_of_an_unknown_design_is_refused_in_one_line(tmp_path: Path) -> None:
    output = _played(tmp_path, BASE.format(deals=1, seating="permute", extra=""))
    with sqlite3.connect(output / "tournament.sqlite") as db:
        schedule = _meta(db, "schedule")
        schedule["design"] = 99
        db.execute("UPDATE meta SET value = ? WHERE key = 'schedule'", (json.dumps(schedule),))
    for command in ("verify", "resume"):
        refused = hearts("tournament", command, str(output))
        assert refused.returncode != 0, command
        assert "Traceback" not in refused.stderr, refused.stderr
        assert "design 99 is not one this version knows" in refused.stdout + refused.stderr, command
