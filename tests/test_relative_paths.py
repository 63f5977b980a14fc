"""Bots of one's own, entered with relative paths, run from the config's own folder as the docs show.

Every path a user types may be relative: the config file, ``-o``, ``files`` and a league's folder.
The default output folder, ``runs/NAME``, is relative too, and a bot process starts in its
sandbox's scratch folder, not in the folder the user typed the command in: every path the sandbox
binds must therefore mean what it meant in the user's folder. These tests type the commands as a
user does, in the config's folder, with a compiled bot, a stdio bot and a bot written on the SDK.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers import cli
from tests.helpers.toolchains import built_bot

#: A bot on the SDK in ten lines: passes its three highest cards, plays its lowest legal card.
SDK_BOT = """\
from hearts_client import Bot, main


class Low(Bot):
    def choose_pass(self, view):
        return sorted(view.hand, key=lambda c: c.rank)[-3:]

    def choose_play(self, view):
        return min(view.legal, key=lambda c: c.rank)


main(Low())
"""


def real_python() -> str:
    """The interpreter this venv was made from: a real file (not a shim), without the SDK."""
    return os.path.realpath(getattr(sys, "_base_executable", sys.executable))


def hearts(cwd: Path, *args: str, timeout: float = 280) -> subprocess.CompletedProcess[str]:
    """The ``hearts`` CLI as a user types it, in ``cwd``."""
    return cli.hearts(*args, cwd=cwd, timeout=timeout)


def bots_folder(folder: Path) -> str:
    """Three bots of one's own under ``folder/bots``, as ``[[bots]]`` entries with relative paths."""
    go = folder / "bots" / "go"
    go.mkdir(parents=True)
    shutil.copy2(built_bot("go").parent / "bin" / "bot", go / "bot")  # the compiled binary alone
    stdio = folder / "bots" / "stdio"
    stdio.mkdir()
    shutil.copy2(ROOT / "clients" / "stdio" / "lowest.py", stdio / "lowest.py")
    sdk = folder / "bots" / "sdk"
    sdk.mkdir()
    (sdk / "bot.py").write_text(SDK_BOT)
    return f"""
[[bots]]
name = "gobot"
command = ["bots/go/bot"]

[[bots]]
name = "stdiobot"
command = ["{real_python()}", "bots/stdio/lowest.py"]
protocol = "stdio"

[[bots]]
name = "sdkbot"
command = ["{sys.executable}", "bots/sdk/bot.py"]
files = "bots/sdk"

[[bots]]
name = "careful"
builtin = "heuristic"
"""


def assert_all_played(cwd: Path, output: str) -> None:
    report = hearts(cwd, "tournament", "report", output, "--format", "json")
    assert report.returncode == 0, report.stderr
    standings = json.loads(report.stdout)["standings"]
    assert sorted(s["bot"] for s in standings) == ["careful", "gobot", "sdkbot", "stdiobot"]
    for entry in standings:
        assert entry["games"] > 0 and entry["faults"] == 0, entry


@pytest.mark.timeout(600)
def test_own_bots_play_from_the_config_folder_with_the_default_output(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    config = folder / "t.toml"
    config.write_text(
        "[tournament]\ntable_size = 6\ndeals = 2\nduplicate = false\nmax_hands = 2\nconcurrency = 1\n"
        + bots_folder(folder)
    )
    checked = hearts(folder, "tournament", "check", "t.toml")
    assert checked.returncode == 0, checked.stderr[-3000:]
    run = hearts(folder, "tournament", "run", "t.toml", "--progress", "never")
    assert run.returncode == 0, run.stderr[-3000:]
    assert (folder / "runs" / "t" / "published.json").is_file()
    assert_all_played(folder, "runs/t")
    verified = hearts(folder, "tournament", "verify", "runs/t")
    assert verified.returncode == 0, verified.stderr[-3000:]


@pytest.mark.timeout(600)
def test_relative_output_option_and_resume_from_another_folder(tmp_path: Path) -> None:
    """``-o`` relative to where the command is typed, and a resume typed from the parent folder."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "t.toml").write_text(
        "[tournament]\ntable_size = 6\ndeals = 2\nduplicate = false\nmax_hands = 2\nconcurrency = 1\n"
        + bots_folder(folder)
    )
    run = hearts(tmp_path, "tournament", "run", "mine/t.toml", "-o", "out", "--progress", "never")
    assert run.returncode == 0, run.stderr[-3000:]
    assert_all_played(tmp_path, "out")
    resumed = hearts(tmp_path / "mine", "tournament", "resume", "../out", "--progress", "never")
    assert resumed.returncode == 0, resumed.stderr[-3000:]


@pytest.mark.timeout(600)
def test_league_with_a_relative_folder_plays_an_own_bot(tmp_path: Path) -> None:
    (tmp_path / "bots").mkdir()
    shutil.copy2(ROOT / "clients" / "stdio" / "lowest.py", tmp_path / "bots" / "lowest.py")
    steps = [
        ("league", "init", "lg", "--table-size", "6", "--max-hands", "1"),
        ("league", "add", "lg", "low", "--command", f"{real_python()} bots/lowest.py",
         "--files", "bots", "--protocol", "stdio"),
        ("league", "add", "lg", "careful", "--builtin", "heuristic"),
        ("league", "add", "lg", "dice", "--builtin", "random"),
        ("league", "run", "lg", "--blocks", "1"),
        ("league", "verify", "lg"),
    ]  # fmt: skip
    for step in steps:
        done = hearts(tmp_path, *step)
        assert done.returncode == 0, (step, done.stdout[-2000:], done.stderr[-3000:])
        assert '"event"' not in done.stderr, (step, done.stderr[-2000:])  # log lines go to lg/league.log
    shown = hearts(tmp_path, "league", "show", "lg", "--format", "json", "--all")
    assert shown.returncode == 0, shown.stderr
    assert '"low@v1"' in shown.stdout, shown.stdout
