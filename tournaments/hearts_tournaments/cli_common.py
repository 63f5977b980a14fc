"""What every ``hearts`` command shares: how a mistake the user can make ends the command."""

from __future__ import annotations

import typer


def fail(message: str, code: int = 2) -> typer.Exit:
    """Prints one clear error line on stderr and returns the exit to raise."""
    typer.echo(f"hearts: error: {message}", err=True)
    return typer.Exit(code)
