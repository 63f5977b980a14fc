"""The ``hearts`` command line: a thin shell over library functions.

Each command parses its options and calls one plain function; errors a user can cause end with
one clear line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from hearts_server.logs import LogFormat, configure_logging

app = typer.Typer(
    name="hearts",
    help="Cancellation Hearts: referee server, bots and round-robin tournaments.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _main(
    log_format: Annotated[
        LogFormat,
        typer.Option("--log-format", help="Log lines as console text or JSON; auto picks console on a terminal."),
    ] = LogFormat.AUTO,
    log_level: Annotated[str, typer.Option("--log-level", help="Lowest log level written to stderr.")] = "INFO",
) -> None:
    configure_logging(log_format, log_level)


def fail(message: str, code: int = 2) -> typer.Exit:
    """Prints one clear error line on stderr and returns the exit to raise."""
    typer.echo(f"hearts: error: {message}", err=True)
    return typer.Exit(code)


@app.command()
def replay(
    files: Annotated[list[Path], typer.Argument(help="Game records or conformance vector files.")],
    seat: Annotated[
        int | None,
        typer.Option("--seat", help="Show only what seat K saw, in order, instead of the outcome."),
    ] = None,
) -> None:
    """Replay game records and print each outcome as one JSON line (conformance format).

    A file that is missing, not JSON or not a record gets one line on stderr; the other files
    are still replayed and the command exits 2. A record whose revealed seed does not match its
    commitment or its deals is reported on stderr and the command exits 1.
    """
    from hearts_server.record import RecordFileError, load_record
    from hearts_server.replay import replay as replay_record
    from hearts_server.replay import verify_seed

    status = 0
    for path in files:
        try:
            record = load_record(path)
        except RecordFileError as exc:
            typer.echo(f"hearts replay: {path}: {exc}", err=True)
            status = 2
            continue
        if seat is not None:
            from hearts_server.redacted import redacted_replay

            try:
                for line in redacted_replay(record, seat):
                    typer.echo(json.dumps(line, separators=(",", ":")))
            except ValueError as exc:
                typer.echo(f"hearts replay: {path}: {exc}", err=True)
                status = 2
            continue
        typer.echo(json.dumps(replay_record(record), separators=(",", ":")))
        for problem in verify_seed(record):
            typer.echo(f"hearts replay: {path}: {problem}", err=True)
            status = max(status, 1)
    raise typer.Exit(status)


@app.command()
def play(
    players: Annotated[int, typer.Option("--players", help="Table size, 6 to 11.")] = 8,
    bots: Annotated[
        str,
        typer.Option(
            "--bots",
            help="Comma-separated built-in bot names, one per seat; a shorter list is repeated to fill the table.",
        ),
    ] = "heuristic,random",
    seed: Annotated[str, typer.Option("--seed", help="Deal seed: the same seed gives the same deals.")] = "1",
    target_score: Annotated[int, typer.Option("--target-score", help="The game ends when a total reaches this.")] = 150,
    record: Annotated[Path | None, typer.Option("--record", help="Write the game record to this file.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the final totals.")] = False,
) -> None:
    """Play one game in-process between built-in bots and print it readably."""
    from hearts_client.bots import make_bot
    from hearts_server.errors import HeartsError
    from hearts_server.local import play_game
    from hearts_server.record import state_to_record, write_json_durably
    from hearts_server.rules import Rules
    from hearts_tournaments.printing import print_game

    names = [b.strip() for b in bots.split(",") if b.strip()]
    if not names:
        raise fail("--bots needs at least one bot name")
    try:
        rules = Rules(players=players, target_score=target_score)
        seats = [names[i % len(names)] for i in range(players)]
        entrants = [make_bot(name, f"{seed}/{i}") for i, name in enumerate(seats)]
    except (HeartsError, ValueError) as exc:
        raise fail(str(exc)) from None
    state = play_game(rules, seed, entrants)
    print_game(state, seats, quiet=quiet)
    if record is not None:
        from hearts_server.deal import seed_commitment

        write_json_durably(
            record,
            state_to_record(state, bots=seats, seed=seed, seed_commitment=seed_commitment(seed)),
        )
        typer.echo(f"game record written to {record}")


def main() -> None:
    """Entry point of the ``hearts`` console script."""
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
