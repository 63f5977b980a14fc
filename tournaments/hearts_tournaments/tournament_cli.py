"""``hearts tournament``: run, resume and report round-robin tournaments.

A thin shell: each command parses its options and calls the library (:mod:`.runner`,
:mod:`.results`, :mod:`.report`). A mistake the user can make (config, folder) ends with one
line on stderr and exit 2; a tournament that cannot go on (referee unreachable) exits 1 and
keeps every finished game, ready for ``resume``; Ctrl-C exits 130, also resumable.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from hearts_server.logs import LogFormat, configure_logging
from hearts_tournaments.cli_common import fail
from hearts_tournaments.config import (
    SERVER_PATTERN,
    ConfigError,
    ExecutorKind,
    TournamentConfig,
    demo_config_text,
    load_config,
    parse_config,
)
from hearts_tournaments.config_diff import config_changes
from hearts_tournaments.progress import ProgressReporter
from hearts_tournaments.report import ReportFormat, render
from hearts_tournaments.results import deal_warnings
from hearts_tournaments.runner import (
    RunnerError,
    Terminated,
    Tournament,
    check_sandbox,
    create_tournament,
    external_token_missing,
    open_tournament,
    run_tournament,
    schedule_for,
    tournament_standings,
)
from hearts_tournaments.sandbox import SandboxError
from hearts_tournaments.schedule import Schedule, suggest_deals
from hearts_tournaments.store import StoreError
from hearts_tournaments.tournament_secrets import (
    ADMIN_TOKEN_ENV,
    DealSecretError,
    read_deal_secret,
    take_env_secret,
)
from hearts_tournaments.verify import verify_tournament

tournament_app = typer.Typer(
    name="tournament",
    help="Round-robin tournaments over the referee server: run, resume, report.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

#: Where ``--demo`` writes unless ``--output`` says otherwise.
DEMO_OUTPUT = Path("runs/demo")


class ProgressMode(enum.StrEnum):
    """When to draw the progress bar."""

    AUTO = "auto"
    ALWAYS = "always"
    NEVER = "never"


ConcurrencyOption = Annotated[
    int | None,
    typer.Option("--concurrency", "-j", min=1, help="Tables played at once (default: the config's)."),
]
ExecutorOption = Annotated[
    ExecutorKind | None,
    typer.Option(
        "--executor",
        help="Where the games are played: local (this machine) or ray (a Ray cluster, "
        "docs/DISTRIBUTED.md). Default: the config's executor.",
    ),
]
RayAddressOption = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        help='With --executor ray: the Ray head "host:port", or "auto"; "" starts a Ray on this '
        "machine. Default: the config's ray_address.",
    ),
]
ProgressOption = Annotated[
    ProgressMode,
    typer.Option("--progress", help="Progress bar on stderr: auto draws it on a terminal only."),
]


@tournament_app.command("run")
def run_command(
    config: Annotated[
        Path | None, typer.Argument(help="The tournament's TOML file (see docs/TOURNAMENTS.md).")
    ] = None,
    demo: Annotated[
        bool, typer.Option("--demo", help="Run the embedded demo: the built-in bots, about a minute.")
    ] = False,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Output folder (default: tournament.output).")
    ] = None,
    fresh: Annotated[
        bool,
        typer.Option(
            "--fresh", help="Replace a tournament already in the output folder (--demo always does)."
        ),
    ] = False,
    deal_secret_file: Annotated[
        Path | None,
        typer.Option(
            "--deal-secret-file",
            help="Seed the deals from this secret (64 hex digits; or env HEARTS_DEAL_SECRET) to replay "
            "another tournament's deals. Default: a fresh secret, kept in the output folder's "
            "database. Never put it in the config: bots may read that.",
        ),
    ] = None,
    concurrency: ConcurrencyOption = None,
    executor: ExecutorOption = None,
    ray_address: RayAddressOption = None,
    progress: ProgressOption = ProgressMode.AUTO,
) -> None:
    """Schedule and run a tournament, then print the ranked standings."""
    if demo == (config is not None):
        raise fail("give a tournament config file, or --demo (not both)")
    try:
        secret = read_deal_secret(deal_secret_file)
    except DealSecretError as exc:
        raise fail(str(exc)) from None
    try:
        if config is not None:
            settings, text = load_config(config)
        else:
            text = demo_config_text()
            settings = parse_config(text, Path.cwd(), default_name="demo")
    except ConfigError as exc:
        raise fail(f"{config or 'demo'}: {exc}") from None
    folder = output or (DEMO_OUTPUT if demo else settings.output)
    _check_external_referee(settings)
    _check_sandbox(settings, folder)
    say = _Stopwatch(err=True)
    try:
        tournament = create_tournament(
            settings,
            text,
            folder,
            fresh=fresh or demo,
            deal_secret=secret,
            progress=say,
            config_path=config,
        )
    except StoreError as exc:
        raise fail(str(exc)) from None
    say(f"scheduled in {say.elapsed():.1f} s")
    _print_balance(tournament.store.schedule(), say, gauntlet=tournament.config.gauntlet is not None)
    _run(tournament, concurrency, progress, executor, ray_address)


@tournament_app.command("resume")
def resume_command(
    folder: Annotated[Path, typer.Argument(help="The tournament's output folder.")],
    concurrency: ConcurrencyOption = None,
    executor: ExecutorOption = None,
    ray_address: RayAddressOption = None,
    progress: ProgressOption = ProgressMode.AUTO,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="Compare this config file with the stored configuration and say what changed "
            "(default: the file the tournament was created from, if it is still there).",
        ),
    ] = None,
) -> None:
    """Continue a stopped tournament where it stopped, then print the standings.

    Finished games are never replayed; games that were running when it stopped are played again
    from the start. It always plays the configuration stored in FOLDER: when the config file was
    edited since, it says so and names what changed (start over with `run --fresh` to use it).
    """
    tournament = _open(folder)
    try:
        _warn_if_edited(tournament, folder, config)
    except typer.Exit:
        tournament.store.close()
        raise
    try:
        _check_external_referee(tournament.config)
        _check_sandbox(tournament.config, folder)
    except typer.Exit:
        tournament.store.close()
        raise
    _run(tournament, concurrency, progress, executor, ray_address)


@tournament_app.command("report")
def report_command(
    folder: Annotated[Path, typer.Argument(help="The tournament's output folder.")],
    fmt: Annotated[ReportFormat, typer.Option("--format", "-f", help="Output form.")] = ReportFormat.TABLE,
) -> None:
    """Print the standings of a tournament (finished or not)."""
    tournament = _open(folder)
    with tournament.store:
        standings = tournament_standings(tournament)
    text = render(standings, fmt)
    if text is not None:
        sys.stdout.write(text)


@tournament_app.command("verify")
def verify_command(
    folder: Annotated[Path, typer.Argument(help="The tournament's output folder.")],
) -> None:
    """Check every stored game against its record and seed, and the standings against the records.

    Prints one line per problem and exits 1 if there is any; else a summary line and exit 0.
    """
    tournament = _open(folder)
    with tournament.store:
        try:
            verification = verify_tournament(tournament)
        except StoreError as exc:
            raise fail(str(exc)) from None
    for problem in verification.problems:
        typer.echo(problem)
    typer.echo(verification.summary())
    raise typer.Exit(0 if verification.ok else 1)


@tournament_app.command("schedule")
def schedule_command(
    config: Annotated[Path, typer.Argument(help="The tournament's TOML file.")],
    games: Annotated[
        bool, typer.Option("--games/--no-games", help="List every game (key and seats) before the summary.")
    ] = True,
) -> None:
    """Print a tournament's schedule, its balance and what balance is possible, without playing it."""
    try:
        settings, _ = load_config(config)
    except ConfigError as exc:
        raise fail(f"{config}: {exc}") from None
    say = _Stopwatch(err=False)
    schedule = schedule_for(settings, progress=say)
    say(f"scheduled in {say.elapsed():.1f} s")
    if games:
        for game in schedule.games:
            typer.echo(f"{game.key}  " + " ".join(game.seats))
    _print_balance(schedule, say, gauntlet=settings.gauntlet is not None)


