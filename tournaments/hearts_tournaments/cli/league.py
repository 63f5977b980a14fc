"""``hearts league``: a continuous league (see docs/LEAGUE.md).

A thin shell over :mod:`hearts_tournaments.league.commands`.

A mistake the user can make ends with one line on stderr and exit 2; Ctrl-C stops ``run``
with exit 130, losing only the block being played.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from hearts_core.defaults import (
    DEFAULT_DECISION_MS,
    DEFAULT_JOIN_TIMEOUT_MS,
    DEFAULT_MAX_FAULTS,
    DEFAULT_TIME_BANK_MS,
)
from hearts_core.rules import DEFAULT_MAX_HANDS, DEFAULT_TARGET_SCORE
from hearts_tournaments.arena import runtimes
from hearts_tournaments.arena.seeds import DealSecretError, read_deal_secret
from hearts_tournaments.cli.common import MARKUP_MODE, AlphaOption, fail, log_to_file, print_audit
from hearts_tournaments.cli.policy_options import (
    DecisionMsOption,
    JoinTimeoutMsOption,
    MaxFaultsOption,
    TimeBankMsOption,
    table_policy,
)
from hearts_tournaments.cli.signed import GamesOption, HeadOption, signed_line
from hearts_tournaments.league import commands
from hearts_tournaments.league.config import LeagueConfig, LeagueError, check_executor
from hearts_tournaments.league.final import FINAL_REPORT, begin_final, report_line, run_final
from hearts_tournaments.league.play import StopAfter, play_settings, run_league
from hearts_tournaments.league.rating_models import DEFAULT_RATING, RATING_MODELS
from hearts_tournaments.league.store import HEADS, LeagueStore
from hearts_tournaments.portal.accounts import name_refusal
from hearts_tournaments.results.audit import ALPHA
from hearts_tournaments.results.signing import PUBLISHED, SigningError, signing_key_for
from hearts_tournaments.results.where import ExecutorKind
from hearts_tournaments.tournament.preflight import preflight

league_app = typer.Typer(
    rich_markup_mode=MARKUP_MODE,
    help="A continuous league: entrants added, updated and retired while games go on.",
    no_args_is_help=True,
)

#: The log of `hearts league run` in the league folder (JSON lines, 0600).
LEAGUE_LOG = "league.log"

Folder = Annotated[Path, typer.Argument(help="The league folder.")]
Name = Annotated[str, typer.Argument(help="The entrant's name (NAME, or NAME@vN for one version).")]
CommandOption = Annotated[str | None, typer.Option("--command", help="The command that starts the bot.")]
BuiltinOption = Annotated[str | None, typer.Option("--builtin", help="A built-in bot's name.")]
OptionOption = Annotated[list[str] | None, typer.Option("--option", help="KEY=VALUE for a built-in bot.")]
FilesOption = Annotated[list[Path] | None, typer.Option("--files", help="Files the bot sees in its sandbox.")]
SandboxOption = Annotated[str | None, typer.Option("--sandbox", help="bwrap or none (trusted bots only).")]
ProtocolOption = Annotated[str, typer.Option("--protocol", help="grpc or stdio, for a command bot.")]
RuntimeOption = Annotated[
    str | None,
    typer.Option(
        "--runtime",
        help=f"A runtime the competition provides, for a command bot: {runtimes.names()} "
        "(`hearts runtime list`).",
    ),
]
RayAddressHelp = 'With executor ray: the Ray head "host:port", or "auto"; "" starts a Ray on this machine.'
TeamOption = Annotated[
    str | None,
    typer.Option(
        "--team",
        help="The entrant's team: it never sits at a table with another of its team "
        '(docs/FAIR_PLAY.md); "" leaves its team.',
    ),
]
AllowBrokenOption = Annotated[
    bool,
    typer.Option("--allow-broken", help="Add it even when the pre-flight check finds it cannot play."),
]


def _open(folder: Path) -> LeagueStore:
    try:
        return LeagueStore.open(folder)
    except LeagueError as exc:
        raise fail(str(exc)) from None


@league_app.command()
def init(
    folder: Folder,
    table_size: Annotated[int, typer.Option("--table-size", help="Seats per table, 6 to 11.")] = 6,
    seed: Annotated[str, typer.Option("--seed", help="Seeds every block's deal and seating.")] = "1",
    name: Annotated[str, typer.Option("--name", help="The league's name.")] = "league",
    decision_ms: DecisionMsOption = DEFAULT_DECISION_MS,
    time_bank_ms: TimeBankMsOption = DEFAULT_TIME_BANK_MS,
    target_score: Annotated[
        int, typer.Option("--target-score", help="A game ends at this total.")
    ] = DEFAULT_TARGET_SCORE,
    max_hands: Annotated[
        int, typer.Option("--max-hands", help="... or after this many hands.")
    ] = DEFAULT_MAX_HANDS,
    max_faults: MaxFaultsOption = DEFAULT_MAX_FAULTS,
    join_timeout_ms: JoinTimeoutMsOption = DEFAULT_JOIN_TIMEOUT_MS,
    quarantine_after: Annotated[
        int, typer.Option("--quarantine-after", help="Failed games before quarantine.")
    ] = 3,
    sandbox: Annotated[str, typer.Option("--sandbox", help="bwrap (default) or none.")] = "bwrap",
    reuse: Annotated[str, typer.Option("--reuse", help="Bot process reuse policy: fresh.")] = "fresh",
    provisional_blocks: Annotated[
        int, typer.Option("--provisional-blocks", help="Blocks before a rating can stop being provisional.")
    ] = 8,
    lane_blocks: Annotated[
        int,
        typer.Option(
            "--lane-blocks",
            help="Priority lane: a new or updated version plays its first this many blocks before "
            "anyone else (0: no lane; at most --provisional-blocks).",
        ),
    ] = 2,
    provisional_width: Annotated[
        float, typer.Option("--provisional-width", help="Interval width below which it stops.")
    ] = 1.0,
    bootstrap: Annotated[
        int, typer.Option("--bootstrap", help="Bootstrap resamples of the official table.")
    ] = 200,
    deal_secret_file: Annotated[
        Path | None, typer.Option("--deal-secret-file", help="Reuse a deal secret (64 hex digits).")
    ] = None,
    executor: Annotated[
        ExecutorKind,
        typer.Option(
            "--executor",
            help="Where run plays the games: local (this machine) or ray (a Ray cluster, "
            "docs/DISTRIBUTED.md); run --executor overrides it.",
        ),
    ] = ExecutorKind.LOCAL,
    ray_address: Annotated[
        str, typer.Option("--ray-address", help=RayAddressHelp + " run --ray-address overrides it.")
    ] = "",
    hide_names: Annotated[
        bool,
        typer.Option(
            "--hide-names",
            help="Bots see neutral labels (seat-3) instead of their table-mates' names (docs/FAIR_PLAY.md).",
        ),
    ] = False,
    rating: Annotated[
        str,
        typer.Option(
            "--rating",
            help="The online rating model (matchmaking and the online columns; fixed once a block "
            f"is stored): {', '.join(RATING_MODELS)} (docs/LEAGUE.md).",
        ),
    ] = DEFAULT_RATING,
) -> None:
    """Create a league in FOLDER with these settings (fixed for its life; `run --executor` and
    `--ray-address` override where it plays)."""
    try:
        config = LeagueConfig(
            name=name,
            table_size=table_size,
            seed=seed,
            policy=table_policy(decision_ms, time_bank_ms, max_faults, join_timeout_ms),
            target_score=target_score,
            max_hands=max_hands,
            quarantine_after=quarantine_after,
            sandbox=sandbox,
            reuse=reuse,
            provisional_blocks=provisional_blocks,
            lane_blocks=lane_blocks,
            provisional_width=provisional_width,
            bootstrap=bootstrap,
            executor=executor.value,
            ray_address=ray_address,
            hide_names=hide_names,
            rating=rating,
        )
        secret = read_deal_secret(deal_secret_file)
        commands.init_league(folder, config, secret).close()
    except (LeagueError, DealSecretError) as exc:
        raise fail(str(exc)) from None
    typer.echo(
        f"league created in {folder}: add entrants with `hearts league add {folder} NAME --builtin ...`"
    )


def _add(
    folder: Path,
    name: str,
    command: str | None,
    builtin: str | None,
    option: list[str] | None,
    files: list[Path] | None,
    sandbox: str | None,
    protocol: str,
    update: bool,
    pinned: float | None,
    keep: bool = False,
    allow_broken: bool = False,
    runtime: str | None = None,
    team: str | None = None,
) -> None:
    if not update:
        taken = name_refusal(folder, name)
        if taken is not None:
            raise fail(taken)
    with _open(folder) as store:
        frozen = commands.closed(store)
        if frozen is not None:  # before its files are copied or its check run
            raise fail(frozen)
        try:
            spec = commands.make_spec(
                name, command, builtin, option or (), files or (), sandbox, protocol, runtime=runtime
            )
            # The version is its snapshot: what is checked here is what is validated and played.
            spec = commands.snapshot_files(store, spec)
        except LeagueError as exc:
            raise fail(str(exc)) from None
        # The pre-flight check of `hearts tournament run` (the bot test kit's quick levels in its
        # sandbox, or it is not added (`run` would only give it status error).
        # Its referee's and runner's log lines go to the league's log, as `run`'s do: the
        # terminal shows only the verdict.
        with log_to_file(folder / LEAGUE_LOG):
            found = preflight(play_settings(store, (spec,)), folder / "logs", (spec,))
        problems = found.problems
        for warning in found.warnings:
            typer.echo(f"hearts: warning: {warning.line()}", err=True)
        for problem in problems:
            typer.echo(f"hearts: {'warning' if allow_broken else 'error'}: {problem.line()}", err=True)
        if problems and not allow_broken:
            raise fail(f"{name} was not added: fix the command, or add --allow-broken to add it anyway")
        try:
            typer.echo(commands.add_version(store, spec, update=update, pinned=pinned, keep=keep, team=team))
        except LeagueError as exc:
            raise fail(str(exc)) from None


@league_app.command()
def add(
    folder: Folder,
    name: Annotated[str, typer.Argument(help="The new entrant's name.")],
    command: CommandOption = None,
    builtin: BuiltinOption = None,
    option: OptionOption = None,
    files: FilesOption = None,
    sandbox: SandboxOption = None,
    protocol: ProtocolOption = "grpc",
    runtime: RuntimeOption = None,
    pin: Annotated[
        float | None, typer.Option("--pin", help="A reference entrant: pin its official strength.")
    ] = None,
    allow_broken: AllowBrokenOption = False,
    team: TeamOption = None,
) -> None:
    """Add an entrant as NAME@v1; `run` validates it before it plays rated games.

    A command entrant first passes the bot test kit's quick levels in its sandbox (as `hearts
    tournament check` does): one that cannot play is not added (exit 2) unless --allow-broken; one
    that fails only checks that do not stop play is added, with a warning.
    """
    _add(
        folder,
        name,
        command,
        builtin,
        option,
        files,
        sandbox,
        protocol,
        False,
        pin,
        allow_broken=allow_broken,
        runtime=runtime,
        team=team,
    )


@league_app.command()
def update(
    folder: Folder,
    name: Annotated[str, typer.Argument(help="The entrant's name.")],
    command: CommandOption = None,
    builtin: BuiltinOption = None,
    option: OptionOption = None,
    files: FilesOption = None,
    sandbox: SandboxOption = None,
    protocol: ProtocolOption = "grpc",
    runtime: RuntimeOption = None,
    keep: Annotated[bool, typer.Option("--keep", help="Keep the old versions playing too.")] = False,
    allow_broken: AllowBrokenOption = False,
    team: TeamOption = None,
) -> None:
    """Give NAME a new version (the old ones are retired unless --keep).

    The new version is checked first, as by `add`.
    """
    _add(
        folder,
        name,
        command,
        builtin,
        option,
        files,
        sandbox,
        protocol,
        True,
        None,
        keep,
        allow_broken,
        runtime,
        team,
    )


@league_app.command()
def retire(folder: Folder, name: Name) -> None:
    """Retire a version: it plays no more blocks (its games stay stored)."""
    with _open(folder) as store:
        try:
            typer.echo(commands.set_status(store, name, "retire"))
        except LeagueError as exc:
            raise fail(str(exc)) from None


@league_app.command()
def unretire(folder: Folder, name: Name) -> None:
    """Bring a retired or quarantined version back into play."""
    with _open(folder) as store:
        try:
            typer.echo(commands.set_status(store, name, "unretire"))
        except LeagueError as exc:
            raise fail(str(exc)) from None


@league_app.command()
def freeze(
    folder: Folder,
    at: Annotated[
        str | None,
        typer.Option(
            "--at",
            help="When the season freezes: an ISO 8601 time with its zone (2026-12-24T18:00:00Z). "
            "Default: now.",
        ),
    ] = None,
) -> None:
    """End the season's submissions: from then on no version is added (by `add`, `update` or the
    portal), and the versions active then are the finalists of `hearts league final`."""
    with _open(folder) as store:
        try:
            typer.echo(commands.freeze(store, None if at is None else commands.parse_time(at)))
        except LeagueError as exc:
            raise fail(str(exc)) from None


@league_app.command()
def unfreeze(folder: Folder) -> None:
    """Open a frozen season again: new versions are accepted."""
    with _open(folder) as store:
        try:
            typer.echo(commands.unfreeze(store))
        except LeagueError as exc:
            raise fail(str(exc)) from None


@league_app.command()
def run(
    folder: Folder,
    games: Annotated[int | None, typer.Option("--games", help="Stop after this many rated games.")] = None,
    blocks: Annotated[int | None, typer.Option("--blocks", help="Stop after this many blocks.")] = None,
    until_ci: Annotated[
        float | None, typer.Option("--until-ci", help="Stop when every interval is at most this wide.")
    ] = None,
    forever: Annotated[bool, typer.Option("--forever", help="Play until stopped (Ctrl-C).")] = False,
    concurrency: Annotated[
        int,
        typer.Option("--concurrency", help="Tables at once within a block (with ray: on the whole cluster)."),
    ] = 1,
    executor: Annotated[
        ExecutorKind | None,
        typer.Option(
            "--executor",
            help="Where the games are played: local (this machine) or ray (each game a task on a "
            "Ray cluster's node, docs/DISTRIBUTED.md). Default: the league's executor.",
        ),
    ] = None,
    ray_address: Annotated[
        str | None, typer.Option("--ray-address", help=RayAddressHelp + " Default: the league's ray_address.")
    ] = None,
) -> None:
    """Play blocks: the only process that plays games, and the only one that writes the league.

    Commands given meanwhile take effect before the next block. Stopped at any moment (Ctrl-C,
    SIGTERM, kill -9), it loses at most the block being played; run it again to go on. Prints a
    line per validation and per block stored (its games and mean places); the referee's and the
    runner's log lines go to FOLDER/league.log. With --executor ray, each game is a Ray task on
    some node of the cluster; a node lost mid-block has its games played again elsewhere, and
    the block is stored once.
    """
    limits = [x for x in (games, blocks, until_ci) if x is not None]
    if (forever and limits) or (not forever and not limits):
        raise fail("give one of --games N, --blocks N, --until-ci W or --forever")
    if any(x <= 0 for x in limits) or concurrency < 1:
        raise fail("--games, --blocks, --until-ci and --concurrency must be positive")
    if ray_address is not None:
        try:
            check_executor(ExecutorKind.RAY.value, ray_address)
        except LeagueError as exc:
            raise fail(f"--{exc}") from None
    log = folder / LEAGUE_LOG
    with _open(folder) as store, log_to_file(log):
        try:  # refused before anything is played, as `hearts tournament run` does
            signing_key_for(folder)
        except SigningError as exc:
            raise fail(str(exc)) from None
        try:
            stored = run_league(
                store,
                StopAfter(games, blocks, until_ci),
                concurrency,
                emit=typer.echo,
                executor=None if executor is None else executor.value,
                ray_address=ray_address,
            )
        except LeagueError as exc:
            raise fail(f"{exc} (its log: {log})", 1) from None
        except KeyboardInterrupt:
            typer.echo(f"stopped: {store.block_count()} blocks stored; `hearts league run` goes on", err=True)
            raise typer.Exit(130) from None
        typer.echo(f"{stored} blocks played; {store.block_count()} stored in all; its log: {log}")
    line = signed_line(folder / PUBLISHED, "hearts league verify LEAGUE")
    if line is not None:
        typer.echo(f"{line}; the head after each block is in {folder / HEADS}")


@league_app.command()
def final(
    folder: Folder,
    top: Annotated[int, typer.Option("--top", help="The places the final decides (K).")],
    budget: Annotated[
        int, typer.Option("--budget", help="Deals the final plays at most (each in every seat rotation).")
    ] = 200,
    concurrency: Annotated[int, typer.Option("--concurrency", help="Tables at once within a deal.")] = 1,
    luck_correction: Annotated[
        bool,
        typer.Option(
            "--luck-correction",
            help="Fit the luck-corrected places (each game's deal luck, valued by play-outs from its "
            "record, taken out): chosen when the final begins, for all of it.",
        ),
    ] = False,
) -> None:
    """Play the frozen season's final: deals among the finalists (the versions active then),
    seated where the top K's order is not yet separated, until it is or --budget deals are played.

    Separated as the standings separate neighbours: a test of each boundary's strength difference
    (a Plackett-Luce fit of the final's deals, bootstrapped over deals), Benjamini-Hochberg at 5%
    across the top K boundaries (at most 5% of the separated ones wrong on average). Stopped,
    it goes on where it stopped when run again. Prints a line per deal and the verdict; the
    report (which places are established) is FOLDER/final.json and, signed, published.json.
    """
    if concurrency < 1:
        raise fail("--concurrency must be positive")
    log = folder / LEAGUE_LOG
    with _open(folder) as store, log_to_file(log):
        try:
            signing_key_for(folder)
            if budget < 1:
                raise LeagueError("--budget must be at least 1 deal")
            begin_final(store, top, luck_correction)  # the finalists fixed, or why there is no final
        except (SigningError, LeagueError) as exc:
            raise fail(str(exc)) from None
        try:
            status, _report = run_final(
                store, top, budget, concurrency, emit=typer.echo, luck=luck_correction
            )
        except LeagueError as exc:
            raise fail(f"{exc} (its log: {log})", 1) from None
        except KeyboardInterrupt:
            typer.echo("stopped: `hearts league final` goes on where it stopped", err=True)
            raise typer.Exit(130) from None
        typer.echo(report_line(status, budget))
        typer.echo(f"its report: {folder / FINAL_REPORT} (signed in {folder / PUBLISHED})")
    line = signed_line(folder / PUBLISHED, "hearts league verify LEAGUE")
    if line is not None:
        typer.echo(line)


@league_app.command()
def show(
    folder: Folder,
    format: Annotated[str, typer.Option("--format", help="table, json, csv or markdown.")] = "table",
    all_versions: Annotated[
        bool, typer.Option("--all", help="List retired and failed versions too.")
    ] = False,
) -> None:
    """The official table: batch Plackett-Luce over every stored block, by strength."""
    with _open(folder) as store:
        try:
            typer.echo(commands.show(store, format, all_versions))
        except LeagueError as exc:
            raise fail(str(exc)) from None


@league_app.command()
def info(folder: Folder, name: Name) -> None:
    """One version: games, rating history, head-to-head, seat positions, faults, events (JSON)."""
    with _open(folder) as store:
        try:
            typer.echo(json.dumps(commands.info(store, name), indent=2))
        except LeagueError as exc:
            raise fail(str(exc)) from None


@league_app.command("games")
def games_command(
    folder: Folder,
    bot: Annotated[str | None, typer.Option("--bot", help="Only games of this entrant or version.")] = None,
    status: Annotated[str | None, typer.Option("--status", help="rated, validation or failed.")] = None,
) -> None:
    """Stored games as JSON lines; each record replays with `hearts replay`."""
    with _open(folder) as store:
        try:
            for game in commands.list_games(store, bot, status):
                typer.echo(json.dumps(game, separators=(",", ":")))
        except LeagueError as exc:
            raise fail(str(exc)) from None


@league_app.command()
def record(
    folder: Folder,
    key: Annotated[str, typer.Argument(help="The game's key (see `hearts league games`).")],
) -> None:
    """Print a stored game's record (for `hearts replay`)."""
    with _open(folder) as store:
        text = store.record(key)
        if text is None:
            raise fail(f"no game {key!r}: see `hearts league games {folder}`")
        typer.echo(text)


@league_app.command()
def verify(
    folder: Folder,
    public_key: Annotated[
        str | None,
        typer.Option(
            "--public-key",
            metavar="KEY|FILE",
            help="The key the games must be signed by (ed25519:...), or the published published.json. "
            "Default: the organiser's key on this machine, else the key the folder names (said so).",
        ),
    ] = None,
    games: GamesOption = None,
    head: HeadOption = None,
) -> None:
    """Check every stored game: its record replays to its stored outcome, its signature and the chain hold.

    Also every line of the published heads.jsonl (one per stored block) must be signed and in
    the chain. A reader who kept a head (a line of heads.jsonl, or the head printed after a
    run) checks with --head HEX (and --games N) that the league was not rolled back past it.
    Prints one line per problem and exits 1 if there is any; else a summary line and exit 0.
    """
    with _open(folder) as store:
        try:
            problems, summary = commands.verify(store, public_key, games, head)
        except SigningError as exc:
            raise fail(str(exc)) from None
    for problem in problems:
        typer.echo(problem)
    typer.echo(summary)
    raise typer.Exit(1 if problems else 0)


@league_app.command("audit")
def audit_command(
    folder: Folder,
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object instead of text.")] = False,
    alpha: AlphaOption = ALPHA,
) -> None:
    """Fair-play audit of the rated games: which pairs of entrants play as if on one side
    (docs/FAIR_PLAY.md). Exits 1 when a pair is flagged, else 0."""
    with _open(folder) as store:
        report = commands.audit(store, alpha)
    print_audit(report, json_out)


@league_app.command("recompute")
def recompute_command(
    folder: Folder,
    format: Annotated[str, typer.Option("--format", help="json, table, csv or markdown.")] = "json",
) -> None:
    """Refit the official table from all stored games in one batch.

    The same stored games always give the same bytes.
    """
    with _open(folder) as store:
        try:
            typer.echo(commands.recompute(store, format))
        except LeagueError as exc:
            raise fail(str(exc)) from None


# The portal's accounts (docs/COMPETITION.md): `hearts league entrant ...` and `hearts league invite`.
from hearts_tournaments.cli.portal import entrant_app, invite  # noqa: E402

league_app.add_typer(entrant_app, name="entrant")
league_app.command("invite")(invite)
