"""The SDK installs alone, light, and the documented bot runs from that install against ``hearts host``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_docs import python_blocks

#: What a bot author's virtualenv may hold after installing the SDK: the SDK, the core, and
#: their declared dependencies (grpcio brings typing-extensions), plus the venv's own tools.
ALLOWED = {"cancellation-hearts-core", "cancellation-hearts-sdk", "grpcio", "protobuf", "typing-extensions"}
VENV_TOOLS = {"pip", "setuptools", "wheel"}
#: Creating the fresh virtual environment and installing into it (up to 600 s) counts against
#: the first test that uses it.
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def sdk_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("sdk-venv")
    venv.create(home, with_pip=True)
    python = home / "bin" / "python"
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            str(ROOT / "proto" / "python"),
            str(ROOT / "clients" / "python"),
        ],
        check=True,
        timeout=600,
    )
    return python


def test_the_sdk_pulls_only_its_declared_dependencies(sdk_python: Path) -> None:
    listed = subprocess.run(
        [str(sdk_python), "-m", "pip", "list", "--format=json"], capture_output=True, text=True, check=True
    )
    names = {p["name"].lower().replace("_", "-") for p in json.loads(listed.stdout)} - VENV_TOOLS
    assert names == ALLOWED


def test_importing_the_sdk_brings_no_server_code_and_configures_no_logging(sdk_python: Path) -> None:
    probe = "\n".join(
        [
            "import logging, sys",
            "before = list(logging.getLogger().handlers)",
            "import hearts_client, hearts_client.bots, hearts_core.local",
            "assert logging.getLogger().handlers == before, 'logging configured'",
            "server_side = ('hearts_server', 'hearts_tournaments', 'structlog', 'typer', 'rich')",
            "bad = [m for m in sys.modules if m.split('.')[0] in server_side]",
            "assert not bad, bad",
        ]
    )
    subprocess.run([str(sdk_python), "-c", probe], check=True, timeout=60)


#: SDK modules that need an extra of the SDK (``pip install 'cancellation-hearts-sdk[EXTRA]'``):
#: without it, importing them fails with one ModuleNotFoundError naming that extra's package.
NEEDS_EXTRA = {"hearts_client.sim.pettingzoo": {"pettingzoo", "gymnasium", "numpy"}}


def test_every_sdk_module_imports_and_the_stdio_bridge_runs_from_the_sdk_install(sdk_python: Path) -> None:
    probe = "\n".join(
        [
            "import importlib, json, pkgutil, hearts_client",
            "failed = {}",
            "for info in pkgutil.walk_packages(hearts_client.__path__, 'hearts_client.'):",
            "    try:",
            "        importlib.import_module(info.name)",
            "    except ImportError as exc:",
            "        failed[info.name] = getattr(exc, 'name', None) or str(exc)",
            "print(json.dumps(failed))",
        ]
    )
    result = subprocess.run([str(sdk_python), "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    failed = json.loads(result.stdout)
    # A module of an extra fails naming the package it lacks (ImportError.name, or its message).
    unexpected = {
        m: n for m, n in failed.items() if not any(pkg in str(n) for pkg in NEEDS_EXTRA.get(m, set()))
    }
    assert not unexpected, unexpected
    # Typed: each installed package says so (PEP 561), for a bot author's own mypy.
    typed = (
        "import pathlib, hearts_client, hearts_core, hearts_protocol\n"
        "mods = (hearts_client, hearts_core, hearts_protocol)\n"
        "print(all((pathlib.Path(m.__file__).parent / 'py.typed').is_file() for m in mods))"
    )
    found = subprocess.run([str(sdk_python), "-c", typed], capture_output=True, text=True, timeout=60)
    assert found.stdout.strip() == "True", found.stderr
    bridge = subprocess.run(
        [str(sdk_python), "-m", "hearts_client.stdio_bridge", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bridge.returncode == 0 and "JSON lines" in bridge.stdout, bridge.stderr


def test_the_documented_bot_runs_from_the_sdk_install_against_hearts_host(
    sdk_python: Path, tmp_path: Path
) -> None:
    (code,) = python_blocks(ROOT / "docs" / "WRITING_A_BOT.md")
    script = tmp_path / "my_bot.py"
    script.write_text(code)
    host = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hearts_tournaments",
            "host",
            "--seats",
            "external,heuristic,random,heuristic,random,heuristic",
            "--target-score",
            "40",
            "--out",
            str(tmp_path / "games"),
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "host.log").open("wb"),
        text=True,
    )
    try:
        assert host.stdout is not None
        first = json.loads(host.stdout.readline())
        (seat,) = first["seats"]
        token_file = seat["token_file"]  # hearts host hands the token over in a 0600 file
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
        bot = subprocess.run(
            [str(sdk_python), str(script), "--server", first["address"], "--token-file", str(token_file)],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
            check=False,
        )
        assert bot.returncode == 0, bot.stderr[-2000:]
        assert host.wait(timeout=120) == 0
    finally:
        host.kill()
    records = list((tmp_path / "games").glob("*.json"))
    assert len(records) == 1
    record = json.loads(records[0].read_text())
    assert record["faults"] == []  # the external bot answered every decision itself


def test_the_simulator_works_from_the_bare_sdk_install(sdk_python: Path) -> None:
    """No Rust, no numpy: hearts_client.sim falls back to Python and still plays, replays and searches."""
    vector = ROOT / "tests" / "conformance" / "vectors" / "000-game-6p-random-0.json"
    probe = "\n".join(
        [
            "import json, sys",
            "from hearts_client.sim import BACKEND, Game, replay_outcome",
            "assert BACKEND == 'python', BACKEND",
            "assert 'numpy' not in sys.modules",
            "game = Game(8, 1, max_hands=1)",
            "game.play_out('heuristic')",
            "assert game.is_over()",
            "obs = game.observation(0)",
            "assert isinstance(obs, list) and len(obs) == 320 + 60 * 8",
            f"vector = json.loads(open({str(vector)!r}).read())",
            "assert replay_outcome(vector['record']) == vector['expected']",
            "from hearts_client.bots import make_bot",
            "assert make_bot('ismcts', 1).name == 'ismcts'",
            "assert 'numpy' not in sys.modules",
        ]
    )
    done = subprocess.run([str(sdk_python), "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
