"""The README's tour runs as written: every command of its console block, typed as it is, from the
folder it names (the repository's root), with its relative paths, by the shell.

The folder is a fresh temporary one holding what the tour reads from the repository (the files
its commands name, and the virtualenv as `.venv`), so nothing the tour writes lands in the
checkout. The shell's `PATH` is a plain one until the tour activates the virtualenv itself, and
the signing key goes to a configuration folder of the test's own. One liberty is taken: a
command that serves until stopped (`hearts web`) gets `--port 0`, so that parallel runs never
collide on the documented port; its page is fetched, then it is stopped as the tour says, with
Ctrl-C. docs/BOT_TEST.md's first example runs in tests/test_kit.py.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers.cli import interrupt

README = ROOT / "README.md"
#: A newcomer's PATH: no virtualenv, no version manager's shims.
PLAIN_PATH = "/usr/local/bin:/usr/bin:/bin"
#: The repository's folders a tour command may read from (what it writes goes elsewhere).
SOURCES = {"bench", "clients", "docs", "proto", "server", "tests", "tournaments"}
#: Commands that serve until stopped, and the line they print once they do.
SERVING = {"hearts web": re.compile(r"web listening on (http://\S+)")}


def tour() -> tuple[str, list[str]]:
    """The README's tour: the folder its prose says to start from, and its commands."""
    section = README.read_text().split("## A tour", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```console\n(.*?)```", section, flags=re.S)
    assert block is not None, "the README's tour has no console block"
    typed = [line[2:] for line in block.group(1).splitlines() if line.startswith("$ ")]
    assert typed, "the tour's console block has no command"
    assert "From the repository's root" in section, "the tour no longer says where it starts"
    return section, typed


def stage(folder: Path, commands: list[str]) -> None:
    """What the tour reads from the repository, in ``folder``: the virtualenv as ``.venv`` and
    every repository file a command names."""
    assert Path(sys.prefix, "bin", "activate").is_file(), "the suite runs outside a virtualenv"
    (folder / ".venv").symlink_to(sys.prefix, target_is_directory=True)
    for command in commands:
        for word in shlex.split(command):
            source = ROOT / word
            if word.split("/")[0] in SOURCES and source.exists():
                (folder / word).parent.mkdir(parents=True, exist_ok=True)
                if source.is_dir():
                    shutil.copytree(source, folder / word, dirs_exist_ok=True)
                else:
                    shutil.copy2(source, folder / word)


def sourced(line: str, cwd: Path, env: dict[str, str]) -> dict[str, str]:
    """The environment after the shell sources a script (`. .venv/bin/activate`)."""
    result = subprocess.run(
        ["bash", "-c", f"{line} && env -0"], capture_output=True, cwd=cwd, env=env, timeout=60, check=False
    )
    assert result.returncode == 0, f"$ {line}\n{result.stderr.decode()}"
    pairs = (item.split("=", 1) for item in result.stdout.decode().split("\0") if "=" in item)
    return dict(pairs)


def serve(command: str, printed: re.Pattern[str], cwd: Path, env: dict[str, str]) -> str:
    """Runs a serving command until it prints its address, fetches that page, stops it with
    Ctrl-C (SIGINT) and returns the page."""
    process = subprocess.Popen(
        ["bash", "-c", f"exec {command} --port 0"],
        cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    shown = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            shown.append(line)
            found = printed.search(line)
            if found:
                with urllib.request.urlopen(found.group(1) + "/", timeout=60) as response:
                    assert response.status == 200
                    return str(response.read().decode())
        raise AssertionError(f"$ {command}\nexited {process.wait()} without serving:\n{''.join(shown)}")
    finally:
        interrupt(process)


@pytest.mark.timeout(1500)
def test_the_readme_tour_runs_as_written_and_the_demo_says_what_to_do_next(tmp_path: Path) -> None:
    section, commands = tour()
    home = tmp_path / "repository"
    home.mkdir()
    stage(home, commands)
    env = {**os.environ, "PATH": PLAIN_PATH, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    for name in ("VIRTUAL_ENV", "PYTHONPATH", "HEARTS_SIGNING_KEY_FILE"):
        env.pop(name, None)
    cwd = home
    printed: dict[str, str] = {}
    for command in commands:
        words = shlex.split(command)
        if words[0] in (".", "source"):
            env = sourced(command, cwd, env)
            continue
        if words[0] == "cd":
            cwd = (cwd / words[1]).resolve()
            continue
        serving = next((p for prefix, p in SERVING.items() if command.startswith(prefix + " ")), None)
        if serving is not None:
            printed[command] = serve(command, serving, cwd, env)
            continue
        result = subprocess.run(
            ["bash", "-c", command],
            capture_output=True,
            text=True,
            cwd=cwd,
            env=env,
            timeout=900,
            check=False,
        )
        assert result.returncode == 0, (
            f"$ {command}\nexit {result.returncode}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        )
        printed[command] = result.stdout

    # The tour's claims about its commands.
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^run:.*\n\t\$\(VENV\)/bin/hearts tournament run --demo$", makefile, flags=re.M)
    assert "hearts tournament run --demo` is what `make run` runs" in section
    demo = printed["hearts tournament run --demo"]
    assert "Tournament demo: standings" in demo
    assert "demo" in printed["hearts web runs/demo"]  # the leaderboard of the demo's folder
    assert re.search(
        r"32 checks: \d+ passed, 0 failed", printed[next(c for c in commands if "bot test" in c)]
    )
    assert "mine@v1" in printed["hearts league show lg"]

    # The demo's last lines: what to do next, each a command the tour runs or a doc that exists.
    last = demo.rstrip().splitlines()[-4:]
    assert last[0] == "next:", demo[-2000:]
    assert "hearts web runs/demo" in last[1] and "hearts web runs/demo" in commands
    pointers = re.findall(r"(docs/\w+\.md)", "\n".join(last))
    assert pointers and all((ROOT / p).is_file() for p in pointers), pointers
    assert "docs/WRITING_A_BOT.md" in last[2] and "hearts bot test -- " in last[3]
