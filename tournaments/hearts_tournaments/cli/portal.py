"""``hearts league entrant ...``, ``hearts league invite`` and ``hearts submit`` (docs/COMPETITION.md).

Registered from the league's and the top-level CLI with a line each. Every mistake ends with one
line on stderr and exit 2.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Annotated

import typer

from hearts_tournaments.cli.common import MARKUP_MODE, fail
from hearts_tournaments.league.config import LeagueError
from hearts_tournaments.league.store import LeagueStore
from hearts_tournaments.portal.accounts import PortalError, PortalStore

entrant_app = typer.Typer(
    rich_markup_mode=MARKUP_MODE,
    help="Entrants' accounts for the portal (`hearts web LEAGUE --submissions`): tokens, rotation, "
    "revocation.",
    no_args_is_help=True,
)

Folder = Annotated[Path, typer.Argument(help="The league folder.")]
Name = Annotated[str, typer.Argument(help="The entrant's name (also its name in the league).")]


def _portal(folder: Path) -> PortalStore:
    try:
        LeagueStore.open(folder, read_only=True).close()
        return PortalStore(folder)
    except (LeagueError, PortalError) as exc:
        raise fail(str(exc)) from None


def _token_lines(name: str, token: str, what: str) -> None:
    typer.echo(f"{what} {name}; its token (shown this once, stored only hashed):")
    typer.echo(token)


@entrant_app.command("add")
def add(folder: Folder, name: Name) -> None:
    """Create NAME's account and print its personal access token, once."""
    with _portal(folder) as portal:
        try:
            token = portal.add_account(name)
        except PortalError as exc:
            raise fail(str(exc)) from None
    _token_lines(name, token, "account created for")


@entrant_app.command("rotate")
def rotate(folder: Folder, name: Name) -> None:
    """Give NAME a new token (printed once): the old token and its sessions stop working."""
    with _portal(folder) as portal:
        try:
            token = portal.rotate(name)
        except PortalError as exc:
            raise fail(str(exc)) from None
    _token_lines(name, token, "new token for")


@entrant_app.command("revoke")
def revoke(folder: Folder, name: Name) -> None:
    """End NAME's access: its token and sessions stop working (its versions play on)."""
    with _portal(folder) as portal:
        try:
            portal.revoke(name)
        except PortalError as exc:
            raise fail(str(exc)) from None
    typer.echo(f"{name}: revoked; `hearts league entrant rotate {folder} {name}` gives it a new token")


@entrant_app.command("list")
def list_accounts(folder: Folder) -> None:
    """Every account: name, created, last token, revoked (JSON lines)."""
    with _portal(folder) as portal:
        for account in portal.accounts():
            row = {
                "entrant": account.name,
                "created": round(account.created, 3),
                "token_since": round(account.rotated, 3),
                "revoked": account.revoked is not None,
                "submissions": len(portal.submissions(account.name)),
            }
            typer.echo(json.dumps(row, separators=(",", ":")))


@entrant_app.command("audit")
def audit(folder: Folder) -> None:
    """The audit log: every account change and submission, oldest first (JSON lines)."""
    with _portal(folder) as portal:
        for row in portal.audit_log():
            typer.echo(json.dumps(row, separators=(",", ":")))


def invite(folder: Folder) -> None:
    """Print a single-use invite code: self-registration on the portal is on while one is unused."""
    with _portal(folder) as portal:
        code = portal.add_invite()
    typer.echo("invite code (one account; shown this once):")
    typer.echo(code)


def submit(
    url: Annotated[
        str | None, typer.Argument(help="The portal's address (http(s)://HOST:PORT).", show_default=False)
    ] = None,
    folder: Annotated[
        Path | None, typer.Argument(help="The bot's folder, holding bot.toml.", show_default=False)
    ] = None,
    token_file: Annotated[
        Path | None, typer.Option("--token-file", help="A file holding your personal access token.")
    ] = None,
    wait: Annotated[
        bool, typer.Option("--wait/--no-wait", help="Wait until the bot is active or in error.")
    ] = True,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds to wait at most.")] = 900.0,
    check: Annotated[
        Path | None,
        typer.Option(
            "--check",
            help="Send nothing: pack DIR as it would be sent, check the archive as the portal does, and "
            "run the bot test kit on it here (every level).",
        ),
    ] = None,
) -> None:
    """Pack FOLDER and submit it as your next version; prints its status until active or error.

    Exit 0 once active, 1 on error, 2 for a refused upload or a bad argument. With `--check DIR`
    nothing is sent: the bot test kit runs on the very archive (docs/BOT_TEST.md), exit 0 when
    every check passes, 1 when one fails.
    """
    from hearts_tournaments.portal.client import SubmitError, pack, post_archive, status

    if check is not None:
        if url is not None or folder is not None:
            raise fail("--check DIR tests DIR without sending it: give no URL or FOLDER with it")
        _check_locally(check)
        return
    if url is None or folder is None or token_file is None:
        raise fail(
            "give the portal's URL, the bot's FOLDER and --token-file (or --check FOLDER to test it here)"
        )
    try:
        token = token_file.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise fail(f"cannot read the token file {token_file}: {exc.strerror}") from None
    try:
        archive = pack(folder)
        reply = post_archive(url, token, archive)
    except SubmitError as exc:
        raise fail(str(exc)) from None
    sid = reply["id"]
    typer.echo(
        f"submission {sid}: {reply['status']} ({len(archive)} bytes); follow it at {url.rstrip('/')}/me"
    )
    last = reply["status"]
    deadline = time.monotonic() + timeout
    while wait and last not in ("active", "error"):
        if time.monotonic() > deadline:
            raise fail(f"submission {sid} is still {last} after {timeout:.0f} s", 1)
        time.sleep(1.0)
        try:
            reply = status(url, token, sid)
        except SubmitError as exc:
            raise fail(str(exc)) from None
        if reply["status"] != last:
            last = reply["status"]
            typer.echo(f"submission {sid}: {last}" + (f": {reply['message']}" if reply["message"] else ""))
    if last == "error":
        for line in reply["log"]:
            typer.echo(f"  {line}")
        raise typer.Exit(1)


def _check_locally(folder: Path) -> None:
    """``hearts submit --check``: the kit on the archive ``hearts submit`` would send."""
    from hearts_tournaments.cli.common import log_to_file
    from hearts_tournaments.kit.run import KitError
    from hearts_tournaments.portal.client import SubmitError, check_archive_locally

    with tempfile.TemporaryDirectory(prefix="hearts-check-") as scratch:
        try:
            with log_to_file(Path(scratch) / "kit.log"):
                report = check_archive_locally(folder, Path(scratch))
        except (SubmitError, KitError) as exc:
            raise fail(str(exc)) from None
    for line in report.without_files().text():
        typer.echo(line)
    raise typer.Exit(0 if report.passed else 1)
