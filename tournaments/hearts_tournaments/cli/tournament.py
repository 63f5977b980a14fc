"""``hearts tournament``: run, resume and report round-robin tournaments.

A thin shell: each command parses its options and calls the library
(:mod:`hearts_tournaments.tournament.runner`, :mod:`hearts_tournaments.tournament.results`,
:mod:`hearts_tournaments.tournament.report`). A mistake the user can make (config, folder, an entrant that
cannot start) ends with one line on stderr and exit 2; a tournament that cannot go on (referee
unreachable) exits 1 and keeps every finished game, ready for ``resume``; a tournament that
finished but where an entrant failed a game (crashed, never answered, retired, quarantined)
exits 3; Ctrl-C exits 130, also resumable.
"""

from __future__ import annotations

import enum
import shlex
import sys
import time
from collections.abc import Collection
from pathlib import Path
from typing import Annotated

import typer

from hearts_tournaments.arena.sandbox import SandboxError
from hearts_tournaments.arena.seeds import (
    ADMIN_TOKEN_ENV,
    DealSecretError,
    read_deal_secret,
    take_env_secret,
)
from hearts_tournaments.arena.snapshot import SnapshotError
from hearts_tournaments.cli.common import MARKUP_MODE, AlphaOption, fail, log_to_file, print_audit
from hearts_tournaments.cli.signed import GamesOption, HeadOption, signed_line
from hearts_tournaments.results.audit import ALPHA
from hearts_tournaments.results.signing import PUBLISHED, SigningError, signing_key_for
from hearts_tournaments.results.stats.luck import LuckError
from hearts_tournaments.results.stop import Terminated
from hearts_tournaments.results.store import StoreError
from hearts_tournaments.results.where import SERVER_PATTERN, ExecutorKind
from hearts_tournaments.tournament.audit import audit_tournament
from hearts_tournaments.tournament.config import (
    ConfigError,
    TournamentConfig,
    demo_config_text,
    load_config,
    parse_config,
)
from hearts_tournaments.tournament.config_diff import config_changes
from hearts_tournaments.tournament.folder import Tournament, create_tournament, open_tournament, schedule_for
from hearts_tournaments.tournament.preflight import CHECK_LOG, preflight
from hearts_tournaments.tournament.progress import ProgressReporter
from hearts_tournaments.tournament.report import ReportFormat, render
from hearts_tournaments.tournament.results import deal_warnings
from hearts_tournaments.tournament.runner import (
    RunnerError,
    external_token_missing,
    run_tournament,
    tournament_standings,
)
from hearts_tournaments.tournament.schedule import Schedule, suggest_deals
from hearts_tournaments.tournament.snapshots import check_sandbox, snapshot_bots, snapshots_taken
from hearts_tournaments.tournament.store import Store
from hearts_tournaments.tournament.verify import verify_tournament

tournament_app = typer.Typer(
    rich_markup_mode=MARKUP_MODE,
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
AllowBrokenOption = Annotated[
    bool,
    typer.Option(
        "--allow-broken",
        help="Play even when the pre-flight check finds entrants that cannot start (the referee "
        "then plays their seats, and they are marked in the standings).",
    ),
]
#: The exit status of a tournament that finished while some entrant failed a game.
EXIT_ENTRANT_FAILED = 3


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
    allow_broken: AllowBrokenOption = False,
) -> None:
    """Schedule and run a tournament, then print the ranked standings.

    First every command entrant is started once in its sandbox (as `hearts tournament check`
    does); one that cannot play stops the run before anything is scheduled, unless --allow-broken.
    Exit status: 0 every entrant played, 3 finished but an entrant failed a game, 1 stopped
    (resumable), 2 a mistake in the config or the command line.
    """
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
    _check_signing_key(folder)
    _check_external_referee(settings)
    _check_sandbox(settings, folder)
    if not (fresh or demo) and Store.path_in(folder).exists():
        raise fail(
            f"{folder} already holds a tournament: continue it with `hearts tournament resume "
            f"{folder}`, or add --fresh to start it over"
        )
    _preflight(settings, folder, allow_broken)
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
    if demo:
        _print_next_steps(folder)


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
    allow_broken: AllowBrokenOption = False,
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
        _check_signing_key(folder)
        _check_external_referee(tournament.config)
        _check_sandbox(tournament.config, folder, snapshots_taken(tournament.store))
        if tournament.store.finished_keys() != {g.key for g in tournament.store.schedule().games}:
            # Checked as they will play: from the snapshots the tournament took when it started.
            try:
                playing, _ = snapshot_bots(tournament.config, folder, snapshots_taken(tournament.store))
            except (SandboxError, SnapshotError) as exc:
                raise fail(str(exc)) from None
            _preflight(playing, folder, allow_broken, resume=True)
    except typer.Exit:
        tournament.store.close()
        raise
    _run(tournament, concurrency, progress, executor, ray_address)


