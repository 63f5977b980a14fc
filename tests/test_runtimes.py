"""The runtimes' registry and what is derived from it: the config, manifest and ``league add`` keys,
``hearts runtime list`` and ``install``, ``hearts doctor``, the docs' table; a runtime's folder as
``hearts runtime install`` builds it (read-only, nothing of its installer in it); a runtime this
machine lacks, said in one line before anything plays."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from hearts_tournaments.arena import runtimes
from hearts_tournaments.arena.bots import BotSpec
from hearts_tournaments.arena.entrants import sandbox_extra
from hearts_tournaments.arena.runtimes import build
from hearts_tournaments.arena.sandbox import runtime_paths
from hearts_tournaments.league.commands import make_spec
from hearts_tournaments.league.config import LeagueError
from hearts_tournaments.tournament.config import ConfigError, parse_config
from tests.conftest import ROOT
from tests.helpers import cli
from tests.helpers.toolchains import require_bwrap

CANARY = "admin-canary-5d1e0c2b"
TWO = '\n[[bots]]\nname = "b"\nbuiltin = "random"\n'


def hearts(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return cli.hearts(*args, env=env, cwd=cwd, timeout=600)


def test_the_docs_table_is_the_registry() -> None:
    """docs/COMPETITION.md holds `hearts runtime list --format markdown`, as it prints it."""
    listed = hearts("runtime", "list", "--format", "markdown")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.strip() == runtimes.markdown_table()
    assert runtimes.markdown_table() in (ROOT / "docs" / "COMPETITION.md").read_text()


def test_python_sdk_copies_the_packages_the_pyprojects_declare() -> None:
    for folder, dist in (
        ("proto/python", "cancellation-hearts-core"),
        ("clients/python", "cancellation-hearts-sdk"),
    ):
        project = tomllib.loads((ROOT / folder / "pyproject.toml").read_text())
        declared = project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
        assert sorted(declared) == sorted(build.PROJECT_PACKAGES[dist]), dist
        assert project["project"]["name"] == dist


def test_the_recipes_pin_what_the_examples_build_with() -> None:
    """An author who copies clients/java or clients/typescript builds against the runtime's versions."""
    namespace = {"m": "http://maven.apache.org/POM/4.0.0"}
    example = ElementTree.parse(ROOT / "clients" / "java" / "pom.xml").getroot()
    versions = {
        "grpc-java": example.findtext("m:properties/m:grpc.version", namespaces=namespace),
        "protobuf-java": example.findtext("m:properties/m:protobuf.version", namespaces=namespace),
    }
    assert build.java_versions() == versions
    lock = json.loads((ROOT / "clients" / "typescript" / "package-lock.json").read_text())
    assert build.node_versions() == {
        n: lock["packages"][f"node_modules/{n}"]["version"] for n in build.NODE_PACKAGES
    }


def test_the_runtime_key_of_a_tournament_config() -> None:
    head = '[tournament]\ntable_size = 6\n[[bots]]\nname = "a"\n'
    config = parse_config(head + 'command = ["python3", "bot.py"]\nruntime = "python-sdk"\n' + TWO, Path("."))
    assert config.bot("a").runtime == "python-sdk"
    assert config.bot("a").to_json()["runtime"] == "python-sdk"
    assert "runtime" not in config.bot("b").to_json()
    cases = {
        'command = ["x"]\nruntime = "cobol"\n': f"bots[0].runtime: must be one of {runtimes.names()}",
        'command = ["x"]\nruntime = 3\n': "bots[0].runtime: must be one of",
        'builtin = "random"\nruntime = "python-sdk"\n': "bots[0].runtime: only command bots take a runtime",
        'command = ["x"]\nruntim = "python-sdk"\n': "did you mean runtime?",
    }
    for text, message in cases.items():
        with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
            parse_config(head + text + TWO, Path("."))


def test_the_runtime_option_of_league_add() -> None:
    spec = make_spec("a", "python3 bot.py", None, runtime="node-grpc")
    assert spec.runtime == "node-grpc"
    with pytest.raises(LeagueError, match="--runtime must be one of python-sdk, java-grpc, node-grpc"):
        make_spec("a", "python3 bot.py", None, runtime="cobol")
    with pytest.raises(LeagueError, match="only command bots take --runtime"):
        make_spec("a", None, "random", runtime="python-sdk")


def test_only_a_bot_run_by_this_python_sees_this_python_and_the_projects_packages(tmp_path: Path) -> None:
    """A built-in bot and a command run by this very Python need them; a compiled bot or the
    system's python3 (what a portal submission without a runtime runs) gets neither."""
    packages = set(runtime_paths())
    assert any(p.name == "hearts_tournaments" for p in packages)
    mine = BotSpec(name="mine", command=(sys.executable, "bot.py"), workdir=tmp_path)
    builtin = BotSpec(name="b", builtin="random", workdir=tmp_path)
    for spec in (mine, builtin):
        assert packages <= set(sandbox_extra(spec, (sys.executable,), None)), spec
    for command in (("/usr/bin/python3", "bot.py"), (str(tmp_path / "bot"),)):
        other = BotSpec(name="other", command=command, workdir=tmp_path)
        assert not packages & set(sandbox_extra(other, command, None)), command


