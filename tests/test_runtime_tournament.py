"""Bots on the competition's runtimes in a tournament, started from the config's own folder with
relative paths, as docs/TOURNAMENTS.md shows: the same runtime and sandbox as the portal's.

The Python bots name ``python-sdk`` and run ``python3`` (the runtime's, not the machine's); the
Java and TypeScript example bots ship only their own code (a jar without dependencies, the compiled
``dist/``) and name ``java-grpc`` and ``node-grpc``. Without the runtime, the pre-flight check
says which runtime the bot lacks.
"""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest

from hearts_tournaments.arena import runtimes
from tests.conftest import ROOT
from tests.helpers.runtimes import require_runtime
from tests.helpers.toolchains import built_bot, require_bwrap
from tests.test_relative_paths import SDK_BOT, hearts

HEAD = "[tournament]\ntable_size = 6\ndeals = 2\nduplicate = false\nmax_hands = 1\nconcurrency = 1\n"


def standings(cwd: Path, output: str) -> dict[str, dict[str, int]]:
    report = hearts(cwd, "tournament", "report", output, "--format", "json")
    assert report.returncode == 0, report.stderr
    return {s["bot"]: s for s in json.loads(report.stdout)["standings"]}


def assert_all_played(cwd: Path, output: str, names: set[str]) -> None:
    table = standings(cwd, output)
    assert set(table) == names
    for entry in table.values():
        assert entry["games"] > 0 and entry["faults"] == 0, entry


@pytest.mark.timeout(900)
def test_python_bots_on_the_sdk_runtime_play_from_the_config_folder(tmp_path: Path) -> None:
    require_bwrap()
    require_runtime("python-sdk")
    folder = tmp_path / "mine"
    (folder / "bots" / "sdk").mkdir(parents=True)
    (folder / "bots" / "sdk" / "bot.py").write_text(SDK_BOT)
    (folder / "bots" / "stdio").mkdir()
    shutil.copy2(ROOT / "clients" / "stdio" / "lowest.py", folder / "bots" / "stdio" / "lowest.py")
    (folder / "t.toml").write_text(
        HEAD
        + """
[[bots]]
name = "sdk"
command = ["python3", "bots/sdk/bot.py"]
runtime = "python-sdk"

[[bots]]
name = "stdio"
command = ["python", "bots/stdio/lowest.py"]
protocol = "stdio"
runtime = "python-sdk"

[[bots]]
name = "trusted"
command = ["python3", "bots/sdk/bot.py"]
runtime = "python-sdk"
sandbox = "none"

[[bots]]
name = "careful"
builtin = "heuristic"
"""
    )
    checked = hearts(folder, "tournament", "check", "t.toml", timeout=600)
    assert checked.returncode == 0, checked.stderr[-3000:]
    run = hearts(folder, "tournament", "run", "t.toml", "--progress", "never", timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert_all_played(folder, "runs/t", {"sdk", "stdio", "trusted", "careful"})


@pytest.mark.timeout(900)
def test_league_add_with_a_runtime_from_a_relative_folder(tmp_path: Path) -> None:
    """`hearts league add --runtime`: the version keeps its runtime, is checked and validated on it."""
    require_bwrap()
    require_runtime("python-sdk")
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "bot.py").write_text(SDK_BOT)
    steps = [
        ("league", "init", "lg", "--table-size", "6", "--max-hands", "1"),
        ("league", "add", "lg", "sdk", "--command", "python3 bots/bot.py", "--files", "bots",
         "--runtime", "python-sdk"),
        ("league", "add", "lg", "careful", "--builtin", "heuristic"),
        ("league", "add", "lg", "dice", "--builtin", "random"),
        ("league", "run", "lg", "--blocks", "1"),
    ]  # fmt: skip
    for step in steps:
        done = hearts(tmp_path, *step, timeout=600)
        assert done.returncode == 0, (step, done.stdout[-2000:], done.stderr[-3000:])
    shown = hearts(tmp_path, "league", "info", "lg", "sdk@v1")
    assert shown.returncode == 0, shown.stderr
    info = json.loads(shown.stdout)
    assert info["status"] == "active" and info["spec"]["runtime"] == "python-sdk", info
    refused = hearts(
        tmp_path, "league", "add", "lg", "other", "--command", "python3 bots/bot.py", "--runtime", "cobol"
    )
    assert refused.returncode == 2
    said = f"--runtime must be one of {runtimes.names()} (`hearts runtime list`), not 'cobol'"
    assert refused.stderr == f"hearts: error: {said}\n"


