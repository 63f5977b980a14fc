"""docs/COMPETITION.md's journey runs as written: the organiser's three steps and the entrant's
folder, check and submission, each command typed as the doc gives it, from one working folder,
with its relative paths, by the shell.

The entrant's bot is an SDK bot that searches with the simulator, under the manifest the doc
gives (``runtime = "python-sdk"``): it must pass `hearts submit --check` and become active
through the portal. Liberties, each the smallest that lets a test run it: `hearts web` gets
``--port 0`` for the doc's ``--port 8000`` (parallel runs never collide) and the portal's address
stands for ``https://comp.example.org``; ``~`` is a home folder of the test's own; the
organiser's `hearts league run --forever` runs in the background until the test ends.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers.cli import interrupt

DOC = ROOT / "docs" / "COMPETITION.md"
#: A newcomer's PATH, with the installation's `hearts` on it.
PLAIN_PATH = f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"
SIMULATOR = ROOT / "docs" / "SIMULATOR.md"


def rollout_bot() -> str:
    """The entrant's bot: docs/SIMULATOR.md's rollout bot as written (the SDK and the simulator,
    as the manifest's description says), started by the SDK's ``main``."""
    text = SIMULATOR.read_text()
    found = re.search(
        r"```python\n(from hearts_client.bots.heuristic import HeuristicBot\n.*?class RolloutBot.*?)```",
        text,
        flags=re.S,
    )
    assert found is not None, "docs/SIMULATOR.md has no RolloutBot"
    return (
        found.group(1)
        + '\n\nif __name__ == "__main__":\n    from hearts_client import main\n\n    main(RolloutBot())\n'
    )


def blocks(heading: str) -> list[str]:
    """The lines of the first code block under ``heading`` (comments and blank lines left out)."""
    text = DOC.read_text()
    assert heading in text, f"docs/COMPETITION.md has no {heading!r}"
    section = text.split(heading, 1)[1]
    found = re.search(r"```(\w*)\n(.*?)```", section, flags=re.S)
    assert found is not None, f"no code block under {heading!r}"
    return [line for line in found.group(2).splitlines() if line.strip() and not line.startswith("#")]


def shell(command: str, cwd: Path, env: dict[str, str], timeout: float = 900) -> str:
    result = subprocess.run(
        ["bash", "-c", command],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, (
        f"$ {command}\nexit {result.returncode}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result.stdout + result.stderr


@pytest.mark.timeout(1800)
def test_the_competition_guide_runs_as_written_and_an_sdk_bot_becomes_active(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    env = {**os.environ, "PATH": PLAIN_PATH, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    for name in ("VIRTUAL_ENV", "PYTHONPATH", "HEARTS_SIGNING_KEY_FILE"):
        env.pop(name, None)

    # For the organiser. 1. The league, and accounts: the token is printed once.
    said = "\n".join(shell(line, work, env) for line in blocks("### 1. The league, and accounts"))
    token = re.search(r"chp_[A-Za-z0-9_.-]+", said)
    assert token is not None, said
    (home / ".comp-token").write_text(token.group(0) + "\n")
    # 2. The runtimes bots may name (already installed by `make runtimes`: each is then a no-op).
    listed = "\n".join(shell(line, work, env) for line in blocks("### 2. The runtimes bots may name"))
    assert "python-sdk" in listed
    # 3. Serve the portal next to the league's run.
    run_line, web_line = blocks("### 3. Serve the portal next to the league's run")
    assert run_line.startswith("hearts league run comp") and web_line.startswith(
        "hearts web comp --submissions"
    )
    league = subprocess.Popen(
        ["bash", "-c", f"exec {run_line}"],
        cwd=work,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    web = subprocess.Popen(
        ["bash", "-c", "exec " + web_line.replace("--port 8000", "--port 0")],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert web.stdout is not None
        url = None
        for line in web.stdout:
            found = re.search(r"listening on (http://\S+)", line)
            if found:
                url = found.group(1)
                break
        assert url is not None, f"{web_line} exited {web.wait()} without serving"

        # For an entrant: the bot's folder, with the doc's manifest as written.
        mybot = work / "mybot"
        mybot.mkdir()
        (mybot / "bot.toml").write_text("\n".join(blocks("### Your bot's folder")) + "\n")
        (mybot / "bot.py").write_text(rollout_bot())
        checked = shell(blocks("### Testing it first")[0], work, env)
        assert re.search(r"\d+ checks: \d+ passed, 0 failed", checked), checked[-3000:]
        submit = blocks("### Submitting")[0]
        assert submit.startswith("hearts submit https://comp.example.org ")
        submitted = shell(submit.replace("https://comp.example.org", url), work, env, timeout=1200)
        assert "active" in submitted.splitlines()[-1], submitted[-3000:]
    finally:
        interrupt(web)
        interrupt(league)
