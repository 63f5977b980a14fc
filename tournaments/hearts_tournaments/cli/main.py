"""The ``hearts`` command line: a thin shell over library functions.

Each command parses its options and calls one plain function; errors a user can cause end with
one clear line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, ClassVar

import typer

from hearts_core.defaults import (
    DEFAULT_DECISION_MS,
    DEFAULT_JOIN_TIMEOUT_MS,
    DEFAULT_MAX_FAULTS,
    DEFAULT_TIME_BANK_MS,
    MAX_LIVE_TABLES,
)
from hearts_core.rules import DEFAULT_TARGET_SCORE
from hearts_server.logs import LogFormat, configure_logging
from hearts_tournaments.arena.sandbox import SandboxError, SandboxKind
from hearts_tournaments.cli.common import MARKUP_MODE, fail, plain_help
from hearts_tournaments.cli.lazy import LazyGroup, SubApp
from hearts_tournaments.cli.policy_options import (
    DecisionMsOption,
    JoinTimeoutMsOption,
    MaxFaultsOption,
    TimeBankMsOption,
    table_policy,
)


class _Hearts(LazyGroup):
    """The root: ``tournament``, ``league`` and ``web`` load when their command runs."""

    # A single command (``submit``) lists with the root's own commands, before the sub-apps.
    sub_apps: ClassVar[Mapping[str, SubApp]] = {
        "submit": SubApp(
            "hearts_tournaments.cli.portal:submit",
            "Pack FOLDER and submit it as your next version; prints its status until active or error."
            "\n\nExit 0 once active, 1 on error, 2 for a refused upload or a bad argument. With `--check DIR`"
            "\nnothing is sent: the bot test kit runs on the very archive (docs/BOT_TEST.md), exit 0 when"
            "\nevery check passes, 1 when one fails.",
        ),
        "bot": SubApp(
            "hearts_tournaments.cli.bot:bot_app",
            "Run a built-in bot in one seat, or test your bot the way a competition runs it.",
        ),
        "tournament": SubApp(
            "hearts_tournaments.cli.tournament:tournament_app",
            "Round-robin tournaments over the referee server: run, resume, report.",
        ),
        "league": SubApp(
            "hearts_tournaments.cli.league:league_app",
            "A continuous league: entrants added, updated and retired while games go on.",
        ),
        "runtime": SubApp(
            "hearts_tournaments.cli.runtime:runtime_app",
            'Runtimes the competition provides to bots (`runtime = "python-sdk"`): list and install them.',
        ),
        "web": SubApp(
            "hearts_tournaments.cli.web:web_app",
            "A tournament's leaderboard, games and replays in the browser: `hearts web DIR` serves it live.",
        ),
    }


#: Commands that print their results and log nothing: they skip setting up the log (structlog).
QUIET_COMMANDS = frozenset({"replay", "play", "doctor"})

plain_help()
app = typer.Typer(
    cls=_Hearts,
    rich_markup_mode=MARKUP_MODE,
    name="hearts",
    help="Cancellation Hearts: referee server, bots and round-robin tournaments.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Options that more than one command takes (the table policy's: hearts_tournaments.cli.policy_options).
# Bounded as the referee bounds a table's config (hearts_server.table.settings.LIMITS).
TargetScoreOption = Annotated[
    int, typer.Option("--target-score", min=1, max=10_000, help="The game ends when a total reaches this.")
]
PortHelp = "Port to listen on (0 to 65535); 0 picks a free one."


def _version(shown: bool) -> None:
    if shown:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("cancellation-hearts")
        except PackageNotFoundError:  # run from a checkout that is not installed
            number = "unknown"
        typer.echo(f"hearts {number}")
        raise typer.Exit(0)


@app.callback()
def _main(
    ctx: typer.Context,
    show_version: Annotated[
        bool,
        typer.Option("--version", is_eager=True, callback=_version, help="Print the version and exit."),
    ] = False,
    log_format: Annotated[
        LogFormat,
        typer.Option(
            "--log-format", help="Log lines as console text or JSON; auto picks console on a terminal."
        ),
    ] = LogFormat.AUTO,
    log_level: Annotated[
        str, typer.Option("--log-level", help="Lowest log level written to stderr.")
    ] = "INFO",
) -> None:
    if ctx.invoked_subcommand not in QUIET_COMMANDS:
        configure_logging(log_format, log_level)


@app.command()
def replay(
    files: Annotated[list[Path], typer.Argument(help="Game records or conformance vector files.")],
    seat: Annotated[
        int | None,
        typer.Option("--seat", help="Show only what seat K saw, in order, instead of the outcome."),
    ] = None,
) -> None:
    """Replay game records and print each outcome as one JSON line (conformance format).

    A file that cannot be read as a record (missing, not UTF-8 JSON, over 64 MiB, or a field of
    the wrong type or out of range that a replay does not judge) gets one line on stderr naming
    the file, the field and why; the other files are still replayed and the command exits 2. An
    illegal deal, pass or play is no error: the outcome's "error" names it. A record whose
    revealed seed does not match its commitment or its deals is reported on stderr and the
    command exits 1.
    """
    from hearts_tournaments.arena.replay import ReplayError, replay_file

    status = 0
    for path in files:
        try:
            replayed = replay_file(path, seat)
        except ReplayError as exc:
            typer.echo(f"hearts: error: {exc}", err=True)
            status = 2
            continue
        for line in replayed.lines:
            typer.echo(line)
        for problem in replayed.problems:
            typer.echo(f"hearts: error: {path}: {problem}", err=True)
            status = max(status, 1)
    raise typer.Exit(status)


@app.command()
def play(
    players: Annotated[int, typer.Option("--players", help="Table size, 6 to 11.")] = 8,
    bots: Annotated[
        str,
        typer.Option(
            "--bots",
            help="Comma-separated built-in bot names, one per seat; a shorter list is repeated to fill "
            "the table.",
        ),
    ] = "heuristic,random",
    seed: Annotated[str, typer.Option("--seed", help="Deal seed: the same seed gives the same deals.")] = "1",
    target_score: TargetScoreOption = DEFAULT_TARGET_SCORE,
    record: Annotated[
        Path | None, typer.Option("--record", help="Write the game record to this file.")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the final totals.")] = False,
) -> None:
    """Play one game in-process between built-in bots and print it readably."""
    from hearts_tournaments.arena.inprocess import PlayError, play_builtin, write_record
    from hearts_tournaments.cli.printing import print_game

    names = [b.strip() for b in bots.split(",") if b.strip()]
    try:
        game = play_builtin(names, players=players, seed=seed, target_score=target_score)
    except PlayError as exc:
        raise fail(str(exc)) from None
    print_game(game.state, game.seats, quiet=quiet)
    if record is not None:
        write_record(record, game)
        typer.echo(f"game record written to {record}")


@app.command()
def serve(
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help=PortHelp)] = 50051,
    host: Annotated[str, typer.Option("--host", help="Address to bind.")] = "127.0.0.1",
    records: Annotated[Path, typer.Option("--records", help="Folder for the game records.")] = Path("games"),
    decision_ms: DecisionMsOption = DEFAULT_DECISION_MS,
    time_bank_ms: TimeBankMsOption = DEFAULT_TIME_BANK_MS,
    max_faults: MaxFaultsOption = DEFAULT_MAX_FAULTS,
    join_timeout_ms: JoinTimeoutMsOption = DEFAULT_JOIN_TIMEOUT_MS,
    admin_token: Annotated[
        str | None,
        typer.Option(
            "--admin-token",
            envvar="HEARTS_ADMIN_TOKEN",
            help="Require this bearer token on admin calls (other processes may see it: prefer "
            "--admin-token-file).",
        ),
    ] = None,
    admin_token_file: Annotated[
        Path | None,
        typer.Option(
            "--admin-token-file",
            help="Read the admin token from this file; if it does not exist, write a fresh one there "
            "(0600) and keep it.",
        ),
    ] = None,
    open_admin: Annotated[
        bool,
        typer.Option(
            "--open-admin",
            help="No admin token: anyone who can connect may create tables and read every record. "
            "Only on a machine and network that only you can reach.",
        ),
    ] = False,
    max_tables: Annotated[
        int,
        typer.Option(
            "--max-tables", min=1, max=100_000, help="Tables waiting or playing at once; more are refused."
        ),
    ] = MAX_LIVE_TABLES,
    tls_cert: Annotated[
        Path | None, typer.Option("--tls-cert", help="PEM certificate chain: serve TLS.")
    ] = None,
    tls_key: Annotated[Path | None, typer.Option("--tls-key", help="PEM private key for --tls-cert.")] = None,
    unix: Annotated[
        Path | None,
        typer.Option("--unix", help="Also listen on this Unix socket (gRPC target unix:PATH), plaintext."),
    ] = None,
) -> None:
    """Run the referee server: tables are created over the admin API (or by the runner).

    Prints "referee listening on HOST:PORT" once it accepts connections; SIGINT or SIGTERM stop it.
    Every finished game's record is written durably to --records as it ends. The table policy
    options are the defaults of a table whose config leaves them unset.

    The admin API is closed by default: without --admin-token or --admin-token-file the referee
    makes a fresh token, writes it to $XDG_STATE_HOME/cancellation-hearts/referee-PORT.token
    (~/.local/state/... by default; 0600, removed when the referee stops) and prints that path on
    the line after the address; give it to the runner as HEARTS_ADMIN_TOKEN.
    """
    import asyncio

    from hearts_server.server import TlsFiles, make_server, serve_forever
    from hearts_tournaments.arena.admin_token import (
        AdminTokenError,
        default_token_file,
        new_token,
        read_token_file,
        remove_token_file,
        write_token_file,
    )

    if (tls_cert is None) != (tls_key is None):
        raise fail("--tls-cert and --tls-key go together")
    if open_admin and (admin_token or admin_token_file is not None):
        raise fail("--open-admin opens the admin API to everyone: give it without an admin token")
    generated = False  # a token made here, written to its file once the port is known
    try:
        if admin_token_file is not None:
            if admin_token_file.exists():
                admin_token = read_token_file(admin_token_file)
            else:
                admin_token = new_token()
                write_token_file(admin_token_file, admin_token)
                typer.echo(f"admin token written to {admin_token_file} (0600)", err=True)
        elif not admin_token and not open_admin:
            admin_token, generated = new_token(), True
    except AdminTokenError as exc:
        raise fail(str(exc)) from None
    made: Path | None = None
    tls = TlsFiles(tls_cert, tls_key) if tls_cert is not None and tls_key is not None else None
    defaults = table_policy(decision_ms, time_bank_ms, max_faults, join_timeout_ms)

    def announce(address: str) -> None:
        nonlocal made
        if generated and made is None and admin_token is not None:
            path = default_token_file(int(address.rsplit(":", 1)[1]))
            write_token_file(path, admin_token)
            made = path
        typer.echo(f"referee listening on {address}")
        if made is not None:
            typer.echo(
                f"admin token in {made} (0600, removed when the referee stops): give it to the "
                f'runner as HEARTS_ADMIN_TOKEN="$(cat {made})"'
            )
        if open_admin:
            typer.echo(
                f"hearts: warning: --open-admin: anyone who can connect to {address} can create "
                "tables and read every game record",
                err=True,
            )

    try:
        server = make_server(
            records,
            host=host,
            port=port,
            defaults=defaults,
            admin_token=admin_token or None,
            tls=tls,
            unix_socket=unix,
            open_admin=open_admin,
            max_tables=max_tables,
        )
        asyncio.run(serve_forever(server, announce))
    except AdminTokenError as exc:
        raise fail(str(exc)) from None
    except OSError as exc:
        raise fail(str(exc)) from None
    finally:
        if made is not None:
            remove_token_file(made)


@app.command()
def host(
    seats: Annotated[
        str,
        typer.Option("--seats", help="Comma-separated seats: built-in bot names, or 'external' for yours."),
    ],
    games: Annotated[int, typer.Option("--games", help="Games to play in a row.")] = 1,
    seed: Annotated[
        str | None,
        typer.Option(
            "--seed",
            help="Deal seed of the first game, later games derived from it: whoever knows it knows "
            "every deal (default: a fresh unguessable seed per game).",
        ),
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="Folder for the game records.")] = Path("games"),
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help=PortHelp)] = 0,
    target_score: TargetScoreOption = DEFAULT_TARGET_SCORE,
    decision_ms: DecisionMsOption = DEFAULT_DECISION_MS,
    time_bank_ms: TimeBankMsOption = DEFAULT_TIME_BANK_MS,
    max_faults: MaxFaultsOption = DEFAULT_MAX_FAULTS,
    join_timeout_ms: JoinTimeoutMsOption = DEFAULT_JOIN_TIMEOUT_MS,
    join_timeout: Annotated[
        float | None,
        typer.Option(
            "--join-timeout",
            min=0.001,
            max=3600,
            hidden=True,
            help="The old spelling of --join-timeout-ms, in seconds (overrides it).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines only.")] = False,
    sandbox: Annotated[
        SandboxKind,
        typer.Option("--sandbox", help="Run the built-in bots in the bwrap sandbox, or unconfined (none)."),
    ] = SandboxKind.BWRAP,
) -> None:
    """Host games between built-in bots and your own: prints the address and a token file per external seat.

    Each seat's token is in its own file, readable by you only (0600, in a private temporary
    folder removed at the end), and never printed: start your bot with the printed command,
    `--server ADDRESS --token-file PATH` (or HEARTS_TOKEN_FILE=PATH), not with the token on its
    command line, where other processes could read it. The referee also listens on a Unix
    socket (printed; `--server unix:PATH`, as a tournament's sandboxed bot gets it). With --json
    the first line is {"address": ..., "unix": "unix:PATH", "seats": [{"seat": K, "token_file":
    PATH, "command": ..., "unix_command": ...}]} and the last line holds the results. Without
    --seed every game's deals come from a fresh unguessable seed.
    """
    import asyncio

    from hearts_core.errors import HeartsError
    from hearts_tournaments.arena.host import (
        HostError,
        HostOptions,
        host_games,
        invitation_lines,
        parse_seats,
        result_line,
    )

    try:
        parsed = parse_seats(seats)
    except (HeartsError, ValueError) as exc:
        raise fail(str(exc)) from None
    if games < 1:
        raise fail("--games must be at least 1")
    options = HostOptions(
        seats=parsed,
        games=games,
        seed=seed,
        out=out,
        port=port,
        target_score=target_score,
        policy=table_policy(
            decision_ms,
            time_bank_ms,
            max_faults,
            round(join_timeout * 1000) if join_timeout is not None else join_timeout_ms,
        ),
        sandbox=sandbox,
    )

    def emit(line: str) -> None:
        for shown in [line] if as_json else invitation_lines(line):
            typer.echo(shown)

    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    try:
        results = asyncio.run(host_games(options, emit))
    except (OSError, SandboxError, HostError) as exc:
        raise fail(str(exc)) from None
    if as_json:
        typer.echo(json.dumps({"games": results}))
    else:
        for game in results:
            typer.echo(result_line(game))


@app.command()
def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of lines.")] = False,
) -> None:
    """Show which isolation features this machine offers and which the tournament runner uses.

    Then what else bots and tests need here: each example bot's toolchain, Chromium for the web
    tests, the SDK, whether `python` from PATH starts inside the sandbox and imports the SDK, and
    which runtimes bots may name are installed here (`hearts runtime list`).
    """
    from hearts_tournaments.arena.sandbox import machine_features, runner_choice
    from hearts_tournaments.cli.doctor import more_features

    features = machine_features()
    choice = runner_choice(features)
    checks = more_features()
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "features": [f.to_json() for f in features],
                    "runner": choice,
                    "checks": [c.to_json() for c in checks],
                }
            )
        )
        return
    for feature in (*features, *checks):
        typer.echo(feature.line())
    typer.echo(
        f"{'runner:':<22} sandbox {choice['sandbox']}, memory cap by the {choice['memory_cap']}, "
        f"rlimits by {choice['rlimits']}"
    )


def main() -> None:
    """Entry point of the ``hearts`` console script.

    A mistake on the command line (an unknown option, a value out of range) gets the same one
    line as every other error, ``hearts: error: ...``, and exit 2.
    """
    try:
        status = app(prog_name="hearts", standalone_mode=False)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:
        # click's UsageError and BadParameter (click itself or the copy typer carries).
        message, code = getattr(exc, "format_message", None), getattr(exc, "exit_code", None)
        if message is None or not isinstance(code, int):
            raise
        context = getattr(exc, "ctx", None)
        see = f" (see `{context.command_path} --help`)" if context is not None else ""
        typer.echo(f"hearts: error: {message()}{see}", err=True)
        sys.exit(code)
    sys.exit(status if isinstance(status, int) else 0)
