"""Sub-apps that load when their command runs: ``hearts --help`` and ``hearts replay`` do not
import the tournament runner, the league, the web app, numpy or the gRPC server.

The root group holds a light stand-in for each sub-app (its name and its one-line help, for the
root's ``--help``); resolving the command (``hearts tournament ...``, ``hearts league --help``)
imports the sub-app's module and puts the real group in the stand-in's place, built exactly as
``Typer.add_typer`` builds it, so every help text and behaviour is the same as an eager import.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import typer
import typer.main
from typer.core import TyperGroup
from typer.models import TyperInfo


@dataclass(frozen=True, slots=True)
class SubApp:
    """A sub-app (or a single command) the root loads when its command runs.

    Attributes:
        target: ``module:attribute`` of its :class:`typer.Typer`, or of a command's function.
        help: Its help, exactly as the Typer (or the function's docstring) declares it (a test
            compares the two): the root's ``--help`` shows its first paragraph without importing
            the module.
    """

    target: str

    help: str

    def load(self) -> typer.Typer | Callable[..., Any]:
        """The Typer, or the command's function, imported."""
        module, _, attribute = self.target.partition(":")
        loaded = getattr(importlib.import_module(module), attribute)
        if not isinstance(loaded, typer.Typer) and not callable(loaded):  # pragma: no cover
            raise TypeError(f"{self.target} is neither a Typer nor a function")
        return loaded  # type: ignore[no-any-return]


class _StandIn(TyperGroup):
    """What the root's help lists for a sub-app not loaded yet."""


class LazyGroup(TyperGroup):
    """A root group whose sub-apps and commands (:attr:`sub_apps`, listed after the root's own
    commands, in their order) load when resolved.

    Subclass it with ``sub_apps`` set and give the subclass as ``typer.Typer(cls=...)``.
    """

    sub_apps: ClassVar[Mapping[str, SubApp]] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, sub in self.sub_apps.items():
            self.commands.setdefault(
                name, _StandIn(name=name, help=sub.help, rich_markup_mode=self.rich_markup_mode)
            )

    def load(self, name: str) -> Any:
        """The real command ``name``, its sub-app imported and built on first use."""
        command = self.commands.get(name)
        sub = self.sub_apps.get(name)
        if isinstance(command, _StandIn) and sub is not None:
            loaded = sub.load()
            if isinstance(loaded, typer.Typer):  # as app.add_typer(loaded, name=name) builds it
                command = typer.main.get_group_from_info(
                    TyperInfo(loaded, name=name),
                    pretty_exceptions_short=True,  # the root's, as add_typer passes it
                    suggest_commands=self.suggest_commands,
                    rich_markup_mode=self.rich_markup_mode,
                )
            else:  # as app.command(name)(loaded) builds it
                holder = typer.Typer()
                holder.command(name)(loaded)
                command = typer.main.get_command_from_info(
                    holder.registered_commands[0],
                    pretty_exceptions_short=True,
                    rich_markup_mode=self.rich_markup_mode,
                )
            self.commands[name] = command
        return command

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        if args and args[0] in self.sub_apps:
            self.load(args[0])
        return super().resolve_command(ctx, args)