class _Stopwatch:
    """Prints ``schedule: [12.3 s] line`` on stdout or stderr: the design never runs silently."""

    def __init__(self, err: bool) -> None:
        self.err = err
        self.start = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def __call__(self, line: str) -> None:
        typer.echo(f"schedule: [{self.elapsed():5.1f} s] {line}", err=self.err)

    def warn(self, line: str) -> None:
        """A warning: always on stderr."""
        typer.echo(f"schedule: [{self.elapsed():5.1f} s] warning: {line}", err=True)


def _open(folder: Path) -> Tournament:
    try:
        return open_tournament(folder)
    except StoreError as exc:
        raise fail(str(exc)) from None
    except ConfigError as exc:
        raise fail(f"{folder}: the stored configuration no longer reads: {exc}") from None


def _check_sandbox(config: TournamentConfig, output: Path) -> None:
    """Prints the warnings of bots without a sandbox; exits 2 when the sandbox cannot be had."""
    try:
        warnings = check_sandbox(config, output)
    except SandboxError as exc:
        raise fail(str(exc)) from None
    for warning in warnings:
        typer.echo(f"hearts: {warning}", err=True)


def _check_external_referee(config: TournamentConfig) -> None:
    """Exits 2 when the config names an external referee and its admin token is not given."""
    if config.server and not take_env_secret(ADMIN_TOKEN_ENV):
        raise fail(external_token_missing(config.server))


