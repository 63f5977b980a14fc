"""A command that only tests/test_cli_startup.py loads, by name, through the lazy root group."""

from __future__ import annotations

from typing import Annotated

import typer


def hello(name: Annotated[str, typer.Option("--name", help="Whom to greet.")] = "world") -> None:
    """Say hello.

    A second paragraph, shown by its own --help only.
    """
    typer.echo(f"hello {name}")