def test_hearts_runtime_list_and_install_mistakes() -> None:
    listed = hearts("runtime", "list", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    entries: list[dict[str, Any]] = json.loads(listed.stdout)
    assert [e["name"] for e in entries] == list(runtimes.RUNTIMES)
    assert {e["status"] for e in entries} <= {"installed", "stale", "missing"}
    text = hearts("runtime", "list").stdout
    for runtime in runtimes.RUNTIMES.values():
        assert f"{runtime.name}  " in text and f"hearts runtime install {runtime.name}" in text
    for args, said in (
        (
            ("install", "cobol"),
            "there is no runtime 'cobol': the runtimes are python-sdk, java-grpc, node-grpc",
        ),
        (("install",), "name the runtimes to install (python-sdk, java-grpc, node-grpc) or give --all"),
    ):
        done = hearts("runtime", *args)
        assert done.returncode == 2 and done.stderr == f"hearts: error: {said}\n", done.stderr


@pytest.mark.timeout(600)
def test_an_installed_runtime_is_read_only_and_holds_nothing_of_its_installer(tmp_path: Path) -> None:
    """Built with a secret in the installer's environment: no file of the runtime holds it, none
    can be written, none names the runner's packages; an up-to-date runtime is not built again, a
    stale one is said to be, in `list` and in `doctor`."""
    home = tmp_path / "runtimes"
    env = {**os.environ, runtimes.HOME_VARIABLE: str(home), "HEARTS_ADMIN_TOKEN": CANARY}
    done = hearts("runtime", "install", "python-sdk", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    folder = home / "python-sdk"
    assert done.stdout.startswith(f"python-sdk: installed in {folder} (python ")
    for path in folder.rglob("*"):
        if path.is_symlink():
            continue
        mode = path.stat().st_mode
        if path.is_file():
            assert not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH), path
            assert CANARY.encode() not in path.read_bytes(), path
        assert mode & stat.S_IROTH, path  # the sandbox's nobody reads it
        assert "hearts_tournaments" not in path.name and "hearts_server" not in path.name, path
    assert "command" not in (folder / "pyvenv.cfg").read_text()  # the temporary folder it was made in
    again = hearts("runtime", "install", "python-sdk", env=env)
    assert again.returncode == 0 and again.stdout.startswith("python-sdk: up to date in"), again.stdout

    record = json.loads((folder / runtimes.MANIFEST).read_text())
    (folder / runtimes.MANIFEST).chmod(0o644)
    (folder / runtimes.MANIFEST).write_text(json.dumps({**record, "fingerprint": "0" * 64}))
    listed = {e["name"]: e for e in json.loads(hearts("runtime", "list", "--format", "json", env=env).stdout)}
    assert listed["python-sdk"]["status"] == "stale"
    checks = json.loads(hearts("doctor", "--json", env=env).stdout)["checks"]
    line = next(c for c in checks if c["name"] == "runtime python-sdk")
    assert (
        line["available"] is False
        and "stale" in line["detail"]
        and "hearts runtime install python-sdk" in line["detail"]
    )
    rebuilt = hearts("runtime", "install", "python-sdk", env=env)
    assert rebuilt.returncode == 0 and rebuilt.stdout.startswith("python-sdk: installed in"), rebuilt.stderr


@pytest.mark.timeout(600)
def test_a_runtime_this_machine_lacks_is_one_line_before_anything_plays(tmp_path: Path) -> None:
    require_bwrap()
    (tmp_path / "bot.py").write_text("print('never started')\n")
    (tmp_path / "t.toml").write_text(
        '[tournament]\ntable_size = 6\ndeals = 1\n[[bots]]\nname = "mine"\ncommand = ["java", "Bot"]\n'
        'runtime = "java-grpc"\n' + TWO
    )
    env = {**os.environ, runtimes.HOME_VARIABLE: str(tmp_path / "none")}
    line = (
        "hearts: error: entrant 'mine' cannot play: it runs on the runtime 'java-grpc', which is not "
        "installed on this machine; fix: `hearts runtime install java-grpc` (it needs java, mvn); "
        "`hearts runtime list` shows what this machine has\n"
    )
    checked = hearts("tournament", "check", "t.toml", env=env, cwd=tmp_path)
    assert checked.returncode == 2 and checked.stderr == line, checked.stderr
    ran = hearts("tournament", "run", "t.toml", "-o", "out", "--progress", "never", env=env, cwd=tmp_path)
    assert ran.returncode == 2 and line in ran.stderr and "Traceback" not in ran.stderr, ran.stderr
