"""The command line reads well: help without placeholders on flags or braces, paragraphs wrapped
to the terminal, ``--version``, one error prefix, and mistakes named with the closest fix."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer.main
from typer.testing import CliRunner

from hearts_tournaments.cli.main import app
from tests.helpers.cli import hearts

WIDE = 240


def commands(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every command's path under ``group`` (``("tournament", "run")``, ...), groups included."""
    yield path
    for name in sorted(group.list_commands(None)):
        # The root loads a sub-app (tournament, league, web) when asked for it by name.
        command = group.load(name) if hasattr(group, "load") else group.commands[name]
        if hasattr(command, "commands"):  # a group (typer carries its own copy of click)
            yield from commands(command, (*path, name))
        else:
            yield (*path, name)


def help_of(path: tuple[str, ...], width: int) -> str:
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": str(width)}, terminal_width=width)
    assert result.exit_code == 0, (path, result.output)
    return result.output


def paragraphs(doc: str) -> list[str]:
    """A docstring's paragraphs, each on one line, as the help should show them."""
    import inspect

    text = inspect.cleandoc(doc).partition("\f")[0]
    return [" ".join(p.split()).replace("`", "") for p in text.split("\n\n") if p.strip()]


def test_help_has_no_placeholders_on_flags_no_braces_and_whole_paragraphs() -> None:
    root: Any = typer.main.get_command(app)
    paths = list(commands(root))
    assert ("tournament", "check") in paths and ("league", "add") in paths
    for path in paths:
        text = help_of(path, WIDE)
        assert "<bool>" not in text, (path, text)
        usage = next(line for line in text.splitlines() if "Usage:" in line)
        assert "{" not in usage and "}" not in usage, (path, usage)
        command = root
        for name in path:
            command = command.load(name) if hasattr(command, "load") else command.commands[name]
        # Each paragraph of the docstring is one line at a wide terminal: never broken where
        # the docstring's own lines end.
        lines = [" ".join(line.split()) for line in text.splitlines()]
        for paragraph in paragraphs(command.help or ""):
            if len(paragraph) < WIDE - 10 and not paragraph.startswith(("-", "*")):
                assert any(paragraph in line for line in lines), (path, paragraph, text)


def test_version() -> None:
    result = hearts("--version")
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(r"hearts \d+\.\d+\S*\n", result.stdout), result.stdout


def test_every_error_has_one_prefix() -> None:
    for args in (("tournament", "run", "--no-such-flag"), ("serve", "--port", "70000"), ("nosuchcommand",)):
        result = hearts(*args)
        assert result.returncode == 2, (args, result.stderr)
        first = result.stderr.splitlines()[0]
        assert first.startswith("hearts: error: "), (args, result.stderr)
        assert "╭" not in result.stderr, result.stderr
    missing = hearts("replay", "/no/such/record.json")
    assert missing.returncode == 2
    assert missing.stderr.startswith("hearts: error: /no/such/record.json: "), missing.stderr


def test_bot_names_the_unknown_bot_before_asking_for_a_token() -> None:
    result = hearts("bot", "nosuchbot")
    assert result.returncode == 2
    assert "nosuchbot" in result.stderr and "token" not in result.stderr, result.stderr


def test_an_unknown_config_key_suggests_the_closest(tmp_path: Path) -> None:
    config = tmp_path / "typo.toml"
    head = "[tournament]\ntable_size = 6\n"
    bots = '[[bots]]\nname = "a"\nbuiltin = "random"\n[[bots]]\nname = "b"\nbuiltin = "random"\n'
    for text, expected in (
        (head + "deal = 4\n" + bots, "tournament.deal: unknown key: did you mean deals?"),
        (head + bots + "[limits]\nmemory = 4\n", "limits.memory: unknown key: did you mean memory_mb?"),
        (head + '[[bot]]\nname = "a"\n', "bot: unknown section: did you mean bots?"),
        (head + bots.replace("builtin", "builtn", 1), "bots[0].builtn: unknown key: did you mean builtin?"),
        (head + "colour = 1\n" + bots, "tournament.colour: unknown key: the keys of [tournament] are"),
    ):
        config.write_text(text)
        result = hearts("tournament", "schedule", str(config))
        assert result.returncode == 2
        assert expected in result.stderr, result.stderr