def readme_manifest(language: str, runtime: str) -> dict[str, Any]:
    """The ``bot.toml`` that clients/LANGUAGE/README.md gives for the runtime, as written."""
    text = (ROOT / "clients" / language / "README.md").read_text()
    (block,) = [
        b for b in re.findall(r"```toml\n(.*?)```", text, flags=re.S) if f'runtime = "{runtime}"' in b
    ]
    return tomllib.loads(block)


def entry(name: str, folder: Path, manifest: dict[str, Any], runtime: bool = True) -> str:
    """A [[bots]] entry for a bot laid out in ``folder`` (bots/NAME) as its manifest says."""
    words = [f"bots/{name}/{w}" if (folder / w).is_file() else w for w in manifest["command"]]
    text = f'[[bots]]\nname = "{name}"\ncommand = {json.dumps(words)}\nfiles = "bots/{name}"\n'
    return text + (f'runtime = "{manifest["runtime"]}"\n' if runtime else "") + "\n"


@pytest.mark.timeout(1500)
def test_the_java_and_typescript_examples_ship_only_their_code_on_their_runtimes(tmp_path: Path) -> None:
    """The Java example's jar without its dependencies (maven-shade's original-*.jar, 0.6 MB instead
    of 21 MB) and the TypeScript example's dist/ without node_modules play on java-grpc and
    node-grpc, as their READMEs' bot.toml say; without the runtime, the check says which runtime
    each lacks."""
    require_bwrap()
    java_bot, node_bot = built_bot("java"), built_bot("typescript")
    require_runtime("java-grpc")
    require_runtime("node-grpc")
    folder = tmp_path / "mine"
    java, node = folder / "bots" / "java", folder / "bots" / "node"
    java.mkdir(parents=True)
    shutil.copy2(java_bot.parent / "target" / "original-java-example-bot.jar", java / "bot.jar")
    shutil.copytree(node_bot.parent / "dist", node / "dist", ignore=shutil.ignore_patterns("*.test.js"))
    java_manifest, node_manifest = (
        readme_manifest("java", "java-grpc"),
        readme_manifest("typescript", "node-grpc"),
    )
    careful = '[[bots]]\nname = "careful"\nbuiltin = "heuristic"\n'

    # Without the runtime (the jar given as the class path, as it would run alone).
    bare_java = {"command": [*java_manifest["command"][:-1], "-cp", "bot.jar", java_manifest["command"][-1]]}
    (folder / "bare.toml").write_text(
        HEAD + entry("java", java, bare_java, False) + entry("node", node, node_manifest, False) + careful
    )
    bare = hearts(folder, "tournament", "check", "bare.toml", timeout=600)
    assert bare.returncode == 1, bare.stderr[-3000:]
    lines = bare.stderr.splitlines()
    java_line = next(line for line in lines if "entrant 'java' cannot play" in line)
    assert 'fix: add runtime = "java-grpc"' in java_line and "(NoClassDefFoundError: io/grpc;" in java_line
    node_line = next(line for line in lines if "entrant 'node' cannot play" in line)
    assert 'fix: add runtime = "node-grpc"' in node_line and "(Cannot find module '@grpc/;" in node_line

    (folder / "t.toml").write_text(
        HEAD + entry("java", java, java_manifest) + entry("node", node, node_manifest) + careful
    )
    run = hearts(folder, "tournament", "run", "t.toml", "--progress", "never", timeout=1200)
    assert run.returncode == 0, run.stderr[-3000:]
    assert_all_played(folder, "runs/t", {"java", "node", "careful"})
    # The JVM's heap is sized from the bot's memory cap (the default [limits], 1024 MB).
    logs = (folder / "runs" / "t" / "logs" / "java").glob("*.log")
    assert any("Picked up JDK_JAVA_OPTIONS: -XX:MaxRAM=1024m" in p.read_text() for p in logs)
