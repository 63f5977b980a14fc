"""``hearts web LEAGUE --submissions``: serve the portal until SIGINT or SIGTERM."""

from __future__ import annotations

from pathlib import Path

import typer

from hearts_tournaments.cli.common import fail
from hearts_tournaments.league.config import LeagueError
from hearts_tournaments.league.store import LeagueStore
from hearts_tournaments.portal.accounts import PortalError


def _ready(url: str) -> None:
    typer.echo(f"web listening on {url}")
    typer.echo(f"hearts web: the portal signs entrants in at {url}/login", err=True)


def serve_portal(
    folder: Path, host: str, port: int, insecure: bool, uploads: int, logins: int, per_address: int = 30
) -> None:
    """Serves the league in ``folder`` with the portal; one line and exit 2 for a bad argument."""
    from hearts_tournaments.portal.app import Limits, make_portal_app
    from hearts_tournaments.web.app import serve

    if uploads < 1 or logins < 1 or per_address < 1:
        raise fail("--upload-limit, --upload-address-limit and --login-limit must be positive")
    try:
        LeagueStore.open(folder, read_only=True).close()
        app, portal = make_portal_app(
            folder,
            Limits(logins_per_minute=logins, uploads_per_hour=uploads, uploads_per_address_hour=per_address),
            secure=not insecure,
        )
    except (LeagueError, PortalError) as exc:
        raise fail(f"--submissions serves a league: {exc}") from None
    portal.worker.start()
    try:
        serve(folder, host, port, _ready, app=app)
    except OSError as exc:
        raise fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    finally:
        portal.worker.stop()
