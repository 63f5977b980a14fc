"""``hearts web``: serve a tournament folder (``hearts web DIR``) or export it (``hearts web export``).

The web extra (Starlette, Jinja2, uvicorn) is imported only when a command runs, so the rest of
the ``hearts`` command works without it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from hearts_tournaments.cli.common import MARKUP_MODE

MISSING_EXTRA = "hearts web needs the web extra: pip install 'cancellation-hearts[web]'"


class _ServeByDefault(TyperGroup):
    """``hearts web DIR`` means ``hearts web serve DIR``; ``hearts web export ...`` exports."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["serve", *args]
        return super().parse_args(ctx, args)


web_app = typer.Typer(
    rich_markup_mode=MARKUP_MODE,
    name="web",
    cls=_ServeByDefault,
    help="A tournament's leaderboard, games and replays in the browser: `hearts web DIR` serves it live.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


LogsOption = Annotated[
    str,
    typer.Option(
        "--logs",
        help="Whose bot logs the bot pages show: released (a game's log once every game of its deal "
        "is played, as its record) or never.",
    ),
]


def _policy(logs: str) -> Any:
    from hearts_tournaments.web.source import LogPolicy

    try:
        return LogPolicy(logs)
    except ValueError:
        raise _fail(f"--logs must be released or never, not {logs!r}") from None


def _fail(message: str, code: int = 2) -> typer.Exit:
    typer.echo(f"hearts: error: {message}", err=True)
    return typer.Exit(code)


def _web() -> Any:
    try:
        import hearts_tournaments.web.app as app
    except ImportError as exc:
        raise _fail(f"{MISSING_EXTRA} ({exc})") from None
    return app


@web_app.command("serve")
def serve_command(
    folder: Annotated[Path, typer.Argument(help="The tournament's output folder.")],
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on; 0 picks a free one.")] = 8000,
    logs: LogsOption = "released",
    submissions: Annotated[
        bool,
        typer.Option(
            "--submissions",
            help="A league folder only: also serve the entrant portal (sign-in with a token, uploads, "
            "each entrant's own pages; bot logs only to their own entrant). See docs/COMPETITION.md.",
        ),
    ] = False,
    insecure_cookies: Annotated[
        bool,
        typer.Option(
            "--insecure-cookies", help="Portal session cookies without Secure (plain HTTP, not localhost)."
        ),
    ] = False,
    dev_webhooks: Annotated[
        bool,
        typer.Option(
            "--dev-webhooks",
            help="Portal webhooks may also be http:// to 127.0.0.1 or localhost (testing a receiver; "
            "never for the public).",
        ),
    ] = False,
    upload_limit: Annotated[
        int, typer.Option("--upload-limit", help="Portal uploads per entrant per hour.")
    ] = 12,
    upload_address_limit: Annotated[
        int, typer.Option("--upload-address-limit", help="Portal uploads per address per hour.")
    ] = 30,
    login_limit: Annotated[
        int,
        typer.Option(
            "--login-limit",
            help="Portal failed sign-ins (form or API token) per address, and per account, per minute.",
        ),
    ] = 10,
    body_timeout: Annotated[
        float,
        typer.Option(
            "--body-timeout", help="Seconds a request's body may take to arrive at the portal (slower: 408)."
        ),
    ] = 120.0,
    entrant_storage_mb: Annotated[
        int,
        typer.Option(
            "--entrant-storage-mb", help="MiB of files one portal entrant's versions may keep in the league."
        ),
    ] = 256,
    nice: Annotated[
        int,
        typer.Option(
            "--nice",
            min=0,
            max=19,
            help="The server's CPU niceness (0-19): at the default, the games of a run on this machine "
            "(the referee at 0, bots at 10) come before page requests, so visitors never slow the league.",
        ),
    ] = 19,
) -> None:
    """Serve one tournament folder read-only; pages update live while games are played.

    Prints "web listening on http://HOST:PORT" once it accepts connections; SIGINT or SIGTERM stop it.
    """
    app = _web()
    if not folder.is_dir():
        raise _fail(f"{folder} is not a folder")
    if submissions:
        from hearts_tournaments.cli.serve_portal import serve_portal

        serve_portal(
            folder,
            host,
            port,
            insecure_cookies,
            upload_limit,
            login_limit,
            upload_address_limit,
            body_timeout,
            entrant_storage_mb,
            dev_webhooks,
            nice,
        )
        return
    if not (folder / "tournament.sqlite").is_file() and not (folder / "league.sqlite").is_file():
        typer.echo(f"hearts web: {folder} holds no tournament yet; its pages appear once it does", err=True)
    try:
        app.serve(
            folder, host, port, lambda url: typer.echo(f"web listening on {url}"), _policy(logs), nice=nice
        )
    except OSError as exc:
        raise _fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


@web_app.command("export")
def export_command(
    folder: Annotated[Path, typer.Argument(help="The tournament's output folder.")],
    out: Annotated[Path, typer.Argument(help="Folder to write the static site to.")],
    seat_views: Annotated[
        bool,
        typer.Option("--seat-views/--no-seat-views", help="Also write every seat's view of every replay."),
    ] = True,
    logs: LogsOption = "released",
) -> None:
    """Write the same pages as a static site (open OUT/index.html)."""
    _web()
    from hearts_tournaments.web.export import ExportError, export_site
    from hearts_tournaments.web.source import NotATournament

    try:
        summary = export_site(folder, out, seat_views=seat_views, logs=_policy(logs))
    except (NotATournament, ExportError) as exc:
        raise _fail(str(exc)) from None
    typer.echo(f"wrote {summary.pages} pages and {summary.records} game records to {out}")
    for line in summary.failed:
        typer.echo(f"hearts: error: {line}", err=True)
    if summary.failed:
        raise typer.Exit(1)
