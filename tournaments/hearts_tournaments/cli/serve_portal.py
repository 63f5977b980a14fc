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
    folder: Path,
    host: str,
    port: int,
    insecure: bool,
    uploads: int,
    logins: int,
    per_address: int,
    body_timeout: float,
    storage_mb: int,
    dev_webhooks: bool = False,
    nice: int = 0,
) -> None:
    """Serves the league in ``folder`` with the portal; one line and exit 2 for a bad argument."""
    from hearts_tournaments.portal.app import Limits, make_portal_app
    from hearts_tournaments.web.app import serve

    if min(uploads, logins, per_address, storage_mb) < 1 or not body_timeout > 0:
        raise fail(
            "--upload-limit, --upload-address-limit, --login-limit, --body-timeout and "
            "--entrant-storage-mb must be positive"
        )
    limits = Limits(
        logins_per_minute=logins,
        uploads_per_hour=uploads,
        uploads_per_address_hour=per_address,
        body_seconds=body_timeout,
        entrant_bytes=storage_mb << 20,
    )
    try:
        LeagueStore.open(folder, read_only=True).close()
        app, portal = make_portal_app(folder, limits, secure=not insecure, dev_webhooks=dev_webhooks)
    except (LeagueError, PortalError) as exc:
        raise fail(f"--submissions serves a league: {exc}") from None
    portal.worker.start()
    portal.notifier.start()
    try:
        # After the worker and the notifier started: they keep this process's priority (its
        # submissions' checks time the bot, as the competition will), the requests yield.
        serve(folder, host, port, _ready, app=app, nice=nice)
    except OSError as exc:
        raise fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    finally:
        portal.notifier.stop()
        portal.worker.stop()
