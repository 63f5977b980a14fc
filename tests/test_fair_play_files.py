"""What plays is exactly what was validated: an entrant's files are snapshotted, never bound live.

The attacks of the second red team, played for real: a league entrant whose ``--files`` folder is
swapped for a symlink to the league folder after ``add`` (and whose code is changed), a
tournament entrant doing the same while the tournament runs, ``--files`` naming the league
folder, its parent or its database, a symlink leading out of the files, and entrant names with
a trailing newline. Each bot is a real process in the real bubblewrap sandbox.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hearts_core.defaults import TablePolicy
from hearts_tournaments.arena.sandbox import find_bwrap
from hearts_tournaments.league import commands
from hearts_tournaments.league.config import LeagueConfig, LeagueError
from hearts_tournaments.league.play import StopAfter, run_league
from hearts_tournaments.league.store import ACTIVE, LeagueStore
from hearts_tournaments.tournament.config import ConfigError, parse_config

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap (bwrap) is not installed")

REPORT = "PEEK-REPORT "
#: A bot that reports what its files folder holds (and the first bytes of every file there),
#: then plays as the built-in random bot. ``DIR`` is replaced by the folder's path.
PEEK = (
    "import json, os, sys, time\n"
    "d = {dir!r}\n"
    "seen = {{}}\n"
    "for name in sorted(os.listdir(d)):\n"
    "    try:\n"
    "        with open(os.path.join(d, name), 'rb') as f:\n"
    "            seen[name] = f.read(16).decode('latin-1')\n"
    "    except OSError as e:\n"
    "        seen[name] = 'error: ' + e.strerror\n"
    "print({report!r} + json.dumps(seen), flush=True)\n"
    "time.sleep({pause})\n"
    "bot = [sys.executable, '-m', 'hearts_tournaments.arena.builtin_bot', 'random']\n"
    "os.execv(sys.executable, [*bot, *sys.argv[1:]])\n"
)
SQLITE_MAGIC = "SQLite format 3"


def _peek_command(folder: Path, pause: float = 0.0) -> str:
    code = PEEK.format(dir=str(folder), report=REPORT, pause=pause)
    return f"{sys.executable} -c {shlex.quote(code)}"


def _reports(logs: Path) -> list[dict[str, str]]:
    found = []
    for log in sorted(logs.rglob("*.log")):
        for line in log.read_text(errors="replace").splitlines():
            if line.startswith(REPORT):
                found.append(json.loads(line[len(REPORT) :]))
    return found


def _league(folder: Path) -> LeagueStore:
    config = LeagueConfig(
        table_size=6,
        seed="swap",
        max_hands=1,
        policy=TablePolicy(decision_ms=5000),
        sandbox="bwrap",
        bootstrap=20,
    )
    return commands.init_league(folder, config, bytes(range(32)))


@pytest.mark.timeout(600)
def test_a_league_entrant_that_swaps_its_files_for_a_symlink_sees_only_what_was_validated(
    tmp_path: Path,
) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "version.txt").write_text("v1")
    lg = tmp_path / "lg"
    with _league(lg) as store:
        commands.add_version(store, commands.make_spec("heur", None, "heuristic"))
        spec = commands.make_spec("swapper", _peek_command(mine), None, files=[mine])
        assert "pending" in commands.add_version(store, spec)
        # After `add`: the code is changed, then the folder becomes a symlink to the league folder.
        (mine / "version.txt").write_text("v2")
        mine.rename(tmp_path / "mine-was")
        mine.symlink_to(lg, target_is_directory=True)
        lines: list[str] = []
        assert run_league(store, StopAfter(blocks=1), concurrency=2, emit=lines.append) == 1
        assert store.resolve("swapper").status == ACTIVE, lines
    reports = _reports(lg / "logs")
    assert reports, "the peeking bot never ran"
    for seen in reports:
        assert seen == {"version.txt": "v1"}, seen
        assert not any(SQLITE_MAGIC in text for text in seen.values())


def test_league_add_refuses_files_that_are_hold_or_lie_inside_the_league_folder(tmp_path: Path) -> None:
    lg = tmp_path / "leagues" / "lg"
    outside = tmp_path / "bot"
    outside.mkdir()
    (outside / "db").symlink_to(lg / "league.sqlite")
    with _league(lg) as store:
        for files in (lg, lg.parent, lg / "league.sqlite", outside):
            spec = commands.make_spec("bad", f"{sys.executable} bot.py", None, files=[files])
            with pytest.raises(LeagueError) as caught:
                commands.add_version(store, spec)
            message = str(caught.value)
            assert "\n" not in message and "'bad'" in message, message
        assert store.versions() == []
    # The same through the CLI: one line, exit status 2 or 1, no traceback.
    result = subprocess.run(
        [sys.executable, "-m", "hearts_tournaments", "league", "add", str(lg), "bad2",
         "--command", "python x.py", "--files", str(lg)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode != 0
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_a_symlink_inside_the_files_is_kept_and_one_leading_out_is_refused(tmp_path: Path) -> None:
    lg = tmp_path / "lg"
    good = tmp_path / "good"
    (good / "lib").mkdir(parents=True)
    (good / "lib" / "code.py").write_text("x = 1\n")
    (good / "alias.py").symlink_to("lib/code.py")
    (good / "abs.py").symlink_to(good / "lib" / "code.py")
    escape = tmp_path / "escape"
    escape.mkdir()
    (escape / "up").symlink_to("../good")
    with _league(lg) as store:
        commands.add_version(
            store, commands.make_spec("good", f"{sys.executable} alias.py", None, files=[good])
        )
        version = store.resolve("good")
        assert version.spec.snapshot is not None
        copy = version.spec.snapshot / "0"
        assert os.readlink(copy / "alias.py") == "lib/code.py"
        assert os.readlink(copy / "abs.py") == "lib/code.py"
        assert not os.access(copy / "lib" / "code.py", os.W_OK) or os.geteuid() == 0
        assert (copy / "lib" / "code.py").stat().st_mode & 0o222 == 0
        with pytest.raises(LeagueError, match="outside its files"):
            commands.add_version(
                store, commands.make_spec("esc", f"{sys.executable} x.py", None, files=[escape])
            )


def test_entrant_names_match_whole_strings(tmp_path: Path) -> None:
    with _league(tmp_path / "lg") as store, pytest.raises(LeagueError, match="a name is"):
        commands.add_version(store, commands.make_spec("ok\n", None, "random"))
    text = (
        "[tournament]\ntable_size = 6\n"
        '[[bots]]\nname = "a\\n"\nbuiltin = "random"\n'
        '[[bots]]\nname = "a"\nbuiltin = "random"\n'
    )
    with pytest.raises(ConfigError, match="name"):
        parse_config(text, tmp_path)


def _tournament(folder: Path, mine: Path) -> Path:
    config = folder / "t.toml"
    command = [sys.executable, "-c", PEEK.format(dir=str(mine), report=REPORT, pause=1.0)]
    config.write_text(
        f"""