@tournament_app.command("check")
def check_command(
    config: Annotated[Path, typer.Argument(help="The tournament's TOML file.")],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Where a failing entrant's log goes (default: tournament.output)."
        ),
    ] = None,
) -> None:
    """Check that every entrant can play, without running the tournament.

    The config is read and checked; then each command entrant's program and scripts must exist
    and be inside what its sandbox shows it, and the entrant must pass the quick levels of the
    bot test kit (`hearts bot test --level process --level session`) in its real sandbox, with
    the tournament's limits. Prints one line per entrant; exits 1 if any cannot play (each named
    with its first failed check, the cause and the fix, on stderr). An entrant that fails only
    checks that do not stop play (a late answer, no second answer after a rejection) is ok, with
    a warning: it plays, and the referee answers for it where it fails.
    """
    try:
        settings, _ = load_config(config)
    except ConfigError as exc:
        raise fail(f"{config}: {exc}") from None
    folder = output or settings.output
    _check_sandbox(settings, folder)
    with log_to_file(folder / CHECK_LOG):
        found = preflight(settings.play_settings(), folder / "logs", concurrency=settings.concurrency)
    problems = found.problems
    failing = {p.bot for p in problems}
    warned = {w.bot: w for w in found.warnings}
    for problem in problems:
        typer.echo(f"hearts: error: {problem.line()}", err=True)
    for warning in found.warnings:
        typer.echo(f"hearts: warning: {warning.line()}", err=True)
    commands = [s for s in settings.bots if s.command is not None]
    for spec in settings.bots:
        if spec.name in failing:
            continue
        if spec.name in warned:
            names = ", ".join(c.name for c in warned[spec.name].failed)
            typer.echo(f"{spec.name}: ok, with warnings (plays; fails {names})")
            continue
        how = "built-in" if spec.command is None else "passes the bot test kit's quick levels in its sandbox"
        typer.echo(f"{spec.name}: ok ({how})")
    if problems:
        typer.echo(
            f"hearts: error: {len(problems)} of {len(commands)} command entrants cannot play", err=True
        )
        raise typer.Exit(1)


@tournament_app.command("report")
def report_command(
    folder: Annotated[Path, typer.Argument(help="The tournament's output folder.")],
    fmt: Annotated[ReportFormat, typer.Option("--format", "-f", help="Output form.")] = ReportFormat.TABLE,
    luck_correction: Annotated[
        bool | None,
        typer.Option(
            "--luck-correction/--no-luck-correction",
            help="Correct the standings for luck, or not, whatever the config's luck_correction says "
            "(docs/TOURNAMENTS.md, Luck correction); such standings are not kept in standings.json.",
        ),
    ] = None,
) -> None:
    """Print the standings of a tournament (finished or not).

    They are computed once per set of games and kept in FOLDER/standings.json: a report of
    the same games reads them from there (`verify` never does).
    """
    tournament = _open(folder)
    with tournament.store:
        try:
            standings = tournament_standings(tournament, cached=True, luck_correction=luck_correction)
        except LuckError as exc:
            raise fail(f"{folder}: no luck correction: {exc}") from None
    text = render(standings, fmt)
    if text is not None:
        sys.stdout.write(text)
    if fmt in (ReportFormat.TABLE, ReportFormat.MARKDOWN):
        _print_signed(folder)


@tournament_app.command("verify")
def verify_command(
    folder: Annotated[Path, typer.Argument(help="The tournament's output folder.")],
    public_key: Annotated[
        str | None,
        typer.Option(
            "--public-key",
            metavar="KEY|FILE",
            help="The key the games must be signed by, as printed with the standings (ed25519:...), or "
            "the published published.json (its game count and chain head are checked too). Default: the "
            "organiser's key on this machine, else the key the folder names (said so).",
        ),
    ] = None,
    games: GamesOption = None,
    head: HeadOption = None,
) -> None:
    """Check every stored game against its record, seed and signature, and the standings against the records.

    Prints one line per problem and exits 1 if there is any; else a summary line and exit 0. The
    summary says whether the tournament is complete against its schedule, and whether the count
    and chain head were checked against ones published outside the folder (--games and --head as
    printed with the standings, or --public-key published.json): without them, games dropped
    from the end with an earlier published.json put back are not seen.
    """
    tournament = _open(folder)
    with tournament.store:
        try:
            verification = verify_tournament(tournament, public_key, games, head)
        except (StoreError, SigningError) as exc:
            raise fail(str(exc)) from None
    for problem in verification.problems:
        typer.echo(problem)
    typer.echo(verification.summary())
    raise typer.Exit(0 if verification.ok else 1)


