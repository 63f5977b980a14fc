"""The newcomer's path, as docs/WRITING_A_BOT.md tells it: the bot copied as written into a folder
of its own, its own virtualenv with the SDK, the tournament entry as written, on a machine whose
``python`` is not that virtualenv's. It enters a real tournament, in the real sandbox, and plays."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers import cli
from tests.helpers.shared import shim_folder

DOC = ROOT / "docs" / "WRITING_A_BOT.md"


def doc_block(after: str, language: str) -> str:
    """The first ``language`` code block of the guide after the line ``after``."""
    text = DOC.read_text()
    start = text.index(after)
    match = re.compile(rf"```{language}\n(.*?)```", re.S).search(text, start)
    assert match is not None, f"no {language} block after {after!r} in {DOC}"
    return match.group(1)


def bot_env(folder: Path) -> Path:
    """A virtualenv of the base interpreter with the SDK importable, as `pip install ./proto/python
    ./clients/python` makes one (here: a .pth adds this installation's packages, offline)."""
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    ours = sysconfig.get_paths()["purelib"]
    theirs = subprocess.run(
        [str(folder / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    Path(theirs, "hearts-sdk.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    return folder


def hearts(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return cli.hearts(*args, env=env, cwd=cwd, timeout=400)


@pytest.mark.timeout(900)
def test_the_guides_bot_enters_a_tournament_and_plays(tmp_path: Path) -> None:
    folder = tmp_path / "ducker"
    folder.mkdir()
    (folder / "my_bot.py").write_text(doc_block("`my_bot.py`:", "python"))
    entry = doc_block("## Enter it in a tournament", "toml")
    assert 'command = ["python", "my_bot.py"]' in entry  # the guide's own words, copied
    config = folder / "tournament.toml"
    config.write_text(
        '[tournament]\nname = "first"\ntable_size = 6\ndeals = 1\nmax_hands = 1\n\n'
        + entry
        + '\n[[bots]]\nname = "rnd"\nbuiltin = "random"\n'
    )
    env_folder = bot_env(tmp_path / "bot-env")
    shims = shim_folder(tmp_path)
    plain = f"{shims}{os.pathsep}{os.environ['PATH']}"  # this machine's python is not bot-env's

    # Not activated: the check says what `python` is and what to do, and nothing is played.
    refused = hearts(dict(os.environ, PATH=plain), folder, "tournament", "check", str(config))
    assert refused.returncode == 1, refused.stderr
    assert "entrant 'ducker' cannot play" in refused.stderr and str(shims / "python") in refused.stderr

    # Activated as the guide says (`. bot-env/bin/activate`): it plays.
    active = dict(os.environ, PATH=f"{env_folder / 'bin'}{os.pathsep}{plain}", VIRTUAL_ENV=str(env_folder))
    out = tmp_path / "out"
    played = hearts(active, folder, "tournament", "run", str(config), "--output", str(out))
    assert played.returncode == 0, played.stderr[-3000:]
    report = json.loads(hearts(active, folder, "tournament", "report", str(out), "--format", "json").stdout)
    ducker = next(s for s in report["standings"] if s["bot"] == "ducker")
    assert ducker["games"] == 6 and ducker["faults"] == 0 and ducker["failed_games"] == 0
    assert ducker["never_played"] is False and ducker["bot_errors"] == 0

    # Tested first, as the guide says: not activated, the kit names the shim; activated, it passes.
    block = doc_block("## Test it the way a competition runs it", "console")
    (typed,) = [line[2:].split() for line in block.splitlines() if line.startswith("$ ")]
    assert typed[:2] == ["hearts", "bot"]
    shimmed = hearts(dict(os.environ, PATH=plain), folder, *typed[1:])
    assert shimmed.returncode == 1 and "FAIL  process.starts" in shimmed.stdout, shimmed.stdout[-3000:]
    assert str(shims / "python") in shimmed.stdout
    tested = hearts(active, folder, *typed[1:])
    assert tested.returncode == 0, tested.stdout[-3000:] + tested.stderr[-2000:]
