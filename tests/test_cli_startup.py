"""The ``hearts`` command starts light: importing it, ``hearts --help`` and ``hearts replay FILE``
load neither numpy, the gRPC server, Ray, the web stack nor the tournament, league or web
sub-apps; a sub-app loads when its command runs, and every ``--help`` reads exactly as when all
were imported up front.

Structural, not timed: what a fresh process has imported (``sys.modules``). The time it takes is
measured by ``bench/startup.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from hearts_tournaments.cli.common import MARKUP_MODE
from hearts_tournaments.cli.lazy import LazyGroup, SubApp
from tests.conftest import VECTORS

#: Modules the bare command must not import (a prefix covers the package's submodules).
HEAVY = (
    "numpy",
    "grpc",
    "hearts_server.server",
    "hearts_server.service",
    "ray",
    "starlette",
    "uvicorn",
    "jinja2",
    "structlog",
    "hearts_tournaments.tournament",
    "hearts_tournaments.league",
    "hearts_tournaments.web",
)

#: Runs ``hearts ARGS`` (its real ``main()``), then prints the modules imported as stderr's last line.
RUN_AND_LIST = (
    "import atexit, json, sys\n"
    "atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))\n"
    "from hearts_tournaments.cli.main import main\n"
    "sys.argv[0] = 'hearts'\n"
    "main()\n"
)

#: Prints every command's ``--help`` as JSON ({"tournament run": text, ...}); with ``eager`` the
#: sub-apps are first added to the root with ``Typer.add_typer``, as before they loaded lazily.
EVERY_HELP = """
import json, sys
import typer, typer.main
from typer.testing import CliRunner
from hearts_tournaments.cli.main import app
if sys.argv[1] == "eager":
    for name, sub in app.info.cls.sub_apps.items():
        loaded = sub.load()
        if isinstance(loaded, typer.Typer):
            app.add_typer(loaded, name=name)
        else:
            app.command(name)(loaded)
root = typer.main.get_command(app)

def paths(group, path=()):
    yield path
    for name in group.list_commands(None):
        command = group.load(name) if hasattr(group, "load") else group.get_command(None, name)
        if hasattr(command, "list_commands"):
            yield from paths(command, (*path, name))
        else:
            yield (*path, name)

shown = {}
for path in paths(root):
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "100"}, terminal_width=100)
    shown[" ".join(path)] = [result.exit_code, result.output]
print(json.dumps(shown))
"""


def _modules_after(*args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", RUN_AND_LIST, *args], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.stderr.strip(), done
    modules: list[str] = json.loads(done.stderr.strip().splitlines()[-1])
    return modules


def _heavy(modules: list[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_importing_the_command_loads_nothing_heavy() -> None:
    code = "import json, sys\nimport hearts_tournaments.cli.main\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert _heavy(json.loads(done.stdout)) == []


@pytest.mark.parametrize(
    ("args", "allowed"),
    [
        (("--help",), ()),
        (("replay", str(VECTORS[0])), ()),
        (("nosuchcommand",), ()),
        # The built-in bots are the SDK's, and the SDK package brings its gRPC client.
        (("play", "--quiet", "--seed", "light"), ("grpc",)),
    ],
    ids=["help", "replay", "mistake", "play"],
)
def test_a_light_command_loads_nothing_heavy(args: tuple[str, ...], allowed: tuple[str, ...]) -> None:
    heavy = _heavy(_modules_after(*args))
    assert [m for m in heavy if m.split(".")[0] not in allowed] == []


def test_a_sub_app_loads_when_its_command_runs() -> None:
    """The check above sees an import when there is one: ``hearts tournament --help`` loads it."""
    modules = _modules_after("tournament", "--help")
    assert "hearts_tournaments.cli.tournament" in modules
    assert "hearts_tournaments.tournament.runner" in modules
    assert "hearts_tournaments.cli.league" not in modules


def _every_help(mode: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", EVERY_HELP, mode], capture_output=True, text=True, timeout=240, check=True
    )
    shown: dict[str, Any] = json.loads(done.stdout)
    return shown


def test_every_help_reads_as_when_every_sub_app_was_imported_up_front() -> None:
    lazy, eager = _every_help("lazy"), _every_help("eager")
    assert {"", "tournament", "tournament run", "league add", "web export", "replay"} <= set(lazy)
    assert sorted(lazy) == sorted(eager)
    for path in lazy:
        assert lazy[path] == eager[path], path
    assert lazy[""][0] == 0 and "tournament" in lazy[""][1] and "league" in lazy[""][1]


def test_each_stand_in_carries_its_sub_app_s_own_help() -> None:
    from hearts_tournaments.cli.main import app

    root: Any = typer.main.get_command(app)
    for name, sub in app.info.cls.sub_apps.items():  # type: ignore[union-attr]
        assert root.commands[name].help == sub.help, name  # the stand-in, before loading
        assert root.load(name).help == sub.help, name  # the real one


def _help(app: typer.Typer, *args: str) -> str:
    result = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": "100"}, terminal_width=100)
    assert result.exit_code == 0, result.output
    return result.output


#: tests/helpers/lazy_command.py's docstring, as its stand-in carries it.
HELLO_HELP = "Say hello.\n\nA second paragraph, shown by its own --help only."


def test_a_single_command_loads_when_it_runs_and_reads_as_when_eager() -> None:
    from tests.helpers.lazy_command import hello

    def other() -> None:
        """Another command."""

    def top() -> None:
        """A root with one command of its own and one loaded when it runs."""

    class Root(LazyGroup):
        sub_apps: ClassVar[Mapping[str, SubApp]] = {
            "hello": SubApp("tests.helpers.lazy_command:hello", HELLO_HELP)
        }

    lazy = typer.Typer(cls=Root, rich_markup_mode=MARKUP_MODE, add_completion=False)
    eager = typer.Typer(rich_markup_mode=MARKUP_MODE, add_completion=False)
    for root in (lazy, eager):
        root.callback()(top)
        root.command()(other)
    eager.command("hello")(hello)
    sys.modules.pop("tests.helpers.lazy_command")
    assert _help(lazy) == _help(eager)
    assert "tests.helpers.lazy_command" not in sys.modules  # the root's help did not load it
    assert _help(lazy, "hello") == _help(eager, "hello")
    assert "tests.helpers.lazy_command" in sys.modules
    said = CliRunner().invoke(lazy, ["hello", "--name", "lazy"])
    assert (said.exit_code, said.output) == (0, "hello lazy\n")