@tournament_app.command("audit")
def audit_command(
    folder: Annotated[Path, typer.Argument(help="The tournament's output folder.")],
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object instead of text.")] = False,
    alpha: AlphaOption = ALPHA,
) -> None:
    """Fair-play audit: which pairs of bots play as if on one side (docs/FAIR_PLAY.md).

    For every ordered pair of bots, from the stored records: where the first throws its points
    (onto the other's tricks, against the rest) and how it fares with the other at its table
    (against without), each a test corrected for the number of pairs (Holm). Exits 1 when a
    pair is flagged, else 0.
    """
    try:
        report = audit_tournament(folder, alpha)
    except StoreError as exc:
        raise fail(str(exc)) from None
    except ConfigError as exc:
        raise fail(f"{folder}: the stored configuration no longer reads: {exc}") from None
    print_audit(report, json_out)


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


def _check_sandbox(config: TournamentConfig, output: Path, snapshotted: Collection[str] = ()) -> None:
    """Prints the warnings of bots without a sandbox; exits 2 when the sandbox cannot be had."""
    try:
        warnings = check_sandbox(config, output, snapshotted)
    except SandboxError as exc:
        raise fail(str(exc)) from None
    for warning in warnings:
        typer.echo(f"hearts: {warning}", err=True)


def _preflight(config: TournamentConfig, output: Path, allow_broken: bool, resume: bool = False) -> None:
    """The pre-flight check: one line per entrant that cannot play; exits 2 unless allowed."""
    if all(spec.command is None for spec in config.bots):
        return  # built-in bots only: nothing to start before the first game
    with log_to_file(output / CHECK_LOG):
        found = preflight(config.play_settings(), output / "logs", concurrency=config.concurrency)
    for warning in found.warnings:
        typer.echo(f"hearts: warning: {warning.line()}", err=True)
    problems = found.problems
    if not problems:
        return
    kind = "warning" if allow_broken else "error"
    for problem in problems:
        typer.echo(f"hearts: {kind}: {problem.line()}", err=True)
    if allow_broken:
        typer.echo(
            f"hearts: warning: playing anyway (--allow-broken): the referee plays the seats of "
            f"{', '.join(p.bot for p in problems)}",
            err=True,
        )
        return
    again = f"hearts tournament resume {output}" if resume else "the same command"
    raise fail(
        f"{len(problems)} entrant(s) cannot play and nothing was played: fix them and run {again} "
        "again, or add --allow-broken to play with the referee in their seats"
    )


def _check_signing_key(output: Path) -> None:
    """Exits 2 when the organiser's signing key cannot be had or is refused (before anything is
    scheduled or played; the runner makes the key on first use)."""
    try:
        signing_key_for(output)
    except SigningError as exc:
        raise fail(str(exc)) from None


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
    # A gauntlet seats its candidate at every deal: its pairs are unequal by design; with teams
    # no other deal count is searched for.
    if gauntlet or balance.pair_spread <= 1 or bots <= size or balance.teams:
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
    if ray_address and ray_address != "auto" and not SERVER_PATTERN.fullmatch(ray_address):
        tournament.store.close()
        raise fail(f'--ray-address must be "host:port" of the Ray head, or "auto", not {ray_address!r}')
    if (executor or tournament.config.executor) is ExecutorKind.RAY and tournament.config.server:
        tournament.store.close()
        raise fail("--executor ray cannot play on tournament.server: each Ray node starts its own referee")
    bar = progress is ProgressMode.ALWAYS or (progress is ProgressMode.AUTO and sys.stderr.isatty())
    with tournament.store, log_to_file(output / "runner.log"), ProgressReporter(bar) as reporter:
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
    _print_signed(output)
    failed = [line for line in standings.standings if line.failed_games or line.never_played]
    if failed:
        names = ", ".join(f"{line.bot} ({line.failed_games} failed games)" for line in failed)
        typer.echo(
            f"hearts: error: entrants failed games: {names}; their logs are in {output / 'logs'}", err=True
        )
        raise typer.Exit(EXIT_ENTRANT_FAILED)


def _print_next_steps(folder: Path) -> None:
    """The demo's last lines: where a newcomer goes from here, as commands to type."""
    typer.echo(
        "\nnext:\n"
        f"  watch its games in a browser:      hearts web {shlex.quote(str(folder))}\n"
        "  write a bot:                       docs/WRITING_A_BOT.md (Python), clients/LANGUAGE/README.md\n"
        "  test it as a competition runs it:  hearts bot test -- python my_bot.py  (docs/BOT_TEST.md)"
    )


def _print_signed(output: Path) -> None:
    """The line that binds the standings to the organiser's key: key, count and chain head, and
    the check anyone can run with them (which sees games dropped from the end)."""
    line = signed_line(output / PUBLISHED, "hearts tournament verify FOLDER")
    if line is not None:
        typer.echo(line)


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