def _print_balance(schedule: Schedule, say: _Stopwatch, gauntlet: bool = False) -> None:
    """The balance report, and when pairs are not within one, the nearest deal count that is."""
    balance = schedule.balance()
    for line in balance.lines():
        say(line)
    for warning in deal_warnings(balance):
        say.warn(warning)
    bots, size, deals = len(schedule.bots), schedule.table_size, len(schedule.seatings)
    # A gauntlet seats its candidate at every deal: its pairs are unequal by design.
    if gauntlet or balance.pair_spread <= 1 or bots <= size:
        return
    # The hint is a search too: bounded (constructions, few local searches) and timed.
    say("looking for the smallest larger deal count that balances pairs within one")
    started = say.elapsed()
    better = suggest_deals(bots, size, deals, schedule.seed)
    took = say.elapsed() - started
    hint = f"deals = {better} is balanced within one" if better else "no larger deal count tried is"
    say.warn(
        f"{bots} bots at tables of {size} do not meet equally often (within one) on "
        f"{deals} deals; {hint} (searched {took:.1f} s)"
    )


def _run(
    tournament: Tournament,
    concurrency: int | None,
    progress: ProgressMode,
    executor: ExecutorKind | None = None,
    ray_address: str | None = None,
) -> None:
    output = tournament.output
    if ray_address and ray_address != "auto" and not SERVER_PATTERN.match(ray_address):
        tournament.store.close()
        raise fail(f'--ray-address must be "host:port" of the Ray head, or "auto", not {ray_address!r}')
    if (executor or tournament.config.executor) is ExecutorKind.RAY and tournament.config.server:
        tournament.store.close()
        raise fail("--executor ray cannot play on tournament.server: each Ray node starts its own referee")
    bar = progress is ProgressMode.ALWAYS or (progress is ProgressMode.AUTO and sys.stderr.isatty())
    with tournament.store, _log_to(output / "runner.log"), ProgressReporter(bar) as reporter:
        try:
            standings = run_tournament(tournament, concurrency, reporter, executor, ray_address)
        except (RunnerError, StoreError) as exc:
            raise fail(
                f"{exc}; the finished games are kept: `hearts tournament resume {output}`", 1
            ) from None
        except KeyboardInterrupt:
            typer.echo(f"interrupted; continue with `hearts tournament resume {output}`", err=True)
            raise typer.Exit(130) from None
        except Terminated:
            typer.echo(f"terminated; continue with `hearts tournament resume {output}`", err=True)
            raise typer.Exit(143) from None
    # The notes under the tables end with the warnings (bots not separated, too few deals).
    render(standings, ReportFormat.TABLE)


@contextlib.contextmanager
def _log_to(path: Path) -> Iterator[None]:
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


def _warn_if_edited(tournament: Tournament, folder: Path, given: Path | None) -> None:
    """Tells the organiser when the config file differs from the configuration ``resume`` plays."""
    path = given or tournament.store.config_path
    if path is None:
        return
    try:
        current = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        if given is not None:
            raise fail(f"cannot read --config {given}: {exc}") from None
        return  # the file is gone: nothing to compare with
    changes = config_changes(tournament.store.config_text, current)
    if not changes:
        return
    typer.echo(
        f"warning: {path} was edited since this tournament was created; resume ignores the edits and "
        f"plays the configuration stored in {folder} (to play the new one, start over with "
        f"`hearts tournament run {path} --output {folder} --fresh`). What changed:",
        err=True,
    )
    for change in changes:
        typer.echo(f"  {change}", err=True)
