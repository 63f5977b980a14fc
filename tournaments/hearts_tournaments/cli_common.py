"""What every ``hearts`` command shares: how a mistake the user can make ends the command, and
how the help reads."""

from __future__ import annotations

from typing import Any

import typer
import typer.core

#: Help text is Markdown: a paragraph's lines are joined and wrapped to the terminal, never
#: broken where the docstring's lines happen to end.
MARKUP_MODE = "markdown"


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