[tournament]
name = "swap"
table_size = 6
deals = 2
seed = 3
max_hands = 1
output = {json.dumps(str(folder / "out"))}
concurrency = 1
decision_ms = 5000
join_timeout_ms = 60000
reuse = "never"

[[bots]]
name = "swapper"
command = {json.dumps(command)}
files = {json.dumps(str(mine))}

[[bots]]
name = "heuristic"
builtin = "heuristic"
"""
    )
    return config


def _games(out: Path) -> int:
    try:
        with sqlite3.connect(f"file:{out / 'tournament.sqlite'}?mode=ro", uri=True) as db:
            return int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    except sqlite3.Error:
        return 0


@pytest.mark.timeout(900)
def test_a_tournament_entrant_that_changes_its_files_mid_run_plays_what_the_run_started_with(
    tmp_path: Path,
) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "version.txt").write_text("v1")
    config = _tournament(tmp_path, mine)
    out = tmp_path / "out"
    hearts = [sys.executable, "-m", "hearts_tournaments", "tournament"]
    with (tmp_path / "run.log").open("wb") as log:
        process = subprocess.Popen(
            [*hearts, "run", str(config), "--progress", "never"], stdout=log, stderr=log
        )
        try:
            deadline = time.monotonic() + 600
            while _games(out) < 1:
                assert process.poll() is None, (tmp_path / "run.log").read_text()
                assert time.monotonic() < deadline, "no game stored in 600 s"
                time.sleep(0.05)
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
    stopped_at = _games(out)
    # The entrant changes its code, then swaps its folder for a symlink to another of its own.
    (mine / "version.txt").write_text("v2")
    shutil.move(mine, tmp_path / "mine-was")
    other = tmp_path / "other"
    other.mkdir()
    (other / "version.txt").write_text("v3")
    mine.symlink_to(other, target_is_directory=True)
    resumed = subprocess.run(
        [*hearts, "resume", str(out), "--progress", "never"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert _games(out) > stopped_at, "the run finished before it could be stopped: nothing was resumed"
    reports = _reports(out / "logs")
    assert len(reports) >= _games(out)
    for seen in reports:
        assert seen == {"version.txt": "v1"}, seen
