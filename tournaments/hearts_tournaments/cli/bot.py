"""``hearts bot run NAME`` (a built-in bot in one seat) and ``hearts bot test -- COMMAND`` (the kit).

``hearts bot NAME ...``, the form before ``run`` existed, still runs the built-in bot.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from hearts_tournaments.arena.bots import BotProtocol
from hearts_tournaments.cli.common import MARKUP_MODE, builtin_descriptions, builtin_names, fail
from hearts_tournaments.kit.catalogue import Level


class _BotGroup(TyperGroup):
    """``hearts bot``: a word that is not one of its commands is a built-in bot for ``run``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return list(super().parse_args(ctx, args))


bot_app = typer.Typer(
    cls=_BotGroup,
    rich_markup_mode=MARKUP_MODE,
    help="Run a built-in bot in one seat, or test your bot the way a competition runs it.",
    no_args_is_help=True,
)


@bot_app.command("run", epilog=builtin_descriptions())
def run(
    name: Annotated[str, typer.Argument(help=f"The built-in bot: {builtin_names()}.", show_default=False)],
    server: Annotated[
        str, typer.Option("--server", envvar="HEARTS_SERVER", help="Referee address host:port.")
    ] = "127.0.0.1:50051",
    token: Annotated[
        str | None,
        typer.Option("--token", envvar="HEARTS_TOKEN", help="The seat's secret token (manual use only)."),
    ] = None,
    token_file: Annotated[
        Path | None,
        typer.Option(
            "--token-file",
            envvar="HEARTS_TOKEN_FILE",
            help="Read the seat's token from this file (safer than --token: not on the command line).",
        ),
    ] = None,
    bot_name: Annotated[
        str | None,
        typer.Option(
            "--name",
            envvar="HEARTS_BOT_NAME",
            help="The name the bot gives itself when it joins: self-declared, logged and recorded; "
            "the seat keeps the organiser's name.",
        ),
    ] = None,
    seed: Annotated[str | None, typer.Option("--seed", help="Seed of the bot's own random choices.")] = None,
    tls_ca: Annotated[
        Path | None, typer.Option("--tls-ca", help="Trust this CA (PEM) and connect with TLS.")
    ] = None,
) -> None:
    """Run a built-in bot in one seat of a referee server (through the Python SDK).

    `hearts bot NAME ...` is the same command.
    """
    from hearts_client.bots import make_bot
    from hearts_client.sdk import BotRunError, TokenError, read_token
    from hearts_client.sdk import run as run_bot

    try:
        player = make_bot(name, seed)  # a misspelt bot is told before a missing token
    except ValueError as exc:
        raise fail(str(exc)) from None
    try:
        token = read_token(token, token_file)
    except TokenError as exc:
        raise fail(str(exc)) from None
    try:
        run_bot(player, server, token, name=bot_name or name, tls_ca=tls_ca)
    except BotRunError as exc:
        raise fail(str(exc), code=1) from None


@bot_app.command("test", context_settings={"allow_interspersed_args": False})
def test(
    command: Annotated[
        list[str],
        typer.Argument(help="The bot's command and its arguments, after --.", show_default=False),
    ],
    protocol: Annotated[
        BotProtocol,
        typer.Option("--protocol", help="How the bot talks: grpc (flags appended) or stdio (JSON lines)."),
    ] = BotProtocol.GRPC,
    files: Annotated[
        list[Path] | None,
        typer.Option(
            "--files",
            help="A file or folder the bot sees, read-only, in its sandbox (repeat it for more); default: "
            "its script's or program's folder, as in a tournament.",
        ),
    ] = None,
    runtime: Annotated[
        str | None, typer.Option("--runtime", help="A runtime the competition provides for the bot.")
    ] = None,
    level: Annotated[
        list[Level] | None,
        typer.Option("--level", help="Run only this level (repeat it for more); default: all four."),
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="The bot's name in the report (default: its script's).")
    ] = None,
    json_file: Annotated[
        Path | None, typer.Option("--json", help="Also write the report as one JSON object to this file.")
    ] = None,
    junit_file: Annotated[
        Path | None,
        typer.Option("--junit", help="Also write the report as JUnit XML to this file (for a CI system)."),
    ] = None,
    keep: Annotated[
        Path | None,
        typer.Option(
            "--keep",
            help="Keep every game's record, the bot's logs and the kit's log in this folder "
            "(default: removed).",
        ),
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Show every check's evidence, not only the failed ones'.")
    ] = False,
) -> None:
    """Test a bot the way a competition runs it: its sandbox, limits, socket, flags and environment.

    Run it from the bot's folder, its command after `--`, e.g. `hearts bot test --protocol stdio --
    python3 bot.py`. Four levels, each on a fresh process: process (it starts, takes its flags,
    exits, stays in its limits), session (game after game on one stream, a rejection, a
    reconnection), rules (hands dealt on purpose for the rules' rare paths, every table size) and
    timing (its decision times at every table size, against the decision limit and the time bank).
    Every check prints its name and verdict, and a failed one its fix and evidence
    (docs/BOT_TEST.md).

    Exit 0 when every check passes, 1 when one fails, 2 for a usage error.
    """
    from hearts_tournaments.cli.common import log_to_file
    from hearts_tournaments.kit.run import ALL_LEVELS, KitError, run_kit
    from hearts_tournaments.kit.subject import bot_under_test

    levels = tuple(dict.fromkeys(level)) if level else ALL_LEVELS
    try:
        spec = bot_under_test(command, protocol=protocol, files=files or (), runtime=runtime, name=name)
    except KitError as exc:
        raise fail(str(exc)) from None
    with tempfile.TemporaryDirectory(prefix="hearts-kit-") as scratch:
        folder = keep if keep is not None else Path(scratch)
        try:
            with log_to_file(folder / "kit.log"):
                report = run_kit(spec, levels=levels, scratch=folder)
        except KitError as exc:
            raise fail(str(exc)) from None
    if keep is None:
        report = report.without_files()
    for line in report.text(verbose=verbose):
        typer.echo(line)
    try:
        if json_file is not None:
            json_file.write_text(json.dumps(report.to_json(), indent=1) + "\n", encoding="utf-8")
        if junit_file is not None:
            junit_file.write_text(report.junit(), encoding="utf-8")
    except OSError as exc:
        raise fail(f"cannot write the report: {exc}") from None
    if keep is not None:
        typer.echo(f"records and logs kept in {keep}")
    raise typer.Exit(0 if report.passed else 1)
