"""What every ``hearts`` command shares: how a mistake the user can make ends the command, and
how the help reads."""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
import typer.core

from hearts_server.logs import LogFormat, configure_logging

if TYPE_CHECKING:
    from hearts_tournaments.results.audit import AuditReport

#: Help text is Markdown: a paragraph's lines are joined and wrapped to the terminal, never
#: broken where the docstring's lines happen to end.
MARKUP_MODE: Literal["markdown"] = "markdown"


AlphaOption = Annotated[
    float,
    typer.Option(
        "--alpha",
        min=0.0001,
        max=0.5,
        help="The chance that a field with no collusion has any pair flagged (Holm's correction).",
    ),
]


def print_audit(report: AuditReport, json_out: bool) -> None:
    """Prints an audit report (text or one JSON object) and exits 1 when it flags a pair."""
    if json_out:
        typer.echo(json.dumps(report.to_json(), indent=2))
    else:
        for line in report.lines():
            typer.echo(line)
    raise typer.Exit(1 if report.flagged else 0)


def fail(message: str, code: int = 2) -> typer.Exit:
    """Prints one clear error line on stderr and returns the exit to raise."""
    typer.echo(f"hearts: error: {message}", err=True)
    return typer.Exit(code)


def plain_help() -> None:
    """Makes the help show flags and arguments as click does.

    Typer's rich help shows a type after every option, ``<bool>`` after a flag that takes no
    value too, and a required argument as ``{folder}`` in the usage line. A flag then shows no
    type, and an argument is ``FOLDER`` (``[FOLDER]`` when optional), as in every Unix manual.
    Idempotent; a Typer without these methods is left as it is.
    """
    option = typer.core.TyperOption
    if hasattr(option, "display_type_rich") and not getattr(option, "_hearts_plain", False):
        shown = option.display_type_rich

        def display_type_rich(self: Any, ctx: Any) -> str | None:
            return None if self.is_flag else shown(self, ctx)

        option.display_type_rich = display_type_rich  # type: ignore[method-assign]
        option._hearts_plain = True  # type: ignore[attr-defined]
    argument = typer.core.TyperArgument
    if hasattr(argument, "_usage_display_name") and not getattr(argument, "_hearts_plain", False):

        def usage_name(self: Any) -> str:
            name = str(self.display_name_raw).upper()
            name = name if self.required else f"[{name}]"
            return name + ("..." if self.nargs != 1 else "")

        argument._usage_display_name = usage_name  # type: ignore[method-assign]
        argument._hearts_plain = True  # type: ignore[attr-defined]


def builtin_names() -> str:
    """The built-in bots' names, from the registry (``hearts_client.bots.BUILTIN_BOTS``) in its
    order, as prose: ``"random, heuristic, montecarlo or ismcts"``."""
    from hearts_client.bots import BUILTIN_BOTS

    *most, last = BUILTIN_BOTS
    return f"{', '.join(most)} or {last}" if most else last


def builtin_descriptions() -> str:
    """Each built-in bot with what it does, one Markdown list item each, in the registry's order."""
    from hearts_client.bots import BUILTIN_BOTS, describe

    return "Built-in bots:\n\n" + "\n".join(f"- `{name}`: {describe(name)}" for name in BUILTIN_BOTS)


@contextlib.contextmanager
def log_to_file(path: Path) -> Iterator[None]:
    """Sends the log (the runner's and the in-process referee's) to a file as JSON lines.

    The terminal then shows only the progress and the results.
    """
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    configure_logging(LogFormat.JSON, logging.getLevelName(root.level))
    formatter = root.handlers[0].formatter
    path.parent.mkdir(parents=True, exist_ok=True)
    # The log names games and bots' faults: the organiser's only, like the database (0600).
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
    path.chmod(0o600)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(formatter)
    root.handlers[:] = [handler]
    try:
        yield
    finally:
        handler.close()
        root.handlers[:], level = saved
        root.setLevel(level)
