"""``hearts runtime ...``: the runtimes this machine provides to bots, and installing them."""

from __future__ import annotations

import enum
import json
from typing import Annotated, Any

import typer

from hearts_tournaments.arena import runtimes
from hearts_tournaments.arena.runtimes.build import BuildError
from hearts_tournaments.cli.common import MARKUP_MODE, fail

runtime_app = typer.Typer(
    rich_markup_mode=MARKUP_MODE,
    help='Runtimes the competition provides to bots (`runtime = "python-sdk"`): list and install them.',
    no_args_is_help=True,
)


class ListFormat(enum.StrEnum):
    """How ``list`` prints."""

    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"


def text_lines(entry: dict[str, Any]) -> list[str]:
    """One runtime of ``hearts runtime list``, as lines."""
    versions = ", ".join(f"{k} {v}" for k, v in entry["versions"].items()) or "those of this installation"
    env = "; ".join(f"{k}={v}" for k, v in entry["env"].items())
    lines = [
        f"{entry['name']}  {entry['status']}  {entry['summary']}",
        f"  command words: {', '.join(entry['words'])}   e.g. {entry['example']}",
    ]
    lines += [f"  provides:      {item}" for item in entry["provides"]]
    lines += [
        f"  versions:      {versions}",
        f"  in a sandbox:  {entry['folder']} (read-only); {env}",
        f"  install:       hearts runtime install {entry['name']}   (from {entry['source']})",
    ]
    return lines


@runtime_app.command("list")
def list_runtimes(
    form: Annotated[
        ListFormat,
        typer.Option(
            "--format",
            help="text; json (what the portal's /runtimes page shows); markdown (the table of "
            "docs/COMPETITION.md: what each runtime is, the same on every machine).",
        ),
    ] = ListFormat.TEXT,
) -> None:
    """List the runtimes: what each provides, its command words and environment, and whether this
    machine has it installed (installed, stale: built from an older installation, or missing)."""
    if form is ListFormat.MARKDOWN:
        typer.echo(runtimes.markdown_table())
        return
    entries = [s.to_json() for s in runtimes.states()]
    if form is ListFormat.JSON:
        typer.echo(json.dumps(entries, indent=2))
        return
    for index, entry in enumerate(entries):
        if index:
            typer.echo("")
        typer.echo("\n".join(text_lines(entry)))


def _install_help() -> str:
    """``install``'s help, each runtime's source and needs from the registry."""
    sources = "; ".join(
        f"{r.name} from {r.source}" + (f" (needs {', '.join(r.needs)})" if r.needs else "")
        for r in runtimes.RUNTIMES.values()
    )
    return (
        "Build runtimes on this machine (into $HEARTS_RUNTIMES, else share/cancellation-hearts/runtimes "
        "of this Python's environment), each unless it is installed and up to date.\n\n"
        f"{sources}. Install while no tournament or league plays: a bot running on the old copy may "
        "fail. Exit 0 when every one is installed, 1 when one cannot be built (one line each), 2 for a "
        "bad argument."
    )


@runtime_app.command("install", help=_install_help())
def install(
    names: Annotated[
        list[str] | None, typer.Argument(help=f"Runtimes to install: {runtimes.names()}.", show_default=False)
    ] = None,
    every: Annotated[bool, typer.Option("--all", help="Install every runtime.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Build again even when up to date.")] = False,
) -> None:
    """Build runtimes on this machine (see :func:`_install_help`)."""
    wanted = list(runtimes.RUNTIMES) if every else list(names or ())
    if not wanted:
        raise fail(f"name the runtimes to install ({runtimes.names()}) or give --all")
    for name in wanted:
        if name not in runtimes.RUNTIMES:
            raise fail(f"there is no runtime {name!r}: the runtimes are {runtimes.names()}")
    failed = False
    for name in wanted:
        try:
            done, built = runtimes.install(name, force=force)
        except BuildError as exc:
            typer.echo(f"hearts: error: runtime {name}: {exc}", err=True)
            failed = True
            continue
        versions = ", ".join(f"{k} {v}" for k, v in done.built.versions.items())
        what = "installed" if built else "up to date"
        typer.echo(f"{name}: {what} in {done.folder} ({versions})")
    raise typer.Exit(1 if failed else 0)
